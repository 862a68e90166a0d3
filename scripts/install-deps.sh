#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian 12 packages that mtier's build, tests and demo need,
# and those that build its own Debian packages (scripts/check-deb.sh).
# Run as root (or with sudo). Safe to run again: apt-get skips what is there.
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: run as root (apt-get needs it)" >&2
  exit 1
fi
# prometheus: promtool and a server for tests/daemon/prometheus.test (which
# runs its own on localhost; where systemd runs, the package also starts its
# service on :9090: `systemctl disable --now prometheus` if unwanted).
# iproute2: `ip netns` for tests/daemon/multinode.test's two "nodes".
packages=(
  build-essential g++ make autoconf automake libtool autoconf-archive pkg-config
  googletest libgtest-dev
  liburing-dev libpmem2-dev libnuma-dev numactl libfuse3-dev fuse3 libmicrohttpd-dev
  libcairo2-dev fonts-dejavu-core
  nlohmann-json3-dev
  util-linux procps tmux iproute2
  prometheus
  libjemalloc2 libtcmalloc-minimal4
  python3 python3-numpy python3-torch
  python3-venv python3-setuptools python3-wheel
  debhelper dh-python dpkg-dev lintian
)
export DEBIAN_FRONTEND=noninteractive
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
