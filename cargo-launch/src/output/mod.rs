//! What the commands write: the report's text, SARIF, SVG and the plots drawn with it. Each
//! renders what a command computed; none builds, reads a manifest or computes a number.

pub(crate) mod explore_plot;
pub(crate) mod occupancy_plot;
pub(crate) mod sarif;
pub(crate) mod svg;
pub(crate) mod text;
