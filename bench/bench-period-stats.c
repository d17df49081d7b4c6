/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The standby-period mode's measures, each tested on a known workload in
 * tests/test-bench.c: how late each run of a periodic job was, and whose
 * wakeups and CPU time they were, per unit cgroup of a tree and for the
 * kernel's own threads. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "cgroup.h"
#include "fileio.h"
#include "macro.h"
#include "strv.h"

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return x < y ? -1 : x > y;
}

size_t period_lateness(const double *runs, size_t n, double period, double allowed, double from, double to,
                       double *late, size_t *n_late, unsigned *missed) {
        _cleanup_free_ double *sorted = n ? malloc(n * sizeof(double)) : NULL;
        size_t due = 0;

        *n_late = 0;
        *missed = 0;
        if (n && !sorted)
                return 0;
        if (n) {
                memcpy(sorted, runs, n * sizeof(double));
                qsort(sorted, n, sizeof(double), cmp_double);
        }
        for (double g = ceil(from / period) * period; g < to; g += period) {
                size_t i = 0;
                due++;
                while (i < n && sorted[i] < g)
                        i++;
                if (i < n && sorted[i] <= g + allowed)
                        late[(*n_late)++] = sorted[i] - g;
                else
                        (*missed)++;
        }
        return due;
}

double redis_save_due(double last_save, unsigned seconds) {
        return floor(last_save) + seconds + 1;
}

double pg_checkpoint_parse(const char *controldata) {
        const char *l = strstr(controldata, "Time of latest checkpoint:");
        struct tm tm = {};
        if (!l || !strptime(l + strlen("Time of latest checkpoint:"), " %a %b %d %H:%M:%S %Y", &tm))
                return 0;
        return (double) timegm(&tm);
}

static int read_status_count(pid_t tid, uint64_t *ret) {
        _cleanup_free_ char *status = NULL;
        char path[64];

        snprintf(path, sizeof(path), "/proc/%d/status", (int) tid);
        if (read_full_fileat(AT_FDCWD, path, &status, NULL) < 0)
                return -ESRCH; /* gone */
        const char *v = strstr(status, "\nvoluntary_ctxt_switches:");
        if (!v)
                return -EIO;
        *ret = strtoull(v + strlen("\nvoluntary_ctxt_switches:"), NULL, 10);
        return 0;
}

static int read_cpu_usec(int root_fd, const char *rel, uint64_t *ret) {
        _cleanup_free_ char *stat = NULL;
        char path[4200];

        snprintf(path, sizeof(path), "%s/cpu.stat", rel);
        if (read_full_fileat(root_fd, path, &stat, NULL) < 0)
                return -ESRCH;
        if (sscanf(stat, "usage_usec %" SCNu64, ret) != 1)
                return -EIO;
        return 0;
}

static ssize_t tracker_unit(UnitTracker *t, const char *name) {
        for (size_t i = 0; i < t->n_units; i++)
                if (streq(t->units[i].name, name))
                        return (ssize_t) i;
        if (!GROW_ARRAY(t->units, t->units_cap, t->n_units + 1))
                return -ENOMEM;
        t->units[t->n_units] = (UnitCount) { .name = strdup(name) };
        if (!t->units[t->n_units].name)
                return -ENOMEM;
        return (ssize_t) t->n_units++;
}

/* One thread's count: the part since it was last seen (all of it for a
 * thread first seen after the start: it was born in the window). */
static int tracker_thread(UnitTracker *t, size_t unit, pid_t tid, bool baseline) {
        uint64_t c;
        int r = read_status_count(tid, &c);
        if (r == -ESRCH)
                return 0;
        if (r < 0)
                return r;
        for (size_t i = 0; i < t->n_threads; i++)
                if (t->threads[i].tid == tid) {
                        /* A smaller count: the tid was reused by a new thread. */
                        uint64_t d = c >= t->threads[i].last ? c - t->threads[i].last : c;
                        t->units[t->threads[i].unit].wakeups += d;
                        t->threads[i].last = c;
                        t->threads[i].seen = t->generation;
                        return 0;
                }
        if (!GROW_ARRAY(t->threads, t->threads_cap, t->n_threads + 1))
                return -ENOMEM;
        t->threads[t->n_threads++] = (ThreadCount) { .tid = tid, .last = c, .unit = unit, .seen = t->generation };
        if (!baseline)
                t->units[unit].wakeups += c;
        return 0;
}

static int tracker_cgroup(UnitTracker *t, const char *rel, bool baseline) {
        _cleanup_close_ int fd = openat(t->root_fd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_free_ pid_t *tids = NULL;
        size_t n = 0;
        uint64_t cpu;
        int r;

        if (fd < 0)
                return 0; /* gone */
        const char *name = rel + strlen(t->base);
        name += *name == '/';
        ssize_t u = tracker_unit(t, *name ? name : "(root)");
        if (u < 0)
                return (int) u;
        if (read_cpu_usec(t->root_fd, rel, &cpu) == 0) {
                if (!t->units[u].have_cpu) {
                        t->units[u].cpu_first = baseline ? cpu : 0;
                        t->units[u].have_cpu = true;
                }
                t->units[u].cpu_last = cpu;
        }
        r = cgroup_list_pids(fd, true, &tids, &n);
        if (r < 0)
                return 0;
        for (size_t i = 0; i < n; i++) {
                r = tracker_thread(t, (size_t) u, tids[i], baseline);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The kernel's threads: kthreadd (PID 2) and its children. */
static int tracker_kernel(UnitTracker *t, bool baseline) {
        _cleanup_free_ char *children = NULL;
        ssize_t u = tracker_unit(t, UNIT_TRACKER_KERNEL);
        int r;

        if (u < 0)
                return (int) u;
        r = tracker_thread(t, (size_t) u, 2, baseline);
        if (r < 0)
                return r;
        if (read_full_fileat(AT_FDCWD, "/proc/2/task/2/children", &children, NULL) < 0)
                return 0;
        for (char *p = children, *end; *p; p = end) {
                long pid = strtol(p, &end, 10);
                if (end == p)
                        break;
                r = tracker_thread(t, (size_t) u, (pid_t) pid, baseline);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int tracker_pass(UnitTracker *t, bool baseline) {
        _cleanup_strv_free_ char **leaves = NULL, **inner = NULL;
        int r;

        t->generation++;
        r = cgroup_list_leaves(t->root_fd, t->base, &leaves, &inner, NULL);
        if (r < 0)
                return r;
        for (char **l = leaves; *l; l++) {
                r = tracker_cgroup(t, *l, baseline);
                if (r < 0)
                        return r;
        }
        for (char **l = inner; *l; l++) {
                r = tracker_cgroup(t, *l, baseline);
                if (r < 0)
                        return r;
        }
        if (t->kernel) {
                r = tracker_kernel(t, baseline);
                if (r < 0)
                        return r;
        }
        /* Threads gone since: forgotten, so that a reused tid is new. */
        size_t k = 0;
        for (size_t i = 0; i < t->n_threads; i++)
                if (t->threads[i].seen == t->generation)
                        t->threads[k++] = t->threads[i];
        t->n_threads = k;
        return 0;
}

int unit_tracker_start(UnitTracker *t, int root_fd, const char *base, bool kernel) {
        *t = (UnitTracker) { .root_fd = root_fd, .kernel = kernel };
        t->base = strdup(base);
        if (!t->base)
                return -ENOMEM;
        t->start = now_usec(CLOCK_MONOTONIC);
        int r = tracker_pass(t, true);
        t->end = t->start;
        return r;
}

int unit_tracker_sample(UnitTracker *t) {
        int r = tracker_pass(t, false);
        t->end = now_usec(CLOCK_MONOTONIC);
        return r;
}

double unit_tracker_rate(const UnitTracker *t, const UnitCount *u) {
        return stats_rate(0, u->wakeups, t->end - t->start);
}

double unit_tracker_cpu_ms_per_s(const UnitTracker *t, const UnitCount *u) {
        if (!u->have_cpu || t->end <= t->start)
                return NAN;
        return (double) (u->cpu_last - u->cpu_first) / 1000.0 / ((double) (t->end - t->start) / USEC_PER_SEC);
}

const UnitCount *unit_tracker_find(const UnitTracker *t, const char *name) {
        for (size_t i = 0; i < t->n_units; i++)
                if (streq(t->units[i].name, name))
                        return &t->units[i];
        return NULL;
}

void unit_tracker_done(UnitTracker *t) {
        for (size_t i = 0; i < t->n_units; i++)
                free(t->units[i].name);
        free(t->units);
        free(t->threads);
        free(t->base);
        *t = (UnitTracker) { .root_fd = -EBADF };
}
