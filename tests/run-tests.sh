#!/bin/sh
# Runs the Check runner against the binaries of one build directory.
# Usage: tests/run-tests.sh BUILD_DIR
set -eu
build=${1:-build}
export STANDBY_BUILD_DIR="$build"
export CK_VERBOSITY="${CK_VERBOSITY:-normal}"
case "$build" in
*san*)
        # Sanitizer reports fail the run; leaks are reported but the forked
        # test children exit through _exit, where LeakSanitizer cannot judge.
        export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1}"
        export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
        ;;
esac
echo "== tests: $build =="
exec "$build/test-standby"
