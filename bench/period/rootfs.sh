#!/bin/bash
# Builds, once, the Debian 12 system the standby-period bench boots, in
# WORK/rootfs: Debian's default services, redis-server, postgresql,
# memcached (stock configuration), PipeWire with WirePlumber, cron and
# timesyncd. The package scripts run in a chroot with every service start
# refused (policy-rc.d), so nothing of it runs on the host.
# Usage: rootfs.sh WORK
set -eu
work=$1
rootfs=$work/rootfs
# Rebuilt when either list changes.
base=systemd,systemd-sysv,dbus,dbus-user-session,libpam-systemd,procps,iproute2,kmod,udev,cron,systemd-timesyncd,libinih1,libnl-3-200,libnl-route-3-200,libevdev2
extra="redis-server redis-tools memcached postgresql pipewire pipewire-bin wireplumber"
want="$base $extra"
[ -x "$rootfs/lib/systemd/systemd" ] && [ "$(cat "$work/packages" 2>/dev/null)" = "$want" ] && exit 0
rm -rf "$rootfs"
mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
[ -n "$mirror" ] || mirror=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list)
mkdir -p "$work"
debootstrap --variant=minbase --include="$base" bookworm "$rootfs" "$mirror" > "$work/debootstrap.log"
printf '#!/bin/sh\nexit 101\n' > "$rootfs/usr/sbin/policy-rc.d"
chmod 0755 "$rootfs/usr/sbin/policy-rc.d"
# A mount namespace of its own, so that /proc and /dev in the chroot go
# away with it.
unshare -m --propagation private sh -c '
        set -e
        mount -t proc proc "$0/proc"
        mount --rbind /dev "$0/dev"
        chroot "$0" env DEBIAN_FRONTEND=noninteractive apt-get -q update
        chroot "$0" env DEBIAN_FRONTEND=noninteractive apt-get -q -y --no-install-recommends install '"$extra"'
        chroot "$0" apt-get clean
' "$rootfs" >> "$work/debootstrap.log" 2>&1
rm -f "$rootfs/usr/sbin/policy-rc.d"
echo "$want" > "$work/packages"
