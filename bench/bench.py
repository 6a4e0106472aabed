#!/usr/bin/env python3
"""Build-time benchmark of launch-build's cache and jobserver parallelism (issue 7).

Generates a crate of 24 kernels x 3 arches (bench/gen_crate.py) in a temporary folder, with path
dependencies on this repository, and measures with real `cargo build`s:

  (a) cold build (empty kernel cache, crate cleaned, dependencies already compiled) against the
      physical limit: the sum of the raw NVRTC + ptxas times of the same 72 jobs, measured one at
      a time (`cargo build -j1`, LAUNCH_NO_CACHE=1), divided by the jobserver tokens (-j, default
      the number of CPUs);
  (b) no-op rebuild, and a rebuild after touching every kernel and header (script reruns);
  (c) one kernel edited; (d) one group header (8 kernels) and the common header (all) edited;
  (e) `cargo launch report` on a fresh crate against `cargo build` of the same fresh crate, and
      what `cargo launch report` adds after a `cargo build`;
  (f) peak resident memory of the build script (`/usr/bin/time -v`, which includes its ptxas
      children, and VmHWM from build-stats.json) for 6, 24 and 48 kernels.

Every figure is a median over --runs runs (min and max alongside). Numbers of compiled jobs come
from OUT_DIR/launch/build-stats.json. Usage:

    bash bench/run.sh [--runs 5] [--toolchain DIR] [--json bench/results.json]
"""
import argparse
import glob
import json
import os
import pathlib
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent
NAME = "bench-kernels"


def busy_cpu_s():
    """CPU seconds the whole machine has spent busy (all CPUs), from /proc/stat."""
    f = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    idle = f[3] + f[4]
    return (sum(f[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def children_cpu_s():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


# CPU seconds used by processes other than the benchmark's own during the last command.
OTHERS = []


def sh(cmd, env, cwd=None, check=True):
    busy, mine = busy_cpu_s(), children_cpu_s()
    t = time.perf_counter()
    p = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    dt = time.perf_counter() - t
    OTHERS.append(max(0.0, (busy_cpu_s() - busy) - (children_cpu_s() - mine)))
    if check and p.returncode != 0:
        sys.exit(f"`{' '.join(map(str, cmd))}` failed ({p.returncode}):\n{p.stderr[-4000:]}")
    return dt, p


def summary(xs):
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "n": len(xs)}


def fmt(s, unit="s", scale=1.0):
    return f"{s['median'] * scale:.2f} {unit} (min {s['min'] * scale:.2f}, max {s['max'] * scale:.2f})"


class Bench:
    def __init__(self, args):
        self.args = args
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="launch-bench-"))
        self.crate = self.tmp / "crate"
        self.target = self.tmp / "target"
        self.cache_n = 0
        subprocess.run(
            [sys.executable, str(HERE / "gen_crate.py"), str(self.crate), "--kernels", str(args.kernels),
             "--repo", str(REPO)],
            check=True,
        )
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("LAUNCH_", "CARGO_MAKEFLAGS", "MAKEFLAGS", "MFLAGS", "CUDA_"))}
        env["CARGO_TARGET_DIR"] = str(self.target)
        env["CARGO_TERM_COLOR"] = "never"
        env["LAUNCH_TOOLCHAIN"] = args.toolchain
        self.base_env = env
        self.cargo_launch = REPO / "target" / "debug" / "cargo-launch"

    def env(self, fresh_cache=False, **extra):
        if fresh_cache:
            self.cache_n += 1
        e = dict(self.base_env)
        e["LAUNCH_CACHE_DIR"] = str(self.tmp / f"cache-{self.cache_n}")
        e.update(extra)
        return e

    def cargo(self, *a, env):
        return sh(["cargo", *a, "--manifest-path", str(self.crate / "Cargo.toml")], env)

    def clean(self):
        self.cargo("clean", "-p", NAME, env=self.env())

    def stats(self):
        files = glob.glob(str(self.target / "debug/build" / f"{NAME}-*/out/launch/build-stats.json"))
        newest = max(files, key=os.path.getmtime)
        return json.loads(pathlib.Path(newest).read_text())

    def build_script(self):
        exes = glob.glob(str(self.target / "debug/build" / f"{NAME}-*/build-script-build"))
        return max(exes, key=os.path.getmtime)

    def touch_all(self):
        for p in list(self.crate.glob("kernels/*.cu")) + list(self.crate.glob("include/*.cuh")):
            os.utime(p)

    def append(self, rel, line):
        p = self.crate / rel
        p.write_text(p.read_text() + line)

    def direct_run(self, crate_dir, kernels_env):
        """Runs the build script binary as cargo would (NUM_JOBS slots) under /usr/bin/time -v."""
        out = self.tmp / f"direct-out-{self.cache_n}"  # one per fresh cache
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()
        env = dict(kernels_env)
        env.update({"CARGO_MANIFEST_DIR": str(crate_dir), "OUT_DIR": str(out), "NUM_JOBS": str(self.args.jobs)})
        dt, p = sh(["/usr/bin/time", "-v", self.build_script()], env, cwd=crate_dir)
        rss = next(int(l.split(":")[1]) for l in p.stderr.splitlines() if "Maximum resident set size" in l)
        stats = json.loads((out / "launch/build-stats.json").read_text())
        return dt, rss, stats, out

    def save(self, r):
        """Keeps what was measured so far (for a run cut short)."""
        if self.args.json:
            pathlib.Path(self.args.json).write_text(json.dumps(r, indent=2) + "\n")

    def run(self):
        a = self.args
        r = {"machine": machine(), "command": " ".join(sys.argv), "runs": a.runs, "kernels": a.kernels,
             "arches": 3, "jobs": a.kernels * 3, "tokens": a.jobs}
        jflag = ["-j", str(a.jobs)]
        # Warm-up: dependencies compiled in both modes, so "cold" measures this crate only.
        self.cargo("build", env=self.env(fresh_cache=True))
        self.cargo("check", env=self.env())
        repo_env = {k: v for k, v in self.base_env.items() if k != "CARGO_TARGET_DIR"}
        sh(["cargo", "build", "-p", "cargo-launch", "--manifest-path", str(REPO / "Cargo.toml")], repo_env)

        # (a) the physical limit (raw compiler times, one job at a time, no cache) and the cold
        # build, measured in alternation so that both see the same machine; the ratio is taken
        # per pair (this machine is shared, its load varies from minute to minute).
        serial_sum, serial_wall, cold_total, cold_phase, cold_par, ratios, loads, others = ([] for _ in range(8))
        for _ in range(a.runs):
            loads.append(os.getloadavg()[0])
            self.clean()
            self.cargo("build", "-j", "1", env=self.env(fresh_cache=True, LAUNCH_NO_CACHE="1"))
            s = self.stats()
            assert s["compiled"] == a.kernels * 3 and s["max_parallel"] == 1, s
            raw = (s["nvrtc_ms"] + s["ptxas_ms"]) / 1e3
            serial_sum.append(raw)
            serial_wall.append(s["wall_ms"] / 1e3)
            self.clean()
            dt, _ = self.cargo("build", *jflag, env=self.env(fresh_cache=True))
            s = self.stats()
            assert s["compiled"] == a.kernels * 3, s
            cold_total.append(dt)
            others.append(OTHERS[-1] / dt)
            cold_phase.append(s["wall_ms"] / 1e3)
            cold_par.append(s["max_parallel"])
            ratios.append(cold_phase[-1] / (raw / a.jobs))
        r["load_average_1min_at_start"] = summary(loads)
        r["cold_other_processes_cpus"] = summary(others)
        r["raw_compiler_sum_s"] = summary(serial_sum)
        r["serial_jobs_phase_s"] = summary(serial_wall)
        r["limit_s"] = statistics.median(serial_sum) / a.jobs
        r["cold_cargo_build_s"] = summary(cold_total)
        r["cold_jobs_phase_s"] = summary(cold_phase)
        r["cold_max_parallel"] = max(cold_par)
        r["cold_phase_over_limit"] = summary(ratios)

        # The whole build-script process, run directly (NUM_JOBS slots), with peak memory.
        direct_wall, direct_rss, direct_hwm, direct_phase = [], [], [], []
        for _ in range(a.runs):
            dt, rss, s, _ = self.direct_run(self.crate, self.env(fresh_cache=True))
            assert s["compiled"] == a.kernels * 3, s
            direct_wall.append(dt)
            direct_rss.append(rss)
            direct_hwm.append(s["peak_rss_kib"])
            direct_phase.append(s["wall_ms"] / 1e3)
        r["cold_build_script_s"] = summary(direct_wall)
        r["cold_build_script_over_limit"] = statistics.median(direct_wall) / r["limit_s"]
        r["cold_build_script_jobs_phase_s"] = summary(direct_phase)
        r["peak_rss_kib"] = {"time_v_max": summary(direct_rss), "vmhwm": summary(direct_hwm)}

        self.save(r)
        # (b) no-op, and touch-everything (the script reruns, nothing compiles).
        self.cargo("build", *jflag, env=self.env())
        noop, touched = [], []
        for _ in range(a.runs):
            before = self.stats()
            dt, _ = self.cargo("build", *jflag, env=self.env())
            assert self.stats() == before, "a no-op build reran the build script"
            noop.append(dt)
            self.touch_all()
            dt, _ = self.cargo("build", *jflag, env=self.env())
            s = self.stats()
            assert s["compiled"] == 0 and s["cached"] == a.kernels * 3, s
            touched.append(dt)
        r["noop_s"] = summary(noop)
        r["noop_compiled"] = 0
        r["touch_all_s"] = summary(touched)
        r["touch_all_compiled"] = 0

        self.save(r)
        # (c) one kernel, (d) one group header (kernels i % 3 == 1) and the common header.
        for key, rel, expect in [("edit_kernel", "kernels/k05.cu", 3),
                                 ("edit_group_header", "include/group_1.cuh", 3 * len(range(1, a.kernels, 3))),
                                 ("edit_common_header", "include/common.cuh", a.kernels * 3)]:
            times, compiled = [], set()
            for i in range(a.runs):
                self.append(rel, f"// benchmark edit {i}\n")
                dt, _ = self.cargo("build", *jflag, env=self.env())
                s = self.stats()
                assert s["compiled"] == expect, (key, s["compiled"], expect)
                compiled.add(s["compiled"])
                times.append(dt)
            r[key + "_s"] = summary(times)
            r[key + "_compiled"] = sorted(compiled)

        self.save(r)
        # (e) report vs build on the same fresh crate (crate cleaned, kernel cache empty).
        rep, bld, after = [], [], []
        report = [str(self.cargo_launch), "launch", "report", "--no-setup", "--manifest-path",
                  str(self.crate / "Cargo.toml")]
        for i in range(a.runs):
            order = ["report", "build"] if i % 2 == 0 else ["build", "report"]
            for what in order:
                self.clean()
                if what == "report":
                    dt, _ = sh(report, self.env(fresh_cache=True))
                    rep.append(dt)
                else:
                    dt, _ = self.cargo("build", *jflag, env=self.env(fresh_cache=True))
                    bld.append(dt)
                    # What the report adds once the crate is built.
                    dt2, _ = sh(report, self.env())
                    after.append(dt2)
        r["fresh_report_s"] = summary(rep)
        r["fresh_build_s"] = summary(bld)
        r["report_over_build"] = statistics.median(rep) / statistics.median(bld)
        r["report_after_build_s"] = summary(after)
        r["report_after_build_over_build"] = statistics.median(after) / statistics.median(bld)

        self.save(r)
        # (f) memory against the number of kernels: the same build script on 6, 24, 48 kernels.
        mem = {}
        for n in [6, 24, 48]:
            d = self.tmp / f"crate-{n}"
            subprocess.run([sys.executable, str(HERE / "gen_crate.py"), str(d), "--kernels", str(n),
                            "--repo", str(REPO), "--name", NAME], check=True)
            dt, rss, s, out = self.direct_run(d, self.env(fresh_cache=True))
            out_bytes = sum(p.stat().st_size for p in (out / "launch").rglob("*") if p.is_file())
            mem[n] = {"jobs": s["jobs"], "wall_s": dt, "time_v_max_rss_kib": rss, "vmhwm_kib": s["peak_rss_kib"],
                      "outputs_bytes": out_bytes}
        r["memory_by_kernels"] = mem
        return r


def machine():
    cpu = subprocess.run(["lscpu"], stdout=subprocess.PIPE, text=True).stdout
    model = next((l.split(":", 1)[1].strip() for l in cpu.splitlines() if l.startswith("Model name")), "?")
    mem = next((l.split()[1] for l in open("/proc/meminfo") if l.startswith("MemTotal")), "?")
    rustc = subprocess.run(["rustc", "--version"], stdout=subprocess.PIPE, text=True).stdout.strip()
    return {"cpu": model, "cpus": os.cpu_count(), "mem_kib": mem, "kernel": platform.release(), "rustc": rustc}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--kernels", type=int, default=24)
    ap.add_argument("--jobs", type=int, default=os.cpu_count(), help="cargo -j (jobserver tokens)")
    ap.add_argument("--toolchain", default=os.path.expanduser("~/.cache/cargo-launch/toolchain/cuda-12.9.86"))
    ap.add_argument("--json", default=None, help="write the raw results here")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    a = ap.parse_args()
    b = Bench(a)
    try:
        r = b.run()
    finally:
        if not a.keep:
            shutil.rmtree(b.tmp, ignore_errors=True)
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(r, indent=2) + "\n")
    print(json.dumps(r, indent=2))
    print()
    print(f"| measurement | result (median of {a.runs}) |\n|---|---|")
    print(f"| raw NVRTC+ptxas sum, {r['jobs']} jobs, -j1 | {fmt(r['raw_compiler_sum_s'])} |")
    print(f"| physical limit = sum / {a.jobs} tokens | {r['limit_s']:.2f} s |")
    print(f"| (a) cold: jobs phase of the build script | {fmt(r['cold_jobs_phase_s'])}; per-pair ratio to the limit {fmt(r['cold_phase_over_limit'], 'x')} |")
    print(f"| CPUs used by other processes during the cold builds | {fmt(r['cold_other_processes_cpus'], 'CPUs')} |")
    print(f"| (a) cold: whole build-script process | {fmt(r['cold_build_script_s'])} = {r['cold_build_script_over_limit']:.3f} x limit |")
    print(f"| (a) cold: whole `cargo build` | {fmt(r['cold_cargo_build_s'])} |")
    print(f"| (b) no-op `cargo build` | {fmt(r['noop_s'])}, 0 jobs |")
    print(f"| (b') touch every kernel and header | {fmt(r['touch_all_s'])}, 0 jobs |")
    print(f"| (c) one kernel edited | {fmt(r['edit_kernel_s'])}, {r['edit_kernel_compiled']} jobs |")
    print(f"| (d) group header edited | {fmt(r['edit_group_header_s'])}, {r['edit_group_header_compiled']} jobs |")
    print(f"| (d') common header edited | {fmt(r['edit_common_header_s'])}, {r['edit_common_header_compiled']} jobs |")
    print(f"| (e) fresh `cargo launch report` | {fmt(r['fresh_report_s'])} = {r['report_over_build']:.3f} x build |")
    print(f"| (e) fresh `cargo build` | {fmt(r['fresh_build_s'])} |")
    print(f"| (e) report after build | {fmt(r['report_after_build_s'])} = {r['report_after_build_over_build']:.3f} x build |")
    for n, m in r["memory_by_kernels"].items():
        print(f"| (f) {n} kernels, {m['jobs']} jobs | max RSS {m['time_v_max_rss_kib']} KiB (VmHWM {m['vmhwm_kib']} KiB), outputs {m['outputs_bytes']} B |")


if __name__ == "__main__":
    main()
