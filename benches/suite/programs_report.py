#!/usr/bin/env python3
"""Writes docs/programs.md (the real-programs table) from a programs.py run.

    programs_report.py RESULTS_JSON [--doc docs/programs.md] [--readme README.md]

RESULTS_JSON is target/programs/<run>/results.json or a copy of it; the
page keeps a copy beside itself (docs/programs.json), so
`benches/suite/programs.sh --report-only docs/programs.json` rewrites it.
With --readme, also rewrites the README's text between
`<!-- programs:begin -->` and `<!-- programs:end -->`. Standard library
only.
"""
import argparse
import os
import shlex
import statistics

from report import load_results, machine_rows, splice, spread_text, table, verdict_at_least

README_MARKERS = ("<!-- programs:begin -->", "<!-- programs:end -->")

ALLOCATOR = {
    "system": "glibc",
    "mimalloc": "mimalloc",
    "jemalloc": "jemalloc",
    "batch_system": "BatchAlloc&lt;System>",
    "batch_mimalloc": "BatchAlloc&lt;MiMalloc>",
}
# What each wrapped binary wraps: the allocator its figures are compared with.
INNER = {"batch_system": "system", "batch_mimalloc": "mimalloc"}
VARIANT = {"plain": "as written", "attr": "`#[batch_alloc]`",
           "boxes": "`#[batch_alloc(boxes)]`"}
PLAIN = "plain"

# Issue 12's targets, for annotated code: which programs each speaks of.
DESERIALIZERS = ["records", "tree"]
PARSERS = ["expr", "stmt"]


RUNNING = """\
benches/suite/programs.sh            # full: 5 rounds of 3 runs per process, callgrind (about 18 minutes on 2 cores: 6 of rounds, 12 of callgrind; plus the build)
benches/suite/programs.sh --quick    # 2 rounds of 2 runs, no callgrind (about 1 minute, plus the build)
benches/suite/programs.sh --programs expr,stmt --allocators system,mimalloc,batch_system --quick
benches/suite/programs.sh --size stmt=1000000 --rounds 3 --skip-callgrind
benches/suite/programs.sh --report-only docs/programs.json   # rewrite this page and the README's section\
"""


class Run:
    """The figures of one programs.py run."""

    def __init__(self, results):
        self.r = results
        self.cells = results["cells"]
        self.cg = results.get("callgrind") or {}
        self.programs = [p["name"] for p in results["programs"]]
        self.variants = results["variants"]
        self.annotated = [v for v in self.variants if v != PLAIN]
        self.binaries = list(results["binaries"])

    def each_cell(self):
        return [(p, b, v) for p in self.programs for b in self.binaries for v in self.variants]

    def rows(self, p, b, v):
        return (self.cells.get(p, {}).get(b, {}).get(v)) or []

    def times(self, p, b, v):
        """Per round: the median of the process's runs, in ms."""
        return [statistics.median(r["times_ms"]) for r in self.rows(p, b, v)]

    def first(self, p, b, v):
        return [r["times_ms"][0] for r in self.rows(p, b, v)]

    def time(self, p, b, v):
        t = self.times(p, b, v)
        return statistics.median(t) if t else None

    def peak(self, p, b, v):
        peaks = [r["peak_first_kib"] for r in self.rows(p, b, v) if r.get("peak_first_kib")]
        return statistics.median(peaks) if peaks else None

    def rss_before(self, p, b, v):
        rss = [r["rss_before_kib"] for r in self.rows(p, b, v) if r.get("rss_before_kib")]
        return statistics.median(rss) if rss else None

    def instructions(self, p, b, v):
        return self.cg.get(p, {}).get(b, {}).get(v)

    def counters(self, p, b, v):
        """The runtime's counters per run (stats() after less before, over
        the runs): boxes from batches, refills, and whatever it adds."""
        rows = self.rows(p, b, v)
        if not rows:
            return {}
        row = rows[0]
        reps = max(1, row["reps"])
        keep = ("batched_boxes", "reserve_calls")
        return {k: (row["stats_after"][k] - row["stats_before"].get(k, 0)) / reps
                for k in row["stats_after"]
                if k in keep or "captur" in k}

    def boxes(self, p):
        for b in self.binaries:
            for v in self.variants:
                for r in self.rows(p, b, v):
                    return r["boxes"]
        return None

    def speedup(self, p, base, new):
        """How many times faster `new` (binary, variant) runs than `base`:
        median over rounds of base / median of new, and the lowest and
        highest of the per-round ratios (a round runs both minutes apart
        at most)."""
        tb, tn = self.times(p, *base), self.times(p, *new)
        if not tb or not tn:
            return None
        per = [b / n for b, n in zip(tb, tn)]
        return statistics.median(tb) / statistics.median(tn), min(per), max(per)

    def fewer(self, p, base, new):
        """base's instructions over new's."""
        ib, i_n = self.instructions(p, *base), self.instructions(p, *new)
        return ib / i_n if ib and i_n else None

    def more_pct(self, p, base, new, of):
        """How much more `new` has than `base`, in %, of a measure."""
        a, b = of(p, *base), of(p, *new)
        return 100 * (b / a - 1) if a and b else None


def fmt_ms(ms):
    return "–" if ms is None else f"{ms:.1f} ms" if ms < 100 else f"{ms:.0f} ms"


def fmt_x(r, ranges=True):
    if r is None:
        return "–"
    if isinstance(r, tuple):
        text = f"{r[0]:.2f}x"
        return f"{text} ({r[1]:.2f}–{r[2]:.2f})" if ranges else text
    return f"{r:.2f}x"


def fmt_pct(x):
    return "–" if x is None else f"{x:+.1f}%"


def fmt_mi(n):
    return "–" if n is None else f"{n / 1e6:,.0f} M" if n >= 1e8 else f"{n / 1e6:,.1f} M"


def fmt_mib(kib):
    return "–" if kib is None else f"{kib / 1024:.1f} MiB"


def name(p, v, run):
    """A program's row label; the twin's name too where there are several."""
    return p if len(run.annotated) == 1 else f"{p}, {VARIANT.get(v, v)}"


def comparison_table(run, v, value, ratio, fmt_value, sign):
    """The annotated twin `v` on both wrappers against every allocator as
    written: `value(p, binary, variant)` shown with `fmt_value`, and
    `ratio(p, base, new)` (how many times better `new` is) after `sign`."""
    twin = VARIANT.get(v, v)
    header = ["program", "glibc, as written", f"{twin} on BatchAlloc&lt;System>",
              f"{sign} vs glibc", f"{sign} vs mimalloc", f"{sign} vs jemalloc",
              f"{twin} on BatchAlloc&lt;MiMalloc>", f"{sign} vs mimalloc",
              f"{sign} vs as written, BatchAlloc&lt;System>",
              f"{sign} vs as written, BatchAlloc&lt;MiMalloc>"]
    rows = []
    for p in run.programs:
        bs, bm = ("batch_system", v), ("batch_mimalloc", v)
        rows.append([
            name(p, v, run), fmt_value(value(p, "system", PLAIN)), fmt_value(value(p, *bs)),
            fmt_x(ratio(p, ("system", PLAIN), bs)),
            fmt_x(ratio(p, ("mimalloc", PLAIN), bs)),
            fmt_x(ratio(p, ("jemalloc", PLAIN), bs)),
            fmt_value(value(p, *bm)),
            fmt_x(ratio(p, ("mimalloc", PLAIN), bm)),
            fmt_x(ratio(p, ("batch_system", PLAIN), bs)),
            fmt_x(ratio(p, ("batch_mimalloc", PLAIN), bm)),
        ])
    return table(header, rows)


def memory_table(run, v):
    header = ["program", "input", "glibc, as written", f"BatchAlloc&lt;System>, {VARIANT.get(v, v)}",
              "vs glibc", "mimalloc, as written", f"BatchAlloc&lt;MiMalloc>, {VARIANT.get(v, v)}",
              "vs mimalloc", "jemalloc, as written"]
    rows = []
    for p in run.programs:
        bs, bm = ("batch_system", v), ("batch_mimalloc", v)
        rows.append([
            name(p, v, run), input_text(run, p),
            fmt_mib(run.peak(p, "system", PLAIN)), fmt_mib(run.peak(p, *bs)),
            fmt_pct(run.more_pct(p, ("system", PLAIN), bs, run.peak)),
            fmt_mib(run.peak(p, "mimalloc", PLAIN)), fmt_mib(run.peak(p, *bm)),
            fmt_pct(run.more_pct(p, ("mimalloc", PLAIN), bm, run.peak)),
            fmt_mib(run.peak(p, "jemalloc", PLAIN)),
        ])
    return table(header, rows)


def input_text(run, p):
    for b in run.binaries:
        for v in run.variants:
            for r in run.rows(p, b, v):
                return f"{r['input_bytes'] / 1e6:.1f} MB" if r["input_bytes"] else "none"
    return "–"


def wrapper_table(run):
    header = ["program", "instructions: BatchAlloc&lt;System> vs glibc",
              "BatchAlloc&lt;MiMalloc> vs mimalloc", "time: BatchAlloc&lt;System> vs glibc",
              "BatchAlloc&lt;MiMalloc> vs mimalloc"]
    rows = []
    for p in run.programs:
        rows.append([p] + [
            fmt_pct(run.more_pct(p, (INNER[b], PLAIN), (b, PLAIN), run.instructions))
            for b in ("batch_system", "batch_mimalloc")] + [
            fmt_pct(run.more_pct(p, (INNER[b], PLAIN), (b, PLAIN), run.time))
            for b in ("batch_system", "batch_mimalloc")])
    return table(header, rows)


def detail_table(run, p):
    header = ["allocator", "variant", "time (median)", "range over rounds", "first run",
              "instructions", "peak RSS", "RSS before the run", "from batches per run"]
    rows = []
    boxes = run.boxes(p)
    for b in run.binaries:
        for v in run.variants:
            t = run.times(p, b, v)
            if not t:
                continue
            counters = run.counters(p, b, v)
            batched = counters.get("batched_boxes")
            extra = [f"{k} {c:,.0f}" for k, c in counters.items()
                     if k not in ("batched_boxes", "reserve_calls")]
            served = "–" if not batched else (
                f"{batched:,.0f} boxes ({100 * batched / boxes:.0f}%), "
                f"{counters.get('reserve_calls', 0):,.0f} refills")
            rows.append([ALLOCATOR[b], VARIANT.get(v, v), fmt_ms(statistics.median(t)),
                         f"{fmt_ms(min(t))} – {fmt_ms(max(t))}",
                         fmt_ms(statistics.median(run.first(p, b, v))),
                         fmt_mi(run.instructions(p, b, v)), fmt_mib(run.peak(p, b, v)),
                         fmt_mib(run.rss_before(p, b, v)), "; ".join([served] + extra)])
    return table(header, rows, ["---", "---"] + ["---:"] * (len(header) - 2))


def targets(run):
    """Issue 12's targets for the first annotated twin, each with its
    figures and a verdict; rows of (target, measured, verdict, met by
    every program)."""
    if not run.annotated:
        return []
    v = run.annotated[0]
    bs, bm = ("batch_system", v), ("batch_mimalloc", v)
    out = []

    def speedups(base, new, programs):
        """[(program, speedup, its per-round range)], `base` and `new` as
        (binary, variant)."""
        return [(p, *(lambda r: (r[0], r[1:]) if r else (None, None))(run.speedup(p, base, new)))
                for p in programs]

    def at_least(label, values, target, fmt=fmt_x):
        """A row: every program's value must be `target` or more."""
        known = [(x, p, rounds) for p, x, rounds in values if x is not None]
        if not known:
            verdict = "not measured"
        else:
            x, p, rounds = min(known)
            met = sum(y >= target for y, _, _ in known)
            verdict = (f"{met} of {len(known)} programs; worst {p}: "
                       + verdict_at_least(x, target, "x", rounds))
        out.append([label, "; ".join(f"{p} {fmt(x)}" for p, x, _ in values), verdict,
                    bool(known) and all(x is not None and x >= target for _, x, _ in values)])

    def at_most_pct(label, values, target):
        """A row: no program's increase may pass `target` percent."""
        known = [(x, p) for p, x in values if x is not None]
        if not known:
            verdict = "not measured"
        else:
            x, p = max(known)
            met = sum(y <= target for y, _ in known)
            verdict = f"{met} of {len(known)} programs; worst {p}: " + (
                f"**met**: {x:+.1f}% (target ≤ +{target:g}%)" if x <= target else
                f"**missed**: {x:+.1f}% (target ≤ +{target:g}%; {x - target:.1f} points over)")
        out.append([label, "; ".join(f"{p} {fmt_pct(x)}" for p, x in values), verdict,
                    bool(known) and all(x is not None and x <= target for _, x in values)])

    programs = run.programs
    at_least("never slower than as written, on BatchAlloc&lt;System>: time",
             speedups(("batch_system", PLAIN), bs, programs), 1.0)
    at_least("… instructions",
             [(p, run.fewer(p, ("batch_system", PLAIN), bs), None) for p in programs], 1.0)
    for group, what, target, than in ((DESERIALIZERS, "the deserializers", 1.6, "faster than"),
                                      (PARSERS, "the parsers", 1.3, "no slower than")):
        progs = [p for p in group if p in programs]
        if progs:
            at_least(f"{what} ({', '.join(progs)}) ≥ {target}x faster than glibc as written",
                     speedups(("system", PLAIN), bs, progs), target)
            at_least(f"… {than} plain mimalloc", speedups(("mimalloc", PLAIN), bs, progs), 1.0)
    progs = [p for p in DESERIALIZERS + PARSERS if p in programs]
    at_least(f"on BatchAlloc&lt;MiMalloc>: ≥ 1.25x faster than plain mimalloc "
             f"({', '.join(progs)})", speedups(("mimalloc", PLAIN), bm, progs), 1.25)
    for b in ("batch_system", "batch_mimalloc"):
        at_most_pct(f"the wrapper, no attribute: {ALLOCATOR[b]} as written ≤ +3% instructions "
                    f"over {ALLOCATOR[INNER[b]]}",
                    [(p, run.more_pct(p, (INNER[b], PLAIN), (b, PLAIN), run.instructions))
                     for p in programs], 3.0)
    for b in ("batch_system", "batch_mimalloc"):
        at_most_pct(f"peak RSS, {ALLOCATOR[b]} annotated, ≤ +10% over {ALLOCATOR[INNER[b]]} "
                    "as written",
                    [(p, run.more_pct(p, (INNER[b], PLAIN), (b, v), run.peak))
                     for p in programs], 10.0)
    return out


def loads(run):
    """The 1-minute load average beside every process of the rounds."""
    return sorted(r["load"][0] for c in run.each_cell() for r in run.rows(*c) if r.get("load"))


def busy_note(run):
    """A warning where other work kept the machine's CPUs busy during the
    rounds (median load above the CPUs): times then move far more than
    instruction counts do."""
    cpus = run.r["machine"].get("cpus") or 1
    during = loads(run)
    if not during or statistics.median(during) <= cpus:
        return None
    return (f"*Other work kept this machine busy while the times were measured (load average "
            f"{statistics.median(during):.1f} on {cpus} CPUs, median over the rounds): times "
            "spread widely from round to round (see the ranges, and Machine and noise); the "
            "instruction counts are not affected, so compare them first.*")


def method(run):
    cfg = run.r["config"]
    return (
        f"Each cell (program, allocator, variant) runs in a fresh process of the suite binary that "
        f"installs its allocator (`suite_BINARY program NAME VARIANT REPS`): the process builds "
        f"the program's input, then makes {cfg['reps']} runs, each the program's whole work "
        "(build, use, drop). A round runs every cell once: the programs in an order that rotates "
        "each round, the cells of a program in an order shuffled afresh each round, so that "
        "cells compared with each other run seconds apart and none always follows the same "
        f"neighbour; {cfg['rounds']} rounds. *Time*: per round, the median of the process's runs "
        "(wall-clock time less the time the thread waited for a CPU, as the examples measure); "
        "the tables give the median over rounds, ratios are of those medians, and the range in "
        "brackets is the lowest and highest ratio within one round. *Instructions*: "
        "`valgrind --tool=callgrind`, one run: the count of a process that makes one run less "
        "that of a process that only builds the input (all threads). *Peak RSS*: VmHWM after "
        "the first run, reset (`/proc/self/clear_refs`) once the input is built, so it counts "
        "the input held and the program's own peak; median over rounds. Every cell computes "
        "the same check value from what it built, and the driver refuses a run where they "
        "differ. Where `BatchAlloc` is not installed the attribute's boxes are plain "
        "`Box::new` (the detail tables show what the annotation costs there).")


def write(results, doc):
    run = Run(results)
    m = results["machine"]
    cfg = results["config"]
    out = []
    w = out.append
    w("# The real-programs table")
    w("")
    w("<!-- Generated by benches/suite/programs_report.py; do not edit: rerun the command below. -->")
    w("")
    secs = results.get("seconds", {})
    command = results["command"]
    if results.get("note"):
        # The note is shown below the command, in full.
        command = command.replace(shlex.quote(results["note"]), "NOTE").replace(
            results["note"], "NOTE")
    w(f"Generated by **`{command}`** ({results['mode']} run: {cfg['rounds']} rounds of "
      f"{cfg['reps']} runs per process{', callgrind' if results.get('callgrind') else ', no callgrind'}; "
      f"{round((secs.get('rounds', 0) + secs.get('callgrind', 0)) / 60)} minutes measuring after "
      f"{secs.get('build', 0)} s building; started {results['started']}, commit {m['git']}). "
      "The raw figures are in [`programs.json`](programs.json); "
      "`benches/suite/programs.sh --report-only docs/programs.json` rewrites this page from them.")
    w("")
    if results.get("note"):
        w(f"**{results['note']}**")
        w("")
    busy = busy_note(run)
    if busy:
        w(busy)
        w("")
    w("The question: a user with a real program, who can annotate it with `#[batch_alloc]` and "
      "install `BatchAlloc`, or switch the global allocator instead, which is faster, by how "
      "much, at what memory? Each program is compiled from one source twice, as written and "
      "annotated where its example annotates it, and runs under five global allocators. "
      "Ratios (×) are speedups: above 1 the annotated program is faster than the one it is "
      "compared with; (÷) is the same for instruction counts.")
    w("")
    w("## Targets (issue 12)")
    w("")
    rows = targets(run)
    met = sum(r[3] for r in rows)
    w(f"For `{run.annotated[0] if run.annotated else '–'}` (the first annotated twin). "
      f"{met} of {len(rows)} targets met for every program.")
    w("")
    w(table(["target", "measured", "verdict"], [r[:3] for r in rows], ["---", "---", "---"]))
    w("")
    def per_twin(title, render):
        for v in run.annotated:
            w(f"## {title}" + (f" ({VARIANT.get(v, v)})" if len(run.annotated) > 1 else ""))
            w("")
            w(render(v))
            w("")

    per_twin("Time", lambda v: comparison_table(run, v, run.time, run.speedup, fmt_ms, "×"))
    w("Ranges in brackets: the lowest and highest ratio of a single round.")
    w("")
    if results.get("callgrind"):
        per_twin("Instructions", lambda v: comparison_table(run, v, run.instructions, run.fewer,
                                                            fmt_mi, "÷"))
    per_twin("Peak resident memory", lambda v: memory_table(run, v))
    w("Peak RSS of one run in a fresh process, the input text included (the input column).")
    w("")
    w("## The wrapper alone: `BatchAlloc` under code as written")
    w("")
    w("What installing `BatchAlloc` costs a program that has no annotation: as written on the "
      "wrapper against as written on the allocator it wraps (target: at most +3% instructions).")
    w("")
    w(wrapper_table(run))
    w("")
    w("## Every cell")
    w("")
    for p in results["programs"]:
        boxes = run.boxes(p["name"])
        w(f"### {p['name']}: {p['about']}")
        w("")
        w(f"Size {p['size']:,} {p['unit']}; input {input_text(run, p['name'])}; "
          f"{boxes:,} boxes per run." if boxes is not None else "")
        w("")
        w(detail_table(run, p["name"]))
        w("")
    w("*First run*: the median over rounds of each process's first run (a fresh heap). "
      "*RSS before the run*: resident memory once the input is built. *From batches*: boxes "
      "served from batch slots per run and refills, from `batch_alloc::stats()` (and any "
      "counter of captured allocations the runtime reports).")
    w("")
    w("## Method")
    w("")
    w(method(run))
    w("")
    w("Programs and sizes (`suite_system program list`; another size with "
      "`--size NAME=N`):")
    w("")
    w(table(["program", "size", "what one run does"],
            [[p["name"], f"{p['size']:,} {p['unit']}", p["about"]] for p in results["programs"]],
            ["---", "---:", "---"]))
    w("")
    w("## Running it")
    w("")
    w("```sh")
    w(RUNNING)
    w("```")
    w("")
    w("A cell by hand: `target/release/deps/suite_batch_system-* program stmt attr 3` prints "
      "its JSON line; `program list` the programs, sizes and twins. The twins are "
      "`benches/suite/real.rs`'s `Variant`: a third (say `#[batch_alloc(boxes)]`) is a variant "
      "there, a module where each program's source writes out its twins, and an arm in each "
      "program's `run`; the driver and this page take the list from `program list` and give "
      "each annotated twin its own rows.")
    w("")
    w("## Machine and noise")
    w("")
    w(table(["", ""], machine_rows(results), ["---", "---"]))
    w("")
    spreads = spread_text({f"{p}/{b}/{v}": run.times(p, b, v) for p, b, v in run.each_cell()},
                          "cells")
    w("The machine has 2 cores shared with other work. "
      + (spreads + " " if spreads else "") + "Instruction counts do not move with load.")
    w("")
    during = loads(run)
    if during:
        w(f"Load average (1 min) during the rounds: min {during[0]:.1f}, median "
          f"{statistics.median(during):.1f}, max {during[-1]:.1f}.")
        w("")
    with open(doc, "w") as f:
        f.write("\n".join(out).rstrip() + "\n")


def write_readme(results, path, doc):
    """The README's compact version: one row per program, the ratios that
    answer the user's question."""
    run = Run(results)
    rel = os.path.relpath(os.path.abspath(doc), os.path.dirname(os.path.abspath(path)))
    out = []
    w = out.append
    w("### Real programs")
    w("")
    w("<!-- Generated by benches/suite/programs_report.py from docs/programs.json; "
      "rerun benches/suite/programs.sh. -->")
    w("")
    note = f" {results['note']}" if results.get("note") else ""
    w(f"Whole programs, as written and annotated, under five global allocators, side by side in "
      f"one run (`benches/suite/programs.sh`, {results['mode']}, {results['config']['rounds']} "
      f"rounds, commit {results['machine']['git']}).{note} Speedups of the annotated program "
      "(above 1: it is faster), time and, in brackets, instructions; the full table with "
      f"ranges, memory and every cell: [{rel}]({rel}).")
    w("")
    rows = targets(run)
    w(f"Of issue 12's {len(rows)} targets for annotated programs, this run meets "
      f"{sum(r[3] for r in rows)} for every program ([{rel}]({rel}#targets-issue-12)).")
    w("")
    busy = busy_note(run)
    if busy:
        w(busy)
        w("")
    for v in run.annotated:
        bs, bm = ("batch_system", v), ("batch_mimalloc", v)
        header = ["program", "glibc, as written",
                  f"{VARIANT.get(v, v)} + BatchAlloc&lt;System> vs glibc", "vs mimalloc",
                  "vs jemalloc", f"{VARIANT.get(v, v)} + BatchAlloc&lt;MiMalloc> vs mimalloc",
                  "vs as written, same BatchAlloc&lt;System>",
                  "peak RSS vs glibc", "wrapper alone (instructions)"]
        rows = []
        for p in run.programs:
            def both(base, new):
                t, i = run.speedup(p, base, new), run.fewer(p, base, new)
                return fmt_x(t, ranges=False) + (f" ({fmt_x(i)})" if i else "")
            rows.append([
                name(p, v, run), fmt_ms(run.time(p, "system", PLAIN)),
                both(("system", PLAIN), bs), both(("mimalloc", PLAIN), bs),
                both(("jemalloc", PLAIN), bs), both(("mimalloc", PLAIN), bm),
                both(("batch_system", PLAIN), bs),
                fmt_pct(run.more_pct(p, ("system", PLAIN), bs, run.peak)),
                fmt_pct(run.more_pct(p, ("system", PLAIN), ("batch_system", PLAIN),
                                     run.instructions)),
            ])
        w(table(header, rows))
        w("")
    splice(path, "\n".join(out).rstrip() + "\n", README_MARKERS)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--doc", default="docs/programs.md")
    ap.add_argument("--readme", help="also rewrite this README's programs section")
    args = ap.parse_args()
    results = load_results(args.results, args.doc, "programs.json")
    write(results, args.doc)
    if args.readme:
        write_readme(results, args.readme, args.doc)


if __name__ == "__main__":
    main()
