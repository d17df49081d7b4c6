#!/bin/bash
# Installs standby into a system-test root as a distribution would (make
# install), the workload program, and mail.service: a service in
# workloads.slice that the tests freeze and wake by push.
# Usage: install-standby.sh ROOT (from the source tree, after make).
set -eu
root=$1
make -s install DESTDIR="$root" PREFIX=/usr SYSTEMDUNITDIR=/lib/systemd/system
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
