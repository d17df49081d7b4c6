/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* standby-bench: the same workloads under each standby strategy, measured.
 *
 *   compare (default)  wakeups/s of each workload before, during and after
 *                      standby, per strategy, repeated; enter/exit times
 *   enter-exit         enter/exit time of standby-manager on N units x M
 *                      processes next to the floor: bare cgroup.freeze
 *                      writes and waits on the same tree */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <poll.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "bench.h"
#include "cgroup.h"
#include "json.h"
#include "log.h"
#include "macro.h"
#include "standby.h"
#include "strv.h"

#define MAX_REPS 200
#define PERIOD_STRATEGIES "none,slack,slack-1ms,slack-1s,slack-60s,freeze,freeze-windows,periodic"

typedef struct Options {
        const char *manager;
        const char *workload;
        const char *output;
        char **strategies;
        char **workloads;
        char **daemons;          /* the real daemons among the event workloads */
        usec_t window;
        unsigned reps;
        unsigned period_ms;
        unsigned units, procs;
        bool enter_exit;
        bool no_guard;
        bool self_check;
        bool no_events;
        unsigned events;
        const char *listener;
        unsigned samples, idle_seconds, churn_seconds, gap_ms;
        bool backend_systemd;
        bool call_rule_socket;
        bool loaded;
        bool hold;               /* --hold: new work held in standby (bench-hold.c) */
        bool cgroup_storm;       /* --cgroup-storm: a user's cgroups in standby (bench-cgroup-storm.c) */
        unsigned storm_cgroups, storm_depth;
} Options;

static Options opt;
Scratch scratch = { .root_fd = -EBADF };
char tmpdir[256], config_path[300], state_dir[300];
const char *bench_manager_path, *bench_workload_path, *bench_output;
volatile sig_atomic_t bench_interrupted;

static void on_signal(int sig) {
        bench_interrupted = 1;
}

int bench_check_interrupted(void) {
        static bool said;

        if (!bench_interrupted)
                return 0;
        if (!said)
                fprintf(stderr, "standby-bench: interrupted: cleaning up and leaving standby\n");
        said = true;
        return -EINTR;
}

static void help(void) {
        printf("Usage: standby-bench [OPTIONS]\n"
               "\n"
               "Runs workloads in a scratch cgroup tree and measures what standby costs.\n"
               "\n"
               "  --manager PATH        standby-manager to drive (default: build/standby-manager)\n"
               "  --workload PATH       standby-workload binary (default: build/standby-workload)\n"
               "  --strategies LIST     comma-separated: freeze,slack (default both)\n"
               "  --workloads LIST      comma-separated kinds (default nanosleep,poll,epoll,timerfd,\n"
               "                        posix-timer,futex,busy)\n"
               "  --period-ms N         timer period of each workload (default 50)\n"
               "  --duration SECONDS    measuring window per phase (default 2)\n"
               "  --reps N              repetitions of each configuration (default 3)\n"
               "  --output DIR          where results.csv and results.json go (default bench-results)\n"
               "  --enter-exit          measure enter/exit time against the cgroup.freeze floor\n"
               "  --units N --procs M   size of the enter-exit tree (default 100 x 10)\n"
               "  --no-deadlock-guard   run the manager with DeadlockGuard=no\n"
               "  --self-check          first compare the wakeup counts with tracefs sched_wakeup\n"
               "  --events N            events per window in the compare mode (default 14; 0: none)\n"
               "  --daemons LIST        real daemons among the event workloads, found in PATH\n"
               "                        (default redis-server,memcached; empty: none)\n"
               "  --listener[=PATH]     measure standby-listener (default build/standby-listener):\n"
               "                        event latency against a never-frozen service, RSS,\n"
               "                        a storm of 10000 pushes, wakeups while idle\n"
               "  --samples N           listener mode: samples per event kind (default 200)\n"
               "  --idle-seconds N      listener mode: idle window (default 60)\n"
               "  --churn-seconds N     listener mode: standby while a namespace's link and addresses\n"
               "                        change every second, no rule about them (default 5; 0: not run)\n"
               "  --gap-ms N            listener mode: idle time before each sample (default 5)\n"
               "  --backend=systemd     listener mode: the services as units of a systemd --user\n"
               "                        manager, frozen and thawed through it\n"
               "  --hold[=PATH]         in standby, how long a unit made then runs before the listener\n"
               "                        (default build/standby-listener) holds it (--samples, --gap-ms)\n"
               "  --cgroup-storm[=PATH]  in standby, a push and a power-key event to their answers while a\n"
               "                        user (uid 65534) makes --storm-cgroups N cgroups (default 5000),\n"
               "                        against an unloaded listener (--samples, --gap-ms); then the\n"
               "                        listener's RSS after the user's chain of --storm-depth D cgroups\n"
               "                        of 255-byte names (default 3000)\n"
               "  --listener-loaded[=PATH]  a power-key event and a push to their answers, on an\n"
               "                        unloaded listener and while a unit is stuck in state D at its\n"
               "                        window's end and its systemd --user manager is stopped\n"
               "                        (--samples, --gap-ms as above)\n"
               "  --call-rule=socket    listener mode: wake the D-Bus service by an Event=socket rule\n"
               "                        (its own bus connection) instead of Event=dbus-call (the monitor)\n"
               "  --standby-period SECONDS  boot a Debian 12 system under systemd-nspawn and run each\n"
               "                        strategy over a standby period of SECONDS with a seeded event\n"
               "                        schedule (strategies: none, slack, slack-N{us,ms,s}, freeze,\n"
               "                        freeze-windows, periodic; default " PERIOD_STRATEGIES ")\n"
               "  --recovery-seconds N  standby-period: how long to watch after exit (default 60)\n"
               "  --thaw-interval N     standby-period, periodic: first interval frozen, doubling (default 60)\n"
               "  --thaw-window N       standby-period, periodic: seconds thawed each time (default 10)\n"
               "  --seed N              standby-period: the event schedule's seed (default 20141)\n"
               "  --system-dir PATH     standby-period: the system's rootfs cache (default\n"
               "                        /var/tmp/standby-bench-system)\n"
               "  --slack-kinds[=S]     per wakeup kind (nanosleep, poll, select, epoll, futex, timerfd,\n"
               "                        POSIX timers, setitimer, real-time threads, threads and processes\n"
               "                        made after the set), the slack the kernel gives a timer when the\n"
               "                        slack S (default 1s) or the largest is set from outside, and how\n"
               "                        late it fires (--samples per kind, default 5)\n"
               "  -h, --help            this help\n");
}

static int split_commas(const char *s, char ***ret) {
        _cleanup_free_ char *c = strdup(s);
        if (!c)
                return -ENOMEM;
        for (char *p = c; *p; p++)
                if (*p == ',')
                        *p = ' ';
        return strv_split_words(c, ret);
}

/* Starts procs copies of argv in the cgroup sub of the scratch tree and opens it. */
static int start_unit(const char *sub, char *const argv[], unsigned procs, int *ret_fd) {
        for (unsigned p = 0; p < procs; p++) {
                int r = scratch_spawn(&scratch, sub, argv, NULL);
                if (r < 0)
                        return log_error_errno(r, "Failed to start %s in %s: %m", argv[1], sub);
        }
        return scratch_open(&scratch, sub, ret_fd);
}

/* Runs the manager with argv to its end; returns the wall time, or
 * USEC_INFINITY on failure. posix_spawn (a vfork in glibc), not fork: fork
 * copies the bench's own page tables, 0.3-0.4 ms here that the bench would
 * charge to the manager. With quiet, its stdout goes to /dev/null. */
static usec_t spawn_manager(const char *what, char *const argv[], bool quiet) {
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t attr;
        usec_t t0, t = USEC_INFINITY;
        int status = 0;
        pid_t pid;

        if (posix_spawn_file_actions_init(&fa) != 0)
                return USEC_INFINITY;
        if (posix_spawnattr_init(&attr) != 0) {
                posix_spawn_file_actions_destroy(&fa);
                return USEC_INFINITY;
        }
        if (quiet)
                (void) posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
        /* A process group of its own: a terminal's SIGINT is the bench's to
         * handle, and does not end a manager run half way. */
        (void) posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
        (void) posix_spawnattr_setpgroup(&attr, 0);
        t0 = now_usec(CLOCK_MONOTONIC);
        if (posix_spawn(&pid, opt.manager, &fa, &attr, argv, environ) == 0) {
                pid_t w;
                /* A signal the bench handles interrupts the wait, not the
                 * manager's run: wait for its real end. */
                while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
                        ;
                if (w == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0)
                        t = now_usec(CLOCK_MONOTONIC) - t0;
                else if (w != pid)
                        fprintf(stderr, "standby-bench: cannot wait for standby-manager %s: %m\n", what);
                else if (WIFSIGNALED(status))
                        fprintf(stderr, "standby-bench: standby-manager %s was killed by SIG%s\n", what,
                                sigabbrev_np(WTERMSIG(status)) ?: "?");
                else
                        fprintf(stderr, "standby-bench: standby-manager %s failed (exit status %d)\n", what,
                                WEXITSTATUS(status));
        }
        posix_spawn_file_actions_destroy(&fa);
        posix_spawnattr_destroy(&attr);
        return t;
}

/* Runs standby-manager VERB [ARG]; returns its wall time, or USEC_INFINITY on failure. */
usec_t run_manager(const char *verb, const char *arg) {
        char *argv[] = { "standby-manager", "--quiet", "--config", config_path, "--state-dir", state_dir,
                         (char *) verb, (char *) arg, NULL };
        return spawn_manager(verb, argv, false);
}

int write_config(const char *targets) {
        FILE *f = fopen(config_path, "we");
        if (!f)
                return negative_errno();
        fprintf(f, "[Standby]\nTargets=%s\nFreezeTimeout=5s\n%s", targets, opt.no_guard ? "DeadlockGuard=no\n" : "");
        return fclose(f) == 0 ? 0 : negative_errno();
}

/* Waits out a window, returning early (with false) on SIGINT/SIGTERM. */
static bool wait_window(usec_t window) {
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + window;
        struct timespec ts = { (time_t) (deadline / USEC_PER_SEC), (long) (deadline % USEC_PER_SEC) * 1000 };
        while (!bench_interrupted && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
                ;
        return !bench_interrupted;
}

enum { PHASE_BEFORE, PHASE_STANDBY, PHASE_AFTER, _PHASE_MAX };
static const char * const phase_names[_PHASE_MAX] = { "before", "standby", "after" };

#define RECOVERY_BOUND_USEC (5 * USEC_PER_SEC)

/* The compare mode's run: its workloads (the timer workloads, then the
 * event-driven daemons, which count as workloads too), the events, and
 * every figure, in arrays sized for the run. The per-workload figures are
 * [strategy][workload][phase][rep], flattened; see cell(). */
typedef struct Compare {
        const Options *o;
        size_t nw, ns;
        unsigned reps;
        char **names;                /* a row per workload */
        int *fds;                    /* its cgroup */
        int *ticks;                  /* its tick pipe; -EBADF: none (no recovery figure) */
        double *rate, *cpu;          /* wakeups/s, CPU ms per s */
        double *recovery_ms;         /* [s][w][rep]: exit to the first wakeup; NAN: none in time; -1: not measured */
        double *enter_ms, *exit_ms;  /* [s][rep] */
        double *win_rate, *win_cpu, *win_rec; /* one window's figures, per workload */
        Events events;
        EventSamples *ev;            /* [s][before, standby][kind]; NULL: no events */
        double *listener_rate, *bus_rate, *listener_rss; /* [s][rep], in the standby windows */
        usec_t started, total;       /* for the progress line */
} Compare;

static double *cell(const Compare *c, double *a, size_t s, size_t w, int ph) {
        return a + ((s * c->nw + w) * _PHASE_MAX + (size_t) ph) * c->reps;
}

static double *recovery_of(const Compare *c, size_t s, size_t w) {
        return c->recovery_ms + (s * c->nw + w) * c->reps;
}

static EventSamples *samples_of(const Compare *c, size_t s, bool standby) {
        return c->ev + (s * 2 + standby) * _EVENTS_KIND_MAX;
}

static void compare_done(Compare *c) {
        for (size_t w = 0; w < c->nw; w++) {
                safe_close(c->fds[w]);
                safe_close(c->ticks[w]);
        }
        events_done(&c->events);
        strv_free(c->names);
        free(c->fds);
        free(c->ticks);
        free(c->rate);
        free(c->cpu);
        free(c->recovery_ms);
        free(c->enter_ms);
        free(c->exit_ms);
        free(c->win_rate);
        free(c->win_cpu);
        free(c->win_rec);
        free(c->ev);
        free(c->listener_rate);
        free(c->bus_rate);
        free(c->listener_rss);
}

/* Appends a workload; takes fd and tick (closed by compare_done even when
 * this fails). */
static int compare_add(Compare *c, const char *name, int fd, int tick) {
        int *fds = realloc(c->fds, (c->nw + 1) * sizeof(int));
        if (fds)
                c->fds = fds;
        int *ticks = fds ? realloc(c->ticks, (c->nw + 1) * sizeof(int)) : NULL;
        if (ticks)
                c->ticks = ticks;
        if (!ticks || strv_extend(&c->names, name) < 0) {
                safe_close(fd);
                safe_close(tick);
                return -ENOMEM;
        }
        c->fds[c->nw] = fd;
        c->ticks[c->nw] = tick;
        c->nw++;
        return 0;
}

/* Phase 1: each timer workload in its unit, workloads.slice/KIND.service
 * (KIND-2.service and on for a kind listed again). */
static int compare_start_workloads(Compare *c) {
        char sub[256], period[16];
        int r;

        snprintf(period, sizeof(period), "%u", c->o->period_ms);
        for (size_t w = 0; c->o->workloads[w]; w++) {
                const char *kind = c->o->workloads[w];
                unsigned seen = 0;
                for (size_t v = 0; v < w; v++)
                        seen += streq(c->o->workloads[v], kind);
                if (seen == 0)
                        snprintf(sub, sizeof(sub), "workloads.slice/%s.service", kind);
                else
                        snprintf(sub, sizeof(sub), "workloads.slice/%s-%u.service", kind, seen + 1);
                /* "periodic": a mail-sync-style job, every second (a nanosleep loop
                 * of its own period), that must eventually run. */
                bool periodic = streq(kind, "periodic");
                char *argv[] = { (char *) c->o->workload, periodic ? "nanosleep" : (char *) kind, "--period-ms",
                                 periodic ? "1000" : period, "--tick-fd", "3", NULL };
                int fd = -EBADF, tick = -EBADF;
                r = scratch_spawn_ticking(&scratch, sub, argv, NULL, &tick);
                if (r < 0) {
                        safe_close(tick);
                        return log_error_errno(r, "Failed to start the %s workload in %s: %m", kind, sub);
                }
                r = scratch_open(&scratch, sub, &fd);
                if (r < 0) {
                        safe_close(tick);
                        return log_error_errno(r, "Failed to open the cgroup %s/%s: %m", scratch.base, sub);
                }
                r = compare_add(c, kind, fd, tick);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Phase 2 (after the config is written: the listener reads it): the
 * event-driven services and the listener; the real daemons, and the IPC
 * receiver, are workloads too, their own wakeups counted. */
static int compare_start_events(Compare *c) {
        static const struct {
                int kind; /* -1: the IPC receiver */
                const char *name, *sub;
        } daemons[] = { { EVENTS_REDIS, "redis-server", "workloads.slice/redis.service" },
                        { EVENTS_MEMCACHED, "memcached", "workloads.slice/memcached.service" },
                        { -1, "ipc (D-Bus)", "workloads.slice/ipc.service" } };
        int r;

        r = events_setup(&c->events, c->o->listener ? c->o->listener : "build/standby-listener", c->o->workload);
        if (r < 0)
                return r;
        for (size_t d = 0; d < ELEMENTSOF(daemons); d++) {
                int fd = -EBADF;
                if (daemons[d].kind >= 0 ? !c->events.have[daemons[d].kind] : !c->events.have_ipc)
                        continue; /* left out by --daemons */
                r = scratch_open(&scratch, daemons[d].sub, &fd);
                if (r < 0)
                        return log_error_errno(r, "Failed to open the cgroup %s/%s: %m", scratch.base, daemons[d].sub);
                r = compare_add(c, daemons[d].name, fd, -EBADF);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Phase 3: the figures' arrays, once the workloads are known. */
static int compare_allocate(Compare *c) {
        size_t per_cell = c->ns * c->nw * c->reps, per_strategy = c->ns * c->reps;

        c->rate = calloc(per_cell * _PHASE_MAX, sizeof(double));
        c->cpu = calloc(per_cell * _PHASE_MAX, sizeof(double));
        c->recovery_ms = calloc(per_cell, sizeof(double));
        c->enter_ms = calloc(per_strategy, sizeof(double));
        c->exit_ms = calloc(per_strategy, sizeof(double));
        c->win_rate = calloc(c->nw, sizeof(double));
        c->win_cpu = calloc(c->nw, sizeof(double));
        c->win_rec = calloc(c->nw, sizeof(double));
        c->listener_rate = calloc(per_strategy, sizeof(double));
        c->bus_rate = calloc(per_strategy, sizeof(double));
        c->listener_rss = calloc(per_strategy, sizeof(double));
        if (c->o->events > 0)
                c->ev = calloc(c->ns * 2 * _EVENTS_KIND_MAX, sizeof(EventSamples));
        if (!c->rate || !c->cpu || !c->recovery_ms || !c->enter_ms || !c->exit_ms || !c->win_rate || !c->win_cpu ||
            !c->win_rec || !c->listener_rate || !c->bus_rate || !c->listener_rss || (c->o->events > 0 && !c->ev))
                return log_error_errno(-ENOMEM, "Out of memory for %zu workloads x %zu strategies x %u repetitions.",
                                       c->nw, c->ns, c->reps);
        return 0;
}

/* After exit: how long until each workload wakes again, bounded. A healthy
 * one takes at most a period; one that never comes back is NAN. */
static int measure_recovery(const int *ticks, size_t n, usec_t t0, double *ret_ms) {
        _cleanup_free_ struct pollfd *pfds = calloc(n, sizeof(struct pollfd));
        size_t left = n;

        if (!pfds)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                pfds[i] = (struct pollfd) { .fd = ticks[i] >= 0 ? ticks[i] : -1, .events = POLLIN };
                ret_ms[i] = ticks[i] >= 0 ? NAN : -1; /* -1: not measured (no tick pipe) */
                if (ticks[i] < 0)
                        left--;
        }
        while (left > 0) {
                int t = deadline_poll_timeout(t0 + RECOVERY_BOUND_USEC);
                if (t == 0 || poll(pfds, n, t) <= 0)
                        break;
                usec_t now = now_usec(CLOCK_MONOTONIC);
                for (size_t i = 0; i < n; i++)
                        if (pfds[i].fd >= 0 && (pfds[i].revents & POLLIN)) {
                                ret_ms[i] = (double) (now - t0) / 1000.0;
                                bench_drain(ticks[i]);
                                pfds[i].fd = -1; /* poll ignores it from now on */
                                left--;
                        }
        }
        return 0;
}

/* Measures every workload over one window: wakeups/s and CPU ms/s. */
typedef int (*DuringFn)(usec_t window, void *userdata);

static int measure(const int *fds, size_t n, usec_t window, double *rates, double *cpus, DuringFn during,
                   void *userdata) {
        _cleanup_free_ uint64_t *r0 = calloc(n, sizeof(uint64_t)), *c0 = calloc(n, sizeof(uint64_t));
        uint64_t r1, c1;
        usec_t t0, t1;

        if (!r0 || !c0)
                return -ENOMEM;
        t0 = now_usec(CLOCK_MONOTONIC);
        for (size_t i = 0; i < n; i++)
                if (stats_cgroup_schedstat(fds[i], &r0[i], &c0[i]) < 0)
                        return -EIO;
        if (during) {
                int r = during(window, userdata);
                if (r < 0)
                        return r;
        } else if (!wait_window(window))
                return -EINTR;
        if (bench_interrupted)
                return -EINTR;
        t1 = now_usec(CLOCK_MONOTONIC);
        for (size_t i = 0; i < n; i++) {
                if (stats_cgroup_schedstat(fds[i], &r1, &c1) < 0)
                        return -EIO;
                rates[i] = stats_rate(r0[i], r1, t1 - t0);
                cpus[i] = (double) (c1 - c0[i]) / 1e6 * (double) USEC_PER_SEC / (double) (t1 - t0);
        }
        return 0;
}

static double load_average(void) {
        double l = -1;
        FILE *f = fopen("/proc/loadavg", "re");
        if (f) {
                if (fscanf(f, "%lf", &l) != 1)
                        l = -1;
                fclose(f);
        }
        return l;
}

static void print_machine(FILE *f) {
        struct utsname u;
        uname(&u);
        fprintf(f, "# machine: %s %s %s, %ld CPUs\n", u.sysname, u.release, u.machine, sysconf(_SC_NPROCESSORS_ONLN));
}

typedef struct EventRun {
        Events *events;
        unsigned n;              /* events in the window */
        EventSamples *out;       /* _EVENTS_KIND_MAX of them */
        uint64_t listener_runs, bus_runs;
} EventRun;

static int run_events(usec_t window, void *userdata) {
        EventRun *er = userdata;
        uint64_t l0 = 0, b0 = 0, l1 = 0, b1 = 0;
        int r;

        (void) stats_pid_schedstat(listener_pid, &l0, NULL);
        (void) stats_pid_schedstat(dbus_pid, &b0, NULL);
        r = events_run(er->events, window, er->n, er->out);
        (void) stats_pid_schedstat(listener_pid, &l1, NULL);
        (void) stats_pid_schedstat(dbus_pid, &b1, NULL);
        er->listener_runs = l1 - l0;
        er->bus_runs = b1 - b0;
        return r;
}

/* One cell: the median and, when the repetitions differ, the min-max range. */
static void print_range(const double *v, size_t n, int decimals) {
        double lo = stats_min(v, n), hi = stats_max(v, n);
        char cell[64];

        if (lo == hi)
                snprintf(cell, sizeof(cell), "%.*f", decimals, stats_median(v, n));
        else
                snprintf(cell, sizeof(cell), "%.*f (%.*f-%.*f)", decimals, stats_median(v, n), decimals, lo, decimals, hi);
        printf(" %-21s", cell);
}

static void print_event_row(FILE *csv, const char *kind, const char *label, const EventSamples *s) {
        if (s->n == 0) {
                printf("%-10s %-8s %8s %8s %8s %7u\n", kind, label, "-", "-", "-", s->missed);
                return;
        }
        double p50 = stats_percentile(s->usec, s->n, 50) / 1000.0, p99 = stats_percentile(s->usec, s->n, 99) / 1000.0;
        double max = stats_max(s->usec, s->n) / 1000.0;
        printf("%-10s %-8s %8.2f %8.2f %8.2f %7u\n", kind, label, p50, p99, max, s->missed);
        if (csv)
                fprintf(csv, "%s,%s,%zu,%.3f,%.3f,%.3f,%u\n", kind, label, s->n, p50, p99, max, s->missed);
}

/* Phase 4, one window of one repetition and strategy: enter before the
 * standby window, exit (timed, and each workload's way back) before the
 * after window; events during the before and standby windows. */
static int compare_window(Compare *c, size_t s, unsigned rep, int ph) {
        const char *strategy = c->o->strategies[s];
        char strat[64];
        int r;

        usec_t el = now_usec(CLOCK_MONOTONIC) - c->started;
        fprintf(stderr, "[%s %u/%u] %-7s window %.0f s   (about %.0f s left)\n", strategy, rep + 1, c->reps,
                phase_names[ph], (double) c->o->window / 1e6, c->total > el ? (double) (c->total - el) / 1e6 : 0.0);
        if (ph == PHASE_STANDBY) {
                snprintf(strat, sizeof(strat), "--strategy=%s", strategy);
                usec_t t = run_manager("enter", strat);
                if (t == USEC_INFINITY)
                        return -EIO;
                c->enter_ms[s * c->reps + rep] = (double) t / 1000.0;
        }
        if (ph == PHASE_AFTER) {
                for (size_t w = 0; w < c->nw; w++)
                        if (c->ticks[w] >= 0)
                                bench_drain(c->ticks[w]);
                usec_t t0 = now_usec(CLOCK_MONOTONIC);
                usec_t t = run_manager("exit", NULL);
                if (t == USEC_INFINITY)
                        return -EIO;
                c->exit_ms[s * c->reps + rep] = (double) t / 1000.0;
                r = measure_recovery(c->ticks, c->nw, t0, c->win_rec);
                if (r < 0)
                        return r;
                for (size_t w = 0; w < c->nw; w++)
                        recovery_of(c, s, w)[rep] = c->win_rec[w];
        }
        EventRun er = { .events = &c->events, .n = c->o->events };
        bool with_events = c->ev && ph != PHASE_AFTER;
        if (with_events)
                er.out = samples_of(c, s, ph == PHASE_STANDBY);
        r = measure(c->fds, c->nw, c->o->window, c->win_rate, c->win_cpu, with_events ? run_events : NULL, &er);
        if (with_events && ph == PHASE_STANDBY) {
                c->listener_rate[s * c->reps + rep] = (double) er.listener_runs * 1e6 / (double) c->o->window;
                c->bus_rate[s * c->reps + rep] = (double) er.bus_runs * 1e6 / (double) c->o->window;
                c->listener_rss[s * c->reps + rep] = (double) bench_rss_kib(listener_pid);
        }
        if (r < 0) {
                if (ph == PHASE_STANDBY)
                        (void) run_manager("exit", NULL);
                return r;
        }
        for (size_t w = 0; w < c->nw; w++) {
                cell(c, c->rate, s, w, ph)[rep] = c->win_rate[w];
                cell(c, c->cpu, s, w, ph)[rep] = c->win_cpu[w];
        }
        return 0;
}

/* Phase 4: every repetition of every strategy, phase after phase. */
static int compare_run(Compare *c) {
        c->started = now_usec(CLOCK_MONOTONIC);
        c->total = (usec_t) c->ns * c->reps * _PHASE_MAX * c->o->window;
        for (unsigned rep = 0; rep < c->reps; rep++)
                for (size_t s = 0; s < c->ns; s++)
                        for (int ph = 0; ph < _PHASE_MAX; ph++) {
                                int r = compare_window(c, s, rep, ph);
                                if (r < 0)
                                        return r;
                        }
        return 0;
}

/* The table: one row per workload and strategy, each phase as its median
 * over the repetitions and the min-max range; the noise; enter and exit. */
static void compare_print_wakeups(const Compare *c) {
        struct utsname u;

        uname(&u);
        printf("\nMachine: %s %s, %ld CPUs; load average at the end %.2f. Wakeups per second, median (min-max) "
               "of %u runs, %.0f s windows, period %u ms\n\n",
               u.release, u.machine, sysconf(_SC_NPROCESSORS_ONLN), load_average(), c->reps,
               (double) c->o->window / 1e6, c->o->period_ms);
        printf("%-14s %-8s %-21s %-21s %-21s\n", "workload", "strategy", "before", "standby", "after");
        for (size_t w = 0; w < c->nw; w++)
                for (size_t s = 0; s < c->ns; s++) {
                        printf("%-14s %-8s", s == 0 ? c->names[w] : "", c->o->strategies[s]);
                        for (int ph = 0; ph < _PHASE_MAX; ph++)
                                print_range(cell(c, c->rate, s, w, ph), c->reps, 1);
                        printf("\n");
                }
        /* Noise: the widest spread between repetitions of any busy cell. */
        double worst = 0;
        const char *worst_where = NULL;
        for (size_t w = 0; w < c->nw && c->reps > 1; w++)
                for (size_t s = 0; s < c->ns; s++)
                        for (int ph = 0; ph < _PHASE_MAX; ph++) {
                                const double *v = cell(c, c->rate, s, w, ph);
                                double lo = stats_min(v, c->reps), hi = stats_max(v, c->reps);
                                if (hi >= 5 && (hi - lo) / hi > worst) {
                                        worst = (hi - lo) / hi;
                                        worst_where = c->names[w];
                                }
                        }
        if (worst_where)
                printf("\nNoise: repetitions of a cell differ by at most %.0f%% (%s).\n", worst * 100, worst_where);
        printf("\n%-23s %-21s %-21s\n", "standby-manager", "enter ms", "exit ms");
        for (size_t s = 0; s < c->ns; s++) {
                printf("%-14s %-8s", "", c->o->strategies[s]);
                print_range(c->enter_ms + s * c->reps, c->reps, 2);
                print_range(c->exit_ms + s * c->reps, c->reps, 2);
                printf("\n");
        }
}

/* Recovery: from the start of exit to each workload's next wakeup. */
static int compare_print_recovery(const Compare *c) {
        _cleanup_free_ double *v = calloc(c->reps, sizeof(double));
        bool never = false;

        if (!v)
                return -ENOMEM;
        printf("\nBack on schedule after exit: first wakeup, ms from the start of exit, median (min-max) "
               "(NEVER = none within %.0f s)\n\n", (double) RECOVERY_BOUND_USEC / 1e6);
        printf("%-14s", "workload");
        for (size_t s = 0; s < c->ns; s++)
                printf(" %-21s", c->o->strategies[s]);
        printf("\n");
        for (size_t w = 0; w < c->nw; w++) {
                if (c->ticks[w] < 0)
                        continue; /* no tick pipe: not measured */
                printf("%-14s", c->names[w]);
                for (size_t s = 0; s < c->ns; s++) {
                        const double *rec = recovery_of(c, s, w);
                        size_t k = 0, lost = 0;
                        for (unsigned rep = 0; rep < c->reps; rep++)
                                if (isnan(rec[rep]))
                                        lost++;
                                else
                                        v[k++] = rec[rep];
                        if (lost) {
                                char text[48];
                                snprintf(text, sizeof(text), "NEVER %zu/%u", lost, c->reps);
                                printf(" %-21s", text);
                                never = true;
                        } else
                                print_range(v, k, 1);
                }
                printf("\n");
        }
        if (never)
                printf("\n!!! Some workloads did not wake again within %.0f s of exit: their timers are still on the "
                       "standby range. !!!\n", (double) RECOVERY_BOUND_USEC / 1e6);
        return 0;
}

/* The samples of event kind k: strategy st's standby windows, or (st ==
 * ns, "none") every strategy's before-window pooled; in ms. */
static size_t event_samples(const Compare *c, int k, size_t st, double *v) {
        size_t n = 0;
        for (size_t s = 0; s < c->ns; s++) {
                const EventSamples *e = &samples_of(c, s, st != c->ns)[k];
                if (st != c->ns && s != st)
                        continue;
                for (size_t i = 0; i < e->n && n < EVENTS_MAX_SAMPLES; i++)
                        v[n++] = e->usec[i] / 1000.0;
        }
        return n;
}

/* The events' table (events.csv), their CDFs (events.dat, events.gp) and
 * what the listener and dbus-daemon cost in standby (infrastructure.csv). */
static int compare_print_events(const Compare *c) {
        const char * const *kinds = events_kind_names;
        const char *out = c->o->output;
        _cleanup_free_ EventSamples *none = calloc(1, sizeof(EventSamples));
        _cleanup_free_ double *v = calloc(EVENTS_MAX_SAMPLES, sizeof(double));
        char path[4096], datp[4096], gpp[4096];

        if (!none || !v)
                return -ENOMEM;
        snprintf(path, sizeof(path), "%s/events.csv", out);
        FILE *ecsv = fopen(path, "we");
        if (ecsv)
                fprintf(ecsv, "kind,strategy,samples,p50_ms,p99_ms,max_ms,missed\n");
        printf("\nEvents, %u per window at seeded times: a client connecting to a server, a push server "
               "sending on a held connection,\na push over D-Bus (a method call to a service's name), "
               "redis-cli-style PING to redis-server, \"version\" to memcached,\na veth link going up or down "
               "(to a link watcher), a power-button press (to a power-key handler).\n"
               "Time to the service's reply, ms; missed = no reply in 2 s\n\n",
               c->o->events);
        printf("%-10s %-8s %8s %8s %8s %7s\n", "event", "strategy", "p50", "p99", "max", "missed");
        for (int k = 0; k < _EVENTS_KIND_MAX; k++) {
                if (!c->events.have[k])
                        continue;
                /* "none": every strategy's before-window, pooled. */
                *none = (EventSamples) {};
                for (size_t s = 0; s < c->ns; s++) {
                        const EventSamples *b = &samples_of(c, s, false)[k];
                        for (size_t i = 0; i < b->n && none->n < EVENTS_MAX_SAMPLES; i++)
                                none->usec[none->n++] = b->usec[i];
                        none->missed += b->missed;
                }
                print_event_row(ecsv, kinds[k], "none", none);
                for (size_t s = 0; s < c->ns; s++)
                        print_event_row(ecsv, kinds[k], c->o->strategies[s], &samples_of(c, s, true)[k]);
        }
        if (ecsv)
                fclose(ecsv);

        /* CDF per event kind and strategy: one data block each. */
        snprintf(datp, sizeof(datp), "%s/events.dat", out);
        snprintf(gpp, sizeof(gpp), "%s/events.gp", out);
        FILE *dat = fopen(datp, "we"), *gp = fopen(gpp, "we");
        int plots = 0;
        for (int k = 0; k < _EVENTS_KIND_MAX; k++)
                plots += c->events.have[k];
        if (dat && gp) {
                fprintf(gp, "set terminal pngcairo size 1000,%d\nset output '%s/events.png'\n"
                            "set multiplot layout %d,2 title 'Event to reply, CDF per strategy and event kind'\n"
                            "set logscale x\nset grid\nset key bottom right\nset xlabel 'ms'\n",
                        350 * ((plots + 1) / 2), out, (plots + 1) / 2);
                int block = 0;
                for (int k = 0; k < _EVENTS_KIND_MAX; k++) {
                        if (!c->events.have[k])
                                continue;
                        fprintf(gp, "set title '%s'\nplot ", kinds[k]);
                        for (size_t st = 0; st <= c->ns; st++) {
                                const char *label = st == c->ns ? "none" : c->o->strategies[st];
                                size_t n = event_samples(c, k, st, v);
                                stats_sort(v, n);
                                fprintf(dat, "# %s %s\n", kinds[k], label);
                                for (size_t i = 0; i < n; i++)
                                        fprintf(dat, "%.4f %.4f\n", v[i], (double) (i + 1) / (double) n);
                                if (n == 0)
                                        fprintf(dat, "0.001 0\n");
                                fprintf(dat, "\n\n");
                                fprintf(gp, "%s'%s' index %d using 1:2 with steps lw 2 title '%s'", st ? ", " : "", datp,
                                        block++, label);
                        }
                        fprintf(gp, "\n");
                }
                fprintf(gp, "unset multiplot\n");
        }
        if (dat)
                fclose(dat);
        if (gp) {
                fclose(gp);
                if (dat && bench_gnuplot(gpp) >= 0)
                        printf("\nPlot: %s/events.png\n", out);
        }

        printf("\nInfrastructure in standby (median): ");
        for (size_t s = 0; s < c->ns; s++)
                printf("%s%s: listener %.1f runs/s, RSS %.0f KiB; dbus-daemon %.1f runs/s", s ? "; " : "",
                       c->o->strategies[s], stats_median(c->listener_rate + s * c->reps, c->reps),
                       stats_median(c->listener_rss + s * c->reps, c->reps), stats_median(c->bus_rate + s * c->reps, c->reps));
        printf("\n");
        snprintf(path, sizeof(path), "%s/infrastructure.csv", out);
        FILE *icsv = fopen(path, "we");
        if (icsv) {
                fprintf(icsv, "strategy,rep,listener_runs_per_s,listener_rss_kib,dbus_daemon_runs_per_s\n");
                for (size_t s = 0; s < c->ns; s++)
                        for (unsigned rep = 0; rep < c->reps; rep++)
                                fprintf(icsv, "%s,%u,%.2f,%.0f,%.2f\n", c->o->strategies[s], rep + 1,
                                        c->listener_rate[s * c->reps + rep], c->listener_rss[s * c->reps + rep],
                                        c->bus_rate[s * c->reps + rep]);
                fclose(icsv);
        }
        return 0;
}

/* results.json: every repetition, every phase, every event sample. */
static void compare_write_json(const Compare *c, FILE *js) {
        const char * const *strategies = (const char * const *) c->o->strategies;
        bool first = true;

        fprintf(js, "{\"period_ms\":%u,\"window_s\":%.3f,\"reps\":%u,\"results\":[", c->o->period_ms,
                (double) c->o->window / 1e6, c->reps);
        for (size_t s = 0; s < c->ns; s++)
                for (size_t w = 0; w < c->nw; w++)
                        for (unsigned rep = 0; rep < c->reps; rep++)
                                for (int ph = 0; ph < _PHASE_MAX; ph++) {
                                        fprintf(js, "%s{\"strategy\":", first ? "" : ",");
                                        json_print_string(js, strategies[s]);
                                        fprintf(js, ",\"workload\":");
                                        json_print_string(js, c->names[w]);
                                        fprintf(js, ",\"rep\":%u,\"phase\":\"%s\",\"wakeups_per_s\":%.3f,\"cpu_ms_per_s\":%.3f}",
                                                rep + 1, phase_names[ph], cell(c, c->rate, s, w, ph)[rep],
                                                cell(c, c->cpu, s, w, ph)[rep]);
                                        first = false;
                                }
        fprintf(js, "],\"enter_exit_ms\":[");
        first = true;
        for (size_t s = 0; s < c->ns; s++)
                for (unsigned rep = 0; rep < c->reps; rep++) {
                        fprintf(js, "%s{\"strategy\":\"%s\",\"rep\":%u,\"enter_ms\":%.3f,\"exit_ms\":%.3f}",
                                first ? "" : ",", strategies[s], rep + 1, c->enter_ms[s * c->reps + rep],
                                c->exit_ms[s * c->reps + rep]);
                        first = false;
                }
        /* Recovery (null: no wakeup within the bound; absent: not measured). */
        fprintf(js, "],\"recovery_ms\":[");
        first = true;
        for (size_t s = 0; s < c->ns; s++)
                for (size_t w = 0; w < c->nw; w++)
                        for (unsigned rep = 0; rep < c->reps && c->ticks[w] >= 0; rep++) {
                                double v = recovery_of(c, s, w)[rep];
                                fprintf(js, "%s{\"strategy\":\"%s\",\"workload\":", first ? "" : ",", strategies[s]);
                                json_print_string(js, c->names[w]);
                                if (isnan(v))
                                        fprintf(js, ",\"rep\":%u,\"ms\":null}", rep + 1);
                                else
                                        fprintf(js, ",\"rep\":%u,\"ms\":%.3f}", rep + 1, v);
                                first = false;
                        }
        /* Every event sample, and the misses, per strategy and window. */
        fprintf(js, "],\"events\":[");
        first = true;
        for (size_t s = 0; c->ev && s < c->ns; s++)
                for (int standby = 0; standby < 2; standby++)
                        for (int k = 0; k < _EVENTS_KIND_MAX; k++) {
                                const EventSamples *e = &samples_of(c, s, standby)[k];
                                if (!c->events.have[k])
                                        continue;
                                fprintf(js, "%s{\"strategy\":\"%s\",\"phase\":\"%s\",\"kind\":\"%s\",\"missed\":%u,\"ms\":[",
                                        first ? "" : ",", strategies[s], phase_names[standby ? PHASE_STANDBY : PHASE_BEFORE],
                                        events_kind_names[k], e->missed);
                                for (size_t i = 0; i < e->n; i++)
                                        fprintf(js, "%s%.4f", i ? "," : "", e->usec[i] / 1000.0);
                                fprintf(js, "]}");
                                first = false;
                        }
        fprintf(js, "],\"infrastructure\":[");
        first = true;
        for (size_t s = 0; c->ev && s < c->ns; s++)
                for (unsigned rep = 0; rep < c->reps; rep++) {
                        fprintf(js, "%s{\"strategy\":\"%s\",\"rep\":%u,\"listener_runs_per_s\":%.2f,\"listener_rss_kib\":%.0f,"
                                    "\"dbus_daemon_runs_per_s\":%.2f}",
                                first ? "" : ",", strategies[s], rep + 1, c->listener_rate[s * c->reps + rep],
                                c->listener_rss[s * c->reps + rep], c->bus_rate[s * c->reps + rep]);
                        first = false;
                }
        fprintf(js, "]}\n");
}

/* results.csv, results.json and recovery.csv. */
static int compare_write_results(const Compare *c) {
        const char *out = c->o->output;
        char path[4096];

        snprintf(path, sizeof(path), "%s/results.csv", out);
        FILE *csv = fopen(path, "we");
        snprintf(path, sizeof(path), "%s/results.json", out);
        FILE *js = fopen(path, "we");
        if (!csv || !js) {
                int r = -errno;
                if (csv)
                        fclose(csv);
                if (js)
                        fclose(js);
                return log_error_errno(r, "Failed to write results in %s: %m", out);
        }
        print_machine(csv);
        fprintf(csv, "strategy,workload,rep,phase,wakeups_per_s,cpu_ms_per_s\n");
        for (size_t s = 0; s < c->ns; s++)
                for (size_t w = 0; w < c->nw; w++)
                        for (unsigned rep = 0; rep < c->reps; rep++)
                                for (int ph = 0; ph < _PHASE_MAX; ph++)
                                        fprintf(csv, "%s,%s,%u,%s,%.3f,%.3f\n", c->o->strategies[s], c->names[w],
                                                rep + 1, phase_names[ph], cell(c, c->rate, s, w, ph)[rep],
                                                cell(c, c->cpu, s, w, ph)[rep]);
        compare_write_json(c, js);
        fclose(csv);
        fclose(js);

        snprintf(path, sizeof(path), "%s/recovery.csv", out);
        FILE *rc = fopen(path, "we");
        if (rc) {
                print_machine(rc);
                fprintf(rc, "strategy,workload,rep,recovery_ms\n");
                for (size_t s = 0; s < c->ns; s++)
                        for (size_t w = 0; w < c->nw; w++)
                                for (unsigned rep = 0; rep < c->reps; rep++)
                                        fprintf(rc, "%s,%s,%u,%.3f\n", c->o->strategies[s], c->names[w], rep + 1,
                                                recovery_of(c, s, w)[rep]);
                fclose(rc);
        }
        return 0;
}

/* The plot: standby wakeups per workload and strategy, next to "before". */
static void compare_plot_wakeups(const Compare *c) {
        const char *out = c->o->output;
        char path[4096];

        snprintf(path, sizeof(path), "%s/wakeups.dat", out);
        FILE *dat = fopen(path, "we");
        if (!dat)
                return;
        fprintf(dat, "# workload none");
        for (size_t s = 0; s < c->ns; s++)
                fprintf(dat, " %s", c->o->strategies[s]);
        fprintf(dat, "\n");
        for (size_t w = 0; w < c->nw; w++) {
                /* Quoted: a name with a space ("ipc (D-Bus)") is one column. */
                fprintf(dat, "\"%s\" %.3f", c->names[w], stats_median(cell(c, c->rate, 0, w, PHASE_BEFORE), c->reps));
                for (size_t s = 0; s < c->ns; s++)
                        fprintf(dat, " %.3f", stats_median(cell(c, c->rate, s, w, PHASE_STANDBY), c->reps));
                fprintf(dat, "\n");
        }
        fclose(dat);
        snprintf(path, sizeof(path), "%s/wakeups.gp", out);
        FILE *gp = fopen(path, "we");
        if (!gp)
                return;
        fprintf(gp, "set terminal pngcairo size 900,500\nset output '%s/wakeups.png'\n"
                    "set title 'Wakeups per second in standby (median of %u runs, period %u ms)'\n"
                    "set style data histograms\nset style histogram clustered gap 1\n"
                    "set style fill solid 0.8 border -1\nset ylabel 'wakeups/s'\nset key top right\n"
                    "set yrange [0:*]\nset offsets 0,0,2,0\nset xtics rotate by -30\n"
                    "plot '%s/wakeups.dat' using 2:xtic(1) title 'no standby'",
                out, c->reps, c->o->period_ms, out);
        for (size_t s = 0; s < c->ns; s++)
                fprintf(gp, ", '' using %zu title '%s'", s + 3, c->o->strategies[s]);
        fprintf(gp, "\n");
        fclose(gp);
        if (bench_gnuplot(path) >= 0)
                printf("\nPlot: %s/wakeups.png\n", out);
}

static int run_compare(const Options *o) {
        _cleanup_(compare_done) Compare c = { .o = o, .ns = strv_length(o->strategies), .reps = o->reps,
                                              .events = EVENTS_INIT };
        char targets[512];
        int r;

        /* What the run needs, before anything starts: a missing daemon is
         * an error, not a row left out of the table. */
        if (o->events > 0) {
                r = events_find_daemons(&c.events, o->daemons);
                if (r < 0)
                        return r;
        }
        r = compare_start_workloads(&c);
        if (r < 0)
                return r;
        snprintf(targets, sizeof(targets), "%s/workloads.slice", scratch.base);
        r = write_config(targets);
        if (r < 0)
                return log_error_errno(r, "Failed to write %s: %m", config_path);
        if (o->self_check) {
                r = bench_self_check(c.fds, c.names, c.nw, o->window);
                if (r == -EBADMSG)
                        return log_error_errno(r, "--self-check: the wakeup counts from /proc and from tracefs disagree "
                                                  "(above): the comparison's wakeup figures would not be valid.");
                if (r < 0)
                        return r;
        }
        if (o->events > 0) {
                r = compare_start_events(&c);
                if (r < 0)
                        return r;
        }
        r = compare_allocate(&c);
        if (r < 0)
                return r;
        r = compare_run(&c);
        if (r < 0)
                return r;

        compare_print_wakeups(&c);
        r = compare_print_recovery(&c);
        if (r >= 0 && c.ev)
                r = compare_print_events(&c);
        if (r >= 0)
                r = compare_write_results(&c);
        if (r < 0)
                return r;
        compare_plot_wakeups(&c);
        printf("\nResults: %s/results.csv, %s/results.json, %s/recovery.csv\n", o->output, o->output, o->output);
        return 0;
}

/* The floor: write cgroup.freeze on every unit, wait for all (one poll set). */
static usec_t floor_pass(int *fds, size_t n, bool freeze) {
        usec_t t0 = now_usec(CLOCK_MONOTONIC);
        for (size_t i = 0; i < n; i++)
                if (cgroup_set_freeze(fds[i], freeze) < 0)
                        return USEC_INFINITY;
        if (cgroup_wait_frozen(fds, n, freeze, t0 + 10 * USEC_PER_SEC, NULL) < 0)
                return USEC_INFINITY;
        return now_usec(CLOCK_MONOTONIC) - t0;
}

static int run_enter_exit(void) {
        _cleanup_free_ int *fds = calloc(opt.units, sizeof(int));
        double fe[MAX_REPS], fx[MAX_REPS], me[MAX_REPS], mx[MAX_REPS], sv[MAX_REPS];
        char sub[256], targets[512];
        int r;

        if (!fds)
                return -ENOMEM;
        fprintf(stderr, "Starting %u units x %u processes...\n", opt.units, opt.procs);
        for (unsigned u = 0; u < opt.units; u++) {
                snprintf(sub, sizeof(sub), "units.slice/u%03u.service", u);
                char *argv[] = { (char *) opt.workload, "idle", NULL };
                r = start_unit(sub, argv, opt.procs, &fds[u]);
                if (r < 0)
                        return r;
        }
        snprintf(targets, sizeof(targets), "%s/units.slice", scratch.base);
        r = write_config(targets);
        if (r < 0)
                return r;

        /* Interleaved, so that drift on a shared machine hits both alike, and
         * in alternating order: the first freeze of a pair starts while the
         * thawed tasks of the last pair are still waking up. */
        /* And what any run of the manager costs before and after its work:
         * the same binary spawned for --version, waited for alike. */
        char *version_argv[] = { "standby-manager", "--version", NULL };
        for (unsigned rep = 0; rep < opt.reps && !bench_interrupted; rep++) {
                usec_t a, b, c, d, v;
                if (rep % 2 == 0) {
                        a = floor_pass(fds, opt.units, true);
                        b = floor_pass(fds, opt.units, false);
                        c = run_manager("enter", NULL);
                        d = run_manager("exit", NULL);
                        v = spawn_manager("--version", version_argv, true);
                } else {
                        v = spawn_manager("--version", version_argv, true);
                        c = run_manager("enter", NULL);
                        d = run_manager("exit", NULL);
                        a = floor_pass(fds, opt.units, true);
                        b = floor_pass(fds, opt.units, false);
                }
                if (a == USEC_INFINITY || b == USEC_INFINITY || c == USEC_INFINITY || d == USEC_INFINITY ||
                    v == USEC_INFINITY)
                        return -EIO;
                fe[rep] = (double) a / 1000.0;
                fx[rep] = (double) b / 1000.0;
                me[rep] = (double) c / 1000.0;
                mx[rep] = (double) d / 1000.0;
                sv[rep] = (double) v / 1000.0;
                fprintf(stderr, "[enter-exit %u/%u] floor %.2f/%.2f ms, manager %.2f/%.2f ms\n", rep + 1, opt.reps,
                        fe[rep], fx[rep], me[rep], mx[rep]);
        }
        for (unsigned u = 0; u < opt.units; u++)
                safe_close(fds[u]);
        if (bench_interrupted)
                return -EINTR;

        double mfe = stats_median(fe, opt.reps), mfx = stats_median(fx, opt.reps);
        double mme = stats_median(me, opt.reps), mmx = stats_median(mx, opt.reps);
        printf("\nEnter/exit, %u units x %u processes, median of %u (min-max)\n\n", opt.units, opt.procs, opt.reps);
        printf("%-28s %10s %21s\n", "", "enter ms", "exit ms");
        printf("%-28s %10.2f (%.2f-%.2f) %8.2f (%.2f-%.2f)\n", "floor (bare cgroup.freeze)", mfe, stats_min(fe, opt.reps),
               stats_max(fe, opt.reps), mfx, stats_min(fx, opt.reps), stats_max(fx, opt.reps));
        printf("%-28s %10.2f (%.2f-%.2f) %8.2f (%.2f-%.2f)\n", "standby-manager (whole run)", mme,
               stats_min(me, opt.reps), stats_max(me, opt.reps), mmx, stats_min(mx, opt.reps), stats_max(mx, opt.reps));
        printf("%-28s %10.2fx %20.2fx\n", "ratio manager/floor", mme / mfe, mmx / mfx);
        /* Each pair ran back to back, so its own ratio cancels the machine's
         * drift over the run; the ratio of the medians above does not. */
        double re[MAX_REPS], rx[MAX_REPS];
        for (unsigned rep = 0; rep < opt.reps; rep++) {
                re[rep] = me[rep] / fe[rep];
                rx[rep] = mx[rep] / fx[rep];
        }
        printf("%-28s %10.2fx %20.2fx\n", "ratio per pair (median)", stats_median(re, opt.reps),
               stats_median(rx, opt.reps));
        /* Apart, for whoever weighs the manager's own work against the floor:
         * starting and ending a process, which the floor (a loop inside the
         * bench) never pays. The ratios above include it. */
        double msv = stats_median(sv, opt.reps);
        printf("\n%-28s %10.2f (%.2f-%.2f)\n", "process start+exit (--version)", msv, stats_min(sv, opt.reps),
               stats_max(sv, opt.reps));
        printf("%-28s %10.2fx %20.2fx\n", "ratio without it", (mme - msv) / mfe, (mmx - msv) / mfx);

        char path[4096];
        snprintf(path, sizeof(path), "%s/enter-exit.csv", opt.output);
        FILE *csv = fopen(path, "we");
        if (csv) {
                print_machine(csv);
                fprintf(csv, "rep,floor_enter_ms,floor_exit_ms,manager_enter_ms,manager_exit_ms,manager_version_ms\n");
                for (unsigned rep = 0; rep < opt.reps; rep++)
                        fprintf(csv, "%u,%.3f,%.3f,%.3f,%.3f,%.3f\n", rep + 1, fe[rep], fx[rep], me[rep], mx[rep],
                                sv[rep]);
                fclose(csv);
                printf("\nResults: %s\n", path);
        }
        return 0;
}

int main(int argc, char *argv[]) {
        enum { ARG_MANAGER = 0x100, ARG_WORKLOAD, ARG_STRATEGIES, ARG_WORKLOADS, ARG_PERIOD, ARG_DURATION, ARG_REPS,
               ARG_OUTPUT, ARG_ENTER_EXIT, ARG_UNITS, ARG_PROCS, ARG_NO_GUARD, ARG_SELF_CHECK, ARG_EVENTS, ARG_DAEMONS,
               ARG_LISTENER, ARG_SAMPLES, ARG_IDLE, ARG_CHURN, ARG_GAP, ARG_BACKEND, ARG_LOADED, ARG_HOLD,
               ARG_CALL_RULE, ARG_STANDBY_PERIOD, ARG_RECOVERY, ARG_THAW_INTERVAL, ARG_THAW_WINDOW, ARG_SEED,
               ARG_SYSTEM_DIR, ARG_SLACK_KINDS, ARG_CGROUP_STORM, ARG_STORM_CGROUPS, ARG_STORM_DEPTH };
        static const struct option options[] = {
                { "manager", required_argument, NULL, ARG_MANAGER },
                { "workload", required_argument, NULL, ARG_WORKLOAD },
                { "strategies", required_argument, NULL, ARG_STRATEGIES },
                { "workloads", required_argument, NULL, ARG_WORKLOADS },
                { "period-ms", required_argument, NULL, ARG_PERIOD },
                { "duration", required_argument, NULL, ARG_DURATION },
                { "reps", required_argument, NULL, ARG_REPS },
                { "output", required_argument, NULL, ARG_OUTPUT },
                { "enter-exit", no_argument, NULL, ARG_ENTER_EXIT },
                { "units", required_argument, NULL, ARG_UNITS },
                { "procs", required_argument, NULL, ARG_PROCS },
                { "no-deadlock-guard", no_argument, NULL, ARG_NO_GUARD },
                { "self-check", no_argument, NULL, ARG_SELF_CHECK },
                { "events", required_argument, NULL, ARG_EVENTS },
                { "daemons", required_argument, NULL, ARG_DAEMONS },
                { "listener", optional_argument, NULL, ARG_LISTENER },
                { "listener-loaded", optional_argument, NULL, ARG_LOADED },
                { "hold", optional_argument, NULL, ARG_HOLD },
                { "cgroup-storm", optional_argument, NULL, ARG_CGROUP_STORM },
                { "storm-cgroups", required_argument, NULL, ARG_STORM_CGROUPS },
                { "storm-depth", required_argument, NULL, ARG_STORM_DEPTH },
                { "samples", required_argument, NULL, ARG_SAMPLES },
                { "idle-seconds", required_argument, NULL, ARG_IDLE },
                { "churn-seconds", required_argument, NULL, ARG_CHURN },
                { "gap-ms", required_argument, NULL, ARG_GAP },
                { "backend", required_argument, NULL, ARG_BACKEND },
                { "call-rule", required_argument, NULL, ARG_CALL_RULE },
                { "standby-period", required_argument, NULL, ARG_STANDBY_PERIOD },
                { "recovery-seconds", required_argument, NULL, ARG_RECOVERY },
                { "thaw-interval", required_argument, NULL, ARG_THAW_INTERVAL },
                { "thaw-window", required_argument, NULL, ARG_THAW_WINDOW },
                { "seed", required_argument, NULL, ARG_SEED },
                { "system-dir", required_argument, NULL, ARG_SYSTEM_DIR },
                { "slack-kinds", optional_argument, NULL, ARG_SLACK_KINDS },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        PeriodOptions period = { .work = "/var/tmp/standby-bench-system", .recovery_seconds = 60, .thaw_first = 60,
                                 .thaw_window = 10, .seed = 20141 };
        bool strategies_given = false;
        const char *strategies = "freeze,slack", *workloads = "nanosleep,poll,epoll,timerfd,posix-timer,futex,busy,periodic";
        const char *daemons = "redis-server,memcached";
        double duration = 2;
        usec_t slack_kinds = 0;     /* --slack-kinds: the slack S; 0: not this mode */
        bool samples_given = false;
        int c, r;

        log_set_prefix("standby-bench");
        opt = (Options) { .manager = "build/standby-manager", .workload = "build/standby-workload",
                          .output = "bench-results", .reps = 3, .period_ms = 50, .units = 100, .procs = 10,
                          .samples = 200, .idle_seconds = 60, .churn_seconds = 5, .gap_ms = 5, .events = 14,
                          .storm_cgroups = 5000, .storm_depth = 3000 };
        /* The rule files the bench writes for the listener must not be
         * group- or world-writable, or the listener refuses them. */
        umask(022);
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case ARG_MANAGER: opt.manager = optarg; break;
                case ARG_WORKLOAD: opt.workload = optarg; break;
                case ARG_STRATEGIES:
                        strategies = optarg;
                        strategies_given = true;
                        break;
                case ARG_STANDBY_PERIOD: period.seconds = (unsigned) strtoul(optarg, NULL, 10); break;
                case ARG_RECOVERY: period.recovery_seconds = (unsigned) strtoul(optarg, NULL, 10); break;
                case ARG_THAW_INTERVAL: period.thaw_first = (unsigned) strtoul(optarg, NULL, 10); break;
                case ARG_THAW_WINDOW: period.thaw_window = (unsigned) strtoul(optarg, NULL, 10); break;
                case ARG_SEED: period.seed = (unsigned) strtoul(optarg, NULL, 10); break;
                case ARG_SYSTEM_DIR: period.work = optarg; break;
                case ARG_WORKLOADS: workloads = optarg; break;
                case ARG_PERIOD: opt.period_ms = (unsigned) strtoul(optarg, NULL, 10); break;
                case ARG_DURATION: duration = strtod(optarg, NULL); break;
                case ARG_REPS: opt.reps = (unsigned) strtoul(optarg, NULL, 10); break;
                case ARG_OUTPUT: opt.output = optarg; break;
                case ARG_ENTER_EXIT: opt.enter_exit = true; break;
                case ARG_UNITS: opt.units = (unsigned) strtoul(optarg, NULL, 10); break;
                case ARG_PROCS: opt.procs = (unsigned) strtoul(optarg, NULL, 10); break;
                case ARG_NO_GUARD: opt.no_guard = true; break;
                case ARG_SELF_CHECK: opt.self_check = true; break;
                case ARG_EVENTS: opt.events = (unsigned) strtoul(optarg, NULL, 10); break;
                case ARG_DAEMONS: daemons = optarg; break;
                case ARG_LISTENER: opt.listener = optarg ? optarg : "build/standby-listener"; break;
                case ARG_HOLD:
                        opt.listener = optarg ? optarg : "build/standby-listener";
                        opt.hold = true;
                        break;
                case ARG_LOADED:
                        opt.listener = optarg ? optarg : "build/standby-listener";
                        opt.loaded = true;
                        break;
                case ARG_CGROUP_STORM:
                        opt.listener = optarg ? optarg : "build/standby-listener";
                        opt.cgroup_storm = true;
                        break;
                case ARG_STORM_CGROUPS: opt.storm_cgroups = (unsigned) strtoul(optarg, NULL, 10); break;
                case ARG_STORM_DEPTH: opt.storm_depth = (unsigned) strtoul(optarg, NULL, 10); break;
                case ARG_SAMPLES:
                        opt.samples = (unsigned) strtoul(optarg, NULL, 10);
                        samples_given = true;
                        break;
                case ARG_SLACK_KINDS:
                        slack_kinds = USEC_PER_SEC;
                        if (optarg && (parse_duration(optarg, &slack_kinds) < 0 || slack_kinds < USEC_PER_MSEC ||
                                       slack_kinds > 60 * USEC_PER_SEC)) {
                                fprintf(stderr, "standby-bench: --slack-kinds=%s: expected a duration of 1ms-60s\n",
                                        optarg);
                                return 2;
                        }
                        break;
                case ARG_IDLE: opt.idle_seconds = (unsigned) strtoul(optarg, NULL, 10); break;
                case ARG_CHURN: opt.churn_seconds = (unsigned) strtoul(optarg, NULL, 10); break;
                case ARG_GAP: opt.gap_ms = (unsigned) strtoul(optarg, NULL, 10); break;
                case ARG_BACKEND:
                        if (!streq(optarg, "systemd") && !streq(optarg, "cgroupfs")) {
                                fprintf(stderr, "standby-bench: --backend=%s: expected systemd or cgroupfs\n", optarg);
                                return 2;
                        }
                        opt.backend_systemd = streq(optarg, "systemd");
                        break;
                case ARG_CALL_RULE:
                        if (!streq(optarg, "socket") && !streq(optarg, "dbus-call")) {
                                fprintf(stderr, "standby-bench: --call-rule=%s: expected dbus-call or socket\n", optarg);
                                return 2;
                        }
                        opt.call_rule_socket = streq(optarg, "socket");
                        break;
                case 'h': help(); return 0;
                default: fprintf(stderr, "Try 'standby-bench --help'.\n"); return 2;
                }
        if (optind != argc || opt.reps < 1 || opt.reps > MAX_REPS || opt.period_ms < 1 || !(duration > 0 && duration <= 3600) ||
            opt.units < 1 || opt.units > 10000 || opt.procs < 1 || opt.procs > 1000) {
                fprintf(stderr, "standby-bench: bad arguments: reps 1-%d, duration (0,3600] s, units 1-10000, procs 1-1000\n",
                        MAX_REPS);
                return 2;
        }
        /* From here on every mode, interrupted, still cleans up: leaves
         * standby, stops what it started (the standby period its system). */
        struct sigaction sa = { .sa_handler = on_signal };
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        /* A helper that a terminal's SIGINT ended is an error to handle
         * (EPIPE), not the end of the bench before its cleanup. */
        (void) signal(SIGPIPE, SIG_IGN);
        if (slack_kinds > 0) {
                unsigned n = samples_given ? opt.samples : 5;
                if (n < 1 || n > MAX_SLACK_SAMPLES) {
                        fprintf(stderr, "standby-bench: bad arguments: --slack-kinds takes 1-%d samples\n",
                                MAX_SLACK_SAMPLES);
                        return 2;
                }
                if (geteuid() != 0) {
                        fprintf(stderr, "standby-bench: needs root (it sets timer slack and reads /proc/timer_list)\n");
                        return 3;
                }
                return bench_slack_kinds(n, slack_kinds, &bench_interrupted) < 0 ? 1 : 0;
        }
        if (period.seconds > 0) {
                if (period.seconds > 24 * 3600 || period.recovery_seconds > 3600 || period.thaw_first < 1 ||
                    period.thaw_window < 1) {
                        fprintf(stderr, "standby-bench: bad arguments: standby-period 1-86400 s, recovery-seconds 0-3600, "
                                        "thaw-interval and thaw-window at least 1 s\n");
                        return 2;
                }
                if (geteuid() != 0) {
                        fprintf(stderr, "standby-bench: needs root (it boots a system under systemd-nspawn)\n");
                        return 3;
                }
                if (split_commas(strategies_given ? strategies : PERIOD_STRATEGIES, &period.strategies) < 0)
                        return 1;
                period.output = opt.output;
                r = bench_period(&period);
                strv_free(period.strategies);
                return r < 0 ? 1 : 0;
        }
        opt.window = (usec_t) (duration * 1e6);
        bench_manager_path = opt.manager;
        bench_workload_path = opt.workload;
        bench_output = opt.output;
        if (opt.samples < 1 || opt.samples > 100000 || opt.idle_seconds > 3600 || opt.churn_seconds > 3600 ||
            opt.gap_ms > 10000) {
                fprintf(stderr, "standby-bench: bad arguments: samples 1-100000, idle-seconds 0-3600, churn-seconds 0-3600, "
                                "gap-ms 0-10000\n");
                return 2;
        }
        /* The samples of an event kind in one strategy's windows all fit. */
        if ((size_t) opt.events * opt.reps > EVENTS_MAX_SAMPLES) {
                fprintf(stderr, "standby-bench: bad arguments: events x reps at most %d\n", EVENTS_MAX_SAMPLES);
                return 2;
        }
        if (split_commas(strategies, &opt.strategies) < 0 || split_commas(workloads, &opt.workloads) < 0 ||
            split_commas(daemons, &opt.daemons) < 0)
                return 1;
        if (!opt.workloads[0] || !opt.strategies[0]) {
                fprintf(stderr, "standby-bench: bad arguments: no workload or no strategy\n");
                return 2;
        }
        for (char **d = opt.daemons; *d; d++)
                if (events_daemon_kind(*d) < 0) {
                        fprintf(stderr, "standby-bench: unknown daemon \"%s\" (redis-server, memcached)\n", *d);
                        return 2;
                }
        for (char **s = opt.strategies; *s; s++)
                if (strategy_from_string(*s) == _STRATEGY_INVALID) {
                        fprintf(stderr, "standby-bench: unknown strategy \"%s\" (freeze, slack)\n", *s);
                        return 2;
                }
        if (geteuid() != 0) {
                fprintf(stderr, "standby-bench: needs root (it freezes cgroups and sets timer slack)\n");
                return 3;
        }
        if (access(opt.manager, X_OK) < 0 || access(opt.workload, X_OK) < 0) {
                fprintf(stderr, "standby-bench: %s or %s is missing: run make first\n", opt.manager, opt.workload);
                return 1;
        }
        if (mkdir(opt.output, 0755) < 0 && errno != EEXIST) {
                fprintf(stderr, "standby-bench: cannot create %s: %s\n", opt.output, strerror(errno));
                return 1;
        }

        /* The journal lives on tmpfs, as /run/standby does in production: an
         * fsync on a disk would measure the disk. */
        snprintf(tmpdir, sizeof(tmpdir), "/run/standby-bench.%d", (int) getpid());
        snprintf(config_path, sizeof(config_path), "%s/standby.conf", tmpdir);
        snprintf(state_dir, sizeof(state_dir), "%s/state", tmpdir);
        if (mkdir(tmpdir, 0700) < 0) {
                fprintf(stderr, "standby-bench: cannot create %s: %s\n", tmpdir, strerror(errno));
                return 1;
        }
        /* /run is a tmpfs on the laptops this is for (it is not on every build
         * machine): give the journal one in a private mount namespace. */
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            mount("tmpfs", tmpdir, "tmpfs", MS_NOSUID | MS_NODEV, "size=4m,mode=0700") < 0)
                fprintf(stderr, "standby-bench: no private tmpfs for the journal (%s); using %s as it is\n",
                        strerror(errno), tmpdir);

        r = scratch_create(&scratch);
        if (r < 0)
                fprintf(stderr, "standby-bench: cannot create a scratch cgroup: %s\n", strerror(-r));
        else
                r = opt.hold     ? bench_hold(opt.listener, opt.samples, opt.gap_ms)
                    : opt.cgroup_storm ? bench_cgroup_storm(opt.listener, opt.samples, opt.gap_ms, opt.storm_cgroups,
                                                            opt.storm_depth)
                    : opt.loaded ? bench_listener_loaded(opt.listener, opt.samples, opt.gap_ms)
                    : opt.listener ? bench_listener(opt.listener, opt.samples, opt.idle_seconds, opt.churn_seconds,
                                                    opt.gap_ms, opt.backend_systemd,
                                                    opt.call_rule_socket)
                    : opt.enter_exit ? run_enter_exit()
                                     : run_compare(&opt);

        /* Whatever happened, leave nothing in standby and nothing behind. */
        char journal[400];
        snprintf(journal, sizeof(journal), "%s/state/state", tmpdir);
        if (access(journal, F_OK) == 0)
                (void) run_manager("exit", NULL);
        scratch_destroy(&scratch);
        unlink(config_path);
        snprintf(journal, sizeof(journal), "%s/state/lock", tmpdir);
        unlink(journal);
        rmdir(state_dir);
        (void) umount2(tmpdir, MNT_DETACH);
        rmdir(tmpdir);
        strv_free(opt.strategies);
        strv_free(opt.workloads);
        strv_free(opt.daemons);
        return r < 0 ? 1 : 0;
}

int bench_gnuplot(const char *script_path) {
        int status;
        pid_t pid = fork();

        if (pid < 0)
                return negative_errno();
        if (pid == 0) {
                execlp("gnuplot", "gnuplot", script_path, NULL);
                _exit(127);
        }
        if (waitpid(pid, &status, 0) != pid)
                return negative_errno();
        if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
                fprintf(stderr, "standby-bench: gnuplot is not installed: no plot.\n");
                return -ENOENT;
        }
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}
