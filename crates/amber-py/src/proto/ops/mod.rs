//! The operations layer: what is done to messages, made of the state's
//! steps.
//!
//! - `assign.rs`: checking values on the way in.

pub mod assign;
