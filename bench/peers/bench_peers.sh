#!/usr/bin/env bash
# The peers side by side: a hash shuffle of TPC-H lineitem (Parquet, row
# groups of 2^20 rows, written by DuckDB) into 64 partitions by l_orderkey,
# each partition written as zstd Parquet at level 1 (peer_partition.py's
# zstd_level; spillway's default), by every tool on the same machine
# in one run, each with 2 threads and one memory budget:
#
#   spillway-ranks      `spillway partition --ranks 4`: 4 in-process ranks that
#                       share the row groups out and shuffle the rows (verified)
#   spillway-ranks-mpi  the same over MPI: mpirun -np 4 spillway partition
#                       --comm mpi, a quarter of the budget and 1 worker each
#   spillway      the Python package: spillway.shuffle over 4 in-process ranks
#   spillway-mpi  the Python package over MPI: mpirun -np 4, one rank each
#   spillway-cli  `spillway partition` (one rank, 2 threads, verified)
#   duckdb        COPY ... PARTITION_BY hash % 64
#   spillway-cli-csv, duckdb-csv  the same two from the CSV that the Parquet
#                 file was made from (spillway's generated lineitem)
#   polars        sink_parquet with PartitionBy hash % 64
#   duckdb-matched, polars-matched  the same two, in row groups of as many
#                 rows as spillway-cli's (the median of its output's, which
#                 its write buffers bound; spillway-cli runs first)
#   dask          distributed LocalCluster, shuffle_method="p2p"
#   spark         pyspark local[2], repartition(64, key)
#   ray           Ray Data repartition(64, keys=[key])
#
# peer_partition.py says how each is set up. Every tool runs in a memory
# cgroup of 1.15 x budget + 64 MiB (tests/memory_bound/run_in_memory_cgroup.sh,
# which kills it if it goes over) with its own memory setting at the budget.
# A tool that fails is run again at 2x and then 4x the budget; its figure is
# taken at the smallest budget it finished within, and a tool that never
# finishes (or runs past 15 minutes: Ray retries a killed task forever) is
# reported as failed. Every output is checked with DuckDB: the
# same multiset of rows as the input, and no key in two partitions. Times are
# measured inside each tool's process, without start-up (for spillway-cli,
# its own summary, which includes its verification).
#
# METRIC shuffle_vs_<tool> is the tool's time / spillway-ranks's;
# shuffle_mpi_vs_ranks is spillway-ranks's time / spillway-ranks-mpi's;
# shuffle_python_vs_ranks the Python package's in-process time /
# spillway-ranks's; partition_parquet_vs_duckdb,
# partition_parquet_vs_polars and partition_csv_vs_duckdb compare
# `spillway partition` with those two, the Parquet ones with the peer in row
# groups of the size spillway-cli wrote (the -matched runs; ..._2p20_row_groups
# with the peer's of 2^20 rows). Each ratio comes with <name>_budget_factor,
# the budget factor the peer finished at.
#
# Usage: spillway_bench_peers [SCALE] [BUDGET_MIB] [TOOL...]   (default 4, 1024, every tool)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
run_in_cgroup=(timeout 900 "@RUN_IN_MEMORY_CGROUP@")
check="@CHECK_PARTITIONS@"
python="@SPILLWAY_PYTHON@"
mpirun="@MPIEXEC_EXECUTABLE@"
peer="$here/peer_partition.py"
spillway="$here/../../apps/spillway/spillway"
scale=${1:-4}
budget=${2:-1024}
shift $(($# > 2 ? 2 : $#))
tools=("$@")
((${#tools[@]} != 0)) \
  || tools=(spillway-ranks spillway-ranks-mpi spillway spillway-mpi spillway-cli duckdb duckdb-matched polars
            polars-matched dask spark ray spillway-cli-csv duckdb-csv)
seen_cli=false
for tool in "${tools[@]}"; do
  [[ $tool != spillway-cli ]] || seen_cli=true
  [[ $tool != *-matched ]] || $seen_cli || fail "$tool needs spillway-cli before it in the tools"
done
partitions=64
threads=2
key=l_orderkey

fail() { echo "bench_peers: $*" >&2; exit 1; }
"$python" -c 'import spillway, duckdb' 2>/dev/null \
  || fail "needs $python with the spillway package and duckdb (make test-python, then scripts/setup --peers)"

mkdir -p "$here/data"
csv="$here/data/lineitem-$scale.csv"
parquet="$here/data/lineitem-$scale.parquet"
if [[ ! -f $csv ]]; then
  "$spillway" generate --table lineitem --scale "$scale" --output "$csv.partial" --quiet
  mv "$csv.partial" "$csv"
fi
if [[ ! -f $parquet ]]; then
  "$python" -c "import duckdb; duckdb.sql(\"COPY (SELECT * FROM read_csv('$csv')) TO '$parquet.partial' \
    (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 1048576)\")"
  mv "$parquet.partial" "$parquet"
fi
work="$here/work"
rm -rf "$work" && mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

# row_group_rows DIR: the median rows of a row group in the Parquet files under DIR.
row_group_rows() {
  "$python" - "$1" <<'PYTHON'
import glob, statistics, sys
import pyarrow.parquet as pq
rows = [group.num_rows for path in glob.glob(f"{sys.argv[1]}/**/*.parquet", recursive=True)
        for group in (lambda meta: [meta.row_group(i) for i in range(meta.num_row_groups)])(pq.read_metadata(path))]
print(int(statistics.median(rows)))
PYTHON
}

# run TOOL FACTOR: runs the tool once at FACTOR x the budget in its cgroup and
# checks its output; prints "SECONDS PEAK_MIB", or nothing if it failed.
run() {
  local tool=$1 factor=$2 limit=$((budget * $2)) out="$work/out-$1" log="$work/$1.log"
  local cgroup=$((limit * 115 / 100 + 64)) seconds=""
  rm -rf "$out"
  local input=$parquet format=parquet
  [[ $tool != *-csv ]] || input=$csv format=csv
  local launch=() flags=(--memory-limit "${limit}MiB" --threads $threads) peer_env=() rows
  case $tool in
    spillway-ranks) flags+=(--ranks 4) ;;
    *-matched)
      rows=$(row_group_rows "$work/out-spillway-cli") \
        || { echo "bench_peers: spillway-cli wrote no row groups for $tool to match" >&2; return 0; }
      peer_env=(PEER_ROW_GROUP_ROWS="$rows")
      ;;
    spillway-ranks-mpi)
      launch=("$mpirun" --allow-run-as-root --oversubscribe -np 4 -x OMPI_MCA_btl=self,vader
              -x OMPI_MCA_btl_vader_single_copy_mechanism=none)
      flags=(--comm mpi --memory-limit "$((limit / 4))MiB" --threads 1)
      ;;
  esac
  case $tool in
    spillway-cli* | spillway-ranks*)
      (cd "$work" && "${run_in_cgroup[@]}" "$cgroup" "${launch[@]}" "$spillway" partition -i "$input" -k $key \
        --partitions $partitions --output-format parquet -o "$out" "${flags[@]}" --json --quiet) >"$log" 2>&1 || true
      grep -q '"verified":true' "$log" && seconds=$(sed -n 's/.*"seconds":\([0-9.e+-]*\).*/\1/p' "$log" | head -1)
      ;;
    spillway-mpi)
      (cd "$work" && "${run_in_cgroup[@]}" "$cgroup" "$mpirun" --allow-run-as-root --oversubscribe -np 4 \
        -x OMPI_MCA_btl=self,vader -x OMPI_MCA_btl_vader_single_copy_mechanism=none \
        "$python" "$peer" "$tool" "$parquet" "$out" $key $partitions $threads "$limit" parquet) >"$log" 2>&1 || true
      seconds=$(grep -ao 'seconds [0-9.e+-]*' "$log" | awk '{ print $2 }' | tail -1)
      ;;
    *)
      local peer_tool=${tool%-csv}
      (cd "$work" && env "${peer_env[@]}" "${run_in_cgroup[@]}" "$cgroup" "$python" "$peer" "${peer_tool%-matched}" \
        "$input" "$out" $key $partitions $threads "$limit" $format) >"$log" 2>&1 || true
      # A tool's progress output may share the line.
      seconds=$(grep -ao 'seconds [0-9.e+-]*' "$log" | awk '{ print $2 }' | tail -1)
      ;;
  esac
  [[ -n $seconds ]] || return 0
  "$python" "$check" $key "$input" "$out" >"$work/$tool.check" 2>&1 \
    || { echo "bench_peers: $tool's output failed the check: $(cat "$work/$tool.check")" >&2; return 0; }
  local peak
  peak=$(sed -n 's/.*peak usage \([0-9]*\) MiB.*/\1/p' "$log" | tail -1)
  echo "$seconds ${peak:-?}"
}

declare -A seconds_of factor_of peak_of
echo "input: lineitem scale $scale ($(stat -c %s "$parquet") bytes of Parquet), $partitions partitions by $key," \
  "$threads threads, budget $budget MiB (cgroup 1.15 x budget + 64 MiB)"
for tool in "${tools[@]}"; do
  for factor in 1 2 4; do
    result=$(run "$tool" "$factor")
    if [[ -n $result ]]; then
      read -r seconds_of[$tool] peak_of[$tool] <<<"$result"
      factor_of[$tool]=$factor
      echo "  $tool: ${seconds_of[$tool]} s at ${factor}x the budget, peak ${peak_of[$tool]} MiB (cgroup)," \
        "output checked"
      break
    fi
    echo "  $tool: failed at ${factor}x the budget: $(grep -m1 -E 'run_in_memory_cgroup: the command|Error|error' \
      "$work/$tool.log" | cut -c1-200)"
  done
  [[ -n ${factor_of[$tool]:-} ]] || echo "  $tool: FAILED at every budget up to 4x"
done

# ratio NAME PEER BASELINE: the peer's time over the baseline's, where both finished.
ratio() {
  local peer=${seconds_of[$2]:-} base=${seconds_of[$3]:-}
  if [[ -z $peer || -z $base ]]; then
    echo "  $1: no ratio ($2 or $3 did not finish)"
    return
  fi
  awk -v name="$1" -v p="$peer" -v s="$base" 'BEGIN { printf "METRIC %s %.3f ratio\n", name, p / s }'
}
# budget_factor NAME TOOL: the budget factor the tool finished at, where it did.
budget_factor() {
  [[ -z ${factor_of[$2]:-} ]] || echo "METRIC ${1}_budget_factor ${factor_of[$2]} factor"
}
for tool in dask spark polars duckdb ray; do
  ratio "shuffle_vs_$tool" "$tool" spillway-ranks
  budget_factor "shuffle_vs_$tool" "$tool"
done
ratio shuffle_mpi_vs_ranks spillway-ranks spillway-ranks-mpi
ratio shuffle_python_vs_ranks spillway spillway-ranks
ratio shuffle_python_mpi_vs_ranks spillway-mpi spillway-ranks
ratio partition_parquet_vs_duckdb duckdb-matched spillway-cli
budget_factor partition_parquet_vs_duckdb duckdb-matched
ratio partition_parquet_vs_duckdb_2p20_row_groups duckdb spillway-cli
ratio partition_parquet_vs_polars polars-matched spillway-cli
budget_factor partition_parquet_vs_polars polars-matched
ratio partition_parquet_vs_polars_2p20_row_groups polars spillway-cli
ratio partition_csv_vs_duckdb duckdb-csv spillway-cli-csv
budget_factor partition_csv_vs_duckdb duckdb-csv
if [[ -n ${seconds_of[spillway-ranks]:-} ]]; then
  awk -v b="$(stat -c %s "$parquet")" -v s="${seconds_of[spillway-ranks]}" \
    'BEGIN { printf "METRIC shuffle_spillway_parquet_rate %.1f MB/s\n", b / s / 1e6 }'
fi
