#!/usr/bin/env bash
# cli_default_seconds: the wall time of `spillway shuffle` on its built-in
# defaults (4 in-process ranks, about 1 GiB of lineitem, a 512 MiB limit that
# forces spilling), verification included, which must stay under 60 s on
# 2 cores. Run twice; both times are printed and the faster one counts.
#
# Usage: spillway_bench_shuffle
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
spillway="$here/../../apps/spillway/spillway"
summary=$(mktemp)
trap 'rm -f "$summary"' EXIT

now() { date +%s.%N; }

run_default() {
  local start; start=$(now)
  "$spillway" shuffle --json --quiet >"$summary"
  local seconds; seconds=$(awk -v s="$start" -v e="$(now)" 'BEGIN { print e - s }')
  grep -q '"verified":true' "$summary" || { echo "bench_shuffle: the default run did not verify" >&2; exit 1; }
  echo "  $(grep -o '"bytes":[0-9]*' "$summary"), $(grep -o '"spilled_bytes":[0-9]*' "$summary")," \
    "$(grep -o '"phases":{[^}]*}' "$summary")" >&2
  echo "$seconds"
}

first=$(run_default)
second=$(run_default)
awk -v a="$first" -v b="$second" 'BEGIN {
  printf "  runs: %.2f s, %.2f s\n", a, b
  printf "METRIC cli_default_seconds %.2f s\n", (a < b ? a : b)
}'
