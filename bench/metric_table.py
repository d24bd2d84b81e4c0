"""Each METRIC figure of one or more `scripts/bench` outputs, as a Markdown
table: its median, its range, and the number of runs that printed it.

Usage: metric_table.py RESULTS...

RESULTS are what `scripts/bench` printed (`make bench` keeps it in
build/release/bench/results.txt; with RUNS > 1 it holds every run). A
figure printed once has no range. The order is that of first appearance.
"""

from __future__ import annotations

import pathlib
import re
import statistics
import sys


def figures(texts: list[str]) -> dict[str, tuple[str, list[float]]]:
    """Every METRIC line's values by name, with its unit, in order of first appearance."""
    found: dict[str, tuple[str, list[float]]] = {}
    for text in texts:
        for name, value, unit in re.findall(r"^METRIC (\S+) (\S+) (\S+)", text, re.M):
            try:
                number = float(value)
            except ValueError:
                continue
            found.setdefault(name, (unit, []))[1].append(number)
    return found


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit("usage: metric_table.py RESULTS...")
    found = figures([pathlib.Path(path).read_text() for path in sys.argv[1:]])
    print("| metric | median | [min–max] | runs | unit |")
    print("|---|---|---|---|---|")
    for name, (unit, values) in found.items():
        spread = f"[{min(values):.4g}–{max(values):.4g}]" if len(values) > 1 else "–"
        print(f"| `{name}` | {statistics.median(values):.4g} | {spread} | {len(values)} | {unit} |")


if __name__ == "__main__":
    main()
