# Check's tests of the real-device path (CK_RUN_CASE=uinput: the power
# button, and a lid opened while an overrun drops its event), with the
# build they test; they skip where /dev/uinput is missing, and here no skip
# is allowed. Their power button and lid are seen by logind too, held back
# from powering off and suspending.
check "modprobe uinput" modprobe uinput
check "logind holds handle-power-key and handle-lid-switch inhibitors" inhibit handle-power-key:handle-lid-switch
systemctl stop standby-listener.service
uinput_case() {
        local out
        out=$(cd "$VM_TESTS" && STANDBY_BUILD_DIR=build STANDBY_TEST_DATA=data STANDBY_TEST_EXPECTED_SKIPS= \
                CK_RUN_SUITE=listener CK_RUN_CASE=uinput CK_VERBOSITY=verbose ./build/test-standby 2>&1)
        local rc=$?
        echo "$out" | grep -E '^[0-9]+%|:[PFE]:|SKIP|^Tests:'
        [ $rc = 0 ] && echo "$out" | grep -q '^Tests: 2 passed, 0 failed, 0 skipped'
}
check "Check's uinput tests pass, none skipped" uinput_case
