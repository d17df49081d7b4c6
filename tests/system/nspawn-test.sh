#!/bin/bash
# Full-system test: Debian 12 booted with systemd as PID 1 under
# systemd-nspawn, standby installed into it as its Debian package, the
# listener running as its service; the package upgraded over itself in
# standby; standby entered and left with standby.target; a network daemon
# woken by a real client and a service woken by a D-Bus push while the rest
# stays frozen; nothing left frozen; the package removed in standby and
# purged with nothing left behind. Run as root from the source tree after
# `make`: `make check-system`. Needs debootstrap, systemd-container and
# debhelper (scripts/install-deps.sh installs them).
# STANDBY_SYSTEM_TEST_DIR: the work directory (the rootfs is cached there);
# STANDBY_SYSTEM_TEST_NAME: the machine's name, which also names the cgroup
# it runs in, so that two runs with their own of both do not meet;
# STANDBY_DEB: a .deb built already (else tests/system/install-standby.sh
# builds one).
set -eu
cd "$(dirname "$0")/../.."
work=${STANDBY_SYSTEM_TEST_DIR:-/var/tmp/standby-system-test}
rootfs=$work/rootfs
name=${STANDBY_SYSTEM_TEST_NAME:-standby-ct}
cgrel=standby-system-test${STANDBY_SYSTEM_TEST_NAME:+-$name}.slice/$name
cg2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
pass=0 fail=0

say() { printf '%s\n' "$*"; }
check() { # check DESCRIPTION COMMAND...
        local what=$1; shift
        if "$@"; then pass=$((pass + 1)); say "ok   $what"; else fail=$((fail + 1)); say "FAIL $what"; fi
}

# The rootfs is built once and kept (40 s from the Debian archive).
tests/system/rootfs.sh "$work"

# Install the project as a distribution would (its .deb, which enables the
# listener), plus two services to freeze.
tests/system/install-standby.sh "$rootfs"
# The listener's debug log in the container's journal, for the failures below
# (a drop-in: the package's unit file is dpkg's; named to come before the
# drop-in that breaks the listener below).
mkdir -p "$rootfs/etc/systemd/system/standby-listener.service.d"
printf '[Service]\nExecStart=\nExecStart=/usr/sbin/standby-listener --verbose\n' \
        > "$rootfs/etc/systemd/system/standby-listener.service.d/00-verbose.conf"
printf '[Standby]\nTargets=user.slice workloads.slice\nFreezeTimeout=5s\n' > "$rootfs/etc/standby/standby.conf"
# A user with a lingering user manager, and a user service of its own.
chroot "$rootfs" sh -c 'id alice >/dev/null 2>&1 || useradd -m -u 1000 alice'
# And one who attacks standby with what is hers (the "slow user manager" checks).
chroot "$rootfs" sh -c 'id mallory >/dev/null 2>&1 || useradd -m -u 1001 mallory'
mkdir -p "$rootfs/var/lib/systemd/linger" "$rootfs/etc/systemd/user/default.target.wants"
touch "$rootfs/var/lib/systemd/linger/alice" "$rootfs/var/lib/systemd/linger/mallory"
# alice's sync.service is hers alone (the push checks name it by unit).
chroot "$rootfs" sh -c 'mkdir -p ~mallory/.config/systemd/user &&
        ln -sf /dev/null ~mallory/.config/systemd/user/sync.service && chown -R mallory: ~mallory/.config'
cat > "$rootfs/etc/systemd/user/sync.service" <<'UNIT'
[Unit]
Description=A user's periodic job (standby test)
[Service]
ExecStart=/usr/local/bin/standby-workload nanosleep --period-ms 100
[Install]
WantedBy=default.target
UNIT
ln -sf /etc/systemd/user/sync.service "$rootfs/etc/systemd/user/default.target.wants/sync.service"
# A user timer (started by the "timer held" checks below): every 2 s a
# oneshot service appends a line to a file.
cat > "$rootfs/etc/systemd/user/mail-sync.timer" <<'UNIT'
[Unit]
Description=A user's timer (standby test)
[Timer]
OnActiveSec=0
OnUnitActiveSec=2s
AccuracySec=1ms
UNIT
cat > "$rootfs/etc/systemd/user/mail-sync.service" <<'UNIT'
[Unit]
Description=A user's timer job (standby test)
[Service]
Type=oneshot
ExecStart=/bin/sh -c 'date +%%s.%%N >> /tmp/mail-sync.log'
UNIT
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
cat > "$rootfs/etc/standby/rules.d/30-sync.rule" <<'RULE'
[Match]
Event=push
Unit=sync.service
[Action]
Thaw=sync.service
RULE
cat > "$rootfs/etc/standby/rules.d/40-wakeup.rule" <<'RULE'
[Match]
Event=push
Unit=wakeup.service
[Action]
ExitStandby=yes
RULE
chmod 0644 "$rootfs"/etc/standby/rules.d/*.rule
mkdir -p "$rootfs/etc/systemd/system/multi-user.target.wants"
for u in echo.service mail.service; do
        ln -sf "/etc/systemd/system/$u" "$rootfs/etc/systemd/system/multi-user.target.wants/$u"
done

# What is left frozen under the targets, in the kernel and in systemd's view
# (the system manager's and alice's), one line each; nothing when nothing is.
# Units that are inactive or failed are left out of systemd's view: systemd
# 252 keeps FreezerState=frozen for a unit stopped while frozen (standby
# warns when it thaws one); a unit with processes is not left out.
cat > "$rootfs/usr/local/bin/standby-left-frozen" <<'SH'
#!/bin/sh
for d in /sys/fs/cgroup/user.slice /sys/fs/cgroup/workloads.slice; do
        [ -d "$d" ] || continue
        find "$d" -name cgroup.freeze -exec grep -lx 1 {} + 2>/dev/null | sed 's|^|kernel: cgroup.freeze 1: |'
        find "$d" -name cgroup.events -exec grep -lx 'frozen 1' {} + 2>/dev/null | sed 's|^|kernel: frozen 1: |'
done
view() {
        { "$@" show -p Id -p ActiveState -p FreezerState '*' 2>/dev/null; echo; } | awk '
                /^Id=/ { id = substr($0, 4) } /^ActiveState=/ { st = substr($0, 13) }
                /^FreezerState=/ { fz = substr($0, 14) }
                /^$/ { if (fz != "" && fz != "running" && st != "inactive" && st != "failed")
                               print "systemd: " id " FreezerState=" fz " (" st ")"; id = st = fz = "" }'
}
view systemctl
view runuser -u alice -- env XDG_RUNTIME_DIR=/run/user/1000 systemctl --user
SH
chmod 0755 "$rootfs/usr/local/bin/standby-left-frozen"
# An app that is told before standby and after it (logind_checks), and the
# sleep itself replaced by a hook that records what was frozen when it ran.
install -m 0755 build/helpers/standby-app build/helpers/fake-user-manager build/helpers/standby-watch \
        "$rootfs/usr/local/bin/"
mkdir -p "$rootfs/etc/systemd/system/systemd-suspend.service.d"
cat > "$rootfs/etc/systemd/system/systemd-suspend.service.d/standby-test.conf" <<'UNIT'
[Service]
ExecStart=
ExecStart=/bin/sh -c 'grep -x "frozen [01]" /sys/fs/cgroup/workloads.slice/mail.service/cgroup.events > /run/slept.tmp; \
        cat /run/app/prepared >> /run/slept.tmp 2>/dev/null; mv /run/slept.tmp /run/slept'
UNIT

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
# The sleeps in this file are the steps of bounded polls for a state to
# come (systemd sends no event the script could wait on); none of them
# shows that something did not happen.
state=
for _ in $(seq 1 300); do
        if [ -n "$(leader)" ]; then
                state=$(in_ct systemctl is-system-running 2>/dev/null || true)
                [ "$state" = running ] || [ "$state" = degraded ] && break
        fi
        sleep 0.1
done
say "container: $state"

# How hardened each shipped unit is, by systemd's own measure (the full
# tables in $work/security-*.txt).
for u in standby-listener.service standby-enter.service standby-leave.service; do
        in_ct systemd-analyze security --no-pager "$u" > "$work/security-$u.txt" 2>&1 || true
        say "security: $(grep 'Overall exposure level' "$work/security-$u.txt" | sed 's/^→ //')"
done

freezer() { in_ct systemctl show -p FreezerState --value "$1"; }
# The listener's ThawUnit goes out without waiting: the kernel may run the
# unit (and it answer a client) before systemd records its state.
freezer_is() { # UNIT STATE, bounded: 10 s
        for _ in $(seq 1 100); do [ "$(freezer "$1")" = "$2" ] && return 0; sleep 0.1; done
        say "     $1: $(freezer "$1"), not $2"; return 1
}
# Stopping standby.target stops standby-enter.service (whose ExecStop is
# exit) in a job of its own once the target is down: naming both waits for
# the exit too.
leave() { in_ct systemctl stop standby.target standby-enter.service; }
user_freezer() {
        in_ct runuser -u alice -- env XDG_RUNTIME_DIR=/run/user/1000 systemctl --user show -p FreezerState --value "$1"
}
for _ in $(seq 1 100); do [ "$(user_freezer sync.service 2>/dev/null)" = running ] && break; sleep 0.1; done
check "standby-listener.service is active" [ "$(in_ct systemctl is-active standby-listener.service)" = active ]

# The package upgraded over itself (dpkg -i of the same .deb) while standby
# is entered: its prerm leaves standby before anything is replaced, the
# listener is restarted, and the administrator's standby.conf (a conffile)
# is kept.
deb=/var/cache/standby-test/standby.deb
sc="upgrade"
check "$sc: enter" in_ct systemctl start standby.target
check "$sc: mail.service, alice's sync.service frozen" \
        [ "$(freezer mail.service) $(user_freezer sync.service)" = "frozen frozen" ]
old=$(in_ct systemctl show -p MainPID --value standby-listener.service)
out=$(in_ct dpkg -i "$deb" 2>&1) && code=0 || code=$?
check "$sc: dpkg -i $deb over the installed package ($code)" [ "$code" = 0 ]
[ "$code" = 0 ] || say "$out" | tail -n 8 | sed 's/^/     /'
check "$sc: its prerm left standby first" grep -q "leaving standby before the package is upgraded" <<< "$out"
check "$sc: mail.service runs" freezer_is mail.service running
check "$sc: alice's sync.service runs" [ "$(user_freezer sync.service)" = running ]
check "$sc: standby.target stopped" [ "$(in_ct systemctl is-active standby.target)" = inactive ]
check "$sc: no journal left" in_ct test ! -e /run/standby/state
new=$(in_ct systemctl show -p MainPID --value standby-listener.service)
pid_changed() { [ "$new" != "$old" ] && [ "$new" != 0 ]; }
check "$sc: the listener restarted (MainPID $old -> $new)" pid_changed
check "$sc: and active" [ "$(in_ct systemctl is-active standby-listener.service)" = active ]
check "$sc: the administrator's standby.conf kept" in_ct grep -qx 'FreezeTimeout=5s' /etc/standby/standby.conf
# Installed on a running system, nothing has made /run/standby yet (tmpfiles.d
# runs at boot): the units make it themselves (RuntimeDirectory=).
in_ct systemctl stop standby-listener.service
in_ct rm -rf /run/standby
check "the listener starts with no /run/standby" in_ct systemctl start standby-listener.service
check "/run/standby made root's, 0700" [ "$(in_ct stat -c '%U %a' /run/standby)" = "root 700" ]
check "echo.service and mail.service run" [ "$(freezer echo.service) $(freezer mail.service)" = "running running" ]

check "systemctl start standby.target" in_ct systemctl start standby.target
check "echo.service frozen (systemd says so)" [ "$(freezer echo.service)" = frozen ]
check "mail.service frozen (systemd says so)" [ "$(freezer mail.service)" = frozen ]
check "alice's sync.service frozen (her user manager says so)" [ "$(user_freezer sync.service)" = frozen ]

# A real client: the listener holds the frozen server's socket and wakes it.
reply=$(in_ct bash -c 'exec 3<>/dev/tcp/127.0.0.1/7777; echo hello >&3; read -r -t 5 line <&3; echo "$line"' || true)
check "a client gets its answer from the frozen server" [ "$reply" = hello ]
check "echo.service thawed by the listener" freezer_is echo.service running
[ "$fail" -eq 0 ] || { in_ct journalctl -q -u standby-listener.service --no-pager | tail -n 6; in_ct systemctl show -p CapabilityBoundingSet -p SystemCallFilter standby-listener.service | cut -c1-300; in_ct sh -c "ls -l /proc/\$(systemctl show -p MainPID --value echo.service)/fd"; }
check "mail.service still frozen" [ "$(freezer mail.service)" = frozen ]
check "alice's sync.service still frozen" [ "$(user_freezer sync.service)" = frozen ]

# A D-Bus push wakes the other one.
out=$(in_ct busctl call org.standby.Listener1 /org/standby/Listener1 org.standby.Listener1 Push ss mail.service test 2>&1 || true)
check "Push answered true ($out)" [ "$out" = "b true" ]
check "mail.service thawed by the push" [ "$(freezer mail.service)" = running ]

check "systemctl stop standby.target" leave
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
check "standby-manager status agrees: inactive" in_ct sh -c 'standby-manager status | grep -q "^Standby: inactive"'
check "and no journal is left" in_ct test ! -e /run/standby/state
rm -f "$dropin/broken.conf"
in_ct systemctl daemon-reload

# systemd's freezer test suite (TEST-38) run against standby: what the
# admin or systemd does to a unit while standby holds it frozen. After each,
# nothing is left frozen in the kernel (cgroup.freeze, cgroup.events under
# the targets) nor in systemd's view (FreezerState), and while standby is
# entered, status counts what the kernel really has frozen.
left_frozen() { in_ct standby-left-frozen; }
nothing_left() { # [UNIT...]: units whose stale FreezerState is expected (see below)
        local out u
        out=$(left_frozen)
        for u in "$@"; do out=$(printf '%s\n' "$out" | grep -vF "systemd: $u FreezerState=frozen" || true); done
        [ -z "$out" ] && return 0
        say "$out" | sed 's/^/     /'
        in_ct journalctl -q -u standby-enter.service -u standby-listener.service -n 25 --no-pager | sed 's/^/     /'
        return 1
}
kernel_frozen() { in_ct sh -c 'find /sys/fs/cgroup/user.slice /sys/fs/cgroup/workloads.slice -name cgroup.freeze \
        -exec grep -lx 1 {} + 2>/dev/null | wc -l'; }
status_counts() {
        local s k
        s=$(in_ct standby-manager status | sed -n 's/^Units: \([0-9]*\) frozen.*/\1/p') k=$(kernel_frozen)
        [ "$s" = "$k" ] || { say "     status counts $s frozen, the kernel has $k"; return 1; }
}
unit_state() { in_ct systemctl show -p ActiveState --value "$1"; }
wait_state() { # UNIT STATE, bounded: 20 s
        for _ in $(seq 1 200); do [ "$(unit_state "$1")" = "$2" ] && return 0; sleep 0.1; done
        say "     $1: $(unit_state "$1"), not $2"; return 1
}
exit_ok() { # the last exit (standby-enter.service's ExecStop) succeeded
        [ "$(in_ct systemctl is-failed standby-enter.service)" != failed ] && return 0
        in_ct journalctl -q -u standby-enter.service --no-pager | tail -n 5 | sed 's/^/     /'
        in_ct systemctl reset-failed standby-enter.service; return 1
}
said_since() { # T TEXT: standby-enter.service logged TEXT since T
        in_ct journalctl -q -u standby-enter.service --since "@$1" --no-pager | grep -qF "$2"
}
scenario() { # NAME: standby entered, the admin's or systemd's action follows
        sc=$1
        check "$sc: enter" in_ct systemctl start standby.target
}
scenario_end() { # [UNIT...] as nothing_left
        check "$sc: status counts what the kernel has frozen" status_counts
        check "$sc: exit" leave
        check "$sc: exit succeeded" exit_ok
        check "$sc: nothing left frozen (kernel, systemd)" nothing_left "$@"
}
run_t38() { # UNIT ARGS...: a transient service in workloads.slice
        local u=$1; shift
        in_ct systemd-run -q --unit="$u" -p Slice=workloads.slice "$@"
}
feeder='socket(my $s, PF_UNIX, SOCK_DGRAM, 0) or die; my $a = $ENV{NOTIFY_SOCKET}; $a =~ s/^@/\0/;
        my $to = pack_sockaddr_un($a); while (1) { send($s, "WATCHDOG=1", 0, $to); select(undef, undef, undef, 0.1); }'

# The listener thaws a user's unit through her manager's private socket in
# /run/user/1000 (which ProtectHome=yes would hide from it).
scenario "a user unit woken"
out=$(in_ct busctl call org.standby.Listener1 /org/standby/Listener1 org.standby.Listener1 Push ss sync.service test 2>&1 || true)
check "$sc: Push answered true ($out)" [ "$out" = "b true" ]
check "$sc: alice's sync.service thawed through her manager" [ "$(user_freezer sync.service)" = running ]
scenario_end

scenario "admin thaw"
in_ct systemctl thaw mail.service
check "$sc: mail.service runs (systemd)" [ "$(freezer mail.service)" = running ]
scenario_end

scenario "freeze twice"
in_ct systemctl freeze mail.service || true
in_ct standby-manager --quiet freeze mail.service || true
check "$sc: mail.service frozen once more (systemd)" [ "$(freezer mail.service)" = frozen ]
scenario_end

scenario "stop"
check "$sc: systemctl stop mail.service" in_ct systemctl stop mail.service
scenario_end
in_ct systemctl start mail.service

# Restarted in standby: the new instance's cgroup is held like any new work
# (the kernel freezes it; systemd, which resets FreezerState on the restart,
# mostly calls it running). systemd 252 at times keeps calling it frozen
# after exit thawed it through cgroup.freeze (a FreezeUnit of enter's still
# settling when the restart came): tolerated in systemd's view only.
scenario "restart"
check "$sc: systemctl restart mail.service" in_ct systemctl restart mail.service
mail_held() { # bounded: 10 s
        for _ in $(seq 1 100); do
                in_ct grep -qx 'frozen 1' /sys/fs/cgroup/workloads.slice/mail.service/cgroup.events && return 0
                sleep 0.1
        done; return 1; }
check "$sc: the new mail.service held (the kernel froze it)" mail_held
scenario_end mail.service
check "$sc: mail.service runs after exit (kernel)" \
        [ "$(in_ct grep -x 'frozen [01]' /sys/fs/cgroup/workloads.slice/mail.service/cgroup.events)" = "frozen 0" ]
# A restart out of standby gives the next scenarios systemd's own view back.
in_ct systemctl restart mail.service

scenario "daemon-reload and daemon-reexec"
# The listener thaws one unit through systemd, so that it holds a connection
# to the manager; that connection goes with the old manager.
out=$(in_ct busctl call org.standby.Listener1 /org/standby/Listener1 org.standby.Listener1 Push ss mail.service test 2>&1 || true)
check "$sc: mail.service thawed by a push ($out)" [ "$(freezer mail.service)" = running ]
in_ct systemctl daemon-reload
in_ct systemctl daemon-reexec
check "$sc: echo.service still frozen (systemd)" [ "$(freezer echo.service)" = frozen ]
reply=$(in_ct bash -c 'exec 3<>/dev/tcp/127.0.0.1/7777; echo hello >&3; read -r -t 5 line <&3; echo "$line"' || true)
check "$sc: a client wakes the frozen server ($reply)" [ "$reply" = hello ]
check "$sc: echo.service thawed through systemd" freezer_is echo.service running
[ "$(freezer echo.service)" = running ] || in_ct journalctl -q -u standby-listener.service -n 4 --no-pager | sed 's/^/     /'
scenario_end

# Stopped by systemd while frozen: the watchdog fires (fed until the freeze),
# RuntimeMaxSec= elapses, the main process is killed. Their processes cannot
# see the stop (SIGTERM ignored, SIGABRT pending): the units stay
# "deactivating" with frozen cgroups, which exit must thaw all the same.
# systemd 252 refuses to thaw them (UnitInactive) and keeps calling them
# frozen once exit thawed them through cgroup.freeze: exit says so.
run_t38 t38-wd.service -p WatchdogSec=1 -p NotifyAccess=main -p TimeoutAbortSec=120 perl -MSocket -e "$feeder"
run_t38 t38-rt.service -p RuntimeMaxSec=3 -p TimeoutStopSec=120 \
        /bin/sh -c 'trap "" TERM; exec standby-workload nanosleep'
run_t38 t38-kill.service -p TimeoutStopSec=120 /bin/sh -c 'trap "" TERM; standby-workload nanosleep & wait'
scenario "watchdog, runtime limit, kill"
t0=$(in_ct date +%s)
in_ct systemctl kill --signal=SIGKILL --kill-who=main t38-kill.service
for u in t38-wd.service t38-rt.service t38-kill.service; do
        check "$sc: $u stopping, frozen" wait_state "$u" deactivating
done
scenario_end t38-wd.service t38-rt.service t38-kill.service
for u in t38-wd.service t38-rt.service t38-kill.service; do
        check "$sc: exit said it thawed $u" said_since "$t0" "systemd says $u is not active, but its cgroup is frozen"
done
check "$sc: exit said systemd still calls t38-rt.service frozen" \
        said_since "$t0" "systemd still reports FreezerState=frozen for t38-rt.service"
in_ct systemctl kill --signal=SIGKILL t38-wd.service t38-rt.service t38-kill.service 2>/dev/null || true
for u in t38-wd.service t38-rt.service t38-kill.service; do
        for _ in $(seq 1 100); do s=$(unit_state "$u"); [ "$s" = inactive ] || [ "$s" = failed ] && break; sleep 0.1; done
done
in_ct systemctl reset-failed 2>/dev/null || true

# New work is held: frozen by the listener through
# cgroup.freeze, which systemd does not see (its FreezerState says running).
scenario "a new unit in a target slice"
run_t38 t38-new.service standby-workload nanosleep
new_held() { # bounded: 10 s
        for _ in $(seq 1 100); do
                in_ct grep -qx 'frozen 1' /sys/fs/cgroup/workloads.slice/t38-new.service/cgroup.events && return 0
                sleep 0.1
        done; return 1; }
check "$sc: t38-new.service held (the kernel froze it)" new_held
check "$sc: systemd calls it running" [ "$(freezer t38-new.service)" = running ]
scenario_end
check "$sc: t38-new.service runs after exit" [ "$(in_ct grep -x 'frozen [01]' /sys/fs/cgroup/workloads.slice/t38-new.service/cgroup.events)" = "frozen 0" ]
in_ct systemctl stop t38-new.service

scenario "the whole slice stopped"
check "$sc: systemctl stop workloads.slice" in_ct systemctl stop workloads.slice
scenario_end
in_ct systemctl start echo.service mail.service

# The slack strategy left by the listener (an ExitStandby= rule): its exit
# restores other processes' timer slack (CAP_SYS_NICE) and restarts their
# nanosleep (ptrace), in standby-leave.service.
sc="slack left by the listener"
mailpid=$(in_ct systemctl show -p MainPID --value mail.service)
slack() { in_ct cat "/proc/$mailpid/timerslack_ns"; }
before=$(slack)
check "$sc: enter --strategy=slack" in_ct standby-manager --quiet enter --strategy=slack
check "$sc: mail.service's slack is standby's ($(slack))" [ "$(slack)" != "$before" ]
t0=$(in_ct date +%s)
out=$(in_ct busctl call org.standby.Listener1 /org/standby/Listener1 org.standby.Listener1 Push ss wakeup.service test 2>&1 || true)
check "$sc: Push answered true ($out)" [ "$out" = "b true" ]
left() { in_ct standby-manager status | grep -q '^Standby: inactive'; }
for _ in $(seq 1 100); do left && break; sleep 0.1; done # bounded: 10 s
check "$sc: standby left" left
check "$sc: mail.service's slack restored ($(slack), was $before)" [ "$(slack)" = "$before" ]
refused() { in_ct journalctl -q -u standby-listener.service --since "@$t0" --no-pager |
        grep -e 'Cannot re-arm' -e 'Operation not permitted'; }
check "$sc: no thread left unrestored or un-rearmed" [ -z "$(refused)" ]
refused | sed 's/^/     /'
left || in_ct standby-manager --quiet exit || true

# kill -9 part-way through enter (after the journal and two freezes), then exit.
sc="kill -9 mid-enter"
code=0
(in_ct env STANDBY_TEST_CRASH_AFTER=3 standby-manager --quiet enter) 2>/dev/null || code=$?
check "$sc: enter killed ($code)" [ "$code" = 137 ]
check "$sc: exit" in_ct standby-manager --quiet exit
check "$sc: nothing left frozen (kernel, systemd)" nothing_left

# Standby on a real user session, and standby.target, status
# and the journal agreeing whichever way standby is entered or left.
session_checks() {
        local sc out pid tids t a b
        agree() { # active|inactive [TRIES]: the target, status and the journal say so, bounded: 20 s
                local want=$1 st stat jr
                for _ in $(seq 1 "${2:-200}"); do
                        st=$(in_ct systemctl is-active standby.target || true)
                        stat=$(in_ct standby-manager status | sed -n 's/^Standby: \([a-z]*\).*/\1/p')
                        jr=inactive; in_ct test -e /run/standby/state && jr=active
                        [ "$st $stat $jr" = "$want $want $want" ] && return 0
                        sleep 0.1
                done
                say "     standby.target $st, status $stat, journal $jr; not all $want"
                return 1
        }
        # An ExitStandby= rule (40-wakeup.rule), fired by a push (no input device here).
        exit_push() { in_ct busctl call org.standby.Listener1 /org/standby/Listener1 org.standby.Listener1 Push ss \
                wakeup.service test 2>&1 || true; }

        # 4. A login shell (a logind session, as PAMName=login makes one) asks
        # for standby: its systemctl returns and the shell keeps running.
        sc="session"
        in_ct rm -f /run/login-shell.rc /run/login-shell.tick
        in_ct touch /run/login-shell.run
        in_ct systemd-run -q --unit=login-shell.service -p PAMName=login -p User=root /bin/bash -c '
                cat /proc/self/cgroup > /run/login-shell.cg
                systemctl start standby.target; echo $? > /run/login-shell.rc
                i=0; while [ -e /run/login-shell.run ]; do i=$((i + 1)); echo $i > /run/login-shell.tick; sleep 0.1; done'
        returned() { in_ct test -s /run/login-shell.rc; }
        for _ in $(seq 1 300); do returned && break; sleep 0.1; done # bounded: 30 s
        check "$sc: the shell runs in a session scope ($(in_ct sed -n 's/^0:://p' /run/login-shell.cg 2>/dev/null))" \
                in_ct grep -q '^0::/.*/session-[0-9a-z]*\.scope$' /run/login-shell.cg
        check "$sc: its systemctl start standby.target returned" returned
        check "$sc: with status 0" [ "$(in_ct cat /run/login-shell.rc 2>/dev/null)" = 0 ]
        ticking() { # the shell's counter moves on, bounded: 5 s
                local t0 t1; t0=$(in_ct cat /run/login-shell.tick 2>/dev/null)
                for _ in $(seq 1 50); do t1=$(in_ct cat /run/login-shell.tick 2>/dev/null)
                        [ -n "$t1" ] && [ "$t1" != "$t0" ] && return 0; sleep 0.1; done; return 1; }
        check "$sc: the shell keeps running in standby" ticking
        check "$sc: mail.service frozen all the same" [ "$(freezer mail.service)" = frozen ]
        check "$sc: alice's sync.service frozen all the same" [ "$(user_freezer sync.service)" = frozen ]
        check "$sc: target, status, journal: active" agree active
        # 5. Left by an ExitStandby= rule: through systemd, the target stops.
        out=$(exit_push)
        check "$sc: the exit rule's push answered true ($out)" [ "$out" = "b true" ]
        check "$sc: after the rule, target, status, journal: inactive" agree inactive
        check "$sc: nothing left frozen" nothing_left
        check "$sc: the next start enters again" in_ct systemctl start standby.target
        check "$sc: mail.service frozen again" [ "$(freezer mail.service)" = frozen ]
        check "$sc: exit" leave
        in_ct rm -f /run/login-shell.run
        for _ in $(seq 1 100); do [ "$(unit_state login-shell.service)" = inactive ] && break; sleep 0.1; done

        # 5. The rule's exit with standby-leave.service refused (masked): the
        # listener's own exit, and the target follows all the same.
        sc="leave refused"
        in_ct systemctl mask -q --runtime standby-leave.service
        check "$sc: enter" in_ct systemctl start standby.target
        out=$(exit_push)
        check "$sc: the exit rule's push answered true ($out)" [ "$out" = "b true" ]
        check "$sc: target, status, journal: inactive" agree inactive
        check "$sc: nothing left frozen" nothing_left
        check "$sc: the listener said it ended standby itself" in_ct sh -c \
                'journalctl -q -b -u standby-listener.service | grep -q "did not start standby-leave.service"'
        in_ct systemctl unmask -q --runtime standby-leave.service

        # 5. An exit that fails does not strand the target: a target frozen
        # from above it, by a cgroup of no unit (systemd 252's ThawUnit
        # thaws a unit's frozen slices, so a slice would not do), is not
        # standby's to thaw: standby-leave.service's exit (as an
        # ExitStandby= rule or the listener's OnFailure= starts it) fails,
        # the target stops all the same, and the next start enters again.
        sc="exit fails"
        stuck=/sys/fs/cgroup/workloads.slice/stuck-root
        in_ct mkdir -p "$stuck/stuck"
        printf '[Standby]\nTargets=user.slice workloads.slice/stuck-root/stuck\nFreezeTimeout=1s\n' \
                > "$rootfs/etc/standby/standby.conf"
        in_ct systemctl reload standby-listener.service
        check "$sc: enter" in_ct systemctl start standby.target
        check "$sc: alice's sync.service frozen" [ "$(user_freezer sync.service)" = frozen ]
        in_ct sh -c "echo 1 > $stuck/cgroup.freeze"
        check "$sc: the target frozen from above it" in_ct grep -qx 'frozen 1' "$stuck/stuck/cgroup.events"
        code=0
        in_ct systemctl start standby-leave.service 2>/dev/null || code=$?
        check "$sc: standby-leave.service failed ($code: $(in_ct systemctl is-failed standby-leave.service))" \
                [ "$(in_ct systemctl is-failed standby-leave.service)" = failed ]
        check "$sc: its exit said why" in_ct sh -c 'journalctl -q -b -u standby-leave.service |
                grep -q "frozen by a cgroup above it, outside standby"'
        target_down() { [ "$(in_ct systemctl is-active standby.target || true)" = inactive ] &&
                [ "$(in_ct systemctl is-active standby-enter.service || true)" != deactivating ]; }
        for _ in $(seq 1 400); do target_down && break; sleep 0.1; done # bounded: 40 s
        check "$sc: standby.target stopped all the same" target_down
        target_down || in_ct journalctl -q -u standby-leave.service -u standby-enter.service -n 12 --no-pager |
                sed 's/^/     /'
        check "$sc: alice's sync.service thawed all the same" [ "$(user_freezer sync.service)" = running ]
        in_ct sh -c "echo 0 > $stuck/cgroup.freeze"
        check "$sc: the next start enters again" in_ct systemctl start standby.target
        check "$sc: standby-enter.service active" [ "$(in_ct systemctl is-active standby-enter.service)" = active ]
        check "$sc: alice's sync.service frozen again" [ "$(user_freezer sync.service)" = frozen ]
        check "$sc: exit" leave
        check "$sc: exit succeeded" exit_ok
        check "$sc: target, status, journal: inactive" agree inactive
        check "$sc: nothing left frozen" nothing_left
        in_ct rmdir "$stuck/stuck" "$stuck"
        in_ct systemctl reset-failed standby-leave.service standby-enter.service 2>/dev/null || true
        printf '[Standby]\nTargets=user.slice workloads.slice\nFreezeTimeout=5s\n' > "$rootfs/etc/standby/standby.conf"
        in_ct systemctl reload standby-listener.service

        # 1. A user's own server on their private socket (/run/user/UID/
        # systemd/private is theirs), slow on purpose: it answers
        # ControlGroup truthfully, so enter records mallory's units as her
        # manager's, freezes them itself, and answers each ThawUnit after
        # 4.9 s, inside the 5 s a call may take. Leaving standby takes one
        # bound for all of them, not 4.9 s per unit of hers, and thaws every
        # unit: the system's, alice's and hers.
        sc="slow user manager"
        mallory() { in_ct runuser -u mallory -- env XDG_RUNTIME_DIR=/run/user/1001 "$@"; }
        slow_cgroups=
        for i in $(seq 0 14); do
                mallory systemd-run --user -q --unit="slow-$i.service" \
                        /usr/local/bin/standby-workload nanosleep --period-ms 1000
                cg=$(mallory systemctl --user show -p ControlGroup --value "slow-$i.service")
                slow_cgroups="$slow_cgroups ${cg#/}"
        done
        # Outside the targets (system.slice), as mallory: her process, her socket.
        in_ct systemd-run -q --unit=mallory-private.service -p User=mallory -p Slice=system.slice \
                /usr/local/bin/fake-user-manager --thaw-delay-ms 4900 --socket /run/user/1001/systemd/private \
                $slow_cgroups
        serving() { in_ct journalctl -q -b -u mallory-private.service -o cat | grep -qx ready; }
        for _ in $(seq 1 100); do serving && break; sleep 0.1; done # bounded: 10 s
        check "$sc: her server on /run/user/1001/systemd/private" serving
        each_freeze() { # 0|1: cgroup.freeze of each of her units
                local c; for c in $slow_cgroups; do in_ct grep -qx "$1" "/sys/fs/cgroup/$c/cgroup.freeze" || return 1; done
        }
        check "$sc: enter" in_ct systemctl start standby.target
        check "$sc: her 15 units frozen (by her server, as FreezeUnit asked)" each_freeze 1
        check "$sc: recorded as her manager's" in_ct sh -c 'standby-manager status --json |
                grep -q "slow-14.service\",\"state\":\"frozen\",\"kernel_frozen\":true,\"backend\":\"systemd\""'
        t0=$(date +%s%N)
        check "$sc: systemctl stop standby.target" leave
        took=$((($(date +%s%N) - t0) / 1000000))
        check "$sc: it took $took ms (under 15 s: one bound, not 15 x 4.9 s)" [ "$took" -lt 15000 ]
        check "$sc: exit succeeded" exit_ok
        check "$sc: her units thawed" each_freeze 0
        check "$sc: mail.service and alice's sync.service run" \
                [ "$(freezer mail.service) $(user_freezer sync.service)" = "running running" ]
        check "$sc: target, status, journal: inactive" agree inactive
        check "$sc: nothing left frozen" nothing_left
        in_ct systemctl stop mallory-private.service
        in_ct systemctl restart user@1001.service # her manager's own socket back

        # 5. Entered and left with standby-manager by hand: the target follows.
        sc="by hand"
        check "$sc: standby-manager enter" in_ct standby-manager --quiet enter
        check "$sc: target, status, journal: active once it returned" agree active 1
        check "$sc: systemctl start standby.target agrees (no status 6)" in_ct systemctl start standby.target
        check "$sc: standby-manager exit" in_ct standby-manager --quiet exit
        check "$sc: target, status, journal: inactive once it returned" agree inactive 1
        check "$sc: nothing left frozen" nothing_left
        check "$sc: systemctl start standby.target enters again" in_ct systemctl start standby.target
        check "$sc: standby-manager exit (entered by the target)" in_ct standby-manager --quiet exit
        check "$sc: target, status, journal: inactive again, once it returned" agree inactive 1
        check "$sc: exit succeeded" exit_ok

        # 6. The slack strategy through the installed units, left by the rule:
        # every thread's slack back, a nanosleep loop back on schedule.
        sc="slack"
        check "$sc: standby inactive before" agree inactive
        printf '[Standby]\nTargets=user.slice workloads.slice\nStrategy=slack\n' > "$rootfs/etc/standby/standby.conf"
        in_ct systemctl reload standby-listener.service
        in_ct systemd-run -q --unit=slacky.service -p Slice=workloads.slice \
                /usr/local/bin/standby-workload nanosleep --period-ms 100 --threads 3
        for _ in $(seq 1 50); do [ "$(unit_state slacky.service)" = active ] && break; sleep 0.1; done
        pid=$(in_ct systemctl show -p MainPID --value slacky.service)
        tids=$(in_ct ls "/proc/$pid/task")
        slacks() { for t in $tids; do in_ct cat "/proc/$t/timerslack_ns"; done | tr '\n' ' '; }
        a=$(slacks)
        check "$sc: enter" in_ct systemctl start standby.target
        b=$(slacks)
        each_differs() { # every thread's value in b differs from its own in a
                local -a x=($a) y=($b); local i
                [ "${#x[@]}" -eq "${#y[@]}" ] && [ "${#x[@]}" -gt 0 ] || return 1
                for i in "${!x[@]}"; do [ "${x[$i]}" != "${y[$i]}" ] || return 1; done
        }
        check "$sc: every thread of slacky.service slacked ($a-> $b)" each_differs
        out=$(exit_push)
        check "$sc: the exit rule's push answered true ($out)" [ "$out" = "b true" ]
        check "$sc: target, status, journal: inactive" agree inactive
        b=$(slacks)
        check "$sc: every thread's timerslack_ns back ($b)" [ -n "$a" -a "$a" = "$b" ]
        switches() { in_ct awk '/^voluntary_ctxt_switches/ { print $2 }' "/proc/$pid/task/$pid/status"; }
        on_schedule() { # 10 periods of 100 ms, bounded: 3 s
                local s0 s1; s0=$(switches)
                for _ in $(seq 1 30); do s1=$(switches); [ $((s1 - s0)) -ge 10 ] && return 0; sleep 0.1; done
                say "     $((s1 - s0)) wake-ups in 3 s"; return 1; }
        check "$sc: the nanosleep loop back on schedule" on_schedule
        check "$sc: exit ran in standby-leave.service" in_ct sh -c \
                'journalctl -q -b -u standby-leave.service | grep -q "Timer slack restored"'
        in_ct systemctl stop slacky.service
        printf '[Standby]\nTargets=user.slice workloads.slice\nFreezeTimeout=5s\n' > "$rootfs/etc/standby/standby.conf"
        in_ct systemctl reload standby-listener.service
}
session_checks

# A thaw window is the listener's, asked for by thaw --for
# from a service that ends at once, and closed through systemd (system and
# user units); PushEx says what a push thawed.
window_checks() {
        local sc out code
        sc="thaw --for from a service"
        # Alice's by its cgroup path: root's user manager (started for the
        # login shell above) has a sync.service too, until logind stops it
        # (UserStopDelaySec=, 10 s after the shell's session ended). Stopped
        # here, so that it does not end between the enter and the push below.
        local alice=user.slice/user-1000.slice/user@1000.service/app.slice/sync.service
        in_ct systemctl stop user@0.service
        check "$sc: root's user manager stopped" [ "$(unit_state user@0.service)" = inactive ]
        check "$sc: enter" in_ct systemctl start standby.target
        check "$sc: mail.service, alice's sync.service frozen" \
                [ "$(freezer mail.service) $(user_freezer sync.service)" = "frozen frozen" ]
        out=$(in_ct systemd-run -q --wait --pipe standby-manager thaw mail.service "$alice" --for 3s 2>&1) && code=0 || code=$?
        check "$sc: systemd-run --wait standby-manager thaw mail.service $alice --for 3s ($code)" [ "$code" = 0 ]
        [ "$code" = 0 ] || say "$out" | sed 's/^/     /'
        check "$sc: both running, their service gone" \
                [ "$(freezer mail.service) $(user_freezer sync.service)" = "running running" ]
        refrozen() { [ "$(freezer mail.service) $(user_freezer sync.service)" = "frozen frozen" ]; }
        for _ in $(seq 1 150); do refrozen && break; sleep 0.1; done # bounded: 15 s
        check "$sc: both frozen again after the window, through their managers (FreezerState)" refrozen

        sc="PushEx for a user unit"
        out=$(in_ct busctl call org.standby.Listener1 /org/standby/Listener1 org.standby.Listener1 PushEx ss \
                sync.service test 2>&1 || true)
        pushed() { [ "$out" = "asa(ss) 1 \"$alice\" 0" ]; }
        check "$sc: it names alice's sync.service thawed, nothing failed ($out)" pushed
        check "$sc: alice's sync.service running (her manager says so)" [ "$(user_freezer sync.service)" = running ]
        check "$sc: no thaw failed" in_ct sh -c \
                'busctl call org.standby.Listener1 /org/standby/Listener1 org.standby.Listener1 GetStatistics |
                 grep -q "\"thaw_failures\" 0"'
        check "$sc: exit" leave
        check "$sc: nothing left frozen" nothing_left
}
window_checks
# Work started during standby is held. alice's user timer
# starts mail-sync.service every 2 s; in standby each new start's cgroup is
# frozen the moment systemd makes it, so the service never reaches its
# exec, its file stops growing, and its timer (the oneshot still
# activating) starts no other; its start job is cancelled (nothing
# reports it running); after exit it runs again.
hold_checks() {
        local sc=timer\ held n0 n1 n2 cg
        as_alice() { in_ct runuser -u alice -- env XDG_RUNTIME_DIR=/run/user/1000 "$@"; }
        lines() { in_ct sh -c 'cat /tmp/mail-sync.log 2>/dev/null | wc -l'; }
        grows_past() { # N: the file gets more than N lines, bounded: 10 s
                for _ in $(seq 1 100); do [ "$(lines)" -gt "$1" ] && return 0; sleep 0.1; done; return 1; }
        in_ct rm -f /tmp/mail-sync.log
        as_alice systemctl --user start mail-sync.timer
        check "$sc: alice's timer runs its service" grows_past 1
        check "$sc: enter" in_ct systemctl start standby.target
        n0=$(lines)
        cg=/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/mail-sync.service
        held_now() { # its cgroup made, with its process in it, frozen: bounded 10 s
                for _ in $(seq 1 100); do
                        in_ct sh -c "grep -qx 'populated 1' $cg/cgroup.events && grep -qx 'frozen 1' $cg/cgroup.events" &&
                                return 0
                        sleep 0.1
                done; return 1; }
        check "$sc: the next start of mail-sync.service is held, its process frozen" held_now
        n1=$(lines)
        check "$sc: it wrote no line once held ($n0 at enter, $n1 now)" [ "$n1" -le $((n0 + 1)) ]
        check "$sc: the journal lists it" in_ct sh -c "standby-manager status | grep -q 'mail-sync.service'"
        held_count() { in_ct busctl call org.standby.Listener1 /org/standby/Listener1 org.standby.Listener1 \
                GetStatistics | grep -o '"held" [0-9]*' | cut -d' ' -f2; }
        check "$sc: the listener counts it held ($(held_count))" [ "$(held_count)" -ge 1 ]
        check "$sc: systemd still starting it (the timer waits)" \
                [ "$(as_alice systemctl --user show -p ActiveState --value mail-sync.service)" = activating ]
        released() { # its timer's start job cancelled by the listener, bounded: 10 s
                for _ in $(seq 1 100); do
                        in_ct busctl call org.standby.Listener1 /org/standby/Listener1 org.standby.Listener1 \
                                GetStatistics | grep -q '"jobs_released" [1-9]' &&
                                [ -z "$(as_alice systemctl --user show -p Job --value mail-sync.service)" ] && return 0
                        sleep 0.1
                done; return 1; }
        check "$sc: its timer's job is released, the unit still held" released
        check "$sc: its timer waits for it (running)" \
                [ "$(as_alice systemctl --user show -p SubState --value mail-sync.timer)" = running ]
        check "$sc: nothing reports a running job" [ -z "$(as_alice systemctl --user list-jobs --no-legend)" ]
        n2=$(lines)
        check "$sc: still no line ($n2)" [ "$n2" = "$n1" ]
        check "$sc: status counts what the kernel has frozen" status_counts
        check "$sc: exit" leave
        check "$sc: exit succeeded" exit_ok
        check "$sc: after exit it runs, and its timer runs it again" grows_past "$((n2 + 1))"
        as_alice systemctl --user stop mail-sync.timer
        check "$sc: nothing left frozen (kernel, systemd)" nothing_left
}
hold_checks
# The same for a socket-activated service: a client connects during
# standby, systemd starts an instance of the service for it in a target
# slice, and the instance is frozen before it does its work (it reads the
# line, waits half a second, writes it down); after exit it does.
socket_hold_checks() {
        local sc=socket\ held
        cat > "$rootfs/etc/systemd/system/held-echo.socket" <<'UNIT'
[Socket]
ListenStream=127.0.0.1:7788
Accept=yes
UNIT
        cat > "$rootfs/etc/systemd/system/held-echo@.service" <<'UNIT'
[Service]
Slice=workloads.slice
StandardInput=socket
ExecStart=/bin/sh -c 'read line; sleep 0.5; echo "$line" >> /tmp/held-echo.log'
UNIT
        in_ct sh -c 'rm -f /tmp/held-echo.log; systemctl daemon-reload; systemctl start held-echo.socket'
        check "$sc: enter" in_ct systemctl start standby.target
        check "$sc: a client connects and sends a line" in_ct bash -c 'echo hello > /dev/tcp/127.0.0.1/7788'
        instance_held() { # an instance's cgroup, with its process, frozen: bounded 10 s
                for _ in $(seq 1 100); do
                        in_ct sh -c 'for e in /sys/fs/cgroup/workloads.slice/held-echo@*.service/cgroup.events; do
                                grep -qx "populated 1" "$e" && grep -qx "frozen 1" "$e" && exit 0; done; exit 1' &&
                                return 0
                        sleep 0.1
                done; return 1; }
        check "$sc: systemd's instance for it is held, its process frozen" instance_held
        check "$sc: it has not done its work" in_ct test ! -e /tmp/held-echo.log
        check "$sc: status counts what the kernel has frozen" status_counts
        check "$sc: exit" leave
        check "$sc: exit succeeded" exit_ok
        wrote() { for _ in $(seq 1 100); do in_ct grep -qx hello /tmp/held-echo.log && return 0; sleep 0.1; done; return 1; }
        check "$sc: after exit it does its work" wrote
        in_ct systemctl stop held-echo.socket
        rm -f "$rootfs/etc/systemd/system/held-echo.socket" "$rootfs/etc/systemd/system/held-echo@.service"
        in_ct systemctl daemon-reload
        check "$sc: nothing left frozen (kernel, systemd)" nothing_left
}
socket_hold_checks

# logind: the lid taken over out of the box, apps told before standby and
# after it with their delay honoured, a block lock keeping idleness from
# entering (and named by status), entry on logind's idle hint, and a
# suspend frozen before and thawed after (the sleep itself a hook).
logind_checks() {
        local sc=logind out
        status() { in_ct standby-manager status; }
        said() { # TEXT: status says it, bounded: 10 s
                for _ in $(seq 1 100); do status | grep -qF "$1" && return 0; sleep 0.1; done
                status | sed 's/^/     /'; return 1; }
        said_re() { # REGEX, as said
                for _ in $(seq 1 100); do status | grep -q "$1" && return 0; sleep 0.1; done
                status | sed 's/^/     /'; return 1; }
        target_is() { # STATE: standby.target is, bounded: 20 s
                for _ in $(seq 1 200); do [ "$(in_ct systemctl is-active standby.target)" = "$1" ] && return 0; sleep 0.1; done
                in_ct journalctl -q -u standby-listener.service -n 20 --no-pager | sed 's/^/     /'; return 1; }
        has() { # FILE, bounded: 10 s
                for _ in $(seq 1 100); do in_ct test -s "$1" && return 0; sleep 0.1; done; return 1; }
        lid_lock() { in_ct systemd-inhibit --list --no-pager 2>/dev/null | grep -q 'standby.*handle-lid-switch.*block'; }
        held() { for _ in $(seq 1 100); do lid_lock && return 0; sleep 0.1; done
                in_ct systemd-inhibit --list --no-pager | sed 's/^/     /'; return 1; }
        policy() { # standby.conf lines after the test's own
                printf '[Standby]\nTargets=user.slice workloads.slice\nFreezeTimeout=5s\n%s\n' "$1" > "$rootfs/etc/standby/standby.conf"
                in_ct systemctl reload standby-listener.service; }

        check "$sc: the listener holds logind's handle-lid-switch block lock out of the box" held
        check "$sc: status says so" said "logind's lid: held"

        # 1. An app with a delay lock is told, finishes its work (0.8 s), and
        # only then is frozen; told again once thawed.
        in_ct sh -c 'rm -rf /run/app; mkdir -p /run/app'
        in_ct systemd-run -q --unit=standby-app.service -p Slice=workloads.slice /usr/local/bin/standby-app /run/app delay 800
        check "$sc: the app holds a delay lock" has /run/app/ready
        check "$sc: status names it" said "Lock on standby: delay lock: standby-app"
        check "$sc: systemctl start standby.target" in_ct systemctl start standby.target
        check "$sc: the app wrote its state before it was frozen" in_ct test -s /run/app/prepared
        check "$sc: and then it was frozen" [ "$(freezer standby-app.service)" = frozen ]
        check "$sc: nothing said after-standby yet" in_ct test ! -e /run/app/resumed
        check "$sc: leave" leave
        check "$sc: the app, thawed, got the after-signal" has /run/app/resumed
        check "$sc: status: entered and left by hand" said_re '^Last leave: by hand' 
        check "$sc: and took its lock again" said "Lock on standby: delay lock: standby-app"

        # 2. A block lock: root's keeps logind's idle hint from entering, and
        # status names it; a user's is refused (UsersMayBlock=no).
        in_ct sh -c 'rm -rf /run/blk /tmp/blk-alice; mkdir -p /run/blk /tmp/blk-alice; chown alice /tmp/blk-alice'
        in_ct systemd-run -q --unit=standby-blocker.service /usr/local/bin/standby-app /run/blk block
        in_ct systemd-run -q --unit=alice-blocker.service -p User=alice /usr/local/bin/standby-app /tmp/blk-alice block
        check "$sc: root's block lock taken" has /run/blk/ready
        unheld() { for _ in $(seq 1 100); do lid_lock || return 0; sleep 0.1; done; return 1; }
        check "$sc: while it is held, the lid is logind's (the listener let go of it)" unheld
        check "$sc: status says so" said "logind's lid: not held"
        check "$sc: alice's block lock refused" has /tmp/blk-alice/refused
        policy $'EnterOn=lid idle\nIdleEnterSec=1s'
        check "$sc: the policy reloaded: idle enters" said "Enters on: lid idle (idle: after 1s)"
        # A graphical session (logind takes idle hints from those only) says it is idle.
        in_ct systemd-run -q --unit=idle-session.service -p PAMName=login -p User=alice \
                -p Environment=XDG_SESSION_TYPE=wayland /bin/sh -c 'busctl call org.freedesktop.login1 \
                /org/freedesktop/login1/session/auto org.freedesktop.login1.Session SetIdleHint b true \
                > /tmp/idle-hint.out 2>&1; exec sleep infinity'
        idle() { in_ct busctl get-property org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager IdleHint; }
        idle_true() { for _ in $(seq 1 100); do [ "$(idle)" = "b true" ] && return 0; sleep 0.1; done
                say "     IdleHint: $(idle); $(in_ct cat /tmp/idle-hint.out 2>/dev/null)"; in_ct loginctl --no-pager | sed 's/^/     /'; return 1; }
        check "$sc: logind's idle hint is true" idle_true
        check "$sc: the block lock refused the idle entry, and status names it" said "Last entry: refused (idle): block lock held by standby-app"
        check "$sc: standby.target stayed inactive" [ "$(in_ct systemctl is-active standby.target)" = inactive ]
        in_ct systemctl stop standby-blocker.service
        check "$sc: the block lock gone, logind's idle hint enters standby" target_is active
        check "$sc: and the lid is the listener's again" held
        check "$sc: status: entered on idle" said "Last entry: idle"
        # With no session left logind calls the machine idle: the policy
        # goes back to the lid alone before standby is left.
        in_ct systemctl stop idle-session.service alice-blocker.service
        policy ""
        check "$sc: the policy reloaded: the lid alone enters" said_re '^Enters on: lid$'
        check "$sc: leave" leave
        check "$sc: nothing left frozen (kernel, systemd)" nothing_left

        # 3. A desktop holds the lid too, as GNOME's gsd-power does: status
        # names it, and the suspend it asks for (systemctl suspend here) is
        # what standby freezes around: the listener's delay lock on sleep,
        # apps told, what runs frozen before the sleep (the hook sees
        # mail.service frozen), and everything thawed after it. /sys/power/state must be writable
        # for logind to allow the sleep verb: a file of ours over it.
        in_ct sh -c 'echo "freeze mem" > /run/power-state && mount --bind /run/power-state /sys/power/state'
        out=$(in_ct busctl call org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager CanSuspend 2>&1)
        check "$sc: logind allows the sleep verb ($out)" [ "$out" = 's "yes"' ]
        check "$sc: the listener holds a delay lock on sleep" said "Sleep delay: held"
        in_ct systemd-run -q --unit=desktop-lid.service systemd-inhibit --what=handle-lid-switch --who=desktop \
                --why="handles the lid" --mode=block sleep infinity
        check "$sc: status names the desktop holding the lid too" said "Lid also held by: desktop"
        in_ct rm -f /run/app/prepared /run/app/resumed /run/slept
        check "$sc: systemctl suspend" in_ct systemctl suspend
        check "$sc: the sleep hook ran" has /run/slept
        check "$sc: mail.service was frozen when the machine slept" in_ct grep -qx 'frozen 1' /run/slept
        check "$sc: the app had written its state by then" in_ct grep -q 'state written' /run/slept
        check "$sc: after the sleep standby is left" target_is inactive
        check "$sc: status: left on waking" said "Last leave: resumed from sleep"
        check "$sc: the app got the after-signal" has /run/app/resumed
        check "$sc: status: the last sleep frozen" said "Last sleep: frozen"
        check "$sc: mail.service runs" [ "$(freezer mail.service)" = running ]
        check "$sc: nothing left frozen (kernel, systemd)" nothing_left
        in_ct systemctl stop desktop-lid.service standby-app.service
        unnamed() { for _ in $(seq 1 100); do status | grep -q "^Lid also held by" || return 0; sleep 0.1; done; return 1; }
        check "$sc: the desktop gone, status names no other holder" unnamed

        # 4. Any user may send a signal, and one sent to the listener's
        # connection alone reaches it whatever its match rules say: alice
        # forges logind's PrepareForSleep(true), NameOwnerChanged and
        # PropertiesChanged (IdleHint) so. The listener ignores each (its
        # debug log says so once it has handled it): nothing frozen, standby
        # not entered, its locks kept.
        local dest seen
        dest=$(in_ct busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus GetNameOwner s \
                org.standby.Listener1 | sed -n 's/^s "\(:.*\)"$/\1/p')
        ignored() { # TEXT: a new line of the listener's log says it, bounded: 10 s
                for _ in $(seq 1 100); do
                        [ "$(in_ct journalctl -q -u standby-listener.service --no-pager | grep -cF "$1")" -gt "$seen" ] && return 0
                        sleep 0.1
                done; return 1; }
        as_alice_bus() { in_ct runuser -u alice -- busctl emit --destination="$dest" "$@"; }
        seen=$(in_ct journalctl -q -u standby-listener.service --no-pager | grep -cF "PrepareForSleep from :" || true)
        check "$sc: alice sends PrepareForSleep(true) to the listener ($dest) alone" \
                as_alice_bus /org/freedesktop/login1 org.freedesktop.login1.Manager PrepareForSleep b true
        check "$sc: the listener ignored it" ignored "PrepareForSleep from :"
        seen=$(in_ct journalctl -q -u standby-listener.service --no-pager | grep -cF "Ignored a NameOwnerChanged" || true)
        check "$sc: alice sends it logind's NameOwnerChanged alone" as_alice_bus /org/freedesktop/DBus \
                org.freedesktop.DBus NameOwnerChanged sss org.freedesktop.login1 :1.1 :1.2
        check "$sc: the listener ignored it" ignored "Ignored a NameOwnerChanged"
        seen=$(in_ct journalctl -q -u standby-listener.service --no-pager | grep -cF "PropertiesChanged from :" || true)
        check "$sc: alice sends it logind's PropertiesChanged (IdleHint true) alone" as_alice_bus /org/freedesktop/login1 \
                org.freedesktop.DBus.Properties PropertiesChanged 'sa{sv}as' org.freedesktop.login1.Manager 1 IdleHint b true 0
        check "$sc: the listener ignored it" ignored "PropertiesChanged from :"
        check "$sc: standby.target stayed inactive" [ "$(in_ct systemctl is-active standby.target)" = inactive ]
        check "$sc: status: the last sleep is still the real one" said "Last sleep: frozen"
        check "$sc: the sleep delay lock is still held" said "Sleep delay: held"
        check "$sc: nothing frozen (kernel, systemd)" nothing_left

        # 5. The freeze before a sleep cannot begin (another process holds
        # standby's journal lock): the sleep waits for the listener's deadline
        # (7/10 of logind's delay), not for logind's own timeout, and nothing
        # sleeps frozen. The freeze runs in a child of the listener: logind's
        # lock is closed in every copy at the deadline.
        in_ct rm -f /run/slept
        in_ct systemd-run -q --unit=journal-holder.service flock /run/standby/lock sleep infinity
        holder() { for _ in $(seq 1 100); do in_ct flock -n /run/standby/lock true || return 0; sleep 0.1; done; return 1; }
        check "$sc: another process holds the journal's lock" holder
        since=$(in_ct date +%s)
        check "$sc: systemctl suspend" in_ct systemctl suspend
        check "$sc: the sleep hook ran" has /run/slept
        check "$sc: nothing was frozen when the machine slept" in_ct grep -qx 'frozen 0' /run/slept
        # (status waits for the journal's lock: the logs say it.)
        gave_up() { in_ct journalctl -q --no-pager -u standby-listener.service --since=@"$since" |
                grep -q "did not finish within logind's delay"; }
        check "$sc: the listener let the sleep go at its deadline" gave_up
        timed_out() { in_ct journalctl -q --no-pager -u systemd-logind.service --since=@"$since" | grep "inhibitor timeout"; }
        in_time() { ! timed_out; }
        check "$sc: logind did not wait for its delay to run out" in_time
        in_ct systemctl stop journal-holder.service
        check "$sc: status: the freeze did not begin in time" said_re "^Last sleep: \(not finished\|failed\)"
        check "$sc: nothing left frozen (kernel, systemd)" nothing_left

        # 6. The sleep lock is kept until the freeze is done, whatever else
        # happens during the apps' delay (here a reload): the app finishes,
        # mail.service is frozen when the machine sleeps.
        in_ct sh -c 'rm -rf /run/app /run/slept; mkdir -p /run/app'
        in_ct systemd-run -q --unit=standby-app.service -p Slice=workloads.slice /usr/local/bin/standby-app /run/app delay 1500
        check "$sc: the app holds a delay lock" has /run/app/ready
        check "$sc: the listener holds its delay lock on sleep again" said "Sleep delay: held"
        said_sleep() { in_ct journalctl -q --no-pager -u standby-listener.service --since=@"$since" | grep -c "about to sleep" || true; }
        since=$(in_ct date +%s); n0=$(said_sleep)
        check "$sc: systemctl suspend" in_ct systemctl suspend
        told() { for _ in $(seq 1 100); do [ "$(said_sleep)" -gt "$n0" ] && return 0; sleep 0.1; done; return 1; }
        check "$sc: the listener was told of the sleep" told
        check "$sc: a reload during the apps' delay" in_ct systemctl reload standby-listener.service
        check "$sc: the sleep hook ran" has /run/slept
        check "$sc: mail.service was frozen when the machine slept" in_ct grep -qx 'frozen 1' /run/slept
        check "$sc: status: the last sleep frozen" said "Last sleep: frozen"
        check "$sc: after the sleep standby is left" target_is inactive
        check "$sc: nothing left frozen (kernel, systemd)" nothing_left
        in_ct systemctl stop standby-app.service
}
logind_checks

# The interface as a desktop and its users meet it, with the real polkitd:
# busctl introspect shows it named; alice reads the properties; outside a
# session polkit refuses her everything; from an active local session (a
# login on seat0) she may push and leave standby but not enter it
# (auth_admin_keep, no agent); a client of hers follows a standby by
# PropertiesChanged, Entered and Left alone, and never hears Thawed; with
# polkitd stopped and not activatable every asking is refused.
bus_api_checks() {
        local sc out env
        L="org.standby.Listener1 /org/standby/Listener1 org.standby.Listener1"
        as_alice() { in_ct runuser -u alice -- "$@"; }
        # A method call as dbus-send makes it (no interactive authorization;
        # busctl prints AccessDenied's own words, not the listener's):
        # "boolean true", nothing (no reply value), or "Error NAME: MESSAGE".
        call() { "$@" 2>&1 | sed -n 's/^ *boolean //p; s/^Error /Error /p' || true; }
        send() { echo dbus-send --system --print-reply --dest=org.standby.Listener1 /org/standby/Listener1 \
                "org.standby.Listener1.$1" ${2:+string:$2} ${3:+string:$3}; }
        # A command of alice's in a login session on seat0, which polkit
        # takes as local (it has a seat) and active. logind gives seat0 VTs
        # only where /dev/tty0 is (not in a container): without them it
        # activates the newest session itself, and a VT number is refused.
        in_session() { in_ct systemd-run -q --wait --pipe -p PAMName=login -p User=alice -p "Environment=$env" "$@"; }
        session_props() { in_session sh -c 'loginctl show-session "$XDG_SESSION_ID" -p Active -p Seat -p Remote' 2>&1 |
                sort | tr '\n' ' '; }
        sc="bus API"
        env="XDG_SESSION_TYPE=wayland XDG_SESSION_CLASS=user XDG_SEAT=seat0"
        in_ct test -e /dev/tty0 && env="$env XDG_VTNR=$(in_ct sed -n 's/^tty//p' /sys/class/tty/tty0/active)"
        out=$(session_props)
        check "$sc: alice's login session is active, local, on seat0 ($out; $env)" \
                [ "$out" = "Active=yes Remote=no Seat=seat0 " ]
        standby_state() { in_ct busctl get-property $L State; }

        out=$(in_ct busctl introspect $L 2>&1 || true)
        check "$sc: busctl introspect lists the properties and signals" sh -c \
                'for m in .State .Strategy .Since .EnteredBy .Inhibitors .Enter .Exit .ThawUnit .Entered .Left .Thawed; do
                        printf "%s\n" "$0" | grep -q "^$m " || exit 1; done' "$out"
        out=$(as_alice busctl get-property $L State Strategy 2>&1 | tr '\n' ' ' || true)
        check "$sc: alice reads State and Strategy ($out)" [ "$out" = 's "inactive" s "freeze" ' ]
        out=$(call as_alice $(send Enter))
        check "$sc: outside a session, polkit refuses alice Enter ($out)" grep -q "polkit said no" <<< "$out"
        check "$sc: standby not entered" [ "$(standby_state)" = 's "inactive"' ]
        check "$sc: polkitd is running" [ "$(in_ct systemctl is-active polkit.service)" = active ]

        # alice's desktop client, started before the entry.
        in_ct rm -f /tmp/watch.log
        in_ct systemd-run -q --unit=standby-watch.service -p User=alice /usr/local/bin/standby-watch /tmp/watch.log
        watch_has() { for _ in $(seq 1 100); do in_ct grep -qx "$1" /tmp/watch.log 2>/dev/null && return 0; sleep 0.1; done
                say "     watch.log: $(in_ct cat /tmp/watch.log 2>/dev/null | tr '\n' '|')"; return 1; }
        check "$sc: alice's client is ready" watch_has ready
        check "$sc: enter" in_ct systemctl start standby.target
        check "$sc: mail.service frozen" [ "$(freezer mail.service)" = frozen ]
        out=$(call in_session $(send Enter))
        check "$sc: from her session, polkit lets her Enter (entered already: nothing to add) ($out)" [ -z "$out" ]
        out=$(call as_alice $(send Push mail.service test))
        check "$sc: outside a session, her push is refused ($out)" grep -q "AccessDenied.*polkit said no" <<< "$out"
        check "$sc: mail.service still frozen" [ "$(freezer mail.service)" = frozen ]
        out=$(call in_session $(send Push mail.service test))
        check "$sc: from her session, polkit lets her push ($out)" [ "$out" = true ]
        check "$sc: mail.service thawed by her push" freezer_is mail.service running
        out=$(as_alice busctl get-property $L EnteredBy 2>&1 || true)
        check "$sc: EnteredBy says how ($out)" grep -q "standby.target" <<< "$out"
        # Her own unit is hers to thaw from her session; another's (a system
        # unit) is an administrator's, which dbus-send cannot answer.
        thaw_unit() { echo dbus-send --system --print-reply --dest=org.standby.Listener1 /org/standby/Listener1 \
                org.standby.Listener1.ThawUnit "string:$1" uint64:30000000; }
        check "$sc: her sync.service frozen" [ "$(user_freezer sync.service)" = frozen ]
        out=$(call in_session $(thaw_unit sync.service))
        check "$sc: from her session, polkit lets her thaw her own sync.service ($out)" [ -z "$out" ]
        user_running() { for _ in $(seq 1 100); do [ "$(user_freezer sync.service)" = running ] && return 0
                sleep 0.1; done; return 1; }
        check "$sc: her sync.service thawed" user_running
        out=$(call in_session $(thaw_unit echo.service))
        check "$sc: from her session, a system unit's thaw needs an admin ($out)" \
                grep -q "InteractiveAuthorizationRequired.*polkit asks for authentication (org.standby.thaw)" <<< "$out"
        check "$sc: echo.service still frozen" [ "$(freezer echo.service)" = frozen ]
        # A block lock: hers through polkit from her session (UsersMayBlock=no).
        in_ct sh -c 'rm -rf /tmp/blk-session; mkdir -p /tmp/blk-session; chown alice /tmp/blk-session'
        in_ct systemd-run -q --unit=alice-session-blocker.service -p PAMName=login -p User=alice \
                -p "Environment=$env" /usr/local/bin/standby-app /tmp/blk-session block
        blk_has() { for _ in $(seq 1 100); do in_ct test -e "/tmp/blk-session/$1" && return 0; sleep 0.1; done
                say "     $(in_ct sh -c 'cat /tmp/blk-session/* 2>/dev/null' | tr '\n' ' ')"; return 1; }
        check "$sc: from her session, polkit lets her take a block lock" blk_has ready
        out=$(as_alice busctl get-property $L Inhibitors 2>&1 || true)
        check "$sc: the listener lists it ($out)" grep -q '"block" 1000' <<< "$out"
        in_ct systemctl stop alice-session-blocker.service
        # status is anyone's: hers reads the listener's properties.
        out=$(as_alice standby-manager status 2>&1) && code=0 || code=$?
        check "$sc: alice's standby-manager status says active ($code)" \
                sh -c '[ "$0" = 0 ] && printf "%s\n" "$1" | grep -qx "Standby: active" &&
                        printf "%s\n" "$1" | grep -q "^Units: shown to root only"' "$code" "$out"
        [ "$code" = 0 ] || say "$out" | sed 's/^/     /'
        out=$(as_alice standby-manager is-active 2>&1) && code=0 || code=$?
        check "$sc: and is-active: active, 0 ($out, $code)" [ "$out $code" = "active 0" ]
        out=$(call in_session $(send Exit))
        check "$sc: from her session, polkit lets her leave ($out)" [ -z "$out" ]
        check "$sc: her client heard State=active" watch_has State=active
        check "$sc: and Entered" watch_has "Entered .*"
        check "$sc: and State=inactive" watch_has State=inactive
        check "$sc: and Left, saying why" watch_has "Left Exit over the bus by uid 1000"
        check "$sc: and no Thawed (root's alone to hear)" sh -c '! grep -q "^Thawed" "$0"' "$rootfs/tmp/watch.log"
        watch_ended() { for _ in $(seq 1 100); do [ "$(in_ct systemctl is-active standby-watch.service)" != active ] &&
                return 0; sleep 0.1; done; return 1; }
        check "$sc: her client exited after Left" watch_ended
        in_ct systemctl stop standby-watch.service 2>/dev/null || true
        target_off() { for _ in $(seq 1 200); do [ "$(in_ct systemctl is-active standby.target || true)" = inactive ] &&
                return 0; sleep 0.1; done; return 1; }
        check "$sc: standby.target stopped (the exit went through standby-leave.service)" target_off
        target_off || leave # the checks below start from no standby all the same
        check "$sc: nothing left frozen" nothing_left

        # What polkit's rules say goes: a rule lets alice thaw (an admin's
        # action by default), outside any session, by unit name.
        sc="polkit rule"
        mkdir -p "$rootfs/etc/polkit-1/rules.d"
        cat > "$rootfs/etc/polkit-1/rules.d/50-standby-test.rules" <<'RULES'
polkit.addRule(function(action, subject) {
        if (action.id == "org.standby.thaw" && subject.user == "alice")
                return polkit.Result.YES;
});
RULES
        in_ct systemctl restart polkit.service
        # Entered by alice from her session (an active session's, by default).
        out=$(call in_session $(send Enter))
        check "$sc: alice enters standby from her session ($out)" [ -z "$out" ]
        active() { for _ in $(seq 1 200); do [ "$(standby_state)" = 's "active"' ] && return 0; sleep 0.1; done
                return 1; }
        check "$sc: standby entered" active
        out=$(as_alice standby-manager is-active 2>&1) && code=0 || code=$?
        check "$sc: is-active as alice: active, 0 ($out, $code)" [ "$out $code" = "active 0" ]
        out=$(call as_alice dbus-send --system --print-reply --dest=org.standby.Listener1 /org/standby/Listener1 \
                org.standby.Listener1.ThawUnit string:mail.service uint64:30000000)
        not_error() { ! grep -q "^Error" <<< "$out"; }
        check "$sc: alice's ThawUnit allowed by the rule ($out)" not_error
        check "$sc: mail.service thawed for its window" freezer_is mail.service running
        out=$(call as_alice $(send Push mail.service test))
        check "$sc: her push is still refused ($out)" grep -q "polkit said no" <<< "$out"
        rm -f "$rootfs/etc/polkit-1/rules.d/50-standby-test.rules"
        in_ct systemctl restart polkit.service
        check "$sc: leave" leave
        check "$sc: nothing left frozen" nothing_left
        out=$(as_alice standby-manager is-active 2>&1) && code=0 || code=$?
        check "$sc: is-active as alice: inactive, 3 ($out, $code)" [ "$out $code" = "inactive 3" ]

        # polkitd stopped, and its bus activation masked: fail closed.
        sc="polkit stopped"
        in_ct systemctl mask -q --runtime polkit.service
        in_ct systemctl stop polkit.service
        check "$sc: polkitd is not running" [ "$(in_ct systemctl is-active polkit.service || true)" != active ]
        check "$sc: enter" in_ct systemctl start standby.target
        out=$(call in_session $(send Push mail.service test))
        check "$sc: her push from her session is refused, saying polkit could not be asked ($out)" \
                grep -q "AccessDenied.*polkit could not be asked" <<< "$out"
        check "$sc: mail.service still frozen" [ "$(freezer mail.service)" = frozen ]
        out=$(in_ct busctl call $L Push ss mail.service test 2>&1 || true)
        check "$sc: root's push needs no polkit ($out)" [ "$out" = "b true" ]
        check "$sc: the listener said so once" in_ct sh -c \
                'journalctl -q -b -u standby-listener.service | grep -c "polkit did not answer" | grep -qx 1'
        in_ct systemctl unmask -q --runtime polkit.service
        in_ct systemctl start polkit.service
        check "$sc: leave" leave
        check "$sc: nothing left frozen" nothing_left
}
bus_api_checks

# The package removed while standby is entered, then purged: the prerm
# leaves standby before the listener stops, the purge leaves nothing of the
# package behind. Then installed on the running system, which starts the
# listener and only the listener, and purged again: the same files before
# and after (the rest of / and /run; systemd's and dpkg's own records and
# the logs aside).
package_checks() {
        local sc=remove out code files
        # The test's rules and drop-in are the administrator's files: theirs
        # to remove (the purge keeps rules an administrator wrote).
        in_ct sh -c 'rm -f /etc/standby/rules.d/*.rule; rm -rf /etc/systemd/system/standby-listener.service.d'
        in_ct systemctl daemon-reload
        in_ct systemctl restart standby-listener.service
        check "$sc: enter" in_ct systemctl start standby.target
        check "$sc: mail.service frozen" [ "$(freezer mail.service)" = frozen ]
        files=$(in_ct dpkg-query -L standby)
        out=$(in_ct dpkg -r standby 2>&1) && code=0 || code=$?
        check "$sc: dpkg -r standby ($code)" [ "$code" = 0 ]
        [ "$code" = 0 ] || say "$out" | tail -n 8 | sed 's/^/     /'
        check "$sc: its prerm left standby first" grep -q "leaving standby before the package is removed" <<< "$out"
        check "$sc: nothing left frozen (kernel, systemd)" nothing_left
        check "$sc: the listener stopped" [ "$(in_ct systemctl is-active standby-listener.service)" = inactive ]
        check "$sc: standby.conf kept until the purge (a conffile)" in_ct test -f /etc/standby/standby.conf
        sc=purge
        out=$(in_ct dpkg -P standby 2>&1) && code=0 || code=$?
        check "$sc: dpkg -P standby ($code)" [ "$code" = 0 ]
        [ "$code" = 0 ] || say "$out" | tail -n 8 | sed 's/^/     /'
        # Each path the package had, gone (directories that other packages
        # share, such as /usr/sbin, aside: those with "standby" in their name).
        leftover() { in_ct sh -c 'for f; do
                        [ -e "$f" ] || [ -L "$f" ] || continue
                        case $f in *standby*) echo "$f" ;; *) [ -d "$f" ] || echo "$f" ;; esac
                done' sh $files; }
        out=$(leftover)
        check "$sc: no path of the package left ($(echo $out))" [ -z "$out" ]
        check "$sc: no /etc/standby, no /run/standby" in_ct sh -c '! [ -e /etc/standby ] && ! [ -e /run/standby ]'
        out=$(in_ct sh -c 'find /etc/systemd -lname "*standby*"
                find /var/lib/systemd/deb-systemd-helper-enabled /var/lib/systemd/deb-systemd-helper-masked \
                        -name "*standby*"' 2>/dev/null || true)
        check "$sc: no unit enabled, nothing in deb-systemd-helper's state ($(echo $out))" [ -z "$out" ]
        check "$sc: dpkg knows no standby" in_ct sh -c '! dpkg-query -W standby > /dev/null 2>&1'

        sc="install on the running system"
        # One line per path: type, mode, owner, link target.
        snapshot() { in_ct sh -c 'find / -xdev \( -path /var/log -o -path /var/lib/dpkg -o -path /var/cache/debconf \
                -o -path /var/lib/systemd \) -prune -o -printf "%y %m %u %l %p\n"
                find /run -xdev \( -path /run/systemd -o -path /run/log -o -path /run/user \) -prune \
                -o -printf "%y %m %u %l %p\n"
                find /var/lib/systemd/deb-systemd-helper-enabled /var/lib/systemd/deb-systemd-helper-masked \
                -printf "%y %m %u %l %p\n" 2>/dev/null' | sort; }
        local before after
        before=$(snapshot)
        out=$(in_ct dpkg -i "$deb" 2>&1) && code=0 || code=$?
        check "$sc: dpkg -i ($code)" [ "$code" = 0 ]
        [ "$code" = 0 ] || say "$out" | tail -n 8 | sed 's/^/     /'
        check "$sc: the listener started" [ "$(in_ct systemctl is-active standby-listener.service)" = active ]
        check "$sc: and enabled" [ "$(in_ct systemctl is-enabled standby-listener.service)" = enabled ]
        check "$sc: at the first start (no restart: the bus had the new policy)" \
                [ "$(in_ct systemctl show -p NRestarts --value standby-listener.service)" = 0 ]
        check "$sc: /run/standby made root's, 0700" [ "$(in_ct stat -c '%U %a' /run/standby)" = "root 700" ]
        out=$(in_ct busctl call org.standby.Listener1 /org/standby/Listener1 org.standby.Listener1 Push ss \
                mail.service test 2>&1 || true)
        check "$sc: it answers a push ($out)" answered
        check "$sc: standby not entered" [ "$(in_ct systemctl is-active standby.target standby-enter.service \
                standby-leave.service | tr '\n' ' ')" = "inactive inactive inactive " ]
        local during
        during=$(snapshot)
        check "$sc: the file list has the package's files" grep -q ' /usr/sbin/standby-listener$' <<< "$during"
        out=$(in_ct dpkg -P standby 2>&1) && code=0 || code=$?
        check "$sc: dpkg -P standby ($code)" [ "$code" = 0 ]
        [ "$code" = 0 ] || say "$out" | tail -n 8 | sed 's/^/     /'
        after=$(snapshot)
        out=$(diff <(echo "$before") <(echo "$after") || true)
        same() { [ -n "$before" ] && [ -z "$out" ]; }
        check "$sc: purged, the file lists before and after are the same ($(echo "$after" | wc -l) paths)" same
        [ -z "$out" ] || say "$out" | head -n 20 | sed 's/^/     /'
}
package_checks

say "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
