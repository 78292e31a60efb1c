//! The ernst2023 model (work in progress: being implemented on its own branch).

use super::{ModelInfo, ModelInput, Prediction};
use crate::error::{Error, Result};

/// The model as the command line knows it.
pub const MODEL: ModelInfo = ModelInfo {
    name: "ernst2023",
    summary: "not yet implemented",
    params: &[],
    predict,
};

fn predict(input: &ModelInput) -> Result<Prediction> {
    Err(Error::new(
        &input.launch.source_name,
        "the ernst2023 model is not implemented yet",
    ))
}
