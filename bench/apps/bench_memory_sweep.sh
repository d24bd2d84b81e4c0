#!/usr/bin/env bash
# Throughput of `spillway shuffle` as its memory limit shrinks from the whole
# data to a tenth of it, against what the disk allows.
#
# First the machine, for BENCHMARKS.md's method: CPU, cores, memory, the
# spill directory's file system and mount options, and fio's raw O_DIRECT
# rates there (sequential 4 MiB blocks over 1 GiB, one job, as the disk tier
# writes; random 4 KiB for 5 s, one job). fio is required: `make bench`
# installs it (scripts/setup --peers).
#
# Then `spillway shuffle --scale SCALE` (default 2, about 1.6 GB of lineitem;
# 4 in-process ranks, 2 threads, 16 partitions), once with a limit of 2 GiB
# per unit of scale, about 2.6 times the data, where nothing spills, and then
# at limits of 100, 80, 60, 40, 20 and 10% of the data. Each run prints its MB/s, the bytes it spilled and read
# back, and its I/O bound: the MB/s it would reach if it took only the time
# fio's sequential rates need to write what it spilled and read it back.
#
# METRIC shuffle_10_percent_vs_in_memory: the MB/s at 10% over the MB/s with
# room for all the data (1.0: spilling 90% costs nothing).
# METRIC shuffle_10_percent_vs_io_bound: the time at 10% over the time its
# disk traffic takes at fio's rates (1.0: as fast as the disk allows; lower
# is better).
#
# Usage: spillway_bench_memory_sweep [SCALE]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
spillway="$here/../../apps/spillway/spillway"
scale=${1:-2}
command -v fio >/dev/null || { echo "bench_memory_sweep: fio is missing; run scripts/setup --peers" >&2; exit 1; }
work=$(mktemp -d "$here/memory-sweep-XXXXXX")
trap 'rm -rf "$work"' EXIT
export SPILLWAY_SPILL_DIRECTORY="$work"

# A field of the JSON object in $work/summary.json.
field() { python3 -c "import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$work/summary.json" "$1"; }
# fio's rate of one job of `fio ARGUMENTS...` in the spill directory: bytes per second, or with `iops`, IOPS.
fio_rate() {
  local what=$1 direction=$2
  shift 2
  fio --name=raw --directory="$work" --rw="$direction" --direct=1 --ioengine=psync --numjobs=1 \
    --output-format=json "$@" >"$work/fio.json"
  rm -f "$work"/raw.*
  python3 -c "import json, sys; j = json.load(open(sys.argv[1]))['jobs'][0]; print(j[sys.argv[2]][sys.argv[3]])" \
    "$work/fio.json" "${direction#rand}" "$what"
}

echo "  machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores," \
  "$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), Linux $(uname -r)" >&2
echo "  spill directory: $(findmnt -no SOURCE,FSTYPE,OPTIONS -T "$work" | tr -s ' ')" >&2
write_rate=$(fio_rate bw_bytes write --bs=4M --size=1G)
read_rate=$(fio_rate bw_bytes read --bs=4M --size=1G)
write_iops=$(fio_rate iops randwrite --bs=4k --size=256M --runtime=5 --time_based)
read_iops=$(fio_rate iops randread --bs=4k --size=256M --runtime=5 --time_based)
echo "  fio $(fio --version | sed 's/^fio-//'), O_DIRECT, one job: sequential 4 MiB" \
  "write $(awk -v r="$write_rate" 'BEGIN { printf "%.0f", r / 1e6 }') MB/s," \
  "read $(awk -v r="$read_rate" 'BEGIN { printf "%.0f", r / 1e6 }') MB/s; random 4 KiB" \
  "write $(printf '%.0f' "$write_iops") IOPS, read $(printf '%.0f' "$read_iops") IOPS" >&2

# Runs the shuffle under `--memory-limit BYTES`; prints its MB/s and its line of the table.
shuffle_at() {
  local limit=$1 label=$2
  "$spillway" shuffle --json --quiet --scale "$scale" --partitions 16 --threads 2 --memory-limit "$limit" \
    >"$work/summary.json" || true
  [[ $(field verified) == True ]] || { cat "$work/summary.json" >&2; echo "bench_memory_sweep: $label failed" >&2; exit 1; }
  local bytes seconds spilled read_back
  bytes=$(field bytes) seconds=$(field seconds) spilled=$(field spilled_bytes) read_back=$(field read_back_bytes)
  awk -v label="$label" -v limit="$limit" -v b="$bytes" -v s="$seconds" -v w="$spilled" -v r="$read_back" \
    -v wr="$write_rate" -v rr="$read_rate" 'BEGIN {
      disk = w / wr + r / rr
      bound = (disk > 0) ? sprintf("%.0f MB/s", b / disk / 1e6) : "none"
      printf "  | %s | %.0f MiB | %.1f s | %.0f MB/s | %.0f MB | %.0f MB | %s |\n", label, limit / 1048576, s,
        b / s / 1e6, w / 1e6, r / 1e6, bound > "/dev/stderr"
      printf "%s %s\n", b / s, (disk > 0) ? s / disk : 0
    }'
}

echo "  | limit (share of the data) | limit | time | throughput | spilled | read back | I/O bound |" >&2
result=$(shuffle_at "$(awk -v s="$scale" 'BEGIN { printf "%.0f", s * 2 * 2^30 }')" "room for all")
read -r in_memory _ <<<"$result"
data=$(field bytes)
for percent in 100 80 60 40 20 10; do
  result=$(shuffle_at $((data * percent / 100)) "${percent}%")
  read -r rate over_bound <<<"$result"
done
awk -v a="$rate" -v b="$in_memory" 'BEGIN { printf "METRIC shuffle_10_percent_vs_in_memory %.3f ratio\n", a / b }'
echo "METRIC shuffle_10_percent_vs_io_bound $(printf '%.3f' "$over_bound") ratio"
