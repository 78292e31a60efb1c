//! Work on many simulations at once: [`sweep`]s over configurations, [`fit`]s of model constants
//! to their results, and the [`validate`] comparison with [`measured`] hardware counters, with
//! the [`stats`] they share.

pub mod fit;
pub mod measured;
pub mod stats;
pub mod sweep;
pub mod validate;
