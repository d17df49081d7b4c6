/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* standby-bench --listener-loaded: is the listener still answering when what
 * it drives does not? A power-key event (evdev records through a FIFO) and a
 * push are timed, each with its unit frozen, first on a listener with
 * nothing else going on, then while one unit is stuck in state D (a FUSE
 * request never answered, tests/helpers/fuse-stuck) at its window's end, so
 * that its refreeze waits out FreezeTimeout, and while the systemd --user
 * manager of another unit is stopped (SIGSTOP) with a ThawUnit for it sent
 * before every sample. What is compared is the p99 of each event, loaded
 * against unloaded: the answer is the push's D-Bus reply, and for the power
 * key the thaw of the unit its rule names (cgroup.events says frozen 0). */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/input.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>

#include "bench.h"
#include "cgroup.h"
#include "fileio.h"
#include "journal.h"
#include "log.h"
#include "macro.h"

#define ANSWER_TIMEOUT_USEC (5 * USEC_PER_SEC)
/* A listener that does not answer three in a row is waiting: no use going on. */
#define GIVE_UP_AFTER 3

enum { LOADED_PUSH, LOADED_KEY, _LOADED_KIND_MAX };
static const char * const loaded_kind_names[_LOADED_KIND_MAX] = { "push", "power-key" };
static const char * const loaded_units[_LOADED_KIND_MAX] = { "push.service", "key.service" };

typedef struct Loaded {
        sd_bus *bus;
        int fifo;                 /* the listener's input device */
        int cg[_LOADED_KIND_MAX]; /* the units the events thaw */
        char um_dir[400], um_script[PATH_MAX];
        bool um_started;
        pid_t um_pid;             /* the systemd --user manager */
        pid_t fuse_pid;           /* fuse-stuck: its client is in state D */
} Loaded;

static int loaded_shell(const char *cmd) {
        return system(cmd) == 0 ? 0 : -EIO;
}

/* A push, its reply awaited (bounded), or sent without waiting for one. */
static int loaded_push(sd_bus *bus, const char *unit, bool wait) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, "org.standby.Listener1", "/org/standby/Listener1",
                                           "org.standby.Listener1", "Push");
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", unit, "bench");
        if (r < 0)
                return r;
        if (!wait) {
                r = sd_bus_message_set_expect_reply(m, 0);
                return r < 0 ? r : sd_bus_send(bus, m, NULL);
        }
        return sd_bus_call(bus, m, ANSWER_TIMEOUT_USEC, NULL, &reply);
}

/* Once the listener has answered this, it has taken every journal change
 * made before (it takes those first). */
static int loaded_sync(sd_bus *bus) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        int r = sd_bus_message_new_method_call(bus, &m, "org.standby.Listener1", "/org/standby/Listener1",
                                               "org.standby.Listener1", "GetStatistics");
        return r < 0 ? r : sd_bus_call(bus, m, ANSWER_TIMEOUT_USEC, NULL, &reply);
}

/* One event, with its unit frozen: how long until it was answered. */
static int loaded_sample(Loaded *t, int kind, double *ret) {
        static const struct input_event press[4] = {
                { .type = EV_KEY, .code = KEY_POWER, .value = 1 }, { .type = EV_SYN, .code = SYN_REPORT },
                { .type = EV_KEY, .code = KEY_POWER, .value = 0 }, { .type = EV_SYN, .code = SYN_REPORT },
        };
        usec_t t0 = now_usec(CLOCK_MONOTONIC);
        int r;

        if (kind == LOADED_PUSH)
                r = loaded_push(t->bus, loaded_units[kind], true);
        else if (write(t->fifo, press, sizeof(press)) != (ssize_t) sizeof(press))
                r = -EIO;
        else
                r = cgroup_wait_frozen(&t->cg[kind], 1, false, t0 + ANSWER_TIMEOUT_USEC, NULL);
        *ret = (double) (now_usec(CLOCK_MONOTONIC) - t0);
        return r;
}

/* Freezes the event's unit again, and waits until the listener knows. */
static int loaded_refreeze(Loaded *t, int kind) {
        char path[600];

        snprintf(path, sizeof(path), "%s/units.slice/%s", scratch.base, loaded_units[kind]);
        if (run_manager("freeze", path) == USEC_INFINITY)
                return -EIO;
        return loaded_sync(t->bus);
}

/* samples of each kind, interleaved; returns how many were answered in time. */
static int loaded_phase(Loaded *t, bool loaded, unsigned samples, unsigned gap_ms, double *v, unsigned *ret_late) {
        unsigned late = 0, in_a_row = 0;
        int r;

        for (unsigned i = 0; i < samples; i++)
                for (int k = 0; k < _LOADED_KIND_MAX; k++) {
                        if ((r = bench_check_interrupted()) < 0)
                                return r;
                        if ((r = loaded_refreeze(t, k)) < 0 && loaded)
                                r = 0; /* a waiting listener answers nothing: the samples tell */
                        if (r < 0)
                                return r;
                        (void) poll(NULL, 0, (int) gap_ms);
                        /* A ThawUnit to the stopped manager before each sample (its
                         * unit's 20 ms window has ended since the last one, so
                         * that each push thaws it again). */
                        if (loaded && t->um_pid > 0 && (r = loaded_push(t->bus, "sd.service", false)) < 0)
                                return r;
                        r = loaded_sample(t, k, &v[k * samples + i]);
                        if (r == -ETIMEDOUT || r == -ETIME) {
                                late++;
                                if (++in_a_row >= GIVE_UP_AFTER) {
                                        fprintf(stderr, "[loaded] %u events in a row not answered within %.0f s: "
                                                        "the listener waits; giving up\n",
                                                in_a_row, (double) ANSWER_TIMEOUT_USEC / USEC_PER_SEC);
                                        *ret_late = late;
                                        return (int) (i + 1);
                                }
                                continue;
                        }
                        if (r < 0)
                                return log_error_errno(r, "%s event: %m", loaded_kind_names[k]);
                        in_a_row = 0;
                }
        *ret_late = late;
        return (int) samples;
}

/* The journal's state of the stuck unit, as the listener wrote it. */
static int loaded_state_of(const char *unit) {
        _cleanup_close_ int dfd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char path[600];
        Journal *j = NULL;
        int state = -1;

        snprintf(path, sizeof(path), "%s/units.slice/%s", scratch.base, unit);
        if (dfd >= 0 && journal_load(dfd, &j) >= 0) {
                JournalUnit *u = journal_find_unit(j, path);
                state = u ? (int) u->state : -1;
                journal_free(j);
        }
        return state;
}

/* A stuck task in the stuck unit's window, then its window's end. */
static int loaded_get_stuck(Loaded *t) {
        char abs[PATH_MAX], helper[PATH_MAX], line[64] = {};
        int out[2], r;

        if ((r = loaded_push(t->bus, "stuck.service", true)) < 0)
                return log_error_errno(r, "Push for stuck.service: %m");
        snprintf(abs, sizeof(abs), "%s/%s/units.slice/stuck.service", scratch.mount, scratch.base);
        snprintf(helper, sizeof(helper), "%s", bench_manager_path);
        char *slash = strrchr(helper, '/');
        snprintf(slash ? slash + 1 : helper, sizeof(helper) - (size_t) (slash ? slash + 1 - helper : 0),
                 "helpers/fuse-stuck");
        if (pipe2(out, O_CLOEXEC) < 0)
                return negative_errno();
        t->fuse_pid = fork();
        if (t->fuse_pid < 0)
                return negative_errno();
        if (t->fuse_pid == 0) {
                dup2(out[1], 1);
                execl(helper, "fuse-stuck", abs, NULL);
                _exit(127);
        }
        close(out[1]);
        struct pollfd p = { .fd = out[0], .events = POLLIN };
        bool ready = poll(&p, 1, 10000) == 1 && read(out[0], line, sizeof(line) - 1) > 0 && strneq(line, "ready", 5);
        close(out[0]);
        if (!ready)
                return log_error_errno(-ETIMEDOUT, "%s did not get a task stuck (is /dev/fuse there?).", helper);
        /* The window (1 s) ends: the refreeze stays pending for FreezeTimeout. */
        for (int i = 0; i < 1000 && loaded_state_of("stuck.service") != UNIT_FREEZING; i++)
                (void) poll(NULL, 0, 10);
        if (loaded_state_of("stuck.service") != UNIT_FREEZING)
                return log_error_errno(-ETIMEDOUT, "The stuck unit's refreeze did not begin.");
        return 0;
}

static int loaded_start_user_manager(Loaded *t) {
        char cmd[8192], cgrel[700], bin[PATH_MAX];
        _cleanup_free_ char *pidtext = NULL;

        if (access("/lib/systemd/systemd", X_OK) < 0 || !realpath("tests/env/user-manager.sh", t->um_script) ||
            !realpath(bench_workload_path, bin)) {
                fprintf(stderr, "[loaded] no systemd --user here (or not run from the source tree): without the "
                                "stopped manager\n");
                return 0;
        }
        snprintf(t->um_dir, sizeof(t->um_dir), "%s/um", tmpdir);
        snprintf(cgrel, sizeof(cgrel), "%s/um.service", scratch.base);
        (void) mkdir(t->um_dir, 0700);
        snprintf(cmd, sizeof(cmd), "'%s' start '%s' '%s'", t->um_script, t->um_dir, cgrel);
        if (loaded_shell(cmd) < 0)
                return log_error_errno(-EIO, "The systemd --user manager did not start.");
        t->um_started = true;
        snprintf(cmd, sizeof(cmd), "XDG_RUNTIME_DIR='%s/xdg' systemd-run --user --quiet --unit=sd.service '%s' idle",
                 t->um_dir, bin);
        if (loaded_shell(cmd) < 0)
                return log_error_errno(-EIO, "systemd-run sd.service failed.");
        snprintf(cmd, sizeof(cmd), "%s/manager.pid", t->um_dir);
        int pid = 0;
        if (read_one_lineat(AT_FDCWD, cmd, &pidtext) < 0 || sscanf(pidtext, "%d", &pid) != 1 || pid <= 0)
                return log_error_errno(-EIO, "No pid of the systemd --user manager in %s.", cmd);
        t->um_pid = pid;
        return 0;
}

static void loaded_stop(Loaded *t) {
        char cmd[8192];

        if (t->um_pid > 0)
                (void) kill(t->um_pid, SIGCONT);
        if (t->fuse_pid > 0) {
                (void) kill(t->fuse_pid, SIGKILL);
                (void) waitpid(t->fuse_pid, NULL, 0);
                t->fuse_pid = 0;
        }
        if (t->um_started) {
                snprintf(cmd, sizeof(cmd), "'%s' stop '%s' x", t->um_script, t->um_dir);
                (void) loaded_shell(cmd);
                t->um_started = false;
        }
        for (int k = 0; k < _LOADED_KIND_MAX; k++)
                t->cg[k] = safe_close(t->cg[k]);
        t->fifo = safe_close(t->fifo);
        t->bus = sd_bus_flush_close_unref(t->bus);
}

int bench_listener_loaded(const char *listener_path, unsigned samples, unsigned gap_ms) {
        _cleanup_free_ double *base = calloc((size_t) samples * _LOADED_KIND_MAX, sizeof(double));
        _cleanup_free_ double *busy = calloc((size_t) samples * _LOADED_KIND_MAX, sizeof(double));
        Loaded t = { .fifo = -EBADF, .cg = { -EBADF, -EBADF } };
        char fifo[400], rule[800], targets[1600], path[4096];
        unsigned late_base = 0, late_busy = 0;
        int r, n_base = 0, n_busy = 0;

        if (!base || !busy)
                return -ENOMEM;
        snprintf(path, sizeof(path), "%s/rules", tmpdir);
        if (mkdir(path, 0755) < 0 && errno != EEXIST)
                return negative_errno();
        if ((r = bench_start_dbus()) < 0)
                return log_error_errno(r, "Failed to start dbus-daemon: %m");
        char *idle[] = { (char *) bench_workload_path, "idle", "--period-ms", "100", NULL };
        if ((r = scratch_spawn(&scratch, "units.slice/push.service", idle, NULL)) < 0 ||
            (r = scratch_spawn(&scratch, "units.slice/key.service", idle, NULL)) < 0 ||
            (r = scratch_spawn(&scratch, "units.slice/stuck.service", idle, NULL)) < 0 ||
            (r = loaded_start_user_manager(&t)) < 0)
                goto finish;
        for (int k = 0; k < _LOADED_KIND_MAX; k++) {
                snprintf(path, sizeof(path), "units.slice/%s", loaded_units[k]);
                if ((r = scratch_open(&scratch, path, &t.cg[k])) < 0)
                        goto finish;
        }

        /* FreezeTimeout long enough that the stuck refreeze stays pending
         * through every loaded sample. */
        int n = snprintf(targets, sizeof(targets), "%s/units.slice", scratch.base);
        if (t.um_started)
                snprintf(targets + n, sizeof(targets) - (size_t) n, " %s/um.service/app.slice\nBackend=auto\n"
                         "SystemdAddress=unix:path=%s/xdg/systemd/private", scratch.base, t.um_dir);
        FILE *f = fopen(config_path, "we");
        if (!f) {
                r = negative_errno();
                goto finish;
        }
        fprintf(f, "[Standby]\nTargets=%s\nFreezeTimeout=600s\n", targets);
        if (fclose(f) != 0) {
                r = negative_errno();
                goto finish;
        }
        snprintf(fifo, sizeof(fifo), "%s/power-key", tmpdir);
        if (mkfifo(fifo, 0600) < 0 && errno != EEXIST) {
                r = negative_errno();
                goto finish;
        }
        snprintf(rule, sizeof(rule), "[Match]\nEvent=input\nDevice=%s\nKey=KEY_POWER\nValue=1\n[Action]\nThaw=key.service\n",
                 fifo);
        if ((r = bench_write_rule("10-push.rule", "[Match]\nEvent=push\nUnit=push.service\n[Action]\nThaw=push.service\n")) < 0 ||
            (r = bench_write_rule("20-key.rule", rule)) < 0 ||
            (r = bench_write_rule("30-stuck.rule",
                                  "[Match]\nEvent=push\nUnit=stuck.service\n[Action]\nThaw=stuck.service\nFor=1s\n")) < 0 ||
            (r = bench_write_rule("40-sd.rule", "[Match]\nEvent=push\nUnit=sd.service\n[Action]\nThaw=sd.service\nFor=20ms\n")) < 0)
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

        fprintf(stderr, "[loaded] %u samples of each event on an unloaded listener\n", samples);
        if ((n_base = loaded_phase(&t, false, samples, gap_ms, base, &late_base)) < 0) {
                r = n_base;
                goto finish;
        }
        uint64_t rss_base = bench_rss_kib(listener_pid);
        fprintf(stderr, "[loaded] a unit stuck in state D at its window's end%s\n",
                t.um_pid > 0 ? ", and the systemd --user manager stopped" : "");
        if ((r = loaded_get_stuck(&t)) < 0)
                goto finish;
        if (t.um_pid > 0 && kill(t.um_pid, SIGSTOP) < 0) {
                r = negative_errno();
                goto finish;
        }
        if ((n_busy = loaded_phase(&t, true, samples, gap_ms, busy, &late_busy)) < 0) {
                r = n_busy;
                goto finish;
        }
        bool still_pending = loaded_state_of("stuck.service") == UNIT_FREEZING;
        uint64_t rss = bench_rss_kib(listener_pid);
        if (t.um_pid > 0)
                (void) kill(t.um_pid, SIGCONT);

        snprintf(path, sizeof(path), "%s/listener-loaded.csv", bench_output);
        FILE *csv = fopen(path, "we");
        if (csv)
                fprintf(csv, "kind,phase,samples,late,p50_us,p99_us,max_us\n");
        printf("\nEvent to its answer (push: the D-Bus reply; power key: its unit thawed), us, %u samples each,\n"
               "each after %u ms idle; loaded: a unit stuck in state D at its window's end%s\n\n",
               samples, gap_ms, t.um_pid > 0 ? " and the systemd manager stopped" : "");
        printf("%-10s %-9s %10s %10s %10s %6s\n", "event", "listener", "p50", "p99", "max", "late");
        for (int k = 0; k < _LOADED_KIND_MAX; k++) {
                double *vb = base + k * samples, *vl = busy + k * samples;
                size_t nb = (size_t) n_base, nl = (size_t) n_busy;
                double p99b = stats_percentile(vb, nb, 99), p99l = stats_percentile(vl, nl, 99);
                printf("%-10s %-9s %10.1f %10.1f %10.1f %6u\n", loaded_kind_names[k], "unloaded",
                       stats_percentile(vb, nb, 50), p99b, stats_max(vb, nb), late_base);
                printf("%-10s %-9s %10.1f %10.1f %10.1f %6u\n", "", "loaded", stats_percentile(vl, nl, 50), p99l,
                       stats_max(vl, nl), late_busy);
                printf("%-10s p99 loaded / unloaded: %.2f\n", "", p99l / p99b);
                if (csv) {
                        fprintf(csv, "%s,unloaded,%zu,%u,%.1f,%.1f,%.1f\n", loaded_kind_names[k], nb, late_base,
                                stats_percentile(vb, nb, 50), p99b, stats_max(vb, nb));
                        fprintf(csv, "%s,loaded,%zu,%u,%.1f,%.1f,%.1f\n", loaded_kind_names[k], nl, late_busy,
                                stats_percentile(vl, nl, 50), p99l, stats_max(vl, nl));
                }
        }
        printf("\nThe stuck unit's refreeze %s pending at the end; listener RSS %" PRIu64 " KiB unloaded, %" PRIu64
               " KiB loaded\n", still_pending ? "was still" : "was no longer", rss_base, rss);
        if (csv) {
                fclose(csv);
                printf("Results: %s\n", path);
        }
        r = 0;
finish:
        loaded_stop(&t);
        (void) run_manager("exit", NULL);
        bench_stop_services();
        return r;
}
