#!/usr/bin/env python3
"""Checks the relative links of README.md, CHANGELOG.md and docs/*.md.

    python3 docs/check_links.py [FILE.md ...]

Every relative link (`[text](path)`, `![alt](path)`, `[ref]: path`,
`<a href>`, `<img src>`) must point at a file or directory that exists,
and an anchor (`#heading`, `page.md#heading`) at a heading of that page,
by GitHub's slugs (lower case, punctuation dropped, spaces to hyphens,
`-1`, `-2`, ... for repeats) or at an `id`/`name` the page sets. Links
with a scheme (`https:`, `mailto:`) and links inside code are not
checked. Prints each broken link as FILE:LINE: TARGET: why, and exits 1
if there is any. Standard library only.
"""
import html
import os
import re
import sys
import unicodedata
import urllib.parse

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
DEFAULT_FILES = ["README.md", "CHANGELOG.md", "docs/*.md"]

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


def main(argv):
    import glob
    patterns = argv or [os.path.join(ROOT, p) for p in DEFAULT_FILES]
    files = sorted({os.path.abspath(f) for p in patterns for f in glob.glob(p)})
    if not files:
        sys.exit("check_links.py: no files to check")
    problems = [p for f in files for p in check(f)]
    for p in problems:
        print(p)
    sys.stdout.flush()
    if problems:
        print(f"check_links.py: {len(problems)} broken link(s) in {len(files)} files",
              file=sys.stderr)
        return 1
    print(f"check_links.py: {len(files)} files, every relative link resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
