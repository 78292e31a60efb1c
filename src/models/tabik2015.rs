//! The tabik2015 model (work in progress: being implemented on its own branch).

use super::{ModelInfo, ModelInput, Prediction};
use crate::error::{Error, Result};

/// The model as the command line knows it.
pub const MODEL: ModelInfo = ModelInfo {
    name: "tabik2015",
    summary: "not yet implemented",
    params: &[],
    predict,
};

fn predict(input: &ModelInput) -> Result<Prediction> {
    Err(Error::new(
        &input.launch.source_name,
        "the tabik2015 model is not implemented yet",
    ))
}
