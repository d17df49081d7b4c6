#!/bin/sh
# Runs the Check runner against the binaries of one build directory.
# Usage: tests/run-tests.sh BUILD_DIR
set -eu
build=${1:-build}
export STANDBY_BUILD_DIR="$build"
export CK_VERBOSITY="${CK_VERBOSITY:-normal}"
case "$build" in
*san*)
        # Sanitizer reports fail the run, leaks included: LeakSanitizer runs
        # as each program exits (the manager's runs, the listener's SIGTERM,
        # each forked test), and a report makes that exit fail.
        export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
        export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
        ;;
esac
echo "== tests: $build =="
exec "$build/test-standby"
