//! `cargo launch occupancy --plot`: the Occupancy Calculator's three graphs (active warps per SM
//! against block size, registers per thread and shared memory per block, the given point marked)
//! as one self-contained SVG, drawn with the shared pieces of `svg`.

use std::fmt::Write as _;

use launch_schema::occupancy::{Point, Sweep, Variable};

use super::svg::{self, axis_title, line, text, LEFT, LINE, MARK, RIGHT, TITLE_HEIGHT, WIDTH};
use crate::calculator::x as varied;
use crate::words::group;

/// Heading, plot area, x labels and gap of one panel.
const PANEL_HEIGHT: f64 = 330.0;
const PLOT_TOP: f64 = 34.0;
const PLOT_HEIGHT: f64 = 220.0;

/// One graph, in plot units.
pub(crate) struct Panel {
    /// "Impact of varying block size".
    pub(crate) heading: String,
    /// The x axis title.
    pub(crate) x_label: String,
    /// The varied input (KB for shared memory).
    pub(crate) xs: Vec<f64>,
    /// Active warps per SM at each x.
    pub(crate) warps: Vec<u32>,
    /// Index of the given configuration.
    pub(crate) current: usize,
    /// The given configuration in words, for the heading.
    pub(crate) current_text: String,
    /// Right end of the x axis, `None` for the largest x.
    pub(crate) x_max: Option<f64>,
    /// Distance between x ticks, `None` for an automatic one.
    pub(crate) x_tick: Option<f64>,
    /// Draw markers on the points (few points) instead of a plain step line.
    pub(crate) markers: bool,
}

/// The three series as panels.
pub(crate) fn panels(series: &[Sweep]) -> Vec<Panel> {
    series
        .iter()
        .map(|s| {
            // Registers end at 255; an axis to 256 gives round ticks.
            let (heading, x_label, scale, x_max, x_tick, markers) = match s.sweep {
                Variable::Threads => {
                    ("Impact of varying block size", "threads per block", 1.0, None, Some(128.0), true)
                }
                Variable::Registers => (
                    "Impact of varying register count per thread",
                    "registers per thread",
                    1.0,
                    Some(256.0),
                    Some(32.0),
                    false,
                ),
                Variable::Smem => (
                    "Impact of varying shared memory usage per block",
                    "shared memory per block (KB, static + dynamic)",
                    1024.0,
                    None,
                    None,
                    false,
                ),
            };
            let p = &s.points[s.current];
            let unit = match s.sweep {
                Variable::Threads => "threads",
                Variable::Registers => "registers",
                Variable::Smem => "B",
            };
            Panel {
                heading: heading.to_string(),
                x_label: x_label.to_string(),
                xs: s.points.iter().map(|p| f64::from(varied(s.sweep, p)) / scale).collect(),
                warps: s.points.iter().map(|p| p.active_warps).collect(),
                current: s.current,
                x_max,
                current_text: format!(
                    "{} {unit}: {} warps ({:.1} %)",
                    group(varied(s.sweep, p)),
                    p.active_warps,
                    p.percent
                ),
                x_tick,
                markers,
            }
        })
        .collect()
}

/// The three title lines: what, the inputs, the result.
pub(crate) fn title(arch: &str, inputs: &str, p: &Point) -> [String; 3] {
    let limited = if p.limiters.is_empty() { String::new() } else { format!(", limited by {}", p.limiters) };
    let blocks = format!("{} block{}/SM", p.active_blocks, if p.active_blocks == 1 { "" } else { "s" });
    let warps = format!("{} of {} warps per SM", p.active_warps, p.max_warps);
    [
        format!("Occupancy on {arch}"),
        inputs.to_string(),
        format!("{blocks}, {warps}: {:.1} % occupancy{limited}", p.percent),
    ]
}

/// The SVG document: a three-line title (what, inputs, result), then the panels stacked, each
/// with active warps per SM on the left axis and occupancy in percent on the right (the same
/// scale: `max_warps` = 100 %).
pub(crate) fn svg(title: &[String; 3], panels: &[Panel], max_warps: u32) -> String {
    let height = TITLE_HEIGHT + PANEL_HEIGHT * panels.len() as f64;
    let mut s = svg::open(height, title);
    for (i, panel) in panels.iter().enumerate() {
        draw_panel(&mut s, panel, TITLE_HEIGHT + PANEL_HEIGHT * i as f64, max_warps.max(1));
    }
    svg::close(s)
}

fn draw_panel(s: &mut String, p: &Panel, y0: f64, max_warps: u32) {
    let (width, right) = (WIDTH - LEFT - RIGHT, WIDTH - RIGHT);
    let (top, bottom) = (y0 + PLOT_TOP, y0 + PLOT_TOP + PLOT_HEIGHT);
    let x_max = p.x_max.unwrap_or_else(|| p.xs.iter().copied().fold(1.0, f64::max));
    let x = |v: f64| LEFT + v / x_max * width;
    let y = |w: u32| bottom - f64::from(w) / f64::from(max_warps) * PLOT_HEIGHT;

    let _ = writeln!(s, r#"<g class="plot">"#);
    text(s, LEFT, y0 + 20.0, r#"font-size="14" font-weight="bold""#, &p.heading);
    let current_attrs = format!(r#"font-size="13" fill="{MARK}" text-anchor="end""#);
    text(s, right, y0 + 20.0, &current_attrs, &format!("● current: {}", p.current_text));
    // Horizontal grid, warps on the left axis, percent on the right one.
    let y_tick = if max_warps >= 32 { 8 } else { 4 };
    for w in (0..=max_warps).step_by(y_tick) {
        line(s, (LEFT, y(w)), (right, y(w)), svg::GRID);
        text(s, LEFT - 6.0, y(w) + 4.0, r#"font-size="11" text-anchor="end""#, &w.to_string());
    }
    svg::percent_axis(s, top, bottom);
    axis_title(s, LEFT - 42.0, (top + bottom) / 2.0, -90, "active warps per SM");
    // X ticks and title.
    let step = p.x_tick.unwrap_or_else(|| svg::nice_step(x_max / 8.0));
    let mut v = 0.0;
    while v <= x_max + 1e-9 {
        svg::x_tick(s, x(v), bottom, &v.to_string());
        v += step;
    }
    text(s, LEFT + width / 2.0, bottom + 38.0, r#"font-size="12" text-anchor="middle""#, &p.x_label);
    svg::frame(s, top, bottom);

    // The data: a step line (the value holds until the next point), or a line with markers.
    let mut path = String::new();
    for (i, (&xv, &w)) in p.xs.iter().zip(&p.warps).enumerate() {
        let _ = match (i, p.markers) {
            (0, _) => write!(path, "M{:.1},{:.1}", x(xv), y(w)),
            (_, true) => write!(path, " L{:.1},{:.1}", x(xv), y(w)),
            (_, false) => write!(path, " H{:.1} V{:.1}", x(xv), y(w)),
        };
    }
    let _ = writeln!(s, r#"<path d="{path}" fill="none" stroke="{LINE}" stroke-width="2"/>"#);
    if p.markers {
        for (&xv, &w) in p.xs.iter().zip(&p.warps) {
            let _ = writeln!(s, r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{LINE}"/>"#, x(xv), y(w));
        }
    }
    // The given configuration.
    if let (Some(&xv), Some(&w)) = (p.xs.get(p.current), p.warps.get(p.current)) {
        let (cx, cy) = (x(xv), y(w));
        line(s, (cx, bottom), (cx, top), &format!(r#"stroke="{MARK}" stroke-dasharray="4,3""#));
        let dot = format!(r#"r="6" fill="{MARK}" stroke="white" stroke-width="1.5""#);
        let _ = writeln!(s, r#"<circle class="current" cx="{cx:.1}" cy="{cy:.1}" {dot}/>"#);
    }
    let _ = writeln!(s, "</g>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::svg::tests::well_formed;

    #[test]
    fn the_occupancy_plot_is_well_formed() {
        let panel = Panel {
            heading: "Impact of varying block size".into(),
            x_label: "threads per block".into(),
            xs: vec![32.0, 64.0, 128.0],
            warps: vec![8, 16, 32],
            current: 1,
            current_text: "64 threads: 16 warps (25.0 %)".into(),
            x_max: None,
            x_tick: Some(32.0),
            markers: true,
        };
        let title = ["Occupancy on sm_90".to_string(), "a < b & c".into(), "x".into()];
        let svg = svg(&title, &[panel], 64);
        assert_eq!(well_formed(&svg), Ok(()));
        assert!(svg.contains("a &lt; b &amp; c"));
        assert_eq!(svg.matches(r#"<g class="plot">"#).count(), 1);
    }
}
