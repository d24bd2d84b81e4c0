#!/usr/bin/env bash
# How far the peak RSS of `spillway shuffle` goes past its --memory-limit, and
# what many partitions cost.
#
# peak_rss_over_limit: the largest (peak RSS - floor) / L over limits L of
# 256 MiB, 512 MiB and 1 GiB and scales 1, 2 and 4 (4 in-process ranks), each
# run in a memory cgroup of 1.15 L + 64 MiB that must not kill it. The floor
# is the peak RSS of the same binary with the same ranks and threads at
# --scale 0.01: the program, its thread stacks and the C library's own.
# peak_rss_over_limit_1000_partitions: the same for --partitions 1000 at
# 256 MiB, scale 1, run outside a cgroup (the largest of three runs).
# shuffle_1000_vs_16_partitions: the wall time per byte with 1000 partitions
# over that with 16, at 256 MiB, scale 1 (the same bytes): the process's
# whole run, clean-up included, the median of three runs each, taken in
# turn. 64 and 256 partitions are run once too, for the plot of time against
# partitions.
#
# peak_rss_over_limit_mpi: 4 MPI processes of one rank each (`mpirun -np 4
# spillway shuffle --comm mpi`) at L = 128 MiB, scale 1, 1000 partitions: the
# largest (peak RSS - floor) / L over the processes, where the floor is the
# smallest process's peak RSS in the same run at --scale 0.01.
#
# Usage: spillway_bench_memory_bound   (as root, for the cgroups)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
spillway="$here/../../apps/spillway/spillway"
run_in_cgroup="@RUN_IN_MEMORY_CGROUP@"
mpirun="@MPIEXEC_EXECUTABLE@"
work=$(mktemp -d "$here/memory-bound-XXXXXX")
trap 'rm -rf "$work"' EXIT
export SPILLWAY_SPILL_DIRECTORY="$work"

now() { date +%s.%N; }
mebibytes() { awk -v b="$1" 'BEGIN { printf "%.0f", b / 1048576 }'; }
# The peak RSS in bytes from the summary in $work/summary.json.
peak_rss() { grep -o '"peak_resident_bytes":[0-9]*' "$work/summary.json" | cut -d: -f2; }
# Runs `spillway shuffle ARGUMENTS...` and leaves its summary in $work/summary.json.
shuffle() {
  "$spillway" shuffle --json --quiet "$@" >"$work/summary.json"
  grep -q '"verified":true' "$work/summary.json" || { echo "bench_memory_bound: shuffle $* did not verify" >&2; exit 1; }
}

shuffle --scale 0.01
floor=$(peak_rss)
echo "  floor: $(mebibytes "$floor") MiB peak RSS at --scale 0.01" >&2

worst=0
echo "  | limit | scale | cgroup | peak RSS | (RSS - floor) / L | time |" >&2
for limit in 256 512 1024; do
  for scale in 1 2 4; do
    cgroup=$((limit * 115 / 100 + 64))
    start=$(now)
    (cd "$work" && "$run_in_cgroup" "$cgroup" "$spillway" shuffle --json --quiet --memory-limit "${limit}MiB" \
      --scale "$scale" >"$work/summary.json") 2>"$work/cgroup.log" \
      || { cat "$work/cgroup.log" >&2; echo "bench_memory_bound: L=${limit}MiB scale $scale failed" >&2; exit 1; }
    seconds=$(awk -v s="$start" -v e="$(now)" 'BEGIN { printf "%.1f", e - s }')
    rss=$(peak_rss)
    ratio=$(awk -v r="$rss" -v f="$floor" -v l="$limit" 'BEGIN { printf "%.3f", (r - f) / (l * 1048576) }')
    worst=$(awk -v a="$worst" -v b="$ratio" 'BEGIN { print (b > a ? b : a) }')
    echo "  | ${limit} MiB | $scale | ${cgroup} MiB | $(mebibytes "$rss") MiB | $ratio | $seconds s |" >&2
  done
done
echo "METRIC peak_rss_over_limit $worst ratio"

# Runs `shuffle` at 256 MiB, scale 1, with PARTITIONS; prints its seconds
# (the whole process) on stdout and its line on stderr.
timed_shuffle() {
  local start
  start=$(now)
  shuffle --memory-limit 256MiB --scale 1 --partitions "$1"
  local seconds
  seconds=$(awk -v s="$start" -v e="$(now)" 'BEGIN { print e - s }')
  echo "  $1 partitions: $seconds s, peak RSS $(mebibytes "$(peak_rss)") MiB," \
    "$(grep -o '"phases":{[^}]*}' "$work/summary.json")" >&2
  echo "$seconds"
}
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

timed_shuffle 64 >/dev/null
timed_shuffle 256 >/dev/null
# 16 and 1000 partitions in turn, three times: the host's noise moves one
# run by 10 to 20%, and the ratio takes the median of each.
with_16=() with_1000=() worst_1000=0
for round in 1 2 3; do
  with_16+=("$(timed_shuffle 16)")
  with_1000+=("$(timed_shuffle 1000)")
  worst_1000=$(awk -v a="$worst_1000" -v b="$(peak_rss)" 'BEGIN { print (b > a ? b : a) }')
done
awk -v r="$worst_1000" -v f="$floor" 'BEGIN { printf "METRIC peak_rss_over_limit_1000_partitions %.3f ratio\n", (r - f) / (256 * 1048576) }'
awk -v a="$(median "${with_1000[@]}")" -v b="$(median "${with_16[@]}")" \
  'BEGIN { printf "METRIC shuffle_1000_vs_16_partitions %.2f ratio\n", a / b }'

# Runs 4 MPI processes of `spillway shuffle` at 128 MiB and 1000 partitions
# with ARGUMENTS...; prints each process's peak RSS in bytes, one per line.
# (Only rank 0 prints a summary, so each process runs under a Python parent
# that writes its child's peak RSS to a file of its rank's.)
measured='import os, resource, subprocess, sys
code = subprocess.call(sys.argv[2:])
rank = os.environ.get("OMPI_COMM_WORLD_RANK") or os.environ["PMI_RANK"]  # OpenMPI, else MPICH
with open(sys.argv[1] + "." + rank, "w") as peak:
    peak.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024) + "\n")
sys.exit(code)'
mpi_peaks() {
  rm -f "$work"/peak.*
  "$mpirun" --allow-run-as-root --oversubscribe -np 4 python3 -c "$measured" "$work/peak" "$spillway" shuffle \
    --comm mpi --json --quiet --memory-limit 128MiB --partitions 1000 "$@" >"$work/mpi.json" 2>"$work/mpi.log" \
    || { cat "$work/mpi.log" >&2; echo "bench_memory_bound: mpirun -np 4 shuffle $* failed" >&2; exit 1; }
  grep -q '"verified":true' "$work/mpi.json" \
    || { echo "bench_memory_bound: mpirun -np 4 shuffle $* did not verify" >&2; exit 1; }
  [[ $(cat "$work"/peak.* | wc -l) == 4 ]] \
    || { echo "bench_memory_bound: not every process reported its peak RSS" >&2; exit 1; }
  cat "$work"/peak.*
}
mpi_floor=$(mpi_peaks --scale 0.01 | sort -n | head -1)
mpi_peak=$(mpi_peaks --scale 1 | sort -n | tail -1)
echo "  MPI, 4 processes at 128 MiB, 1000 partitions: peak RSS $(mebibytes "$mpi_peak") MiB," \
  "floor $(mebibytes "$mpi_floor") MiB" >&2
awk -v r="$mpi_peak" -v f="$mpi_floor" 'BEGIN { printf "METRIC peak_rss_over_limit_mpi %.3f ratio\n", (r - f) / (128 * 1048576) }'
