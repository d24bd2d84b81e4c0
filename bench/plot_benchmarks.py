"""Draws the plots of BENCHMARKS.md from the output of `make bench`.

Usage: plot_benchmarks.py RESULTS OUTPUT_DIR

RESULTS is what `scripts/bench` printed (`make bench` keeps it in
build/release/bench/results.txt). Each plot is drawn from the lines of the
last run of the benchmark that measures it, and left out, with a message,
where those lines are missing (a benchmark filtered out or failed):

- peers.png: each tool's time on the peers workload (spillway_bench_peers),
  with the budget it finished within; tools that never finished are named.
- memory_limit.png: peak RSS against --memory-limit per scale, with the
  limit and the test cgroup drawn in (spillway_bench_memory_bound).
- partitions.png: `spillway shuffle`'s time against its partition count
  (spillway_bench_memory_bound).
- memory_sweep.png: `spillway shuffle`'s throughput as its limit shrinks
  from all of the data to a tenth, with the I/O bound that fio's rates set
  for the bytes each run spilled (spillway_bench_memory_sweep).
- ranks.png: `spillway shuffle`'s throughput over in-process ranks and MPI
  processes (spillway_bench_ranks).
- seq_join_grain.png: seq_join's cost per item by grain, against oneTBB's
  parallel_pipeline (spillway_bench_overhead_vs_tbb).
"""

from __future__ import annotations

import pathlib
import re
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def _save(figure: plt.Figure, path: pathlib.Path) -> None:
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def peers(text: str, out: pathlib.Path) -> bool:
    finished = re.findall(r"^  ([\w-]+): ([0-9.]+) s at (\d)x the budget, peak (\d+|\?) MiB", text, re.M)
    failed = re.findall(r"^  ([\w-]+): FAILED at every budget", text, re.M)
    if not finished:
        return False
    finished.sort(key=lambda row: float(row[1]))
    names = [f"{tool} ({factor}×)" for tool, _, factor, _ in finished] + [f"{tool} (failed)" for tool in failed]
    seconds = [float(s) for _, s, _, _ in finished] + [0.0] * len(failed)
    colors = ["tab:blue" if tool.startswith("spillway") else "tab:gray" for tool, _, _, _ in finished]
    figure, axes = plt.subplots(figsize=(8, 0.45 * len(names) + 1.2))
    axes.barh(names, seconds, color=colors + ["tab:red"] * len(failed))
    for index, value in enumerate(seconds):
        if value:
            axes.text(value, index, f" {value:.1f} s", va="center")
    axes.invert_yaxis()
    axes.set_xlabel("seconds (lower is better); in parentheses the budget factor it finished within")
    axes.set_title("Hash shuffle of lineitem Parquet into 64 partitions, 2 threads, 1 GiB budget")
    _save(figure, out / "peers.png")
    return True


def memory_limit(text: str, out: pathlib.Path) -> bool:
    rows = re.findall(r"\| (\d+) MiB \| ([0-9.]+) \| \d+ MiB \| (\d+) MiB \|", text)
    if not rows:
        return False
    figure, axes = plt.subplots(figsize=(7, 4.5))
    for scale in sorted({scale for _, scale, _ in rows}, key=float):
        points = sorted((int(limit), int(rss)) for limit, s, rss in rows if s == scale)
        axes.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=f"scale {scale}")
    limits = sorted({int(limit) for limit, _, _ in rows})
    axes.plot(limits, limits, linestyle="--", color="black", label="the limit")
    axes.plot(limits, [limit * 1.15 + 64 for limit in limits], linestyle=":", color="tab:red",
              label="the cgroup that kills it (1.15 × limit + 64 MiB)")
    axes.set_xlabel("--memory-limit (MiB)")
    axes.set_ylabel("peak RSS (MiB)")
    axes.set_title("spillway shuffle, 4 in-process ranks: peak RSS against the limit")
    axes.legend()
    _save(figure, out / "memory_limit.png")
    return True


def partitions(text: str, out: pathlib.Path) -> bool:
    rows = re.findall(r"^  (\d+) partitions: ([0-9.]+) s", text, re.M)
    if not rows:
        return False
    runs: dict[int, list[float]] = {}
    for count, seconds in rows:
        runs.setdefault(int(count), []).append(float(seconds))
    points = sorted((count, statistics.median(seconds)) for count, seconds in runs.items())
    figure, axes = plt.subplots(figsize=(7, 4.5))
    axes.plot([p[0] for p in points], [p[1] for p in points], marker="o")
    axes.set_xscale("log")
    axes.set_xlabel("partitions")
    axes.set_ylabel("seconds, whole run (median of the runs)")
    axes.set_ylim(bottom=0)
    axes.set_title("spillway shuffle at 256 MiB, scale 1: time against partitions")
    _save(figure, out / "partitions.png")
    return True


def memory_sweep(text: str, out: pathlib.Path) -> bool:
    room = re.search(r"^  \| room for all \| \d+ MiB \| [0-9.]+ s \| (\d+) MB/s", text, re.M)
    rows = re.findall(r"^  \| (\d+)% \| \d+ MiB \| [0-9.]+ s \| (\d+) MB/s \|.*\| (\d+|none)(?: MB/s)? \|$",
                      text, re.M)
    if not room or not rows:
        return False
    points = sorted((int(percent), int(rate), None if bound == "none" else int(bound)) for percent, rate, bound in rows)
    figure, axes = plt.subplots(figsize=(7, 4.5))
    axes.plot([p[0] for p in points], [p[1] for p in points], marker="o", label="spillway shuffle")
    bounded = [(p[0], p[2]) for p in points if p[2] is not None]
    axes.plot([p[0] for p in bounded], [p[1] for p in bounded], marker="s", linestyle="--", color="tab:red",
              label="I/O bound: the bytes it spilled, written and read back at fio's rates")
    axes.axhline(int(room.group(1)), linestyle=":", color="tab:gray", label="with room for all the data")
    axes.set_xlim(105, 5)
    axes.set_ylim(0, 3 * max(p[1] for p in points))
    axes.set_xlabel("--memory-limit, % of the data (4 in-process ranks)")
    axes.set_ylabel("MB/s of data shuffled and verified")
    axes.set_title("spillway shuffle: throughput as the memory limit shrinks")
    axes.legend()
    _save(figure, out / "memory_sweep.png")
    return True


def ranks(text: str, out: pathlib.Path) -> bool:
    rows = re.findall(r"^  \| (\d+) \| (local|mpi) \| (\d+) MiB \| [0-9.]+ s \| (\d+) MB/s", text, re.M)
    if not rows:
        return False
    figure, axes = plt.subplots(figsize=(7, 4.5))
    for comm, limit in sorted({(comm, int(limit)) for _, comm, limit, _ in rows}):
        points = sorted((int(n), int(rate)) for n, c, l, rate in rows if c == comm and int(l) == limit)
        name = "in-process ranks" if comm == "local" else "MPI processes"
        axes.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=f"{name}, {limit} MiB in all")
    counts = sorted({int(n) for n, _, _, _ in rows})
    axes.set_xscale("log", base=2)
    axes.set_xticks(counts, [str(n) for n in counts])
    axes.set_xlabel("ranks")
    axes.set_ylabel("MB/s of data shuffled and verified")
    axes.set_ylim(bottom=0)
    axes.set_title("spillway shuffle of the same data over ranks, 2 cores")
    axes.legend()
    _save(figure, out / "ranks.png")
    return True


def seq_join_grain(text: str, out: pathlib.Path) -> bool:
    tbb = re.search(r"tbb parallel_pipeline:\s+([0-9.]+) ns/item", text)
    grains = re.findall(r"seq_join, grain (\d+)\s+([0-9.]+) ns/item", text)
    if not tbb or not grains:
        return False
    points = sorted((int(grain), float(ns)) for grain, ns in grains)
    figure, axes = plt.subplots(figsize=(7, 4.5))
    axes.plot([p[0] for p in points], [p[1] for p in points], marker="o", label="seq_join")
    axes.axhline(float(tbb.group(1)), linestyle="--", color="tab:gray", label="oneTBB parallel_pipeline")
    axes.set_xscale("log", base=2)
    axes.set_xlabel("grain (items per task)")
    axes.set_ylabel("ns per item")
    axes.set_ylim(bottom=0)
    axes.set_title("Ordered parallel map overhead per item, 2 threads")
    axes.legend()
    _save(figure, out / "seq_join_grain.png")
    return True


def last_runs(text: str) -> str:
    """The output of each benchmark's last run in `text`, which scripts/bench
    heads with a line "== <benchmark> ..." per benchmark and run."""
    sections = re.split(r"^== (\S+).*$", text, flags=re.M)
    last = {name: body for name, body in zip(sections[1::2], sections[2::2])}
    return "".join(last.values())


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit("usage: plot_benchmarks.py RESULTS OUTPUT_DIR")
    text = last_runs(pathlib.Path(sys.argv[1]).read_text())
    out = pathlib.Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    for plot in (peers, memory_limit, partitions, memory_sweep, ranks, seq_join_grain):
        if plot(text, out):
            print(f"plot_benchmarks: wrote {out / (plot.__name__ + '.png')}")
        else:
            print(f"plot_benchmarks: no {plot.__name__} plot: its benchmark's lines are not in {sys.argv[1]}",
                  file=sys.stderr)


if __name__ == "__main__":
    main()
