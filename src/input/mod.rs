//! What a user hands over, parsed and checked: kernel [`trace`]s (with loading by name), GPU
//! configs ([`hw`]), the index [`expr`]essions inside traces, and the CSV/JSONL [`table`]s that
//! sweeps, fits and plots read.

pub mod expr;
pub mod hw;
pub mod table;
pub mod trace;
