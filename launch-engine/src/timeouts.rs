//! How long a tool may run: the limits the runner applies and the errors name.

use std::time::Duration;

/// The limit of a run whose caller set none, and the default of `LAUNCH_COMPILE_TIMEOUT`: 30
/// minutes, which no real compile (nor a `--version` probe) comes near, so it only ends hangs.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// The limit of a question asked of a tool (`ptxas --version`, Python's site folders): these answer
/// in milliseconds, so a tool still silent after a minute is broken, and discovery says so instead
/// of waiting for [`DEFAULT_TIMEOUT`].
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(60);
