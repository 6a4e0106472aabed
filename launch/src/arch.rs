//! GPU architectures: the `sm_XY[a|f]` names that ptxas and NVRTC accept.

use std::fmt;
use std::str::FromStr;

/// Variant suffix of an architecture name: `sm_90a` (arch-specific), `sm_100f` (family).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Variant {
    /// Runs on this compute capability and every later one (through PTX JIT).
    Base,
    /// `a`: arch-specific features; runs only on exactly this compute capability.
    Specific,
    /// `f`: family-specific features; runs on this family.
    Family,
}

/// A real GPU architecture (`sm_90`, `sm_100a`, `sm_120f`).
///
/// Ordered by compute capability, then variant, so the lowest listed arch is `min()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Arch {
    /// Compute capability major version.
    pub major: u32,
    /// Compute capability minor version.
    pub minor: u32,
    /// `a`/`f` suffix.
    pub variant: Variant,
}

/// Every architecture some supported toolchain can target: ptxas/NVRTC 12.9 (`sm_50` … `sm_121f`)
/// plus `sm_110*`, the CUDA 13 name of Thor. Whether the toolchain in use accepts one is checked
/// against the toolchain itself when compiling.
pub const KNOWN_ARCHES: &[&str] = &[
    "sm_50", "sm_52", "sm_53", "sm_60", "sm_61", "sm_62", "sm_70", "sm_72", "sm_75", "sm_80", "sm_86", "sm_87",
    "sm_89", "sm_90", "sm_90a", "sm_100", "sm_100a", "sm_100f", "sm_101", "sm_101a", "sm_101f", "sm_103", "sm_103a",
    "sm_103f", "sm_110", "sm_110a", "sm_110f", "sm_120", "sm_120a", "sm_120f", "sm_121", "sm_121a", "sm_121f",
];

/// Why a string is not an architecture name.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ArchParseError {
    /// The rejected text.
    pub input: String,
    /// A known arch that looks like what was meant, if any.
    pub suggestion: Option<&'static str>,
}

impl fmt::Display for ArchParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Escaped and cut short: the input may come from an environment variable.
        // Only control characters are escaped, so a name with quotes is shown as it was typed.
        let shown: String = self
            .input
            .chars()
            .flat_map(|c| if c.is_control() { c.escape_debug().collect::<Vec<_>>() } else { vec![c] })
            .take(40)
            .collect();
        if self.input.trim().is_empty() {
            write!(f, "an empty name is not a GPU architecture")?;
        } else {
            write!(f, "`{shown}` is not a GPU architecture")?;
        }
        match self.suggestion {
            Some(s) if self.input.trim().to_ascii_lowercase().starts_with("compute_") => write!(
                f,
                " (did you mean `{s}`? `compute_*` names a virtual architecture; a cubin needs a real `sm_*` one)"
            )?,
            Some(s) => write!(f, " (did you mean `{s}`?)")?,
            None => {}
        }
        const FORM: &str = "names are `sm_` and a compute capability, with an `a` or `f` suffix where the arch has one";
        write!(f, "; valid choices: {} ({FORM})", KNOWN_ARCHES.join(", "))
    }
}

impl std::error::Error for ArchParseError {}

impl Arch {
    /// The arch of compute capability `major.minor` with `variant`: `Arch::new(9, 0,
    /// Variant::Specific)` is `sm_90a`. A `const fn`, so that the generated `kernels.rs` builds
    /// its statics with no name to parse at run time. Any numbers are taken; whether the
    /// toolchain knows the arch is [`FromStr`]'s and the compiler's business.
    pub const fn new(major: u32, minor: u32, variant: Variant) -> Arch {
        Arch { major, minor, variant }
    }

    /// Compute capability as `(major, minor)`; `a`/`f` variants share their base's.
    pub fn compute_capability(self) -> (u32, u32) {
        (self.major, self.minor)
    }

    /// The compute capability as one number, as NVRTC and the driver's `BINARY_VERSION` write it:
    /// `90` for sm_90 and sm_90a, `100` for sm_100.
    pub fn sm(self) -> u32 {
        self.major * 10 + self.minor
    }

    /// The same compute capability without the `a`/`f` suffix.
    pub fn base(self) -> Arch {
        Arch { variant: Variant::Base, ..self }
    }

    /// The virtual architecture NVRTC compiles to for this target (`compute_90a`).
    pub fn virtual_name(self) -> String {
        format!("compute_{}", self.suffix())
    }

    fn suffix(self) -> String {
        let v = match self.variant {
            Variant::Base => "",
            Variant::Specific => "a",
            Variant::Family => "f",
        };
        format!("{}{}{}", self.major, self.minor, v)
    }

    /// Whether a cubin built for `self` runs on a device of compute capability `cc` as is
    /// (no JIT): a base or `f` cubin on its own major version at the same or a newer minor (sm_80
    /// on 8.0, 8.6, 8.7 and 8.9, never on 9.0; sm_100f on 10.0 and 10.3), an `a` cubin only on its
    /// exact compute capability. The rule of NVIDIA's binary compatibility (CUDA C++ Programming
    /// Guide, "Binary Compatibility"; family-specific targets since CUDA 12.9).
    pub(crate) fn runs_natively_on(self, cc: (u32, u32)) -> bool {
        match self.variant {
            Variant::Specific => (self.major, self.minor) == cc,
            Variant::Base | Variant::Family => self.major == cc.0 && self.minor <= cc.1,
        }
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sm_{}", self.suffix())
    }
}

impl FromStr for Arch {
    type Err = ArchParseError;

    /// Accepts exactly the names in [`KNOWN_ARCHES`]; `compute_XX` and bare numbers are rejected
    /// (a cubin needs a real architecture).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if KNOWN_ARCHES.contains(&s) {
            let digits = &s[3..];
            let (num, variant) = match digits.as_bytes().last() {
                Some(b'a') => (&digits[..digits.len() - 1], Variant::Specific),
                Some(b'f') => (&digits[..digits.len() - 1], Variant::Family),
                _ => (digits, Variant::Base),
            };
            // Known names are `sm_` + major digits + one minor digit.
            let (major, minor) = num.split_at(num.len() - 1);
            return Ok(Arch {
                major: major.parse().expect("known arch table is well formed"),
                minor: minor.parse().expect("known arch table is well formed"),
                variant,
            });
        }
        Err(ArchParseError { input: s.to_string(), suggestion: suggest(s) })
    }
}

/// A likely intended name for a misspelt arch: `90` → `sm_90`, `sm_9O` → `sm_90`, `SM_90` → `sm_90`.
fn suggest(s: &str) -> Option<&'static str> {
    // Prefixes go before `o` → `0`, which would turn `compute_` into `c0mpute_`.
    let lower = s.trim().to_ascii_lowercase();
    let norm =
        lower.trim_start_matches("compute_").trim_start_matches("sm_").trim_start_matches("sm").replace('o', "0");
    let want = format!("sm_{norm}");
    KNOWN_ARCHES.iter().copied().find(|k| *k == want)
}

#[cfg(feature = "serde")]
impl serde::Serialize for Arch {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Arch {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// An arch is written as its name (`sm_90`, `sm_100a`).
#[cfg(feature = "json-schema")]
impl schemars::JsonSchema for Arch {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Arch".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "A GPU architecture by its name: sm_ and the compute capability, with an `a` or `f` suffix for the arch-specific and family builds (sm_90, sm_100a, sm_120f).",
            "pattern": "^sm_[0-9]+[af]?$"
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_arch_round_trips() {
        for name in KNOWN_ARCHES {
            let a: Arch = name.parse().unwrap();
            assert_eq!(a.to_string(), *name);
        }
    }

    /// `new` builds what parsing the name gives, for every known name.
    #[test]
    fn new_is_the_parsed_name() {
        const SM_90A: Arch = Arch::new(9, 0, Variant::Specific);
        assert_eq!(SM_90A, "sm_90a".parse().unwrap());
        for name in KNOWN_ARCHES {
            let a: Arch = name.parse().unwrap();
            assert_eq!(Arch::new(a.major, a.minor, a.variant), a);
        }
    }

    #[test]
    fn variants_map_to_their_base_compute_capability() {
        let a: Arch = "sm_100f".parse().unwrap();
        assert_eq!(a.compute_capability(), (10, 0));
        assert_eq!(a.variant, Variant::Family);
        assert_eq!(a.virtual_name(), "compute_100f");
        let b: Arch = "sm_121a".parse().unwrap();
        assert_eq!(b.compute_capability(), (12, 1));
        assert_eq!(b.base().to_string(), "sm_121");
    }

    #[test]
    fn misspellings_are_rejected_with_a_suggestion() {
        let e = "sm_9O".parse::<Arch>().unwrap_err();
        assert_eq!(e.suggestion, Some("sm_90"));
        assert!(e.to_string().contains("valid choices: sm_50"));
        assert_eq!("90".parse::<Arch>().unwrap_err().suggestion, Some("sm_90"));
        let e = "sm_91".parse::<Arch>().unwrap_err();
        assert_eq!(e.suggestion, None);
        assert!("compute_90".parse::<Arch>().is_err());
        assert!("sm_90f".parse::<Arch>().is_err());
    }

    /// The message names the input (escaped), what a name looks like, and every choice.
    #[test]
    fn error_text_explains_the_form() {
        let e = "compute_90".parse::<Arch>().unwrap_err();
        assert_eq!(e.suggestion, Some("sm_90"));
        let m = e.to_string();
        assert!(m.starts_with("`compute_90` is not a GPU architecture (did you mean `sm_90`? `compute_*` names a virtual architecture; a cubin needs a real `sm_*` one); valid choices: sm_50, "), "{m}");
        assert!(
            m.ends_with(
                "sm_121f (names are `sm_` and a compute capability, with an `a` or `f` suffix where the arch has one)"
            ),
            "{m}"
        );
        assert!(""
            .parse::<Arch>()
            .unwrap_err()
            .to_string()
            .starts_with("an empty name is not a GPU architecture; valid choices: sm_50,"));
        assert!("sm_90\n"
            .parse::<Arch>()
            .unwrap_err()
            .to_string()
            .starts_with("`sm_90\\n` is not a GPU architecture (did you mean `sm_90`?)"));
        let long = "x".repeat(100);
        assert!(long.parse::<Arch>().unwrap_err().to_string().starts_with(&format!("`{}` is not", "x".repeat(40))));
    }

    #[test]
    fn ordering_puts_the_lowest_compute_capability_first() {
        let mut v: Vec<Arch> = ["sm_100", "sm_90a", "sm_80", "sm_90"].iter().map(|s| s.parse().unwrap()).collect();
        v.sort();
        let names: Vec<String> = v.iter().map(|a| a.to_string()).collect();
        assert_eq!(names, ["sm_80", "sm_90", "sm_90a", "sm_100"]);
    }
}
