#!/bin/sh
# The README's test command, and what CI runs: set up, build with warnings as
# errors, and run every test, plain and under ASan+UBSan. As root.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
make clean
make -j"$(nproc)" WERROR=1 all
make WERROR=1 check
