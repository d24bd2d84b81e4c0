#!/usr/bin/env bash
# partition_vs_duckdb and partition_vs_cat: `spillway partition` of a
# generated TPC-H lineitem CSV into 64 hash partitions by l_orderkey under a
# 1 GiB memory limit on 2 threads, verification included, against DuckDB
# doing the same repartition (COPY ... PARTITION_BY, memory_limit 1GB,
# threads 2) and against `cat` of the input to /dev/null, the floor of
# reading it. Each is run twice, alternating, and the faster run counts.
#
# Usage: spillway_bench_partition [SCALE]   (TPC-H scale, default 2.9: a 2 GiB CSV)
#
# DuckDB is the one the project's virtual environment pins (requirements.txt,
# installed by scripts/setup). The generated input is kept in data/ beside
# this script for later runs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
spillway="$here/../../apps/spillway/spillway"
python="@SPILLWAY_PYTHON@"
scale=${1:-2.9}
partitions=64
limit_spillway=1GiB
limit_duckdb=1GB
threads=2

if ! "$python" -c 'import duckdb' 2>/dev/null; then
  echo "bench_partition: needs DuckDB in $python (run scripts/setup)" >&2
  exit 1
fi

mkdir -p "$here/data"
input="$here/data/lineitem-$scale.csv"
if [[ ! -f "$input" ]]; then
  echo "bench_partition: generating $input"
  "$spillway" generate --table lineitem --scale "$scale" --output "$input.partial" --quiet
  mv "$input.partial" "$input"
fi
bytes=$(stat -c %s "$input")
work="$here/work"
trap 'rm -rf "$work"' EXIT

now() { date +%s.%N; }
best() { awk -v a="$1" -v b="$2" 'BEGIN { print (a < b ? a : b) }'; }

run_cat() {
  local start; start=$(now)
  cat "$input" >/dev/null
  awk -v s="$start" -v e="$(now)" 'BEGIN { print e - s }'
}

run_spillway() {
  rm -rf "$work" && mkdir -p "$work"
  local start; start=$(now)
  "$spillway" partition --input "$input" --key l_orderkey --partitions $partitions --output "$work/spillway" \
    --memory-limit $limit_spillway --threads $threads --json --quiet >"$work/summary.json"
  local seconds; seconds=$(awk -v s="$start" -v e="$(now)" 'BEGIN { print e - s }')
  grep -q '"verified":true' "$work/summary.json" || { echo "bench_partition: spillway did not verify" >&2; exit 1; }
  sed -e 's/.*"phases":{\([^}]*\)}.*/  spillway phases: \1/' "$work/summary.json" >&2
  echo "$seconds"
}

run_duckdb() {
  rm -rf "$work" && mkdir -p "$work"
  "$python" "$here/duckdb_partition.py" "$input" "$work/duckdb" l_orderkey $partitions $limit_duckdb $threads \
    | awk '/^seconds/ { print $2 }'
}

echo "input: $input ($bytes bytes), $partitions partitions, $threads threads"
cat_seconds=$(best "$(run_cat)" "$(run_cat)")
spillway_first=$(run_spillway)
duckdb_first=$(run_duckdb)
spillway_seconds=$(best "$spillway_first" "$(run_spillway)")
duckdb_seconds=$(best "$duckdb_first" "$(run_duckdb)")

awk -v bytes="$bytes" -v c="$cat_seconds" -v s="$spillway_seconds" -v d="$duckdb_seconds" 'BEGIN {
  printf "  cat      %7.2f s  %8.1f MB/s\n", c, bytes / c / 1e6
  printf "  spillway %7.2f s  %8.1f MB/s\n", s, bytes / s / 1e6
  printf "  duckdb   %7.2f s  %8.1f MB/s\n", d, bytes / d / 1e6
  printf "METRIC partition_throughput %.1f MB/s\n", bytes / s / 1e6
  printf "METRIC duckdb_partition_throughput %.1f MB/s\n", bytes / d / 1e6
  printf "METRIC partition_vs_duckdb %.3f ratio\n", d / s
  printf "METRIC partition_vs_cat %.3f ratio\n", c / s
}'
