#!/bin/bash
# Full-system test: Debian 12 booted with systemd as PID 1 under
# systemd-nspawn, standby installed into it with `make install`, the listener
# running as its service; standby entered and left with standby.target; a
# network daemon woken by a real client and a service woken by a D-Bus push
# while the rest stays frozen; nothing left frozen. Run as root from the source
# tree after `make`: `make check-system`. Needs debootstrap and
# systemd-container (scripts/install-deps.sh --system installs them).
set -eu
cd "$(dirname "$0")/../.."
work=${STANDBY_SYSTEM_TEST_DIR:-/var/tmp/standby-system-test}
rootfs=$work/rootfs
name=standby-ct
cgrel=standby-system-test.slice/$name
cg2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
pass=0 fail=0

say() { printf '%s\n' "$*"; }
check() { # check DESCRIPTION COMMAND...
        local what=$1; shift
        if "$@"; then pass=$((pass + 1)); say "ok   $what"; else fail=$((fail + 1)); say "FAIL $what"; fi
}

# The rootfs is built once and kept (40 s from the Debian archive).
tests/system/rootfs.sh "$work"

# Install the project as a distribution would, plus two services to freeze.
tests/system/install-standby.sh "$rootfs"
# The listener's debug log in the container's journal, for the failures below.
sed -i 's|^ExecStart=\(.*standby-listener\)$|ExecStart=\1 --verbose|' "$rootfs/lib/systemd/system/standby-listener.service"
printf '[Standby]\nTargets=user.slice workloads.slice\nFreezeTimeout=5s\n' > "$rootfs/etc/standby/standby.conf"
# A user with a lingering user manager, and a user service of its own.
chroot "$rootfs" sh -c 'id alice >/dev/null 2>&1 || useradd -m -u 1000 alice'
mkdir -p "$rootfs/var/lib/systemd/linger" "$rootfs/etc/systemd/user/default.target.wants"
touch "$rootfs/var/lib/systemd/linger/alice"
cat > "$rootfs/etc/systemd/user/sync.service" <<'UNIT'
[Unit]
Description=A user's periodic job (standby test)
[Service]
ExecStart=/usr/local/bin/standby-workload nanosleep --period-ms 100
[Install]
WantedBy=default.target
UNIT
ln -sf /etc/systemd/user/sync.service "$rootfs/etc/systemd/user/default.target.wants/sync.service"
cat > "$rootfs/etc/systemd/system/echo.service" <<'UNIT'
[Unit]
Description=An event-driven TCP server (standby test)
[Service]
Slice=workloads.slice
ExecStart=/usr/local/bin/standby-workload echo-server --port 7777
[Install]
WantedBy=multi-user.target
UNIT
cat > "$rootfs/etc/standby/rules.d/10-echo.rule" <<'RULE'
[Match]
Event=socket
Unit=echo.service
[Action]
Thaw=echo.service
For=30s
RULE
cat > "$rootfs/etc/standby/rules.d/20-mail.rule" <<'RULE'
[Match]
Event=push
Unit=mail.service
[Action]
Thaw=mail.service
RULE
chmod 0644 "$rootfs"/etc/standby/rules.d/*.rule
mkdir -p "$rootfs/etc/systemd/system/multi-user.target.wants"
for u in echo.service mail.service; do
        ln -sf "/etc/systemd/system/$u" "$rootfs/etc/systemd/system/multi-user.target.wants/$u"
done
ln -sf /lib/systemd/system/standby-listener.service "$rootfs/etc/systemd/system/multi-user.target.wants/standby-listener.service"

# Boot it (pure cgroup2 in a private mount namespace, as nspawn wants).
mkdir -p "$work"
unshare -m --propagation private sh -c '
        set -e
        mount -t cgroup2 cgroup2 /sys/fs/cgroup
        mount -t tmpfs -o mode=755 tmpfs /run/systemd
        mkdir -p /sys/fs/cgroup/'"$cgrel"'
        echo $$ > /sys/fs/cgroup/'"$cgrel"'/cgroup.procs
        export SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1
        exec systemd-nspawn -q -D "$0" -b -M '"$name"' --register=no --keep-unit --console=pipe \
                --system-call-filter=pidfd_getfd --capability=CAP_IPC_LOCK
' "$rootfs" </dev/null > "$work/console.log" 2>&1 &
nspawn=$!
leader() { ps -o pid= --ppid "$nspawn" | head -1 | tr -d ' '; }
in_ct() { nsenter -t "$(leader)" -a "$@"; }
cleanup() {
        in_ct systemctl poweroff 2>/dev/null || kill "$nspawn" 2>/dev/null
        for _ in $(seq 1 100); do kill -0 "$nspawn" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$nspawn" 2>/dev/null || true
        wait "$nspawn" 2>/dev/null || true
        find "$cg2/${cgrel%%/*}" -depth -type d -exec rmdir {} \; 2>/dev/null || true
}
trap cleanup EXIT
state=
for _ in $(seq 1 300); do
        if [ -n "$(leader)" ]; then
                state=$(in_ct systemctl is-system-running 2>/dev/null || true)
                [ "$state" = running ] || [ "$state" = degraded ] && break
        fi
        sleep 0.1
done
say "container: $state"

freezer() { in_ct systemctl show -p FreezerState --value "$1"; }
user_freezer() {
        in_ct runuser -u alice -- env XDG_RUNTIME_DIR=/run/user/1000 systemctl --user show -p FreezerState --value "$1"
}
for _ in $(seq 1 100); do [ "$(user_freezer sync.service 2>/dev/null)" = running ] && break; sleep 0.1; done
check "standby-listener.service is active" [ "$(in_ct systemctl is-active standby-listener.service)" = active ]
check "echo.service and mail.service run" [ "$(freezer echo.service) $(freezer mail.service)" = "running running" ]

check "systemctl start standby.target" in_ct systemctl start standby.target
check "echo.service frozen (systemd says so)" [ "$(freezer echo.service)" = frozen ]
check "mail.service frozen (systemd says so)" [ "$(freezer mail.service)" = frozen ]
check "alice's sync.service frozen (her user manager says so)" [ "$(user_freezer sync.service)" = frozen ]

# A real client: the listener holds the frozen server's socket and wakes it.
reply=$(in_ct bash -c 'exec 3<>/dev/tcp/127.0.0.1/7777; echo hello >&3; read -r -t 5 line <&3; echo "$line"' || true)
check "a client gets its answer from the frozen server" [ "$reply" = hello ]
check "echo.service thawed by the listener" [ "$(freezer echo.service)" = running ]
[ "$fail" -eq 0 ] || { in_ct journalctl -q -u standby-listener.service --no-pager | tail -n 6; in_ct systemctl show -p CapabilityBoundingSet -p SystemCallFilter standby-listener.service | cut -c1-300; in_ct sh -c "ls -l /proc/\$(systemctl show -p MainPID --value echo.service)/fd"; }
check "mail.service still frozen" [ "$(freezer mail.service)" = frozen ]
check "alice's sync.service still frozen" [ "$(user_freezer sync.service)" = frozen ]

# A D-Bus push wakes the other one.
out=$(in_ct busctl call org.standby.Listener1 /org/standby/Listener1 org.standby.Listener1 Push ss mail.service test 2>&1 || true)
check "Push answered true ($out)" [ "$out" = "b true" ]
check "mail.service thawed by the push" [ "$(freezer mail.service)" = running ]

check "systemctl stop standby.target" in_ct systemctl stop standby.target
check "nothing frozen afterwards" [ "$(freezer echo.service) $(freezer mail.service) $(user_freezer sync.service)" = "running running running" ]
check "standby-manager status: inactive" in_ct sh -c 'standby-manager status | grep -q "^Standby: inactive"'

# dbus-daemon dies (as in a crash): the listener exits rather than live on
# deaf to D-Bus, systemd starts it again (Restart=on-failure), and the new
# one is back on the bus (socket activation starts dbus-daemon anew).
listener_pid() { in_ct systemctl show -p MainPID --value standby-listener.service; }
old=$(listener_pid)
in_ct systemctl kill --signal=SIGKILL dbus.service
# No event says "back on the bus" to a shell: the state is polled, bounded
# to 15 s (the listener may go round more than once while dbus-daemon
# comes back by socket activation).
new=$old out=
answered() { [ "$out" = "b false" ] || [ "$out" = "b true" ]; }
for _ in $(seq 1 150); do
        new=$(listener_pid)
        out=$(in_ct busctl call --timeout=1 org.standby.Listener1 /org/standby/Listener1 org.standby.Listener1 Push ss \
                mail.service test 2>&1 || true)
        [ "$new" != "$old" ] && [ "$new" != 0 ] && answered && break
        sleep 0.1
done
restarted() { [ "$new" != "$old" ] && [ "$new" != 0 ]; }
check "the listener restarted after dbus-daemon died (MainPID $old -> $new, restarts: $(in_ct systemctl show -p NRestarts --value standby-listener.service))" restarted
check "it had exited with status 1, saying why" in_ct sh -c 'journalctl -b -u standby-listener.service |
        grep -q "Lost the connection to the bus" && journalctl -b -u standby-listener.service | grep -q "status=1/FAILURE"'
check "the new listener answers a push ($out)" answered

# The listener failing for good in standby: every start fails (a drop-in
# gives it a bad option) until systemd stops restarting it; then its
# OnFailure= leaves standby, and nothing stays frozen with nobody to thaw it.
check "systemctl start standby.target (again)" in_ct systemctl start standby.target
check "mail.service frozen again" [ "$(freezer mail.service)" = frozen ]
dropin=$rootfs/etc/systemd/system/standby-listener.service.d
mkdir -p "$dropin"
printf '[Service]\nExecStart=\nExecStart=/usr/sbin/standby-listener --no-such-option\n' > "$dropin/broken.conf"
in_ct systemctl daemon-reload
in_ct systemctl kill --signal=SIGKILL standby-listener.service
all_running() { [ "$(freezer echo.service) $(freezer mail.service) $(user_freezer sync.service)" = "running running running" ]; }
listener_failed() { [ "$(in_ct systemctl is-failed standby-listener.service)" = failed ]; }
for _ in $(seq 1 150); do listener_failed && all_running && break; sleep 0.1; done  # bounded: 15 s
check "the listener failed for good (restarts: $(in_ct systemctl show -p NRestarts --value standby-listener.service))" listener_failed
check "standby left through OnFailure=: nothing frozen" all_running
check "standby.target stopped too" [ "$(in_ct systemctl is-active standby.target)" = inactive ]
rm -rf "$dropin"
in_ct systemctl daemon-reload

say "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
