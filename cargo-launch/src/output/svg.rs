//! The SVG pieces both plots draw with (`occupancy --plot`, `explore --plot`): the document's
//! frame and title, text, lines, the percent axis, round tick steps, and writing the file. The
//! output is self-contained (no scripts, no external fonts or styles), so any browser or converter
//! shows the same picture.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context;

use crate::error::Error;

/// The page width; both plots use the same margins so their panels line up.
pub(crate) const WIDTH: f64 = 960.0;
/// Left margin: the left axis's tick labels and title.
pub(crate) const LEFT: f64 = 80.0;
/// Right margin: the percent axis's labels and title.
pub(crate) const RIGHT: f64 = 80.0;
/// The title block's height (three lines).
pub(crate) const TITLE_HEIGHT: f64 = 88.0;
/// Data line colour (the first series).
pub(crate) const LINE: &str = "#1f77b4";
/// The given point, the current build, the cliff.
pub(crate) const MARK: &str = "#d62728";
/// Grid lines.
pub(crate) const GRID: &str = r##"stroke="#e0e0e0""##;
/// A plot area's frame.
pub(crate) const FRAME: &str = r##"fill="none" stroke="#333""##;

/// The opening of a `height` high document with `title` (three lines: what, the inputs, the
/// result) as its `<title>` and heading, on a white background. End it with [`close`].
pub(crate) fn open(height: f64, title: &[String; 3]) -> String {
    let mut s = format!(r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" "#);
    let _ = writeln!(s, r#"viewBox="0 0 {WIDTH} {height}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">"#);
    let _ = writeln!(s, "<title>{}</title>", escape(&title.join(" — ")));
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    text(&mut s, WIDTH / 2.0, 28.0, r#"font-size="18" font-weight="bold" text-anchor="middle""#, &title[0]);
    for (line, y) in title[1..].iter().zip([50.0, 68.0]) {
        text(&mut s, WIDTH / 2.0, y, r#"font-size="13" text-anchor="middle""#, line);
    }
    s
}

/// Ends a document begun with [`open`].
pub(crate) fn close(mut s: String) -> String {
    s.push_str("</svg>\n");
    s
}

/// `<text x y attrs>content</text>`, the content escaped.
pub(crate) fn text(s: &mut String, x: f64, y: f64, attrs: &str, content: &str) {
    let _ = writeln!(s, r#"<text x="{x:.1}" y="{y:.1}" {attrs}>{}</text>"#, escape(content));
}

/// A line from (x1, y1) to (x2, y2).
pub(crate) fn line(s: &mut String, (x1, y1): (f64, f64), (x2, y2): (f64, f64), attrs: &str) {
    let _ = writeln!(s, r#"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" {attrs}/>"#);
}

/// The frame of the plot area from `top` to `bottom`, the page's margins left and right.
pub(crate) fn frame(s: &mut String, top: f64, bottom: f64) {
    let width = WIDTH - LEFT - RIGHT;
    let _ = writeln!(s, r#"<rect x="{LEFT}" y="{top:.1}" width="{width}" height="{:.1}" {FRAME}/>"#, bottom - top);
}

/// An axis title, rotated (-90: the left axis, 90: the right one), centred at (x, y).
pub(crate) fn axis_title(s: &mut String, x: f64, y: f64, angle: i32, label: &str) {
    let rotate = format!(r#"transform="rotate({angle} {x:.1} {y:.1})" font-size="12" text-anchor="middle""#);
    text(s, x, y, &rotate, label);
}

/// The right axis: occupancy from 0 % at `bottom` to 100 % at `top`, with its title.
pub(crate) fn percent_axis(s: &mut String, top: f64, bottom: f64) {
    let right = WIDTH - RIGHT;
    for pct in [0u32, 25, 50, 75, 100] {
        let y = bottom - f64::from(pct) / 100.0 * (bottom - top);
        text(s, right + 6.0, y + 4.0, r#"font-size="11""#, &format!("{pct} %"));
    }
    axis_title(s, right + 52.0, (top + bottom) / 2.0, 90, "occupancy");
}

/// A tick on the x axis at `x` below `bottom`, labelled.
pub(crate) fn x_tick(s: &mut String, x: f64, bottom: f64, label: &str) {
    line(s, (x, bottom), (x, bottom + 5.0), r##"stroke="#333""##);
    text(s, x, bottom + 18.0, r#"font-size="11" text-anchor="middle""#, label);
}

/// 1, 2 or 5 times a power of ten, at least `raw`.
pub(crate) fn nice_step(raw: f64) -> f64 {
    let magnitude = 10f64.powf(raw.max(1e-9).log10().floor());
    [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * magnitude).find(|step| *step >= raw).unwrap_or(10.0 * magnitude)
}

/// `text` with XML's special characters escaped.
pub(crate) fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Refuses a plot path whose folder does not exist (a typo in it is an error, not a new folder
/// tree), that names something other than a file (a folder, a link, a FIFO), or whose folder
/// takes no new files (`/proc`): a usage error (exit 2). Called before the work that the plot
/// draws, so a bad path fails fast.
pub(crate) fn check_destination(path: &Path) -> Result<(), Error> {
    crate::destination::file(path, &format!("writing the plot to {}", path.display()))
}

/// Writes `svg` to `path` and says so on stderr (stdout stays the command's output).
pub(crate) fn write_file(path: &Path, svg: &str) -> Result<(), Error> {
    check_destination(path)?;
    // Written aside and renamed into place: a reader never sees half a picture, a failure
    // leaves any previous file, and a FIFO, link or device at `path` is refused.
    launch_engine::tooling::write_if_changed(path, svg.as_bytes())
        .with_context(|| format!("writing the plot to {}", path.display()))?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
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

    /// Whether `svg` is well-formed XML as far as the plots need: every element closed in order
    /// (or self-closed), attributes quoted, no stray `<`, `>` or `&` in text. The workspace has
    /// no XML parser; this is the subset the plots write (no comments, CDATA or doctype).
    pub(crate) fn well_formed(svg: &str) -> Result<(), String> {
        let mut open: Vec<&str> = Vec::new();
        let mut rest = svg.trim_end();
        while let Some(at) = rest.find('<') {
            check_text(&rest[..at])?;
            let end = rest[at..].find('>').ok_or("a tag is not closed")? + at;
            let tag = &rest[at + 1..end];
            if let Some(name) = tag.strip_prefix('/') {
                match open.pop() {
                    Some(o) if o == name => {}
                    other => return Err(format!("</{name}> closes {other:?}")),
                }
            } else {
                let (name, attrs) = tag.split_once(char::is_whitespace).unwrap_or((tag.trim_end_matches('/'), ""));
                check_attributes(name, attrs.trim_end_matches('/'))?;
                if !tag.ends_with('/') {
                    open.push(name);
                }
            }
            rest = &rest[end + 1..];
            if open.is_empty() {
                return if rest.trim().is_empty() { Ok(()) } else { Err("text after the root element".into()) };
            }
        }
        Err(format!("unclosed: {open:?}"))
    }

    fn check_text(text: &str) -> Result<(), String> {
        let bad = text.contains('>')
            || text
                .match_indices('&')
                .any(|(i, _)| !["&amp;", "&lt;", "&gt;", "&quot;"].iter().any(|e| text[i..].starts_with(e)));
        if bad {
            Err(format!("unescaped text: {text}"))
        } else {
            Ok(())
        }
    }

    fn check_attributes(name: &str, mut attrs: &str) -> Result<(), String> {
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == ':') {
            return Err(format!("bad element name `{name}`"));
        }
        loop {
            attrs = attrs.trim_start();
            if attrs.is_empty() {
                return Ok(());
            }
            let (key, value) = attrs.split_once("=\"").ok_or_else(|| format!("<{name}>: unquoted `{attrs}`"))?;
            if key.is_empty() || key.contains(char::is_whitespace) {
                return Err(format!("<{name}>: bad attribute `{key}`"));
            }
            let close = value.find('"').ok_or_else(|| format!("<{name}>: unterminated {key}"))?;
            check_text(&value[..close])?;
            attrs = &value[close + 1..];
        }
    }

    #[test]
    fn the_checker_tells_well_formed_from_broken() {
        assert_eq!(well_formed(r#"<svg a="1"><g><text x="1">a &amp; b</text><line/></g></svg>"#), Ok(()));
        for bad in [
            "<svg><g></svg>",
            "<svg><g></g>",
            r#"<svg a=1></svg>"#,
            "<svg>a & b</svg>",
            "<svg></svg><svg></svg>",
            r#"<svg a="x></svg>"#,
        ] {
            assert!(well_formed(bad).is_err(), "{bad}");
        }
    }
}
