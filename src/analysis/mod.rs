//! Work on many simulations at once: [`sweep`]s over configurations (in [`shard`]s across machines; the file format in [`sweep_file`]), [`fit`]s of model constants
//! to their results, [`rank`]ings of block shapes by predicted time (with a [`time_bound`] to drop shapes unsimulated), and the [`validate`] comparison with [`measured`] hardware counters
//! (resumable through its [`journal`]), with the [`stats`] they share and the [`side_by_side`] runs
//! that bound how many simulations are open at once.

pub mod fit;
pub mod journal;
pub mod measured;
pub mod rank;
pub mod shard;
pub mod side_by_side;
pub mod stats;
pub mod sweep;
pub mod sweep_file;
pub mod time_bound;
pub mod validate;
