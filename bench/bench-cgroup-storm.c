/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* standby-bench --cgroup-storm: what one local user's cgroups made during
 * standby cost everyone else. In standby, with the real listener, a user
 * (uid 65534, in a subtree of their own as a delegated user@UID.service
 * is) makes N cgroups as fast as they can while a push and a power-key
 * event (evdev records through a FIFO) are timed, each to its answer (the
 * push's D-Bus reply; the key's unit thawed, cgroup.events frozen 0); the
 * same events are timed first with nothing else going on. Before that,
 * the user makes a chain of D cgroups of 255-byte names, one inside the
 * other, and the listener's RSS is read before and once it has judged
 * them. */
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/input.h>
#include <poll.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "bench.h"
#include "cgroup.h"
#include "log.h"
#include "macro.h"

#define STORM_UID 65534
#define ANSWER_TIMEOUT_USEC (5 * USEC_PER_SEC)

enum { STORM_PUSH, STORM_KEY, _STORM_KIND_MAX };
static const char *const storm_kind_names[_STORM_KIND_MAX] = { "push", "power-key" };
static const char *const storm_units[_STORM_KIND_MAX] = { "push.service", "key.service" };

typedef struct Storm {
        sd_bus *bus;
        int fifo;                 /* the listener's input device */
        int cg[_STORM_KIND_MAX];  /* the units the events thaw */
        int user;                 /* the user's subtree */
} Storm;

static int storm_push(sd_bus *bus) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, "org.standby.Listener1", "/org/standby/Listener1",
                                           "org.standby.Listener1", "Push");
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", storm_units[STORM_PUSH], "bench");
        return r < 0 ? r : sd_bus_call(bus, m, ANSWER_TIMEOUT_USEC, NULL, &reply);
}

/* Once the listener has answered this, it has taken every journal change
 * made before (it takes those first). */
static int storm_sync(sd_bus *bus) {
        return bench_listener_statistic(bus, "held") == UINT64_MAX ? -EIO : 0;
}

/* One event, its unit frozen again first (by standby-manager freeze, as
 * the units a window's end refreezes would be): how long until it was
 * answered. */
static int storm_sample(Storm *t, int kind, double *ret) {
        static const struct input_event press[4] = {
                { .type = EV_KEY, .code = KEY_POWER, .value = 1 }, { .type = EV_SYN, .code = SYN_REPORT },
                { .type = EV_KEY, .code = KEY_POWER, .value = 0 }, { .type = EV_SYN, .code = SYN_REPORT },
        };
        usec_t t0 = now_usec(CLOCK_MONOTONIC);
        char path[600];
        int r;

        snprintf(path, sizeof(path), "%s/units.slice/%s", scratch.base, storm_units[kind]);
        if (run_manager("freeze", path) == USEC_INFINITY || storm_sync(t->bus) < 0)
                return -EAGAIN; /* not frozen again: no sample */
        r = cgroup_wait_frozen(&t->cg[kind], 1, true, t0 + ANSWER_TIMEOUT_USEC, NULL);
        if (r == -ETIME)
                return -EAGAIN;
        if (r < 0)
                return r;
        t0 = now_usec(CLOCK_MONOTONIC);
        if (kind == STORM_PUSH)
                r = storm_push(t->bus);
        else if (write(t->fifo, press, sizeof(press)) != (ssize_t) sizeof(press))
                r = -EIO;
        else
                r = cgroup_wait_frozen(&t->cg[kind], 1, false, t0 + ANSWER_TIMEOUT_USEC, NULL);
        *ret = (double) (now_usec(CLOCK_MONOTONIC) - t0);
        return r;
}

/* Forks a process of STORM_UID that runs fn(dir_fd, n). */
static pid_t storm_as_user(int dir_fd, int (*fn)(int dir_fd, unsigned n), unsigned n) {
        pid_t pid = fork();

        if (pid == 0) {
                if (setgroups(0, NULL) < 0 || setresgid(STORM_UID, STORM_UID, STORM_UID) < 0 ||
                    setresuid(STORM_UID, STORM_UID, STORM_UID) < 0)
                        _exit(2);
                _exit(fn(dir_fd, n) < 0 ? 3 : 0);
        }
        return pid;
}

static int storm_wait(pid_t pid) {
        int status;

        if (pid < 0)
                return negative_errno();
        if (waitpid(pid, &status, 0) != pid)
                return negative_errno();
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

static int make_many(int dir_fd, unsigned n) {
        char name[32];

        for (unsigned i = 0; i < n; i++) {
                snprintf(name, sizeof(name), "c%u.service", i);
                if (mkdirat(dir_fd, name, 0755) < 0)
                        return -1;
        }
        return 0;
}

static void chain_name(char *name) {
        memset(name, 'd', NAME_MAX - 6);
        strcpy(name + NAME_MAX - 6, ".slice");
}

/* A chain of depth cgroups of 255-byte names; two fds at a time. */
static int make_chain(int dir_fd, unsigned depth) {
        char name[NAME_MAX + 1];
        int d = fcntl(dir_fd, F_DUPFD_CLOEXEC, 3);

        chain_name(name);
        for (unsigned k = 0; k < depth && d >= 0; k++) {
                int n = mkdirat(d, name, 0755) < 0 ? -1 : openat(d, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                close(d);
                d = n;
        }
        if (d < 0)
                return -1;
        close(d);
        return 0;
}

/* Removes the chain from the bottom up (deeper than cgroup_remove_tree()
 * goes), going down by name and up by "..". */
static int remove_chain(int dir_fd, unsigned depth) {
        char name[NAME_MAX + 1];
        unsigned k = 0;
        int d = fcntl(dir_fd, F_DUPFD_CLOEXEC, 3);

        chain_name(name);
        while (d >= 0) {
                int n = openat(d, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                if (n < 0)
                        break;
                close(d);
                d = n;
                k++;
        }
        while (d >= 0 && k-- > 0) {
                int up = openat(d, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                close(d);
                d = up;
                if (d < 0 || unlinkat(d, name, AT_REMOVEDIR) < 0)
                        break;
        }
        if (d >= 0)
                close(d);
        return k == UINT_MAX ? 0 : -EBUSY; /* k wrapped: all removed */
}

static int remove_many(int dir_fd, unsigned n) {
        char name[32];

        for (unsigned i = 0; i < n; i++) {
                snprintf(name, sizeof(name), "c%u.service", i);
                (void) unlinkat(dir_fd, name, AT_REMOVEDIR);
        }
        return 0;
}

typedef struct Counts {
        unsigned n[_STORM_KIND_MAX];       /* samples taken */
        unsigned late[_STORM_KIND_MAX];    /* not answered within ANSWER_TIMEOUT_USEC */
        unsigned skipped[_STORM_KIND_MAX]; /* the unit not frozen again within it: no sample */
} Counts;

/* Events of each kind, interleaved, until stop() says so (or max rounds). */
static int storm_phase(Storm *t, unsigned max, unsigned gap_ms, bool (*stop)(Storm *t, void *u), void *u, double *v,
                       Counts *c) {
        int r;

        for (unsigned i = 0; i < max && !(stop && stop(t, u)); i++)
                for (int k = 0; k < _STORM_KIND_MAX; k++) {
                        double x = 0;

                        if ((r = bench_check_interrupted()) < 0)
                                return r;
                        if (gap_ms > 0)
                                (void) poll(NULL, 0, (int) gap_ms);
                        r = storm_sample(t, k, &x);
                        if (r == -EAGAIN)
                                c->skipped[k]++;
                        else if (r == -ETIME || r == -ETIMEDOUT)
                                c->late[k]++;
                        else if (r < 0)
                                return log_error_errno(r, "%s event: %m", storm_kind_names[k]);
                        else
                                v[k * max + c->n[k]++] = x;
                }
        return 0;
}

static bool storm_judged(Storm *t, void *u) {
        uint64_t held = bench_listener_statistic(t->bus, "held"), not_held = bench_listener_statistic(t->bus, "not_held");
        return held != UINT64_MAX && not_held != UINT64_MAX && held + not_held >= *(unsigned *) u;
}

int bench_cgroup_storm(const char *listener_path, unsigned samples, unsigned gap_ms, unsigned cgroups,
                       unsigned depth) {
        _cleanup_free_ double *base = calloc((size_t) samples * _STORM_KIND_MAX, sizeof(double));
        _cleanup_free_ double *busy = calloc((size_t) samples * _STORM_KIND_MAX, sizeof(double));
        Storm t = { .fifo = -EBADF, .cg = { -EBADF, -EBADF }, .user = -EBADF };
        char fifo[400], rule[800], path[4096], user[600];
        Counts cb = {}, cs = {};
        int r;
        bool made_many = false, made_chain = false;

        if (!base || !busy)
                return -ENOMEM;
        snprintf(path, sizeof(path), "%s/rules", tmpdir);
        if (mkdir(path, 0755) < 0 && errno != EEXIST)
                return negative_errno();
        if ((r = bench_start_dbus()) < 0)
                return log_error_errno(r, "Failed to start dbus-daemon: %m");
        char *idle[] = { (char *) bench_workload_path, "idle", "--period-ms", "100", NULL };
        for (int k = 0; k < _STORM_KIND_MAX; k++) {
                snprintf(path, sizeof(path), "units.slice/%s", storm_units[k]);
                if ((r = scratch_spawn(&scratch, path, idle, NULL)) < 0 || (r = scratch_open(&scratch, path, &t.cg[k])) < 0)
                        goto finish;
        }
        snprintf(path, sizeof(path), "%s/units.slice", scratch.base);
        if ((r = write_config(path)) < 0)
                goto finish;
        snprintf(fifo, sizeof(fifo), "%s/power-key", tmpdir);
        if (mkfifo(fifo, 0600) < 0 && errno != EEXIST) {
                r = negative_errno();
                goto finish;
        }
        snprintf(rule, sizeof(rule),
                 "[Match]\nEvent=input\nDevice=%s\nKey=KEY_POWER\nValue=1\n[Action]\nThaw=key.service\n", fifo);
        if ((r = bench_write_rule("10-push.rule",
                                  "[Match]\nEvent=push\nUnit=push.service\n[Action]\nThaw=push.service\n")) < 0 ||
            (r = bench_write_rule("20-key.rule", rule)) < 0)
                goto finish;
        if ((r = bench_start_listener(listener_path, -EBADF)) < 0) {
                log_error_errno(r, "standby-listener did not become ready: %m");
                goto finish;
        }
        t.fifo = open(fifo, O_WRONLY | O_CLOEXEC);
        if (t.fifo < 0) {
                r = negative_errno();
                goto finish;
        }
        if ((r = sd_bus_new(&t.bus)) < 0 || (r = sd_bus_set_address(t.bus, bus_address)) < 0 ||
            (r = sd_bus_set_bus_client(t.bus, 1)) < 0 || (r = sd_bus_start(t.bus)) < 0)
                goto finish;
        if (run_manager("enter", NULL) == USEC_INFINITY) {
                r = -EIO;
                goto finish;
        }
        if (bench_listener_statistic(t.bus, "unwatched") == UINT64_MAX) {
                r = log_error_errno(-EPROTO, "%s has no \"unwatched\" statistic: it keeps no bound per user",
                                    listener_path);
                goto finish;
        }
        /* The user's subtree, made by root in standby and given to them, as
         * systemd does with user@UID.service. */
        snprintf(user, sizeof(user), "%s/units.slice/user-%d.slice", scratch.base, STORM_UID);
        if ((r = cgroup_create(scratch.root_fd, user)) < 0 || (r = cgroup_open(scratch.root_fd, user, &t.user)) < 0)
                goto finish;
        if (fchown(t.user, STORM_UID, STORM_UID) < 0) {
                r = negative_errno();
                goto finish;
        }

        /* The chain first, alone. */
        fprintf(stderr, "[cgroup-storm] a user makes a chain of %u cgroups of 255-byte names\n", depth);
        uint64_t rss_before = bench_rss_kib(listener_pid);
        made_chain = true;
        if ((r = storm_wait(storm_as_user(t.user, make_chain, depth))) < 0) {
                log_error_errno(r, "The user's chain failed: %m");
                goto finish;
        }
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + 60 * USEC_PER_SEC;
        /* Judged: its last cgroup held, or one past the user's share of
         * watches held in its place. */
        uint64_t unwatched;
        while ((unwatched = bench_listener_statistic(t.bus, "unwatched")) == 0 &&
               bench_listener_statistic(t.bus, "held") == 0 && now_usec(CLOCK_MONOTONIC) < deadline)
                (void) poll(NULL, 0, 10);
        uint64_t rss_after = bench_rss_kib(listener_pid), watched = bench_listener_statistic(t.bus, "watched");
        /* Removed before the events: the freeze before each runs the
         * deadlock guard, whose scan walks every cgroup, the chain too. */
        if (remove_chain(t.user, depth) < 0)
                fprintf(stderr, "[cgroup-storm] the chain below %s was not all removed\n", user);
        made_chain = false;

        fprintf(stderr, "[cgroup-storm] %u samples of each event on an unloaded listener\n", samples);
        if ((r = storm_phase(&t, samples, gap_ms, NULL, NULL, base, &cb)) < 0)
                goto finish;
        fprintf(stderr, "[cgroup-storm] a user makes %u cgroups\n", cgroups);
        usec_t t0 = now_usec(CLOCK_MONOTONIC);
        pid_t pid = storm_as_user(t.user, make_many, cgroups);
        made_many = true;
        if ((r = storm_phase(&t, samples, 0, storm_judged, &cgroups, busy, &cs)) < 0)
                goto finish;
        if ((r = storm_wait(pid)) < 0) {
                log_error_errno(r, "The user's mkdirs failed: %m");
                goto finish;
        }
        while (!storm_judged(&t, &cgroups) && now_usec(CLOCK_MONOTONIC) < t0 + 120 * USEC_PER_SEC)
                (void) poll(NULL, 0, 10);
        double judged_s = (double) (now_usec(CLOCK_MONOTONIC) - t0) / USEC_PER_SEC;
        uint64_t held = bench_listener_statistic(t.bus, "held"), not_held = bench_listener_statistic(t.bus, "not_held"),
                 resyncs = bench_listener_statistic(t.bus, "resyncs");

        uint64_t rss_end = bench_rss_kib(listener_pid);

        printf("\nEvent to its answer (push: the D-Bus reply; power key: its unit thawed), us; unloaded: each\n"
               "after %u ms idle; storm: while a user makes %u cgroups in standby, back to back. Late: not\n"
               "answered within %.0f s; skipped: its unit not frozen again (standby-manager freeze) first\n\n",
               gap_ms, cgroups, (double) ANSWER_TIMEOUT_USEC / USEC_PER_SEC);
        printf("%-10s %-9s %8s %10s %10s %10s %5s %8s\n", "event", "listener", "samples", "p50", "p99", "max", "late",
               "skipped");
        for (int k = 0; k < _STORM_KIND_MAX; k++) {
                double *vb = base + k * samples, *vs = busy + k * samples;
                size_t nb = cb.n[k], ns = cs.n[k];
                printf("%-10s %-9s %8zu %10.1f %10.1f %10.1f %5u %8u\n", storm_kind_names[k], "unloaded", nb,
                       stats_percentile(vb, nb, 50), stats_percentile(vb, nb, 99), stats_max(vb, nb), cb.late[k],
                       cb.skipped[k]);
                printf("%-10s %-9s %8zu %10.1f %10.1f %10.1f %5u %8u\n", "", "storm", ns, stats_percentile(vs, ns, 50),
                       stats_percentile(vs, ns, 99), stats_max(vs, ns), cs.late[k], cs.skipped[k]);
        }
        printf("\n%u cgroups judged %.2f s after the first mkdir: %" PRIu64 " held, %" PRIu64
               " left running (past the user's journal budget); the inotify queue overflowed %" PRIu64 " times\n",
               cgroups, judged_s, held, not_held, resyncs);
        printf("Chain of %u cgroups: listener RSS %" PRIu64 " KiB before, %" PRIu64 " KiB after; %" PRIu64
               " cgroups watched, %" PRIu64 " held unwatched\n",
               depth, rss_before, rss_after, watched, unwatched);
        printf("Listener RSS at the end: %" PRIu64 " KiB\n", rss_end);
        r = 0;
finish:
        (void) run_manager("exit", NULL);
        if (t.user >= 0) {
                if (made_chain && remove_chain(t.user, depth) < 0)
                        fprintf(stderr, "[cgroup-storm] the chain below %s was not all removed\n", user);
                if (made_many)
                        (void) remove_many(t.user, cgroups);
                safe_close(t.user);
                (void) cgroup_remove(scratch.root_fd, user);
        }
        sd_bus_flush_close_unref(t.bus);
        safe_close(t.fifo);
        for (int k = 0; k < _STORM_KIND_MAX; k++)
                safe_close(t.cg[k]);
        bench_stop_services();
        return r;
}
