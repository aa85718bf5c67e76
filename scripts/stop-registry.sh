#!/usr/bin/env bash
# Stops the registry that scripts/start-registry.sh DIR started, by the PID in
# DIR/registry.pid: SIGTERM, then SIGKILL after 10 s. DIR itself is left for
# the caller to remove.
#
#   scripts/stop-registry.sh DIR
set -uo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 DIR" >&2
  exit 2
fi
dir=$(realpath -m "$1")
[ -s "$dir/registry.pid" ] || exit 0
pid=$(tr -dc '0-9' <"$dir/registry.pid")
[ -n "$pid" ] || exit 0
kill -0 "$pid" 2>/dev/null || exit 0
kill -TERM "$pid" 2>/dev/null
for ((i = 0; i < 100; i++)); do
  kill -0 "$pid" 2>/dev/null || exit 0
  sleep 0.1
done
kill -KILL "$pid" 2>/dev/null
exit 0
