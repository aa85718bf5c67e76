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

# The downloaded .debs and the package lists are hundreds of MB that no
# build uses; apt in the image works again after `apt-get update`.
orc_cleanup() {
  apt-get clean
  rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/cache/debconf/*-old
  rm -f /var/log/apt/* /var/log/dpkg.log /var/log/alternatives.log
  rm -f /usr/sbin/policy-rc.d
}
