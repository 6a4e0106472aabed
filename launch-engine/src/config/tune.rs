//! `[package.metadata.launch.tune.<kernel>]`: the grid of launch contracts a kernel's variants are
//! built with (see `crate::variants::grid`).
//!
//! ```toml
//! [package.metadata.launch.tune.poly_eval]     # or tune."poly.cu::poly_eval"
//! threads = [256, 1024]                        # default: the kernel's block size
//! min_blocks = [1, 2]                          # default: the kernel's own (or none)
//! max_regs = [32, 64]                          # or "cliffs"; default: the kernel's own (or none)
//! ```
//!
//! Which kernel a table names is known only once the kernels are compiled: each table keeps the
//! location of its header, so the build's "no such kernel" error points at it.

use crate::quantity::Quantity;

use super::{location, Doc, Node, TUNE_KEYS};
use crate::error::{Error, Location};

/// The most variants one kernel's grid may have: each is a ptxas run per arch and a module
/// embedded in the crate.
pub const MAX_VARIANTS: usize = 64;

/// One `[package.metadata.launch.tune.<kernel>]` table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TuneConfig {
    /// The kernel as written: `poly_eval`, or `poly.cu::poly_eval` (see `launch::Kernel::is_named`).
    pub kernel: String,
    /// The table's dotted key (`package.metadata.launch.tune.poly_eval`), for errors.
    pub key: String,
    /// Where the table is, for errors found once the kernels are known.
    pub location: Location,
    /// Block sizes; `None`: the kernel's own.
    pub threads: Option<Vec<u32>>,
    /// `.minnctapersm` values; `None`: the kernel's own.
    pub min_blocks: Option<Vec<u32>>,
    /// Register caps; `None`: the kernel's own.
    pub max_regs: Option<MaxRegs>,
}

/// `max_regs`: caps, or every cliff of each block size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MaxRegs {
    /// These caps, in the order written, without repeats.
    Caps(Vec<u32>),
    /// `"cliffs"`: for each block size, every cap at which the resident blocks per SM change on
    /// one of the crate's arches (`launch_analysis::cliffs`).
    Cliffs,
}

impl Doc<'_> {
    /// The `tune` table: one [`TuneConfig`] per kernel, in the order written.
    pub(super) fn tune(&self, node: &Node) -> Result<Vec<TuneConfig>, Error> {
        let tables =
            self.table(node, "a table of per-kernel grids such as [package.metadata.launch.tune.my_kernel]")?;
        let mut out = Vec::new();
        for (name, _) in tables.iter() {
            let Some((key, item)) = tables.get_key_value(name) else { continue };
            let Some(one) = node.entry(key, item) else { continue };
            let grid = self.table(&one, "a table of launch contracts to build, such as { threads = [256, 512] }")?;
            self.known_keys(&one, grid, TUNE_KEYS, "[package.metadata.launch.tune.<kernel>]")?;
            if name.trim().is_empty() {
                let message = "an empty kernel name; name a kernel as `name` or `file.cu::name`".to_string();
                return Err(self.error(key.span().or(one.span.clone()), &one.path, message));
            }
            let threads = match one.child_in(grid, "threads") {
                Some(list) => Some(self.numbers(&list, "block sizes", |n| self.quantity(n, Quantity::Threads))?),
                None => None,
            };
            let min_blocks = match one.child_in(grid, "min_blocks") {
                Some(list) => Some(self.numbers(&list, "block counts", |n| self.quantity(n, Quantity::MinBlocks))?),
                None => None,
            };
            let max_regs = match one.child_in(grid, "max_regs") {
                Some(v) => Some(self.max_regs(&v)?),
                None => None,
            };
            let tune = TuneConfig {
                kernel: name.to_string(),
                key: one.path.clone(),
                location: location(self.path, self.text, one.span.clone()),
                threads,
                min_blocks,
                max_regs,
            };
            // Lists alone can already be too many; cliffs are counted once the kernel is compiled.
            let size = [tune.threads.as_ref().map(Vec::len), tune.min_blocks.as_ref().map(Vec::len)]
                .into_iter()
                .chain([match &tune.max_regs {
                    Some(MaxRegs::Caps(c)) => Some(c.len()),
                    _ => None,
                }])
                .map(|n| n.unwrap_or(1))
                .product::<usize>();
            if size > MAX_VARIANTS {
                return Err(self.error(one.span.clone(), &one.path, too_many(size)));
            }
            out.push(tune);
        }
        Ok(out)
    }

    /// A non-empty list of integers, each checked by `each`, repeats removed (first kept).
    fn numbers(&self, list: &Node, what: &str, each: impl Fn(&Node) -> Result<u32, Error>) -> Result<Vec<u32>, Error> {
        let items = self.array(list, &format!("a list of {what} such as [1, 2]"))?;
        if items.is_empty() {
            let message =
                format!("the list is empty; list the {what} to build, or leave the key out for the kernel's own");
            return Err(self.error(list.span.clone(), &list.path, message));
        }
        let mut out = Vec::new();
        for item in &items {
            let n = each(item)?;
            if !out.contains(&n) {
                out.push(n);
            }
        }
        Ok(out)
    }

    /// `max_regs = [..]` or `max_regs = "cliffs"`.
    fn max_regs(&self, node: &Node) -> Result<MaxRegs, Error> {
        match node.r {
            super::Ref::Value(toml_edit::Value::String(s)) if s.value() == "cliffs" => Ok(MaxRegs::Cliffs),
            super::Ref::Value(toml_edit::Value::String(_)) => Err(self.error(
                node.span.clone(),
                &node.path,
                format!("{} is not a grid; expected \"cliffs\" or {MAX_REGS_LIST}", self.shown(node)),
            )),
            super::Ref::Value(toml_edit::Value::Array(_)) => {
                Ok(MaxRegs::Caps(self.numbers(node, "register caps", |n| self.quantity(n, Quantity::MaxRegs))?))
            }
            _ => Err(self.wrong_type(node, &format!("\"cliffs\" or {MAX_REGS_LIST}"))),
        }
    }
}

const MAX_REGS_LIST: &str = "a list of register caps from 16 to 255 such as [32, 64]";

/// The message for a grid of `size` variants.
pub fn too_many(size: usize) -> String {
    format!(
        "this grid has {size} variants, more than the {MAX_VARIANTS} one kernel may have (each is a ptxas run per arch \
         and a module in the crate); shorten the lists"
    )
}

/// A configuration error at a tune table (for what the build finds once the kernels are known).
pub fn error_at(tune: &TuneConfig, message: String) -> Error {
    Error::Config { location: tune.location.clone(), key: tune.key.clone(), message }
}
