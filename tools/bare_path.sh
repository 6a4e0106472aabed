#!/bin/sh
# Sourced by the prebuilt scripts (bench/prebuilt.sh, tools/gpu/prebuilt.sh) after setting
# `bare_bin` (POSIX `.` takes no arguments): fills that folder with links to every program of
# /usr/bin and /bin but Python's, and sets `bare_path` to that folder followed by cargo's own: a
# PATH with no python3 on it (checked), for builds that must need none.
mkdir -p "$bare_bin"
for f in /usr/bin/* /bin/*; do
  name=$(basename "$f")
  case "$name" in python*) continue ;; esac
  [ -e "$bare_bin/$name" ] || ln -s "$f" "$bare_bin/$name"
done
bare_path="$bare_bin:$(dirname "$(rustup which cargo 2>/dev/null || command -v cargo)")"
if PATH="$bare_path" command -v python3 >/dev/null; then echo "python3 is on the bare PATH" >&2; exit 1; fi
