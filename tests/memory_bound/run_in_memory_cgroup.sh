#!/usr/bin/env bash
# Runs a command inside a memory cgroup of its own and checks that it finished
# without being killed for memory.
#
#   run_in_memory_cgroup.sh LIMIT_MIB COMMAND [ARGUMENT...]
#
# The cgroup is made beneath the one this script runs in, with a limit of
# LIMIT_MIB mebibytes and no swap (so swapping cannot pass for success), as
# cgroup v1 (memory.limit_in_bytes) or v2 (memory.max), whichever controls
# memory here. The command runs in a new temporary directory under the
# current one, which must be on disk (not tmpfs, whose files would count as
# memory), and spillway's spill directory is set to it
# (SPILLWAY_SPILL_DIRECTORY); relative paths in the arguments are taken from
# there.
#
# Exits 0 if the command exited 0 and the cgroup's oom_kill counter stayed at
# 0; prints the cgroup's peak usage either way. Exits 1 with a message naming
# what is missing where no writable memory cgroup exists. Needs root. The
# cgroup and the directory are removed afterwards, also on failure.
set -euo pipefail

fail() {
    echo "run_in_memory_cgroup: $*" >&2
    exit 1
}

(($# >= 2)) || fail "usage: run_in_memory_cgroup.sh LIMIT_MIB COMMAND [ARGUMENT...]"
limit_bytes=$(($1 * 1024 * 1024))
shift
[[ $(id -u) -eq 0 ]] || fail "making a memory cgroup needs root"

# Where this process's memory cgroup is, and which version controls memory.
v1_root=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/mounts)
v2_root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [[ -n $v1_root ]]; then
    version=1
    own=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3; exit }' /proc/self/cgroup)
    parent="$v1_root$own"
elif [[ -n $v2_root ]] && grep -qw memory "$v2_root/cgroup.controllers" 2>/dev/null; then
    version=2
    own=$(awk -F: '$1 == "0" { print $3; exit }' /proc/self/cgroup)
    parent="$v2_root$own"
    # A v2 cgroup gets the memory controller only if its parent delegates it.
    grep -qw memory "$parent/cgroup.subtree_control" 2>/dev/null \
        || echo +memory >"$parent/cgroup.subtree_control" 2>/dev/null \
        || fail "the cgroup v2 hierarchy at $parent does not delegate the memory controller to child cgroups"
else
    fail "no memory cgroup controller is mounted (neither v1 nor v2 with 'memory' in cgroup.controllers)"
fi

[[ $(stat -f -c %T .) != tmpfs ]] || fail "the current directory $PWD is on tmpfs; run from a directory on disk"
work=$(mktemp -d "$PWD/memory-bound-XXXXXX")
cgroup="$parent/spillway-memory-bound-$$"
cleanup() {
    # The command has exited; its charges move to the parent when the cgroup goes.
    [[ ! -d $cgroup ]] || rmdir "$cgroup" 2>/dev/null || echo "run_in_memory_cgroup: could not remove $cgroup" >&2
    rm -rf "$work"
}
trap cleanup EXIT
mkdir "$cgroup" 2>/dev/null || fail "cannot make a memory cgroup under $parent (is it writable?)"

if ((version == 1)); then
    echo "$limit_bytes" >"$cgroup/memory.limit_in_bytes"
    echo 0 >"$cgroup/memory.swappiness"
    # memory and swap together at the memory limit: no swap at all.
    if [[ -e $cgroup/memory.memsw.limit_in_bytes ]]; then
        echo "$limit_bytes" >"$cgroup/memory.memsw.limit_in_bytes"
    elif [[ $(awk '/^SwapTotal:/ { print $2 }' /proc/meminfo) != 0 ]]; then
        fail "swap is on and this cgroup v1 has no memory.memsw.limit_in_bytes to keep the command out of it"
    fi
    peak_file=memory.max_usage_in_bytes
    oom_kills() { awk '$1 == "oom_kill" { print $2 }' "$cgroup/memory.oom_control"; }
else
    echo "$limit_bytes" >"$cgroup/memory.max"
    echo 0 >"$cgroup/memory.swap.max" 2>/dev/null \
        || [[ $(awk '/^SwapTotal:/ { print $2 }' /proc/meminfo) == 0 ]] \
        || fail "swap is on and cannot be turned off for the cgroup (memory.swap.max)"
    peak_file=memory.peak
    oom_kills() { awk '$1 == "oom_kill" { print $2 }' "$cgroup/memory.events"; }
fi
[[ -n $(oom_kills) ]] || fail "this kernel's memory cgroup does not count oom_kill events"

status=0
(cd "$work" && SPILLWAY_SPILL_DIRECTORY="$work" \
    bash -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' run-in-cgroup "$cgroup" "$@") || status=$?

peak="unknown"
[[ -r $cgroup/$peak_file ]] && peak="$(($(cat "$cgroup/$peak_file") / 1024 / 1024)) MiB"
kills=$(oom_kills)
echo "run_in_memory_cgroup: cgroup v$version limit $((limit_bytes / 1024 / 1024)) MiB, peak usage $peak (page cache included), oom_kill $kills, exit status $status"
if ((kills != 0)); then
    fail "the command was killed for memory ($kills oom_kill events in the cgroup)"
fi
if ((status != 0)); then
    fail "the command exited with status $status"
fi
