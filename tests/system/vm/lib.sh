# shellcheck shell=bash
# Sourced in the VM before a scenario (tests/system/vm/scenarios/NAME.sh):
# what a scenario checks with, waits with and drives input with. Every wait
# is on an event or a state, with a bound ($VM_WAIT seconds, 20 unless set).
VM_WAIT=${VM_WAIT:-20}
VM_TESTS=/usr/local/lib/standby-tests
vm_pass=0 vm_fail=0 vm_pids=()

say() { printf '%s\n' "$*"; }

# check DESCRIPTION COMMAND...: one "ok"/"FAIL" line, counted.
check() {
        local what=$1; shift
        if "$@"; then vm_pass=$((vm_pass + 1)); say "ok   $what"; else vm_fail=$((vm_fail + 1)); say "FAIL $what"; fi
}

# vm_bg COMMAND...: runs it in the background; the runner stops it by its
# PID when the scenario ends.
vm_bg() {
        "$@" &
        vm_pids+=($!)
}

# journal_mark, then waitlog [-u UNIT] REGEX: a journal message logged
# after the mark, by UNIT if given, within $VM_WAIT seconds; REGEX
# (extended) is matched against the message as JSON writes it (" and \
# escaped). The unit is matched here, not by journalctl -u: with a match,
# journalctl 252 --after-cursor skips the first entry that matches. Its -f
# is stopped by PID as soon as the line is read.
journal_mark() { vm_cursor=$(journalctl -q -n 1 -o export | sed -n 's/^__CURSOR=//p'); }
waitlog() {
        local unit='' line rc=1 fd pid
        local re_unit='"_SYSTEMD_UNIT":"([^"]*)"' re_msg='"MESSAGE":"(([^"\\]|\\.)*)"'
        if [ "$1" = -u ]; then unit=$2; shift 2; fi
        [[ -z $unit || $unit == *.* ]] || unit=$unit.service
        exec {fd}< <(exec timeout "$VM_WAIT" journalctl -q -f -o json --after-cursor="$vm_cursor")
        pid=$!
        while IFS= read -r -u "$fd" line; do
                if [ -n "$unit" ]; then
                        [[ $line =~ $re_unit && ${BASH_REMATCH[1]} == "$unit" ]] || continue
                fi
                if [[ $line =~ $re_msg ]] && [[ ${BASH_REMATCH[1]} =~ $1 ]]; then
                        rc=0
                        break
                fi
        done
        kill "$pid" 2> /dev/null
        exec {fd}<&-
        return $rc
}

# wait_for COMMAND...: COMMAND true within $VM_WAIT seconds, tried every
# 100 ms (for states nothing announces, as systemd's FreezerState).
wait_for() {
        local i
        for ((i = 0; i < VM_WAIT * 10; i++)); do
                "$@" && return 0
                sleep 0.1
        done
        return 1
}

# input_start: a lid switch ("standby-vm-lid", open) and a power button
# ("standby-vm-power") through /dev/uinput (tests/helpers/input-devices),
# their nodes in $VM_LID and $VM_POWER once udev has handled them (so
# logind's "power-switch" tag is set). input COMMAND: "lid close", "lid
# open", "power press", "power down", "power up", done when it returns.
input_start() {
        local ready
        modprobe uinput || return 1
        exec {vm_input_out}< <(exec "$VM_TESTS/build/helpers/input-devices" /run/standby-vm-input)
        vm_pids+=($!)
        read -r -t "$VM_WAIT" -u "$vm_input_out" ready VM_LID VM_POWER && [ "$ready" = ready ] || return 1
        udevadm settle --timeout="$VM_WAIT"
}
input() {
        local line
        echo "$*" > /run/standby-vm-input
        while read -r -t "$VM_WAIT" -u "$vm_input_out" line; do
                [ "$line" = "done $*" ] && return 0
        done
        return 1
}

# A unit's freezer state as systemd sees it; for wait_for.
freezer() { systemctl show -p FreezerState --value "$1"; }
running() { [ "$(freezer "$1")" = running ]; }
inactive() { ! systemctl -q is-active "$1"; }

# inhibit WHAT: a block inhibitor lock on WHAT (handle-power-key,
# handle-lid-switch, colon-separated), held as a desktop session holds one
# so that logind leaves the key or the lid to others, while the scenario runs.
inhibit() {
        vm_bg systemd-inhibit --what="$1" --who="standby-vm-$1" --why="the test answers it" --mode=block sleep infinity
        wait_for sh -c "systemd-inhibit --list --no-legend | grep -q -F 'standby-vm-$1'"
}
