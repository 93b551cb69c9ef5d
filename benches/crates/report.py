#!/usr/bin/env python3
"""Writes the crates harness's report (markdown) from a results.json.

    python3 benches/crates/report.py target/crates/results/latest/results.json [--out FILE] [--publish]

Default output: report.md next to the results, and a copy at
target/crates/report.md; with --publish also docs/crates.md and the
crates table of README.md (between its markers). Standard library only.
"""
import argparse
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from crates import BUILD_TITLES, ROOT, SCRATCH  # noqa: E402

MODES = {"once": "parse once (a fresh process: read the input, parse, drop, exit)",
         "warm": "warm (five parses in one process; the fifth parse and its drop reported)"}


def med(xs):
    return statistics.median(xs) if xs else None


def x(r):
    return f"{r:.2f}x" if r is not None else "–"


def spread(rs):
    if not rs:
        return ""
    if len(rs) == 1:
        return ""
    return f" ({min(rs):.2f}–{max(rs):.2f})"


def mb(kb):
    return f"{kb / 1024:.1f} MiB" if kb is not None else "–"


def num(n):
    return f"{n:,.0f}" if n is not None else "–"


def per_round(rows, key):
    """Round -> the median over that round's runs of `key(run)`."""
    return {row["round"]: med([key(run) for run in row["runs"]]) for row in rows}


def wall_per_round(rows):
    return {row["round"]: row["wall_median"] for row in rows}


def ratios(base, this):
    """Speedups base/this per round (above 1: this is faster)."""
    return [base[r] / this[r] for r in this if r in base and this[r]]


def cell_table(res, w, mode):
    cells = res["cells"][w][mode]
    builds = [b for b in res.get("timed_builds", res["builds"]) if cells.get(b)]
    metrics = {
        "wall": {b: wall_per_round(cells[b]) for b in builds},
        "parse": {b: per_round(cells[b], lambda run: run["parse_ns"]) for b in builds},
        "drop": {b: per_round(cells[b], lambda run: run["drop_ns"]) for b in builds},
    }
    lines = []
    lines.append(f"**{MODES[mode]}**")
    lines.append("")
    lines.append("| build | process time | vs glibc | vs mimalloc | parse | vs glibc | vs mimalloc | drop | vs glibc | vs mimalloc | peak RSS | minor faults (process) | faults in parse / drop | CPU user / sys (process) |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for b in builds:
        row = [BUILD_TITLES.get(b, b)]
        for metric in ("wall", "parse", "drop"):
            this = metrics[metric][b]
            scale = 1e3 if metric == "wall" else 1e-6
            values = sorted(v * scale for v in this.values())
            shown = f"{med(values):.1f} ms"
            if len(values) > 1:
                shown += f" ({values[0]:.1f}–{values[-1]:.1f})"
            row.append(shown)
            for base in ("glibc", "mimalloc"):
                if base == b or base not in metrics[metric]:
                    row.append("")
                    continue
                rs = ratios(metrics[metric][base], this)
                row.append(f"{x(med(rs))}{spread(rs)}")
        runs = [run for rowr in cells[b] for run in rowr["runs"]]
        row.append(mb(med([r["maxrss_kb"] for r in runs])))
        row.append(num(med([r["minflt"] for r in runs])))
        row.append(f"{num(med([r['minflt_parse'] for r in runs]))} / {num(med([r['minflt_drop'] for r in runs]))}")
        row.append(f"{med([r['utime_us'] for r in runs]) / 1e3:.0f} / {med([r['stime_us'] for r in runs]) / 1e3:.0f} ms")
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    return lines


# The limit's columns: these builds' work (parse + drop of the reported
# parse) over the limit's, measured in the same rounds.
LIMIT_VS = ("mimalloc", "scope_mimalloc", "batch_mimalloc", "glibc", "scope_system", "batch_system")


def work_per_round(rows):
    return {row["round"]: med([run["parse_ns"] + run["drop_ns"] for run in row["runs"]]) for row in rows}


def limit_figures(res, w, mode):
    """{build: (median work ns, median ratio to the limit, (lo, hi))} and
    the share of mimalloc's gap that scope() on BatchAlloc<MiMalloc>
    closes, or None without a limit build."""
    cells = res["cells"][w][mode]
    if not cells.get("limit"):
        return None
    lim = work_per_round(cells["limit"])
    out = {}
    for b in ("limit",) + LIMIT_VS:
        if not cells.get(b):
            continue
        this = work_per_round(cells[b])
        rs = [this[r] / lim[r] for r in this if r in lim]
        out[b] = (med(list(this.values())), med(rs), (min(rs), max(rs)))
    share = None
    if "mimalloc" in out and "scope_mimalloc" in out:
        mi, ba = out["mimalloc"][1], out["scope_mimalloc"][1]
        share = (mi - ba) / (mi - 1) if mi > 1.005 else None
    return out, share


def share_text(share, res, w, mode):
    if share is None:
        figs = limit_figures(res, w, mode)
        return "mimalloc at or past the limit" if figs and figs[0].get("mimalloc") else "–"
    return f"{100 * share:.0f}%"


def peak(res, w, mode, b):
    rows = res["cells"][w][mode].get(b) or []
    runs = [run for row in rows for run in row["runs"]]
    return med([r["maxrss_kb"] for r in runs]) if runs else None


def work_instructions(res, w, b):
    inst = (res.get("instructions_work") or {}).get(w, {}).get(b)
    return inst["parse"] + inst["drop"] if inst else None


def limit_summary(res):
    """The table of every workload against the limit (the top of the page
    and the README's)."""
    L = []
    L.append("| workload | mode | mimalloc / limit | batch / limit | share of mimalloc's gap closed | "
             "peak RSS: mimalloc / batch / limit | instructions of the parse and drop: mimalloc / batch / limit |")
    L.append("|---|---|---:|---:|---:|---:|---:|")
    for w in res["inputs"]:
        if w not in res.get("cells", {}):
            continue
        for mode in ("once", "warm"):
            figs = limit_figures(res, w, mode)
            if not figs:
                continue
            f, share = figs
            rss = " / ".join(mb(peak(res, w, mode, b)).replace(" MiB", "") for b in ("mimalloc", "scope_mimalloc", "limit")) + " MiB"
            inst = [work_instructions(res, w, b) for b in ("mimalloc", "scope_mimalloc", "limit")]
            inst_text = " / ".join(f"{n / 1e6:,.0f}" for n in inst) + " M" if all(inst) and mode == "once" else ""
            L.append(f"| {w} | {mode} | {x(f['mimalloc'][1])} ({f['mimalloc'][2][0]:.2f}–{f['mimalloc'][2][1]:.2f}) | "
                     f"**{x(f['scope_mimalloc'][1])}** ({f['scope_mimalloc'][2][0]:.2f}–{f['scope_mimalloc'][2][1]:.2f}) | "
                     f"{share_text(share, res, w, mode)} | {rss} | {inst_text} |")
    L.append("")
    return L


README_BEGIN = "<!-- crates table: generated by benches/crates/report.py --publish; do not edit -->"
README_END = "<!-- end of crates table -->"


def parse_ratio(res, w, b, base="mimalloc", mode="once"):
    cells = res["cells"][w][mode]
    if not cells.get(b) or not cells.get(base):
        return None
    this = per_round(cells[b], lambda run: run["parse_ns"])
    rs = ratios(per_round(cells[base], lambda run: run["parse_ns"]), this)
    return f"{x(med(rs))}{spread(rs)}"


def readme_table(res):
    """The README's table: each workload's parse in scope() and annotated
    against mimalloc (once), peak RSS, and the limit's columns."""
    L = [README_BEGIN, "",
         "| workload | parse in one `scope()` | every fn and impl annotated | peak RSS, `scope()` / mimalloc | "
         "mimalloc / limit, once · warm | batch / limit, once · warm | share of mimalloc's gap closed, once · warm | "
         "instructions of the work: mimalloc / limit, batch / limit |",
         "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for w, info in res["inputs"].items():
        if w not in res.get("cells", {}):
            continue
        lim = {m: limit_figures(res, w, m) for m in ("once", "warm")}
        if not all(lim.values()):
            continue
        cols = [f"{w} ({res['projects'][info['project']]['style']})",
                parse_ratio(res, w, "scope_mimalloc") or "–",
                parse_ratio(res, w, "batch_mimalloc") or "–",
                f"{mb(peak(res, w, 'once', 'scope_mimalloc')).replace(' MiB', '')} / "
                f"{mb(peak(res, w, 'once', 'mimalloc'))}",
                " · ".join(x(lim[m][0]["mimalloc"][1]) for m in ("once", "warm")),
                " · ".join(f"**{x(lim[m][0]['scope_mimalloc'][1])}**" for m in ("once", "warm")),
                " · ".join(share_text(lim[m][1], res, w, m) for m in ("once", "warm"))]
        inst = {b: work_instructions(res, w, b) for b in ("mimalloc", "scope_mimalloc", "limit")}
        cols.append(f"{inst['mimalloc'] / inst['limit']:.3f}, {inst['scope_mimalloc'] / inst['limit']:.3f}"
                    if all(inst.values()) else "–")
        L.append("| " + " | ".join(cols) + " |")
    L += ["", README_END]
    return "\n".join(L)


def publish(text, res):
    """docs/crates.md, and the README's table between its markers."""
    with open(os.path.join(ROOT, "docs", "crates.md"), "w") as f:
        f.write(text)
    path = os.path.join(ROOT, "README.md")
    readme = open(path).read()
    start, end = readme.find(README_BEGIN), readme.find(README_END)
    if start < 0 or end < 0:
        sys.exit("report.py: README.md has no crates table markers")
    readme = readme[:start] + readme_table(res) + readme[end + len(README_END):]
    with open(path, "w") as f:
        f.write(readme)
    print("published docs/crates.md and README.md's crates table", file=sys.stderr)


def limit_table(res, w, mode):
    figs = limit_figures(res, w, mode)
    if not figs:
        return []
    f, share = figs
    L = [f"Against the limit, {mode}: work is the reported parse and its drop; `/ limit` is this build's work "
         f"over the limit's, within each round (median and range over rounds; above 1: slower than the limit).",
         "",
         "| build | work | / limit |",
         "|---|---:|---:|"]
    for b, (t, r, (lo, hi)) in f.items():
        L.append(f"| {BUILD_TITLES.get(b, b)} | {t / 1e6:.1f} ms | {'' if b == 'limit' else f'{x(r)} ({lo:.2f}–{hi:.2f})'} |")
    L.append("")
    L.append(f"Share of mimalloc's gap to the limit closed by `scope()` on BatchAlloc<MiMalloc>: "
             f"{share_text(share, res, w, mode)}.")
    L.append("")
    return L


def limit_notes(res, w):
    out = []
    for mode in ("once", "warm"):
        for b in res["builds"]:
            rows = res["cells"][w][mode].get(b) or []
            runs = [run for row in rows for run in row["runs"] if run.get("limit")]
            if not runs:
                continue
            lim = runs[0]["limit"]
            refused = max(r["limit"]["refused"] for r in runs)
            out.append(f"{mode}, {BUILD_TITLES.get(b, b)}: {lim['bytes'] / 2**20:.1f} MiB bumped through by the "
                       f"reported parse, {num(lim['resets'])} resets"
                       + (f", **{refused} refused** (something outlived a parse)" if refused else ""))
    return out


def counters(res, w):
    out = []
    for mode in ("once", "warm"):
        for b in res["builds"]:
            rows = res["cells"][w][mode].get(b) or []
            runs = [run for row in rows for run in row["runs"] if run.get("batch")]
            if not runs:
                continue
            first = runs[0]["batch"]
            out.append(f"{mode}, {BUILD_TITLES.get(b, b)}: {num(first['scoped_allocations'])} allocations "
                       f"from scopes, {num(first['reserve_calls'])} refills, "
                       f"{first['span_bytes'] / 2**20:.1f} MiB of spans with the value alive")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--out")
    ap.add_argument("--publish", action="store_true",
                    help="also write docs/crates.md and the README's crates table")
    args = ap.parse_args()
    import json
    with open(args.results) as f:
        res = json.load(f)
    L = []
    L.append("# Published parser crates, as written and annotated")
    L.append("")
    L.append("<!-- Generated by benches/crates/report.py from results.json; rerun "
             "`python3 benches/crates/report.py RESULTS --publish` to rewrite it (and the README's table). -->")
    L.append("")
    cfg = res["cfg"]
    fac = res["facade"]
    dirty = f" with uncommitted changes to {', '.join(d[3:] for d in fac['dirty'])}" if fac.get("dirty") else ""
    L.append(f"Generated by **`benches/crates/run.sh`** ({cfg['rounds']} rounds; per round, per workload and "
             f"mode, one hyperfine run of the builds in a shuffled order, {cfg['warmup']} warm-up and "
             f"{cfg['runs']} timed runs each), started {res['started']}, batch-alloc at {fac.get('commit')}{dirty}; "
             f"{res.get('seconds', 0) // 60} min in all (building {res.get('build_seconds', 0) // 60} min). "
             f"Host: {res['host']['nproc']} cores; transparent huge pages `{res['host']['thp']['enabled']}`, "
             f"defrag `{res['host']['thp']['defrag']}`.")
    if res.get("note"):
        L.append("")
        L.append(res["note"])
    L.append("")
    L.append("Builds: *as written* is each crate as published; *annotated* is the same crate with "
             "`#[batch_alloc]` on every fn and impl of its sources (and of the library whose loops drive "
             "its parse: winnow for kdl, serde_core for serde_json), by support/annotate (syn's "
             "annotated copy is a package of another name, `syn-annotated`, since batch-alloc's attribute "
             "itself depends on syn); *in scope()* is the crate as written with the parse inside one "
             "`batch_alloc::scope`; *limit* is the crate as written on the warm arena (see below; in its "
             "`once` process a warm-up parse comes first, so its process time counts two parses). The "
             "workload's own code (the driver, the derived structs) is not annotated. Times: medians over "
             "rounds of each round's median; in brackets the range over rounds. Ratios are speedups "
             "(baseline time / build time, above 1: faster), computed within each round and then the "
             "median and range over rounds. Peak RSS and faults are per process (getrusage at exit, "
             "the input text included), medians over all timed runs.")
    L.append("")
    if res.get("cells") and any(limit_figures(res, w, "once") for w in res["cells"]):
        L.append("## Against the limit")
        L.append("")
        L.append("The limit is a warm arena as the global allocator (benches/crates/workloads/limit.rs): it "
                 "bumps a pointer, frees nothing, and is reset to a mark once each parse has been dropped, "
                 "after a warm-up parse, so every timed parse runs through memory already faulted in. No "
                 "allocator of individually freeable objects can cost less. *batch* is the crate as written, "
                 "its parse in one `scope()`, on BatchAlloc<MiMalloc>. Ratios are of the work (the reported "
                 "parse and its drop), this build's over the limit's within each round: medians over rounds, "
                 "range in brackets; above 1, slower than the limit. Share of mimalloc's gap closed: "
                 "(mimalloc - batch) / (mimalloc - limit), from the two median ratios. Peak RSS: medians over "
                 "all timed runs. Instructions: callgrind, the reported parse and its drop only (counted "
                 "between dumps at the start of each), of a `once` process. On this shared machine single "
                 "rounds moved by far more than the gaps between these builds (see the ranges): the "
                 "instruction counts are the steady witness, and a share computed from two small gaps "
                 "(a few per cent each) is mostly noise.")
        L.append("")
        L.extend(limit_summary(res))
    if res.get("annotation"):
        L.append("## What was annotated")
        L.append("")
        L.append("| crate | version | fns | impl blocks | trait default methods | const fns left | item macros left |")
        L.append("|---|---|---:|---:|---:|---:|---:|")
        for name, a in res["annotation"].items():
            L.append(f"| {name} | {a['version']} | {a['fns']} | {a['impls']} | {a['trait_methods']} | "
                     f"{a['const_fns_skipped']} | {a['item_macros_untouched']} |")
        L.append("")
    if res.get("tests"):
        L.append("## The crates' own tests, as written and annotated")
        L.append("")
        L.append("`cargo test --no-fail-fast` in a copy of each crate as published (default allocator) and "
                 "in the annotated copy, whose unit-test and integration-test binaries run on "
                 "`BatchAlloc<System>` (doc-tests: the annotated library on the default allocator). "
                 "Compared: the outcome of every test of every test binary.")
        L.append("")
        L.append("| crate | as written: passed / failed / ignored | annotated: passed / failed / ignored | every test the same | time as written / annotated |")
        L.append("|---|---:|---:|---|---:|")
        for name, t in res["tests"].items():
            if t.get("skipped"):
                L.append(f"| {name} {t['version']} | not run: {t['skipped']} | | | |")
                continue
            p, a = t["plain"], t["annotated"]
            same = "yes" if t["identical"] else "**no**: " + ", ".join(t["differ"][:5])
            L.append(f"| {name} {t['version']} | {p['ok']} / {p['FAILED']} / {p['ignored']} | "
                     f"{a['ok']} / {a['FAILED']} / {a['ignored']} | {same} | "
                     f"{t['plain_seconds']} s / {t['annotated_seconds']} s |")
        L.append("")
    if res.get("cells"):
        for w, info in res["inputs"].items():
            if w not in res["cells"]:
                continue
            proj = res["projects"][info["project"]]
            L.append(f"## {w}: {proj['style']}")
            L.append("")
            made = ("the crates' sources from crates.io, at pinned versions" if proj.get("corpus")
                    else "generated")
            L.append(f"Input: {info['size']:,} {info['about']} ({info['input_bytes'] / 1e6:.2f} MB), "
                     f"{made}; annotated: {', '.join(proj['annotate'])}.")
            L.append("")
            for mode in ("once", "warm"):
                L.extend(cell_table(res, w, mode))
                L.extend(limit_table(res, w, mode))
            inst = (res.get("instructions") or {}).get(w)
            if inst:
                base = inst.get("glibc")
                mi = inst.get("mimalloc")
                L.append("Instructions of a `once` process (callgrind; `÷`: the baseline's count divided by "
                         "this one's, above 1: fewer instructions):")
                L.append("")
                L.append("| build | instructions | glibc ÷ | mimalloc ÷ |")
                L.append("|---|---:|---:|---:|")
                for b, n in inst.items():
                    L.append(f"| {BUILD_TITLES.get(b, b)} | {n / 1e6:,.1f} M | "
                             f"{base / n:.3f} | {mi / n:.3f} |" if base and mi else f"| {b} | {n} | | |")
                L.append("")
            wi = (res.get("instructions_work") or {}).get(w)
            if wi:
                L.append("Instructions of the reported parse and of its drop (callgrind, counted between dumps "
                         "at the start of each, in a `once` process; the drop's includes the process's exit, "
                         "which frees little more than the input; for the limit, the parse after the warm-up):")
                L.append("")
                L.append("| build | parse | drop | parse + drop | / limit |")
                L.append("|---|---:|---:|---:|---:|")
                lim = wi.get("limit")
                for b, n in wi.items():
                    tot = n["parse"] + n["drop"]
                    rel = f"{tot / (lim['parse'] + lim['drop']):.3f}" if lim else ""
                    L.append(f"| {BUILD_TITLES.get(b, b)} | {n['parse'] / 1e6:,.1f} M | {n['drop'] / 1e6:,.1f} M | "
                             f"{tot / 1e6:,.1f} M | {rel} |")
                L.append("")
            notes = limit_notes(res, w)
            if notes:
                L.append("The limit over the reported parse: " + "; ".join(notes) + ".")
                L.append("")
            c = counters(res, w)
            if c:
                L.append("Allocator counters over the reported parse: " + "; ".join(c) + ".")
                L.append("")
    text = "\n".join(L) + "\n"
    out = args.out or os.path.join(os.path.dirname(os.path.abspath(args.results)), "report.md")
    with open(out, "w") as f:
        f.write(text)
    with open(os.path.join(SCRATCH, "report.md"), "w") as f:
        f.write(text)
    print(f"report: {out}", file=sys.stderr)
    if args.publish:
        publish(text, res)


if __name__ == "__main__":
    main()
