#!/bin/bash
# The input path with a real evdev device: the system-test rootfs with a
# Debian kernel, booted under qemu (software emulation: no KVM here), where
# `modprobe uinput` gives /dev/uinput. Inside: standby entered with
# standby.target, a virtual power button (uinput) pressed, the listener's
# Event=input rule ends standby, nothing stays frozen. Slow (an image build
# once, ~2 min; a boot, ~1 min): `make check-vm`, not part of CI.
set -eu
cd "$(dirname "$0")/../.."
work=${STANDBY_SYSTEM_TEST_DIR:-/var/tmp/standby-system-test}
vm=$work/vm
tests/system/rootfs.sh "$work"

# The VM's rootfs: the same, plus a kernel, an initrd and what the Check
# runner needs (built once; again when this list changes).
vm_packages="linux-image-amd64 initramfs-tools libsubunit0"
if [ ! -f "$vm/vmlinuz" ] || [ "$(cat "$vm/packages" 2>/dev/null)" != "$vm_packages" ]; then
        rm -rf "$vm" && mkdir -p "$vm"
        cp -a "$work/rootfs" "$vm/rootfs"
        cp /etc/resolv.conf "$vm/rootfs/etc/resolv.conf"
        unshare -m --propagation private sh -c '
                set -e; r=$0
                mount --bind /dev "$r/dev"; mount -t proc proc "$r/proc"; mount -t sysfs sys "$r/sys"
                chroot "$r" apt-get -qq update
                DEBIAN_FRONTEND=noninteractive chroot "$r" apt-get -y -qq install --no-install-recommends $1
                sed -i "s/^MODULES=.*/MODULES=list/" "$r/etc/initramfs-tools/initramfs.conf"
                printf "virtio_pci\nvirtio_blk\next4\n" >> "$r/etc/initramfs-tools/modules"
                chroot "$r" update-initramfs -u -k all
                chroot "$r" apt-get clean; rm -rf "$r/var/lib/apt/lists/"*
        ' "$vm/rootfs" "$vm_packages" > "$vm/kernel.log" 2>&1
        echo "$vm_packages" > "$vm/packages"
        cp "$vm"/rootfs/boot/vmlinuz-* "$vm/vmlinuz"
        cp "$vm"/rootfs/boot/initrd.img-* "$vm/initrd.img"
        echo '/dev/vda / ext4 rw 0 1' > "$vm/rootfs/etc/fstab"
fi
r=$vm/rootfs

# Standby, as a distribution installs it, and the test.
tests/system/install-standby.sh "$r"
# The Check tests of the real-device path (they skip where /dev/uinput is
# missing, as on the machines CI runs on), with the build they test.
t=$r/usr/local/lib/standby-tests
rm -rf "$t" && mkdir -p "$t/build"
cp -a build/test-standby build/standby-listener build/standby-manager build/standby-workload build/helpers "$t/build/"
cp -a tests/data "$t/data"
printf '[Standby]\nTargets=workloads.slice\nFreezeTimeout=5s\n' > "$r/etc/standby/standby.conf"
printf '[Match]\nEvent=input\nDevice=standby-test-power\nKey=KEY_POWER\nValue=1\n[Action]\nExitStandby=yes\n' \
        > "$r/etc/standby/rules.d/30-power.rule"
# The console is ours: a getty on it would hang up the test's output.
ln -sf /dev/null "$r/etc/systemd/system/serial-getty@ttyS0.service"
# logind would take the power key too (and power the VM off): the listener
# is the one to answer it here. On a laptop the two must agree likewise.
mkdir -p "$r/etc/systemd/logind.conf.d"
# The lid of the Check test's virtual switch likewise (logind would suspend).
printf '[Login]\nHandlePowerKey=ignore\nHandleLidSwitch=ignore\nHandleLidSwitchExternalPower=ignore\nHandleLidSwitchDocked=ignore\n' \
        > "$r/etc/systemd/logind.conf.d/standby-test.conf"
mkdir -p "$r/etc/systemd/system/multi-user.target.wants"
ln -sf /etc/systemd/system/mail.service "$r/etc/systemd/system/multi-user.target.wants/mail.service"
ln -sf /lib/systemd/system/standby-listener.service "$r/etc/systemd/system/multi-user.target.wants/standby-listener.service"
cat > "$r/usr/local/bin/vmtest.sh" <<'TEST'
#!/bin/bash
pass=0 fail=0
exec 2>&1
check() { local what=$1; shift; if "$@"; then pass=$((pass+1)); echo "ok   $what"; else fail=$((fail+1)); echo "FAIL $what"; fi; }
freezer() { systemctl show -p FreezerState --value mail.service; }
modprobe uinput
check "/dev/uinput exists" [ -e /dev/uinput ]
systemctl restart standby-listener.service   # it watches /dev/input from its start
check "systemctl start standby.target" systemctl start standby.target
check "mail.service frozen" [ "$(freezer)" = frozen ]
# The button is pressed (a line on its stdin) once the listener's journal
# says it watches it; each wait is on the journal itself, bounded to 20 s.
since=$(date '+%Y-%m-%d %H:%M:%S')
waitlog() { timeout 20 journalctl -q -f -o cat -u standby-listener.service --since "$since" | grep -m1 -q "$1"; }
mkfifo /run/press
/usr/local/bin/standby-workload power-button < /run/press &
button=$!
exec 3> /run/press
check "the listener opened the button" waitlog 'Watching input .*(standby-test-power)'
echo press >&3
check "the power button ended standby" waitlog 'Standby left'
check "standby-manager status: inactive" sh -c "standby-manager status | grep -q '^Standby: inactive'"
check "mail.service running" [ "$(freezer)" = running ]
exec 3>&-
wait $button
# The Check tests on the real device: the power button, and a lid opened
# while an overrun drops its event (the listener re-reads the switch).
systemctl stop standby-listener.service
out=$(cd /usr/local/lib/standby-tests && STANDBY_BUILD_DIR=build STANDBY_TEST_DATA=data CK_RUN_SUITE=listener \
        CK_RUN_CASE=uinput CK_VERBOSITY=verbose CK_TIMEOUT_MULTIPLIER=3 ./build/test-standby 2>&1)
echo "$out" | grep -E '^[0-9]+%|:[PFE]:|SKIP'
uinput_ok() { echo "$out" | grep -q '^100%: Checks: 2, Failures: 0, Errors: 0' && ! echo "$out" | grep -q SKIP; }
check "Check's uinput tests pass, none skipped" uinput_ok
journalctl -q -u standby-listener.service --no-pager | tail -n 5
echo "$pass passed, $fail failed"
TEST
chmod +x "$r/usr/local/bin/vmtest.sh"
cat > "$r/etc/systemd/system/vmtest.service" <<'UNIT'
[Unit]
After=multi-user.target
[Service]
Type=oneshot
ExecStart=/bin/sh -c '/usr/local/bin/vmtest.sh > /dev/ttyS0 2>&1'
ExecStopPost=/bin/sh -c 'journalctl -b -q --no-pager | tail -n 40 > /dev/ttyS0'
ExecStopPost=/bin/systemctl --no-block poweroff
[Install]
WantedBy=multi-user.target
UNIT
ln -sf /etc/systemd/system/vmtest.service "$r/etc/systemd/system/multi-user.target.wants/vmtest.service"

rm -f "$vm/root.img"
mkfs.ext4 -q -F -d "$r" "$vm/root.img" 1500M
timeout 600 qemu-system-x86_64 -accel tcg,thread=multi -cpu max -smp 2 -m 1024 -nodefaults -display none \
        -no-reboot -kernel "$vm/vmlinuz" -initrd "$vm/initrd.img" \
        -append "console=ttyS0 root=/dev/vda rw panic=-1 quiet" \
        -drive file="$vm/root.img",format=raw,if=virtio,cache=unsafe \
        -serial file:"$vm/serial.log" || true
grep -E '^(ok|FAIL) |passed, .* failed|standby-listener' "$vm/serial.log" || true
grep -q ' 0 failed' "$vm/serial.log"
