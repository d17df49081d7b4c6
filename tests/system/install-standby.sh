#!/bin/bash
# Installs standby into a system-test root as a distribution does: its Debian
# package, with dpkg in a chroot (the postinst enables the listener; it starts
# at boot). The .deb is STANDBY_DEB, or built here by scripts/build-deb.sh
# (lintian is CI's, in scripts/test.sh); it is left in the root as
# /var/cache/standby-test/standby.deb for the booted system's own dpkg. Also
# the workload program, and mail.service: a service in workloads.slice that
# the tests freeze and wake by push.
# Usage: install-standby.sh ROOT (from the source tree, after make).
set -eu
root=$1
deb=${STANDBY_DEB:-}
if [ -z "$deb" ]; then
        scripts/build-deb.sh --no-lintian >&2
        deb=$(ls build/deb/standby_*_"$(dpkg --print-architecture)".deb)
fi
mkdir -p "$root/var/cache/standby-test"
cp "$deb" "$root/var/cache/standby-test/standby.deb"
# An earlier run's standby.conf is the test's and is written again: kept
# without a question (dpkg asks about a conffile that differs).
# /proc mounted for the postinst's systemd-tmpfiles (its /run/standby is
# hidden by the booted system's /run).
unshare -m --propagation private sh -c 'mount -t proc proc "$0/proc" &&
        exec chroot "$0" dpkg --force-confdef --force-confold -i /var/cache/standby-test/standby.deb' "$root" > /dev/null
install -m 0755 build/standby-workload "$root/usr/local/bin/"
cat > "$root/etc/systemd/system/mail.service" <<'UNIT'
[Unit]
Description=A service woken by pushes (standby test)
[Service]
Slice=workloads.slice
ExecStart=/usr/local/bin/standby-workload nanosleep --period-ms 100
[Install]
WantedBy=multi-user.target
UNIT
