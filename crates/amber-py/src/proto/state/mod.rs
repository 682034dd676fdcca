//! The state layer: what messages and containers hold, and the steps that
//! read and keep it. It imports nothing from the layers above it.
//!
//! - `cell.rs`: the GIL-guarded borrow flag of messages and containers;
//! - `values.rs`: checking values on the way in, Python objects of decoded
//!   scalars, and scalars of stored values;
//! - `schema.rs`: a compiled load as Python sees it ([`schema::Schema`]);
//! - `repeated.rs`, `map.rs`: repeated and map fields' storage;
//! - `message.rs`: a message's slots and state, and freeing deep trees;
//! - `build.rs`: the builder decoders fill messages through, and the
//!   building of sub-messages a wire parse kept as places in its input;
//! - `objects.rs`: Python objects made when read, and the links by which
//!   a default sub-message makes its parent present.

pub mod build;
pub mod cell;
pub mod map;
pub mod message;
pub mod objects;
pub mod repeated;
pub mod schema;
pub mod values;
