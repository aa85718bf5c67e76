#!/usr/bin/env python3
"""Checks the relative links of the documentation: every [text](target) and
![alt](target) in README.md, ARCHITECTURE.md, bench/README.md and docs/*.md
(or the files given) must name a file or directory of the tree, and a
#fragment must name a heading of the Markdown file it points into (GitHub's
anchors: lower case, punctuation dropped, spaces as '-'). Links with a scheme
(https:, mailto:) are not followed. Exit 0 when every link resolves, else 1
with one line per broken link: FILE:LINE: target: why.

    scripts/check-doc-links.py [FILE.md...]
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose_lines(text):
    """(line number, line) outside fenced code blocks, with code spans
    (which may run over a line break) blanked out."""
    kept, fence = [], None
    for line in text.split("\n"):
        stripped = line.lstrip()
        if fence:
            kept.append("")
            if stripped.startswith(fence):
                fence = None
            continue
        if stripped.startswith("```") or stripped.startswith("~~~"):
            fence = stripped[:3]
            kept.append("")
            continue
        kept.append(line)
    prose = re.sub(r"(`+)(?:(?!\1)[^\n]|\n(?!\s*\n))*?\1", lambda m: "\n" * m.group(0).count("\n"), "\n".join(kept))
    yield from enumerate(prose.split("\n"), 1)


def heading_text(path):
    # Inline code is part of a heading's text: read headings from the raw lines.
    text = path.read_text(encoding="utf-8")
    out, counts, fence = set(), {}, None
    for line in text.split("\n"):
        stripped = line.lstrip()
        if fence:
            if stripped.startswith(fence):
                fence = None
            continue
        if stripped.startswith("```") or stripped.startswith("~~~"):
            fence = stripped[:3]
            continue
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        slug = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
        n = counts.get(slug, 0)
        counts[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def check(md):
    problems = []
    text = md.read_text(encoding="utf-8")
    for number, line in prose_lines(text):
        for m in LINK.finditer(line):
            target = m.group(1)
            if SCHEME.match(target):
                continue
            path_part, _, fragment = target.partition("#")
            dest = (md.parent / path_part).resolve() if path_part else md
            where = f"{md.relative_to(ROOT)}:{number}: {target}"
            if not dest.exists():
                problems.append(f"{where}: no such file")
                continue
            try:
                dest.relative_to(ROOT)
            except ValueError:
                problems.append(f"{where}: outside the tree")
                continue
            if fragment:
                if dest.suffix != ".md" or dest.is_dir():
                    problems.append(f"{where}: a fragment into a file that is not Markdown")
                elif fragment not in heading_text(dest):
                    problems.append(f"{where}: no heading '#{fragment}' in {dest.relative_to(ROOT)}")
    return problems


def main(argv):
    if argv:
        files = [Path(a).resolve() for a in argv]
    else:
        files = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", ROOT / "bench" / "README.md"]
        files += sorted((ROOT / "docs").glob("*.md"))
    problems, links = [], 0
    for md in files:
        problems += check(md)
        links += sum(len(LINK.findall(line)) for _, line in prose_lines(md.read_text(encoding="utf-8")))
    for p in problems:
        print(p)
    print(f"check-doc-links: {len(files)} files, {links} links, {len(problems)} broken")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
