#!/usr/bin/env bash
# Stops what start-slurm.sh DIR started, by the PIDs it recorded: every
# slurmd, slurmctld, then munged; waits for each to exit.
#
#   scripts/stop-slurm.sh DIR
set -uo pipefail
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
dir=$(realpath -m "$1")
stop() {
  local file=$1 pid
  [ -f "$file" ] || return 0
  pid=$(cat "$file")
  [ -n "$pid" ] || return 0
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
}
for f in "$dir"/slurmd-*.pid; do stop "$f"; done
stop "$dir/slurmctld.pid"
munge_dir="$dir/munge"
[ -f "$dir/munge-dir" ] && munge_dir=$(cat "$dir/munge-dir")
stop "$munge_dir/munged.pid"
if [ -f "$dir/munge-dir" ]; then
  case "$munge_dir" in /tmp/orc-munge.*) rm -rf "$munge_dir" ;; esac
fi
