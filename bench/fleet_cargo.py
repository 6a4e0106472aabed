"""The fleet benchmark's `cargo` mode (the default of bench/fleet.py): every builder is a real
`cargo build` of a real crate in its own checkout path, with its own `CARGO_TARGET_DIR` and its own
`LAUNCH_CACHE_DIR`, against one rclone S3 server.

The crate is generated: its kernels are the CUDA sources of candle-kernels 0.11.1 (configured as
in the README), it depends on `launch` and on `launch-build` with its `remote` feature by path.

What the builders share, and why it does not touch the kernel-cache result:

* CARGO_HOME (the registry's sources): read-only input to cargo.
* The compiled Rust dependencies (launch, launch-build with `remote`, OpenDAL and its ~190 crates):
  built once into a warm target folder from a dependency-only crate, then copied into each
  builder's own target folder as hard links (`--copy link`, default) or bytes (`--copy bytes`).
  cargo finds them fresh and never rewrites them (checked: no file of the warm folder changes
  during the run); the warm folder holds nothing of the kernel crate (the dependency-only crate's
  own files are removed from it), so each builder compiles the kernel crate itself (its build.rs,
  the build script's run, which does all the kernel work, and its lib). The kernel cache lives in LAUNCH_CACHE_DIR and on the
  server, never in the target folder, so sharing compiled Rust code changes no kernel-cache
  lookup. Without it each target folder would first compile OpenDAL (126 CPU-seconds), 8 of them
  at once on 2 CPUs.
"""

import concurrent.futures
import json
import os
import pathlib
import shutil
import subprocess
import tempfile
import time

import fleet

CARGO_TOML = """[package]
name = "{name}"
version = "0.1.0"
edition = "2021"
publish = false

[lib]
path = "lib.rs"

[package.metadata.launch]
{metadata}

[dependencies]
launch = {{ path = "{repo}/launch" }}

[build-dependencies]
launch-build = {{ path = "{repo}/launch-build", features = ["remote"] }}
"""


def load():
    """`uptime`'s load averages and the CPU count, as recorded in the JSON."""
    up = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    nproc = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    return {"nproc": int(nproc), "uptime": up, "loadavg": open("/proc/loadavg").read().split()[:3],
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def unit_times(target):
    """Seconds per unit of the kernel crate from cargo's `--timings` report: compiling build.rs,
    running the build script, compiling the lib."""
    html = (target / "cargo-timings/cargo-timing.html").read_text()
    at = html.index("const UNIT_DATA = ") + len("const UNIT_DATA = ")
    units, _ = json.JSONDecoder().raw_decode(html[at:])
    out = {}
    for u in units:
        if u["name"] != "fleet-candle":
            continue
        key = {"run-custom-build": "build_script_run_s"}.get(u["mode"]) or (
            "build_rs_compile_s" if "build-script" in u["target"] else "lib_compile_s")
        out[key] = u["duration"]
    return out


def newest_mtime(folder):
    return max((p.stat().st_mtime for p in pathlib.Path(folder).rglob("*") if p.is_file()), default=0)


class CargoFleet:
    def __init__(self, args):
        self.args = args
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="launch-fleet-cargo-"))
        self.rclone = pathlib.Path(args.rclone)
        self.n = 0
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("LAUNCH_", "CARGO_MAKEFLAGS", "MAKEFLAGS", "MFLAGS", "CUDA_", "AWS_",
                                    "CARGO_TARGET_DIR", "RUSTFLAGS", "DOCS_RS"))}
        env.update({"LAUNCH_TOOLCHAIN": args.toolchain, "AWS_ACCESS_KEY_ID": fleet.KEY,
                    "AWS_SECRET_ACCESS_KEY": fleet.SECRET, "AWS_EC2_METADATA_DISABLED": "true",
                    "CARGO_TERM_COLOR": "never"})
        self.base_env = env
        self.template = self.tmp / "template"
        self.write_crate(self.template, "fleet-candle", kernels=True)
        self.warm = self.tmp / "warm-target"
        self.build_warm_target()

    def write_crate(self, d, name, kernels):
        d.mkdir(parents=True)
        if kernels:
            shutil.copytree(fleet.candle_src(), d / "src")
            (d / "build.rs").write_text("fn main() { launch_build::build() }\n")
            (d / "lib.rs").write_text("#![allow(missing_docs)]\n\nlaunch::include_kernels!();\n")
        else:
            (d / "build.rs").write_text("fn main() {}\n")
            (d / "lib.rs").write_text("")
        metadata = fleet.METADATA if kernels else "# no kernels: build.rs does not run launch-build"
        (d / "Cargo.toml").write_text(CARGO_TOML.format(name=name, metadata=metadata, repo=fleet.REPO))
        # The workspace's lock file: every builder resolves the same dependency versions, offline.
        shutil.copy(fleet.REPO / "Cargo.lock", d / "Cargo.lock")

    def build_warm_target(self):
        """The Rust dependencies, compiled once (a crate with the same dependencies, no kernels)."""
        deps = self.tmp / "deps-only"
        self.write_crate(deps, "fleet-deps", kernels=False)
        t = time.monotonic()
        subprocess.run(["cargo", "build", "--manifest-path", str(deps / "Cargo.toml")],
                       env=dict(self.base_env, CARGO_TARGET_DIR=str(self.warm)), check=True)
        self.warm_seconds = round(time.monotonic() - t, 1)
        # Only the dependencies stay: nothing of the dependency-only crate itself.
        for p in sorted(set(self.warm.glob("debug/**/*fleet_deps*")) | set(self.warm.glob("debug/**/fleet-deps*"))):
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            elif p.exists():
                p.unlink()
        self.warm_mtime = newest_mtime(self.warm)

    def builder(self):
        """A new builder: its own checkout path, target folder and local cache."""
        self.n += 1
        b = self.tmp / f"builder-{self.n}"
        shutil.copytree(self.template, b / "checkout")
        if self.args.copy == "link":
            subprocess.run(["cp", "-al", str(self.warm), str(b / "target")], check=True)
            # cargo's lock on the folder and rustc's version cache are per folder, never shared.
            for f in ("debug/.cargo-lock", ".rustc_info.json"):
                (b / "target" / f).unlink(missing_ok=True)
        else:
            shutil.copytree(self.warm, b / "target", symlinks=True)
        return b

    def run(self, b, url, cache=None):
        cache = cache or b / "cache"
        env = dict(self.base_env, CARGO_TARGET_DIR=str(b / "target"), LAUNCH_CACHE_DIR=str(cache))
        if url:
            env["LAUNCH_CACHE_REMOTE"] = url
        t = time.monotonic()
        p = subprocess.run(["cargo", "build", "--timings", "--message-format=json-render-diagnostics"],
                           env=env, cwd=b / "checkout", capture_output=True, text=True)
        dt = time.monotonic() - t
        out_dir = None
        for line in p.stdout.splitlines():
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if msg.get("reason") == "build-script-executed" and "fleet-candle" in msg.get("package_id", ""):
                out_dir = msg["out_dir"]
        stats = None
        if out_dir and pathlib.Path(out_dir, "launch/build-stats.json").exists():
            stats = json.loads(pathlib.Path(out_dir, "launch/build-stats.json").read_text())
        warnings = [l for l in p.stderr.splitlines() if l.startswith("warning:") and "remote kernel cache" in l]
        r = {"cargo_seconds": round(dt, 2), "exit": p.returncode}
        if p.returncode == 0:
            r.update(unit_times(b / "target"))
        if stats:
            r.update({"compile_step_seconds": round(stats["wall_ms"] / 1000, 2), "jobs": stats["jobs"],
                      "compiled": stats["compiled"], "local_hits": stats["cached"] - stats.get("remote_hits", 0),
                      "remote_hits": stats.get("remote_hits"), "corrupt": stats["corrupt"],
                      "remote": stats.get("remote")})
        r.update({"remote_warnings": warnings, "checkout": str(b / "checkout"), "out": out_dir,
                  "stderr_tail": p.stderr[-2000:] if p.returncode else ""})
        return r

    def done_with(self, b):
        """Frees a builder's target folder (disk); its statistics are already read."""
        shutil.rmtree(b / "target", ignore_errors=True)


def cold_warm_local(f, server, r, save):
    first = f.builder()
    r["cold"] = f.run(first, server.url())
    r["server_after_cold"] = {"objects": len(server.objects()), "bytes": server.bytes()}
    r["reference_outputs"] = fleet.digest_outputs(r["cold"]["out"])
    f.done_with(first)
    save()
    r["warm"] = []
    for _ in range(f.args.warm):
        b = f.builder()
        r["warm"].append(f.run(b, server.url()))
        f.done_with(b)
        save()
    # A fully local hit, for comparison: a new checkout and target folder, the first builder's
    # (full) local cache, no remote.
    b = f.builder()
    r["local_hit"] = f.run(b, None, cache=first / "cache")
    f.done_with(b)
    save()


def corrupt(f, server, r, save):
    victim = server.objects()[len(server.objects()) // 2]
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0x5A
    victim.write_bytes(bytes(data))
    r["corrupted_object"] = str(victim.relative_to(server.data))
    for key in ("corrupt_detected", "corrupt_replaced_then"):
        b = f.builder()
        r[key] = f.run(b, server.url())
        f.done_with(b)
        save()


def eight_at_once(f, server, r, save):
    builders = [f.builder() for _ in range(8)]
    t = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        runs = list(pool.map(lambda b: f.run(b, server.url()), builders))
    wall = time.monotonic() - t
    reference = r["reference_outputs"]
    differing = sum(1 for x in runs if x["out"] is None or fleet.digest_outputs(x["out"]) != reference)
    for b in builders:
        f.done_with(b)
    r["eight_at_once"] = {"wall_seconds": round(wall, 2), "runs": runs, "outputs_compared": len(reference),
                          "builders_with_differing_outputs": differing}
    save()


def killed(f, r):
    server = fleet.Server(f.rclone, f.tmp / "server-killed")
    b = f.builder()
    r["server_killed_mid_build"] = fleet.run_and_kill(f, b, server)
    f.done_with(b)


def main(args):
    r = {"mode": "cargo: one real `cargo build` per builder, own checkout path, CARGO_TARGET_DIR and "
                 "LAUNCH_CACHE_DIR; shared: CARGO_HOME and the compiled Rust dependencies (hard-linked "
                 "copies of one warm target folder)",
         "kernel_folder": "candle-kernels 0.11.1 src/ (README configuration), sm_80 + sm_90",
         "load_at_start": load(), "cargo_jobs": "cargo's default (-j = nproc)"}

    def save():
        if args.json:
            pathlib.Path(args.json).write_text(json.dumps(r, indent=2) + "\n")

    f = CargoFleet(args)
    r["warm_target_build_seconds"] = f.warm_seconds
    r["warm_target_copy"] = args.copy
    server = fleet.Server(f.rclone, f.tmp / "server")
    steps = {"cold": lambda: cold_warm_local(f, server, r, save), "corrupt": lambda: corrupt(f, server, r, save),
             "eight": lambda: eight_at_once(f, server, r, save), "killed": lambda: killed(f, r)}
    for name in args.steps.split(","):
        steps[name]()
        save()
    server.kill()
    r["warm_target_unchanged"] = newest_mtime(f.warm) == f.warm_mtime
    r["load_at_end"] = load()
    for x in [r.get(k) for k in ("cold", "local_hit", "corrupt_detected", "corrupt_replaced_then",
                                 "server_killed_mid_build")] + r.get("warm", []) + \
            r.get("eight_at_once", {}).get("runs", []):
        if x:
            x.pop("out", None)
    r.pop("reference_outputs", None)
    save()
    print(json.dumps(r, indent=2))
    if not args.keep:
        shutil.rmtree(f.tmp, ignore_errors=True)
