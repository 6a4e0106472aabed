//! GPU names → compute capability, for `cargo launch coverage`: the datacenter, workstation,
//! consumer and Jetson parts from Turing to Blackwell (and the V100), so a user can ask about the
//! GPUs they ship to by name.
//!
//! Source: NVIDIA's "CUDA GPUs - Compute Capability" list,
//! <https://developer.nvidia.com/cuda-gpus>, and for Blackwell the CUDA 12.9/13.0 release notes
//! (B200/GB200 10.0, B300/GB300 10.3, Jetson Thor 11.0 (10.1 before CUDA 13), RTX 50 series and
//! RTX PRO Blackwell 12.0, DGX Spark/GB10 12.1). A part that is not here can be named by its arch
//! (`sm_86`).

use std::fmt;

use launch::Arch;

/// Where a GPU is sold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Segment {
    /// Data-center accelerators (A100, H100, L4).
    Datacenter,
    /// Professional cards (RTX A6000, RTX 6000 Ada).
    Workstation,
    /// GeForce cards.
    Consumer,
    /// Jetson modules and other embedded parts.
    Embedded,
}

/// One GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gpu {
    /// Its name as NVIDIA writes it, without "NVIDIA"/"GeForce" (`RTX 4090`).
    pub name: &'static str,
    /// Its compute capability.
    pub cc: (u32, u32),
    /// Its architecture's name (`Ada`).
    pub family: &'static str,
    /// Where it is sold.
    pub segment: Segment,
}

const fn gpu(name: &'static str, cc: (u32, u32), family: &'static str, segment: Segment) -> Gpu {
    Gpu { name, cc, family, segment }
}

use Segment::{Consumer as C, Datacenter as D, Embedded as E, Workstation as W};

/// Every GPU known by name, oldest architecture first.
pub const GPUS: &[Gpu] = &[
    gpu("V100", (7, 0), "Volta", D),
    gpu("T4", (7, 5), "Turing", D),
    gpu("Quadro RTX 8000", (7, 5), "Turing", W),
    gpu("Quadro RTX 6000", (7, 5), "Turing", W),
    gpu("Quadro RTX 5000", (7, 5), "Turing", W),
    gpu("TITAN RTX", (7, 5), "Turing", C),
    gpu("RTX 2080 Ti", (7, 5), "Turing", C),
    gpu("RTX 2080", (7, 5), "Turing", C),
    gpu("RTX 2070", (7, 5), "Turing", C),
    gpu("RTX 2060", (7, 5), "Turing", C),
    gpu("GTX 1660 Ti", (7, 5), "Turing", C),
    gpu("GTX 1650", (7, 5), "Turing", C),
    gpu("A100", (8, 0), "Ampere", D),
    gpu("A30", (8, 0), "Ampere", D),
    gpu("A40", (8, 6), "Ampere", D),
    gpu("A10", (8, 6), "Ampere", D),
    gpu("A16", (8, 6), "Ampere", D),
    gpu("A2", (8, 6), "Ampere", D),
    gpu("RTX A6000", (8, 6), "Ampere", W),
    gpu("RTX A5000", (8, 6), "Ampere", W),
    gpu("RTX A4000", (8, 6), "Ampere", W),
    gpu("RTX 3090 Ti", (8, 6), "Ampere", C),
    gpu("RTX 3090", (8, 6), "Ampere", C),
    gpu("RTX 3080", (8, 6), "Ampere", C),
    gpu("RTX 3070", (8, 6), "Ampere", C),
    gpu("RTX 3060", (8, 6), "Ampere", C),
    gpu("Jetson AGX Orin", (8, 7), "Ampere", E),
    gpu("Jetson Orin NX", (8, 7), "Ampere", E),
    gpu("Jetson Orin Nano", (8, 7), "Ampere", E),
    gpu("L4", (8, 9), "Ada", D),
    gpu("L40", (8, 9), "Ada", D),
    gpu("L40S", (8, 9), "Ada", D),
    gpu("RTX 6000 Ada", (8, 9), "Ada", W),
    gpu("RTX 4090", (8, 9), "Ada", C),
    gpu("RTX 4080", (8, 9), "Ada", C),
    gpu("RTX 4070", (8, 9), "Ada", C),
    gpu("RTX 4060", (8, 9), "Ada", C),
    gpu("H100", (9, 0), "Hopper", D),
    gpu("H200", (9, 0), "Hopper", D),
    gpu("H800", (9, 0), "Hopper", D),
    gpu("H20", (9, 0), "Hopper", D),
    gpu("GH200", (9, 0), "Hopper", D),
    gpu("B200", (10, 0), "Blackwell", D),
    gpu("B100", (10, 0), "Blackwell", D),
    gpu("GB200", (10, 0), "Blackwell", D),
    gpu("B300", (10, 3), "Blackwell", D),
    gpu("GB300", (10, 3), "Blackwell", D),
    gpu("Jetson AGX Thor", (11, 0), "Blackwell", E),
    gpu("RTX PRO 6000 Blackwell", (12, 0), "Blackwell", W),
    gpu("RTX 5090", (12, 0), "Blackwell", C),
    gpu("RTX 5080", (12, 0), "Blackwell", C),
    gpu("RTX 5070", (12, 0), "Blackwell", C),
    gpu("RTX 5060", (12, 0), "Blackwell", C),
    gpu("DGX Spark", (12, 1), "Blackwell", E),
];

/// The GPUs `cargo launch coverage` asks about when none are named: one common part per compute
/// capability from Turing to Blackwell.
pub const DEFAULT_LIST: &[&str] =
    &["T4", "A100", "RTX 3090", "Jetson AGX Orin", "L4", "H100", "B200", "B300", "RTX 5090", "DGX Spark"];

/// A GPU asked about: a named one, or a compute capability given as an arch (`sm_86`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The name as shown: the table's, or the arch as given.
    pub name: String,
    /// Its compute capability.
    pub cc: (u32, u32),
    /// The table's row, for a named GPU.
    pub gpu: Option<Gpu>,
}

/// A name that is neither a GPU of [`GPUS`] nor an arch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownGpu {
    /// The name given.
    pub input: String,
    /// Known names that contain it, or that it contains.
    pub near: Vec<&'static str>,
}

impl fmt::Display for UnknownGpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` is not a GPU launch knows", self.input.escape_debug())?;
        if !self.near.is_empty() {
            write!(
                f,
                " (did you mean {}?)",
                self.near.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
            )?;
        }
        write!(f, "; name one of: {}; or give its compute capability as an arch (`sm_86`)", names().join(", "))
    }
}

impl std::error::Error for UnknownGpu {}

/// Every name of [`GPUS`], in order.
pub fn names() -> Vec<&'static str> {
    GPUS.iter().map(|g| g.name).collect()
}

/// `RTX 4090`, `rtx4090`, `NVIDIA GeForce RTX 4090` → `rtx4090`.
fn key(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    let trimmed = lower.trim();
    let trimmed = trimmed.strip_prefix("nvidia").unwrap_or(trimmed).trim_start();
    let trimmed = trimmed.strip_prefix("geforce").unwrap_or(trimmed);
    trimmed.chars().filter(|c| c.is_ascii_alphanumeric()).collect()
}

/// The GPU `name` names: a row of [`GPUS`] (case, spaces and a leading "NVIDIA"/"GeForce" do not
/// matter), or an arch (`sm_86`, `sm_90a`: its compute capability).
pub fn lookup(name: &str) -> Result<Target, UnknownGpu> {
    let k = key(name);
    if let Some(g) = GPUS.iter().find(|g| key(g.name) == k) {
        return Ok(Target { name: g.name.to_string(), cc: g.cc, gpu: Some(*g) });
    }
    if let Ok(a) = name.trim().parse::<Arch>() {
        return Ok(Target { name: a.to_string(), cc: a.compute_capability(), gpu: None });
    }
    let near = if k.is_empty() {
        Vec::new()
    } else {
        GPUS.iter().map(|g| g.name).filter(|n| key(n).contains(&k) || k.contains(&key(n))).take(5).collect()
    };
    Err(UnknownGpu { input: name.to_string(), near })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_found_whatever_their_spelling_and_arches_are_taken_as_is() {
        assert_eq!(lookup("RTX 4090").unwrap().cc, (8, 9));
        assert_eq!(lookup("NVIDIA GeForce RTX 4090").unwrap().name, "RTX 4090");
        assert_eq!(lookup("rtx4090").unwrap().cc, (8, 9));
        assert_eq!(lookup("h200").unwrap().cc, (9, 0));
        assert_eq!(lookup("Jetson AGX Orin").unwrap().cc, (8, 7));
        assert_eq!(lookup("B300").unwrap().cc, (10, 3));
        let t = lookup("sm_86").unwrap();
        assert_eq!((t.name.as_str(), t.cc, t.gpu), ("sm_86", (8, 6), None));
        assert_eq!(lookup("sm_90a").unwrap().cc, (9, 0));
    }

    #[test]
    fn an_unknown_name_says_what_is_near_and_what_is_known() {
        let e = lookup("RTX 40").unwrap_err();
        assert_eq!(e.near, ["RTX 4090", "RTX 4080", "RTX 4070", "RTX 4060"]);
        let m = e.to_string();
        assert!(m.starts_with("`RTX 40` is not a GPU launch knows (did you mean `RTX 4090`,"), "{m}");
        assert!(m.ends_with("or give its compute capability as an arch (`sm_86`)"), "{m}");
        assert!(lookup("").is_err());
    }

    #[test]
    fn the_table_is_well_formed() {
        for g in GPUS {
            // Every compute capability is one an arch names, and every name is found as itself.
            let arch = format!("sm_{}{}", g.cc.0, g.cc.1);
            assert!(arch.parse::<Arch>().is_ok(), "{}: {arch}", g.name);
            assert_eq!(lookup(g.name).unwrap().gpu, Some(*g));
        }
        for n in DEFAULT_LIST {
            assert!(lookup(n).unwrap().gpu.is_some(), "{n}");
        }
    }
}
