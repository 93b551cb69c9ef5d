#!/usr/bin/env python3
"""Checks that the docs name what exists and say what the front page says.

    python3 docs/check_docs.py

Three checks, each printing what it finds as FILE:LINE: what: why, and
exit status 1 if any finds anything. Standard library only.

Links, in README.md, CHANGELOG.md and docs/*.md: every relative link (`[text](path)`, `![alt](path)`, `[ref]: path`,
`<a href>`, `<img src>`) must point at a file or directory that exists,
and an anchor (`#heading`, `page.md#heading`) at a heading of that page,
by GitHub's slugs (lower case, punctuation dropped, spaces to hyphens,
`-1`, `-2`, ... for repeats) or at an `id`/`name` the page sets. Links
with a scheme (`https:`, `mailto:`) and links inside code are not
checked.

Paths, in the same pages and in the comments of every tracked `.rs` file:
every repository path they name, in code or in prose, must exist. A token
is a path when it starts with one of the repository's top-level folders
followed by `/` (`rt/src/front/scope.rs`, `benches/run.py`, `.ci/run`),
or ends in a file extension the repository uses (`lib.rs`, `README.md`).
It may be written from the repository's root, from the file's own folder,
or from its crate's `src/` (rt/src's comments say `front/scope.rs`); a
path that does not start with a top-level folder may also be the tail
of a tracked path (`deserialize/run/builds.rs`); a bare file name must
be the name of some tracked file; `*` and `{a,b}`
must match something. Absolute paths, URLs and `PATH_EXCEPTIONS` (each
with its reason) are not paths of this repository.

Front page: README.md and src/lib.rs's crate docs (the two front pages,
kept as two texts because the README's relative links into docs/ would
not resolve on docs.rs) must agree where they say the same thing: the
minimum Rust version and the version to depend on (both as Cargo.toml
has them), the features (Cargo.toml's), the quick start's code (every
line of the README's block in the crate docs' first example, in order),
the sizes a scope leaves alone (the README's list, the crate docs'
table), and the environment variables (each read by the runtime).
"""
import fnmatch
import html
import os
import re
import sys
import unicodedata
import urllib.parse

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
PAGES = ["README.md", "CHANGELOG.md", "docs/*.md"]

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
COMMENT = re.compile(r"<!--.*?-->", re.S)
# [text](target "title"), text with one level of nested brackets.
INLINE_LINK = re.compile(
    r"\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*(<[^>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)"
    r"(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")
REF_DEF = re.compile(r"^ {0,3}\[([^\]]+)\]:\s*(<[^>]*>|\S+)")
HTML_LINK = re.compile(r"<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*[\"']([^\"']*)[\"']", re.I)
HTML_ID = re.compile(r"<[a-z][^>]*?\b(?:id|name)\s*=\s*[\"']([^\"']*)[\"']", re.I)
ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")


def prose_lines(text, blank_code=True):
    """(line number, line) of the text outside fenced code, with HTML
    comments and (if `blank_code`) inline code blanked, line breaks kept."""
    text = COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    fence = None
    for n, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) \
                    and not line.strip()[len(m.group(1)):].strip():
                fence = None
            continue
        if m:
            fence = m.group(1)
            continue
        yield n, INLINE_CODE.sub(lambda c: " " * len(c.group(0)), line) if blank_code else line


def heading_text(raw):
    """A heading's text as GitHub renders it: code spans keep their
    content as it stands; outside them links and images keep their text,
    tags go and entities are decoded (the slug drops `*`)."""
    parts, pos = [], 0
    for m in INLINE_CODE.finditer(raw):
        parts.append(prose_text(raw[pos:m.start()]))
        parts.append(m.group(0).strip("`").strip())
        pos = m.end()
    parts.append(prose_text(raw[pos:]))
    return "".join(parts).strip()


def prose_text(text):
    text = re.sub(r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\([^)]*\)", r"\1", text)
    return html.unescape(re.sub(r"<[^>]+>", "", text))


def slug(text):
    """GitHub's heading slug (github-slugger)."""
    keep = []
    for c in text.lower():
        cat = unicodedata.category(c)
        if c in " -" or cat[0] in "LMN" or cat == "Pc":
            keep.append(c)
    return "".join(keep).replace(" ", "-")


def anchors(path, cache={}):
    """The anchors a markdown page defines."""
    if path in cache:
        return cache[path]
    with open(path, encoding="utf-8") as f:
        text = f.read()
    found, seen = set(), {}
    previous = None
    for _, line in prose_lines(text, blank_code=False):
        m = ATX.match(line)
        heading = (m.group(2) or "") if m else None
        if heading is None and previous and previous.strip() and SETEXT.match(line) \
                and not ATX.match(previous):
            heading = previous.strip()
        if heading is not None:
            base = slug(heading_text(heading))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
        previous = line
    for m in HTML_ID.finditer(text):
        found.add(m.group(1))
    cache[path] = found
    return found


def links(path):
    """(line number, target) of every link in a page."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for n, line in prose_lines(text):
        m = REF_DEF.match(line)
        if m:
            yield n, m.group(2)
        for m in INLINE_LINK.finditer(line):
            yield n, m.group(2)
        for m in HTML_LINK.finditer(line):
            yield n, m.group(1)


def check(path):
    problems = []
    rel = os.path.relpath(path, ROOT)
    for n, target in links(path):
        target = target.strip("<>")
        if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
            continue
        where, _, anchor = target.partition("#")
        where = urllib.parse.unquote(where)
        dest = os.path.normpath(os.path.join(os.path.dirname(path), where)) if where else path
        if not os.path.exists(dest):
            problems.append(f"{rel}:{n}: {target}: no such file")
            continue
        if not anchor:
            continue
        if not dest.endswith(".md") or os.path.isdir(dest):
            problems.append(f"{rel}:{n}: {target}: an anchor into a file that is not markdown")
        elif urllib.parse.unquote(anchor) not in anchors(dest):
            problems.append(f"{rel}:{n}: {target}: no heading #{anchor} in "
                            f"{os.path.relpath(dest, ROOT)}")
    return problems


# Tokens that look like repository paths and are not: (pages the exception
# holds in, as a glob; the token, as a pattern; why it is not a path here).
PATH_EXCEPTIONS = [
    ("*", r"^target/", "cargo's build output, made by a build, not tracked"),
    ("*", r"^docs\.rs$", "the documentation host, not a file"),
    ("*", r"(^|/)([A-Z][A-Z_]*|x|file|your-file|data)\.[a-z]+$",
     "a placeholder in an example (FILE.json, written/x.rs)"),
    ("*", r"^init\.c$", "mimalloc's source file, which a comment quotes"),
    ("benches/crates/*", r"^alloc\.rs$", "written by benches/crates/crates.py for each build"),
    ("rt/src/front/report.rs", r"^src/", "a user's crate, in the report's sample output"),
    ("docs/crate-suites.md", r"^src/", "a published crate's files, in its tests' names"),
    ("docs/crates.md", r"^src/", "the published crates' sources, the input of a workload"),
]
EXTENSIONS = ("rs", "md", "py", "toml", "json", "stderr", "sh", "lock", "txt", "c", "png")
# A run of path characters; `{a,b}` and `*` are kept for expansion.
PATH_TOKEN = re.compile(r"[\w.\-/*{},]*[\w*}/]")
URL = re.compile(r"[a-z][a-z0-9+.-]*://\S*", re.I)
RUST_COMMENT = re.compile(r"^\s*//[/!]?(.*)$")


def tracked_files():
    """Every tracked file, relative to the root (git ls-files)."""
    import subprocess
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True,
                         capture_output=True).stdout.decode()
    return [f for f in out.split("\0") if f and os.path.exists(os.path.join(ROOT, f))]


def expand_braces(token):
    m = re.search(r"\{([^{}]*)\}", token)
    if not m:
        return [token]
    return [x for alt in m.group(1).split(",")
            for x in expand_braces(token[:m.start()] + alt + token[m.end():])]


def path_candidates(text, top_dirs):
    """The tokens of a line of text that name repository paths."""
    text = URL.sub(" ", text)
    for m in PATH_TOKEN.finditer(text):
        token = m.group(0)
        if m.start() > 0 and text[m.start() - 1] in "/~$<>.\\:":
            continue  # absolute, home, a variable's, a placeholder's or a type path's tail
        token = token.rstrip(".,")
        if token.startswith("./"):
            token = token[2:]
        if "/" in token:
            if token.split("/", 1)[0] not in top_dirs and not token.rsplit(".", 1)[-1] in EXTENSIONS:
                continue
        elif not re.fullmatch(r"[\w\-.*{},]*\w\.(%s)" % "|".join(EXTENSIONS), token):
            continue
        yield token


def path_exists(token, rel, names, files, top_dirs):
    """Whether `token`, named in the file `rel`, names something tracked."""
    import glob
    bases = [ROOT, os.path.join(ROOT, os.path.dirname(rel))]
    # A crate's files name its sources from its src/ (rt/tests's `heap/free.rs`).
    for crate in ("rt", "macros", "support/workloads"):
        if rel.startswith(crate + "/"):
            bases.append(os.path.join(ROOT, crate, "src"))
    if rel.startswith("src/"):
        bases.append(os.path.join(ROOT, "src"))
    for alt in expand_braces(token):
        if "/" not in alt.rstrip("/"):
            if "*" in alt:
                ok = any(fnmatch.fnmatch(n, alt) for n in names)
            else:
                ok = alt.rstrip("/") in names or any(
                    os.path.exists(os.path.join(b, alt)) for b in bases)
        else:
            ok = any(glob.glob(os.path.join(b, alt)) for b in bases) or (
                alt.split("/", 1)[0] not in top_dirs
                and any(fnmatch.fnmatch(f, "*/" + alt.rstrip("/") + ("*" if alt.endswith("/") else ""))
                        for f in files))
        if not ok:
            return False
    return True


def commented_lines(path):
    """(line number, text) of a Rust file's comments, doc comments included."""
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = RUST_COMMENT.match(line)
            if m:
                yield n, m.group(1)


def check_paths(pages):
    files = tracked_files()
    top_dirs = {f.split("/", 1)[0] for f in files if "/" in f}
    names = {os.path.basename(f) for f in files} | {d for f in files for d in f.split("/")[:-1]}
    sources = [os.path.join(ROOT, f) for f in files if f.endswith(".rs")]
    problems = []
    for path in pages + sources:
        rel = os.path.relpath(path, ROOT)
        if path.endswith(".rs"):
            lines = commented_lines(path)
        else:
            with open(path, encoding="utf-8") as f:
                lines = list(enumerate(COMMENT.sub(
                    lambda m: "\n" * m.group(0).count("\n"), f.read()).split("\n"), 1))
        for n, line in lines:
            for token in path_candidates(line, top_dirs):
                if any(fnmatch.fnmatch(rel, where) and re.search(pattern, token)
                       for where, pattern, _ in PATH_EXCEPTIONS):
                    continue
                if not path_exists(token, rel, names, files, top_dirs):
                    problems.append(f"{rel}:{n}: {token}: no such path in the repository")
    return problems


def section(text, start, stop):
    """The text from the line matching `start` to the next line outside
    fenced code matching `stop`."""
    lines = text.split("\n")
    begin = next(i for i, l in enumerate(lines) if re.match(start, l))
    fenced = False
    for end in range(begin + 1, len(lines)):
        if lines[end].startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(stop, lines[end]):
            break
    else:
        end = len(lines)
    return "\n".join(lines[begin:end])


def fenced_blocks(text, info):
    """The bodies of the fenced blocks whose info string is `info`."""
    return re.findall(r"^```%s\n(.*?)^```" % re.escape(info), text, re.M | re.S)


def check_front_page():
    """README.md and src/lib.rs's crate docs agree where they overlap."""
    def read(rel):
        with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
            return f.read()
    readme = read("README.md")
    crate_docs = "\n".join(m.group(1) for m in re.finditer(
        r"^//! ?(.*)$", read("src/lib.rs"), re.M))
    manifest = read("Cargo.toml")
    rust_version = re.search(r'^rust-version = "([^"]+)"', manifest, re.M).group(1)
    version = re.search(r'^version = "(\d+\.\d+)', manifest, re.M).group(1)
    features = set(re.findall(r"^(\w+) = \[", section(manifest, r"\[features\]", r"\["), re.M))
    features.discard("default")
    problems = []

    def agree(what, in_readme, in_crate_docs, truth=None):
        if in_readme != in_crate_docs or (truth is not None and in_readme != truth):
            problems.append(f"README.md and src/lib.rs: {what}: README {sorted(in_readme)}, "
                            f"crate docs {sorted(in_crate_docs)}"
                            + (f", expected {sorted(truth)}" if truth is not None else ""))

    msrv = re.compile(r"Rust (\d+\.\d+)\b")
    agree("minimum Rust version", set(msrv.findall(readme)), set(msrv.findall(crate_docs)),
          {rust_version})
    dep = re.compile(r'batch-alloc = (?:\{ version = )?"([^"]+)"')
    agree("version to depend on", set(dep.findall(readme)), set(dep.findall(crate_docs)),
          {version})
    agree("features", set(re.findall(r"`(\w+)`\s+\(", section(readme, r"Features:", r"^$"))),
          set(re.findall(r"^\| `(\w+)` \|", section(crate_docs, r"\| feature \|", r"^$"), re.M)),
          features)
    sizes = re.compile(r"\b(\d+ [KM]iB)\b")
    left_alone = "\n".join(l for l in section(crate_docs, r"# What a scope serves", r"# ").split("\n")
                            if l.startswith("|"))
    agree("sizes a scope leaves to the inner allocator",
          set(sizes.findall(section(readme, r"## When it does nothing", r"\*\*Where"))),
          set(sizes.findall(left_alone)))
    env = re.compile(r"\bBATCH_ALLOC_[A-Z]+\b")
    runtime = "".join(read(f) for f in tracked_files() if f.startswith("rt/src/"))
    readme_env, docs_env = set(env.findall(readme)), set(env.findall(crate_docs))
    agree("environment variables", readme_env - docs_env, set())
    for name in sorted(docs_env):
        if f'"{name}"' not in runtime:
            problems.append(f"src/lib.rs: {name}: the runtime reads no such variable")
    quick = [l.strip() for l in fenced_blocks(section(readme, r"## Quick start", r"## "), "rust")[0]
             .split("\n") if l.strip()]
    example = iter(l.strip() for l in fenced_blocks(
        section(crate_docs, r"# Quick start", r"# "), "")[0].split("\n"))
    missing = [l for l in quick if not any(l == e for e in example)]
    if missing:
        problems.append("README.md and src/lib.rs: the quick start's code: the crate docs' "
                        f"first example lacks (or reorders) {missing[0]!r}")
    return problems


def main(argv):
    import glob
    pages = sorted({os.path.abspath(f) for p in PAGES for f in glob.glob(os.path.join(ROOT, p))})
    if not pages:
        sys.exit("check_docs.py: no pages to check")
    failed = False
    for name, problems in [("links", [p for f in pages for p in check(f)]),
                           ("paths", check_paths(pages)),
                           ("front page", check_front_page())]:
        for p in problems:
            print(p)
        sys.stdout.flush()
        if problems:
            failed = True
            print(f"check_docs.py: {name}: {len(problems)} problem(s)", file=sys.stderr)
        else:
            print(f"check_docs.py: {name}: none wrong")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
