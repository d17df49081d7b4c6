/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Does anyone wait for a file lock? The deadlock guard's cheap first question.
 *
 * Reading /proc/locks takes the kernel's file_rwsem for writing, which waits
 * for an RCU grace period (12-29 ms here: longer than freezing 100 units).
 * Nearly always no running process waits for a lock, so the guard first asks
 * the wait channels of the threads that can be victims: those outside the
 * units standby freezes. That scan runs in a thread, started before the units
 * are even selected, so that it mostly runs on an idle CPU rather than against
 * the tasks that the freeze wakes; it is joined only when the guard needs
 * its answer, after the freeze. It skips the target subtrees unread
 * (unwinding the stacks of a thousand frozen tasks would cost ~20 ms); the few
 * cgroups inside the targets that stay running are checked at the end. */
#include <pthread.h>
#include <sched.h>

#include "cgroup.h"
#include "locks.h"
#include "log.h"
#include "manager.h"
#include "strv.h"

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char * const *) a, *(char * const *) b);
}

typedef struct Collect {
        char **skip;   /* sorted */
        pid_t *pids;
        size_t n;
        int r;
} Collect;

static int collect(int fd, const char *rel, void *userdata) {
        Collect *c = userdata;
        _cleanup_free_ pid_t *pids = NULL;
        size_t k = 0;

        if (bsearch(&rel, c->skip, strv_length(c->skip), sizeof(char *), cmp_str))
                return CGROUP_WALK_SKIP;
        if (cgroup_list_pids(fd, true, &pids, &k) < 0 || k == 0)
                return CGROUP_WALK_CONTINUE;
        pid_t *na = realloc(c->pids, (c->n + k) * sizeof(pid_t));
        if (!na) {
                c->r = -ENOMEM;
                return CGROUP_WALK_SKIP;
        }
        c->pids = na;
        memcpy(c->pids + c->n, pids, k * sizeof(pid_t));
        c->n += k;
        return CGROUP_WALK_CONTINUE;
}

static void *scan_thread(void *userdata) {
        LockScan *s = userdata;
        Collect c = { .skip = s->skip };
        usec_t t0 = now_usec(CLOCK_MONOTONIC), t1;

        s->r = cgroup_walk(s->root_fd, "", collect, &c);
        if (s->r >= 0)
                s->r = c.r;
        t1 = now_usec(CLOCK_MONOTONIC);
        if (s->r >= 0)
                s->r = locks_any_blocked_waiter(c.pids, c.n, &s->any);
        log_debug("Lock scan: %zu threads outside the targets, listed in %.2f ms, wait channels read in %.2f ms.", c.n,
                  (double) (t1 - t0) / 1000.0, (double) (now_usec(CLOCK_MONOTONIC) - t1) / 1000.0);
        free(c.pids);
        return NULL;
}

void lock_scan_start(LockScan *s, int root_fd, char **skip) {
        *s = (LockScan) { .root_fd = root_fd, .any = true };
        for (char **k = skip; k && *k; k++)
                if (strv_extend(&s->skip, *k) < 0) {
                        s->r = -ENOMEM;
                        return;
                }
        strv_sort(s->skip);
        /* On another CPU than ours if there is one: the scheduler puts a new
         * thread on its creator's CPU (traced on two vCPUs, the other idle),
         * where it preempted the selection for the whole 0.5 ms scan. */
        pthread_attr_t attr;
        cpu_set_t cpus;
        int here = sched_getcpu();
        bool attr_ok = pthread_attr_init(&attr) == 0;
        if (attr_ok && here >= 0 && sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && CPU_COUNT(&cpus) > 1) {
                CPU_CLR(here, &cpus);
                (void) pthread_attr_setaffinity_np(&attr, sizeof(cpus), &cpus);
        }
        s->started = pthread_create(&s->thread, attr_ok ? &attr : NULL, scan_thread, s) == 0;
        if (attr_ok)
                pthread_attr_destroy(&attr);
        if (!s->started)
                scan_thread(s);
}

static void lock_scan_wait(LockScan *s) {
        if (s->started)
                (void) pthread_join(s->thread, NULL);
        s->started = false;
}

bool lock_scan_finish(LockScan *s, int root_fd, char **also) {
        lock_scan_wait(s);
        if (s->r < 0 || s->any) {
                log_debug("Lock scan: %s; reading /proc/locks.", s->r < 0 ? "failed" : "a thread outside waits for a lock");
                return true; /* when in doubt, read /proc/locks */
        }

        for (char **a = also; a && *a; a++) {
                _cleanup_close_ int fd = -EBADF;
                _cleanup_free_ pid_t *pids = NULL;
                size_t n = 0;
                bool any = false;

                if (cgroup_open(root_fd, *a, &fd) < 0 || cgroup_list_pids(fd, true, &pids, &n) < 0)
                        continue;
                if (locks_any_blocked_waiter(pids, n, &any) < 0 || any) {
                        log_debug("Lock scan: a thread of %s waits for a lock; reading /proc/locks.", *a);
                        return true;
                }
        }
        return false;
}

void lock_scan_done(LockScan *s) {
        if (s->started)
                (void) pthread_join(s->thread, NULL);
        strv_free(s->skip);
        *s = (LockScan) {};
}
