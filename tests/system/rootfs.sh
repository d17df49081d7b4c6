#!/bin/bash
# Builds, once, the Debian 12 rootfs the system tests boot, in WORK/rootfs.
# Usage: rootfs.sh WORK
set -eu
work=$1
rootfs=$work/rootfs
# Rebuilt when the package list changes.
packages=systemd,systemd-sysv,dbus,procps,iproute2,kmod,udev,libpam-systemd,dbus-user-session,libinih1,libnl-3-200,libnl-route-3-200,libevdev2,polkitd
[ -x "$rootfs/lib/systemd/systemd" ] && [ "$(cat "$work/packages" 2>/dev/null)" = "$packages" ] && exit 0
rm -rf "$rootfs" "$work/vm"
mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
[ -n "$mirror" ] || mirror=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list)
mkdir -p "$work"
debootstrap --variant=minbase --include="$packages" bookworm "$rootfs" "$mirror" > "$work/debootstrap.log"
echo "$packages" > "$work/packages"
