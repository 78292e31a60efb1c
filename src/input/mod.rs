//! What a user hands over, parsed and checked: kernel [`trace`]s (with loading by name), GPU
//! configs ([`hw`]), kernels lifted from PTX or CUDA ([`ptx`]) and where a kernel comes from
//! ([`kernel_source`]), the index [`expr`]essions inside traces, and the CSV/JSONL [`table`]s that
//! sweeps, fits and plots read.

pub mod expr;
pub mod hw;
pub mod kernel_source;
pub mod ptx;
pub mod table;
pub mod trace;

pub(crate) use crate::error::edit_distance;

/// What `name` most likely meant among `candidates`, for "did you mean …?", ignoring case: a
/// candidate that differs from `name` in case alone (`H200` → `h200`), else the shortest candidate
/// that `name` begins (`h100` → `h100-sxm`), else the closest by edit distance if it is a likely
/// typo (at most a third of the longer name's length, rounded up, and at least one edit).
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let candidates: Vec<&'a str> = candidates.into_iter().collect();
    if let Some(c) = candidates
        .iter()
        .find(|c| **c != name && c.to_lowercase() == name.to_lowercase())
    {
        return Some(c);
    }
    let name = name.to_lowercase();
    let extended = candidates
        .iter()
        .filter(|c| c.len() > name.len() && c.to_lowercase().starts_with(&name) && !name.is_empty())
        .min_by_key(|c| c.len());
    if let Some(c) = extended {
        return Some(c);
    }
    candidates
        .into_iter()
        .map(|c| (edit_distance(&name, &c.to_lowercase()), c))
        .filter(|&(d, c)| d <= name.chars().count().max(c.chars().count()).div_ceil(3) && d > 0)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// Whether a `--kernel` / `--hw` value names a file rather than a shipped name: it has a folder
/// (`/`, or `\\` on Windows) or an extension (`star4.toml`). Such a value is only ever read as a
/// file, so that a missing file is an error instead of the shipped namesake silently standing in.
pub fn looks_like_path(value: &str) -> bool {
    value.contains('/') || value.contains('\\') || std::path::Path::new(value).extension().is_some()
}

/// " (did you mean X?)" when [`closest`] finds one, else "".
pub fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(name, candidates).map_or(String::new(), |c| format!(" (did you mean {c}?)"))
}

/// The shipped kernel traces, each with its one-line description (`gputraffic list`).
pub fn shipped_kernels() -> Vec<(&'static str, String)> {
    trace::SHIPPED
        .iter()
        .map(|(name, text)| {
            let description = trace::Kernel::parse(text, name)
                .map(|k| k.description)
                .unwrap_or_default();
            (*name, description)
        })
        .collect()
}

/// The shipped hardware configurations, each with its one-line description.
pub fn shipped_hw() -> Vec<(&'static str, String)> {
    hw::SHIPPED
        .iter()
        .map(|(name, text)| {
            let description = hw::HwConfig::parse(text, name)
                .map(|h| h.description)
                .unwrap_or_default();
            (*name, description)
        })
        .collect()
}

/// The text of the shipped trace or hardware configuration `name`, exactly as shipped
/// (`gputraffic show`).
pub fn shipped_text(name: &str) -> crate::Result<&'static str> {
    let shipped = || trace::SHIPPED.iter().chain(hw::SHIPPED.iter());
    match shipped().find(|(n, _)| *n == name) {
        Some((_, text)) => Ok(text),
        None => Err(crate::Error::new(
            "show",
            format!(
                "'{name}' is no shipped trace or configuration{} (gputraffic list shows them)",
                did_you_mean(name, shipped().map(|(n, _)| *n))
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distances_by_hand() {
        assert_eq!(edit_distance("star1", "star1"), 0);
        assert_eq!(edit_distance("stra1", "star1"), 2);
        assert_eq!(edit_distance("star", "star4"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn only_likely_typos_are_suggested() {
        let names = ["star1", "star4", "box27", "h200", "h100-sxm"];
        assert_eq!(closest("star11", names), Some("star1"));
        assert_eq!(closest("box27", names), None); // the same name: nothing to suggest
        assert_eq!(closest("Box27", names), Some("box27")); // case alone differs
        assert_eq!(closest("H200", names), Some("h200")); // not k20-like neighbours
        assert_eq!(closest("STAR1", names), Some("star1"));
        assert_eq!(closest("box72", names), Some("box27"));
        assert_eq!(closest("h20", names), Some("h200"));
        assert_eq!(closest("h100", names), Some("h100-sxm")); // a prefix wins over h200
        assert_eq!(closest("star", names), Some("star1"));
        assert_eq!(closest("laplace", names), None);
        assert_eq!(did_you_mean("h2000", names), " (did you mean h200?)");
        assert_eq!(did_you_mean("zzz", names), "");
    }

    #[test]
    fn a_folder_or_an_extension_makes_a_path() {
        assert!(looks_like_path("mystuff/star4.toml"));
        assert!(looks_like_path("star4.toml"));
        assert!(looks_like_path("./h200"));
        assert!(looks_like_path("my.gpu"));
        assert!(!looks_like_path("star4"));
        assert!(!looks_like_path("h100-sxm"));
        assert!(!looks_like_path("a100-40gb"));
    }
}
