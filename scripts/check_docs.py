#!/usr/bin/env python3
"""Checks the documentation against the build and the repository.

  check_docs.py [--root DIR] [--ral-compile PATH]

It fails (exit code 1, one line per problem) when:

(a) a CMake option, `option(RAL_...)` in any CMakeLists.txt or *.cmake file of the repository
    (build*/ folders and hidden folders excluded), is missing from the CMake options table of the
    docs (the first table under a heading containing "CMake options", in docs/building.md), or a
    `RAL_...` name in that table's first column is defined neither by `option(` nor as a cache
    variable (`set(NAME ... CACHE <type> ...)`, INTERNAL ones excluded);
(b) with --ral-compile, a `--flag` in the first column of the ral-compile options table (the first
    table under a heading containing "ral-compile` options", in docs/compiler.md) is not an option
    of `PATH --help`, or an option of `--help` (a line starting with two spaces and `--`) is
    missing from that table;
(c) a relative markdown link in README.md, CONTRIBUTING.md or docs/*.md points to a file that does not exist, or
    to a heading anchor (`page.md#anchor`, `#anchor`) that the target page does not have.

Standard library only.
"""

import argparse
import os
import re
import subprocess
import sys

OPTIONS_PAGE = "docs/building.md"
OPTIONS_HEADING = "CMake options"
COMPILE_PAGE = "docs/compiler.md"
COMPILE_HEADING = "ral-compile` options"

OPTION_RE = re.compile(r"\boption\(\s*(RAL_[A-Z0-9_]+)")
CACHE_RE = re.compile(r"\bset\(\s*(RAL_[A-Z0-9_]+)\s[^)]*?\bCACHE\s+([A-Z]+)", re.S)


def cmake_files(root):
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        if rel == ".":
            dirnames[:] = [d for d in dirnames
                           if not d.startswith("build") and not d.startswith(".")]
        else:
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if name == "CMakeLists.txt" or name.endswith(".cmake"):
                yield os.path.join(dirpath, name)


def strip_cmake_comments(text):
    return "\n".join(line.split("#", 1)[0] if "#" in line else line for line in text.split("\n"))


def split_row(line):
    """The cells of a markdown table row; `\\|` does not split."""
    cells = re.split(r"(?<!\\)\|", line.strip())
    if cells and cells[0] == "":
        cells = cells[1:]
    if cells and cells[-1] == "":
        cells = cells[:-1]
    return [c.strip() for c in cells]


def table_after_heading(path, heading_text):
    """The rows (lists of cells, header and separator excluded) of the first table after the
    first heading containing heading_text, or None."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    start = None
    for i, line in enumerate(lines):
        if line.startswith("#") and heading_text in line:
            start = i + 1
            break
    if start is None:
        return None
    rows = []
    in_table = False
    for line in lines[start:]:
        if line.startswith("#") and not in_table:
            return None
        if line.startswith("|"):
            in_table = True
            rows.append(split_row(line))
        elif in_table:
            break
    if len(rows) < 2:
        return None
    return rows[2:]


def check_cmake_options(root, problems):
    defined = {}
    cache = set()
    for path in cmake_files(root):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = strip_cmake_comments(f.read())
        for m in OPTION_RE.finditer(text):
            defined.setdefault(m.group(1), os.path.relpath(path, root))
        for m in CACHE_RE.finditer(text):
            if m.group(2) != "INTERNAL":
                cache.add(m.group(1))
    page = os.path.join(root, OPTIONS_PAGE)
    if not os.path.isfile(page):
        problems.append(f"{OPTIONS_PAGE}: missing (it holds the CMake options table)")
        return
    rows = table_after_heading(page, OPTIONS_HEADING)
    if not rows:
        problems.append(f"{OPTIONS_PAGE}: no table under a heading containing '{OPTIONS_HEADING}'")
        return
    documented = set()
    for row in rows:
        documented.update(re.findall(r"`(RAL_[A-Z0-9_]+)`", row[0]))
    for name, where in sorted(defined.items()):
        if name not in documented:
            problems.append(f"{OPTIONS_PAGE}: CMake option {name} ({where}) is not in the "
                            "options table")
    for name in sorted(documented):
        if name not in defined and name not in cache:
            problems.append(f"{OPTIONS_PAGE}: {name} is in the options table but no CMake file "
                            "defines it (option() or a cache variable)")


def check_ral_compile(root, binary, problems):
    page = os.path.join(root, COMPILE_PAGE)
    if not os.path.isfile(page):
        problems.append(f"{COMPILE_PAGE}: missing (it holds the ral-compile options table)")
        return
    rows = table_after_heading(page, COMPILE_HEADING)
    if not rows:
        problems.append(f"{COMPILE_PAGE}: no table under a heading containing '{COMPILE_HEADING}'")
        return
    documented = set()
    for row in rows:
        documented.update(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", row[0]))
    try:
        run = subprocess.run([binary, "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             timeout=120, check=False)
    except OSError as e:
        problems.append(f"--ral-compile {binary}: cannot run it: {e}")
        return
    except subprocess.TimeoutExpired:
        problems.append(f"--ral-compile {binary}: --help did not finish in 120 s")
        return
    text = run.stdout.decode("utf-8", errors="replace")
    if run.returncode != 0:
        problems.append(f"--ral-compile {binary}: --help exited with {run.returncode}")
        return
    offered = set()
    for line in text.split("\n"):
        m = re.match(r"  (--[a-z][a-z0-9-]*)", line)
        if m:
            offered.add(m.group(1))
    if not offered:
        problems.append(f"--ral-compile {binary}: --help lists no options")
        return
    for flag in sorted(documented - offered):
        problems.append(f"{COMPILE_PAGE}: {flag} is in the ral-compile options table but not in "
                        "ral-compile --help")
    for flag in sorted(offered - documented):
        problems.append(f"{COMPILE_PAGE}: ral-compile --help offers {flag}, which the options "
                        "table does not list")


def github_anchor(heading, seen):
    """The anchor GitHub gives a heading (lower case, punctuation dropped, spaces to '-';
    repeats get -1, -2, ...)."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    anchor = text.replace(" ", "-")
    if anchor in seen:
        seen[anchor] += 1
        anchor = f"{anchor}-{seen[anchor]}"
    else:
        seen[anchor] = 0
    return anchor


def strip_code(text):
    """The text with fenced code blocks and inline code spans blanked out."""
    out = []
    fence = None
    for line in text.split("\n"):
        m = re.match(r"\s*(```+|~~~+)", line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            out.append("")
            continue
        if m:
            fence = m.group(1)
            out.append("")
            continue
        out.append(re.sub(r"(`+)(.+?)\1", lambda s: " " * len(s.group(0)), line))
    return out


_anchor_cache = {}


def anchors_of(path):
    if path not in _anchor_cache:
        seen = {}
        anchors = set()
        with open(path, encoding="utf-8") as f:
            fence = False
            for line in f.read().split("\n"):
                if re.match(r"\s*(```|~~~)", line):
                    fence = not fence
                    continue
                m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
                if m and not fence:
                    anchors.add(github_anchor(m.group(1), seen))
        _anchor_cache[path] = anchors
    return _anchor_cache[path]


LINK_RE = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REF_RE = re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")


def check_links(root, problems):
    pages = [os.path.join(root, "README.md"), os.path.join(root, "CONTRIBUTING.md")]
    docs = os.path.join(root, "docs")
    if os.path.isdir(docs):
        pages += sorted(os.path.join(docs, n) for n in os.listdir(docs) if n.endswith(".md"))
    for page in pages:
        if not os.path.isfile(page):
            problems.append(f"{os.path.relpath(page, root)}: missing")
            continue
        with open(page, encoding="utf-8") as f:
            lines = strip_code(f.read())
        for number, line in enumerate(lines, 1):
            targets = [m.group(1) for m in LINK_RE.finditer(line)]
            m = REF_RE.match(line)
            if m:
                targets.append(m.group(1))
            for target in targets:
                if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target):  # http:, https:, mailto:, ...
                    continue
                path_part, _, fragment = target.partition("#")
                where = f"{os.path.relpath(page, root)}:{number}"
                if path_part:
                    resolved = os.path.normpath(os.path.join(os.path.dirname(page), path_part))
                    if not os.path.exists(resolved):
                        problems.append(f"{where}: link to {target}: {path_part} does not exist")
                        continue
                else:
                    resolved = page
                if fragment and resolved.endswith(".md") and os.path.isfile(resolved):
                    if fragment not in anchors_of(resolved):
                        problems.append(f"{where}: link to {target}: "
                                        f"{os.path.relpath(resolved, root)} has no heading "
                                        f"with anchor #{fragment}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    default_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--root", default=default_root,
                        help="the repository root (default: this script's parent folder's parent)")
    parser.add_argument("--ral-compile", help="the built ral-compile binary, to check its options")
    args = parser.parse_args()
    root = os.path.abspath(args.root)

    problems = []
    check_cmake_options(root, problems)
    if args.ral_compile:
        check_ral_compile(root, args.ral_compile, problems)
    check_links(root, problems)

    for p in problems:
        print(f"check_docs: {p}")
    if problems:
        print(f"check_docs: {len(problems)} problem(s)")
        return 1
    checked = "CMake options, links" + (", ral-compile options" if args.ral_compile else "")
    print(f"check_docs: OK ({checked})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
