//! The placement2p5d model (work in progress: being implemented on its own branch).

use super::{ModelInfo, ModelInput, Prediction};
use crate::error::{Error, Result};

/// The model as the command line knows it.
pub const MODEL: ModelInfo = ModelInfo {
    name: "placement2p5d",
    summary: "not yet implemented",
    params: &[],
    predict,
};

fn predict(input: &ModelInput) -> Result<Prediction> {
    Err(Error::new(
        &input.launch.source_name,
        "the placement2p5d model is not implemented yet",
    ))
}
