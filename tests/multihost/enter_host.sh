#!/bin/sh
# mpirun's launcher for the virtual hosts of run_on_hosts.sh, in place of ssh:
#
#   enter_host.sh HOST COMMAND...
#
# runs COMMAND (one shell command line, as ssh takes it) in the network
# namespace of HOST, with that host's own spill root as TMPDIR and
# SPILLWAY_SPILL_DIRECTORY. run_on_hosts.sh sets MULTIHOST_NAMESPACE_PREFIX
# and MULTIHOST_ROOT in mpirun's environment, which passes them on here.
set -eu
host=$1
shift
root="$MULTIHOST_ROOT/$host"
mkdir -p "$root"
exec ip netns exec "$MULTIHOST_NAMESPACE_PREFIX$host" \
    env TMPDIR="$root" SPILLWAY_SPILL_DIRECTORY="$root" /bin/sh -c "$*"
