"""Published crates' own test suites, run as written and with every fn and
impl annotated, in debug and in release, and compared test by test: a
differential test of the attribute on code nobody here wrote (it measures
nothing; it shares the crates harness's copies and annotation,
benches/crates/crates.py).

    python3 benches/run.py suites                        # every crate of SUITES
    python3 benches/run.py suites --crates kdl,indexmap  # some
    python3 benches/run.py suites --profiles debug       # one profile
    python3 benches/run.py suites --facade ../other-worktree   # another batch-alloc

Per crate (pinned below, and its dependencies pinned by the lockfile in
tests/crates/locks/, written by the first run and committed):

1. Copies: the crate as published, from cargo's registry cache, and its
   annotated copy (crates.py's annotated_copy: `#[::batch_alloc::batch_alloc]`, or
   --attr, on every fn and impl under src/, a path dependency on the
   facade, and BatchAlloc<System> as the global allocator of the unit-test
   binary and of each integration-test binary; doc-tests run the annotated
   library on the default allocator, since rustdoc gives them no place for
   an item).
2. Per profile (`cargo test` and `cargo test --release`), per copy: build
   every test target (`cargo test --no-run --message-format json`: the
   compiler's errors and warnings with their file and line), then run the
   suite (`cargo test --no-fail-fast`) and read libtest's plain output:
   every `test NAME ... RESULT` line under its binary's `Running` or
   `Doc-tests` header, each binary's `test result:` counts (which the
   lines read must add up to), and the binaries that died without one.
3. Compare, per profile: the same tests, with the same outcome (ok,
   FAILED, ignored). A test only one side ran counts as a difference.

Why libtest's plain output and not nextest: nextest runs no doc-tests and
runs each test in a process of its own, which is not how the crates' users
run them (a test binary's tests share the process, its allocator's thread
caches and its global state, and that sharing is part of what is tested);
libtest's JSON output is nightly-only. The plain lines are checked against
each binary's own counts, so a line the parse missed shows as an error.
"""
import datetime
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import tomllib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benches", "crates"))
import crates  # noqa: E402
from crates import ROOT, SCRATCH, log  # noqa: E402

LOCKS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "locks")

# The crates: each pinned; `about` says what it is, `runtime` what its
# async tests run on, `features` the cargo features its tests need (as its
# own CI passes them).
SUITES = {
    "serde_json": dict(version="1.0.154", about="JSON parser and serializer"),
    "kdl": dict(version="6.7.1", about="KDL parser (winnow), lossless document tree"),
    "full_moon": dict(version="3.0.0", about="Lua parser, lossless tree"),
    "sqlparser": dict(version="0.64.0", about="SQL parser, recursive descent",
                      note="its package ships its unit tests and doc-tests, not its tests/ directory"),
    "semver": dict(version="1.0.28", about="version and requirement parser"),
    "hashbrown": dict(version="0.17.2", about="hash table"),
    "indexmap": dict(version="2.14.2", about="ordered hash map"),
    "bytes": dict(version="1.12.2", about="byte buffers"),
    "async-channel": dict(version="2.5.0", about="async MPMC channel", runtime="futures-lite"),
    "tokio-stream": dict(version="0.1.19", about="async streams over tokio", runtime="tokio"),
    "tokio-util": dict(version="0.7.20", about="codecs, sync and task utilities over tokio (many `async fn`)",
                       runtime="tokio", features="full"),
}
PROFILES = ("debug", "release")


def cargo(args, cwd, timeout):
    """Runs cargo (stdout and stderr as one stream, in order) in a process
    group of its own, which a timeout ends whole: (exit code or None on a
    timeout, output, seconds)."""
    env = crates.cargo_env()
    env.update(CARGO_TERM_COLOR="never", CARGO_INCREMENTAL="0")
    started = time.time()
    proc = subprocess.Popen(["cargo", *args], cwd=cwd, env=env, text=True, errors="replace",
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        code = None
    return code, out, round(time.time() - started)


def test_args(name, profile):
    """`cargo test`'s arguments for the crate, in the profile."""
    features = SUITES[name].get("features")
    return (["--release"] if profile == "release" else []) + (["--features", features] if features else [])


# ---- building -------------------------------------------------------------

def diagnostic(msg):
    """A compiler message of cargo's JSON output, as the report keeps it."""
    spans = msg.get("spans") or []
    primary = next((s for s in spans if s.get("is_primary")), spans[0] if spans else None)
    # A span inside a macro's expansion: where the macro was called.
    while primary and primary.get("expansion") and primary["file_name"].startswith("<"):
        primary = primary["expansion"]["span"]
    return dict(level=msg["level"], code=(msg.get("code") or {}).get("code"), message=msg["message"],
                file=primary["file_name"] if primary else None,
                line=primary["line_start"] if primary else None,
                column=primary["column_start"] if primary else None,
                rendered=msg.get("rendered") or msg["message"])


def build(dest, args, timeout):
    """Builds every test target: {ok, seconds, errors, warnings, tail}."""
    code, out, seconds = cargo(["test", "--no-run", "--no-fail-fast", "--message-format", "json"] + args,
                               dest, timeout)
    errors, warnings, seen = [], [], set()
    for line in out.splitlines():
        if not line.startswith("{"):
            continue
        try:
            m = json.loads(line)
        except json.JSONDecodeError:
            continue
        if m.get("reason") != "compiler-message":
            continue
        d = diagnostic(m["message"])
        if d["message"].startswith(("aborting due to", "For more information")) or \
                re.match(r"\d+ warnings? emitted", d["message"]):
            continue
        # The library's errors come again from its unit-test build.
        key = (d["level"], d["code"], d["message"], d["file"], d["line"], d["column"])
        if key in seen:
            continue
        seen.add(key)
        (errors if d["level"].startswith("error") else warnings).append(d)
    ok = code == 0
    tail = "" if ok or errors else "\n".join(l for l in out.splitlines() if not l.startswith("{"))[-3000:]
    if code is None:
        tail = f"timed out after {timeout} s\n" + tail
    return dict(ok=ok, seconds=seconds, errors=errors, warnings=warnings, tail=tail)


# ---- running --------------------------------------------------------------

HEADER = re.compile(r"^\s+Running (?:unittests )?(\S+)(?: \(|$)")
DOC_HEADER = re.compile(r"^\s+Doc-tests (\S+)")
TEST = re.compile(r"^test (.+) \.\.\. (ok|FAILED|ignored)(?:, .*)?$")
SUMMARY = re.compile(r"^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored;")
RERUN = re.compile(r"^error: test failed, to rerun pass `(.+?)`")
DIED = re.compile(r"process didn't exit successfully: .*\((.+)\)\s*$")


def parse_tests(out):
    """libtest's plain output, every binary's: ({"BINARY::TEST": outcome},
    {BINARY: {"counts": [passed, failed, ignored] or None, "read": [...],
    "died": why}})."""
    results, binaries = {}, {}
    section = None
    last_failed = None
    for line in out.splitlines():
        m = HEADER.match(line) or DOC_HEADER.match(line)
        if m:
            section = m.group(1) if HEADER.match(line) else "doc-tests"
            binaries[section] = dict(counts=None, read=[0, 0, 0], died=None)
            continue
        m = TEST.match(line)
        if m and section:
            outcome = m.group(2)
            results[f"{section}::{m.group(1)}"] = outcome
            binaries[section]["read"][("ok", "FAILED", "ignored").index(outcome)] += 1
            continue
        m = SUMMARY.match(line)
        if m and section:
            # Edition 2024's doc-tests run in several binaries (merged
            # and standalone) under one header, each with its counts.
            before = binaries[section]["counts"] or [0, 0, 0]
            binaries[section]["counts"] = [a + int(g) for a, g in zip(before, m.groups())]
            continue
        m = RERUN.match(line)
        if m:
            last_failed = section
            continue
        m = DIED.search(line)
        if m and last_failed and binaries[last_failed]["counts"] is None:
            binaries[last_failed]["died"] = m.group(1)
    return results, binaries


def run_suite(dest, args, timeout):
    code, out, seconds = cargo(["test", "--no-fail-fast"] + args, dest, timeout)
    results, binaries = parse_tests(out)
    problems = []
    for name, b in binaries.items():
        if b["counts"] is None:
            problems.append(f"{name}: no `test result` line" + (f" (died: {b['died']})" if b["died"] else ""))
        elif b["counts"] != b["read"]:
            problems.append(f"{name}: {b['counts']} by its count, {b['read']} read")
    if code is None:
        problems.append(f"timed out after {timeout} s")
    return dict(exit=code, seconds=seconds, results=results, binaries=binaries, problems=problems,
                tail=out[-3000:] if problems or not results else "")


def counts(results):
    return {k: sum(1 for v in results.values() if v == k) for k in ("ok", "FAILED", "ignored")}


# ---- a crate --------------------------------------------------------------

def fetch(names):
    """{name: registry directory} of the pinned crates (downloaded by
    `cargo metadata` on a workspace that depends on them)."""
    ws = os.path.join(SCRATCH, "suites-fetch")
    deps = "".join(f'{n} = "={SUITES[n]["version"]}"\n' for n in names)
    crates.write(os.path.join(ws, "Cargo.toml"), f"""# Generated by tests/crates/suites.py: fetches the suites' crates.
[package]
name = "suites-fetch"
version = "0.0.0"
edition = "2021"
publish = false

[lib]
path = "lib.rs"

[dependencies]
{deps}
[workspace]
""")
    crates.write(os.path.join(ws, "lib.rs"), "")
    found = crates.registry_packages(ws)
    out = {}
    for n in names:
        dirs = [d for v, d in found.get(n, []) if v == SUITES[n]["version"]]
        if len(dirs) != 1:
            sys.exit(f"suites.py: {n} {SUITES[n]['version']} not found in the registry")
        out[n] = dirs[0]
    return out


def place_lock(name, version, plain, annotated):
    """The committed lockfile into both copies (the annotated copy's cargo
    adds the facade's packages to it); without one, the plain copy's
    resolution now becomes the pin (written to LOCKS, to be committed)."""
    lock = os.path.join(LOCKS, f"{name}-{version}.lock")
    if not os.path.exists(lock):
        if not os.path.exists(os.path.join(plain, "Cargo.lock")):
            crates.run(["cargo", "generate-lockfile"], cwd=plain, env=crates.cargo_env())
        os.makedirs(LOCKS, exist_ok=True)
        shutil.copyfile(os.path.join(plain, "Cargo.lock"), lock)
        log(f"{name}: new lockfile {os.path.relpath(lock, ROOT)} (commit it: it pins the dev-dependencies)")
    for dest in (plain, annotated):
        target = os.path.join(dest, "Cargo.lock")
        marker = os.path.join(dest, ".batch-alloc-lock")
        text = open(lock).read()
        if not (os.path.exists(marker) and open(marker).read() == text):
            shutil.copyfile(lock, target)
            crates.write(marker, text)


def edition(dest):
    with open(os.path.join(dest, "Cargo.toml"), "rb") as f:
        return tomllib.load(f)["package"].get("edition", "2015")


def suite(name, registry_dir, annotator, facade, profiles, timeout, attr):
    version = SUITES[name]["version"]
    plain = crates.plain_copy(name, version, registry_dir)
    annotated, annotation = crates.annotated_copy(name, version, registry_dir, annotator, facade,
                                                  crates.work_dir(facade), attr)
    place_lock(name, version, plain, annotated)
    out = dict(version=version, edition=edition(plain), about=SUITES[name]["about"],
               runtime=SUITES[name].get("runtime"), note=SUITES[name].get("note"),
               plain_dir=plain, annotated_dir=annotated, annotation=annotation, profiles={})
    for profile in profiles:
        sides = {}
        for kind, dest in (("plain", plain), ("annotated", annotated)):
            log(f"{name} {version} ({profile}): building {'as written' if kind == 'plain' else 'annotated'} ...")
            b = build(dest, test_args(name, profile), timeout)
            side = dict(build=b)
            if b["ok"]:
                log(f"{name} ({profile}, {kind}): built in {b['seconds']} s; testing ...")
                side["run"] = run_suite(dest, test_args(name, profile), timeout)
                r = side["run"]
                log(f"{name} ({profile}, {kind}): {counts(r['results'])} in {r['seconds']} s"
                    + (f"; {'; '.join(r['problems'])}" if r["problems"] else ""))
            else:
                first = b["errors"][0] if b["errors"] else None
                log(f"{name} ({profile}, {kind}): DOES NOT BUILD: {len(b['errors'])} errors"
                    + (f", first {first['file']}:{first['line']}: {first['message']}" if first else ""))
            sides[kind] = side
        p, a = (sides[k].get("run", {}).get("results", {}) for k in ("plain", "annotated"))
        differ = [dict(test=t, plain=p.get(t, "not run"), annotated=a.get(t, "not run"))
                  for t in sorted(set(p) | set(a)) if p.get(t) != a.get(t)]
        seen = {(w["code"], w["message"], w["file"], w["line"]) for w in sides["plain"]["build"]["warnings"]}
        new_warnings = [w for w in sides["annotated"]["build"]["warnings"]
                        if (w["code"], w["message"], w["file"], w["line"]) not in seen]
        built = all(s["build"]["ok"] for s in sides.values())
        out["profiles"][profile] = dict(
            plain=sides["plain"], annotated=sides["annotated"], differ=differ, new_warnings=new_warnings,
            identical=built and not differ and not any(s["run"]["problems"] for s in sides.values()))
        log(f"{name} ({profile}): " + ("IDENTICAL" if out["profiles"][profile]["identical"] else
                                       f"DIFFERENT ({len(differ)} tests differ)" if built else "annotated copy does not build"))
    return out


# ---- the report -----------------------------------------------------------

def plural(n, word):
    return f"{n} {word}{'' if n == 1 else 's'}"


def shown(path):
    """A path as the report shows it: relative to the repository when in it."""
    rel = os.path.relpath(path, ROOT)
    return path if rel.startswith("..") else rel


def coded(e):
    return f"{e['code']} {e['message']}" if e["code"] else e["message"]


def where(e):
    return f"{e['file']}:{e['line']}" if e["file"] else "(no span)"


def verdict(pr):
    a = pr["annotated"]
    if not pr["plain"]["build"]["ok"]:
        return "as written does not build"
    if not a["build"]["ok"]:
        errs = a["build"]["errors"]
        first = f"; first `{where(errs[0])}` {coded(errs[0])}" if errs else ""
        return f"**does not build** ({plural(len(errs), 'error')}{first})"
    problems = pr["plain"]["run"]["problems"] + a["run"]["problems"]
    if pr["differ"]:
        return f"**{len(pr['differ'])} differ**"
    if problems:
        return f"**incomplete**: {problems[0]}"
    return f"identical ({len(a['run']['results'])})"


def markdown(res):
    """The report: the table, then each difference and compile error."""
    L = ["## Every crate", "", "| crate | version | edition | what | tests as written (debug): passed / failed / ignored | "
         + " | ".join(res["profiles"]) + " |",
         "|---|---|---|---|---:|" + "---|" * len(res["profiles"])]
    for name, s in res["crates"].items():
        first = s["profiles"][res["profiles"][0]]
        c = counts(first["plain"].get("run", {}).get("results", {}))
        kind = s["about"] + (f" (async: {s['runtime']})" if s["runtime"] else "")
        L.append(f"| {name} | {s['version']} | {s['edition']} | {kind} | {c['ok']} / {c['FAILED']} / {c['ignored']} | "
                 + " | ".join(verdict(s["profiles"][p]) for p in res["profiles"]) + " |")
    L.append("")
    L += [f"{name}: {s['note']}." for name, s in res["crates"].items() if s.get("note")] + [""]
    details = []
    for name, s in res["crates"].items():
        notes = []
        shown_errors = None
        for profile, pr in s["profiles"].items():
            a = pr["annotated"]
            if not a["build"]["ok"]:
                errs = a["build"]["errors"]
                same = [(e["file"], e["line"], e["column"], e["message"]) for e in errs]
                if errs and same == shown_errors:
                    notes += [f"**{profile}: the annotated copy does not build**, with the same errors.", ""]
                    continue
                shown_errors = same
                notes += [f"**{profile}: the annotated copy does not build**, {plural(len(errs), 'error')} "
                          f"(in {shown(s['annotated_dir'])}):", ""]
                notes += [f"- `{where(e)}:{e['column']}` {coded(e)}" for e in errs[:20]]
                if len(errs) > 20:
                    notes.append(f"- ... and {len(errs) - 20} more")
                notes += ["", "The first ones in full:", "", "```"]
                notes += "\n\n".join(e["rendered"].rstrip() for e in errs[:3]).splitlines() + ["```", ""]
                if not errs and a["build"]["tail"]:
                    notes += ["```", a["build"]["tail"].rstrip(), "```", ""]
                continue
            if pr["differ"]:
                notes += [f"**{profile}: {len(pr['differ'])} tests differ** (as written -> annotated):", ""]
                notes += [f"- `{d['test']}`: {d['plain']} -> {d['annotated']}" for d in pr["differ"][:40]]
                if len(pr["differ"]) > 40:
                    notes.append(f"- ... and {len(pr['differ']) - 40} more")
                notes.append("")
            for side in ("plain", "annotated"):
                r = pr[side].get("run")
                if r and r["problems"]:
                    notes += [f"{profile}, {'as written' if side == 'plain' else 'annotated'}: "
                              + "; ".join(r["problems"]), ""]
            if pr["new_warnings"]:
                notes += [f"{profile}: {len(pr['new_warnings'])} warnings only in the annotated copy, first: "
                          + "; ".join(f"`{where(w)}` {w['message']}" for w in pr["new_warnings"][:3]), ""]
        if notes:
            details += [f"### {name} {s['version']}", ""] + notes
    if details:
        L += ["## What differs", ""] + details
    return L


HOW = """Run it (everything it builds goes under target/crates/; about 77 minutes for every crate in both
profiles from a cold target directory, on the project's 2-core machine while other builds kept its load
average between 5 and 11: 50 CPU-minutes):

```sh
python3 benches/run.py suites                          # every crate, debug and release; exits 1 unless all identical
python3 benches/run.py suites --crates kdl             # one crate (or a list: kdl,indexmap)
python3 benches/run.py suites --profiles debug         # one profile
python3 benches/run.py suites --facade my-branch       # batch-alloc at a revision of this repository
python3 benches/run.py suites --facade /path/to/worktree   # or a directory, as it is
python3 benches/run.py suites --attr '#[::batch_alloc::batch_alloc]'   # another attribute text
python3 benches/run.py suites --publish                # and write this page
```

Each crate, pinned (its dependencies by the lockfiles in tests/crates/locks/), is copied from cargo's
registry twice: as published, and with `{attr}` (`--attr`) put on every fn and impl
block of its src/ by support/annotate, a path dependency on the facade, and `BatchAlloc<System>` as the
global allocator of its unit-test binary and of each integration-test binary that has none of its own
(doc-tests run the annotated library on the default allocator: rustdoc gives them no place for an item).
In each profile, both copies are built (`cargo test --no-run --message-format json`: every compiler error
with its file and line) and tested (`cargo test --no-fail-fast`); every `test NAME ... RESULT` line of
every test binary is read, and checked against the binary's own `test result` counts. *Identical*: both
ran the same tests, each with the same outcome (ok, FAILED or ignored); the count is of the tests
compared. Differences, compile errors (file:line in the annotated copy, whose directory is given) and
warnings that only the annotated copy gets follow the tables."""


def report(res):
    fac = res["facade"]
    L = ["# Published crates' own test suites, as written and annotated", "",
         "<!-- Generated by tests/crates/suites.py (`python3 benches/run.py suites --publish`); "
         "do not edit. -->", "",
         f"Run started {res['started']}, batch-alloc at {fac.get('commit')}"
         + (f" with uncommitted changes to {', '.join(d[3:] for d in fac['dirty'])}" if fac.get("dirty") else "")
         + f"; {res.get('seconds', 0) / 60:.0f} min in all on {res['nproc']} cores ({res['rustc']}).", "",
         HOW.format(attr=res.get("attr", crates.ATTR)), ""]
    L += markdown(res)
    rows = []
    for name, s in res["crates"].items():
        a = s["annotation"]
        times = []
        for profile, pr in s["profiles"].items():
            t = [pr[k]["build"]["seconds"] + pr[k].get("run", {}).get("seconds", 0) for k in ("plain", "annotated")]
            times.append(f"{t[0]} / {t[1]}")
        rows.append(f"| {name} | {a['fns']} | {a['impls']} | {a['trait_methods']} | "
                    f"{len(a['test_roots_on_batchalloc'])} | " + " | ".join(times) + " |")
    L += ["## What was annotated, and the time it took", "",
          "Time: building and running the suite, as written / annotated, in seconds (the first crate to "
          "need a dependency builds it).", "",
          "| crate | fns | impl blocks | trait default methods | integration-test binaries on BatchAlloc | "
          + " | ".join(f"{p}: s" for p in res["profiles"]) + " |",
          "|---|---:|---:|---:|---:|" + "---:|" * len(res["profiles"])] + rows
    return "\n".join(L) + "\n"


def run(facade, names=None, profiles=PROFILES, timeout=1800, attr=crates.ATTR):
    """Runs the suites; writes target/crates/suites/STAMP/{results.json,
    report.md} and returns (results, path of the report)."""
    names = names or list(SUITES)
    unknown = [n for n in names if n not in SUITES]
    if unknown:
        sys.exit(f"suites.py: unknown crates {unknown}; known: {list(SUITES)}")
    started = time.time()
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out_dir = os.path.join(SCRATCH, "suites", stamp)
    os.makedirs(out_dir, exist_ok=True)
    annotator = crates.build_annotator()
    dirs = fetch(names)
    res = dict(started=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               facade=crates.facade_info(facade), profiles=list(profiles), nproc=os.cpu_count(),
               rustc=crates.run(["rustc", "--version"]).stdout.strip(), attr=attr, crates={})
    path = os.path.join(out_dir, "results.json")
    for n in names:
        res["crates"][n] = suite(n, dirs[n], annotator, facade, profiles, timeout, attr)
        res["seconds"] = round(time.time() - started)
        with open(path, "w") as f:
            json.dump(res, f, indent=1)
    report_path = write_report(path)
    latest = os.path.join(SCRATCH, "suites", "latest")
    if os.path.islink(latest):
        os.remove(latest)
    os.symlink(stamp, latest)
    return res, report_path


def write_report(results, publish=False):
    """The report of a results.json: report.md beside it, or with
    `publish` docs/crate-suites.md; returns its path."""
    with open(results) as f:
        res = json.load(f)
    path = os.path.join(ROOT, "docs", "crate-suites.md") if publish else \
        os.path.join(os.path.dirname(os.path.abspath(results)), "report.md")
    with open(path, "w") as f:
        f.write(report(res))
    return path


def all_identical(res):
    return all(pr["identical"] for s in res["crates"].values() for pr in s["profiles"].values())
