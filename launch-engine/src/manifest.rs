//! `OUT_DIR/launch/manifest.json`: its types live in [`launch_schema::manifest`], shared with
//! the readers; re-exported here so launch-build's paths stay as they were.

pub use launch_schema::manifest::*;
