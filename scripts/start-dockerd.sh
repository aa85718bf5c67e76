#!/usr/bin/env bash
# Starts a private dockerd for the integration suites, everything under DIR:
#   DIR/docker.sock  the API socket        DIR/data  images and containers
#   DIR/exec         runtime state         DIR/docker.pid, DIR/dockerd.log
# It makes no bridge and touches no iptables rules (the machine has no network
# to give containers; they run with NetworkMode "none"), and its containers
# sit in their own cgroup parent so scripts/stop-dockerd.sh can find them.
# Prints the socket path once /_ping answers. Stop it with stop-dockerd.sh DIR.
#
#   scripts/start-dockerd.sh DIR [TIMEOUT_S]     (default timeout 60 s)
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 DIR [TIMEOUT_S]" >&2
  exit 2
fi
dir=$(realpath -m "$1")
timeout_s=${2:-60}
sock="$dir/docker.sock"
# sun_path holds 108 bytes; a longer path fails later with a confusing error.
if [ ${#sock} -ge 108 ]; then
  echo "start-dockerd: socket path too long for a unix socket: $sock" >&2
  exit 2
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "start-dockerd: dockerd needs root" >&2
  exit 3
fi

# Debian's docker.io and runc (the machine image ships only a docker CLI),
# and curl, which pings the socket below: without it a daemon that started
# would be declared dead after TIMEOUT_S.
if ! command -v dockerd >/dev/null || ! command -v runc >/dev/null || ! command -v curl >/dev/null; then
  echo "start-dockerd: installing docker.io runc curl" >&2
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -qq --no-install-recommends docker.io runc curl >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq --no-install-recommends docker.io runc curl >/dev/null \
      || { echo "start-dockerd: cannot install docker.io runc curl (scripts/install-deps.sh --test)" >&2; exit 3; }
  fi
fi

ping() { curl -sf --max-time 2 --unix-socket "$sock" http://localhost/_ping >/dev/null 2>&1; }

if [ -f "$dir/docker.pid" ] && kill -0 "$(cat "$dir/docker.pid")" 2>/dev/null && ping; then
  echo "$sock"
  exit 0
fi

mkdir -p "$dir/data" "$dir/exec"
# The cgroup parent names this instance (a hash of DIR) so stop-dockerd.sh can
# kill exactly its container processes if dockerd itself was killed first.
parent="orc-dockerd-$(printf '%s' "$dir" | sha256sum | cut -c1-12)"
setsid dockerd --iptables=false --ip6tables=false --bridge=none \
  --host "unix://$sock" --data-root "$dir/data" --exec-root "$dir/exec" \
  --pidfile "$dir/docker.pid" --cgroup-parent "/$parent" --shutdown-timeout 2 \
  >"$dir/dockerd.log" 2>&1 </dev/null &
pid=$!
echo "$parent" >"$dir/cgroup-parent"

deadline=$((SECONDS + timeout_s))
until ping; do
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "start-dockerd: dockerd exited; last lines of $dir/dockerd.log:" >&2
    tail -n 15 "$dir/dockerd.log" >&2
    exit 3
  fi
  if [ $SECONDS -ge $deadline ]; then
    echo "start-dockerd: no answer on $sock after ${timeout_s}s; last lines of $dir/dockerd.log:" >&2
    tail -n 15 "$dir/dockerd.log" >&2
    kill "$pid" 2>/dev/null || true
    exit 3
  fi
  sleep 0.1
done
echo "$sock"
