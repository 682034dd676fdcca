//! Python's stdlib values as plain Rust parts, both ways: datetime, Decimal,
//! UUID and NumPy arrays. Every part that stores such values (the codec,
//! and the parts that write other formats) reads and makes them here, so
//! each rule (a timedelta's ranges, a UUID's safety, an array's bytes in
//! memory order) is written once.

pub mod datetime;
pub mod decimal;
pub mod numpy;
pub mod uuid;
