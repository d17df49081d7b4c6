/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <stdio.h>

#include "cgroup.h"
#include "macro.h"
#include "strv.h"
#include "test-util.h"

START_TEST(test_mountinfo_variants) {
        static const struct {
                const char *text, *want;
        } table[] = {
                /* pure unified */
                { "22 1 0:20 / /sys rw - sysfs sysfs rw\n"
                  "30 22 0:26 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate\n",
                  "/sys/fs/cgroup" },
                /* hybrid, as on this machine: v1 controllers first, v2 under unified */
                { "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
                  "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
                  "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n",
                  "/sys/fs/cgroup/unified" },
                /* no optional fields, a space escaped in the mount point */
                { "41 31 0:38 / /mnt/my\\040cgroup rw - cgroup2 none rw\n", "/mnt/my cgroup" },
        };
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_free_ char *p = test_write_tmp(table[i].text), *m = NULL;
                ck_assert_int_eq(cgroup_find_mount_in(p, &m), 0);
                ck_assert_str_eq(m, table[i].want);
                unlink(p);
        }
        _cleanup_free_ char *p = test_write_tmp("32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n");
        char *m = NULL;
        ck_assert_int_eq(cgroup_find_mount_in(p, &m), -ENOMEDIUM);
        unlink(p);
}
END_TEST

/* Real freezing: the workload's progress stops while frozen 1, resumes after. */
START_TEST(test_freeze_thaw_progress) {
        int tick, fd, clock;
        bool frozen, populated;

        if (!test_need_root_cgroup2())
                return;
        test_spawn_workload("w.service", "nanosleep", 5, 1, &tick);
        clock = test_start_clock(5);
        ck_assert_int_eq(test_ticks(tick, 3, 5 * USEC_PER_SEC), 3);

        fd = test_cgroup("w.service");
        ck_assert_int_eq(cgroup_set_freeze(fd, true), 0);
        ck_assert_int_eq(cgroup_wait_frozen(&fd, 1, true, now_usec(CLOCK_MONOTONIC) + 5 * USEC_PER_SEC, NULL), 0);
        ck_assert_int_eq(cgroup_get_frozen(fd, &frozen, &populated), 0);
        ck_assert(frozen && populated);
        test_drain(tick);
        /* While a running twin of the same period ticks 60 times, not once. */
        ck_assert_int_eq(test_pending_after_clock(tick, clock, 60), 0);

        ck_assert_int_eq(cgroup_set_freeze(fd, false), 0);
        ck_assert_int_eq(cgroup_wait_frozen(&fd, 1, false, now_usec(CLOCK_MONOTONIC) + 5 * USEC_PER_SEC, NULL), 0);
        ck_assert_int_eq(test_ticks(tick, 3, 5 * USEC_PER_SEC), 3);
        safe_close(fd);
        safe_close(clock);
}
END_TEST

/* Many cgroups waited on at once, and an empty cgroup freezes as well. */
START_TEST(test_wait_many) {
        int fds[20];
        bool done[20];
        char sub[32];

        if (!test_need_root_cgroup2())
                return;
        for (int i = 0; i < 20; i++) {
                snprintf(sub, sizeof(sub), "u%02d.service", i);
                if (i % 2)
                        test_spawn_workload(sub, "poll", 10, 2, NULL);
                fds[i] = test_cgroup(sub);
                ck_assert_int_eq(cgroup_set_freeze(fds[i], true), 0);
        }
        ck_assert_int_eq(cgroup_wait_frozen(fds, 20, true, now_usec(CLOCK_MONOTONIC) + 5 * USEC_PER_SEC, done), 0);
        for (int i = 0; i < 20; i++) {
                ck_assert(done[i]);
                ck_assert_int_eq(cgroup_set_freeze(fds[i], false), 0);
        }
        ck_assert_int_eq(cgroup_wait_frozen(fds, 20, false, now_usec(CLOCK_MONOTONIC) + 5 * USEC_PER_SEC, done), 0);
        for (int i = 0; i < 20; i++)
                safe_close(fds[i]);
}
END_TEST

START_TEST(test_list_leaves_and_pids) {
        _cleanup_strv_free_ char **leaves = NULL, **inner = NULL;
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;
        int fd;

        if (!test_need_root_cgroup2())
                return;
        safe_close(test_cgroup("b.slice/x.service"));
        safe_close(test_cgroup("b.slice/y.scope"));
        safe_close(test_cgroup("a.service"));
        pid_t p = test_spawn_workload("a.service", "idle", 100, 3, NULL);
        /* A process in an inner cgroup (allowed: no controllers enabled here). */
        test_spawn_workload("b.slice", "idle", 100, 1, NULL);

        ck_assert_int_eq(cgroup_list_leaves(T.root_fd, T.base, &leaves, &inner, NULL), 0);
        ck_assert_uint_eq(strv_length(leaves), 3);
        ck_assert_str_eq(leaves[0], test_cgpath("a.service"));
        ck_assert_str_eq(leaves[1], test_cgpath("b.slice/x.service"));
        ck_assert_str_eq(leaves[2], test_cgpath("b.slice/y.scope"));
        ck_assert_uint_eq(strv_length(inner), 1);
        ck_assert_str_eq(inner[0], test_cgpath("b.slice"));

        fd = test_cgroup("a.service");
        /* The pid is in cgroup.procs once exec'd; cgroup.threads shows its 3 threads. */
        ck_assert_int_eq(cgroup_list_pids(fd, false, &pids, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_int_eq(pids[0], p);
        free(TAKE_PTR(pids));
        safe_close(fd);

        _cleanup_free_ char *cg = NULL;
        ck_assert_int_eq(cgroup_of_pid(p, &cg), 0);
        ck_assert_str_eq(cg, test_cgpath("a.service"));
}
END_TEST

START_TEST(test_open_refuses_escape) {
        int fd = -EBADF;

        if (!test_need_root_cgroup2())
                return;
        ck_assert_int_eq(cgroup_open(T.root_fd, "..", &fd), -EINVAL);
        ck_assert_int_eq(cgroup_open(T.root_fd, "/", &fd), -EINVAL);
        ck_assert_int_eq(cgroup_open(T.root_fd, "x/../../etc", &fd), -EINVAL);
        ck_assert_int_eq(cgroup_open(T.root_fd, "no-such-standby-cgroup", &fd), -ENOENT);
        ck_assert_int_eq(cgroup_open(T.root_fd, "cgroup.procs", &fd), -ENOTDIR);
        ck_assert_int_eq(fd, -EBADF);
}
END_TEST

static int count_walk(int fd, const char *rel, void *userdata) {
        (*(size_t *) userdata)++;
        return CGROUP_WALK_CONTINUE;
}

/* Names of any bytes, a name starting with '.', depth 100 and a path longer
 * than PATH_MAX: opened, listed and walked, then removed. */
START_TEST(test_any_name_any_depth) {
        _cleanup_strv_free_ char **leaves = NULL, **unwalked = NULL;
        _cleanup_free_ char *deep = NULL, *longp = NULL;
        size_t n = 0, len;
        int fd = -EBADF;

        if (!test_need_root_cgroup2())
                return;
        deep = calloc(1, 100 * 3 + 64);
        longp = calloc(1, 20 * (NAME_MAX + 1) + 64);
        ck_assert(deep && longp);
        len = (size_t) sprintf(deep, "%s", T.base);
        for (int i = 0; i < 100; i++)
                len += (size_t) sprintf(deep + len, "/%s", i % 2 ? "\t" : ".h");
        len = (size_t) sprintf(longp, "%s", T.base);
        for (int i = 0; i < 20; i++) {
                longp[len++] = '/';
                memset(longp + len, i % 2 ? ' ' : 'x', NAME_MAX);
                len += NAME_MAX;
        }
        for (char *paths[] = { deep, longp, NULL }, **p = paths; *p; p++) {
                int dir = -EBADF;
                ck_assert_int_eq(cgroup_open(T.root_fd, T.base, &dir), 0);
                for (char *c = *p + strlen(T.base) + 1, *slash;; c = slash + 1) {
                        slash = strchr(c, '/');
                        if (slash)
                                *slash = 0;
                        ck_assert_int_eq(mkdirat(dir, c, 0755), 0);
                        int next = openat(dir, c, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                        ck_assert_int_ge(next, 0);
                        safe_close(dir);
                        dir = next;
                        if (!slash)
                                break;
                        *slash = '/';
                }
                safe_close(dir);
        }
        ck_assert_uint_gt(strlen(longp), PATH_MAX);
        ck_assert_int_eq(cgroup_open(T.root_fd, longp, &fd), 0);
        safe_close(fd);
        ck_assert_int_eq(cgroup_open(T.root_fd, deep, &fd), 0);
        safe_close(fd);

        ck_assert_int_eq(cgroup_list_leaves(T.root_fd, T.base, &leaves, NULL, &unwalked), 0);
        ck_assert_uint_eq(strv_length(leaves), 2);
        ck_assert(strv_contains(leaves, deep) && strv_contains(leaves, longp));
        ck_assert_uint_eq(strv_length(unwalked), 0);
        ck_assert_int_eq(cgroup_walk(T.root_fd, T.base, count_walk, &n), 0);
        ck_assert_uint_eq(n, 1 + 100 + 20);
        /* What the cgroup_path_validate() of a command line still refuses. */
        ck_assert_int_eq(cgroup_path_validate(longp), -EINVAL);
        ck_assert_int_eq(cgroup_path_check(longp), 0);
        ck_assert_int_eq(cgroup_path_check("a/../b"), -EINVAL);
}
END_TEST

/* A cgroup's account is the topmost cgroup on its path that root does not
 * own: chowning cgroups below it, or it, changes neither which it is nor
 * its id; a path all root's is root's. */
START_TEST(test_account_is_delegation_root) {
        _cleanup_free_ char *deep = NULL, *user = NULL, *sys = NULL;
        CgroupAccount a, b;

        if (!test_need_root_cgroup2())
                return;
        _cleanup_close_ int d = test_cgroup("user.slice/user@1000.service/app.slice/x.service");
        _cleanup_close_ int u = test_cgroup("user.slice/user@1000.service");
        _cleanup_close_ int app = test_cgroup("user.slice/user@1000.service/app.slice");
        _cleanup_close_ int s = test_cgroup("system.slice/y.service");
        ck_assert_int_eq(fchown(u, 1000, 1000), 0);
        ck_assert_int_eq(fchown(app, 100000, 100000), 0);
        ck_assert_int_eq(fchown(d, 100001, 100001), 0);
        ck_assert_int_ge(asprintf(&deep, "%s/user.slice/user@1000.service/app.slice/x.service", T.base), 0);
        ck_assert_int_ge(asprintf(&user, "%s/user.slice/user@1000.service", T.base), 0);
        ck_assert_int_ge(asprintf(&sys, "%s/system.slice/y.service", T.base), 0);

        ck_assert_int_eq(cgroup_account(T.root_fd, deep, &a), 0);
        ck_assert_uint_eq(a.uid, 1000);
        ck_assert_uint_ne(a.id, 0);
        ck_assert_uint_eq(a.prefix_len, strlen(user));
        ck_assert(!cgroup_account_is_root(&a));
        /* The user gives his delegation root to one of his subordinate uids. */
        ck_assert_int_eq(fchown(u, 100002, 100002), 0);
        ck_assert_int_eq(cgroup_account(T.root_fd, deep, &b), 0);
        ck_assert_uint_eq(b.uid, 100002);
        ck_assert_uint_eq(b.id, a.id);
        ck_assert_uint_eq(b.prefix_len, a.prefix_len);

        ck_assert_int_eq(cgroup_account(T.root_fd, sys, &a), 0);
        ck_assert(cgroup_account_is_root(&a));
        ck_assert_uint_eq(a.prefix_len, 0);
        ck_assert_int_eq(cgroup_account(T.root_fd, "", &a), 0);
        ck_assert(cgroup_account_is_root(&a));
        ck_assert_int_eq(cgroup_account(T.root_fd, "no/such/cgroup", &a), -ENOENT);
        ck_assert_int_eq(cgroup_account(T.root_fd, "a/../b", &a), -EINVAL);
}
END_TEST

Suite *cgroup_suite(void) {
        Suite *s = suite_create("cgroup");
        TCase *tc = tcase_create("mountinfo");
        tcase_add_test(tc, test_mountinfo_variants);
        suite_add_tcase(s, tc);

        tc = test_kernel_tcase(s, "kernel", 60);
        tcase_add_test(tc, test_freeze_thaw_progress);
        tcase_add_test(tc, test_wait_many);
        tcase_add_test(tc, test_list_leaves_and_pids);
        tcase_add_test(tc, test_open_refuses_escape);
        tcase_add_test(tc, test_any_name_any_depth);
        tcase_add_test(tc, test_account_is_delegation_root);
        return s;
}
