#!/usr/bin/env bash
# Runs an MPI program across several hosts made on this machine, so that its
# messages cross a network (TCP over veth pairs and a bridge) instead of
# shared memory.
#
#   run_on_hosts.sh HOSTS COMMAND [ARGUMENT...]
#
# Makes HOSTS network namespaces (h1, h2, ...), each joined to one bridge by
# a veth pair, and runs `mpirun` in h1 with one process of COMMAND per host,
# launched through enter_host.sh, over TCP only (`btl tcp,self`). Each host
# has a spill root of its own under a new temporary directory beneath the
# current one. The environment variables SPILLWAY_* (but the spill
# directory, which is each host's own), ASAN_OPTIONS, LSAN_OPTIONS and
# UBSAN_OPTIONS reach every process.
#
# MULTIHOST_RATE (a `tc` rate such as 1gbit) caps each host's link in both
# directions with a token bucket filter (`tbf`). This kernel has no `netem`,
# so no latency is added; where `tc qdisc add ... netem` works,
# MULTIHOST_DELAY (such as 1ms) adds that much each way.
#
# Prints the bytes that crossed the bridge. If COMMAND printed a spillway
# JSON summary with `sent_bytes`, checks that at least that many bytes
# crossed. Exits with COMMAND's status, or 1 if a check fails or the hosts
# cannot be made (naming what is missing; needs root). The namespaces, links
# and directories are removed afterwards, also on failure.
set -euo pipefail

fail() {
    echo "run_on_hosts: $*" >&2
    exit 1
}

(($# >= 2)) || fail "usage: run_on_hosts.sh HOSTS COMMAND [ARGUMENT...]"
hosts=$1
shift
((hosts >= 1 && hosts <= 16)) || fail "HOSTS must be 1 to 16, not $hosts"
[[ $(id -u) -eq 0 ]] || fail "making network namespaces needs root"
command -v ip >/dev/null || fail "no 'ip' command (Debian package iproute2)"
command -v mpirun >/dev/null || fail "no 'mpirun' (Debian package openmpi-bin)"
here=$(cd "$(dirname "$0")" && pwd)

# Names unique to this run: interface names have at most 15 characters.
id=$(($$ % 100000))
export MULTIHOST_NAMESPACE_PREFIX="spw$id-"
bridge="spw${id}br"
subnet="10.231.$((id % 250 + 1))"
work=$(mktemp -d "$PWD/multihost-XXXXXX")
export MULTIHOST_ROOT="$work"

cleanup() {
    for ((i = 1; i <= hosts; ++i)); do
        ip netns del "${MULTIHOST_NAMESPACE_PREFIX}h$i" 2>/dev/null || true
        ip link del "spw${id}v$i" 2>/dev/null || true
    done
    ip link del "$bridge" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

ip link add "$bridge" type bridge 2>/dev/null || fail "cannot make a bridge (is the 'bridge' kernel module there?)"
ip link set "$bridge" up
for ((i = 1; i <= hosts; ++i)); do
    namespace="${MULTIHOST_NAMESPACE_PREFIX}h$i"
    link="spw${id}v$i"
    ip netns add "$namespace" || fail "cannot make the network namespace $namespace"
    ip link add "$link" type veth peer name eth0 netns "$namespace" 2>/dev/null \
        || fail "cannot make a veth pair (is the 'veth' kernel module there?)"
    ip link set "$link" master "$bridge" up
    ip -n "$namespace" addr add "$subnet.$i/24" dev eth0
    ip -n "$namespace" link set eth0 up
    ip -n "$namespace" link set lo up
    if [[ -n ${MULTIHOST_RATE:-} ]]; then
        for side in "" "-n $namespace"; do
            device=$([[ -z $side ]] && echo "$link" || echo eth0)
            # shellcheck disable=SC2086
            tc $side qdisc add dev "$device" root tbf rate "$MULTIHOST_RATE" burst 1mbit latency 50ms \
                || fail "cannot cap $device at $MULTIHOST_RATE with tc tbf"
        done
    fi
    if [[ -n ${MULTIHOST_DELAY:-} ]]; then
        ip netns exec "$namespace" tc qdisc add dev eth0 root netem delay "$MULTIHOST_DELAY" 2>/dev/null \
            || fail "cannot add $MULTIHOST_DELAY of latency: this kernel has no netem"
    fi
done

crossed() {
    local total=0
    for ((i = 1; i <= hosts; ++i)); do
        total=$((total + $(cat "/sys/class/net/spw${id}v$i/statistics/rx_bytes")))
    done
    echo $total
}

host_list=$(seq -f 'h%g:1' -s, 1 "$hosts")
forwarded=()
while IFS='=' read -r name _; do
    forwarded+=(-x "$name")
done < <(env | grep -E '^(SPILLWAY_[A-Z_]*|ASAN_OPTIONS|LSAN_OPTIONS|UBSAN_OPTIONS)=' \
    | grep -v '^SPILLWAY_SPILL_DIRECTORY=' || true)

before=$(crossed)
status=0
ip netns exec "${MULTIHOST_NAMESPACE_PREFIX}h1" mpirun --allow-run-as-root -np "$hosts" --host "$host_list" \
    --mca plm_rsh_agent "$here/enter_host.sh" --mca btl tcp,self \
    --mca oob_tcp_if_include "$subnet.0/24" --mca btl_tcp_if_include "$subnet.0/24" \
    "${forwarded[@]}" "$@" | tee "$work/stdout" || status=$?
bytes=$(($(crossed) - before))
echo "run_on_hosts: $bytes bytes crossed the network between $hosts hosts${MULTIHOST_RATE:+ (each link capped at $MULTIHOST_RATE)}"

sent=$(grep -o '"sent_bytes": *[0-9]*' "$work/stdout" | tail -1 | grep -o '[0-9]*$' || true)
if [[ -n $sent ]] && ((bytes < sent)); then
    fail "the ranks sent $sent bytes to each other but only $bytes crossed the network"
fi
exit $status
