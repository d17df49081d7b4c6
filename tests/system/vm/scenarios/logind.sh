# logind and standby's policy as shipped (EnterOn=lid, LeaveOn=lid
# power-key; nothing configured for it, logind's defaults suspend on the
# lid and power off on the key): closing the lid enters standby and the
# machine is not suspended; an app with a delay lock writes its state
# before it is frozen and hears the after-signal once thawed; a push wakes
# a unit meanwhile; opening the lid leaves standby; the power key does the
# same; docked, the lid closed is left alone as logind's
# HandleLidSwitchDocked=ignore says, and undocked it enters; with a desktop holding handle-lid-switch too, the lid is the
# desktop's and the suspend it asks for is frozen around (the sleep itself
# a hook that records what was frozen when it ran); and a unit that cannot
# freeze is thawed again and named before the sleep, which logind's delay
# never holds back; last, a reloaded policy where the power key enters and
# any input leaves.
cat > /etc/standby/rules.d/20-mail.rule <<'RULE'
[Match]
Event=push
Unit=mail.service
[Action]
Thaw=mail.service
RULE
mkdir -p /run/systemd/system/systemd-suspend.service.d
cat > /run/systemd/system/systemd-suspend.service.d/standby-vm.conf <<'UNIT'
[Service]
ExecStart=
ExecStart=/bin/sh -c '{ grep -x "frozen [01]" /sys/fs/cgroup/workloads.slice/mail.service/cgroup.events; \
        echo "stuck freeze $(cat /sys/fs/cgroup/workloads.slice/stuck.service/cgroup.freeze 2>/dev/null)"; \
        echo "at $(date +%%s.%%N)"; } > /run/slept.tmp; mv /run/slept.tmp /run/slept'
UNIT
# logind acts on the lid at once (no HoldoffTimeoutSec= after boot or a
# resume, in which it would ignore the lid whoever holds it), and says at
# debug level when a lock kept it from acting: what not_slept waits for
# (unthrottled: with the lid closed logind checks it again after every
# event it handles, a debug line each time).
mkdir -p /run/systemd/logind.conf.d /run/systemd/system/systemd-logind.service.d
printf '[Login]\nHoldoffTimeoutSec=0\n' > /run/systemd/logind.conf.d/standby-vm.conf
printf '[Service]\nEnvironment=SYSTEMD_LOG_LEVEL=debug\nLogRateLimitIntervalSec=0\n' \
        > /run/systemd/system/systemd-logind.service.d/standby-vm.conf
systemctl daemon-reload
check "logind restarted, without a holdoff" systemctl restart systemd-logind.service
check "the listener restarted with the push rule" systemctl restart standby-listener.service

inhibitor() { systemd-inhibit --list --no-legend --no-pager | grep -qE "^ *standby .*$1.*block"; }
no_power_key_lock() { ! inhibitor handle-power-key; }
active() { [ "$(systemctl is-active standby.target)" = active ]; }
inactive() { [ "$(systemctl is-active standby.target)" = inactive ]; }
is() { [ "$(freezer "$2")" = "$1" ]; }
nothing_frozen() {
        is running mail.service && is running standby-app.service &&
                ! grep -rlx 1 /sys/fs/cgroup/workloads.slice --include=cgroup.freeze
}
# not_slept WHAT: logind said the lid or key (WHAT: handle-lid-switch,
# handle-power-key) was another's and did nothing (logged after the last
# journal_mark), and then neither suspended nor powered off: sleep.target
# and poweroff.target never started, the hook never ran.
never_slept() {
        [ "$(systemctl show -p ActiveEnterTimestampMonotonic --value sleep.target)" = 0 ] && [ ! -e /run/slept ] &&
                inactive_unit poweroff.target
}
not_slept() {
        waitlog -u systemd-logind "Refusing [a-z-]+ operation, $1 is inhibited" && never_slept && return 0
        journalctl -q -u systemd-logind --after-cursor="$vm_cursor" --no-pager |
                grep -v 'Got message\|Sent message\|Match type' | tail -n 20 | sed 's/^/     /'
        return 1
}
inactive_unit() { [ "$(systemctl is-active "$1")" = inactive ]; }
status_says() { standby-manager status | grep -q "$1"; }

check "the listener holds logind's handle-lid-switch lock, out of the box" wait_for inhibitor handle-lid-switch
mkdir -p /run/app
systemd-run -q --unit=standby-app.service -p Slice=workloads.slice "$VM_TESTS/build/helpers/standby-app" /run/app delay 500
check "the app holds a delay lock on standby" wait_for test -s /run/app/ready
journal_mark
check "the lid and the power button made" input_start
check "the listener reads the lid for its policy" \
        waitlog -u standby-listener.service 'Watching input .* \(standby-vm-lid\), for the policy'

# 1. The lid.
journal_mark
check "the lid closed" input lid close
check "logind saw it closed" waitlog -u systemd-logind 'Lid closed'
check "closing the lid entered standby" wait_for active
check "the app wrote its state before it was frozen" test -s /run/app/prepared
check "then it was frozen" wait_for is frozen standby-app.service
check "mail.service frozen" wait_for is frozen mail.service
check "the listener said why" waitlog -u standby-listener.service 'Entering standby \(lid closed\)'
check "status: entered by the lid" status_says '^Last entry: lid closed'
check "logind left the lid to the listener: the machine was not suspended" not_slept handle-lid-switch
out=$(busctl call org.standby.Listener1 /org/standby/Listener1 org.standby.Listener1 Push ss mail.service test 2>&1)
check "a push meanwhile ($out)" [ "$out" = "b true" ]
check "mail.service woken by it" wait_for is running mail.service
journal_mark
check "the lid opened" input lid open
check "opening the lid left standby, through standby-leave.service" waitlog -u standby-leave.service 'Standby left\.$'
check "the listener said why" waitlog -u standby-listener.service 'Ending standby \(lid opened\)'
check "standby.target inactive" wait_for inactive
check "status: inactive" status_says '^Standby: inactive'
check "nothing frozen" wait_for nothing_frozen
check "the app, thawed, got the after-signal" wait_for test -s /run/app/resumed
check "the machine was not suspended" never_slept

# 2. The power key.
rm -f /run/app/prepared /run/app/resumed
journal_mark
check "the lid closed again" input lid close
check "standby entered" wait_for active
check "in standby the listener holds handle-power-key" wait_for inhibitor handle-power-key
check "the app wrote its state again" test -s /run/app/prepared
journal_mark # the lid closed, logind logs a line after each event: fewer to read
check "the power button pressed" input power press
check "logind saw the power key" waitlog -u systemd-logind 'Power key pressed'
check "the power key left standby" waitlog -u standby-listener.service 'Ending standby \(power key\)'
check "standby.target inactive" wait_for inactive
check "nothing frozen" wait_for nothing_frozen
check "the app got the after-signal" wait_for test -s /run/app/resumed
check "logind left the key to the listener: neither suspended nor powered off" not_slept handle-power-key
check "out of standby the power key is logind's again" wait_for no_power_key_lock
check "the lid opened" input lid open

# Docked (an external screen in use): logind's HandleLidSwitchDocked=ignore
# (its default) leaves the lid closed alone, and so does standby; undocked,
# logind's HandleLidSwitch= applies again: standby.
journal_mark
check "docked" input dock on
check "logind saw it docked" waitlog -u systemd-logind 'System docked'
check "the lid closed" input lid close
check "the listener followed logind's rule for a docked lid" \
        waitlog -u standby-listener.service 'Lid closed: logind.s HandleLidSwitchDocked=ignore \(docked\): standby not entered'
check "standby not entered" inactive
check "status: why not" status_says '^Last entry: not entered (lid closed): HandleLidSwitchDocked=ignore'
check "the lid opened" input lid open
check "undocked" input dock off
check "the lid closed, undocked" input lid close
check "standby entered" wait_for active
check "the lid opened" input lid open
check "standby left" wait_for inactive
check "nothing frozen" wait_for nothing_frozen

# 3. A desktop holds the lid as well (as gsd-power does): the lid is its,
# and standby freezes around the sleep it asks for.
vm_bg systemd-inhibit --what=handle-lid-switch --who=desktop --why="handles the lid" --mode=block sleep infinity
check "status names the desktop" wait_for status_says '^Lid also held by: desktop'
rm -f /run/app/prepared /run/app/resumed
journal_mark
check "the lid closed" input lid close
check "the listener left the lid to the desktop" waitlog -u standby-listener.service 'Lid closed: the lid is desktop'
check "standby not entered on the lid" inactive
check "the desktop asks for the sleep" systemctl suspend
check "the sleep hook ran" wait_for test -s /run/slept
check "mail.service was frozen when the machine slept" grep -qx 'frozen 1' /run/slept
check "the app had written its state first" test -s /run/app/prepared
check "after the sleep standby is left" wait_for inactive
check "status: the last sleep frozen" wait_for status_says '^Last sleep: frozen'
check "nothing frozen" wait_for nothing_frozen
check "the app got the after-signal" wait_for test -s /run/app/resumed
check "the lid opened" input lid open

# 4. A unit that cannot freeze (a task stuck in the kernel on a FUSE server
# that never answers, tests/helpers/fuse-stuck): before the sleep it is
# thawed again and named, the rest frozen, and the listener's delay lock
# closed before logind's InhibitDelayMaxSec (5 s) runs out.
check "modprobe fuse" modprobe fuse
systemd-run -q --unit=stuck.service -p Slice=workloads.slice sleep infinity
exec {stuck_out}< <(exec "$VM_TESTS/build/helpers/fuse-stuck" /sys/fs/cgroup/workloads.slice/stuck.service)
vm_pids+=($!)
stuck_ready() { local word pid; read -r -t "$VM_WAIT" -u "$stuck_out" word pid && [ "$word" = ready ]; }
check "a task of stuck.service is stuck in the kernel" stuck_ready
rm -f /run/slept /run/app/prepared /run/app/resumed
journal_mark
t0=$(date +%s.%N)
check "systemctl suspend" systemctl suspend
check "the sleep hook ran" wait_for test -s /run/slept
check "mail.service was frozen when the machine slept" grep -qx 'frozen 1' /run/slept
check "stuck.service was thawed again, not left half-frozen" grep -qx 'stuck freeze 0' /run/slept
check "the listener named it" waitlog -u standby-listener.service 'stuck\.service did not freeze within'
check "status names it" wait_for status_says '^Last sleep: frozen, but for what did not freeze in time and runs: workloads.slice/stuck.service'
in_time() { awk -v t0="$t0" '/^at / { exit !($2 - t0 < 5) }' /run/slept; }
check "the sleep came within logind's delay ($(awk -v t0="$t0" '/^at / { printf "%.1f s", $2 - t0 }' /run/slept))" in_time
check "logind's delay never ran out" sh -c "! journalctl -q -u systemd-logind --after-cursor='$vm_cursor' | grep -q 'inhibitor timeout'"
check "after the sleep standby is left" wait_for inactive
check "the app got the after-signal" wait_for test -s /run/app/resumed
check "mail.service running" wait_for is running mail.service
# The FUSE server goes (its stuck client with it), and so does stuck.service.
kill "${vm_pids[-1]}"
systemctl stop stuck.service

# 5. The policy changed and reloaded: the power key enters standby too,
# and any input (here the power key again) leaves it.
printf '[Standby]\nTargets=workloads.slice\nFreezeTimeout=5s\nEnterOn=lid power-key\nLeaveOn=input\n' \
        > /etc/standby/standby.conf
check "systemctl reload standby-listener.service" systemctl reload standby-listener.service
check "status: the reloaded policy" wait_for status_says '^Enters on: lid power-key$'
journal_mark
check "the power button pressed" input power press
check "the power key entered standby" wait_for active
check "the listener said why" waitlog -u standby-listener.service 'Entering standby \(power key\)'
check "mail.service frozen" wait_for is frozen mail.service
check "the power button pressed again" input power press
check "any input left standby" waitlog -u standby-listener.service 'Ending standby \(input\)'
check "standby.target inactive" wait_for inactive
check "nothing frozen" wait_for nothing_frozen
check "neither suspended nor powered off" inactive_unit poweroff.target
