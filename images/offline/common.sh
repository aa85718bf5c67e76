# Shared steps of every images/offline/*/setup.sh, sourced by them. A setup
# script runs inside the new root file system (`chroot ROOTFS /bin/sh
# /tmp/orchestrate-setup/setup.sh`, proc mounted, unmounted after even when
# it fails), with nothing of the caller's environment but:
#   ORC_MIRROR      the Debian mirror URL (read from the host at run time,
#                   never written into this repository)
#   ORC_SUITE       bookworm, trixie, ...
#   ORC_COMPONENTS  comma-separated: main or main,contrib,non-free
#   ORC_PACKAGES    the image's packages (the table in
#                   orchestrator/compat/image_catalog.cpp)
# The rootfs tar is cached under a key that hashes this file, the setup
# script, the suite, the components and the package list: edit any of them
# and the next `orchestrate images build` makes the rootfs again.
set -eu

: "${ORC_MIRROR:?ORC_MIRROR is not set}"
: "${ORC_SUITE:?ORC_SUITE is not set}"
: "${ORC_COMPONENTS:?ORC_COMPONENTS is not set}"
: "${ORC_PACKAGES:?ORC_PACKAGES is not set}"

# The apt sources inside the image: debootstrap wrote the suite's "main"
# only; non-free is where Debian keeps nvidia-cuda-toolkit (and contrib what
# it depends on). The one-line format reads the same in every suite.
orc_sources() {
  rm -f /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources
  printf 'deb %s %s %s\n' "$ORC_MIRROR" "$ORC_SUITE" "$(printf '%s' "$ORC_COMPONENTS" | tr ',' ' ')" \
    >/etc/apt/sources.list
}

# A package's maintainer script must not start a daemon in the chroot.
orc_no_daemons() {
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
  chmod 755 /usr/sbin/policy-rc.d
}

orc_install() {
  apt-get update -q
  apt-get install -y -q --no-install-recommends "$@"
}

# The toolkit's host compiler as the image's default C and C++ compiler:
# `orc_default_compiler 11` makes gcc, g++ and cpp GCC 11's, and cc and c++
# (Debian's alternatives, as the gcc and g++ packages register them) follow.
# nvcc without -ccbin runs `gcc`/`g++` from PATH, CMake without CC/CXX finds
# `cc`/`c++`, make's defaults are `cc`/`g++`: each then gets the GCC the
# toolkit takes. A distribution default that is installed all the same
# (a dependency pulled it in) is diverted to NAME.distrib, not overwritten.
orc_default_compiler() {
  for tool in gcc g++ cpp; do
    if [ ! -x "/usr/bin/$tool-$1" ]; then
      echo "setup: /usr/bin/$tool-$1 is missing (add its package to the image's list)" >&2
      exit 1
    fi
    if dpkg -S "/usr/bin/$tool" >/dev/null 2>&1; then
      dpkg-divert --quiet --local --rename --divert "/usr/bin/$tool.distrib" --add "/usr/bin/$tool"
    fi
    ln -sfn "$tool-$1" "/usr/bin/$tool"
  done
  update-alternatives --quiet --install /usr/bin/cc cc /usr/bin/gcc 20
  update-alternatives --quiet --install /usr/bin/c++ c++ /usr/bin/g++ 20
}

# Fails the setup when NAME does not run GCC MAJOR: `orc_check_compiler cc 11`.
orc_check_compiler() {
  if ! "$1" -dumpversion | grep -q "^$2\(\.\|\$\)"; then
    echo "setup: $1 is GCC $("$1" -dumpversion 2>&1), not $2" >&2
    exit 1
  fi
}

# The downloaded .debs and the package lists are hundreds of MB that no
# build uses; apt in the image works again after `apt-get update`.
orc_cleanup() {
  apt-get clean
  rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/cache/debconf/*-old
  rm -f /var/log/apt/* /var/log/dpkg.log /var/log/alternatives.log
  rm -f /usr/sbin/policy-rc.d
}
