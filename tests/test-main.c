/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one Check runner: every suite, on the real kernel where it needs one. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "test-util.h"

int main(void) {
        char id[32];
        SRunner *sr;
        int failed;

        /* Names this runner's test cgroups, so the sweep finds only its own. */
        snprintf(id, sizeof(id), "%d", (int) getpid());
        setenv("STANDBY_TEST_RUNNER", id, 1);

        sr = srunner_create(unit_name_suite());
        srunner_add_suite(sr, log_suite());
        srunner_add_suite(sr, config_suite());
        srunner_add_suite(sr, journal_suite());
        srunner_add_suite(sr, locks_suite());
        srunner_add_suite(sr, cgroup_suite());
        srunner_add_suite(sr, slack_suite());
        srunner_add_suite(sr, manager_suite());
        srunner_add_suite(sr, crash_suite());
        srunner_add_suite(sr, bench_suite());
        srunner_add_suite(sr, rules_suite());
        srunner_add_suite(sr, dbus_wire_suite());
        srunner_add_suite(sr, listener_suite());
        srunner_add_suite(sr, units_suite());
        srunner_add_suite(sr, systemd_suite());
        srunner_add_suite(sr, hostile_suite());

        srunner_run_all(sr, CK_ENV); /* CK_VERBOSITY, CK_RUN_SUITE, CK_RUN_CASE apply */
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        test_env_sweep();
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
