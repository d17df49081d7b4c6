/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --self-check: the wakeup counts the bench uses (voluntary context switches
 * from /proc) against the kernel's own sched_wakeup tracepoint, counted in a
 * tracefs instance of our own, filtered to the workloads' threads. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "bench.h"
#include "cgroup.h"
#include "fileio.h"
#include "log.h"
#include "macro.h"

#define TRACEFS "/sys/kernel/tracing"

static int tracefs_ready(void) {
        if (access(TRACEFS "/instances", F_OK) == 0)
                return 0;
        if (mount("nodev", TRACEFS, "tracefs", 0, NULL) < 0)
                return negative_errno();
        return 0;
}

/* The traced wakeups of the threads tids (sched_wakeup's pid= field). */
static uint64_t count_traced(const char *trace, const pid_t *tids, size_t k) {
        uint64_t traced = 0;

        for (const char *line = trace; line && *line;) {
                const char *nl = strchr(line, '\n'), *p = strstr(line, " pid=");
                if (line[0] != '#' && p && (!nl || p < nl)) {
                        int pid = atoi(p + 5);
                        for (size_t t = 0; t < k; t++)
                                if (tids[t] == pid)
                                        traced++;
                }
                line = nl ? nl + 1 : NULL;
        }
        return traced;
}

int bench_self_check(const int *fds, char **names, size_t n, usec_t window) {
        char inst[128], path[256];
        _cleanup_free_ char *filter = NULL, *trace = NULL;
        _cleanup_free_ uint64_t *before = calloc(n, sizeof(uint64_t));
        /* Each workload's threads as traced: those there when tracing starts. */
        _cleanup_free_ pid_t **tids = calloc(n, sizeof(pid_t *));
        _cleanup_free_ size_t *n_tids = calloc(n, sizeof(size_t));
        size_t len = 0;
        bool bad = false;
        int r;

        if (!before || !tids || !n_tids)
                return -ENOMEM;
        r = tracefs_ready();
        if (r < 0)
                return log_error_errno(r, "No tracefs at " TRACEFS ": %m");
        snprintf(inst, sizeof(inst), TRACEFS "/instances/standby-bench-%d", (int) getpid());
        if (mkdir(inst, 0700) < 0)
                return log_error_errno(-errno, "Cannot create the tracefs instance %s: %m", inst);

        /* pid == each workload thread. */
        FILE *m = open_memstream(&filter, &len);
        if (!m) {
                r = -ENOMEM;
                goto finish;
        }
        for (size_t i = 0; i < n; i++) {
                if (cgroup_list_pids(fds[i], true, &tids[i], &n_tids[i]) < 0)
                        continue;
                for (size_t t = 0; t < n_tids[i]; t++)
                        fprintf(m, "%spid == %d", ftell(m) > 0 ? " || " : "", (int) tids[i][t]);
        }
        fclose(m);
        snprintf(path, sizeof(path), "%s/events/sched/sched_wakeup/filter", inst);
        if ((r = write_stringat(AT_FDCWD, path, filter)) < 0) {
                log_error_errno(r, "Cannot set the sched_wakeup filter: %m");
                goto finish;
        }
        for (size_t i = 0; i < n; i++)
                (void) stats_cgroup_schedstat(fds[i], &before[i], NULL);
        snprintf(path, sizeof(path), "%s/events/sched/sched_wakeup/enable", inst);
        if ((r = write_stringat(AT_FDCWD, path, "1")) < 0)
                goto finish;
        struct timespec ts = { (time_t) (window / USEC_PER_SEC), (long) (window % USEC_PER_SEC) * 1000 };
        /* A measuring window, not a wait for an event. */
        (void) nanosleep(&ts, NULL);
        (void) write_stringat(AT_FDCWD, path, "0");

        snprintf(path, sizeof(path), "%s/trace", inst);
        if ((r = read_full_fileat(AT_FDCWD, path, &trace, NULL)) < 0)
                goto finish;

        printf("\nSelf-check over %.1f s: wakeups from /proc (voluntary switches) against tracefs sched_wakeup\n\n",
               (double) window / 1e6);
        printf("%-12s %10s %10s %8s\n", "workload", "/proc", "tracefs", "diff");
        for (size_t i = 0; i < n; i++) {
                uint64_t after, traced = count_traced(trace, tids[i], n_tids[i]);

                if (stats_cgroup_schedstat(fds[i], &after, NULL) < 0)
                        after = 0; /* the cgroup is empty, or gone: nothing counted */
                /* Signed: a thread that ended during the window takes its
                 * switches out of the /proc sum with it, while the
                 * tracepoint has counted its wakeups. */
                double counted = (double) after - (double) before[i];
                double diff = counted - (double) traced;
                /* Off by more than 2 wakeups and 10%: say so. */
                bool off = (diff > 2 || diff < -2) && (diff / (double) MAX(traced, 1) > 0.1 || diff / (double) MAX(traced, 1) < -0.1);
                bad = bad || off;
                printf("%-12s %10.0f %10llu %8.0f%s\n", names[i], counted, (unsigned long long) traced, diff,
                       off ? "  DISAGREE" : "");
        }
        printf(bad ? "\nThe counts disagree: wakeup figures from /proc are not to be trusted here.\n"
                   : "\nThe counts agree.\n");
        r = bad ? -EBADMSG : 0;
finish:
        for (size_t i = 0; i < n; i++)
                free(tids[i]);
        if (rmdir(inst) < 0)
                log_warning_errno(-errno, "Cannot remove the tracefs instance %s: %m", inst);
        return r;
}
