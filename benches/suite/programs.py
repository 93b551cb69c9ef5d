#!/usr/bin/env python3
"""Measures the real-programs table and writes docs/programs.md.

    benches/suite/programs.sh                      # full: 5 rounds of 3 runs per process, callgrind (about 20 to 35 minutes on 2 cores, three quarters of it callgrind; plus the build)
    benches/suite/programs.sh --quick              # 2 rounds of 2 runs, no callgrind (about 2 minutes, plus the build)
    benches/suite/programs.sh --programs expr,stmt --allocators system,batch_system
    benches/suite/programs.sh --report-only docs/programs.json   # rewrite the page from a run

Every program of benches/suite/real.rs (the deserialize demonstration's
records and document tree, the expression parser, the linked list,
binary-trees, the statement parser; and the reach programs: the records
export through derived `Deserialize`, an iterator-chain log analyser, and
the derived parse under rayon on 1 and 2 threads), each compiled from
one source as written (`plain`) and under `#[batch_alloc]` (`attr`), runs
in each of the five suite binaries: plain glibc, mimalloc and jemalloc, and
BatchAlloc<System> and BatchAlloc<MiMalloc>. A third variant,
`scoped_boxes`, is the `attr` twin in a process that calls
`set_capture(Capture::Boxes)` first. A cell is one (program, allocator,
variant); the variants that differ from `attr` only where BatchAlloc is
installed (`program list` names them: scoped_boxes) run in the two wrapped
binaries only.

1. Build once: `cargo bench -p batch-alloc-benches --no-run` of the suite
   binaries (the bench profile: release).
2. Rounds: each round runs every cell in a fresh process
   (`suite_BINARY program NAME VARIANT REPS`), REPS runs each; the programs
   come one after the other in an order that rotates each round, and the
   cells of a program in an order shuffled afresh each round (seeded), so
   cells compared with each other run seconds apart and no cell always
   follows the same neighbour. A cell's time for a round is the median of
   its process's runs; the table gives the median over rounds and the
   range. Peak RSS: VmHWM after the first run of each process (reset once
   the input is built, so it counts the input held and the program's own
   peak), median over rounds. Every cell must compute the same check value.
3. Instructions: `valgrind --tool=callgrind`, one run of each cell: the
   count of a process that makes one run less that of a process that
   builds the input and makes none (the same for every variant).

Why its own rounds rather than hyperfine, which benches/crates/run.sh uses
to time whole processes: a cell's process first builds the program's
input (up to a third of its time) and then times only its runs, in
process, less the time the thread waited for a CPU; it reads its own peak
RSS after resetting it once the input is built, and reports the check
value and capture setting the driver verifies. hyperfine would time the
input's construction with the program and could check none of that. What
stays here is the order of the cells (rotated and shuffled rounds) and
the medians.

Results land in target/programs/<stamp>/results.json (target/programs/latest
points at it); programs_report.py then writes docs/programs.md and keeps a
copy of the results as docs/programs.json (no other file: the README
carries no figures).
Standard library only; valgrind optional (instructions skipped without it).
"""
import argparse
import datetime
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import time

import suite

ROOT = suite.ROOT
HERE = os.path.dirname(os.path.abspath(__file__))
BINARIES = suite.BINARIES
FULL = dict(rounds=5, reps=3, callgrind=True)
QUICK = dict(rounds=2, reps=2, callgrind=False)


def log(msg):
    print(f"[programs {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def catalogue(path):
    """The programs (name, unit, default size, about) and variants the
    binaries know, from `program list`."""
    out = subprocess.run([path, "program", "list"], check=True, text=True,
                         stdout=subprocess.PIPE, cwd=ROOT).stdout
    return json.loads(out.strip().splitlines()[-1])


# The cells' environment: capture is the variant's to choose, not the caller's.
ENV = {k: v for k, v in os.environ.items() if k != "BATCH_ALLOC_CAPTURE"}


def run_cell(path, program, variant, reps, size):
    cmd = [path, "program", program, variant, str(reps), str(size)]
    proc = subprocess.run(cmd, text=True, capture_output=True, cwd=ROOT, env=ENV)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def pairs(binaries, variants, wrapped_only):
    """The (binary, variant) cells of a program: the wrapped-only variants
    in the wrapped binaries alone."""
    return [(b, v) for b in binaries for v in variants
            if v not in wrapped_only or wrapped(b)]


def wrapped(binary):
    return binary.startswith("batch_")


def rounds(paths, programs, binaries, variants, wrapped_only, cfg):
    """{program: {binary: {variant: [row per round]}}}; each row is the
    JSON line of one process."""
    cells = {p["name"]: {b: {v: [] for v in variants} for b in binaries} for p in programs}
    for r in range(cfg["rounds"]):
        started = time.time()
        k = r % len(programs)
        for p in programs[k:] + programs[:k]:
            order = pairs(binaries, variants, wrapped_only)
            random.Random(f"{r}:{p['name']}").shuffle(order)
            for b, v in order:
                row = run_cell(paths[b], p["name"], v, cfg["reps"], p["size"])
                row["round"] = r
                row["load"] = suite.loadavg()
                cells[p["name"]][b][v].append(row)
        log(f"round {r + 1}/{cfg['rounds']} done in {time.time() - started:.0f} s")
    return cells


def check(cells):
    """Every cell of a program computes the same value and builds the same
    boxes; BatchAlloc is active exactly in the wrapped binaries; scopes
    capture everything except in the scoped_boxes cells."""
    problems = []
    for program, by_binary in cells.items():
        seen = {}
        for b, by_variant in by_binary.items():
            for v, rows in by_variant.items():
                for row in rows:
                    seen.setdefault((row["check"], row["boxes"]), []).append(f"{b}/{v}")
                    if row["batch_active"] != wrapped(b):
                        problems.append(f"{program} {b}: BatchAlloc active = {row['batch_active']}")
                    capture = "Boxes" if v == "scoped_boxes" else "All"
                    if row.get("capture", capture) != capture:
                        problems.append(f"{program} {b}/{v}: capture {row['capture']}")
        if len(seen) > 1:
            problems.append(f"{program}: cells disagree: {seen}")
    if problems:
        sys.exit("programs.py: " + "; ".join(problems))


def callgrind(paths, programs, binaries, variants, wrapped_only):
    """{program: {binary: {"baseline": n, variant: n}}}: instructions of
    one run, by difference with a process that makes no run."""
    if not shutil.which("valgrind"):
        log("valgrind not found: instruction counts skipped")
        return None
    out = {}
    for p in programs:
        started = time.time()
        for b in binaries:
            counts = {}
            mine = [v for _, v in pairs([b], variants, wrapped_only)]
            for v, reps in [(variants[0], 0)] + [(v, 1) for v in mine]:
                cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                       paths[b], "program", p["name"], v, str(reps), str(p["size"])]
                proc = subprocess.run(cmd, text=True, capture_output=True, cwd=ROOT, env=ENV)
                if proc.returncode != 0:
                    raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
                total = int(proc.stderr.split("Collected : ")[1].split()[0])
                counts["baseline" if reps == 0 else v] = total
            out.setdefault(p["name"], {})[b] = {
                v: counts[v] - counts["baseline"] for v in mine}
            out[p["name"]][b]["baseline"] = counts["baseline"]
        log(f"callgrind {p['name']}: done in {time.time() - started:.0f} s")
    return out


def report(results_path, args):
    cmd = [sys.executable, os.path.join(HERE, "programs_report.py"), results_path,
           "--doc", args.doc]
    subprocess.run(cmd, check=True, cwd=ROOT)


def pick(names, known, what):
    if not names:
        return list(known)
    chosen = names.split(",")
    unknown = [n for n in chosen if n not in known]
    if unknown:
        sys.exit(f"programs.py: unknown {what} {unknown}; known: {list(known)}")
    return [n for n in known if n in chosen]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--quick", action="store_true",
                    help="2 rounds of 2 runs per process, no callgrind")
    ap.add_argument("--rounds", type=int, help="rounds (default 5, quick 2)")
    ap.add_argument("--reps", type=int, help="runs per process (default 3, quick 2)")
    ap.add_argument("--programs", metavar="A,B", help="only these programs (default all)")
    ap.add_argument("--allocators", metavar="A,B",
                    help=f"only these binaries, of {','.join(BINARIES)} (default all)")
    ap.add_argument("--variants", metavar="A,B", help="only these variants (default all)")
    ap.add_argument("--size", action="append", default=[], metavar="PROGRAM=N",
                    help="another size for a program (its unit: `program list`)")
    ap.add_argument("--skip-callgrind", action="store_true")
    ap.add_argument("--note", help="a sentence for the top of the page (what this run is for)")
    ap.add_argument("--report-only", metavar="RESULTS",
                    help="rewrite the page from a results.json (or a run directory)")
    ap.add_argument("--doc", help="the page to write (default docs/programs.md; for a run "
                    "of a subset, --programs, --allocators or --variants, the run's directory)")
    args = ap.parse_args()
    os.chdir(ROOT)

    if args.report_only:
        args.doc = args.doc or "docs/programs.md"
        path = os.path.abspath(args.report_only)
        if os.path.isdir(path):
            path = os.path.join(path, "results.json")
        report(path, args)
        return

    cfg = dict(QUICK if args.quick else FULL)
    if args.rounds:
        cfg["rounds"] = args.rounds
    if args.reps:
        cfg["reps"] = args.reps
    if args.skip_callgrind:
        cfg["callgrind"] = False
    binaries = pick(args.allocators, BINARIES, "allocators")

    started = time.time()
    paths = suite.build(binaries)
    built = time.time()
    known = catalogue(paths[binaries[0]])
    variants = pick(args.variants, known["variants"], "variants")
    wrapped_only = [v for v in known.get("wrapped_only", []) if v in variants]
    names = pick(args.programs, [p["name"] for p in known["programs"]], "programs")
    programs = [dict(p) for p in known["programs"] if p["name"] in names]
    sizes = dict(s.split("=", 1) for s in args.size)
    for p in programs:
        if p["name"] in sizes:
            p["size"] = int(sizes.pop(p["name"]))
    if sizes:
        sys.exit(f"programs.py: --size for no selected program: {sorted(sizes)}")

    mode = "quick" if args.quick else "full"
    out = suite.run_dir("programs", mode)
    log(f"results in {out}")
    # A subset is an experiment: it leaves the committed page alone unless
    # told otherwise.
    subset = bool(args.programs or args.allocators or args.variants)
    if args.doc is None:
        args.doc = os.path.join(out, "programs.md") if subset else "docs/programs.md"

    command = "benches/suite/programs.sh " + shlex.join(sys.argv[1:])
    results = {
        "mode": mode,
        "command": command.strip(),
        "note": args.note,
        "config": cfg,
        "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "machine": suite.machine(),
        "load_start": suite.loadavg(),
        "binaries": {},
        "programs": programs,
        "variants": variants,
        "wrapped_only": wrapped_only,
    }
    for b in binaries:
        info = subprocess.run([paths[b], "info"], check=True, text=True,
                              stdout=subprocess.PIPE, cwd=ROOT).stdout
        results["binaries"][b] = json.loads(info.strip().splitlines()[-1])

    results["cells"] = rounds(paths, programs, binaries, variants, wrapped_only, cfg)
    check(results["cells"])
    measured = time.time()
    if cfg["callgrind"]:
        results["callgrind"] = callgrind(paths, programs, binaries, variants, wrapped_only)
    results["load_end"] = suite.loadavg()
    results["seconds"] = {"build": round(built - started), "rounds": round(measured - built),
                          "callgrind": round(time.time() - measured)}
    path = os.path.join(out, "results.json")
    with open(path, "w") as f:
        json.dump(results, f, indent=1)
    log(f"measured in {round(time.time() - built)} s; writing the report")
    report(path, args)
    log(f"wrote {args.doc}")


if __name__ == "__main__":
    main()
