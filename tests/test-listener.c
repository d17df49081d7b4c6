/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* standby-listener end to end: a real dbus-daemon on a private address, the
 * real listener binary, real frozen processes woken by real events. The one
 * suite "listener": its cases are made here, and each
 * test-listener-<concern>.c adds its tests to them (listener-harness.h). */
#include <stdio.h>
#include <stdlib.h>

#include "listener-harness.h"
#include "test-util.h"

/* After a failed test (its teardown never ran): its bus and rules directory,
 * and its network namespace. */
static void listener_sweep(void) {
        char cmd[300];
        test_env_sweep();
        snprintf(cmd, sizeof(cmd), "rm -rf /tmp/standby-listener-test.%s.*", test_runner_id());
        (void) !system(cmd);
        /* And its network namespaces (ip-netns(8) names in /run/netns). */
        snprintf(cmd, sizeof(cmd),
                 "for n in /run/netns/standby-test-%s-*; do [ -e \"$n\" ] && ip netns del \"${n##*/}\"; done; true",
                 test_runner_id());
        (void) !system(cmd);
}

/* A test case on the listener's usual fixtures (a private bus, a test
 * cgroup tree; swept after the case), added to s. */
static TCase *listener_tcase(Suite *s, const char *name, int timeout) {
        TCase *tc = tcase_create(name);
        tcase_set_timeout(tc, timeout);
        tcase_add_checked_fixture(tc, listener_setup, listener_teardown);
        tcase_add_unchecked_fixture(tc, NULL, listener_sweep);
        suite_add_tcase(s, tc);
        return tc;
}

/* A test case with a systemd --user manager of the test's
 * (setup_user_manager()), added to s. */
static TCase *user_manager_tcase(Suite *s, const char *name, int timeout) {
        TCase *tc = tcase_create(name);
        tcase_set_timeout(tc, timeout);
        tcase_add_checked_fixture(tc, setup_user_manager, teardown_user_manager);
        tcase_add_unchecked_fixture(tc, NULL, listener_sweep);
        suite_add_tcase(s, tc);
        return tc;
}

Suite *listener_suite(void) {
        Suite *s = suite_create("listener");
        ListenerCases c = {};

        c.dbus = listener_tcase(s, "dbus", 60);
        /* A case of their own, so that `make check-vm` runs just these where
         * /dev/uinput exists (CK_RUN_CASE=uinput); they skip elsewhere. */
        c.uinput = listener_tcase(s, "uinput", 120);
        /* Who may wake what. */
        c.trust = listener_tcase(s, "trust", 60);
        /* The listener's loop never waits: not for a unit stuck at its
         * window's end, nor for a stopped systemd manager. */
        c.loop = listener_tcase(s, "loop", 90);
        /* Thaws asked over the bus: their windows are the listener's, their
         * replies say what they did. */
        c.window = listener_tcase(s, "window", 60);
        /* New work started during standby is held. */
        c.hold = listener_tcase(s, "hold", 60);
        c.user_socket = listener_tcase(s, "user-socket", 60);
        /* The interface as a desktop client meets it: properties, signals,
         * Enter and Exit, and who may call them. */
        c.bus_api = listener_tcase(s, "bus-api", 60);
        c.loop_systemd = user_manager_tcase(s, "loop-systemd", 90);
        /* A minute and more of standby: a case of its own, for its bound. */
        c.systemd_spare = user_manager_tcase(s, "systemd-spare", 150);

        listener_push_tests(&c);
        listener_inhibit_tests(&c);
        listener_lifecycle_tests(&c);
        listener_dbus_rules_tests(&c);
        listener_network_tests(&c);
        listener_socket_tests(&c);
        listener_input_tests(&c);
        listener_trust_tests(&c);
        listener_forged_tests(&c);
        listener_loop_tests(&c);
        listener_run_manager_tests(&c);
        listener_systemd_tests(&c);
        listener_window_tests(&c);
        listener_hold_tests(&c);
        listener_bus_api_tests(&c);
        listener_strategy_tests(&c);
        return s;
}
