#!/usr/bin/env python3
"""Fleet benchmark of the remote kernel cache (issue 21 item 4).

Two modes. `--mode cargo` (the default, bench/fleet_cargo.py): every builder is a real `cargo build`
of a generated crate in its own checkout path with its own CARGO_TARGET_DIR and LAUNCH_CACHE_DIR.
`--mode script`, described below: the build script binary compiled once and run directly.

N builders build the same real kernel folder (the CUDA sources of candle-kernels 0.11.1, configured
as in the book's porting guide) against one S3-compatible server (rclone `serve s3`, the pinned wheel that
tools/test-servers/install.sh installs). Each builder has its own checkout (another path), its own
local cache (LAUNCH_CACHE_DIR) and its own output folder (OUT_DIR). The build script binary is
compiled once (with launch-build's `remote` feature) and run directly, as cargo runs it, with
NUM_JOBS=2, so several builders can run at once without sharing cargo's target-folder lock.

Measured: the first builder's cold time against an empty server, the server's bytes; the next
builders' times and compiled jobs (goal: 0); a fully local hit for comparison; the server killed
mid-build; an entry corrupted on the server; 8 builders at once (their outputs compared byte for
byte with a reference). Usage:

    tools/test-servers/install.sh && cargo launch setup
    python3 bench/fleet.py --json bench/results-fleet-cargo.json              # cargo mode
    python3 bench/fleet.py --mode script --json bench/results-fleet.json     # script mode
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent
KEY, SECRET = "fleet-key", "fleet-secret"
METADATA = """kernels = "src"
arch = ["sm_80", "sm_90"]
exclude = ["moe", "mmq_gguf", "mmvq_gguf.cu"]
flags = ["--expt-relaxed-constexpr", "-std=c++17"]"""


def candle_src():
    for reg in pathlib.Path.home().glob(".cargo/registry/src/*/candle-kernels-0.11.1/src"):
        return reg
    sys.exit("candle-kernels 0.11.1 is not in cargo's registry: run `cargo test -p launch-tests "
             "--test integration candle` once, or `cargo fetch` a crate depending on it")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]



def run_and_kill(f, b, server):
    """Runs builder `b` against `server` and kills the server once the first entry has landed."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        fut = pool.submit(f.run, b, server.url())
        while not server.objects() and not fut.done():
            time.sleep(0.05)
        server.kill()
        return dict(fut.result(), objects_before_kill=len(server.objects()))

class Server:
    def __init__(self, rclone, root):
        self.data = root
        (root / "fleet").mkdir(parents=True)
        self.port = free_port()
        self.proc = subprocess.Popen(
            [str(rclone), "--config", str(root / "none.conf"), "serve", "s3", "--addr",
             f"127.0.0.1:{self.port}", "--auth-key", f"{KEY},{SECRET}", str(root)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(400):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        sys.exit("rclone did not start")

    def url(self):
        return f"s3://fleet/team?endpoint=http://127.0.0.1:{self.port}"

    def objects(self):
        return sorted(p for p in (self.data / "fleet").rglob("*") if p.is_file())

    def bytes(self):
        return sum(p.stat().st_size for p in self.objects())

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class Fleet:
    def __init__(self, args):
        self.args = args
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="launch-fleet-"))
        self.rclone = pathlib.Path(args.rclone)
        self.n = 0
        self.template = self.tmp / "template"
        self.make_crate(self.template)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("LAUNCH_", "CARGO_MAKEFLAGS", "MAKEFLAGS", "MFLAGS", "CUDA_", "AWS_"))}
        env.update({"LAUNCH_TOOLCHAIN": args.toolchain, "AWS_ACCESS_KEY_ID": KEY,
                    "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_EC2_METADATA_DISABLED": "true",
                    "CARGO_TERM_COLOR": "never", "CARGO_TARGET_DIR": args.target_dir})
        self.base_env = env
        # The build script, compiled once; DOCS_RS=1 makes its first run compile no kernel.
        subprocess.run(["cargo", "build", "--manifest-path", str(self.template / "Cargo.toml")],
                       env=dict(env, DOCS_RS="1"), check=True)
        self.script = max((pathlib.Path(args.target_dir) / "debug/build").glob("fleet-candle-*/build-script-build"),
                          key=os.path.getmtime)

    def make_crate(self, d):
        shutil.copytree(candle_src(), d / "src")
        (d / "build.rs").write_text("fn main() { launch_build::build() }\n")
        (d / "lib.rs").write_text("#![allow(missing_docs)]\n\nlaunch::include_kernels!();\n")
        (d / "Cargo.toml").write_text(
            f'[package]\nname = "fleet-candle"\nversion = "0.1.0"\nedition = "2021"\npublish = false\n\n'
            f'[lib]\npath = "lib.rs"\n\n[package.metadata.launch]\n{METADATA}\n\n'
            f'[dependencies]\nlaunch = {{ path = "{REPO}/launch" }}\n\n'
            f'[build-dependencies]\nlaunch-build = {{ path = "{REPO}/launch-build", features = ["remote"] }}\n')

    def builder(self):
        """A new builder: its own checkout path, local cache and output folder."""
        self.n += 1
        b = self.tmp / f"builder-{self.n}"
        shutil.copytree(self.template, b / "checkout", ignore=shutil.ignore_patterns("target"))
        return b

    def run(self, b, url, out_name="out", **extra):
        out = b / out_name
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()
        env = dict(self.base_env, CARGO_MANIFEST_DIR=str(b / "checkout"), OUT_DIR=str(out), NUM_JOBS="2",
                   LAUNCH_CACHE_DIR=str(b / "cache"), CARGO_PKG_NAME="fleet-candle", **extra)
        if url:
            env["LAUNCH_CACHE_REMOTE"] = url
        t = time.monotonic()
        p = subprocess.run([str(self.script)], env=env, cwd=b / "checkout", capture_output=True, text=True)
        dt = time.monotonic() - t
        stats = None
        if (out / "launch/build-stats.json").exists():
            stats = json.loads((out / "launch/build-stats.json").read_text())
        warnings = [l for l in p.stdout.splitlines() if "warning=" in l and "remote kernel cache" in l]
        return {"seconds": round(dt, 2), "exit": p.returncode, "jobs": stats and stats["jobs"],
                "compiled": stats and stats["compiled"], "remote_hits": stats and stats.get("remote_hits"),
                "corrupt": stats and stats["corrupt"], "remote": stats and stats.get("remote"),
                "remote_warnings": warnings, "out": str(out), "stderr_tail": p.stderr[-2000:] if p.returncode else ""}


def digest_outputs(out):
    """SHA-256 of every embedded output (the cubins and PTX the crate compiles in)."""
    h = {}
    for p in sorted(pathlib.Path(out, "launch").rglob("*")):
        if p.is_file() and p.suffix in (".cubin", ".ptx", ".bin") or (p.is_file() and "cubin" in p.name):
            h[str(p.relative_to(out))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return h


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["cargo", "script"], default="cargo")
    ap.add_argument("--copy", choices=["link", "bytes"], default="link",
                    help="cargo mode: how the warm dependencies reach each target folder")
    ap.add_argument("--steps", default="cold,corrupt,eight,killed", help="cargo mode: which scenarios")
    ap.add_argument("--keep", action="store_true", help="cargo mode: keep the temporary folder")
    ap.add_argument("--rclone", default=str(REPO / "target/test-servers/rclone-1.75.2/rclone"))
    ap.add_argument("--toolchain", default=str(pathlib.Path.home() / ".cache/cargo-launch/toolchain/cuda-12.9.86"))
    # Script mode: dependencies (launch-build with `remote`, OpenDAL) compile once into it; the
    # tests' folder already has them.
    ap.add_argument("--target-dir", default=str(REPO / "target/fixtures"))
    ap.add_argument("--warm", type=int, default=3, help="builders after the first, one at a time")
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.mode == "cargo":
        sys.path.insert(0, str(HERE))
        import fleet_cargo
        return fleet_cargo.main(args)
    f = Fleet(args)
    r = {"kernel_folder": "candle-kernels 0.11.1 src/ (the porting guide's configuration), sm_80 + sm_90",
         "machine": f"{os.cpu_count()} CPUs", "num_jobs": 2}

    def save():
        if args.json:
            pathlib.Path(args.json).write_text(json.dumps(r, indent=2) + "\n")

    server = Server(f.rclone, f.tmp / "server")
    first = f.builder()
    r["cold"] = f.run(first, server.url())
    r["server_after_cold"] = {"objects": len(server.objects()), "bytes": server.bytes()}
    save()
    r["warm"] = [f.run(f.builder(), server.url()) for _ in range(args.warm)]
    # A fully local hit, for comparison: the first builder again, its local cache full, a new OUT_DIR.
    r["local_hit"] = f.run(first, server.url(), out_name="out-local")
    save()

    # Corruption: one object on the server damaged; the next builder detects it, compiles that job
    # again and replaces it; the one after compiles nothing.
    victim = server.objects()[len(server.objects()) // 2]
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0x5A
    victim.write_bytes(bytes(data))
    r["corrupt_detected"] = f.run(f.builder(), server.url())
    r["corrupt_replaced_then"] = f.run(f.builder(), server.url())
    save()

    # Eight builders at once against the filled server; outputs compared with the cold builder's.
    reference = digest_outputs(r["cold"]["out"])
    builders = [f.builder() for _ in range(8)]
    t = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        runs = list(pool.map(lambda b: f.run(b, server.url()), builders))
    wall = time.monotonic() - t
    differing = sum(1 for x in runs if digest_outputs(x["out"]) != reference)
    r["eight_at_once"] = {"wall_seconds": round(wall, 2), "runs": runs, "outputs_compared": len(reference),
                          "builders_with_differing_outputs": differing}
    save()

    # The server killed mid-build: a cold builder against a new, empty server, killed once the
    # first entry landed.
    killed = Server(f.rclone, f.tmp / "server-killed")
    r["server_killed_mid_build"] = run_and_kill(f, f.builder(), killed)
    server.kill()
    for key in ("cold", "local_hit", "corrupt_detected", "corrupt_replaced_then", "server_killed_mid_build"):
        r[key].pop("out", None)
    for x in r["warm"] + r["eight_at_once"]["runs"]:
        x.pop("out", None)
    save()
    print(json.dumps(r, indent=2))
    shutil.rmtree(f.tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
