#!/usr/bin/env bash
# spillway's shuffle across 4 hosts made on this machine (network namespaces,
# tests/multihost/run_on_hosts.sh), each link capped at 1 Gbit/s in both
# directions, MPI over TCP only. Needs root.
#
# 1. spillway_bench_shuffle_mpi across the hosts: a Shuffler against
#    MPI_Alltoallv of the same bytes in the same run (128 MiB per rank in
#    4 MiB chunks, 5 iterations, medians):
#      METRIC shuffle_multihost_vs_alltoallv <MPI_Alltoallv time / shuffle time> ratio
# 2. `spillway shuffle --comm mpi` of about 1 GiB under a 64 MiB limit per
#    process (4 times what the 4 processes may hold), traced; trace_overlap.py
#    reads the traces:
#      METRIC shuffle_overlap <network time overlapped with spill I/O / network time> fraction
set -euo pipefail
bench=$(cd "$(dirname "$0")/.." && pwd)
run_on_hosts=@RUN_ON_HOSTS@
export MULTIHOST_RATE=${MULTIHOST_RATE:-1gbit}
work=$(mktemp -d "${TMPDIR:-/tmp}/spillway-bench-multihost-XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

"$run_on_hosts" 4 "$bench/shuffle/spillway_bench_shuffle_mpi" 128MiB 4MiB 5

"$run_on_hosts" 4 "$bench/../apps/spillway/spillway" shuffle --comm mpi --scale 1.3 --memory-limit 64MiB --window 1 \
  --trace "$work/trace.json" --quiet --json
"@SPILLWAY_PYTHON@" "$bench/apps/trace_overlap.py" "$work"/trace-rank*.json
