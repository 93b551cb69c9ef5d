#!/usr/bin/env python3
"""The one reader of the tools' output: it writes the result pages.

    python3 benches/report.py target/crates/results/latest/results.json [--out FILE]
    python3 benches/report.py RESULTS --publish      # docs/crates.md and docs/crates.json
    python3 benches/report.py --benchmarks           # docs/benchmarks.md (and .json) from gungraun's
                                                     # summaries and criterion's estimates under target/
    python3 benches/report.py --benchmarks docs/benchmarks.json   # the page again from its figures

The crates page (benches/crates/crates.py's results.json):

Without --publish: report.md beside the results (crates.md beside
docs/crates.json; or --out). With it: docs/crates.md and the results it
was made from as docs/crates.json (the fields the page reads);
`python3 benches/report.py docs/crates.json --publish` rewrites the page
from that copy. The process times are hyperfine's (each
round's JSON, and its own markdown table, are in the results directory's
runs/); parse and drop are the processes' own figures.

docs/benchmarks.md: instructions per box from gungraun's summary.json files
(benches/paths*: each case at two repetition counts, the difference over
the boxes added), and the matrix from criterion's estimates.json of each
round's baseline (benches/matrix*, rounds run by `benches/run.py matrix`).
Standard library only.
"""
import argparse
import datetime
import json
import os
import statistics
import sys

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "crates")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "crates"))
from crates import BUILD_TITLES, ROOT  # noqa: E402
import suites  # noqa: E402

MODES = {"once": "parse once (a fresh process: read the input, parse, drop, exit)",
         "warm": "warm (five parses in one process; the fifth parse and its drop reported)"}
# The limit's columns: these builds' work (parse + drop of the reported
# parse) over the limit's, measured in the same rounds.
LIMIT_VS = ("mimalloc", "scope_mimalloc", "batch_mimalloc", "glibc", "scope_system", "batch_system")
# What docs/crates.json keeps of each process's figures.
RUN_FIELDS = ("parse_ns", "drop_ns", "wall_ns", "parses", "maxrss_kb", "minflt", "minflt_parse", "minflt_drop", "utime_us",
              "stime_us", "limit", "batch")


def med(xs):
    return statistics.median(xs) if xs else None


def x(r):
    return f"{r:.2f}x" if r is not None else "–"


def spread(rs):
    return f" ({min(rs):.2f}–{max(rs):.2f})" if len(rs) > 1 else ""


def mb(kb):
    return f"{kb / 1024:.1f} MiB" if kb is not None else "–"


def num(n):
    return f"{n:,.0f}" if n is not None else "–"


def table(header, rows, align):
    return ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"] + [
        "| " + " | ".join(row) + " |" for row in rows] + [""]


def per_round(rows, key):
    """Round -> the median over that round's runs of `key(run)`."""
    return {row["round"]: med([key(run) for run in row["runs"]]) for row in rows}


def ratios(base, this):
    """Speedups base/this per round (above 1: this is faster)."""
    return [base[r] / this[r] for r in this if r in base and this[r]]


def runs_of(res, w, mode, b):
    return [run for row in res["cells"][w].get(mode, {}).get(b) or [] for run in row["runs"]]


def thread_modes(res, w):
    return [m for m in res["cells"][w] if m.startswith("threads-")]


def threads_table(res, w):
    """The threaded mode: each build's time for all threads' parses (the
    processes' own clock, threads started and joined) against plain
    mimalloc's in the same round, and peak RSS."""
    modes = thread_modes(res, w)
    if not modes:
        return []
    builds = [b for b in res.get("timed_builds", res["builds"]) if any(res["cells"][w][m].get(b) for m in modes)]
    title = lambda m: "{} thread{}, dropped on {}".format(
        m.split("-")[1], "s" * (m.split("-")[1] != "1"), "its own" if m.endswith("own") else "another")
    rows = []
    for b in builds:
        row = [BUILD_TITLES.get(b, b)]
        for m in modes:
            cells = res["cells"][w][m]
            if not cells.get(b):
                row.append("–")
                continue
            this = per_round(cells[b], lambda run: run["wall_ns"])
            rs = ratios(per_round(cells["mimalloc"], lambda run: run["wall_ns"]), this) if b != "mimalloc" else []
            row.append(f"{med(list(this.values())) / 1e6:.1f} ms" + (f", {x(med(rs))}{spread(rs)}" if rs else "")
                       + f", {mb(peak(res, w, m, b))}")
        rows.append(row)
    parses = next(r["parses"] for m in modes for rows_ in res["cells"][w][m].values() for row in rows_
                  for r in row["runs"])
    return ([f"**threads** (each thread parses {parses} times, each parse in the build's scope where it has one; "
             "time of all threads' parses, threads started and joined, median over rounds; speedup over plain "
             "mimalloc within each round, median and range; peak RSS)", ""]
            + table(["build"] + [title(m) for m in modes], rows, ["---"] + ["---:"] * len(modes)))


def cell_table(res, w, mode):
    cells = res["cells"][w][mode]
    builds = [b for b in res.get("timed_builds", res["builds"]) if cells.get(b)]
    metrics = {"wall": {b: {row["round"]: row["wall_median"] for row in cells[b]} for b in builds},
               "parse": {b: per_round(cells[b], lambda run: run["parse_ns"]) for b in builds},
               "drop": {b: per_round(cells[b], lambda run: run["drop_ns"]) for b in builds}}
    rows = []
    for b in builds:
        row = [BUILD_TITLES.get(b, b)]
        for metric, scale in (("wall", 1e3), ("parse", 1e-6), ("drop", 1e-6)):
            this = metrics[metric][b]
            values = sorted(v * scale for v in this.values())
            row.append(f"{med(values):.1f} ms" + (f" ({values[0]:.1f}–{values[-1]:.1f})" if len(values) > 1 else ""))
            for base in ("glibc", "mimalloc"):
                rs = ratios(metrics[metric][base], this) if base != b and base in metrics[metric] else None
                row.append(f"{x(med(rs))}{spread(rs)}" if rs is not None else "")
        runs = runs_of(res, w, mode, b)
        m = lambda key: med([r[key] for r in runs])
        row += [mb(m("maxrss_kb")), num(m("minflt")), f"{num(m('minflt_parse'))} / {num(m('minflt_drop'))}",
                f"{m('utime_us') / 1e3:.0f} / {m('stime_us') / 1e3:.0f} ms"]
        rows.append(row)
    return [f"**{MODES[mode]}**", ""] + table(
        ["build", "process time", "vs glibc", "vs mimalloc", "parse", "vs glibc", "vs mimalloc", "drop",
         "vs glibc", "vs mimalloc", "peak RSS", "minor faults (process)", "faults in parse / drop",
         "CPU user / sys (process)"], rows, ["---"] + ["---:"] * 13)


def work_per_round(rows):
    return {row["round"]: med([run["parse_ns"] + run["drop_ns"] for run in row["runs"]]) for row in rows}


def limit_figures(res, w, mode):
    """{build: (median work ns, median ratio to the limit, (lo, hi))} and
    the share of mimalloc's gap that scope() on BatchAlloc<MiMalloc>
    closes, or None without a limit build."""
    cells = res["cells"][w].get(mode, {})
    if not cells.get("limit"):
        return None
    lim = work_per_round(cells["limit"])
    out = {}
    for b in ("limit",) + LIMIT_VS:
        if cells.get(b):
            this = work_per_round(cells[b])
            rs = [this[r] / lim[r] for r in this if r in lim]
            out[b] = (med(list(this.values())), med(rs), (min(rs), max(rs)))
    share = None
    if "mimalloc" in out and "scope_mimalloc" in out:
        mi, ba = out["mimalloc"][1], out["scope_mimalloc"][1]
        share = (mi - ba) / (mi - 1) if mi > 1.005 else None
    return out, share


def share_text(figs):
    f, share = figs
    if share is None:
        return "mimalloc at or past the limit" if f.get("mimalloc") else "–"
    return f"{100 * share:.0f}%"


def peak(res, w, mode, b):
    return med([r["maxrss_kb"] for r in runs_of(res, w, mode, b)])


def work_instructions(res, w, b):
    inst = (res.get("instructions_work") or {}).get(w, {}).get(b)
    return inst["parse"] + inst["drop"] if inst else None


def measured(res):
    return [w for w in res["inputs"] if w in res.get("cells", {})]


def limit_summary(res):
    """Every workload against the limit (the top of the page)."""
    rows = []
    for w in measured(res):
        for mode in ("once", "warm"):
            if not (figs := limit_figures(res, w, mode)):
                continue
            f = figs[0]
            inst = [work_instructions(res, w, b) for b in ("mimalloc", "scope_mimalloc", "limit")]
            rows.append([w, mode, f"{x(f['mimalloc'][1])} ({f['mimalloc'][2][0]:.2f}–{f['mimalloc'][2][1]:.2f})",
                         f"**{x(f['scope_mimalloc'][1])}** ({f['scope_mimalloc'][2][0]:.2f}–"
                         f"{f['scope_mimalloc'][2][1]:.2f})", share_text(figs),
                         " / ".join(mb(peak(res, w, mode, b)).replace(" MiB", "")
                                    for b in ("mimalloc", "scope_mimalloc", "limit")) + " MiB",
                         " / ".join(f"{n / 1e6:,.0f}" for n in inst) + " M" if all(inst) and mode == "once" else ""])
    return table(["workload", "mode", "mimalloc / limit", "batch / limit", "share of mimalloc's gap closed",
                  "peak RSS: mimalloc / batch / limit",
                  "instructions of the parse and drop: mimalloc / batch / limit"], rows,
                 ["---", "---"] + ["---:"] * 5)


def parse_ratio(res, w, b, base="mimalloc", mode="once"):
    cells = res["cells"][w].get(mode, {})
    if not cells.get(b) or not cells.get(base):
        return "–"
    rs = ratios(per_round(cells[base], lambda run: run["parse_ns"]),
                per_round(cells[b], lambda run: run["parse_ns"]))
    return f"{x(med(rs))}{spread(rs)}"


def summary_table(res):
    """The page's first table, one row per workload: its parse in scope()
    and annotated against mimalloc (once), peak RSS, and the limit's
    columns."""
    rows = []
    for w in measured(res):
        lim = {m: limit_figures(res, w, m) for m in ("once", "warm")}
        if not all(lim.values()):
            continue
        inst = {b: work_instructions(res, w, b) for b in ("mimalloc", "scope_mimalloc", "limit")}
        rows.append([f"{w} ({res['projects'][res['inputs'][w]['project']]['style']})",
                     parse_ratio(res, w, "scope_mimalloc"), parse_ratio(res, w, "batch_mimalloc"),
                     f"{mb(peak(res, w, 'once', 'scope_mimalloc')).replace(' MiB', '')} / "
                     f"{mb(peak(res, w, 'once', 'mimalloc'))}",
                     " · ".join(x(lim[m][0]["mimalloc"][1]) for m in lim),
                     " · ".join(f"**{x(lim[m][0]['scope_mimalloc'][1])}**" for m in lim),
                     " · ".join(share_text(lim[m]) for m in lim),
                     f"{inst['mimalloc'] / inst['limit']:.3f}, {inst['scope_mimalloc'] / inst['limit']:.3f}"
                     if all(inst.values()) else "–"])
    return table(
        ["workload", "parse in one `scope()`", "every fn and impl annotated", "peak RSS, `scope()` / mimalloc",
         "mimalloc / limit, once · warm", "batch / limit, once · warm",
         "share of mimalloc's gap closed, once · warm",
         "instructions of the work: mimalloc / limit, batch / limit"], rows, ["---"] + ["---:"] * 7)


def limit_table(res, w, mode):
    if not (figs := limit_figures(res, w, mode)):
        return []
    return ([f"Against the limit, {mode}: work is the reported parse and its drop; `/ limit` is this "
             "build's work over the limit's, within each round (median and range over rounds; above 1: "
             "slower than the limit).", ""]
            + table(["build", "work", "/ limit"],
                    [[BUILD_TITLES.get(b, b), f"{t / 1e6:.1f} ms", "" if b == "limit" else f"{x(r)} ({lo:.2f}–{hi:.2f})"]
                     for b, (t, r, (lo, hi)) in figs[0].items()], ["---", "---:", "---:"])
            + [f"Share of mimalloc's gap to the limit closed by `scope()` on BatchAlloc<MiMalloc>: "
               f"{share_text(figs)}.", ""])


def notes(res, w):
    """The limit's own figures and the allocator's counters, over the
    reported parse."""
    limit, counters = [], []
    for mode in ("once", "warm"):
        for b in res["builds"] if mode in res["cells"].get(w, {}) else ():
            runs = runs_of(res, w, mode, b)
            if lim := next((r["limit"] for r in runs if r.get("limit")), None):
                refused = max(r["limit"]["refused"] for r in runs if r.get("limit"))
                limit.append(f"{mode}, {BUILD_TITLES.get(b, b)}: {lim['bytes'] / 2**20:.1f} MiB bumped through "
                             f"by the reported parse, {num(lim['resets'])} resets"
                             + (f", **{refused} refused** (something outlived a parse)" if refused else ""))
            if c := next((r["batch"] for r in runs if r.get("batch")), None):
                counters.append(f"{mode}, {BUILD_TITLES.get(b, b)}: {num(c['scoped_allocations'])} allocations "
                                f"from scopes, {num(c['reserve_calls'])} refills, "
                                f"{c['span_bytes'] / 2**20:.1f} MiB of spans with the value alive")
    return ([f"The limit over the reported parse: {'; '.join(limit)}.", ""] if limit else []) + (
        [f"Allocator counters over the reported parse: {'; '.join(counters)}.", ""] if counters else [])


def workload(res, w):
    info = res["inputs"][w]
    proj = res["projects"][info["project"]]
    made = "the crates' sources from crates.io, at pinned versions" if proj.get("corpus") else "generated"
    L = [f"## {w}: {proj['style']}", "",
         f"Input: {info['size']:,} {info['about']} ({info['input_bytes'] / 1e6:.2f} MB), {made}; "
         f"annotated: {', '.join(proj['annotate'])}.", ""]
    for mode in ("once", "warm"):
        if mode in res["cells"][w]:
            L += cell_table(res, w, mode) + limit_table(res, w, mode)
    L += threads_table(res, w)
    inst = (res.get("instructions") or {}).get(w) or {}
    if (base := inst.get("glibc")) and (mi := inst.get("mimalloc")):
        L += ["Instructions of a `once` process (callgrind; `÷`: the baseline's count divided by this one's, "
              "above 1: fewer instructions):", ""] + table(
            ["build", "instructions", "glibc ÷", "mimalloc ÷"],
            [[BUILD_TITLES.get(b, b), f"{n / 1e6:,.1f} M", f"{base / n:.3f}", f"{mi / n:.3f}"]
             for b, n in inst.items()], ["---"] + ["---:"] * 3)
    if wi := (res.get("instructions_work") or {}).get(w):
        lim = wi.get("limit")
        L += ["Instructions of the reported parse and of its drop (callgrind, counted between dumps at the "
              "start of each, in a `once` process; the drop's includes the process's exit, which frees "
              "little more than the input; for the limit, the parse after the warm-up):", ""] + table(
            ["build", "parse", "drop", "parse + drop", "/ limit"],
            [[BUILD_TITLES.get(b, b), f"{n['parse'] / 1e6:,.1f} M", f"{n['drop'] / 1e6:,.1f} M",
              f"{(n['parse'] + n['drop']) / 1e6:,.1f} M",
              f"{(n['parse'] + n['drop']) / (lim['parse'] + lim['drop']):.3f}" if lim else ""]
             for b, n in wi.items()], ["---"] + ["---:"] * 4)
    return L + notes(res, w)


def write(res):
    cfg, fac = res["cfg"], res["facade"]
    dirty = f" with uncommitted changes to {', '.join(d[3:] for d in fac['dirty'])}" if fac.get("dirty") else ""
    L = ["# Published parser crates, as written and annotated", "",
         "<!-- Generated by benches/report.py from results.json, kept as docs/crates.json: "
         "`python3 benches/report.py docs/crates.json --publish` rewrites this page; `python3 "
         "benches/report.py RESULTS --publish` a new run's. -->", "",
         f"Generated by **`python3 benches/run.py crates`** ({cfg['rounds']} rounds; per round, per workload and mode, "
         f"one hyperfine run of the builds in a shuffled order, {cfg['warmup']} warm-up and {cfg['runs']} timed "
         f"runs each), started {res['started']}, batch-alloc at {fac.get('commit')}{dirty}; "
         f"{res.get('seconds', 0) // 60} min in all (building {res.get('build_seconds', 0) // 60} min). "
         f"Host: {res['host']['nproc']} cores; transparent huge pages `{res['host']['thp']['enabled']}`, "
         f"defrag `{res['host']['thp']['defrag']}`."]
    if res.get("note"):
        L += ["", res["note"]]
    L += ["", "Builds: *as written* is each crate as published; *annotated* is the same crate with "
          "`#[batch_alloc]` on every fn and impl of its sources (and of the library whose loops drive its "
          "parse: winnow for kdl, serde_core for serde_json), by support/annotate (syn's annotated copy is a "
          "package of another name, `syn-annotated`, since batch-alloc's attribute itself depends on syn); "
          "*in scope()* is the crate as written with the parse inside one `batch_alloc::scope`; *limit* is "
          "the crate as written on the warm arena (see below; in its `once` process a warm-up parse comes "
          "first, so its process time counts two parses). The workload's own code (the driver, the derived "
          "structs) is not annotated. Times: medians over rounds of each round's median; in brackets the "
          "range over rounds. Ratios are speedups (baseline time / build time, above 1: faster), computed "
          "within each round and then the median and range over rounds. Peak RSS and faults are per process "
          "(getrusage at exit, the input text included), medians over all timed runs.", ""]
    if len(summary := summary_table(res)) > 3:  # a header, its rule, rows, a blank line
        L += ["## Against plain mimalloc", "",
              "Each workload at a glance: `BatchAlloc<MiMalloc>` against a plain `MiMalloc` global allocator, "
              "and both against the limit (below). The first three columns compare the parse in a fresh "
              "process (speedups over mimalloc, above 1: faster); the limit's compare the work (the parse and "
              "its drop) over the limit's, once and warm (the fifth of five parses; above 1: slower than the "
              "limit), the share of mimalloc's distance to the limit that `scope()` closes, and the "
              "instructions of the work (callgrind), the steadiest witness.", ""] + summary
    if any(limit_figures(res, w, "once") for w in measured(res)):
        L += ["## Against the limit", "",
              "The limit is a warm arena as the global allocator (benches/crates/workloads/limit.rs): it bumps "
              "a pointer, frees nothing, and is reset to a mark once each parse has been dropped, after a "
              "warm-up parse, so every timed parse runs through memory already faulted in. No allocator of "
              "individually freeable objects can cost less. *batch* is the crate as written, its parse in one "
              "`scope()`, on BatchAlloc<MiMalloc>. Ratios are of the work (the reported parse and its drop), "
              "this build's over the limit's within each round: medians over rounds, range in brackets; above "
              "1, slower than the limit. Share of mimalloc's gap closed: (mimalloc - batch) / (mimalloc - "
              "limit), from the two median ratios. Peak RSS: medians over all timed runs. Instructions: "
              "callgrind, the reported parse and its drop only (counted between dumps at the start of each), "
              "of a `once` process. On this shared machine single rounds moved by far more than the gaps "
              "between these builds (see the ranges): the instruction counts are the steady witness, and a "
              "share computed from two small gaps (a few per cent each) is mostly noise.", ""]
        L += limit_summary(res)
    if ann := res.get("annotation"):
        drops = any("drop_impls_skipped" in a for a in ann.values())  # runs of the earlier annotator
        L += ["## What was annotated", ""] + table(
            ["crate", "version", "fns", "impl blocks", "trait default methods", "const fns left",
             "item macros left"] + ["`impl Drop` left"] * drops,
            [[name, a["version"]] + [str(a[k]) for k in ("fns", "impls", "trait_methods", "const_fns_skipped",
                                                          "item_macros_untouched")]
             + [str(a.get("drop_impls_skipped", "–"))] * drops for name, a in ann.items()],
            ["---", "---"] + ["---:"] * (5 + drops))
    if tests := res.get("tests"):
        L += ["## The crates' own test suites, as written and annotated", "",
              "tests/crates/suites.py: `cargo test` of each crate as published and of its annotated copy "
              "(unit and integration tests on `BatchAlloc<System>`, doc-tests on the default allocator), "
              "in each profile; *identical*: the same tests, each with the same outcome.", ""]
        L += suites.markdown(tests)
    if wrapper := res.get("wrapper"):
        L += wrapper_section(wrapper)
    for w in measured(res):
        L += workload(res, w)
    return "\n".join(L) + "\n"


def pct(this, base):
    return f"{100 * (this / base - 1):+.1f}%" if this and base else "–"


def speed(res, w, b, base, mode="once"):
    """This build's work (parse + drop) against `base`'s, as a speedup
    within each round: median (range)."""
    cells = res["cells"][w].get(mode, {})
    if not cells.get(b) or not cells.get(base):
        return "–"
    rs = ratios(work_per_round(cells[base]), work_per_round(cells[b]))
    return f"{x(med(rs))}{spread(rs)}"


def wrapper_section(res):
    """The allocator BatchAlloc wraps, against BatchAlloc: the wrapper
    alone, a scope on each inner allocator, and threads (a results.json of
    the builds glibc, mimalloc, wrap_*, scope_*)."""
    cfg, fac = res["cfg"], res["facade"]
    ws = measured(res)
    inst, work = res.get("instructions") or {}, res.get("instructions_work") or {}
    wsum = lambda w, b: work_instructions(res, w, b)
    L = ["## Against the allocator it wraps", "",
         f"`python3 benches/run.py crates --builds glibc,mimalloc,scope_system,scope_mimalloc,wrap_system,"
         f"wrap_mimalloc --skip-tests --modes once --threads 1,2 --rounds {cfg['rounds']} --runs {cfg['runs']} "
         f"--warmup {cfg['warmup']}` (started {res['started']}, batch-alloc at {fac.get('commit')}, "
         f"{res.get('seconds', 0) // 60} min; kept as docs/crates-wrapper.json). *Wrapper alone*: the crate as "
         "written on `BatchAlloc<A>`, no scope ever open, against the same on `A`. Instructions: callgrind, "
         "one `once` process (the whole process, and the reported parse and its drop); times: the work (parse "
         "and drop) of a `once` process, as a speedup over the baseline within each round, median and range "
         "over rounds; peak RSS: getrusage at exit, medians over runs.", "",
         "**The wrapper alone, over the allocator it wraps: instructions, and the work's speedup**", ""]
    L += table(["workload", "BatchAlloc<System> over glibc: process", "parse + drop", "speedup",
                "BatchAlloc<MiMalloc> over mimalloc: process", "parse + drop", "speedup"],
               [[w, pct(inst.get(w, {}).get("wrap_system"), inst.get(w, {}).get("glibc")),
                 pct(wsum(w, "wrap_system"), wsum(w, "glibc")), speed(res, w, "wrap_system", "glibc"),
                 pct(inst.get(w, {}).get("wrap_mimalloc"), inst.get(w, {}).get("mimalloc")),
                 pct(wsum(w, "wrap_mimalloc"), wsum(w, "mimalloc")), speed(res, w, "wrap_mimalloc", "mimalloc")]
                for w in ws], ["---"] + ["---:"] * 6)
    L += ["**One `scope()` around the parse, on each inner allocator, against plain mimalloc**", ""]
    L += table(["workload", "instructions of the work over mimalloc: scope on MiMalloc", "scope on System",
                "speedup over mimalloc: scope on MiMalloc", "scope on System",
                "scope on MiMalloc over scope on System", "peak RSS: mimalloc / scope on MiMalloc / on System"],
               [[w, pct(wsum(w, "scope_mimalloc"), wsum(w, "mimalloc")),
                 pct(wsum(w, "scope_system"), wsum(w, "mimalloc")),
                 speed(res, w, "scope_mimalloc", "mimalloc"), speed(res, w, "scope_system", "mimalloc"),
                 speed(res, w, "scope_mimalloc", "scope_system"),
                 " / ".join(mb(peak(res, w, "once", b)).replace(" MiB", "")
                            for b in ("mimalloc", "scope_mimalloc", "scope_system")) + " MiB"] for w in ws],
               ["---"] + ["---:"] * 6)
    for w in ws:
        if tt := threads_table(res, w):
            L += [f"**{w}**: " + tt[0].replace("**threads** ", "threads "), ""] + tt[2:]
    return L


def slim(res):
    """The fields of a results.json that the page reads."""
    return dict(res, cells={w: {m: {b: [dict(row, runs=[{k: run[k] for k in RUN_FIELDS if run.get(k) is not None}
                                                       for run in row["runs"]]) for row in rows]
                                    for b, rows in by_build.items()} for m, by_build in modes.items()}
                            for w, modes in res.get("cells", {}).items()})


def publish(text, res, source):
    """docs/crates.md, and its results (the fields the page reads) as
    docs/crates.json."""
    docs = os.path.join(ROOT, "docs")
    with open(os.path.join(docs, "crates.md"), "w") as f:
        f.write(text)
    if os.path.abspath(source) != os.path.join(docs, "crates.json"):
        with open(os.path.join(docs, "crates.json"), "w") as f:
            json.dump(slim({k: v for k, v in res.items() if k != "wrapper"}), f, separators=(",", ":"))
    print("published docs/crates.md and docs/crates.json", file=sys.stderr)


# ---- docs/benchmarks.md ------------------------------------------------

GUNGRAUN = os.path.join(ROOT, "target", "gungraun", "batch-alloc-benches")
CRITERION = os.path.join(ROOT, "target", "criterion")
# The boxes (or calls) each case's second repetition count adds over its
# first, by id (benches/paths/mod.rs), and what the rows are.
ADDED = {"n1": 100_000, "n2": 100_000, "n8": 100_000, "n64": 102_400, "n1024": 102_400, "n65536": 131_072,
         "batch": 131_072, "batch_heap": 131_072, "box_new": 131_072, "plain": 20_010, "alone": 20_010,
         "plain_method": 20_010, "method": 20_010}
SIZES = ("n1", "n2", "n8", "n64", "n1024", "n65536")
PATHS = [(f, n, f"{what}, N = {int(n[1:]):,}") for f, what in (
    ("batch", "`Batch<T>` of N, allocated then dropped"),
    ("box_new", "`Box::new` × N, no scope open"),
    ("plain", "a function's loop of `Box::new` × N, as written"),
    ("scoped", "the same function under `#[batch_alloc]` (it opens its scope, which serves the boxes)"),
    ("vec", "`Vec::with_capacity(N)` and N pushes: the limit")) for n in SIZES] + [
    ("cross", "batch", "`Batch<T>` of 65,536 dropped on a thread that never allocated from a batch"),
    ("cross", "batch_heap", "… on a thread that made its heap with a batch first"),
    ("cross", "box_new", "`Box::new` × 65,536 dropped on another thread"),
    ("shared", "batch", "`Batch<T>` of 65,536, half dropped here while another thread drops the rest"),
    ("shared", "box_new", "`Box::new` × 65,536, the same"),
    ("calls", "plain", "a recursive call as written, in `scope()` (per call)"),
    ("calls", "alone", "the same function annotated (per call)"),
    ("calls", "plain_method", "a method as written (per call)"),
    ("calls", "method", "a method of an annotated impl (per call)"),
    ("small_allocs", "n1024", "a vector grown by pushes to 0 to 22 elements and a number formatted, no scope "
                              "open (per vector and string)")]
BINARIES = {"paths_batch_system": "BatchAlloc<System>", "paths_system": "System (glibc)",
            "paths_batch_mimalloc": "BatchAlloc<MiMalloc>", "paths_mimalloc": "MiMalloc"}


def gungraun_counts():
    """{binary: {(function, id): (instructions at the first count, at the
    second)}} from gungraun's summary.json files."""
    out = {}
    for binary in BINARIES:
        root = os.path.join(GUNGRAUN, binary)
        for group in sorted(os.listdir(root)) if os.path.isdir(root) else ():
            for case in sorted(os.listdir(os.path.join(root, group))):
                path = os.path.join(root, group, case, "summary.json")
                if not os.path.exists(path):
                    continue
                summary = json.load(open(path))
                ir = summary["profiles"][0]["data"]["total"]["metrics"]["Ir"]["values"]["new"]
                func, _, rest = case.partition(".")
                ident, _, k = rest.rpartition("_")
                out.setdefault(binary, {}).setdefault(f"{func}/{ident}", [None, None])[int(k)] = ir
    return out


def criterion_rounds():
    """{scenario/size: {strategy: {n: [ns per object, one per round]}}} from
    criterion's baselines r0, r1, ... (throughput in objects)."""
    out = {}
    for group in sorted(os.listdir(CRITERION)) if os.path.isdir(CRITERION) else ():
        scenario, _, size = group.rpartition("_")
        for strategy in sorted(os.listdir(os.path.join(CRITERION, group))):
            sdir = os.path.join(CRITERION, group, strategy)
            for n in sorted(os.listdir(sdir), key=lambda v: int(v) if v.isdigit() else -1):
                if not n.isdigit():
                    continue
                rounds = sorted((d for d in os.listdir(os.path.join(sdir, n)) if re_round(d)), key=lambda d: int(d[1:]))
                per = [json.load(open(os.path.join(sdir, n, r, "estimates.json")))["median"]["point_estimate"] / int(n)
                       for r in rounds]
                if per:
                    out.setdefault(f"{scenario}/{size}", {}).setdefault(strategy, {})[int(n)] = per
    return out


def re_round(name):
    return name[:1] == "r" and name[1:].isdigit()


def ns(v):
    return f"{v:.3g} ns" if v < 100 else f"{v:.0f} ns"


def benchmarks_page(figs):
    L = ["# Benchmarks", "",
         "<!-- Generated by benches/report.py --benchmarks from gungraun's and criterion's output, kept as "
         "docs/benchmarks.json: `python3 benches/report.py --benchmarks docs/benchmarks.json` rewrites this "
         "page. -->", ""]
    paths = figs.get("paths") or {}
    if paths:
        L += ["## Instructions per box (gungraun)", "",
              f"`python3 benches/run.py paths` ({figs.get('paths_when', '')}): each case in a process of its "
              "own under callgrind (gungraun 0.20, the whole process and every thread counted), at two "
              "repetition counts; the difference over the boxes (or calls) added is the cost of one, free of "
              "start-up and first refills. 64-byte boxes; the process has had a second thread first, as "
              "programs that free across threads have (glibc's malloc is slower from then on). Cases: "
              "benches/paths/mod.rs. Instruction counts do not move with the machine's load.", ""]
        cols = [b for b in BINARIES if b in paths]
        rows = []
        for func, ident, label in PATHS:
            row = [label]
            for b in cols:
                pair = paths[b].get(f"{func}/{ident}")
                row.append(f"{(pair[1] - pair[0]) / ADDED[ident]:.1f}" if pair and None not in pair else "")
            if any(row[1:]):
                rows.append(row)
        L += table(["case"] + [BINARIES[b] for b in cols], rows, ["---"] + ["---:"] * len(cols))
        per = lambda b, c: (lambda p: (p[1] - p[0]) if p and None not in p else None)(paths.get(b, {}).get(c))
        label = {f"{f}/{i}": t for f, i, t in PATHS}
        over = [[label[c]] + [
            f"{100 * (per(w, c) / per(a, c) - 1):+.1f}%" if per(w, c) and per(a, c) else "–"
            for w, a in (("paths_batch_system", "paths_system"), ("paths_batch_mimalloc", "paths_mimalloc"))]
            for c in ("box_new/n1024", "small_allocs/n1024")]
        L += ["The wrapper alone: instructions through `BatchAlloc<A>` with no scope open over `A`'s own:", ""]
        L += table(["case", "BatchAlloc<System> over System", "BatchAlloc<MiMalloc> over MiMalloc"], over,
                   ["---", "---:", "---:"])
    matrix = figs.get("matrix") or {}
    if matrix:
        rounds = max(len(v) for s in matrix.values() for st in s.values() for v in st.values())
        L += ["## The matrix (criterion)", "",
              f"`python3 benches/run.py matrix{figs.get('matrix_args', '')}` ({rounds} rounds, "
              f"{figs.get('matrix_when', '')}): in each round every chunk (one scenario and object size) runs in "
              "each of the five binaries in turn, in an order that rotates each round; each round is a criterion "
              "baseline (`r0`, `r1`, ...). Median over rounds of criterion's median ns per object; in brackets "
              "the range over rounds; the fastest of each row in bold. Strategies: `batch-*` a `#[batch_alloc]` "
              "loop on BatchAlloc<System> or BatchAlloc<MiMalloc>; `wrap-*` `Box::new` through the same wrapper "
              "with no scope open; `box-*` `Box::new` on glibc, mimalloc or jemalloc; `bumpalo` (an arena per "
              "loop), `bumpalo-reset` (one arena reset per loop), `typed-arena`; `vec` one "
              "`Vec::with_capacity(N)`, the limit. Scenarios (benches/matrix/groups.rs): `alloc_drop` allocate "
              "N then drop them; `alloc_only` allocation alone; `cross_thread` allocate here, drop on a worker "
              "thread, round trip; `remote_drop` the worker's drop alone. Times are of a 2-core machine shared "
              "with other work: compare within a row.", ""]
        for chunk in sorted(matrix, key=lambda c: (c.split("/")[0], int(c.split("/")[1][:-1]))):
            strategies = sorted(matrix[chunk])
            counts = sorted({n for st in matrix[chunk].values() for n in st})
            rows = []
            for n in counts:
                meds = {st: med(matrix[chunk][st][n]) for st in strategies if n in matrix[chunk][st]}
                best = min(meds.values())
                row = [f"{n:,}"]
                for st in strategies:
                    if st not in meds:
                        row.append("")
                        continue
                    v = matrix[chunk][st][n]
                    cell = ns(meds[st]) + (f" ({ns(min(v))}–{ns(max(v))})" if len(v) > 1 else "")
                    row.append(f"**{cell}**" if meds[st] == best else cell)
                rows.append(row)
            L += [f"### {chunk}", ""] + table(["N"] + [f"`{st}`" for st in strategies], rows,
                                               ["---:"] * (1 + len(strategies)))
    return "\n".join(L) + "\n"


def benchmarks(source):
    """docs/benchmarks.md from `source` (docs/benchmarks.json), or from the
    tools' output under target/ (kept as docs/benchmarks.json, merged over
    what it had: a paths run keeps the matrix's figures, and the reverse)."""
    path = os.path.join(ROOT, "docs", "benchmarks.json")
    figs = json.load(open(source)) if source else (json.load(open(path)) if os.path.exists(path) else {})
    if not source:
        when = datetime.date.today().isoformat()
        if paths := gungraun_counts():
            figs.update(paths=paths, paths_when=when)
        if matrix := criterion_rounds():
            figs.update(matrix=matrix, matrix_when=when, matrix_args=os.environ.get("MATRIX_ARGS", ""))
        with open(path, "w") as f:
            json.dump(figs, f, indent=0, sort_keys=True)
    with open(os.path.join(ROOT, "docs", "benchmarks.md"), "w") as f:
        f.write(benchmarks_page(figs))
    print("wrote docs/benchmarks.md", file=sys.stderr)


def main():
    if sys.argv[1:2] == ["--benchmarks"]:
        return benchmarks(sys.argv[2] if len(sys.argv) > 2 else None)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results")
    ap.add_argument("--out")
    ap.add_argument("--publish", action="store_true",
                    help="write docs/crates.md and docs/crates.json")
    ap.add_argument("--wrapper", metavar="RESULTS",
                    help="a run of the wrapper-alone, scope and threads builds, for the section against the "
                         "allocator BatchAlloc wraps (kept as docs/crates-wrapper.json; that file is read by "
                         "default)")
    args = ap.parse_args()
    with open(args.results) as f:
        res = json.load(f)
    kept_wrapper = os.path.join(ROOT, "docs", "crates-wrapper.json")
    if args.wrapper or os.path.exists(kept_wrapper):
        res["wrapper"] = json.load(open(args.wrapper or kept_wrapper))
        if args.publish and args.wrapper:
            with open(kept_wrapper, "w") as f:
                json.dump(slim(res["wrapper"]), f, separators=(",", ":"))
    text = write(res)
    if args.publish:
        return publish(text, res, args.results)
    # docs/crates.json's page is docs/crates.md; a run's, report.md beside it.
    out = args.out or os.path.join(os.path.dirname(os.path.abspath(args.results)),
                                   "crates.md" if args.results.endswith("crates.json") else "report.md")
    with open(out, "w") as f:
        f.write(text)
    print(f"report: {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
