#!/usr/bin/env python3
"""Says which ctest suites skipped, and why, from ctest's JUnit file.

    scripts/ctest-skips.py JUNIT_XML [PREFIX]

scripts/test.sh runs it after ctest --output-junit, so the run's last lines
name every skipped suite with its reason (and the cases that skipped inside
suites that ran), ending with ctest's own summary line, which test.sh prints
after this. The reason of a suite is what its output says: the "skipped: ..."
lines that tests/integration/skip_main.cpp and the shell suites print, else
the message under GoogleTest's "file:line: Skipped" line. Exit status 0; 2
when the file cannot be read.
"""
import collections
import re
import sys
import xml.etree.ElementTree as ET

SKIP_LINE = re.compile(r"^skipped: (.*)$", re.MULTILINE)
GTEST_SKIP = re.compile(r"^[^\n]*: Skipped\n([^\n]*)", re.MULTILINE)


def reasons_of(output):
    lines = SKIP_LINE.findall(output)
    if lines:
        return lines
    messages = GTEST_SKIP.findall(output)
    return [m if m else "(GTEST_SKIP without a message)" for m in messages]


def main(argv):
    if len(argv) < 2 or len(argv) > 3:
        print("usage: ctest-skips.py JUNIT_XML [PREFIX]", file=sys.stderr)
        return 2
    prefix = argv[2] if len(argv) == 3 else "test: "
    try:
        root = ET.parse(argv[1]).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"ctest-skips: cannot read {argv[1]}: {e}", file=sys.stderr)
        return 2

    skipped = collections.OrderedDict()  # reason -> suite names
    partial = []  # (suite, reason lines) of suites that ran with skipped cases
    for case in root.iter("testcase"):
        name = case.get("name", "?")
        output = case.findtext("system-out") or ""
        if case.get("status") == "notrun" and case.find("skipped") is not None:
            found = reasons_of(output)
            reason = found[0] if found else "(no reason printed)"
            # A whole-suite line from skip_main.cpp starts with its counts.
            reason = re.sub(r"^\d+ of \d+ cases \(the whole suite\): ", "", reason)
            skipped.setdefault(reason, []).append(name)
        elif case.get("status") == "run" or case.get("status") == "fail":
            found = SKIP_LINE.findall(output)
            if found:
                partial.append((name, found))

    total = sum(len(names) for names in skipped.values())
    print(f"{prefix}{total} suite{'s' if total != 1 else ''} skipped"
          + (":" if total else ""))
    for reason, names in skipped.items():
        shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        print(f"{prefix}  {shown}: {reason}")
    if partial:
        print(f"{prefix}{len(partial)} suite{'s' if len(partial) != 1 else ''} ran with some cases skipped:")
        for name, lines in partial:
            for line in lines:
                print(f"{prefix}  {name}: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
