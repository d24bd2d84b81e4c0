#!/usr/bin/env bash
# Sends SIGNAL to one rank of `spillway shuffle` across 4 hosts
# (run_on_hosts.sh) once it is spilling, and checks how the job ends:
#
#   signal_a_rank.sh STOP|KILL SPILLWAY
#
# STOP: the other ranks name a rank that sent nothing within
# --collective-timeout (3 s here), the job exits 1, and the stopped rank is
# gone afterwards. KILL: mpirun ends the job with a failure.
# Exits 0 if so; 1 naming what happened instead.
set -euo pipefail

fail() {
    echo "signal_a_rank: $*" >&2
    exit 1
}

(($# == 2)) || fail "usage: signal_a_rank.sh STOP|KILL SPILLWAY"
signal=$1
tool=$2
[[ $signal == STOP || $signal == KILL ]] || fail "SIGNAL must be STOP or KILL, not $signal"
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "$PWD/signal-a-rank-XXXXXX")
job=0
cleanup() {
    ((job == 0)) || kill "$job" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
cd "$work"

"$here/run_on_hosts.sh" 4 "$tool" shuffle --comm mpi --scale 1 --memory-limit 48MiB --quiet --threads 1 \
    --window 1 --collective-timeout 3s 2>"$work/stderr" &
job=$!

# A rank that has spilled is shuffling: signal it then. Its owner file holds
# its pid; host 3's spill root is its own.
victim=""
deadline=$((SECONDS + 120))
while [[ -z $victim ]] && ((SECONDS < deadline)) && kill -0 "$job" 2>/dev/null; do
    for spilled in "$work"/multihost-*/h3/spillway-*/buffer-0; do
        [[ -e $spilled ]] && victim=$(cat "$(dirname "$spilled")/owner")
    done
    [[ -n $victim ]] || sleep 0.01
done
[[ -n $victim ]] || fail "no rank on host 3 spilled; stderr: $(cat "$work/stderr")"
kill -"$signal" "$victim"

status=0
wait "$job" || status=$?
job=0
echo "signal_a_rank: SIG$signal to pid $victim; the job exited with status $status"
if [[ $signal == STOP ]]; then
    ((status == 1)) || fail "expected exit status 1; stderr: $(cat "$work/stderr")"
    grep -Eq "rank [0-3] sent nothing for [0-9.]+ s \(--collective-timeout is 3.0 s\): it has stopped, hangs or cannot be reached" \
        "$work/stderr" || fail "no rank named the stopped one; stderr: $(cat "$work/stderr")"
    for ((i = 0; i < 3000; ++i)); do
        state=$(awk '{ print $3 }' "/proc/$victim/stat" 2>/dev/null || echo X)
        [[ $state == Z || $state == X ]] && exit 0
        sleep 0.01
    done
    fail "the stopped rank (pid $victim) was left behind"
fi
((status != 0)) || fail "the job succeeded although a rank was killed"
