#!/bin/sh
# The README's main job: set up, build, and run the default benchmark
# comparison on the built-in workloads (freeze vs. slack), then the
# enter/exit timing against the cgroup.freeze floor, then what the listener
# costs an event, then a short standby period on a booted Debian system
# (its rootfs is built once, by debootstrap, into
# /var/tmp/standby-bench-system). As root.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
make -j"$(nproc)"
build/standby-bench --self-check --output bench-results "$@"
build/standby-bench --enter-exit --reps 30 --output bench-results
build/standby-bench --listener --samples 200 --idle-seconds 10 --output bench-results
build/standby-bench --standby-period 20 --recovery-seconds 10 --thaw-interval 8 --thaw-window 2 \
        --strategies none,slack,freeze,freeze-windows,periodic --output bench-results
