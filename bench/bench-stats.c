/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "bench.h"
#include "cgroup.h"
#include "fileio.h"
#include "macro.h"
#include "proc.h"

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return x < y ? -1 : x > y;
}

/* In place, ascending: the order a CDF is plotted in. */
void stats_sort(double *v, size_t n) {
        if (n > 0)
                qsort(v, n, sizeof(double), cmp_double);
}

/* Sorts a copy: callers keep their samples in the order they were taken
 * (the enter-exit pairs, the CSV rows). */
double stats_percentile(const double *v, size_t n, double p) {
        _cleanup_free_ double *s = NULL;

        if (n == 0)
                return NAN;
        s = malloc(n * sizeof(double));
        if (!s)
                return NAN;
        memcpy(s, v, n * sizeof(double));
        qsort(s, n, sizeof(double), cmp_double);
        if (p <= 0)
                return s[0];
        if (p >= 100)
                return s[n - 1];
        double rank = p / 100.0 * (double) (n - 1);
        size_t lo = (size_t) rank;
        double frac = rank - (double) lo;
        return lo + 1 < n ? s[lo] + frac * (s[lo + 1] - s[lo]) : s[lo];
}

double stats_median(const double *v, size_t n) {
        return stats_percentile(v, n, 50);
}

double stats_min(const double *v, size_t n) {
        double m = n ? v[0] : NAN;
        for (size_t i = 1; i < n; i++)
                m = v[i] < m ? v[i] : m;
        return m;
}

double stats_max(const double *v, size_t n) {
        double m = n ? v[0] : NAN;
        for (size_t i = 1; i < n; i++)
                m = v[i] > m ? v[i] : m;
        return m;
}

double stats_rate(uint64_t before, uint64_t after, usec_t interval) {
        if (interval == 0 || after < before)
                return NAN;
        return (double) (after - before) * (double) USEC_PER_SEC / (double) interval;
}

static int add_thread(pid_t tid, uint64_t *wakeups, uint64_t *cpu) {
        _cleanup_free_ char *line = NULL, *status = NULL;
        unsigned long long c;
        char path[64];

        /* CPU time: first field of schedstat. */
        snprintf(path, sizeof(path), "/proc/%d/schedstat", (int) tid);
        if (read_one_lineat(AT_FDCWD, path, &line) < 0)
                return 0; /* gone: its counts go with it */
        if (sscanf(line, "%llu", &c) != 1)
                return -EIO;
        /* Wakeups: every voluntary switch is a sleep that ended in a wakeup;
         * preemptions (nonvoluntary) are not wakeups and depend on load. */
        snprintf(path, sizeof(path), "/proc/%d/status", (int) tid);
        if (read_full_fileat(AT_FDCWD, path, &status, NULL) < 0)
                return 0;
        const char *v = strstr(status, "\nvoluntary_ctxt_switches:");
        if (!v)
                return -EIO;
        *wakeups += strtoull(v + strlen("\nvoluntary_ctxt_switches:"), NULL, 10);
        *cpu += c;
        return 0;
}

static int sum_threads(const pid_t *tids, size_t n, uint64_t *ret_runs, uint64_t *ret_cpu_ns) {
        uint64_t runs = 0, cpu = 0;

        for (size_t i = 0; i < n; i++) {
                int r = add_thread(tids[i], &runs, &cpu);
                if (r < 0)
                        return r;
        }
        *ret_runs = runs;
        if (ret_cpu_ns)
                *ret_cpu_ns = cpu;
        return 0;
}

int stats_cgroup_schedstat(int cg_fd, uint64_t *ret_runs, uint64_t *ret_cpu_ns) {
        _cleanup_free_ pid_t *tids = NULL;
        size_t n = 0;
        int r = cgroup_list_pids(cg_fd, true, &tids, &n);

        return r < 0 ? r : sum_threads(tids, n, ret_runs, ret_cpu_ns);
}

int stats_pid_schedstat(pid_t pid, uint64_t *ret_runs, uint64_t *ret_cpu_ns) {
        _cleanup_free_ pid_t *tids = NULL;
        size_t n = 0;
        int r = proc_list_tids(pid, &tids, &n);

        return r < 0 ? r : sum_threads(tids, n, ret_runs, ret_cpu_ns);
}
