#!/usr/bin/env bash
# partition_parquet_vs_duckdb, partition_parquet_vs_polars and
# partition_csv_vs_duckdb: `spillway partition` of TPC-H lineitem into 64
# hash partitions by l_orderkey, written as Parquet, against DuckDB
# (COPY ... PARTITION_BY on hash % 64) and Polars (sink_parquet with
# PartitionBy on hash % 64), side by side in one run. The Parquet input has
# row groups of 2^20 rows (written by DuckDB); the CSV input is spillway's
# generated lineitem.
#
# Fair by construction: every tool reads and writes every column, writes
# zstd at its default level with statistics, has 2 threads and the same
# memory limit, and runs in a memory cgroup of 1.15 x limit + 64 MiB
# (tests/memory_bound/run_in_memory_cgroup.sh) that kills it if it goes over.
# spillway's time includes its verification (reading every file back);
# the peers' time is measured in their process, without start-up. Row
# groups: the peers write up to 2^20 rows; spillway closes a row group when
# its share of the memory limit is full (bounded memory with 64 open files).
# Each tool runs twice, alternating, and the faster run counts.
#
# Usage: spillway_bench_partition_parquet [SCALE] [LIMIT_MIB]   (default 1 and 1024)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
spillway="$here/../../apps/spillway/spillway"
run_in_cgroup="@RUN_IN_MEMORY_CGROUP@"
python="@SPILLWAY_PYTHON@"
peer="$here/peer_partition.py"
scale=${1:-1}
limit=${2:-1024}
cgroup=$((limit * 115 / 100 + 64))
partitions=64
threads=2

[[ -x $python ]] || { echo "bench_partition_parquet: needs $python with duckdb and polars (run scripts/setup)" >&2; exit 1; }
mkdir -p "$here/data"
csv="$here/data/lineitem-$scale.csv"
parquet="$here/data/lineitem-$scale.parquet"
if [[ ! -f $csv ]]; then
  "$spillway" generate --table lineitem --scale "$scale" --output "$csv.partial" --quiet
  mv "$csv.partial" "$csv"
fi
if [[ ! -f $parquet ]]; then
  "$python" -c "import duckdb; duckdb.sql(\"COPY (SELECT * FROM read_csv('$csv')) TO '$parquet.partial' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 1048576)\")"
  mv "$parquet.partial" "$parquet"
fi
work="$here/work-parquet"
rm -rf "$work" && mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

# Each runner prints the seconds of one run inside the cgroup; the cgroup
# harness fails (and so does this script) if the tool is killed for memory.
run_spillway() {  # FORMAT INPUT
  (cd "$work" && "$run_in_cgroup" "$cgroup" "$spillway" partition -i "$2" -k l_orderkey --partitions $partitions \
    --output-format parquet -o out --memory-limit "${limit}MiB" --threads $threads --json --quiet) >"$work/spillway.json"
  grep -q '"verified":true' "$work/spillway.json" || { echo "bench_partition_parquet: spillway did not verify" >&2; exit 1; }
  sed -e 's/.*"seconds":\([0-9.e+-]*\).*/\1/' "$work/spillway.json" | head -1
}
run_peer() {  # TOOL FORMAT INPUT; prints nothing if the tool failed or was killed
  (cd "$work" && "$run_in_cgroup" "$cgroup" "$python" "$peer" "$1" "$3" out l_orderkey $partitions $threads "$limit" "$2") \
    | awk '/^seconds/ { print $2 }' || true
}
best() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "") print b; else if (b == "") print a; else print (a < b ? a : b) }'; }
twice() { local first; first=$("$@"); best "$first" "$("$@")"; }

echo "input: lineitem scale $scale ($(stat -c %s "$parquet") bytes of Parquet, $(stat -c %s "$csv") of CSV)," \
  "$partitions partitions, $threads threads, limit $limit MiB in a cgroup of $cgroup MiB"
spillway_parquet=$(twice run_spillway parquet "$parquet")
duckdb_parquet=$(twice run_peer duckdb parquet "$parquet")
polars_parquet=$(twice run_peer polars parquet "$parquet")
spillway_csv=$(twice run_spillway csv "$csv")
duckdb_csv=$(twice run_peer duckdb csv "$csv")

# A peer that failed both runs (killed for memory, say) gets no ratio.
ratio() {  # NAME PEER_SECONDS SPILLWAY_SECONDS
  if [[ -z $2 ]]; then
    echo "  $1: the peer did not finish within the limit; no ratio"
  else
    awk -v name="$1" -v p="$2" -v s="$3" 'BEGIN { printf "METRIC %s %.3f ratio\n", name, p / s }'
  fi
}
echo "  parquet -> parquet: spillway $spillway_parquet s, duckdb ${duckdb_parquet:-killed} s, polars ${polars_parquet:-killed} s"
echo "  csv -> parquet:     spillway $spillway_csv s, duckdb ${duckdb_csv:-killed} s"
ratio partition_parquet_vs_duckdb "$duckdb_parquet" "$spillway_parquet"
ratio partition_parquet_vs_polars "$polars_parquet" "$spillway_parquet"
ratio partition_csv_vs_duckdb "$duckdb_csv" "$spillway_csv"
