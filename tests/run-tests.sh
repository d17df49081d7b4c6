#!/bin/sh
# Runs the Check runner against the binaries of one build directory.
# Usage: tests/run-tests.sh BUILD_DIR
set -eu
build=${1:-build}
export STANDBY_BUILD_DIR="$build"
# The listener runs this build's standby-manager for its exits and the
# freeze before a sleep, not the installed one.
STANDBY_LISTENER_MANAGER_PATH="$(cd "$build" && pwd)/standby-manager"
export STANDBY_LISTENER_MANAGER_PATH
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
# The skips this machine is expected to have (fnmatch patterns of test
# names, space-separated); any other skip fails the run, as a failure would.
# The uinput tests need /dev/uinput, which a VM or container may lack
# (`make check-vm` runs them where it exists).
if [ -z "${STANDBY_TEST_EXPECTED_SKIPS+set}" ]; then
        STANDBY_TEST_EXPECTED_SKIPS=
        [ -w /dev/uinput ] || STANDBY_TEST_EXPECTED_SKIPS="test_input_uinput_*"
fi
export STANDBY_TEST_EXPECTED_SKIPS
# Every standby period a test ends writes its report: into a directory of
# this run's, never the machine's /var/lib/standby/reports.
reports=$(mktemp -d /tmp/standby-test-reports.XXXXXX)
export STANDBY_REPORT_DIR="$reports/reports"
echo "== tests: $build =="
rc=0
"$build/test-standby" || rc=$?
rm -rf "$reports"
exit $rc
