#!/bin/bash
# A real systemd --user manager (systemd 252) for the systemd-backend tests, on
# a host whose PID 1 is not systemd. Adapted from shared/recipes/user-manager.sh.
# Usage (root): user-manager.sh start|stop DIR CGREL
#   DIR: a fresh directory; the manager's private socket is DIR/xdg/systemd/private
#   CGREL: the cgroup it is given, relative to the cgroup2 mount (e.g. standby-test.1.2.0/um.service)
set -u
cmd=${1:-}; dir=${2:?dir}; cgrel=${3:?cgroup}
cg2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
xdg=$dir/xdg
case "$cmd" in
start)
        # systemd 252 decides at start whether freezing works, by this file.
        [ -d "$cg2/init.scope" ] || { mkdir "$cg2/init.scope" && touch "$dir/created-init.scope"; }
        mkdir -p "$xdg" && chmod 700 "$xdg"
        unshare -m --propagation private sh -c '
                set -e
                mount -t cgroup2 cgroup2 /sys/fs/cgroup
                mount -t tmpfs -o mode=755 tmpfs /run/systemd
                mkdir /run/systemd/system
                mkdir -p /sys/fs/cgroup/'"$cgrel"'
                echo $$ > /sys/fs/cgroup/'"$cgrel"'/cgroup.procs
                unset DBUS_SESSION_BUS_ADDRESS
                export XDG_RUNTIME_DIR='"$xdg"'
                exec /lib/systemd/systemd --user --log-level=warning --log-target=kmsg
        ' </dev/null >/dev/null 2>&1 &
        echo $! > "$dir/manager.pid"
        # Ready when its default target is active (bounded: 10 s).
        for _ in $(seq 1 200); do
                XDG_RUNTIME_DIR=$xdg systemctl --user is-active -q default.target 2>/dev/null && exit 0
                sleep 0.05
        done
        echo "user manager did not start" >&2
        exit 1
        ;;
stop)
        pid=$(cat "$dir/manager.pid" 2>/dev/null) || exit 0
        XDG_RUNTIME_DIR=$xdg systemctl --user exit 2>/dev/null || kill "$pid"
        for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null
        [ -e "$dir/created-init.scope" ] && rmdir "$cg2/init.scope"
        rm -rf "$dir/xdg" "$dir/manager.pid" "$dir/created-init.scope"
        ;;
*)
        echo "usage: $0 start|stop DIR CGROUP" >&2
        exit 2
        ;;
esac
