//! `cargo launch occupancy --plot`: the Occupancy Calculator's three graphs (active warps per SM
//! against block size, registers per thread and shared memory per block, the given point marked)
//! as one self-contained SVG: no scripts, no external fonts or styles, so any browser or
//! converter shows the same picture.

use std::fmt::Write as _;

use launch::schema::occupancy::{Point, Sweep, Variable};

use crate::calculator::x as varied;
use crate::words::group;

const WIDTH: f64 = 960.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 80.0;
const TITLE_HEIGHT: f64 = 88.0;
/// Heading, plot area, x labels and gap of one panel.
const PANEL_HEIGHT: f64 = 330.0;
const PLOT_TOP: f64 = 34.0;
const PLOT_HEIGHT: f64 = 220.0;
const LINE: &str = "#1f77b4";
const MARK: &str = "#d62728";

/// One graph, in plot units.
pub struct Panel {
    /// "Impact of varying block size".
    pub heading: String,
    /// The x axis title.
    pub x_label: String,
    /// The varied input (KB for shared memory).
    pub xs: Vec<f64>,
    /// Active warps per SM at each x.
    pub warps: Vec<u32>,
    /// Index of the given configuration.
    pub current: usize,
    /// The given configuration in words, for the heading.
    pub current_text: String,
    /// Right end of the x axis, `None` for the largest x.
    pub x_max: Option<f64>,
    /// Distance between x ticks, `None` for an automatic one.
    pub x_tick: Option<f64>,
    /// Draw markers on the points (few points) instead of a plain step line.
    pub markers: bool,
}

/// The three series as panels.
pub fn panels(series: &[Sweep]) -> Vec<Panel> {
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
pub fn title(arch: &str, inputs: &str, p: &Point) -> [String; 3] {
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
pub fn svg(title: &[String; 3], panels: &[Panel], max_warps: u32) -> String {
    let height = TITLE_HEIGHT + PANEL_HEIGHT * panels.len() as f64;
    let mut s = format!(r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" "#);
    let _ = writeln!(s, r#"viewBox="0 0 {WIDTH} {height}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">"#);
    let _ = writeln!(s, "<title>{}</title>", escape(&title.join(" — ")));
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    text(&mut s, WIDTH / 2.0, 28.0, r#"font-size="18" font-weight="bold" text-anchor="middle""#, &title[0]);
    for (line, y) in title[1..].iter().zip([50.0, 68.0]) {
        text(&mut s, WIDTH / 2.0, y, r#"font-size="13" text-anchor="middle""#, line);
    }
    for (i, panel) in panels.iter().enumerate() {
        draw_panel(&mut s, panel, TITLE_HEIGHT + PANEL_HEIGHT * i as f64, max_warps.max(1));
    }
    s.push_str("</svg>\n");
    s
}

/// `<text x y attrs>content</text>`, the content escaped.
fn text(s: &mut String, x: f64, y: f64, attrs: &str, content: &str) {
    let _ = writeln!(s, r#"<text x="{x:.1}" y="{y:.1}" {attrs}>{}</text>"#, escape(content));
}

/// A line from (x1, y1) to (x2, y2).
fn line(s: &mut String, (x1, y1): (f64, f64), (x2, y2): (f64, f64), attrs: &str) {
    let _ = writeln!(s, r#"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" {attrs}/>"#);
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
        line(s, (LEFT, y(w)), (right, y(w)), r##"stroke="#e0e0e0""##);
        text(s, LEFT - 6.0, y(w) + 4.0, r#"font-size="11" text-anchor="end""#, &w.to_string());
    }
    for pct in [0u32, 25, 50, 75, 100] {
        let yy = bottom - f64::from(pct) / 100.0 * PLOT_HEIGHT;
        text(s, right + 6.0, yy + 4.0, r#"font-size="11""#, &format!("{pct} %"));
    }
    let mid = (top + bottom) / 2.0;
    for (label, xx, angle) in [("active warps per SM", LEFT - 42.0, -90), ("occupancy", right + 52.0, 90)] {
        let rotate = format!(r#"transform="rotate({angle} {xx:.1} {mid:.1})" font-size="12" text-anchor="middle""#);
        text(s, xx, mid, &rotate, label);
    }
    // X ticks and title.
    let step = p.x_tick.unwrap_or_else(|| nice_step(x_max / 8.0));
    let mut v = 0.0;
    while v <= x_max + 1e-9 {
        line(s, (x(v), bottom), (x(v), bottom + 5.0), r##"stroke="#333""##);
        text(s, x(v), bottom + 18.0, r#"font-size="11" text-anchor="middle""#, &v.to_string());
        v += step;
    }
    text(s, LEFT + width / 2.0, bottom + 38.0, r#"font-size="12" text-anchor="middle""#, &p.x_label);
    let frame = r##"fill="none" stroke="#333""##;
    let _ = writeln!(s, r#"<rect x="{LEFT}" y="{top:.1}" width="{width}" height="{PLOT_HEIGHT}" {frame}/>"#);

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

/// 1, 2 or 5 times a power of ten, at least `raw`.
fn nice_step(raw: f64) -> f64 {
    let magnitude = 10f64.powf(raw.max(1e-9).log10().floor());
    [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * magnitude).find(|step| *step >= raw).unwrap_or(10.0 * magnitude)
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_one_two_five() {
        assert_eq!(nice_step(28.4), 50.0);
        assert_eq!(nice_step(12.0), 20.0);
        assert_eq!(nice_step(5.0), 5.0);
        assert_eq!(nice_step(0.3), 0.5);
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(escape("a < b & \"c\" > d"), "a &lt; b &amp; &quot;c&quot; &gt; d");
    }
}
