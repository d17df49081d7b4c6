#!/bin/bash
# `make check-vm`: what needs a kernel of its own (/dev/uinput, real input
# devices that systemd-logind and the listener both read). The system-test
# rootfs with a Debian kernel, booted under qemu once per scenario
# (tests/system/vm/scenarios/NAME.sh, all of them, or those named in
# STANDBY_VM_SCENARIOS), each boot from the same image (qemu's snapshot=on:
# nothing a scenario changes outlasts it). In the VM, standby-vm.service
# runs the scenario with tests/system/vm/lib.sh (check, waitlog, input ...)
# and writes its lines and a summary to a 9p share; here they are printed,
# and a summary line closes the output.
#
# As root, from the source tree after `make`. Installs what it needs
# (scripts/install-deps.sh --vm). KVM where /dev/kvm can run Debian's kernel
# (see kvm_usable); otherwise software emulation (TCG, 20-50 s a scenario
# here), said so. STANDBY_VM_ACCEL=kvm|tcg chooses; kvm then fails rather
# than falls back. The image (kernel, initrd, packages) is cached under
# $STANDBY_SYSTEM_TEST_DIR/vm (/var/tmp/standby-system-test/vm) and rebuilt
# when its package list changes; share the cache under
# `flock /var/tmp/standby-check-vm.lock`.
set -eu
cd "$(dirname "$0")/../.."
work=${STANDBY_SYSTEM_TEST_DIR:-/var/tmp/standby-system-test}
vm=$work/vm
say() { printf 'check-vm: %s\n' "$*"; }
die() {
        say "$*" >&2
        exit 1
}

[ "$(id -u)" = 0 ] || die "run as root (debootstrap, chroot and the image need it)"
scripts/install-deps.sh --vm
for tool in qemu-system-x86_64 mkfs.ext4 debootstrap unshare; do
        command -v "$tool" > /dev/null || die "$tool is missing (scripts/install-deps.sh --vm installs it)"
done
for f in build/test-standby build/helpers/input-devices build/standby-listener; do
        [ -x "$f" ] || die "$f is missing: run make first (make check-vm builds it)"
done

# KVM runs a stock kernel (Debian's) only with the CPU's virtualization
# extensions (vmx, svm); a /dev/kvm without them, such as the PVM of this
# project's nested VMs (kvm_pvm), runs only kernels built as its guests:
# Debian's hangs in its decompressor there.
kvm_usable() {
        [ -c /dev/kvm ] && [ -r /dev/kvm ] && [ -w /dev/kvm ] && grep -q -w -E 'vmx|svm' /proc/cpuinfo
}
accel=${STANDBY_VM_ACCEL:-auto}
if [ "$accel" = auto ]; then
        if kvm_usable; then
                accel=kvm
        elif [ -e /dev/kvm ]; then
                accel=tcg
                say "/dev/kvm, but no vmx or svm CPU flag: it cannot run Debian's kernel; software emulation (TCG)"
        else
                accel=tcg
                say "no /dev/kvm: software emulation (TCG)"
        fi
fi
case $accel in
kvm)
        kvm_usable || die "STANDBY_VM_ACCEL=kvm, but /dev/kvm cannot be opened or the CPU has no vmx or svm"
        # The host's CPU, less IA32_ARCH_CAPABILITIES: a nested KVM (as on
        # this project's AMD VMs) refuses that MSR and qemu aborts.
        qemu_accel=(-accel kvm -cpu host,-arch-capabilities)
        boot_timeout=${STANDBY_VM_TIMEOUT:-180}
        ;;
tcg)
        qemu_accel=(-accel tcg,thread=multi -cpu max)
        boot_timeout=${STANDBY_VM_TIMEOUT:-600}
        ;;
*) die "STANDBY_VM_ACCEL is kvm, tcg or auto, not \"$accel\"" ;;
esac

if [ -n "${STANDBY_VM_SCENARIOS:-}" ]; then
        read -r -a scenarios <<< "$STANDBY_VM_SCENARIOS"
else
        scenarios=()
        for f in tests/system/vm/scenarios/*.sh; do
                f=${f##*/}
                scenarios+=("${f%.sh}")
        done
fi
for s in "${scenarios[@]}"; do
        [ -f "tests/system/vm/scenarios/$s.sh" ] || die "no scenario $s (tests/system/vm/scenarios/$s.sh)"
done

tests/system/rootfs.sh "$work"

# The VM's rootfs: the same, plus a kernel, an initrd and what the Check
# runner needs (built once; again when this list changes).
vm_packages="linux-image-amd64 initramfs-tools libsubunit0"
if [ ! -f "$vm/vmlinuz" ] || [ "$(cat "$vm/packages" 2> /dev/null)" != "$vm_packages" ]; then
        say "building the VM image (a kernel from the Debian archive, about a minute)"
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
        ' "$vm/rootfs" "$vm_packages" > "$vm/kernel.log" 2>&1 || die "the VM image failed to build: see $vm/kernel.log"
        cp "$vm"/rootfs/boot/vmlinuz-* "$vm/vmlinuz"
        cp "$vm"/rootfs/boot/initrd.img-* "$vm/initrd.img"
        echo '/dev/vda / ext4 rw 0 1' > "$vm/rootfs/etc/fstab"
        echo "$vm_packages" > "$vm/packages"
fi
r=$vm/rootfs

# Standby, as a distribution installs it, the Check runner and the test
# helpers with the build they test, and the scenarios.
tests/system/install-standby.sh "$r"
printf '[Standby]\nTargets=workloads.slice\nFreezeTimeout=5s\n' > "$r/etc/standby/standby.conf"
rm -f "$r"/etc/standby/rules.d/*.rule
mkdir -p "$r/etc/systemd/system/multi-user.target.wants"
ln -sf /etc/systemd/system/mail.service "$r/etc/systemd/system/multi-user.target.wants/mail.service"
ln -sf /lib/systemd/system/standby-listener.service "$r/etc/systemd/system/multi-user.target.wants/standby-listener.service"
t=$r/usr/local/lib/standby-tests
rm -rf "$t" && mkdir -p "$t/build"
cp -a build/test-standby build/standby-listener build/standby-manager build/standby-workload build/helpers "$t/build/"
cp -a tests/data "$t/data"
rm -rf "$r/usr/local/lib/standby-vm" && mkdir -p "$r/usr/local/lib/standby-vm"
cp -a tests/system/vm/lib.sh tests/system/vm/runner.sh tests/system/vm/scenarios "$r/usr/local/lib/standby-vm/"
# The console is the runner's: a getty on it would hang up its output.
ln -sf /dev/null "$r/etc/systemd/system/serial-getty@ttyS0.service"
cat > "$r/etc/systemd/system/standby-vm.service" << 'UNIT'
[Unit]
Description=Runs the check-vm scenario, then powers off
After=multi-user.target
[Service]
Type=oneshot
ExecStart=/usr/local/lib/standby-vm/runner.sh
ExecStopPost=/bin/systemctl --no-block poweroff
[Install]
WantedBy=multi-user.target
UNIT
ln -sf /etc/systemd/system/standby-vm.service "$r/etc/systemd/system/multi-user.target.wants/standby-vm.service"
rm -f "$vm/root.img"
mkfs.ext4 -q -F -d "$r" "$vm/root.img" 1500M

# One boot per scenario. qemu is stopped by its PID if the bound passes or
# this script is stopped.
qemu_pid=
trap '[ -z "$qemu_pid" ] || kill "$qemu_pid" 2> /dev/null || true' EXIT
passed=0 failed=0
for s in "${scenarios[@]}"; do
        share=$vm/run/$s
        rm -rf "$share" && mkdir -p "$share"
        start=$(date +%s)
        timeout --kill-after=10 "$boot_timeout" qemu-system-x86_64 "${qemu_accel[@]}" -smp 2 -m 1024 \
                -nodefaults -display none -no-reboot \
                -kernel "$vm/vmlinuz" -initrd "$vm/initrd.img" \
                -append "console=ttyS0 root=/dev/vda rw panic=-1 quiet standby.vm_scenario=$s" \
                -drive file="$vm/root.img",format=raw,if=virtio,cache=unsafe,snapshot=on \
                -virtfs local,path="$share",mount_tag=share,security_model=none,id=share \
                -serial file:"$share/serial.log" > "$share/qemu.log" 2>&1 &
        qemu_pid=$!
        rc=0
        wait "$qemu_pid" || rc=$?
        qemu_pid=
        [ -f "$share/output" ] && cat "$share/output"
        if { read -r word p f < "$share/summary"; } 2> /dev/null && [ "$word" = summary ]; then
                passed=$((passed + p)) failed=$((failed + f))
                say "scenario $s: $p passed, $f failed ($(($(date +%s) - start)) s, $accel)"
        else
                failed=$((failed + 1))
                what="qemu exit status $rc"
                [ "$rc" != 124 ] || what="no poweroff within $boot_timeout s"
                say "FAIL scenario $s: no result ($what); the console's and qemu's last lines:"
                tail -n 30 "$share/serial.log" "$share/qemu.log" 2> /dev/null || true
        fi
done
say "${#scenarios[@]} scenarios ($accel): $passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
