#!/bin/bash
# Builds, once, the Debian 12 rootfs the system tests boot, in WORK/rootfs.
# Usage: rootfs.sh WORK
set -eu
work=$1
rootfs=$work/rootfs
[ -x "$rootfs/lib/systemd/systemd" ] && exit 0
mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
[ -n "$mirror" ] || mirror=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list)
mkdir -p "$work"
debootstrap --variant=minbase \
        --include=systemd,systemd-sysv,dbus,procps,iproute2,kmod,udev,libinih1,libnl-3-200,libnl-route-3-200,libevdev2 \
        bookworm "$rootfs" "$mirror" > "$work/debootstrap.log"
