#!/usr/bin/env bash
# tpch_q<N>_vs_duckdb and tpch_completed: TPC-H Q1, Q3, Q4, Q5, Q7, Q9, Q18 and Q21 in
# `spillway tpch` against DuckDB, side by side in one run, over the same
# Parquet files (written once by `spillway generate --tables all
# --output-format parquet`; decimals are doubles in them).
#
# Fair by construction: both engines read the Parquet files at query time
# (DuckDB through views, spillway through --data; neither loads anything
# before), have the same threads and the same memory limit, and run in a
# memory cgroup of 1.15 x limit + 64 MiB (tests/memory_bound/
# run_in_memory_cgroup.sh) that kills them if they go over. Each engine's
# time is measured in its process, without start-up: DuckDB's is the query
# alone, spillway's its summary's time (the query and its clean-up). Each
# query runs twice per engine, alternating, and the faster run counts. The
# answers are compared (tpch_duckdb.py compare); a query whose answers differ
# fails the benchmark.
#
# tpch_q<N>_vs_duckdb is DuckDB's time over spillway's (above 1: spillway is
# faster); tpch_completed is the fraction of the queries spillway finished
# within the limit.
#
# Usage: spillway_bench_tpch [SCALE] [LIMIT_MIB] [THREADS]   (default 1, 110 and 2)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
spillway="$here/../../apps/spillway/spillway"
run_in_cgroup="@RUN_IN_MEMORY_CGROUP@"
python="@SPILLWAY_PYTHON@"
peer="@TPCH_DUCKDB@"
scale=${1:-1}
limit=${2:-110}
threads=${3:-2}
cgroup=$((limit * 115 / 100 + 64))
queries=(1 3 4 5 7 9 18 21)

[[ -x $python ]] || { echo "bench_tpch: needs $python with duckdb (run scripts/setup)" >&2; exit 1; }
data="$here/data/parquet-$scale"
if [[ ! -f $data/region.parquet ]]; then
  rm -rf "$data.partial"
  "$spillway" generate --tables all --scale "$scale" --output-format parquet -o "$data.partial" --quiet
  mv "$data.partial" "$data"
fi
work="$here/work"
rm -rf "$work" && mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

# Each runner prints the seconds of one run, or nothing if the engine failed
# or was killed; the cgroup's peak usage line goes to <engine>-<query>.peak.
run_spillway() {  # QUERY
  (cd "$work" && "$run_in_cgroup" "$cgroup" "$spillway" tpch --query "$1" --data "$data" \
    --memory-limit "${limit}MiB" --threads "$threads" --json --quiet) >"$work/spillway-$1.json" 2>"$work/spillway-$1.err" \
    || { sed 's/^/    /' "$work/spillway-$1.err" >&2; return 0; }
  grep -o 'peak usage [0-9]* MiB' "$work/spillway-$1.json" >"$work/spillway-$1.peak" || true
  head -1 "$work/spillway-$1.json" | sed -e 's/.*"seconds":\([0-9.e+-]*\).*/\1/'
}
run_duckdb() {  # QUERY
  (cd "$work" && "$run_in_cgroup" "$cgroup" "$python" "$peer" time --parquet "$data" --query "$1" \
    --threads "$threads" --memory-limit "${limit}MiB" --answer "$work/duckdb-$1.json") >"$work/duckdb-$1.out" \
    2>"$work/duckdb-$1.err" || return 0
  grep -o 'peak usage [0-9]* MiB' "$work/duckdb-$1.out" >"$work/duckdb-$1.peak" || true
  awk '/^seconds/ { print $2 }' "$work/duckdb-$1.out"
}
best() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "") print b; else if (b == "") print a; else print (a < b ? a : b) }'; }

echo "TPC-H scale $scale from Parquet ($(du -sh "$data" | cut -f1)), $threads threads, limit $limit MiB" \
  "in a cgroup of $cgroup MiB"
completed=0
for query in "${queries[@]}"; do
  spillway_seconds=$(best "$(run_spillway "$query")" "$(run_spillway "$query")")
  duckdb_seconds=$(best "$(run_duckdb "$query")" "$(run_duckdb "$query")")
  # A failed run's reasons were printed above, as it failed.
  spillway_said="failed in both runs"
  if [[ -n $spillway_seconds ]]; then
    spilled=$(head -1 "$work/spillway-$query.json" | sed -e 's/.*"spilled_bytes":\([0-9]*\).*/\1/')
    spillway_said="$spillway_seconds s (spilled $spilled bytes, cgroup $(cat "$work/spillway-$query.peak"))"
  fi
  duckdb_said="failed in both runs"
  if [[ -n $duckdb_seconds ]]; then
    duckdb_said="$duckdb_seconds s (cgroup $(cat "$work/duckdb-$query.peak"))"
  fi
  echo "  Q$query: spillway $spillway_said, duckdb $duckdb_said"
  if [[ -n $spillway_seconds ]]; then
    completed=$((completed + 1))
    if [[ -n $duckdb_seconds ]]; then
      "$python" "$peer" compare "$work/duckdb-$query.json" "$work/spillway-$query.json" \
        || { echo "bench_tpch: Q$query: spillway's answer differs from DuckDB's" >&2; exit 1; }
      awk -v q="$query" -v d="$duckdb_seconds" -v s="$spillway_seconds" \
        'BEGIN { printf "METRIC tpch_q%s_vs_duckdb %.3f ratio\n", q, d / s }'
    else
      echo "  Q$query: DuckDB did not finish within the limit; no ratio"
    fi
  fi
done
awk -v c="$completed" -v n="${#queries[@]}" 'BEGIN { printf "METRIC tpch_completed %.2f fraction\n", c / n }'
