#!/bin/sh
# Installs, from Debian's archive, everything standby needs to build, test and
# benchmark. Debian 12, as root. Safe to run again. (systemd-container also
# upgrades the host's systemd packages to the same version: on a host whose
# PID 1 is not systemd, as here, that changes nothing that runs.)
set -eu
packages="build-essential pkg-config libsystemd-dev libnl-3-dev libnl-route-3-dev
libevdev-dev check libsubunit-dev scdoc gnuplot-nox dbus-daemon iproute2
redis-server memcached debootstrap systemd-container clang libclang-rt-14-dev
debhelper lintian python3"
# --vm: also what `make check-vm` needs (qemu; it runs this itself).
[ "${1:-}" = --vm ] && packages="$packages qemu-system-x86 qemu-utils e2fsprogs"
missing=""
for p in $packages; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
        echo "== installing:$missing"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        # shellcheck disable=SC2086
        apt-get install -y -qq --no-install-recommends $missing
fi
