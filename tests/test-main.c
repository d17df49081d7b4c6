/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one Check runner: every suite, on the real kernel where it needs one.
 * Check counts a test that returned early as passed; the tests record their
 * skips (test_skip()) in a file this runner names, and the runner prints,
 * after Check's own summary line, which tests skipped and why, and a closing
 * line "Tests: N passed, N failed, N skipped". A skip that
 * STANDBY_TEST_EXPECTED_SKIPS does not allow counts as a failure. */
#include <sys/stat.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "macro.h"
#include "strv.h"
#include "test-util.h"

static bool skip_expected(const char *test) {
        _cleanup_strv_free_ char **patterns = NULL;

        if (strv_split_words(getenv("STANDBY_TEST_EXPECTED_SKIPS") ?: "", &patterns) < 0)
                return false;
        for (char **p = patterns; p && *p; p++)
                if (fnmatch(*p, test, 0) == 0)
                        return true;
        return false;
}

/* Lists the recorded skips; returns how many there were, and in
 * *ret_unexpected how many of them the allow-list does not name. */
static int report_skips(const char *path, int *ret_unexpected) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        _cleanup_free_ char *line = NULL;
        size_t size = 0;
        int n = 0, unexpected = 0;

        *ret_unexpected = 0;
        if (!f)
                return 0;
        while (getline(&line, &size, f) > 0) {
                char *test = line, *reason = strchr(line, '\t');

                if (!reason)
                        continue;
                *reason++ = 0;
                reason[strcspn(reason, "\n")] = 0;
                bool ok = skip_expected(test);
                printf("SKIP %s: %s%s\n", test, reason,
                       ok ? "" : " [not in STANDBY_TEST_EXPECTED_SKIPS: counted as failed]");
                n++;
                unexpected += !ok;
        }
        *ret_unexpected = unexpected;
        return n;
}

int main(void) {
        char id[32], skip_file[] = "/tmp/standby-test-skips-XXXXXX";
        SRunner *sr;
        int failed, run, skipped, unexpected, fd;

        /* The rule and config files the tests write must be root's alone
         * (group- or world-writable ones are refused): whatever umask the
         * caller has, they are created 0644. */
        umask(022);
        /* Names this runner's test cgroups, so the sweep finds only its own. */
        snprintf(id, sizeof(id), "%d", (int) getpid());
        setenv("STANDBY_TEST_RUNNER", id, 1);
        fd = mkstemp(skip_file);
        if (fd < 0) {
                perror("mkstemp");
                return EXIT_FAILURE;
        }
        close(fd);
        setenv("STANDBY_TEST_SKIP_FILE", skip_file, 1);

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
        srunner_add_suite(sr, dispatch_suite());
        srunner_add_suite(sr, match_suite());
        srunner_add_suite(sr, listener_suite());
        srunner_add_suite(sr, units_suite());
        srunner_add_suite(sr, systemd_suite());
        srunner_add_suite(sr, hostile_suite());

        srunner_run_all(sr, CK_ENV); /* CK_VERBOSITY, CK_RUN_SUITE, CK_RUN_CASE apply */
        failed = srunner_ntests_failed(sr);
        run = srunner_ntests_run(sr);
        srunner_free(sr);
        test_env_sweep();

        fflush(stdout);
        skipped = report_skips(skip_file, &unexpected);
        (void) unlink(skip_file);
        /* Check counted the skipped tests as passed. A skipped test whose
         * teardown then failed is counted by both: it stays a failure. */
        int passed = MAX(run - failed - skipped, 0);
        printf("Tests: %d passed, %d failed, %d skipped\n", passed, failed + unexpected, skipped - unexpected);
        return failed == 0 && unexpected == 0 && run > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
