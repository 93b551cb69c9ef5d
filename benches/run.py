#!/usr/bin/env python3
"""Runs every measurement of the project, and writes its page (through
benches/report.py, the one reader of the tools' output).

    python3 benches/run.py paths              # instructions per box (gungraun): docs/benchmarks.md
    python3 benches/run.py matrix [--rounds 9] [--quick] [CHUNK...]
                                              # the matrix (criterion), interleaved rounds: docs/benchmarks.md
    python3 benches/run.py crates [ARGS]      # published crates, threads, the limit: docs/crates.md
                                              # (benches/crates/crates.py ARGS; --help lists them)
    python3 benches/run.py suites [ARGS]      # published crates' own test suites: docs/crate-suites.md
    python3 benches/run.py policy             # the allocation-policy study: docs/policy-results.md

What is the project's own here: interleaving rounds on a noisy machine
(the matrix's chunks and the crates' builds in rotating or shuffled order),
peak RSS (the crates' processes report getrusage), annotating published
crates and the warm-arena limit (benches/crates). The rest is the tools':
gungraun counts instructions, criterion times and keeps each round as a
baseline (`critcmp --target-dir target r0 r1` compares two), hyperfine
times processes and exports JSON. Standard library only.
"""
import json
import os
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
PATHS = ["paths_batch_system", "paths_system", "paths_batch_mimalloc", "paths_mimalloc"]
MATRIX = ["matrix_system", "matrix_mimalloc", "matrix_jemalloc", "matrix_batch_system", "matrix_batch_mimalloc"]
# Each chunk (a regex criterion matches against `SCENARIO/SIZE/STRATEGY/N`)
# runs in every binary in turn.
CHUNKS = [f"{s}/{b}B/" for s in ("alloc_drop", "alloc_only", "cross_thread") for b in (16, 64, 256)] + [
    "remote_drop/64B/"]
# 64-byte objects at the counts every size has, 16 and 256 bytes at 1,024,
# and across threads.
QUICK = ["alloc_drop/64B/[^/]+/(1|8|64|1024|65536)$", "alloc_drop/(16|256)B/[^/]+/1024$", "cross_thread/64B/",
         "remote_drop/64B/"]
# criterion's settings for one round: short, since the rounds make the median.
CRITERION = ["--warm-up-time", "0.2", "--measurement-time", "0.4", "--sample-size", "10", "--noplot"]


def log(msg):
    print(f"[run {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def sh(cmd, **kw):
    log(" ".join(cmd))
    subprocess.run(cmd, cwd=ROOT, check=True, **kw)


def report(*args):
    sh([sys.executable, os.path.join(ROOT, "benches", "report.py"), *args])


def bench_executables(names):
    """Builds the bench targets `names` and returns {name: executable}."""
    cmd = ["cargo", "bench", "-p", "batch-alloc-benches", "--no-run", "--message-format=json"]
    for n in names:
        cmd += ["--bench", n]
    out = subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.PIPE, text=True).stdout
    exes = {}
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("executable") and msg["target"]["name"] in names:
            exes[msg["target"]["name"]] = msg["executable"]
    return exes


def paths(args):
    """Every paths binary under gungraun; its runner must be the library's
    version (`cargo install gungraun-runner --version 0.20.0`)."""
    for name in PATHS:
        sh(["cargo", "bench", "-p", "batch-alloc-benches", "--bench", name, "--", "--save-summary=json", *args])
    report("--benchmarks")


def matrix(args):
    rounds, chunks, i = 9, CHUNKS, 0
    while i < len(args):
        if args[i] == "--rounds":
            rounds, i = int(args[i + 1]), i + 2
        elif args[i] == "--quick":
            chunks, i = QUICK, i + 1
        else:
            chunks, i = args[i:], len(args)
    exes = bench_executables(MATRIX)
    started = time.time()
    for r in range(rounds):
        for k, chunk in enumerate(chunks):
            # Each chunk runs in every binary, one after the other, the
            # first a different one each round and chunk.
            shift = (r + k) % len(MATRIX)
            for name in MATRIX[shift:] + MATRIX[:shift]:
                subprocess.run([exes[name], "--bench", "--save-baseline", f"r{r}", *CRITERION, f"^{chunk}"],
                               cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        log(f"round {r + 1}/{rounds} in {time.time() - started:.0f} s")
    os.environ["MATRIX_ARGS"] = "".join(f" {a}" for a in args)
    report("--benchmarks")


def policy(_args):
    """The policy study in its four builds (the study's cfg, plus the page
    and span cfgs), each in a target directory of its own."""
    builds = ["", "--cfg batch_alloc_small_spans", "--cfg batch_alloc_page_4k",
              "--cfg batch_alloc_page_4k --cfg batch_alloc_small_spans"]

    def study(cfgs, section):
        env = dict(os.environ, RUSTFLAGS=f"--cfg batch_alloc_policy_study {cfgs}".strip(),
                   CARGO_TARGET_DIR=os.path.join(ROOT, "target", "policy" + cfgs.replace("--cfg batch_alloc_", "-")
                                                 .replace(" ", "")))
        return subprocess.run(["cargo", "bench", "-q", "-p", "batch-alloc-benches", "--bench", "policy", "--",
                               section], cwd=ROOT, env=env, check=True, stdout=subprocess.PIPE, text=True).stdout

    rustc = subprocess.run(["rustc", "--version"], stdout=subprocess.PIPE, text=True).stdout.strip()
    out = ["# Allocation policy: measured tables", "",
           f"Generated by `python3 benches/run.py policy` on {time.strftime('%Y-%m-%d')}, {rustc},",
           f"{os.cpu_count()} cores. Times are medians of 7 runs on a machine shared with",
           "other work: read them as ratios. Counts (refills, slots, bytes) are exact.", "",
           study("", "reserve"), study("", "classes")]
    for cfgs in builds:
        out += [f"### Build: {cfgs or 'default (8 KiB pages, 64 KiB spans)'}", "", study(cfgs, "spans")]
        if cfgs == "--cfg batch_alloc_small_spans":
            out.append(study(cfgs, "classes"))
    with open(os.path.join(ROOT, "docs", "policy-results.md"), "w") as f:
        f.write("\n".join(out))
    log("wrote docs/policy-results.md")


def crates(args, tests_only=False):
    sh([sys.executable, os.path.join(ROOT, "benches", "crates", "crates.py"),
        *(["--tests-only"] if tests_only else []), *args])


def main():
    commands = {"paths": paths, "matrix": matrix, "crates": crates, "policy": policy,
                "suites": lambda a: crates(a, tests_only=True)}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        sys.exit(__doc__)
    commands[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    main()
