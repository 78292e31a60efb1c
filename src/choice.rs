//! Enums a user picks by name (output formats, plot kinds, cache levels): each lists its names
//! and one-line help once, here in the library, so the command line (and any other front end)
//! offers exactly these without the library depending on a CLI crate.

/// An enum chosen by name.
pub trait Choice: Sized + Copy + PartialEq + 'static {
    /// Every variant with its name and a one-line help text, in the order offered.
    const CHOICES: &'static [(Self, &'static str, &'static str)];

    /// The variant called `name`, if any.
    fn from_name(name: &str) -> Option<Self> {
        Self::CHOICES
            .iter()
            .find(|(_, n, _)| *n == name)
            .map(|(v, _, _)| *v)
    }

    /// This variant's name.
    fn name(self) -> &'static str {
        Self::CHOICES
            .iter()
            .find(|(v, _, _)| *v == self)
            .map(|(_, n, _)| *n)
            .expect("every variant is listed in CHOICES")
    }
}

#[cfg(test)]
mod tests {
    use super::Choice;
    use crate::analysis::fit::FitFormat;
    use crate::analysis::validate::ValidateFormat;
    use crate::plot::{KindName, Level};
    use crate::report::Format;

    fn round_trips<T: Choice + std::fmt::Debug>() {
        for (v, n, help) in T::CHOICES {
            assert_eq!(T::from_name(n), Some(*v));
            assert_eq!(v.name(), *n);
            assert!(!help.is_empty());
        }
        assert_eq!(T::from_name("no-such-name"), None);
    }

    #[test]
    fn every_choice_round_trips_through_its_name() {
        round_trips::<Format>();
        round_trips::<FitFormat>();
        round_trips::<ValidateFormat>();
        round_trips::<KindName>();
        round_trips::<Level>();
        assert_eq!(KindName::from_name("hit-rate"), Some(KindName::HitRate));
    }
}
