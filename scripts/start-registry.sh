#!/usr/bin/env bash
# Starts a private OCI registry (Debian's docker-registry, distribution 2.8)
# for the registry suite and benchmark, everything under DIR:
#   DIR/config.yml  DIR/data (blob storage)  DIR/registry.log  DIR/registry.pid
#   DIR/port        DIR/htpasswd (with --user)
# It listens on 127.0.0.1 only, on a free port (or --port). With --user
# NAME:PASSWORD it requires basic auth from an htpasswd file (bcrypt).
# With --access-log every request is logged to DIR/registry.log (the fetch
# suite counts blob GETs there). Prints the PID once /v2/ answers. Stop it
# with stop-registry.sh DIR.
#
#   scripts/start-registry.sh DIR [--port N] [--user NAME:PASSWORD] [--timeout S] [--access-log]
set -euo pipefail

usage() { echo "usage: $0 DIR [--port N] [--user NAME:PASSWORD] [--timeout S] [--access-log]" >&2; exit 2; }
[ $# -ge 1 ] || usage
dir=$(realpath -m "$1")
shift
port="" user="" timeout_s=30 access_disabled=true
while [ $# -gt 0 ]; do
  case "$1" in
    --port) [ $# -ge 2 ] || usage; port=$2; shift 2 ;;
    --user) [ $# -ge 2 ] || usage; user=$2; shift 2 ;;
    --timeout) [ $# -ge 2 ] || usage; timeout_s=$2; shift 2 ;;
    --access-log) access_disabled=false; shift ;;
    *) usage ;;
  esac
done

# curl pings /v2/ below: without it a registry that started would be
# declared dead after the timeout.
if ! command -v docker-registry >/dev/null || ! command -v curl >/dev/null ||
  { [ -n "$user" ] && ! command -v htpasswd >/dev/null; }; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "start-registry: docker-registry, apache2-utils or curl is missing (scripts/install-deps.sh --test)" >&2
    exit 3
  fi
  echo "start-registry: installing docker-registry apache2-utils curl" >&2
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -qq --no-install-recommends docker-registry apache2-utils curl >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq --no-install-recommends docker-registry apache2-utils curl >/dev/null \
      || { echo "start-registry: cannot install docker-registry apache2-utils curl" >&2; exit 3; }
  fi
fi

if [ -z "$port" ]; then
  # The kernel picks a free port; the registry binds it a moment later.
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fi

mkdir -p "$dir/data"
auth=""
if [ -n "$user" ]; then
  # -i reads the password from stdin, so it never shows in ps.
  printf '%s' "${user#*:}" | htpasswd -iBc "$dir/htpasswd" "${user%%:*}" 2>/dev/null
  auth="auth:
  htpasswd:
    realm: orchestrate-test
    path: $dir/htpasswd"
fi
cat >"$dir/config.yml" <<YAML
version: 0.1
log:
  level: warn
  accesslog:
    disabled: $access_disabled
storage:
  filesystem:
    rootdirectory: $dir/data
  delete:
    enabled: true
  maintenance:
    uploadpurging:
      enabled: false
http:
  addr: 127.0.0.1:$port
  secret: $(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
$auth
YAML
echo "$port" >"$dir/port"

setsid docker-registry serve "$dir/config.yml" >"$dir/registry.log" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$dir/registry.pid"

deadline=$((SECONDS + timeout_s))
until code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/v2/") &&
  { [ "$code" = 200 ] || [ "$code" = 401 ]; }; do
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "start-registry: docker-registry exited; last lines of $dir/registry.log:" >&2
    tail -n 15 "$dir/registry.log" >&2
    exit 3
  fi
  if [ $SECONDS -ge $deadline ]; then
    echo "start-registry: no answer on 127.0.0.1:$port after ${timeout_s}s" >&2
    kill "$pid" 2>/dev/null || true
    exit 3
  fi
  sleep 0.1
done
echo "$pid"
