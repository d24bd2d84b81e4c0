#!/usr/bin/env bash
# How `spillway shuffle` scales over ranks: the same data (lineitem at
# --scale SCALE, default 1, about 820 MB), the same 16 partitions and the same
# memory for the whole job, shared by 1, 2, 4 and 8 in-process ranks (2 worker
# threads for the process), and by 2 and 4 MPI processes (`mpirun -np N
# spillway shuffle --comm mpi`, 1 worker thread and an N-th of the memory
# each). Each at a limit of 512 MiB, where about half the data spills, and
# of 2 GiB, where it all fits. The time is the summary's: the whole run,
# generate, exchange, verify and clean up, without process start-up.
#
# METRIC shuffle_8_ranks_vs_1: the MB/s of 8 in-process ranks over that of 1,
# at 512 MiB (1.0: the ranks cost nothing; on 2 cores no more is possible
# than the second core's share).
# METRIC shuffle_mpi_4_vs_ranks_4: the MB/s of 4 MPI processes over that of 4
# in-process ranks, at 512 MiB.
#
# Usage: spillway_bench_ranks [SCALE]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
spillway="$here/../../apps/spillway/spillway"
mpirun="@MPIEXEC_EXECUTABLE@"
scale=${1:-1}
work=$(mktemp -d "$here/ranks-XXXXXX")
trap 'rm -rf "$work"' EXIT
export SPILLWAY_SPILL_DIRECTORY="$work"

# Runs `[LAUNCHER...] spillway shuffle` with RANKS, COMM and LIMIT_MIB; prints its line of the table on
# stderr and its MB/s on stdout.
shuffle() {
  local ranks=$1 comm=$2 limit=$3 launch=() flags=(--threads 2 --ranks "$1" --memory-limit "${3}MiB")
  if [[ $comm == mpi ]]; then
    launch=("$mpirun" --allow-run-as-root --oversubscribe -np "$ranks" -x OMPI_MCA_btl=self,vader
            -x OMPI_MCA_btl_vader_single_copy_mechanism=none)
    flags=(--comm mpi --threads 1 --memory-limit "$((limit / ranks))MiB")
  fi
  "${launch[@]}" "$spillway" shuffle --json --quiet --scale "$scale" --partitions 16 "${flags[@]}" \
    >"$work/summary.json" 2>"$work/stderr" || true
  python3 - "$work/summary.json" "$ranks" "$comm" "$limit" <<'EOF' || { cat "$work/stderr" >&2; exit 1; }
import json, sys
path, ranks, comm, limit = sys.argv[1:]
# Under mpirun every process prints its summary; the first is rank 0's.
summary = json.JSONDecoder().raw_decode(open(path).read().lstrip())[0]
if not summary.get("verified"):
    sys.exit(f"bench_ranks: {ranks} ranks ({comm}) at {limit} MiB failed: {summary.get('error')}")
rate = summary["bytes"] / summary["seconds"] / 1e6
print(f"  | {ranks} | {comm} | {limit} MiB | {summary['seconds']:.1f} s | {rate:.0f} MB/s"
      f" | {summary['spilled_bytes'] / 1e6:.0f} MB |", file=sys.stderr)
print(rate)
EOF
}

declare -A rate
echo "  | ranks | comm | limit | time | throughput | spilled |" >&2
for limit in 512 2048; do
  for ranks in 1 2 4 8; do
    rate[local-$ranks-$limit]=$(shuffle "$ranks" local "$limit")
  done
  for ranks in 2 4; do
    rate[mpi-$ranks-$limit]=$(shuffle "$ranks" mpi "$limit")
  done
done
awk -v a="${rate[local-8-512]}" -v b="${rate[local-1-512]}" \
  'BEGIN { printf "METRIC shuffle_8_ranks_vs_1 %.3f ratio\n", a / b }'
awk -v a="${rate[mpi-4-512]}" -v b="${rate[local-4-512]}" \
  'BEGIN { printf "METRIC shuffle_mpi_4_vs_ranks_4 %.3f ratio\n", a / b }'
