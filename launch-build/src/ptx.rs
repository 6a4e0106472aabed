//! Reading launch bounds back from PTX: `.maxntid`, `.reqntid`, `.minnctapersm`, `.maxnreg` after
//! each `.entry`. The PTX is what ptxas and the driver act on, so it is the contract's ground truth.

use launch::{Contract, ContractSource};

/// The performance directives of one `.entry`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EntryDirectives {
    /// The entry's symbol name.
    pub name: String,
    /// `.maxntid x, y, z`.
    pub maxntid: Option<[u32; 3]>,
    /// `.reqntid x, y, z`.
    pub reqntid: Option<[u32; 3]>,
    /// `.minnctapersm n`.
    pub minnctapersm: Option<u32>,
    /// `.maxnreg n`.
    pub maxnreg: Option<u32>,
}

impl EntryDirectives {
    /// The contract these directives express, or `None` for an unbounded kernel.
    pub fn contract(&self, source: ContractSource) -> Option<Contract> {
        // Checked: the fields are public and parsed from text, and `4, 4294967295` overflowed
        // (a panic through the public API). No CTA holds more than u32::MAX threads, so an
        // overflowing product saturates: "more threads than any launch can have".
        let product = |d: [u32; 3]| d.iter().try_fold(1u32, |p, &v| p.checked_mul(v.max(1))).unwrap_or(u32::MAX);
        let threads = self.reqntid.or(self.maxntid).map(product);
        if threads.is_none() && self.maxnreg.is_none() {
            return None;
        }
        Some(Contract {
            source,
            threads,
            // ptxas ignores .minnctapersm without .maxntid/.reqntid.
            min_blocks: if threads.is_some() { self.minnctapersm } else { None },
            max_regs: self.maxnreg,
            exact: self.reqntid.is_some(),
        })
    }
}

/// Every `.entry` of a PTX module with its directives, in file order.
pub fn entries(ptx: &str) -> Vec<EntryDirectives> {
    let mut out: Vec<EntryDirectives> = Vec::new();
    let mut current: Option<EntryDirectives> = None;
    for line in ptx.lines() {
        let t = line.trim();
        if let Some(rest) = entry_name(t) {
            if let Some(done) = current.take() {
                out.push(done);
            }
            current = Some(EntryDirectives { name: rest.to_string(), ..Default::default() });
            continue;
        }
        let Some(cur) = current.as_mut() else { continue };
        if t.starts_with('{') {
            out.push(current.take().expect("checked above"));
            continue;
        }
        let (word, args) = t.split_once(char::is_whitespace).unwrap_or((t, ""));
        match word {
            ".maxntid" => cur.maxntid = dims(args),
            ".reqntid" => cur.reqntid = dims(args),
            ".minnctapersm" => cur.minnctapersm = args.trim().parse().ok(),
            ".maxnreg" => cur.maxnreg = args.trim().parse().ok(),
            _ => {}
        }
    }
    out.extend(current);
    out
}

/// `.visible .entry name(` → `name`.
pub fn entry_name(line: &str) -> Option<&str> {
    let mut words = line.split_whitespace();
    let mut w = words.next()?;
    while matches!(w, ".visible" | ".weak" | ".extern") {
        w = words.next()?;
    }
    if w != ".entry" {
        return None;
    }
    let rest = line[line.find(".entry")? + ".entry".len()..].trim_start();
    let end = rest.find(|c: char| c == '(' || c.is_whitespace()).unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// `x[, y[, z]]`; `None` when malformed, or when `x × y × z` does not fit in a `u32` (ptxas
/// refuses such a block; reading it as a bound would be wrong).
fn dims(args: &str) -> Option<[u32; 3]> {
    let mut d = [1u32; 3];
    let mut n = 0;
    for (i, part) in args.split(',').enumerate() {
        if i >= 3 {
            return None;
        }
        d[i] = part.trim().parse().ok()?;
        n += 1;
    }
    d.iter().try_fold(1u32, |p, &v| p.checked_mul(v))?;
    (n > 0).then_some(d)
}

/// The `.version` of a PTX module (`8.8`).
pub fn version(ptx: &str) -> Option<&str> {
    ptx.lines().find_map(|l| l.trim().strip_prefix(".version").map(str::trim))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = "\
.version 8.8
.target sm_90
.address_size 64

.visible .entry poly_eval_lb256x4(
\t.param .u64 .ptr .align 1 poly_eval_lb256x4_param_0,
\t.param .u32 poly_eval_lb256x4_param_2
)
.maxntid 256, 1, 1
.minnctapersm 4
{
\tret;
}
.visible .entry poly_eval(
\t.param .u32 poly_eval_param_2
)
{
}
.visible .entry capped(
)
.maxnreg 32
{
}
.entry _Z4tmplILi8EEvPi(
)
.reqntid 16, 2, 1
{
}
";

    #[test]
    fn directives_are_read_per_entry() {
        let e = entries(PTX);
        let names: Vec<&str> = e.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["poly_eval_lb256x4", "poly_eval", "capped", "_Z4tmplILi8EEvPi"]);
        assert_eq!(e[0].maxntid, Some([256, 1, 1]));
        assert_eq!(e[0].minnctapersm, Some(4));
        assert_eq!(e[1], EntryDirectives { name: "poly_eval".into(), ..Default::default() });
        assert_eq!(e[2].maxnreg, Some(32));
        assert_eq!(e[3].reqntid, Some([16, 2, 1]));
        assert_eq!(version(PTX), Some("8.8"));
    }

    #[test]
    fn contracts_follow_the_directives() {
        let e = entries(PTX);
        let c = e[0].contract(ContractSource::LaunchBounds).unwrap();
        assert_eq!((c.threads, c.min_blocks, c.max_regs, c.exact), (Some(256), Some(4), None, false));
        assert_eq!(e[1].contract(ContractSource::LaunchBounds), None);
        let c = e[2].contract(ContractSource::LaunchBounds).unwrap();
        assert_eq!((c.threads, c.max_regs), (None, Some(32)));
        let c = e[3].contract(ContractSource::LaunchBounds).unwrap();
        assert_eq!((c.threads, c.exact), (Some(32), true));
    }

    #[test]
    fn overflowing_dimensions_neither_panic_nor_read_as_bounds() {
        // Was "attempt to multiply with overflow" from the public API.
        let e = entries(".visible .entry )\n.maxntid 4,4294967295");
        assert_eq!(e[0].maxntid, None, "a block of 2^34 threads is no bound");
        assert_eq!(e[0].contract(ContractSource::LaunchBounds), None);
        let e = entries(".entry k(\n.reqntid 65536, 65536, 2\n.maxnreg 99999999999\n{");
        assert_eq!((e[0].reqntid, e[0].maxnreg), (None, None));
        // Directives built by hand (the fields are public) saturate instead.
        let d = EntryDirectives { maxntid: Some([4, u32::MAX, 2]), ..Default::default() };
        assert_eq!(d.contract(ContractSource::LaunchBounds).unwrap().threads, Some(u32::MAX));
        assert_eq!(entries(".entry k(\n.maxntid 1024, 1, 1\n{")[0].maxntid, Some([1024, 1, 1]));
    }
}
