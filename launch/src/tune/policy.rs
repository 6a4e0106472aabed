//! `LAUNCH_TUNE`: whether a program may time kernels at run time.

use std::ffi::OsStr;

/// What the tuner may do, from `LAUNCH_TUNE` ([`TunePolicy::from_env`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TunePolicy {
    /// `off`: never time, never read the cache; the caller's default variant runs.
    Off,
    /// `cached` (the default): use a remembered winner, time only on a miss.
    #[default]
    Cached,
    /// `always`: time on every run and overwrite the remembered winner.
    Always,
}

/// `LAUNCH_TUNE` held something other than `off`, `cached` or `always`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TunePolicyError {
    /// The value, as read (lossily, when not UTF-8).
    pub value: String,
}

impl std::fmt::Display for TunePolicyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "LAUNCH_TUNE=`{}` is not a tuning policy: expected `off`, `cached` (the default) or `always`",
            self.value
        )
    }
}

impl std::error::Error for TunePolicyError {}

impl TunePolicy {
    /// `LAUNCH_TUNE`; unset or empty is [`TunePolicy::Cached`].
    ///
    /// # Errors
    /// Any other value than `off`, `cached` or `always` (case and surrounding blanks ignored).
    pub fn from_env() -> Result<TunePolicy, TunePolicyError> {
        TunePolicy::parse(super::env_var("LAUNCH_TUNE").as_deref())
    }

    /// The policy a `LAUNCH_TUNE` value names (`None`: unset).
    ///
    /// # Errors
    /// As [`TunePolicy::from_env`].
    pub(crate) fn parse(value: Option<&OsStr>) -> Result<TunePolicy, TunePolicyError> {
        let Some(value) = value else { return Ok(TunePolicy::default()) };
        let error = || TunePolicyError { value: value.to_string_lossy().into_owned() };
        match value.to_str().ok_or_else(error)?.trim().to_ascii_lowercase().as_str() {
            "" | "cached" => Ok(TunePolicy::Cached),
            "off" => Ok(TunePolicy::Off),
            "always" => Ok(TunePolicy::Always),
            _ => Err(error()),
        }
    }

    /// Whether a remembered winner may be used.
    pub fn reads(self) -> bool {
        self == TunePolicy::Cached
    }

    /// Whether timing may happen (on a miss for `cached`, always for `always`).
    pub fn times(self) -> bool {
        self != TunePolicy::Off
    }
}

impl std::fmt::Display for TunePolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TunePolicy::Off => "off",
            TunePolicy::Cached => "cached",
            TunePolicy::Always => "always",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_tune_is_off_cached_or_always_and_defaults_to_cached() {
        let parse = |s: &str| TunePolicy::parse(Some(OsStr::new(s)));
        assert_eq!(TunePolicy::parse(None), Ok(TunePolicy::Cached));
        assert_eq!(parse(""), Ok(TunePolicy::Cached));
        assert_eq!(parse("off"), Ok(TunePolicy::Off));
        assert_eq!(parse(" Cached\n"), Ok(TunePolicy::Cached));
        assert_eq!(parse("ALWAYS"), Ok(TunePolicy::Always));
        for p in [TunePolicy::Off, TunePolicy::Cached, TunePolicy::Always] {
            assert_eq!(parse(&p.to_string()), Ok(p));
        }
        for bad in ["0", "1", "on", "yes", "never", "cache", "always please"] {
            let e = parse(bad).unwrap_err();
            assert_eq!(e.value, bad);
            assert_eq!(
                e.to_string(),
                format!(
                    "LAUNCH_TUNE=`{bad}` is not a tuning policy: expected `off`, `cached` (the default) or `always`"
                )
            );
        }
        assert_eq!((TunePolicy::Off.reads(), TunePolicy::Off.times()), (false, false));
        assert_eq!((TunePolicy::Cached.reads(), TunePolicy::Cached.times()), (true, true));
        assert_eq!((TunePolicy::Always.reads(), TunePolicy::Always.times()), (false, true));
    }

    #[cfg(unix)]
    #[test]
    fn a_value_that_is_not_utf8_is_an_error_not_a_panic() {
        use std::os::unix::ffi::OsStrExt;
        let e = TunePolicy::parse(Some(OsStr::from_bytes(b"of\xff"))).unwrap_err();
        assert_eq!(e.value, "of\u{fffd}");
    }
}
