#!/bin/bash
# The booted system of standby-bench --standby-period: Debian 12 with
# systemd as PID 1 under systemd-nspawn, in a network namespace of its own,
# with standby installed as a distribution would (make install) and a
# lingering user, alice, whose user manager runs PipeWire and WirePlumber, a
# mail client, a chat client and a timer.
#   system.sh start WORK   builds the rootfs once (WORK/rootfs), installs,
#                          boots, waits until systemd says running; prints
#                          the container's leader PID and its cgroup
#                          directory on the host
#   system.sh stop WORK    powers it off
# From the source tree, after make, as root.
set -eu
cd "$(dirname "$0")/../.."
verb=$1 work=$2
rootfs=$work/rootfs
# One system per WORK, so that two runs with different ones do not meet.
name=standby-period-$(printf %s "$work" | cksum | cut -d" " -f1)
cgrel=standby-bench-system.slice/$name
cg2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)

leader() { ps -o pid= --ppid "$(cat "$work/nspawn.pid")" | head -1 | tr -d ' '; }
in_ct() { nsenter -t "$(leader)" -a "$@"; }

if [ "$verb" = stop ]; then
        if [ -f "$work/nspawn.pid" ]; then
                nspawn=$(cat "$work/nspawn.pid")
                in_ct systemctl poweroff 2>/dev/null || kill "$nspawn" 2>/dev/null || true
                for _ in $(seq 1 100); do kill -0 "$nspawn" 2>/dev/null || break; sleep 0.1; done
                kill -9 "$nspawn" 2>/dev/null || true
                rm -f "$work/nspawn.pid"
        fi
        # Whatever is left of it (a system that did not power off in time
        # outlives a killed nspawn): killed by its cgroup, which is only its.
        if [ -d "$cg2/$cgrel" ]; then
                echo 1 > "$cg2/$cgrel/cgroup.kill"
                for _ in $(seq 1 100); do
                        [ -z "$(find "$cg2/$cgrel" -name cgroup.procs -exec cat {} + 2>/dev/null)" ] && break
                        sleep 0.1
                done
        fi
        # Its own cgroups only: another WORK's system may run beside it.
        [ -d "$cg2/$cgrel" ] && find "$cg2/$cgrel" -depth -type d -exec rmdir {} \; 2>/dev/null
        rmdir "$cg2/${cgrel%%/*}" 2>/dev/null || true
        exit 0
fi

bench/period/rootfs.sh "$work"
tests/system/install-standby.sh "$rootfs" > /dev/null
rm -f "$rootfs/etc/systemd/system/mail.service" "$rootfs/etc/systemd/system/multi-user.target.wants/mail.service"
mkdir -p "$rootfs/etc/systemd/system/multi-user.target.wants" "$rootfs/etc/standby/rules.off"
ln -sf /lib/systemd/system/standby-listener.service "$rootfs/etc/systemd/system/multi-user.target.wants/"
# Every user-space unit but the few standby needs (Exempt='s defaults).
printf '[Standby]\nTargets=system.slice user.slice\n' > "$rootfs/etc/standby/standby.conf"

# alice, lingering: her user manager starts at boot.
chroot "$rootfs" sh -c 'id alice >/dev/null 2>&1 || useradd -m -u 1000 alice'
mkdir -p "$rootfs/var/lib/systemd/linger" "$rootfs/etc/systemd/user/default.target.wants" "$rootfs/etc/systemd/user/timers.target.wants"
touch "$rootfs/var/lib/systemd/linger/alice"
unit() { # unit PATH: the unit file from stdin, enabled in WANTS (2nd argument)
        cat > "$1"
        ln -sf "${1#"$rootfs"}" "$2/$(basename "$1")"
}
unit "$rootfs/etc/systemd/user/mail.service" "$rootfs/etc/systemd/user/default.target.wants" <<'UNIT'
[Unit]
Description=A mail client: checks every minute, woken by a push
[Service]
ExecStart=/usr/local/bin/standby-workload client --port 1143 --period-ms 60000
Restart=always
UNIT
unit "$rootfs/etc/systemd/user/chat.service" "$rootfs/etc/systemd/user/default.target.wants" <<'UNIT'
[Unit]
Description=A chat client: a keepalive every 30 s on its connection
[Service]
ExecStart=/usr/local/bin/standby-workload client --port 5222 --period-ms 30000
Restart=always
UNIT
cat > "$rootfs/etc/systemd/user/tick.service" <<'UNIT'
[Unit]
Description=A job of known period: its run times, one a line
[Service]
Type=oneshot
ExecStart=/bin/sh -c 'date +%%s.%%N >> %h/tick.log'
UNIT
unit "$rootfs/etc/systemd/user/tick.timer" "$rootfs/etc/systemd/user/timers.target.wants" <<'UNIT'
[Unit]
Description=Every 10 s of the wall clock
[Timer]
OnCalendar=*:*:0/10
AccuracySec=1ms
UNIT
# A cron job of known period, every minute.
printf '* * * * * root date +\\%%s.\\%%N >> /var/log/cron-tick.log\n' > "$rootfs/etc/cron.d/standby-bench"
chmod 0644 "$rootfs/etc/cron.d/standby-bench"

# The listener's rules: each unit thawed by what concerns it, for 5 s.
rule() {
        printf '[Match]\nEvent=%s\n%s\n[Action]\nThaw=%s\nFor=5s\n' "$2" "$3" "$4" > "$rootfs/etc/standby/rules.d/$1.rule"
        chmod 0644 "$rootfs/etc/standby/rules.d/$1.rule"
}
rm -f "$rootfs"/etc/standby/rules.d/*.rule "$rootfs"/etc/standby/rules.off/*.rule
rule 10-mail push Unit=mail.service mail.service
rule 20-chat socket Unit=chat.service chat.service
rule 30-redis socket Unit=redis-server.service redis-server.service
rule 40-memcached socket Unit=memcached.service memcached.service
rule 50-postgresql socket Unit=postgresql@15-main.service postgresql@15-main.service
rule 60-link link Interface=sbp0 chat.service

# Boot it, as make check-system does, with a network namespace of its own.
"$0" stop "$work"
unshare -m --propagation private sh -c '
        set -e
        mount -t cgroup2 cgroup2 /sys/fs/cgroup
        mount -t tmpfs -o mode=755 tmpfs /run/systemd
        mkdir -p /sys/fs/cgroup/'"$cgrel"'
        echo $$ > /sys/fs/cgroup/'"$cgrel"'/cgroup.procs
        export SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1
        exec systemd-nspawn -q -D "$0" -b -M '"$name"' --register=no --keep-unit --console=pipe \
                --private-network --system-call-filter=pidfd_getfd --capability=CAP_IPC_LOCK
' "$rootfs" </dev/null > "$work/console.log" 2>&1 &
echo $! > "$work/nspawn.pid"
state=
for _ in $(seq 1 600); do
        if [ -n "$(leader)" ]; then
                state=$(in_ct systemctl is-system-running 2>/dev/null || true)
                [ "$state" = running ] || [ "$state" = degraded ] && break
        fi
        sleep 0.1
done
[ "$state" = running ] || [ "$state" = degraded ] || { echo "system.sh: the system did not boot ($state); see $work/console.log" >&2; exit 1; }
echo "$(leader) $cg2/$cgrel"
