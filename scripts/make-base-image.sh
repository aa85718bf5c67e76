#!/usr/bin/env bash
# Makes the root file-system tar of a minimal Debian bookworm (debootstrap
# --variant=minbase) that the engine tests import through our own API client
# (POST /images/create?fromSrc=-), so no registry and no docker CLI is needed.
#
#   scripts/make-base-image.sh CACHE_DIR     prints CACHE_DIR/bookworm-minbase.tar
#   scripts/make-base-image.sh CACHE_DIR NAME PKG,PKG...
#                                            the same with those packages
#                                            installed, as CACHE_DIR/NAME.tar
#                                            (the compose suite's runtime image)
#
# The tar is cached: a second call with the same CACHE_DIR returns at once.
# The mirror is the host's own (the first URIs: line of its apt sources), read
# here at run time so no mirror name is written into the repository.
# Takes about 80 s on an idle machine (debootstrap) plus ~5 s to tar.
set -euo pipefail

if [ $# -ne 1 ] && [ $# -ne 3 ]; then
  echo "usage: $0 CACHE_DIR [NAME PKG,PKG...]" >&2
  exit 2
fi
cache=$(realpath -m "$1")
name=${2:-bookworm-minbase}
include=${3:-}
case "$name" in
  *[!A-Za-z0-9._-]*) echo "make-base-image: bad name '$name'" >&2; exit 2 ;;
esac
tar_path="$cache/$name.tar"
if [ -s "$tar_path" ]; then
  echo "$tar_path"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "make-base-image: debootstrap needs root" >&2
  exit 3
fi

mirror=""
if [ -r /etc/apt/sources.list.d/debian.sources ]; then
  mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources)
fi
if [ -z "$mirror" ] && [ -r /etc/apt/sources.list ]; then
  mirror=$(awk '$1 == "deb" {for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) {print $i; exit}}' /etc/apt/sources.list)
fi
if [ -z "$mirror" ]; then
  echo "make-base-image: no Debian mirror found in the host's apt sources" >&2
  exit 3
fi

if ! command -v debootstrap >/dev/null; then
  echo "make-base-image: installing debootstrap" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi

mkdir -p "$cache"
# Build beside the final tar and rename at the end, so an interrupted run
# never leaves a tar that a later run would take for complete.
work=$(mktemp -d "$cache/rootfs.XXXXXX")
trap 'rm -rf "$work"' EXIT
rootfs="$work/rootfs"
extra=()
if [ -n "$include" ]; then extra=(--include="$include"); fi
if ! debootstrap --variant=minbase "${extra[@]}" bookworm "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1; then
  echo "make-base-image: debootstrap failed; last lines of its log:" >&2
  tail -n 20 "$work/debootstrap.log" >&2
  exit 3
fi
# The downloaded .debs and apt lists are 80 of the rootfs's 200 MB and no
# test needs them.
rm -f "$rootfs"/var/cache/apt/archives/*.deb
rm -rf "$rootfs"/var/lib/apt/lists/*
tar -C "$rootfs" --numeric-owner -cf "$work/rootfs.tar" .
mv "$work/rootfs.tar" "$tar_path"
echo "$tar_path"
