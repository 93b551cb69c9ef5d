#!/usr/bin/env python3
"""Runs the comparison suite; report.py writes docs/benchmarks.md from it.

    benches/suite/run.sh [--quick] [--rounds N] [--only REGEX]
                         [--skip-criterion] [--skip-memory] [--skip-callgrind]
    benches/suite/run.sh --report-only docs/benchmarks.json   # or a run directory

Builds the five suite bench binaries (one per global allocator), then:

1. criterion rounds: the benches are cut into chunks (one object size and
   count of one scenario, or one program); each chunk runs in every binary
   before the next starts, in an order that rotates every round, so that
   figures compared across binaries are measured minutes apart at most.
   Round R is criterion's baseline `rR` under the run's directory, so
   critcmp shows any of them (`critcmp --target-dir target/suite/latest r0 r1`).
   A figure is the median over rounds of criterion's median per item.
2. memory: one process per configuration, repeated.
3. callgrind: instructions per item of the headline case, by difference of
   two repetition counts, in total and split between the allocating and the
   dropping half; and instructions per box of each real program.

Results: target/suite/<stamp>/results.json (target/suite/latest points at
it). This file also holds what the reports share (tables, ratios over
rounds, the machine). Standard library only; matplotlib, for report.py's
charts, goes into target/suite/venv if python3 lacks it.
"""
import argparse
import datetime
import glob
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
import tomllib

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HERE = os.path.dirname(os.path.abspath(__file__))
BINARIES = ["system", "mimalloc", "jemalloc", "batch_system", "batch_mimalloc"]

POWERS = [1 << i for i in range(17)]
COUNTS = [1, 8, 64, 1024, 65536]
# (scenario/size, counts) of the full run; must match benches/suite/matrix.rs.
FULL_GROUPS = [("alloc_drop/64B", POWERS)] + [
    (f"{s}/{size}", COUNTS) for s in ("alloc_drop", "alloc_only", "cross_thread")
    for size in ("16B", "64B", "256B") if (s, size) != ("alloc_drop", "64B")
] + [("remote_drop/64B", [1024, 65536])]
QUICK_GROUPS = [
    ("alloc_drop/64B", [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536]),
    ("alloc_drop/16B", [1024]), ("alloc_drop/256B", [1024]), ("alloc_only/64B", [1024, 65536]),
    ("cross_thread/64B", [1024, 65536]), ("remote_drop/64B", [65536]),
]
PROGRAMS = ["binary_trees", "json", "expr"]
FULL = dict(warm_up=0.2, measure=0.4, samples=10, rounds=5, memory_reps=3)
QUICK = dict(warm_up=0.1, measure=0.2, samples=10, rounds=4, memory_reps=1)

# (binary, strategy[, "no-spawn"]) under callgrind, headline case; `box` is
# plain boxes through the wrapper, and no-spawn a process that never had a
# second thread.
CALLGRIND = [("batch_system", "batch-glibc"), ("batch_mimalloc", "batch-mimalloc"),
             ("system", "box-glibc"), ("mimalloc", "box-mimalloc"), ("jemalloc", "box-jemalloc"),
             ("jemalloc", "jemalloc-batch"), ("system", "bumpalo"), ("system", "bumpalo-reset"),
             ("system", "typed-arena"), ("system", "vec"), ("batch_system", "box"),
             ("batch_mimalloc", "box"), ("system", "box-glibc", "no-spawn"),
             ("system", "vec", "no-spawn")]
CALLGRIND_N, CALLGRIND_REPS = 1024, (50, 150)
# Programs under callgrind at sizes small enough for valgrind (tree depth,
# records, statements), in every binary, both variants.
CALLGRIND_PROGRAMS, CALLGRIND_PROGRAM_REPS = [("binary_trees", 10), ("json", 2000), ("expr", 100)], (1, 3)
MEMORY = [("system", "box"), ("mimalloc", "box"), ("jemalloc", "box"), ("jemalloc", "jemalloc-batch"),
          ("batch_system", "box"), ("batch_system", "batch-glibc"), ("batch_mimalloc", "box"),
          ("batch_mimalloc", "batch-mimalloc")]
MEMORY_SIZES, MEMORY_N = [16, 64], 1_000_000


def log(msg):
    print(f"[{os.path.basename(sys.argv[0])} {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr,
          flush=True)


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, cwd=ROOT, **kw)


def last_json(cmd, **kw):
    """The last line a command prints, as JSON."""
    return json.loads(run(cmd, stdout=subprocess.PIPE, **kw).stdout.strip().splitlines()[-1])


def build(binaries=BINARIES):
    """{binary: path} of the suite binaries, built by cargo."""
    cmd = ["cargo", "bench", "-p", "batch-alloc-benches", "--no-run", "--message-format=json"]
    for b in binaries:
        cmd += ["--bench", f"suite_{b}"]
    log("building: " + " ".join(cmd))
    paths = {}
    for line in run(cmd, stdout=subprocess.PIPE).stdout.splitlines():
        msg = json.loads(line) if line.startswith("{") else {}
        if msg.get("reason") == "compiler-artifact" and msg.get("executable"):
            paths[msg["target"]["name"].removeprefix("suite_")] = msg["executable"]
    if missing := [b for b in binaries if b not in paths]:
        sys.exit(f"build did not produce: {missing}")
    return paths


def output(cmd):
    return subprocess.run(cmd, text=True, capture_output=True, cwd=ROOT).stdout.rstrip()


def machine():
    """The machine, toolchain, commit and crate versions of a run."""
    with open("/proc/cpuinfo") as f:
        cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
    with open("/proc/meminfo") as f:
        gib = round(int(f.readline().split()[1]) / 2**20, 1)
    dirty = [l[3:] for l in output(["git", "status", "--porcelain", "--untracked-files=no"]).splitlines()]
    with open(os.path.join(ROOT, "Cargo.lock"), "rb") as f:
        lock = {p["name"]: p["version"] for p in tomllib.load(f)["package"]}
    with open(os.path.join(ROOT, "Cargo.toml"), "rb") as f:
        profiles = tomllib.load(f).get("profile", {})
    return {"cpu": cpu, "cpus": os.cpu_count(), "memory_gib": gib, "kernel": platform.release(),
            "rustc": output(["rustc", "--version"]), "cargo": output(["cargo", "--version"]),
            "valgrind": output(["valgrind", "--version"]), "python": platform.python_version(),
            "git": output(["git", "rev-parse", "--short", "HEAD"])
            + (f" with uncommitted changes to {', '.join(dirty)}" if dirty else ""),
            "profile": "; ".join(f"[profile.{k}] {json.dumps(v)}" for k, v in profiles.items() if k in ("release", "bench"))
            or "cargo's defaults",
            "crates": {k: v for k, v in lock.items() if k in (
                "criterion", "mimalloc", "libmimalloc-sys", "tikv-jemallocator", "tikv-jemalloc-sys",
                "bumpalo", "typed-arena", "serde_json")}}


def loadavg():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


def run_dir(kind, mode):
    """A new target/KIND/<stamp>-MODE directory; target/KIND/latest points at it."""
    out = os.path.join(ROOT, "target", kind, datetime.datetime.now().strftime("%Y%m%d-%H%M%S-") + mode)
    os.makedirs(out)
    latest = os.path.join(ROOT, "target", kind, "latest")
    if os.path.islink(latest):
        os.remove(latest)
    os.symlink(os.path.basename(out), latest)
    return out


# ---- what the reports share ------------------------------------------------


def table(header, rows, align=None):
    align = align or ["---"] + ["---:"] * (len(header) - 1)
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
                     + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows])


def ratio(a, b):
    """Two figures' rounds (lists, round by round): the ratio of their
    medians, and the lowest and highest ratio within one round."""
    if not a or not b:
        return None
    per = [x / y for x, y in zip(a, b)]
    return statistics.median(a) / statistics.median(b), min(per), max(per)


def fmt_ratio(r, ranges=True):
    if r is None:
        return "–"
    return f"{r[0]:.2f}x ({r[1]:.2f}–{r[2]:.2f})" if ranges else f"{r[0]:.2f}x"


def verdict(value, target, at_least=True, unit="x", signed=False):
    """**met** or **missed**, with the value against the target."""
    if value is None:
        return "not measured"
    met = value >= target if at_least else value <= target
    shown = f"{value:+.1f}" if signed else f"{value:.1f}" if unit != "x" else f"{value:.2f}"
    return (f"**{'met' if met else 'missed'}**: {shown}{unit} (target {'≥' if at_least else '≤'} "
            f"{'+' if signed else ''}{target:g}{unit})")


def machine_rows(results, extra=()):
    m = results["machine"]
    return [["CPU", f"{m['cpu']} ({m['cpus']} CPUs visible), {m.get('memory_gib', '?')} GiB"],
            ["kernel", m["kernel"]], ["toolchain", f"{m['rustc']}; {m['cargo']}"],
            ["profile", "`bench` (inherits `release`); Cargo.toml: " + m.get("profile", "?")],
            ["valgrind", m.get("valgrind") or "–"], *extra,
            *[[f"`suite_{b}`", info["version"]] for b, info in results["binaries"].items()],
            ["crates", ", ".join(f"{k} {v}" for k, v in sorted(m.get("crates", {}).items()))]]


def spread_text(rounds_by_name, what):
    """How far rounds spread ((max − min) / median), in a sentence."""
    spreads = sorted(((max(r) - min(r)) / statistics.median(r), k)
                     for k, r in rounds_by_name.items() if len(r) >= 2)
    if not spreads:
        return ""
    q = lambda f: spreads[min(len(spreads) - 1, int(f * len(spreads)))][0] * 100
    return (f"Spread over rounds ((max − min) / median) across {len(spreads)} {what}: median "
            f"{q(0.5):.0f}%, 90th percentile {q(0.9):.0f}%, widest {spreads[-1][0] * 100:.0f}% "
            f"(`{spreads[-1][1]}`).")


def load_results(path, doc, keep_name):
    """A run's results (a results.json or its directory), after keeping a
    copy named `keep_name` beside `doc`, which --report-only reads later."""
    path = os.path.join(path, "results.json") if os.path.isdir(path) else path
    with open(path) as f:
        results = json.load(f)
    keep = os.path.join(os.path.dirname(os.path.abspath(doc)), keep_name)
    if os.path.abspath(path) != keep:
        shutil.copyfile(path, keep)
    return results


# ---- measuring -------------------------------------------------------------


def criterion_rounds(paths, out, cfg, groups, only):
    chunks = [(f"^{re.escape(g)}/[^/]+/{n}$", f"{g}/{n}") for g, counts in groups for n in counts]
    chunks += [(f"^programs/{p}/", f"programs/{p}") for p in PROGRAMS]
    chunks = [c for c in chunks if not only or re.search(only, c[1])]
    env = dict(os.environ, CRITERION_HOME=os.path.join(out, "criterion"))
    loads = []
    for r in range(cfg["rounds"]):
        started = time.time()
        args = ["--bench", "--warm-up-time", str(cfg["warm_up"]), "--measurement-time",
                str(cfg["measure"]), "--sample-size", str(cfg["samples"]), "--nresamples", "1000",
                "--noplot", "--save-baseline", f"r{r}"]
        for i, (regex, _) in enumerate(chunks):
            k = (r + i) % len(BINARIES)
            for b in BINARIES[k:] + BINARIES[:k]:
                with open(os.path.join(out, f"criterion-{b}.log"), "a") as logf:
                    run([paths[b]] + args + [regex], env=env, stdout=logf, stderr=subprocess.STDOUT)
            loads.append(loadavg())
        with open(os.path.join(out, "loads.json"), "w") as f:  # for --resume
            json.dump(loads, f)
        log(f"round {r + 1}/{cfg['rounds']} done in {time.time() - started:.0f} s")
    return loads


def collect_criterion(out):
    """{bench id: {"items": objects per iteration, "rounds": [ns per item]}}
    from criterion's baselines r0, r1, ..."""
    found = {}
    for est in glob.glob(os.path.join(out, "criterion", "**", "r[0-9]*", "estimates.json"), recursive=True):
        base = os.path.dirname(est)
        with open(os.path.join(base, "benchmark.json")) as f:
            bench = json.load(f)
        with open(est) as f:
            median = json.load(f)["median"]["point_estimate"]
        items = (bench.get("throughput") or {}).get("Elements") or 1
        entry = found.setdefault(bench["full_id"], {"items": items, "rounds": {}})
        entry["rounds"][int(os.path.basename(base)[1:])] = median / items
    for entry in found.values():
        entry["rounds"] = [entry["rounds"][r] for r in sorted(entry["rounds"])]
    return found


def memory_runs(paths, reps):
    rows = []
    for rep in range(reps):
        for size in MEMORY_SIZES:
            for b, strategy in MEMORY:
                row = last_json([paths[b], "memory", str(size), str(MEMORY_N), strategy])
                rows.append(dict(row, binary=b, rep=rep))
    return rows


def callgrind_count(path, args, toggle=None, no_spawn=False):
    """(instructions, {"served": .., "boxes_per_run": ..}) of one process."""
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    if toggle:
        cmd.append(f"--toggle-collect=*suite::strategies::Strategy<T>>::{toggle}")
    env = {k: v for k, v in os.environ.items() if k != "SUITE_NO_SPAWN"}
    if no_spawn:
        env["SUITE_NO_SPAWN"] = "1"
    err = subprocess.run(cmd + [path, "instructions", *map(str, args)], cwd=ROOT, text=True,
                         capture_output=True, env=env, check=True).stderr
    return (int(re.search(r"Collected : (\d+)", err).group(1)),
            {k: int(v) for k, v in re.findall(r"(served|boxes_per_run)=(\d+)", err)})


def callgrind_runs(paths):
    rows = []
    lo, hi = CALLGRIND_REPS
    for b, strategy, *flags in CALLGRIND:
        row = {"binary": b, "strategy": strategy, "n": CALLGRIND_N, "reps": [lo, hi],
               "no_spawn": "no-spawn" in flags}
        for part in (None, "fill", "release"):
            c = [callgrind_count(paths[b], (strategy, CALLGRIND_N, reps), part, row["no_spawn"])
                 for reps in (lo, hi)]
            row[part or "total"] = (c[1][0] - c[0][0]) / ((hi - lo) * CALLGRIND_N)
            row.setdefault("served", c[1][1].get("served", 0))
        if strategy.startswith("batch-") and row["served"] < hi * CALLGRIND_N:
            sys.exit(f"{strategy} under valgrind: the wrapper served only {row['served']} allocations")
        rows.append(row)
        log(f"callgrind {strategy} {' '.join(flags)}: {row['total']:.1f} instructions per item")
    lo, hi = CALLGRIND_PROGRAM_REPS
    programs = []
    for name, size in CALLGRIND_PROGRAMS:
        for b in BINARIES:
            for variant in ("plain", "attr"):
                c = [callgrind_count(paths[b], (f"program:{name}:{variant}", size, reps))
                     for reps in (lo, hi)]
                boxes = c[0][1]["boxes_per_run"]
                programs.append({"program": name, "binary": b, "variant": variant, "size": size,
                                 "boxes_per_run": boxes, "served": c[1][1].get("served", 0),
                                 "per_box": (c[1][0] - c[0][0]) / ((hi - lo) * boxes)})
    return rows, programs


def plot_python():
    """A python that can import matplotlib (report.py's charts), from
    target/suite/venv if python3 lacks it."""
    if subprocess.run([sys.executable, "-c", "import matplotlib"], capture_output=True).returncode == 0:
        return sys.executable
    venv = os.path.join(ROOT, "target", "suite", "venv")
    python = os.path.join(venv, "bin", "python")
    if subprocess.run([python, "-c", "import matplotlib"], capture_output=True).returncode != 0:
        log("installing matplotlib into target/suite/venv")
        run([sys.executable, "-m", "venv", venv])
        run([python, "-m", "pip", "install", "--quiet", "matplotlib"])
    return python


def report(results, doc, img):
    run([plot_python(), os.path.join(HERE, "report.py"), results, "--doc", doc, "--img", img])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--quick", action="store_true", help="a subset: about 8 minutes, plus the build")
    ap.add_argument("--rounds", type=int, help="criterion rounds (default 5, quick 4)")
    ap.add_argument("--skip-callgrind", action="store_true")
    ap.add_argument("--skip-memory", action="store_true")
    ap.add_argument("--skip-criterion", action="store_true")
    ap.add_argument("--only", metavar="REGEX", help="only the criterion chunks whose name "
                    "(e.g. alloc_drop/64B/1024, programs/json) matches; the page then goes to the "
                    "run's directory unless --doc names one")
    ap.add_argument("--report-only", metavar="RESULTS", help="rewrite the page from a run's results")
    ap.add_argument("--resume", metavar="RUN_DIR", help="a run stopped after its criterion rounds: "
                    "take them from RUN_DIR (target/suite/...) and measure the rest")
    ap.add_argument("--doc", help="the page to write (default docs/benchmarks.md)")
    ap.add_argument("--img", help="the charts' directory (default docs/img)")
    args = ap.parse_args()
    if args.report_only:
        return report(os.path.abspath(args.report_only), args.doc or "docs/benchmarks.md",
                      args.img or "docs/img")

    cfg = dict(QUICK if args.quick else FULL, **({"rounds": args.rounds} if args.rounds else {}))
    mode = "quick" if args.quick else "full"
    out = os.path.abspath(args.resume) if args.resume else run_dir("suite", mode)
    # A run of some chunks is a scratch run: it cannot overwrite the committed page.
    doc = args.doc or (os.path.join(out, "benchmarks.md") if args.only else "docs/benchmarks.md")
    img = args.img or (os.path.join(out, "img") if args.only else "docs/img")
    started = time.time()
    paths = build()
    built = time.time()
    results = {"mode": mode, "command": " ".join(["benches/suite/run.sh"] + sys.argv[1:]),
               "config": cfg, "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
               "machine": machine(), "load_start": loadavg(),
               "binaries": {b: last_json([paths[b], "info"]) for b in BINARIES}}
    log(f"results in {out}")
    if args.resume:
        loads = os.path.join(out, "loads.json")
        results.update(criterion=collect_criterion(out), resumed=True,
                       load_during=json.load(open(loads)) if os.path.exists(loads) else [])
    elif not args.skip_criterion:
        results["load_during"] = criterion_rounds(paths, out, cfg, QUICK_GROUPS if args.quick
                                                  else FULL_GROUPS, args.only)
        results["criterion"] = collect_criterion(out)
    if not args.skip_memory:
        results["memory"] = memory_runs(paths, cfg["memory_reps"])
    if not args.skip_callgrind and shutil.which("valgrind"):
        results["callgrind"], results["callgrind_programs"] = callgrind_runs(paths)
    results.update(load_end=loadavg(), seconds=round(time.time() - started),
                   build_seconds=round(built - started))
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    report(os.path.join(out, "results.json"), doc, img)
    log(f"wrote {doc} and {img}/")


if __name__ == "__main__":
    main()
