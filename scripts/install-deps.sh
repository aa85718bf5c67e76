#!/usr/bin/env bash
# Installs the Debian packages Orchestrate builds and tests with. Idempotent:
# packages already present are skipped, so a second run costs one dpkg query.
#   --fuzz   also clang 19 and its libFuzzer runtime (clang 14 cannot compile
#            libstdc++ 12's std::expected, see tests/fuzz/CMakeLists.txt)
#   --test   also what the integration suites start or call for real: dockerd
#            (docker.io, runc), podman, debootstrap for the base image,
#            docker-registry and htpasswd (apache2-utils) for the registry
#            suite, curl (the readiness pings of start-dockerd.sh and
#            start-registry.sh; the build suite reads engine events with it),
#            bazel-bootstrap (Bazel 4.2.3, for the bazel suite), docker-compose
#            (the compose suite brings docker/compose.yaml up) and systemd
#            (systemd-analyze verify checks the units `schedule` prints),
#            slurmctld, slurmd, slurm-client and munge (the Slurm suite starts
#            its own controller and nodes) and python3-kubernetes (the Job
#            models `k8s render`'s manifests are checked against), chromium and
#            chromium-driver (the coverage report is read back in a real browser)
#            and cmark-gfm (its Markdown form, read back by GitHub's parser)
#   --bench  also what bench/ compares with: curl, openssl (its dgst), and
#            docker-registry for the fetch benchmarks
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libcurl4-openssl-dev libarchive-dev liblzma-dev zlib1g-dev libssl-dev nlohmann-json3-dev
  libyaml-cpp-dev libcli11-dev libsqlite3-dev libgtest-dev libgmock-dev
  python3 libzstd-dev liblz4-dev zstd time
)
for arg in "$@"; do
  case "$arg" in
    --fuzz) packages+=(clang-19 libclang-rt-19-dev) ;;
    --test) packages+=(docker.io runc podman debootstrap docker-registry apache2-utils curl bazel-bootstrap docker-compose systemd slurmctld slurmd slurm-client munge python3-kubernetes chromium chromium-driver cmark-gfm) ;;
    --bench) packages+=(curl openssl docker-registry apache2-utils) ;;
    *) echo "install-deps: unknown option '$arg' (known: --fuzz, --test, --bench)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: need root to install: ${missing[*]}" >&2
  exit 3
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq || { echo "install-deps: apt-get update failed" >&2; exit 3; }
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
  || { echo "install-deps: apt-get install failed" >&2; exit 3; }
echo "install-deps: done"
