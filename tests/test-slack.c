/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>

#include "../bench/bench.h"
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

/* The kernel facts the slack strategy rests on, per wakeup kind (see
 * docs/design.md, "The slack strategy, and what it breaks"). Each probe is a
 * child process whose slack is set from here, as standby sets it; the slack
 * a timer got is its range in /proc/timer_list (hard minus soft expiry),
 * exact whatever the load. How late it fires is at most that range and
 * depends on the CPU's other timers, so it is only bounded here. */
#define KIND_DUE_NS (200 * 1000000ULL)
#define KIND_SLACK_NS (300 * 1000000ULL)
/* Scheduling noise of a shared machine on top of the range. */
#define KIND_NOISE_NS (200 * 1000000LL)

typedef struct KindProbe {
        uint64_t reads_back;    /* the thread's timerslack_ns after the set */
        uint64_t own;           /* the arming thread's slack, as it read it */
        uint64_t range;         /* after the set (before: once armed) */
        uint64_t range_after;   /* after arming under the slack and writing restore_ns */
        int64_t late_ns;
} KindProbe;

/* set_first: the slack is set before the child arms, else just after. With
 * restore, restore_ns is written once the timer is armed. -EPERM: no
 * real-time policy here. */
static int probe_kind(SlackKind k, bool set_first, bool restore, uint64_t restore_ns, KindProbe *ret) {
        SlackProbe p = { .ctl_fd = -EBADF, .rep_fd = -EBADF };
        uint64_t target;
        KindProbe kp = {};
        pid_t tid;
        int r;

        ck_assert_int_eq(slack_probe_start(k, KIND_DUE_NS, &p), 0);
        if (set_first)
                ck_assert_int_eq(slack_probe_set(&p, KIND_SLACK_NS, &kp.reads_back), 0);
        r = slack_probe_go(&p, &target, &kp.own, &tid);
        if (r < 0) {
                slack_probe_stop(&p);
                return r;
        }
        ck_assert_int_eq(slack_probe_range(tid, target, USEC_PER_SEC, &kp.range), 0);
        if (!set_first) {
                ck_assert_int_eq(slack_probe_set(&p, KIND_SLACK_NS, &kp.reads_back), 0);
                ck_assert_int_eq(slack_probe_range(tid, target, USEC_PER_SEC, &kp.range), 0);
        }
        if (restore) {
                ck_assert_int_eq(slack_probe_set(&p, restore_ns, NULL), 0);
                ck_assert_int_eq(slack_probe_range(tid, target, USEC_PER_SEC, &kp.range_after), 0);
        }
        /* Bounded: due time, the whole slack, and a second to spare. */
        ck_assert_int_eq(slack_probe_wait(&p, (KIND_DUE_NS + KIND_SLACK_NS) / 1000 + USEC_PER_SEC, &kp.late_ns), 0);
        slack_probe_stop(&p);
        *ret = kp;
        return 0;
}

/* Sleeps, polls and futex waits armed under the slack get it whole, and
 * fire never early and at most the slack late. */
START_TEST(test_kind_sleeps_take_slack) {
        static const SlackKind kinds[] = { SLACK_KIND_NANOSLEEP, SLACK_KIND_NANOSLEEP_ABS, SLACK_KIND_POLL,
                                           SLACK_KIND_EPOLL, SLACK_KIND_FUTEX, SLACK_KIND_FUTEX_BITSET_ABS };
        KindProbe kp;

        if (!test_need_root_cgroup2())
                return;
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                ck_assert_int_eq(probe_kind(kinds[i], true, false, 0, &kp), 0);
                ck_assert_msg(kp.range == KIND_SLACK_NS, "%s: range %" PRIu64, slack_kind_to_string(kinds[i]), kp.range);
                ck_assert_msg(kp.late_ns >= 0 && kp.late_ns <= (int64_t) KIND_SLACK_NS + KIND_NOISE_NS,
                              "%s: %" PRId64 " ns late", slack_kind_to_string(kinds[i]), kp.late_ns);
        }
}
END_TEST

/* A timer keeps the range it was armed with: one armed before the set does
 * not get the slack, and one armed under it keeps it after the default is
 * written back. This is why exit must re-arm sleeps (freezer/rearm.c) and
 * interrupt the other waits. */
START_TEST(test_kind_range_fixed_at_arming) {
        KindProbe kp;

        if (!test_need_root_cgroup2())
                return;
        ck_assert_int_eq(probe_kind(SLACK_KIND_NANOSLEEP, false, false, 0, &kp), 0);
        ck_assert_uint_eq(kp.reads_back, KIND_SLACK_NS);
        ck_assert_uint_eq(kp.range, SLACK_KERNEL_DEFAULT_NS);
        ck_assert_int_eq(probe_kind(SLACK_KIND_POLL, false, false, 0, &kp), 0);
        ck_assert_uint_lt(kp.range, KIND_SLACK_NS);
        ck_assert_int_eq(probe_kind(SLACK_KIND_NANOSLEEP, true, true, 0, &kp), 0);
        ck_assert_uint_eq(kp.range, KIND_SLACK_NS);
        ck_assert_uint_eq(kp.range_after, KIND_SLACK_NS);
}
END_TEST

/* timerfd, POSIX timers and itimers are armed with no slack at all: a slack
 * strategy neither delays them nor has anything to restore. */
START_TEST(test_kind_timers_ignore_slack) {
        static const SlackKind kinds[] = { SLACK_KIND_TIMERFD, SLACK_KIND_TIMERFD_PERIODIC, SLACK_KIND_POSIX_SIGNAL,
                                           SLACK_KIND_POSIX_THREAD, SLACK_KIND_ITIMER };
        KindProbe kp;

        if (!test_need_root_cgroup2())
                return;
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                ck_assert_int_eq(probe_kind(kinds[i], true, false, 0, &kp), 0);
                ck_assert_uint_eq(kp.reads_back, KIND_SLACK_NS);
                ck_assert_msg(kp.range == 0, "%s: range %" PRIu64, slack_kind_to_string(kinds[i]), kp.range);
                ck_assert_msg(kp.late_ns >= 0 && kp.late_ns <= KIND_NOISE_NS, "%s: %" PRId64 " ns late",
                              slack_kind_to_string(kinds[i]), kp.late_ns);
        }
}
END_TEST

/* A real-time thread's slack reads 0 whatever is written, and its sleeps
 * are armed with none. */
START_TEST(test_kind_rt_no_slack) {
        static const SlackKind kinds[] = { SLACK_KIND_RT_FIFO_NANOSLEEP, SLACK_KIND_RT_FIFO_FUTEX,
                                           SLACK_KIND_RT_RR_POLL };
        KindProbe kp;

        if (!test_need_root_cgroup2())
                return;
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                int r = probe_kind(kinds[i], true, false, 0, &kp);
                if (r == -EPERM) {
                        test_skip("no real-time policy for a child here");
                        return;
                }
                ck_assert_int_eq(r, 0);
                ck_assert_uint_eq(kp.reads_back, 0);
                ck_assert_msg(kp.range == 0, "%s: range %" PRIu64, slack_kind_to_string(kinds[i]), kp.range);
                ck_assert_int_le(kp.late_ns, KIND_NOISE_NS);
        }
}
END_TEST

/* A thread or process made after the set starts with its creator's current
 * slack, and its sleeps take it. */
START_TEST(test_kind_new_tasks_inherit) {
        static const SlackKind kinds[] = { SLACK_KIND_NEW_THREAD, SLACK_KIND_NEW_PROCESS };
        KindProbe kp;

        if (!test_need_root_cgroup2())
                return;
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                ck_assert_int_eq(probe_kind(kinds[i], true, false, 0, &kp), 0);
                ck_assert_uint_eq(kp.own, KIND_SLACK_NS);
                ck_assert_uint_eq(kp.range, KIND_SLACK_NS);
        }
}
END_TEST

Suite *slack_suite(void) {
        Suite *s = suite_create("slack");
        TCase *tc = test_kernel_tcase(s, "kernel", 0);
        tcase_add_test(tc, test_probe_max);
        tcase_add_test(tc, test_per_thread);
        tc = test_kernel_tcase(s, "kinds", 15);
        tcase_add_test(tc, test_kind_sleeps_take_slack);
        tcase_add_test(tc, test_kind_range_fixed_at_arming);
        tcase_add_test(tc, test_kind_timers_ignore_slack);
        tcase_add_test(tc, test_kind_rt_no_slack);
        tcase_add_test(tc, test_kind_new_tasks_inherit);
        return s;
}
