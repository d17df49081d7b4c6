#!/bin/bash
# In the VM, started by standby-vm.service once the system is up: runs the
# scenario the kernel command line names (standby.vm_scenario=NAME) with
# lib.sh, writes its output and, last, "summary PASSED FAILED" to the 9p
# share the host gave (mount tag "share"), and to the serial console.
lib=/usr/local/lib/standby-vm
share=/mnt/share
name=$(sed -n 's/.*standby\.vm_scenario=\([^ ]*\).*/\1/p' /proc/cmdline)
mkdir -p "$share"
if ! mount -t 9p -o trans=virtio,version=9p2000.L share "$share"; then
        echo "standby-vm: no 9p share" > /dev/ttyS0
        exit 1
fi
run() {
        . "$lib/lib.sh"
        say "== scenario $name"
        if [ -f "$lib/scenarios/$name.sh" ]; then
                . "$lib/scenarios/$name.sh"
                vm_done=1
        fi
        check "scenario $name ran to its end" [ "${vm_done:-}" = 1 ]
        # Its background processes, by PID.
        local pid
        for pid in "${vm_pids[@]}"; do kill "$pid" 2>/dev/null; done
        if [ "$vm_fail" != 0 ]; then
                say "-- the journal's last lines"
                journalctl -b -q --no-pager -n 60
        fi
        echo "summary $vm_pass $vm_fail" > "$share/summary"
}
run 2>&1 | tee "$share/output" > /dev/ttyS0
sync
umount "$share"
