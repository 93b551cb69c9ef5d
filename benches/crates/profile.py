#!/usr/bin/env python3
"""Profiling for the crates harness: where the annotated builds' time goes.

    python3 benches/crates/profile.py variant nothp [--rev HEAD]
        a scratch copy of the runtime (a git-archive snapshot under
        target/crates/facade/) with the patches of VARIANTS applied; prints
        the directory, to pass to `run.sh --facade DIR`
    python3 benches/crates/profile.py callgrind [--workloads A,B] [--builds A,B]
        callgrind of one `once` process per build (symbols and line tables:
        the harness builds with debug = "line-tables-only"), outputs kept in
        target/crates/profile/, and the top functions of each by exclusive
        instructions, with the allocator's share
    python3 benches/crates/profile.py phases [--workloads A,B] [--builds A,B] [--cache-sim]
        one callgrind run per build that dumps its counts as the reported
        parse starts and as its drop starts: instructions of each phase by
        category (the allocator's against the program's), and with
        --cache-sim the simulated D1 and last-level misses of each phase

Variants (comma-separated, composable), applied to a copy of the runtime
only; nothing under rt/ in the repository changes:

- `nothp`: the region is not advised for huge pages (the runtime advises
  all of it at reservation);
- `refillspan`: a run's first refill takes its whole span;
- `nodecay`: empty frames are never decommitted (the resident pool has no
  limit);
- `populate`: each commit is followed by MADV_POPULATE_WRITE of what it
  made usable (pre-faults 4 MiB at a time).
Standard library only.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import crates  # noqa: E402

# (file, anchor, replacement): the anchor must occur exactly once.
PATCHES = {
    "nothp": [
        ("src/region.rs", """    unsafe { os::advise_huge_pages(aligned, META_BYTES + REGION_BYTES) };""",
         """    let _ = aligned; // profile.py variant nothp: no huge-page advice"""),
    ],
    # A run's first refill takes its whole span (not FIRST_REFILL slots,
    # doubling).
    "refillspan": [
        ("src/runs.rs", """        0 => FIRST_REFILL as u32,""",
         """        0 => span_slots, // profile.py variant refillspan"""),
        ("src/runs.rs", """use crate::config::{FIRST_REFILL, MAX_SMALL_SIZE};""",
         """use crate::config::MAX_SMALL_SIZE;"""),
    ],
    "nodecay": [
        ("src/config.rs", "pub const POOL_RESIDENT_FRAMES: usize = 512;",
         "pub const POOL_RESIDENT_FRAMES: usize = 1 << 20;"),
    ],
    # No change: a second work directory for builds that differ only in
    # how they are compiled (e.g. CARGO_PROFILE_RELEASE_PANIC=abort).
    "copy": [],
    "populate": [
        ("src/os.rs", """        unsafe { libc::mprotect(start.cast(), len, libc::PROT_READ | libc::PROT_WRITE) == 0 }""",
         """        let ok = unsafe { libc::mprotect(start.cast(), len, libc::PROT_READ | libc::PROT_WRITE) == 0 };
        if ok {
            // MADV_POPULATE_WRITE (23): fault the range in now.
            unsafe { libc::madvise(start.cast(), len, 23) };
        }
        ok"""),
    ],
}


def make_variant(rev, variants):
    base = crates.resolve_facade(rev)
    key = f"{open(os.path.join(base, '.complete')).read().strip()}+{'+'.join(variants)}"
    dest = os.path.join(crates.SCRATCH, "facade", key)
    patches = [p for v in variants for p in PATCHES[v]]
    stamp = json.dumps(patches)
    done = os.path.join(dest, ".complete")
    if os.path.exists(done) and open(os.path.join(dest, ".patches")).read() == stamp:
        return dest
    if os.path.exists(dest):
        shutil.rmtree(dest)
    shutil.copytree(base, dest)
    for path, anchor, replacement in patches:
        full = os.path.join(dest, "rt", path)
        text = open(full).read()
        if text.count(anchor) != 1:
            sys.exit(f"profile.py: anchor found {text.count(anchor)} times in rt/{path}:\n{anchor}")
        text = text.replace(anchor, replacement)
        open(full, "w").write(text)
    open(os.path.join(dest, ".patches"), "w").write(stamp)
    open(done, "w").write(key)
    return dest


# Where an instruction's source line is: the category callgrind's line
# tables put it in (first match wins). Inlined code counts where it was
# written, so a scope guard inlined into a parser function counts as
# `rt/src/scope.rs`.
CATEGORIES = [
    ("batch-alloc: scope guards (scope.rs)", re.compile(r"/rt/src/scope\.rs:")),
    ("batch-alloc: allocation (global, runs, class, reserve, heap, link)",
     re.compile(r"/rt/src/(global|runs|class|reserve|heap|link|batch|growth|types)\.rs:")),
    ("batch-alloc: free (free, queues, outbox, remote)", re.compile(r"/rt/src/(free|queues|outbox|remote)\.rs:")),
    ("batch-alloc: region, os, sync, records", re.compile(r"/rt/src/(region|os|sync|record|stats|settings|fatal)\.rs:")),
    ("batch-alloc: facade and macro helpers", re.compile(r"/(src/lib\.rs|src/report\.rs):.*batch_alloc")),
    ("the limit's allocator (limit.rs)", re.compile(r"/src/limit\.rs:")),
    ("mimalloc", re.compile(r"libmimalloc-sys|mimalloc/v[23]/|:_?mi_\w+$")),
    ("glibc malloc", re.compile(r"(malloc/|/malloc\.c|arena\.c|hooks\.c):|:(_int_malloc|_int_free|malloc|free|cfree|realloc|_int_realloc|calloc|"
                                r"unlink_chunk[\w.]*|malloc_consolidate|tcache\w*|sysmalloc|_int_free_\w+|__libc_\w+|"
                                r"malloc_printerr|mremap_chunk|__GI_\w*alloc\w*) ")),
    ("memcpy/memmove", re.compile(r"mem(move|cpy)[\w-]*\.S:|:__mem(move|cpy)")),
    ("memset", re.compile(r"memset[\w-]*\.S:")),
    ("kernel entry, loader, libc other", re.compile(r"(/elf/|dl-|ld-linux|rtld|/sysdeps/|/libio/|/stdlib/|/nptl/)")),
]
OTHER = "the program (parser, std, serde, ...)"
ALLOCATOR_CATEGORIES = {name for name, _ in CATEGORIES
                        if name.startswith("batch-alloc") or name in ("mimalloc", "glibc malloc")
                        or name.startswith("the limit")}


# The allocator by function rather than by source line: the entry points
# (whatever they inline, core's helpers included), batch-alloc's runtime,
# mimalloc, glibc's malloc and the limit.
ALLOCATOR_FN = re.compile(r":(__rustc::__rust_(alloc|dealloc|realloc|alloc_zeroed)|__rdl_\w+|__rg_\w+|"
                          r"batch_alloc_rt::.*|_?mi_\w+|\w*limit::.*|<\w+::alloc::limit::Limit .*|"
                          r"_int_malloc|_int_free\w*|malloc|free|cfree|realloc|_int_realloc|calloc|"
                          r"unlink_chunk[\w.]*|malloc_consolidate|tcache\w*|sysmalloc|__libc_\w+)( |$)")


def categorize(entry):
    for name, pattern in CATEGORIES:
        if pattern.search(entry):
            return name
    return OTHER


def annotate(out):
    """(total, [(instructions, entry)]) of a callgrind output, exclusive
    per file:function."""
    ann = subprocess.run(["callgrind_annotate", "--inclusive=no", "--threshold=100", "--auto=no", out],
                         capture_output=True, text=True).stdout
    open(out + ".txt", "w").write(ann)
    fns = []
    total = None
    for line in ann.splitlines():
        m = re.match(r"^\s*([\d,]+)\s+(\(\s*[\d.]+%\)\s+)?(.*)$", line)
        if not m:
            continue
        n = int(m.group(1).replace(",", ""))
        what = m.group(3)
        if "PROGRAM TOTALS" in what:
            total = n
        elif ":" in what:
            # Drop the binary in brackets: its name says which allocator.
            fns.append((n, re.sub(r"\s*\[[^\]]*\]\s*$", "", what)))
    return total, fns


def by_function(fns):
    """Instructions per function name, wherever its lines were written."""
    out = {}
    for n, what in fns:
        name = what.split(":", 1)[1] if ":" in what else what
        out[name] = out.get(name, 0) + n
    return sorted(((n, f) for f, n in out.items()), reverse=True)


def callgrind(args):
    facade = crates.resolve_facade(args.facade or "HEAD")
    work = crates.work_dir(facade)
    inputs = json.load(open(os.path.join(crates.SCRATCH, "results", "latest", "results.json")))["inputs"]
    out_dir = os.path.join(crates.SCRATCH, "profile", "callgrind-" + os.path.basename(work))
    os.makedirs(out_dir, exist_ok=True)
    summary = {}
    for w, info in inputs.items():
        if args.workloads and w not in args.workloads.split(","):
            continue
        for b in args.builds.split(","):
            binary = os.path.join(work, "bin", crates.package_name(info["project"], b))
            out = os.path.join(out_dir, f"{w}-{b}-{args.mode}.callgrind")
            if not (args.reuse and os.path.exists(out)):
                cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
                cmd += [binary, args.mode, w, info["input"]]
                subprocess.run(cmd, capture_output=True, text=True, check=True)
            total, fns = annotate(out)
            cats = {}
            for n, what in fns:
                c = categorize(what)
                cats[c] = cats.get(c, 0) + n
            top = by_function(fns)[:args.top]
            summary.setdefault(w, {})[b] = dict(total=total, categories=cats, top=top)
            print(f"== {w} {b} {args.mode}: {total / 1e6:,.1f} M instructions", flush=True)
            for c, n in sorted(cats.items(), key=lambda kv: -kv[1]):
                print(f"   {n / 1e6:9.2f} M  {100 * n / total:5.1f}%  {c}")
            print("   top functions (exclusive, lines inlined into them included):")
            for n, f in top:
                print(f"   {n / 1e6:9.2f} M  {f[:160]}")
    json.dump(summary, open(os.path.join(out_dir, f"summary-{args.mode}.json"), "w"), indent=1)
    print(f"written {out_dir}")


def phases(args):
    """Per build and per phase (the reported parse; its drop and the exit
    after it): instructions, by category as `callgrind` (exclusive costs,
    inlined lines where they were written), and with --cache-sim the
    simulated D1 and LL misses. One callgrind run per
    build, dumping its counts as it enters each phase's function
    (workloads/common.rs): part 2 is the parse; the last part, written at
    exit under the plain name, the drop and the process's exit (which frees
    little more than the input)."""
    facade = crates.resolve_facade(args.facade or "HEAD")
    work = crates.work_dir(facade)
    inputs = json.load(open(os.path.join(crates.SCRATCH, "results", "latest", "results.json")))["inputs"]
    out_dir = os.path.join(crates.SCRATCH, "profile", "phases-" + os.path.basename(work))
    os.makedirs(out_dir, exist_ok=True)
    summary = {}
    for w, info in inputs.items():
        if args.workloads and w not in args.workloads.split(","):
            continue
        for b in args.builds.split(","):
            binary = os.path.join(work, "bin", crates.package_name(info["project"], b))
            base = os.path.join(out_dir, f"{w}-{b}-{args.mode}{'-cache' if args.cache_sim else ''}.callgrind")
            if not (args.reuse and os.path.exists(base + ".2")):
                for old in (base, base + ".1", base + ".2"):
                    if os.path.exists(old):
                        os.remove(old)
                cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={base}",
                       "--dump-before=*common::reported_parse*", "--dump-before=*common::reported_drop*"]
                if args.cache_sim:
                    # The machine's L1d and last level (valgrind's guess on
                    # this host is a 256 MiB direct-mapped LL).
                    cmd += ["--cache-sim=yes", f"--D1={args.d1}", f"--LL={args.ll}"]
                cmd += [binary, args.mode, w, info["input"]]
                subprocess.run(cmd, capture_output=True, text=True, check=True)
            for phase, out in (("parse", base + ".2"), ("drop", base)):
                totals = None
                events = None
                for line in open(out):
                    if line.startswith("events:"):
                        events = line.split()[1:]
                    if line.startswith("totals:") or line.startswith("summary:"):
                        totals = dict(zip(events, map(int, line.split()[1:])))
                _, fns = annotate(out)
                cats = {}
                # The frames on the stack at a dump (main, the driver) are
                # listed with the whole part's cost: not exclusive costs.
                fns = [(n, what) for n, what in fns if n < 0.99 * totals["Ir"]]
                for n, what in fns:
                    c = categorize(what)
                    cats[c] = cats.get(c, 0) + n
                # The allocator: its functions (what they inline included)
                # and its source lines wherever they were inlined (a free
                # inlined into drop glue).
                by_fn = {"allocator": 0, "memcpy/memmove": 0, "other": 0}
                for n, what in fns:
                    if ALLOCATOR_FN.search(what) or categorize(what) in ALLOCATOR_CATEGORIES:
                        by_fn["allocator"] += n
                    elif re.search(r":__mem(move|cpy)", what):
                        by_fn["memcpy/memmove"] += n
                    else:
                        by_fn["other"] += n
                cell = dict(totals=totals, categories=cats, by_function=by_fn)
                summary.setdefault(w, {}).setdefault(b, {})[phase] = cell
                ir = totals["Ir"]
                line = f"{w} {b:15} {phase:5}: {ir / 1e6:9.1f} M Ir"
                if args.cache_sim and "D1mr" in totals:
                    d1 = totals["D1mr"] + totals["D1mw"]
                    ll = totals["DLmr"] + totals["DLmw"]
                    line += (f"; D1 misses {d1 / 1e6:.2f} M (reads {totals['D1mr'] / 1e6:.2f}, writes "
                             f"{totals['D1mw'] / 1e6:.2f}), LL misses {ll / 1e6:.2f} M")
                line += "; by function: " + ", ".join(f"{k} {v / 1e6:.1f} M" for k, v in by_fn.items())
                print(line, flush=True)
                for c, n in sorted(cats.items(), key=lambda kv: -kv[1]):
                    if n > 0.2e6:
                        print(f"      {n / 1e6:9.2f} M  {100 * n / ir:5.1f}%  {c}")
    path = os.path.join(out_dir, f"summary-{args.mode}{'-cache' if args.cache_sim else ''}.json")
    json.dump(summary, open(path, "w"), indent=1)
    print(f"written {path}")


def compare(args):
    """Runs the builds of several facades (variants) interleaved, `reps`
    rounds, and prints medians: the A/B of a runtime change."""
    import statistics
    facades = [crates.resolve_facade(f) for f in args.facades.split(",")]
    inputs = json.load(open(os.path.join(crates.SCRATCH, "results", "latest", "results.json")))["inputs"]
    cells = {}
    order = []
    for w, info in inputs.items():
        if args.workloads and w not in args.workloads.split(","):
            continue
        for f in facades:
            for b in args.builds.split(","):
                if b in ("glibc", "mimalloc") and f != facades[0]:
                    continue
                binary = os.path.join(crates.work_dir(f), "bin", crates.package_name(info["project"], b))
                for mode in args.modes.split(","):
                    order.append((w, os.path.basename(f), b, mode, binary, info["input"]))
    import random
    for r in range(args.reps):
        random.Random(r).shuffle(order)
        for w, f, b, mode, binary, inp in order:
            proc = subprocess.run([binary, mode, w, inp], capture_output=True, text=True,
                                  env=dict(os.environ, CRATES_SMAPS="1"))
            row = json.loads(proc.stdout.strip().splitlines()[-1])
            cells.setdefault((w, mode, f, b), []).append(row)
    med = statistics.median
    last = None
    for (w, mode, f, b), rows in sorted(cells.items()):
        if (w, mode) != last:
            print(f"== {w} {mode} ({args.reps} runs each, medians)")
            last = (w, mode)
        huge = [r["smaps"]["anon_huge_kb"] for r in rows if r.get("smaps")]
        print(f"   {f[:28]:28} {b:15} parse {med([r['parse_ns'] for r in rows]) / 1e6:7.1f} ms  "
              f"drop {med([r['drop_ns'] for r in rows]) / 1e6:6.1f} ms  total {med([r['total_ns'] for r in rows]) / 1e6:7.1f} ms  "
              f"faults parse {med([r['minflt_parse'] for r in rows]):8,.0f} process {med([r['minflt'] for r in rows]):8,.0f}  "
              f"user {med([r['utime_us'] for r in rows]) / 1e3:5.0f} sys {med([r['stime_us'] for r in rows]) / 1e3:4.0f} ms  "
              f"rss {med([r['maxrss_kb'] for r in rows]) / 1024:6.1f} MiB  thp {med(huge) / 1024 if huge else 0:6.1f} MiB",
              flush=True)


PROGRAM_CELLS = [("system", "plain"), ("mimalloc", "plain"), ("batch_system", "attr"),
                 ("batch_mimalloc", "attr")]


def programs(args):
    """The project's own programs (benches/suite/real.rs, through the suite
    binaries of a build of the benches package): callgrind of one run (a
    process with REPS 1 less one with REPS 0) by category, and, natively,
    minor faults of the first run and of a warm run (from processes with
    REPS 0, 1 and 5) and times."""
    import statistics
    bins = os.path.abspath(args.bins)
    cwd = args.cwd
    out_dir = os.path.join(crates.SCRATCH, "profile", "programs-" + os.path.basename(bins))
    os.makedirs(out_dir, exist_ok=True)
    summary = {}
    for prog in args.programs.split(","):
        for binary, variant in PROGRAM_CELLS:
            path = os.path.join(bins, f"suite_{binary}")
            cell = summary.setdefault(prog, {}).setdefault(binary, {})
            if args.callgrind:
                totals = {}
                cats = {}
                for reps in (0, 1):
                    out = os.path.join(out_dir, f"{prog}-{binary}-{variant}-r{reps}.callgrind")
                    if not (args.reuse and os.path.exists(out)):
                        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                                        path, "program", prog, variant, str(reps)],
                                       capture_output=True, text=True, check=True, cwd=cwd)
                    total, fns = annotate(out)
                    totals[reps] = total
                    cats[reps] = {}
                    for n, what in fns:
                        c = categorize(what)
                        cats[reps][c] = cats[reps].get(c, 0) + n
                cell["instructions"] = totals[1] - totals[0]
                cell["categories"] = {c: cats[1].get(c, 0) - cats[0].get(c, 0)
                                      for c in set(cats[1]) | set(cats[0])}
            native = {}
            for reps in (0, 1, 5):
                rows = []
                for _ in range(args.reps):
                    proc = subprocess.run(["/usr/bin/time", "-f", "TIME %R %M %U %S", path, "program",
                                           prog, variant, str(reps)],
                                          capture_output=True, text=True, check=True, cwd=cwd)
                    t = [l for l in proc.stderr.splitlines() if l.startswith("TIME ")][-1].split()[1:]
                    row = json.loads(proc.stdout.strip().splitlines()[-1])
                    row["minflt"], row["maxrss_kb"] = int(t[0]), int(t[1])
                    row["user_s"], row["sys_s"] = float(t[2]), float(t[3])
                    rows.append(row)
                native[reps] = rows
            med = statistics.median
            f0 = med([r["minflt"] for r in native[0]])
            f1 = med([r["minflt"] for r in native[1]])
            f5 = med([r["minflt"] for r in native[5]])
            cell["faults_first_run"] = f1 - f0
            cell["faults_warm_run"] = (f5 - f1) / 4
            cell["first_run_ms"] = med([r["times_ms"][0] for r in native[1]])
            cell["warm_run_ms"] = med([r["times_ms"][4] for r in native[5]])
            cell["peak_rss_kb"] = med([r["maxrss_kb"] for r in native[1]])
            cell["sys_s"] = {k: med([r["sys_s"] for r in v]) for k, v in native.items()}
            line = (f"{prog:8} {binary:15} {variant:6} first run {cell['first_run_ms']:7.1f} ms, warm {cell['warm_run_ms']:7.1f} ms; "
                    f"faults first run {cell['faults_first_run']:8,.0f}, warm run {cell['faults_warm_run']:8,.0f}; "
                    f"peak RSS {cell['peak_rss_kb'] / 1024:6.1f} MiB")
            if "instructions" in cell:
                line += f"; instructions {cell['instructions'] / 1e6:,.1f} M"
            print(line, flush=True)
            if "instructions" in cell:
                for c, n in sorted(cell["categories"].items(), key=lambda kv: -kv[1]):
                    if abs(n) > 0.5e6:
                        print(f"      {n / 1e6:9.2f} M  {c}")
    path = os.path.join(out_dir, "summary.json")
    json.dump(summary, open(path, "w"), indent=1)
    print(f"written {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    sub = ap.add_subparsers(dest="cmd", required=True)
    v = sub.add_parser("variant")
    v.add_argument("variants")
    v.add_argument("--rev", default="HEAD")
    cg = sub.add_parser("callgrind")
    cg.add_argument("--facade")
    cg.add_argument("--workloads")
    cg.add_argument("--builds", default="glibc,mimalloc,batch_system,batch_mimalloc")
    cg.add_argument("--mode", default="once")
    cg.add_argument("--top", type=int, default=25)
    cg.add_argument("--reuse", action="store_true", help="annotate outputs already there")
    pg = sub.add_parser("programs")
    pg.add_argument("--bins", required=True, help="a directory of suite_{system,mimalloc,batch_system,batch_mimalloc}")
    pg.add_argument("--cwd", default=crates.ROOT)
    pg.add_argument("--programs", default="stmt,expr,records")
    pg.add_argument("--reps", type=int, default=3)
    pg.add_argument("--callgrind", action="store_true")
    pg.add_argument("--reuse", action="store_true")
    ph = sub.add_parser("phases")
    ph.add_argument("--facade")
    ph.add_argument("--workloads")
    ph.add_argument("--builds", default="glibc,mimalloc,scope_mimalloc,limit")
    ph.add_argument("--mode", default="once")
    ph.add_argument("--cache-sim", action="store_true")
    ph.add_argument("--d1", default="32768,8,64", help="size,assoc,line of the simulated L1d")
    ph.add_argument("--ll", default="33554432,16,64", help="size,assoc,line of the simulated last level")
    ph.add_argument("--reuse", action="store_true")
    cp = sub.add_parser("compare")
    cp.add_argument("--facades", required=True, help="comma-separated: revisions or directories")
    cp.add_argument("--workloads")
    cp.add_argument("--builds", default="mimalloc,batch_system,batch_mimalloc")
    cp.add_argument("--modes", default="once,warm")
    cp.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    if args.cmd == "compare":
        compare(args)
        return
    if args.cmd == "phases":
        phases(args)
        return
    if args.cmd == "programs":
        programs(args)
        return
    if args.cmd == "variant":
        print(make_variant(args.rev, args.variants.split(",")))
    else:
        callgrind(args)


if __name__ == "__main__":
    main()
