//! `cargo launch report`: per kernel and arch, the contract, the ptxas lines and the occupancy at
//! the block size the kernel is launched with. Builds, analyses (`launch_analysis`, through
//! [`crate::records`]), selects and renders; the JSON form is `launch_schema::report`.

use anyhow::Context;
use launch_schema::report::{Document, Record};

use crate::cargo::{self, Selection};
use crate::cli::{Format, ReportArgs};
use crate::error::Error;
use crate::output::text;
use crate::records::{self, Row};
use crate::{select, toolchain};

/// Above this many records the text report is the compact one (one line per kernel × arch)
/// unless `--detailed` is given.
pub(crate) const COMPACT_ABOVE: usize = 40;

/// Runs `cargo launch report`.
pub(crate) fn run(args: &ReportArgs) -> Result<(), Error> {
    let selection = Selection::of(&args.packages)?;
    let arches = cargo::sorted(&args.arch);
    let pins = toolchain::ensure_unless_prebuilt(args.no_setup, args.spills, &selection, &arches)?;
    toolchain::refuse_untargetable(&arches, &pins)?;
    let packages = selection.build(&arches)?;
    for p in &packages {
        for (at, w) in records::unknown_kernel_settings(&p.manifest, &p.config) {
            // `Cargo.toml:LINE:COL`, as the other configuration messages say it.
            let at = at.map(|(line, col)| format!(":{line}:{col}")).unwrap_or_default();
            eprintln!("warning: Cargo.toml{at}: {w}");
        }
    }
    let rows = records::rows(&packages, &arches)?;
    let filter = select::Filter { kernel: args.kernel.clone(), file: args.file.clone() };
    let mut shown: Vec<&Row> = rows
        .iter()
        .filter(|r| {
            let dir = packages.iter().find(|p| p.package == r.id.package).map(|p| p.config.kernel_dir.as_path());
            filter.matches(r, dir)
        })
        .collect();
    if let Some(key) = args.sort {
        select::sort(&mut shown, key);
    }
    if shown.is_empty() && !rows.is_empty() {
        eprintln!("warning: none of the {} records matches {}", rows.len(), filter.describe());
    }
    // Only when asked: the spilling files are compiled again with line info (cached).
    let spills = if args.spills { Some(crate::spills::collect(&packages, shown.iter().copied())?) } else { None };
    let pressure = if args.pressure { Some(crate::pressure::collect(&packages, shown.iter().copied())?) } else { None };
    let mut out = crate::stdout::stdout();
    match args.format {
        Format::Text => {
            let compact = args.summary || (!args.detailed && shown.len() > COMPACT_ABOVE);
            let view = text::View {
                packages: &packages,
                all: &rows,
                shown: &shown,
                arches: &arches,
                filter: &filter,
                spills: spills.as_ref(),
                pressure: pressure.as_ref(),
            };
            if compact {
                text::compact(&mut out, &view)
            } else {
                text::text(&mut out, &view)
            }
        }
        Format::Json => {
            let t = &packages[0].manifest.toolchain;
            let records: Vec<Record> = shown
                .iter()
                .map(|r| {
                    let mut rec = Record::new(r.id.clone(), r.lines.clone(), &r.report);
                    rec.spills_by_line = spills.as_ref().and_then(|s| s.of(r)).cloned();
                    rec.params = r.params.clone();
                    rec.pressure = pressure.as_ref().and_then(|p| p.of(r));
                    rec
                })
                .collect();
            let mut doc = Document::new(t.compilers.clone(), records);
            doc.drivers = packages.iter().flat_map(crate::compat_check::needs).collect();
            serde_json::to_writer_pretty(&mut out, &doc).map_err(std::io::Error::from).and_then(|_| {
                use std::io::Write;
                writeln!(out)
            })
        }
    }
    .context("writing the report")?;
    Ok(())
}
