#!/bin/sh
# The README's test command, and what CI runs: set up, build with warnings as
# errors, build the Debian package and lint it, and run every test: a booted
# Debian under systemd-nspawn with that package installed, the same under
# qemu where /dev/kvm is (check-vm: input devices that logind and the
# listener read), then the Check suites, plain and under ASan+UBSan. As root.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/check-license.sh
make clean
make -j"$(nproc)" WERROR=1 all
# No cycle of calls between the listener's files (freezer/ and bench/ are
# reported): sources -> dispatch -> state -> actuators, read from the objects.
python3 scripts/call-cycles.py build
# Each parser's fuzz target for a short while (clang's libFuzzer).
make WERROR=1 fuzz FUZZ_SECONDS=20
# The Debian package, built from a copy of the tree and checked by lintian
# (an error or a warning fails); the full-system tests install this .deb.
scripts/build-deb.sh
STANDBY_DEB=$(ls "$PWD"/build/deb/standby_*_"$(dpkg --print-architecture)".deb)
export STANDBY_DEB
# The full-system tests first, so that Check's summary lines close the output.
make WERROR=1 check-system
if [ -e /dev/kvm ]; then
        # The VM image cache is shared with whoever else runs check-vm here.
        flock /var/tmp/standby-check-vm.lock make WERROR=1 check-vm
else
        echo "check-vm: not run: no /dev/kvm (make check-vm runs it under software emulation)"
fi
make WERROR=1 check
