#!/usr/bin/env bash
# Stops the dockerd that scripts/start-dockerd.sh DIR started, by PID, and
# cleans up after it: its containerd, and, when dockerd was killed (the
# "engine died" test does that), the shims and container processes it left
# behind, the cgroups it made and the mounts left under DIR (dockerd leaves
# an nsfs mount at DIR/exec/netns/default even on a clean stop).
# Every process is found through DIR: pid files, a shim's -address argument
# naming DIR, or the cgroup parent named in DIR/cgroup-parent; nothing else
# on the machine is touched. DIR itself is left for the caller to remove.
#
#   scripts/stop-dockerd.sh DIR
set -uo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 DIR" >&2
  exit 2
fi
dir=$(realpath -m "$1")

# stop_pid PID SECONDS: SIGTERM, then SIGKILL if it outlives SECONDS.
stop_pid() {
  local pid=$1 wait_s=$2
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null
  local i
  for ((i = 0; i < wait_s * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null
  sleep 0.1
}

pid_from() { [ -s "$1" ] && tr -dc '0-9' <"$1"; }

if pid=$(pid_from "$dir/docker.pid"); then stop_pid "$pid" 15; fi
if pid=$(pid_from "$dir/exec/containerd/containerd.pid"); then stop_pid "$pid" 5; fi

# Shims outlive a killed containerd; each names its containerd's socket.
for proc in /proc/[0-9]*; do
  if tr '\0' ' ' 2>/dev/null <"$proc/cmdline" | grep -qF -- "-address $dir/exec/containerd/containerd.sock"; then
    kill -KILL "${proc#/proc/}" 2>/dev/null
  fi
done

# Container processes of this instance, by cgroup (v1 controllers and v2).
if [ -s "$dir/cgroup-parent" ]; then
  parent=$(cat "$dir/cgroup-parent")
  for cg in /sys/fs/cgroup/*/"$parent" /sys/fs/cgroup/"$parent"; do
    [ -d "$cg" ] || continue
    find "$cg" -name cgroup.procs -exec cat {} + 2>/dev/null | while read -r p; do kill -KILL "$p" 2>/dev/null; done
  done
  sleep 0.2
  for cg in /sys/fs/cgroup/*/"$parent" /sys/fs/cgroup/"$parent"; do
    [ -d "$cg" ] && find "$cg" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
fi

# Mounts under DIR, deepest first (field 5 of mountinfo is the mount point).
awk -v d="$dir/" 'index($5, d) == 1 {print $5}' /proc/self/mountinfo | sort -r | while read -r m; do
  umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || echo "stop-dockerd: cannot unmount $m" >&2
done
exit 0
