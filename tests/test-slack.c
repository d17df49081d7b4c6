/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cgroup.h"
#include "macro.h"
#include "proc.h"
#include "slack.h"
#include "test-util.h"

START_TEST(test_probe_max) {
        uint64_t max, before, after;

        if (!test_need_root_cgroup2())
                return;
        ck_assert_int_eq(slack_get(gettid(), &before), 0);
        ck_assert_int_eq(slack_probe_max(&max), 0);
        ck_assert_uint_ge(max, 1000000000ULL);
        ck_assert_int_eq(slack_get(gettid(), &after), 0);
        ck_assert_uint_eq(before, after);
}
END_TEST

/* The kernel keeps slack per thread: setting one thread leaves its siblings. */
START_TEST(test_per_thread) {
        _cleanup_free_ pid_t *tids = NULL;
        size_t n = 0;
        uint64_t v, eff;
        int tick;

        if (!test_need_root_cgroup2())
                return;
        pid_t pid = test_spawn_workload("t.service", "nanosleep", 10, 4, &tick);
        /* Threads exist once each has ticked. */
        ck_assert_int_eq(test_ticks(tick, 8, 5 * USEC_PER_SEC), 8);
        ck_assert_int_eq(proc_list_tids(pid, &tids, &n), 0);
        ck_assert_uint_eq(n, 4);

        pid_t other = tids[0] == pid ? tids[1] : tids[0];
        ck_assert_int_eq(slack_set(other, 123456789, &eff), 0);
        ck_assert_uint_eq(eff, 123456789);
        for (size_t i = 0; i < n; i++) {
                ck_assert_int_eq(slack_get(tids[i], &v), 0);
                ck_assert_uint_eq(v, tids[i] == other ? 123456789 : SLACK_KERNEL_DEFAULT_NS);
        }
        /* Writing 0 asks for the thread's default again. */
        ck_assert_int_eq(slack_set(other, 0, &eff), 0);
        ck_assert_uint_eq(eff, SLACK_KERNEL_DEFAULT_NS);
        ck_assert_int_eq(slack_get(gettid() + 0x3fffff, &v) < 0, 1);
}
END_TEST

Suite *slack_suite(void) {
        Suite *s = suite_create("slack");
        TCase *tc = test_kernel_tcase(s, "kernel", 0);
        tcase_add_test(tc, test_probe_max);
        tcase_add_test(tc, test_per_thread);
        return s;
}
