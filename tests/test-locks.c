/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <sys/file.h>
#include <unistd.h>

#include "cgroup.h"
#include "locks.h"
#include "macro.h"
#include "test-util.h"

START_TEST(test_parse_sample) {
        /* The format of /proc/locks, including OFD locks (pid -1) and waiters. */
        static const char sample[] =
                "1: POSIX  ADVISORY  WRITE 1234 00:1a:5678 0 EOF\n"
                "1: -> POSIX  ADVISORY  WRITE 2222 00:1a:5678 0 EOF\n"
                "1: -> POSIX  ADVISORY  WRITE 3333 00:1a:5678 0 EOF\n"
                "2: FLOCK  ADVISORY  WRITE 4444 00:1a:9999 0 EOF\n"
                "3: OFDLCK ADVISORY  READ  -1 00:1a:1 0 EOF\n"
                "3: -> FLOCK  ADVISORY  WRITE 5555 00:1a:1 0 EOF\n";
        _cleanup_free_ char *path = test_write_tmp(sample);
        _cleanup_free_ LockWait *w = NULL;
        size_t n = 0;

        ck_assert_int_eq(locks_read_waits(path, &w, &n), 0);
        unlink(path);
        ck_assert_uint_eq(n, 3);
        ck_assert_int_eq(w[0].holder, 1234);
        ck_assert_int_eq(w[0].waiter, 2222);
        ck_assert_str_eq(w[0].type, "POSIX");
        ck_assert_int_eq(w[1].waiter, 3333);
        ck_assert_int_eq(w[2].holder, -1);
        ck_assert_int_eq(w[2].waiter, 5555);
}
END_TEST

static char lockfile[64];

static void hold_then_wait(void *userdata) {
        int *pipes = userdata;
        int fd = open(lockfile, O_RDWR | O_CLOEXEC);
        char c;

        if (fd < 0 || flock(fd, LOCK_EX) < 0)
                _exit(1);
        if (write(pipes[1], "L", 1) != 1)
                _exit(1);
        (void) !read(pipes[2], &c, 1); /* hold until told */
        _exit(0);
}

static void block_on_lock(void *userdata) {
        int fd = open(lockfile, O_RDWR | O_CLOEXEC);
        if (fd < 0 || flock(fd, LOCK_EX) < 0)
                _exit(1);
        _exit(0);
}

static pid_t waiter_pid;

static bool waiter_listed(void *userdata) {
        _cleanup_free_ LockWait *w = NULL;
        size_t n = 0;

        if (locks_read_waits("/proc/locks", &w, &n) < 0)
                return false;
        for (size_t i = 0; i < n; i++)
                if (w[i].waiter == waiter_pid && w[i].holder == *(pid_t *) userdata)
                        return true;
        return false;
}

/* The real kernel lists a blocked flock() under its holder. */
START_TEST(test_real_flock_wait) {
        int held[2], go[2];
        char c;

        if (!test_need_root_cgroup2())
                return;
        snprintf(lockfile, sizeof(lockfile), "/tmp/standby-lock-%d", (int) getpid());
        close(open(lockfile, O_CREAT | O_RDWR | O_CLOEXEC, 0600));
        ck_assert_int_eq(pipe(held), 0);
        ck_assert_int_eq(pipe(go), 0);
        int fds[3] = { held[0], held[1], go[0] };
        pid_t holder = test_fork("holder.service", hold_then_wait, fds);
        ck_assert_int_eq(read(held[0], &c, 1), 1);
        waiter_pid = test_fork(NULL, block_on_lock, NULL);
        ck_assert_msg(test_wait_for(waiter_listed, &holder, 5 * USEC_PER_SEC), "waiter never showed in /proc/locks");
        ck_assert_int_eq(write(go[1], "x", 1), 1);
        unlink(lockfile);
}
END_TEST

static void *block_in_thread(void *userdata) {
        block_on_lock(userdata);
        return NULL;
}

/* A process whose main thread sleeps while another of its threads waits for
 * a flock: the wait-channel scan, given the cgroup's threads, finds it; given
 * the main thread alone, it does not. */
static void waiter_thread_main(void *userdata) {
        pthread_t t;
        if (pthread_create(&t, NULL, block_in_thread, NULL) != 0)
                _exit(1);
        for (;;)
                pause();
}

static int waiter_cg = -1;

static bool a_thread_waits(void *userdata) {
        _cleanup_free_ pid_t *tids = NULL;
        size_t n = 0;
        bool any = false;
        if (cgroup_list_pids(waiter_cg, true, &tids, &n) < 0 || n < 2)
                return false;
        return locks_any_blocked_waiter(tids, n, &any) == 0 && any;
}

START_TEST(test_waiter_in_a_thread) {
        bool any = true;
        int fd;

        if (!test_need_root_cgroup2())
                return;
        snprintf(lockfile, sizeof(lockfile), "/tmp/standby-lock-%d", (int) getpid());
        fd = open(lockfile, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(flock(fd, LOCK_EX), 0);
        waiter_cg = test_cgroup("waiter.service");
        pid_t pid = test_fork("waiter.service", waiter_thread_main, NULL);
        ck_assert_msg(test_wait_for(a_thread_waits, NULL, 5 * USEC_PER_SEC), "the waiting thread was not found");
        ck_assert_int_eq(locks_any_blocked_waiter(&pid, 1, &any), 0);
        ck_assert_msg(!any, "the main thread (in pause) was taken for a lock waiter");
        unlink(lockfile);
        close(fd);
        close(waiter_cg);
}
END_TEST

static int cmp_pid_t(const void *a, const void *b) {
        pid_t x = *(const pid_t *) a, y = *(const pid_t *) b;
        return (x > y) - (x < y);
}

/* PF_KTHREAD (0x00200000) in the flags of /proc/PID/stat, read here apart
 * from the code under test. */
static bool is_kthread(pid_t pid) {
        char path[64], buf[1024];
        unsigned long flags = 0;
        FILE *f;
        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        f = fopen(path, "re");
        if (!f)
                return false;
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = 0;
        char *p = strrchr(buf, ')');
        return p && sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) == 1 && (flags & 0x00200000UL);
}

/* The kernel threads that the scan skips: kthreadd and its children, each
 * with PF_KTHREAD and no command line; this process is never among them. */
START_TEST(test_kernel_threads) {
        _cleanup_free_ pid_t *k = NULL;
        size_t n = 0;
        pid_t self = getpid();

        ck_assert_int_eq(locks_kernel_threads(&k, &n), 0);
        if (n == 0) {
                /* In a PID namespace kthreadd is not visible: nothing to skip. */
                ck_assert_msg(!is_kthread(2), "kthreadd is visible but no kernel thread was listed");
                return;
        }
        ck_assert_msg(n >= 2, "kthreadd and at least one child expected, got %zu", n);
        ck_assert_ptr_null(bsearch(&self, k, n, sizeof(pid_t), cmp_pid_t));
        for (size_t i = 0; i < n; i++) {
                if (i > 0)
                        ck_assert_int_lt(k[i - 1], k[i]);
                /* A kernel thread may end between the two reads: skip it then. */
                if (kill(k[i], 0) == 0)
                        ck_assert_msg(is_kthread(k[i]), "pid %d is listed but is no kernel thread", (int) k[i]);
        }
}
END_TEST

Suite *locks_suite(void) {
        Suite *s = suite_create("locks");
        TCase *tc = test_kernel_tcase(s, "proc-locks", 0);
        tcase_add_test(tc, test_parse_sample);
        tcase_add_test(tc, test_real_flock_wait);
        tcase_add_test(tc, test_waiter_in_a_thread);
        tcase_add_test(tc, test_kernel_threads);
        return s;
}
