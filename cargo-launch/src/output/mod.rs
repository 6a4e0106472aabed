//! What the commands write: the report's text, check's findings (text, JSON, SARIF, annotations), SARIF, SVG and the plots drawn with it, and kernel names as every text
//! output prints them (`names`). Each lays out what a command computed; none builds or analyses.

pub(crate) mod check;
pub(crate) mod diff;
pub(crate) mod explore_plot;
pub(crate) mod names;
pub(crate) mod occupancy_plot;
pub(crate) mod sarif;
pub(crate) mod svg;
pub(crate) mod text;
