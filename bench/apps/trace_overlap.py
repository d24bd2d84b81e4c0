"""The fraction of a shuffle's network time that overlapped spill I/O, from
the `--trace` files of its ranks (one per process).

Usage: trace_overlap.py TRACE...

In each file, the network time is the union of the `shuffle` spans `send in
flight` and `receive in flight` (a chunk's message posted and not yet seen
complete), and the spill I/O time the union of the `spill` spans (`spill`,
`unspill`, `prefetch`: buffers written to or read from spill files). Prints
both per rank and

    METRIC shuffle_overlap <overlapped time / network time, over all ranks> fraction
"""

import json
import sys

NETWORK = {("shuffle", "send in flight"), ("shuffle", "receive in flight")}
SPILL_IO = {("spill", "spill"), ("spill", "unspill"), ("spill", "prefetch")}


def union(intervals):
    """Sorted, disjoint intervals covering exactly what `intervals` cover."""
    merged = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def length(intervals):
    return sum(end - start for start, end in intervals)


def intersection(left, right):
    """The length both unions cover; both sorted and disjoint."""
    total, i, j = 0, 0, 0
    while i < len(left) and j < len(right):
        start = max(left[i][0], right[j][0])
        end = min(left[i][1], right[j][1])
        total += max(0, end - start)
        if left[i][1] < right[j][1]:
            i += 1
        else:
            j += 1
    return total


def main(paths):
    if not paths:
        sys.exit("usage: trace_overlap.py TRACE...")
    network_total = overlapped_total = 0
    for path in paths:
        with open(path) as file:
            events = [e for e in json.load(file)["traceEvents"] if e.get("ph") == "X"]
        spans = lambda kinds: union(
            (e["ts"], e["ts"] + e["dur"]) for e in events if (e["cat"], e["name"]) in kinds
        )
        network, spill_io = spans(NETWORK), spans(SPILL_IO)
        if not network:
            sys.exit(f"trace_overlap: {path} has no network spans; was it traced with a spillway that records them?")
        overlapped = intersection(network, spill_io)
        print(f"{path}: network {length(network) / 1e6:.3f} s, spill I/O {length(spill_io) / 1e6:.3f} s, "
              f"both {overlapped / 1e6:.3f} s")
        network_total += length(network)
        overlapped_total += overlapped
    print(f"METRIC shuffle_overlap {overlapped_total / network_total:.3f} fraction")


if __name__ == "__main__":
    main(sys.argv[1:])
