/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kill -9 of standby-manager at every kind of point of enter and exit, then
 * `standby-manager exit`: no process left frozen, no slack left changed.
 * STANDBY_TEST_CRASH_AFTER=N makes the manager SIGKILL itself right after its
 * N-th state change (journal save, freeze/thaw write, slack write). */
#include <signal.h>
#include <stdio.h>

#include "macro.h"
#include "proc.h"
#include "slack.h"
#include "standby.h"
#include "test-util.h"

#define UNITS 40
#define PROCS 3

static pid_t pids[UNITS * PROCS];

static void spawn_units(const char *kind, int threads) {
        char sub[64];
        for (int u = 0; u < UNITS; u++) {
                snprintf(sub, sizeof(sub), "crash.slice/u%02d.service", u);
                for (int p = 0; p < PROCS; p++)
                        pids[u * PROCS + p] = test_spawn_workload(sub, kind, 50, threads, NULL);
        }
}

static int enter_crashing(const char *strategy, uint64_t after) {
        char env[64], arg[32];
        snprintf(env, sizeof(env), "STANDBY_TEST_CRASH_AFTER=%llu", (unsigned long long) after);
        snprintf(arg, sizeof(arg), "--strategy=%s", strategy);
        return test_manager_env(env, NULL, NULL, "--quiet", "enter", arg, NULL);
}

static int exit_crashing(uint64_t after) {
        char env[64];
        snprintf(env, sizeof(env), "STANDBY_TEST_CRASH_AFTER=%llu", (unsigned long long) after);
        return test_manager_env(env, NULL, NULL, "--quiet", "exit", NULL);
}

/* Freeze: steps are 1 journal save, UNITS freeze writes, 1 save. */
START_TEST(test_crash_during_freeze_enter) {
        static const uint64_t points[] = { 1, 2, UNITS / 2, UNITS + 1, UNITS + 2 };

        if (!test_need_root_cgroup2())
                return;
        spawn_units("idle", 1);
        for (size_t i = 0; i < ELEMENTSOF(points); i++) {
                ck_assert_int_eq(enter_crashing("freeze", points[i]), 128 + SIGKILL);
                if (points[i] > 1)
                        ck_assert_msg(test_anything_frozen(), "point %llu froze nothing", (unsigned long long) points[i]);
                /* A crashed enter still blocks a new one: the journal says so. */
                ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_ALREADY);
                ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
                ck_assert_msg(!test_anything_frozen(), "frozen after recovery from point %llu",
                              (unsigned long long) points[i]);
        }
}
END_TEST

/* Exit: 1 save, then the thaw writes of UNITS, then the final save. */
START_TEST(test_crash_during_freeze_exit) {
        static const uint64_t points[] = { 1, 2, UNITS / 2, UNITS + 1 };

        if (!test_need_root_cgroup2())
                return;
        spawn_units("idle", 1);
        for (size_t i = 0; i < ELEMENTSOF(points); i++) {
                ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
                ck_assert_int_eq(exit_crashing(points[i]), 128 + SIGKILL);
                ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
                ck_assert(!test_anything_frozen());
        }
}
END_TEST

static uint64_t original[UNITS * PROCS][2];
static pid_t tids[UNITS * PROCS][2];

/* Gives every second thread a slack of its own, and records all originals. */
static void record_slack(void) {
        for (int i = 0; i < UNITS * PROCS; i++) {
                _cleanup_free_ pid_t *t = NULL;
                size_t n = 0;
                ck_assert_int_eq(proc_list_tids(pids[i], &t, &n), 0);
                ck_assert_uint_eq(n, 2);
                for (int k = 0; k < 2; k++) {
                        tids[i][k] = t[k];
                        if (k == 1)
                                ck_assert_int_eq(slack_set(t[k], 100000 + (uint64_t) i, NULL), 0);
                        ck_assert_int_eq(slack_get(t[k], &original[i][k]), 0);
                }
        }
}

static void assert_slack_restored(uint64_t point) {
        for (int i = 0; i < UNITS * PROCS; i++)
                for (int k = 0; k < 2; k++) {
                        uint64_t v;
                        ck_assert_int_eq(slack_get(tids[i][k], &v), 0);
                        ck_assert_msg(v == original[i][k], "point %llu: thread %d has slack %llu, had %llu",
                                      (unsigned long long) point, (int) tids[i][k], (unsigned long long) v,
                                      (unsigned long long) original[i][k]);
                }
}

static bool has_two_threads(void *userdata) {
        _cleanup_free_ pid_t *t = NULL;
        size_t n = 0;
        return proc_list_tids(*(pid_t *) userdata, &t, &n) >= 0 && n == 2;
}

/* Slack: a save, then per pass a save and one write per thread (240 here). */
START_TEST(test_crash_during_slack) {
        static const uint64_t points[] = { 1, 2, 3, 120, 241, 242, 243 };
        static const uint64_t exit_points[] = { 1, 2, 100, 241, 242, 250 };

        if (!test_need_root_cgroup2())
                return;
        spawn_units("nanosleep", 2);
        /* Each workload's second thread exists once it has started: wait for two tids. */
        for (int i = 0; i < UNITS * PROCS; i++)
                ck_assert(test_wait_for(has_two_threads, &pids[i], 5 * USEC_PER_SEC));
        record_slack();

        for (size_t i = 0; i < ELEMENTSOF(points); i++) {
                int code = enter_crashing("slack", points[i]);
                ck_assert_msg(code == 128 + SIGKILL || (code == 0 && points[i] > 241), "point %llu: exit %d",
                              (unsigned long long) points[i], code);
                ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
                assert_slack_restored(points[i]);
                ck_assert(!test_anything_frozen());
        }
        for (size_t i = 0; i < ELEMENTSOF(exit_points); i++) {
                ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", "--strategy=slack", NULL), EXIT_OK);
                int code = exit_crashing(exit_points[i]);
                ck_assert_msg(code == 128 + SIGKILL || code == 0, "exit point %llu: %d", (unsigned long long) exit_points[i],
                              code);
                if (code != 0)
                        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
                assert_slack_restored(exit_points[i]);
                ck_assert_msg(!test_anything_frozen(), "exit point %llu left a kick frozen",
                              (unsigned long long) exit_points[i]);
        }
}
END_TEST

/* A strategy per unit: u00-u13 frozen, u14-u26 slacked with a bound of
 * 30 s, u27-u39 left alone. Steps: the save naming the frozen and left
 * units, 14 freeze writes, the save naming the slacked ones, one write per
 * slacked thread (78), the last save. Killed anywhere in enter or exit,
 * exit gives every thread its own slack back and leaves nothing frozen. */
START_TEST(test_crash_during_unit_strategies) {
        static const uint64_t points[] = { 1, 2, 8, 15, 16, 17, 50, 94, 95, 96, 97 };

        if (!test_need_root_cgroup2())
                return;
        test_write_config("[Strategy]\nSlack=30s u1[4-9].service u2[0-6].service\nNone=u2[7-9].service u3?.service\n");
        spawn_units("nanosleep", 2);
        for (int i = 0; i < UNITS * PROCS; i++)
                ck_assert(test_wait_for(has_two_threads, &pids[i], 5 * USEC_PER_SEC));
        record_slack();

        for (size_t i = 0; i < ELEMENTSOF(points); i++) {
                char env[64];
                snprintf(env, sizeof(env), "STANDBY_TEST_CRASH_AFTER=%llu", (unsigned long long) points[i]);
                int code = test_manager_env(env, NULL, NULL, "--quiet", "enter", NULL);
                ck_assert_msg(code == 128 + SIGKILL || (code == 0 && points[i] > 90), "point %llu: exit %d",
                              (unsigned long long) points[i], code);
                if (code == 128 + SIGKILL && points[i] > 1)
                        /* A crashed enter still blocks a new one: the journal says so. */
                        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_ALREADY);
                ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
                assert_slack_restored(points[i]);
                ck_assert_msg(!test_anything_frozen(), "frozen after recovery from point %llu",
                              (unsigned long long) points[i]);
        }
        /* Entered whole, the bound is on the slacked units only; an exit
         * killed part-way is finished by the next. */
        static const uint64_t exit_points[] = { 1, 2, 40, 79, 85, 100, 0 };
        for (size_t i = 0; i < ELEMENTSOF(exit_points); i++) {
                ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
                for (int k = 0; k < UNITS * PROCS; k++) {
                        uint64_t v;
                        int u = k / PROCS;
                        ck_assert_int_eq(slack_get(tids[k][0], &v), 0);
                        ck_assert_msg(u < 14 || u > 26 ? v == original[k][0] : v == UINT64_C(30000000000),
                                      "unit %d: slack %llu", u, (unsigned long long) v);
                }
                int code = exit_crashing(exit_points[i]);
                ck_assert_msg(code == 128 + SIGKILL || code == 0, "exit point %llu: %d",
                              (unsigned long long) exit_points[i], code);
                if (code != 0)
                        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
                assert_slack_restored(exit_points[i]);
                ck_assert_msg(!test_anything_frozen(), "exit point %llu left something frozen",
                              (unsigned long long) exit_points[i]);
        }
}
END_TEST

Suite *crash_suite(void) {
        Suite *s = suite_create("crash");
        TCase *tc = test_kernel_tcase(s, "kill-9", 180);
        tcase_add_test(tc, test_crash_during_freeze_enter);
        tcase_add_test(tc, test_crash_during_freeze_exit);
        tcase_add_test(tc, test_crash_during_slack);
        tcase_add_test(tc, test_crash_during_unit_strategies);
        return s;
}
