#!/usr/bin/env python3
"""Runs the comparison suite and writes the report.

    benches/suite/run.sh [--quick] [--rounds N] [--only REGEX]
                         [--skip-criterion] [--skip-memory] [--skip-callgrind]
    benches/suite/run.sh --report-only docs/benchmarks.json   # or target/suite/latest

Run it on a quiet checkout: the report names the commit and any file that
differs from it.

Builds the five suite bench binaries (one per global allocator), then:

1. criterion rounds: the benches are cut into chunks (one object size and
   count of one scenario, or one program); each chunk runs in every binary
   before the next chunk starts, in an order that rotates every round, so
   that figures compared across binaries are measured minutes apart at
   most, never a whole run apart. Each (round, binary) writes its own
   criterion directory; a figure is the median over rounds of criterion's
   median, and the spread over rounds is kept.
2. memory: one process per configuration, repeated.
3. callgrind: instructions per item for the headline case, by difference
   of two repetition counts, in total and split between the allocating and
   the dropping half; and instructions per box of each real program (at a
   smaller size), as written and under the attribute, in every binary.

Everything lands in target/suite/<stamp>/ (target/suite/latest points at
it); report.py then writes docs/benchmarks.md and docs/img/*.png from the
results (no other file: the README carries no figures), installing
matplotlib and scipy into target/suite/venv if they are missing.
Standard library only.
"""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BINARIES = ["system", "mimalloc", "jemalloc", "batch_system", "batch_mimalloc"]

POWERS = [1 << i for i in range(17)]
COUNTS = [1, 8, 64, 1024, 65536]

# (scenario/size, counts) of the full run; must match benches/suite/matrix.rs.
FULL_GROUPS = [
    ("alloc_drop/64B", POWERS),
    ("alloc_drop/16B", COUNTS),
    ("alloc_drop/256B", COUNTS),
    ("alloc_only/16B", COUNTS),
    ("alloc_only/64B", COUNTS),
    ("alloc_only/256B", COUNTS),
    ("cross_thread/16B", COUNTS),
    ("cross_thread/64B", COUNTS),
    ("cross_thread/256B", COUNTS),
    ("remote_drop/64B", [1024, 65536]),
]
QUICK_GROUPS = [
    ("alloc_drop/64B", [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536]),
    ("alloc_drop/16B", [1024]),
    ("alloc_drop/256B", [1024]),
    ("alloc_only/64B", [1024, 65536]),
    ("cross_thread/64B", [1024, 65536]),
    ("remote_drop/64B", [65536]),
]
PROGRAMS = ["binary_trees", "json", "expr"]

# criterion settings: (warm-up s, measurement s, samples, rounds)
FULL = dict(warm_up=0.2, measure=0.4, samples=10, rounds=5, memory_reps=3)
QUICK = dict(warm_up=0.1, measure=0.2, samples=10, rounds=4, memory_reps=1)

# (binary, strategy) pairs measured under callgrind, headline case.
CALLGRIND = [
    ("batch_system", "batch-glibc"),
    ("batch_mimalloc", "batch-mimalloc"),
    ("system", "box-glibc"),
    ("mimalloc", "box-mimalloc"),
    ("jemalloc", "box-jemalloc"),
    ("jemalloc", "jemalloc-batch"),
    ("system", "bumpalo"),
    ("system", "bumpalo-reset"),
    ("system", "typed-arena"),
    ("system", "vec"),
    # Plain boxes through the wrapper: what it costs what it does not batch.
    ("batch_system", "box"),
    ("batch_mimalloc", "box"),
    # The same workload in a process that never had a second thread.
    ("system", "box-glibc", "no-spawn"),
    ("system", "vec", "no-spawn"),
]
CALLGRIND_N = 1024
CALLGRIND_REPS = (50, 150)

# Programs under callgrind: (name, size) at sizes small enough for valgrind
# (tree depth, records, statements), in every binary, both variants.
CALLGRIND_PROGRAMS = [("binary_trees", 10), ("json", 2000), ("expr", 100)]
CALLGRIND_PROGRAM_REPS = (1, 3)

# (binary, strategy) pairs measured for memory.
MEMORY = [
    ("system", "box"),
    ("mimalloc", "box"),
    ("jemalloc", "box"),
    ("jemalloc", "jemalloc-batch"),
    ("batch_system", "box"),
    ("batch_system", "batch-glibc"),
    ("batch_mimalloc", "box"),
    ("batch_mimalloc", "batch-mimalloc"),
]
MEMORY_SIZES = [16, 64]

# The page the report writes unless told otherwise.
DEFAULT_DOC = "docs/benchmarks.md"
MEMORY_N = 1_000_000


def log(msg):
    print(f"[suite {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, **kw)


def build(binaries=BINARIES):
    """Builds the suite binaries with `cargo bench -p batch-alloc-benches
    --no-run` and returns {binary: path}."""
    cmd = ["cargo", "bench", "-p", "batch-alloc-benches", "--no-run", "--message-format=json"]
    for b in binaries:
        cmd += ["--bench", f"suite_{b}"]
    log("building: " + " ".join(cmd))
    out = run(cmd, cwd=ROOT, stdout=subprocess.PIPE).stdout
    paths = {}
    for line in out.splitlines():
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        if msg.get("reason") != "compiler-artifact" or not msg.get("executable"):
            continue
        name = msg["target"]["name"]
        if name.startswith("suite_"):
            paths[name[len("suite_"):]] = msg["executable"]
    missing = [b for b in binaries if b not in paths]
    if missing:
        sys.exit(f"build did not produce: {missing}")
    return paths


def command_output(cmd):
    try:
        return subprocess.run(cmd, text=True, capture_output=True, cwd=ROOT).stdout.strip()
    except OSError:
        return ""


def machine():
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            models = [l.split(":", 1)[1].strip() for l in f if l.startswith("model name")]
        info["cpu"] = models[0] if models else platform.processor()
    except OSError:
        info["cpu"] = platform.processor()
    info["cpus"] = os.cpu_count()
    try:
        with open("/proc/meminfo") as f:
            kib = int(f.readline().split()[1])
        info["memory_gib"] = round(kib / 1024 / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    info["kernel"] = platform.release()
    info["rustc"] = command_output(["rustc", "--version"])
    info["cargo"] = command_output(["cargo", "--version"])
    info["valgrind"] = command_output(["valgrind", "--version"])
    info["python"] = platform.python_version()
    rev = command_output(["git", "rev-parse", "--short", "HEAD"])
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                            text=True, capture_output=True).stdout
    dirty = [line[3:] for line in status.splitlines() if line.strip()]
    info["git"] = rev + (f" with uncommitted changes to {', '.join(dirty)}" if dirty else "")
    info["profile"] = cargo_profiles()
    info["crates"] = lock_versions(["criterion", "mimalloc", "libmimalloc-sys", "tikv-jemallocator",
                                    "tikv-jemalloc-sys", "bumpalo", "typed-arena", "serde_json"])
    return info


def cargo_profiles():
    """The [profile.release] and [profile.bench] settings of Cargo.toml
    (benches build with `bench`, which inherits `release`)."""
    try:
        with open(os.path.join(ROOT, "Cargo.toml")) as f:
            text = f.read()
    except OSError:
        return ""
    found = []
    for name in ("release", "bench"):
        m = re.search(r"^\[profile\.%s\]\n(.*?)(?=^\[|\Z)" % name, text, re.M | re.S)
        if m:
            settings = [l.strip() for l in m.group(1).splitlines()
                        if l.strip() and not l.strip().startswith("#")]
            found.append(f"{name}: {', '.join(settings) or 'defaults'}")
    return "; ".join(found) or "cargo's defaults"


def lock_versions(names):
    versions = {}
    try:
        with open(os.path.join(ROOT, "Cargo.lock")) as f:
            text = f.read()
    except OSError:
        return versions
    for block in text.split("[[package]]"):
        name = re.search(r'^name = "([^"]+)"', block, re.M)
        version = re.search(r'^version = "([^"]+)"', block, re.M)
        if name and version and name.group(1) in names:
            versions[name.group(1)] = version.group(1)
    return versions


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return [float(x) for x in f.read().split()[:3]]
    except OSError:
        return None


def plan(quick):
    """Chunks: (regex, label). Each chunk runs in every binary in turn."""
    chunks = []
    for group, counts in (QUICK_GROUPS if quick else FULL_GROUPS):
        for n in counts:
            chunks.append((f"^{re.escape(group)}/[^/]+/{n}$", f"{group}/{n}"))
    for p in PROGRAMS:
        chunks.append((f"^programs/{p}/", f"programs/{p}"))
    return chunks


def criterion_rounds(paths, out, cfg, quick, only=None):
    chunks = plan(quick)
    if only:
        chunks = [c for c in chunks if re.search(only, c[1])]
    logs = os.path.join(out, "logs")
    os.makedirs(logs, exist_ok=True)
    args = ["--bench", "--warm-up-time", str(cfg["warm_up"]), "--measurement-time",
            str(cfg["measure"]), "--sample-size", str(cfg["samples"]), "--nresamples", "1000",
            "--noplot"]
    loads = []
    for r in range(cfg["rounds"]):
        started = time.time()
        for i, (regex, label) in enumerate(chunks):
            k = (r + i) % len(BINARIES)
            order = BINARIES[k:] + BINARIES[:k]
            for b in order:
                env = dict(os.environ, CRITERION_HOME=os.path.join(out, "criterion", f"r{r}", b))
                with open(os.path.join(logs, f"r{r}-{b}.log"), "a") as logf:
                    subprocess.run([paths[b]] + args + [regex], env=env, cwd=ROOT, check=True,
                                   stdout=logf, stderr=subprocess.STDOUT)
            loads.append(loadavg())
            # Kept beside the rounds, for a run resumed after them.
            with open(os.path.join(out, "loads.json"), "w") as f:
                json.dump(loads, f)
        log(f"round {r + 1}/{cfg['rounds']} done in {time.time() - started:.0f} s")
    return loads


def collect_criterion(out):
    """{bench id: {"binary": b, "rounds": [ns per item, ...]}}"""
    results = {}
    base = os.path.join(out, "criterion")
    for rdir in sorted(os.listdir(base)):
        r = int(rdir[1:])
        for b in os.listdir(os.path.join(base, rdir)):
            for dirpath, _dirs, files in os.walk(os.path.join(base, rdir, b)):
                if "benchmark.json" not in files or os.path.basename(dirpath) != "new":
                    continue
                with open(os.path.join(dirpath, "benchmark.json")) as f:
                    bench = json.load(f)
                with open(os.path.join(dirpath, "estimates.json")) as f:
                    est = json.load(f)
                items = (bench.get("throughput") or {}).get("Elements") or 1
                entry = results.setdefault(bench["full_id"], {
                    "binary": b, "group": bench["group_id"],
                    "function": bench.get("function_id"), "value": bench.get("value_str"),
                    "items": items, "rounds": {}})
                entry["rounds"][r] = est["median"]["point_estimate"] / items
    for entry in results.values():
        entry["rounds"] = [entry["rounds"][k] for k in sorted(entry["rounds"])]
    return results


def memory_runs(paths, reps):
    rows = []
    for rep in range(reps):
        for size in MEMORY_SIZES:
            for b, strategy in MEMORY:
                out = run([paths[b], "memory", str(size), str(MEMORY_N), strategy],
                          cwd=ROOT, stdout=subprocess.PIPE).stdout
                row = json.loads(out.strip().splitlines()[-1])
                row["binary"] = b
                row["rep"] = rep
                rows.append(row)
        log(f"memory repetition {rep + 1}/{reps} done")
    return rows


def callgrind_count(path, strategy, reps, toggle=None, no_spawn=False, n=CALLGRIND_N):
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    if toggle:
        cmd.append(f"--toggle-collect=*suite::strategies::Strategy<T>>::{toggle}")
    cmd += [path, "instructions", strategy, str(n), str(reps)]
    env = dict(os.environ)
    env.pop("SUITE_NO_SPAWN", None)
    if no_spawn:
        env["SUITE_NO_SPAWN"] = "1"
    proc = subprocess.run(cmd, cwd=ROOT, text=True, capture_output=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
    collected = re.search(r"Collected : (\d+)", proc.stderr)
    served = re.search(r"served=(\d+)", proc.stderr)
    per_run = re.search(r"boxes_per_run=(\d+)", proc.stderr)
    if per_run:
        return int(collected.group(1)), int(served.group(1)), int(per_run.group(1))
    return int(collected.group(1)), int(served.group(1)) if served else 0


def callgrind_runs(paths):
    if not shutil.which("valgrind"):
        log("valgrind not found: instruction counts skipped")
        return None
    rows = []
    lo, hi = CALLGRIND_REPS
    items = (hi - lo) * CALLGRIND_N
    for b, strategy, *flags in CALLGRIND:
        no_spawn = "no-spawn" in flags
        row = {"binary": b, "strategy": strategy, "n": CALLGRIND_N, "reps": [lo, hi],
               "no_spawn": no_spawn}
        for part in (None, "fill", "release"):
            c_lo, _ = callgrind_count(paths[b], strategy, lo, part, no_spawn)
            c_hi, served = callgrind_count(paths[b], strategy, hi, part, no_spawn)
            row[part or "total"] = (c_hi - c_lo) / items
            if part is None:
                row["served"] = served
                if strategy.startswith("batch-") and served < hi * CALLGRIND_N:
                    raise RuntimeError(f"{strategy} under valgrind: batch-alloc served only "
                                       f"{served} allocations: the wrapper was not serving it")
        rows.append(row)
        log(f"callgrind {strategy}{' (no spawn)' if no_spawn else ''}: "
            f"{row['total']:.1f} instructions per item")
    return rows


def callgrind_programs(paths):
    """Instructions per box of each program, as written and under the
    attribute, in every binary."""
    if not shutil.which("valgrind"):
        return None
    rows = []
    lo, hi = CALLGRIND_PROGRAM_REPS
    for name, size in CALLGRIND_PROGRAMS:
        for b in BINARIES:
            for variant in ("plain", "attr"):
                label = f"program:{name}:{variant}"
                c_lo, _, boxes = callgrind_count(paths[b], label, lo, n=size)
                c_hi, served, _ = callgrind_count(paths[b], label, hi, n=size)
                rows.append({"program": name, "binary": b, "variant": variant, "size": size,
                             "boxes_per_run": boxes, "served": served,
                             "per_box": (c_hi - c_lo) / ((hi - lo) * boxes)})
        log(f"callgrind {name}: done")
    return rows


def run_dir(kind, mode):
    """A new target/KIND/<stamp>-MODE directory, which target/KIND/latest
    then points at."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = os.path.join(ROOT, "target", kind, f"{stamp}-{mode}")
    os.makedirs(out)
    latest = os.path.join(ROOT, "target", kind, "latest")
    if os.path.islink(latest):
        os.remove(latest)
    os.symlink(os.path.basename(out), latest)
    return out


def ensure_plot_python():
    """A python that can import what report.py uses (matplotlib for the
    charts, scipy for the Mann-Whitney test), installing them into a venv
    under target/suite if needed."""
    need = "import matplotlib, scipy"
    if subprocess.run([sys.executable, "-c", need], capture_output=True).returncode == 0:
        return sys.executable
    venv = os.path.join(ROOT, "target", "suite", "venv")
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        log("creating target/suite/venv for matplotlib and scipy")
        run([sys.executable, "-m", "venv", venv])
    if subprocess.run([python, "-c", need], capture_output=True).returncode != 0:
        log("installing matplotlib and scipy into target/suite/venv")
        run([python, "-m", "pip", "install", "--quiet", "matplotlib", "scipy"])
    return python


def report(results, doc, img):
    """Runs report.py on a results.json (or a run directory holding one):
    writes `doc` and the charts in `img`, nothing else."""
    python = ensure_plot_python()
    here = os.path.dirname(os.path.abspath(__file__))
    run([python, os.path.join(here, "report.py"), results, "--doc", doc, "--img", img],
        cwd=ROOT)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a subset: about 8 minutes, plus the build")
    ap.add_argument("--rounds", type=int, help="criterion rounds (default 5, quick 4)")
    ap.add_argument("--skip-callgrind", action="store_true")
    ap.add_argument("--skip-memory", action="store_true")
    ap.add_argument("--skip-criterion", action="store_true")
    ap.add_argument("--only", metavar="REGEX",
                    help="run only the criterion chunks whose name (e.g. alloc_drop/64B/1024, "
                         "programs/json) matches")
    ap.add_argument("--report-only", metavar="RUN_DIR", help="rewrite the report from a run")
    ap.add_argument("--resume", metavar="RUN_DIR",
                    help="a run that stopped after its criterion rounds: take them from "
                         "RUN_DIR (target/suite/...) and measure the rest")
    ap.add_argument("--doc",
                    help=f"the page to write (default {DEFAULT_DOC}, or the run directory's "
                         "benchmarks.md for a run with --only)")
    ap.add_argument("--img", help="the charts' directory (default docs/img, or the run "
                                  "directory's img for a run with --only)")
    args = ap.parse_args()
    os.chdir(ROOT)

    if args.report_only:
        doc, img = args.doc or DEFAULT_DOC, args.img or "docs/img"
        report(os.path.abspath(args.report_only), doc, img)
        return

    cfg = dict(QUICK if args.quick else FULL)
    if args.rounds:
        cfg["rounds"] = args.rounds
    out = (os.path.abspath(args.resume) if args.resume
           else run_dir("suite", "quick" if args.quick else "full"))

    started = time.time()
    paths = build()
    built = time.time()
    results = {
        "mode": "quick" if args.quick else "full",
        "command": ("benches/suite/run.sh" + (" --quick" if args.quick else "")
                    + (f" --only '{args.only}'" if args.only else "")),
        "config": cfg,
        "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "machine": machine(),
        "load_start": loadavg(),
        "binaries": {},
    }
    for b in BINARIES:
        out_info = run([paths[b], "info"], stdout=subprocess.PIPE, cwd=ROOT).stdout
        results["binaries"][b] = json.loads(out_info.strip().splitlines()[-1])
    log(f"results in {out}")
    # A run of some chunks is a scratch run: its page stays in its directory
    # unless a page is named, so that it cannot overwrite the committed one.
    doc = args.doc or (os.path.join(out, "benchmarks.md") if args.only else DEFAULT_DOC)
    img = args.img or (os.path.join(out, "img") if args.only else "docs/img")

    if args.resume:
        loads = os.path.join(out, "loads.json")
        if os.path.exists(loads):
            with open(loads) as f:
                results["load_during"] = json.load(f)
        results["criterion"] = collect_criterion(out)
        results["resumed"] = True
    elif not args.skip_criterion:
        results["load_during"] = criterion_rounds(paths, out, cfg, args.quick, args.only)
        results["criterion"] = collect_criterion(out)
    if not args.skip_memory:
        results["memory"] = memory_runs(paths, cfg["memory_reps"])
    if not args.skip_callgrind:
        results["callgrind"] = callgrind_runs(paths)
        results["callgrind_programs"] = callgrind_programs(paths)
    results["load_end"] = loadavg()
    results["seconds"] = round(time.time() - started)
    results["build_seconds"] = round(built - started)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    log(f"measured in {results['seconds']} s; writing the report")
    report(os.path.join(out, "results.json"), doc, img)
    log(f"wrote {doc} and {img}/")


if __name__ == "__main__":
    main()
