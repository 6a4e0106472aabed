#!/usr/bin/env bash
# Installs the pinned mdbook that builds the book (docs/) and that tests/docs/book.rs runs, from
# its crates.io source with the lock file it was published with (cargo install --locked), built
# with the `search` feature only: no `serve`/`watch`, whose web server and file watcher CI does
# not need (fewer crates to build). Idempotent: an install that is present is kept. The build goes
# to a temporary folder that is renamed into place, so an interrupted install leaves nothing half
# written where the tests look.
#
#   tools/docs/install-mdbook.sh      prints the binary's path on stdout (cargo's output: stderr)
#
# Where: <cache>/tools/mdbook-<version>/bin/mdbook, <cache> as for the toolchains
# (LAUNCH_CACHE_DIR, else $XDG_CACHE_HOME/cargo-launch, else ~/.cache/cargo-launch). The tests
# take $LAUNCH_MDBOOK, else that path; without it they skip the book build with the reason, and
# LAUNCH_TEST_REQUIRE_MDBOOK=1 (set by .ci/run) makes that a failure.
set -euo pipefail
version=0.5.4
if [ -n "${LAUNCH_CACHE_DIR:-}" ]; then
    cache="$LAUNCH_CACHE_DIR"
elif [ -n "${XDG_CACHE_HOME:-}" ]; then
    cache="$XDG_CACHE_HOME/cargo-launch"
else
    cache="$HOME/.cache/cargo-launch"
fi
dest="$cache/tools/mdbook-$version"
bin="$dest/bin/mdbook"
if [ -x "$bin" ]; then
    echo "$bin"
    exit 0
fi
mkdir -p "$cache/tools"
tmp="$(mktemp -d "$cache/tools/.mdbook-$version.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
# A target folder of its own, inside the temporary one: never the caller's CARGO_TARGET_DIR.
CARGO_TARGET_DIR="$tmp/target" cargo install --locked --version "$version" --no-default-features \
    --features search --root "$tmp/root" mdbook >&2
"$tmp/root/bin/mdbook" --version | grep -qx "mdbook v$version" || {
    echo "installed mdbook is not $version: $("$tmp/root/bin/mdbook" --version)" >&2
    exit 1
}
rm -f "$tmp/root/.crates.toml" "$tmp/root/.crates2.json"
# Another install may have finished meanwhile: keep the first one.
mv -T "$tmp/root" "$dest" 2>/dev/null || [ -x "$bin" ]
echo "$bin"
