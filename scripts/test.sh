#!/bin/sh
# The README's test command, and what CI runs: set up, build with warnings as
# errors, and run every test: a booted Debian under systemd-nspawn, then the
# Check suites, plain and under ASan+UBSan. As root.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
make clean
make -j"$(nproc)" WERROR=1 all
# Each parser's fuzz target for a short while (clang's libFuzzer).
make WERROR=1 fuzz FUZZ_SECONDS=20
# The full-system test first, so that Check's summary lines close the output.
make WERROR=1 check-system
make WERROR=1 check
