/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Thaws through a user's systemd manager (a real one, started by the
 * test): windows it runs, its jobs held and released, its link closed when
 * idle, and the fallback to cgroup.freeze when it is stopped or inactive. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "listener-harness.h"
#include "manager.h"
#include "test-util.h"

/* A systemd --user manager (tests/env/user-manager.sh) that froze the units. */
static char um_dir[128], um_cgrel[512];

void setup_user_manager(void) {
        listener_setup();
        snprintf(um_dir, sizeof(um_dir), "%s/um", harness_dir);
        (void) mkdir(um_dir, 0700);
        snprintf(um_cgrel, sizeof(um_cgrel), "%s/um.service", T.base);
        (void) test_user_manager_start(um_dir, um_cgrel);
}

void teardown_user_manager(void) {
        test_user_manager_stop();
        listener_teardown();
}

/* Ends a unit the test started in the user manager, whatever it ignores. */
static void um_kill(const char *unit) {
        char cmd[1024];
        _cleanup_free_ char *out = NULL;

        snprintf(cmd, sizeof(cmd), "XDG_RUNTIME_DIR=%s/xdg systemctl --user kill --signal=SIGKILL %s", um_dir, unit);
        (void) test_run_shell(cmd, &out);
}

/* Standby left: nothing frozen; the unit ended and the client closed. */
static void leave_user_manager_standby(sd_bus *bus, const char *unit) {
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
        um_kill(unit);
        sd_bus_flush_close_unref(bus);
}

/* unit started by the user manager (systemd-run's args: properties, then
 * the command line), Backend=systemd on its app.slice, the listener up and
 * standby entered, the unit frozen; its cgroup (below base) goes to
 * ret_sub. Returns a client connection to the bus. */
static sd_bus *standby_through_user_manager(const char *unit, const char *args, char *ret_sub, size_t size) {
        char cmd[8192], extra[1024];
        _cleanup_free_ char *out = NULL;

        snprintf(cmd, sizeof(cmd), "XDG_RUNTIME_DIR=%s/xdg systemd-run --user --unit=%s %s 2>&1", um_dir, unit, args);
        ck_assert_msg(test_run_shell(cmd, &out) == 0, "systemd-run: %s", out);
        snprintf(extra, sizeof(extra), "Targets=\nTargets=%s/app.slice\nBackend=systemd\n"
                                       "SystemdAddress=unix:path=%s/xdg/systemd/private\n", um_cgrel, um_dir);
        test_write_config(extra);
        snprintf(ret_sub, size, "um.service/app.slice/%s", unit);
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert(test_frozen(ret_sub));
        return bus;
}

/* systemd's FreezerState of a unit of the test's user manager, waited for
 * (its PropertiesChanged, 10 s at most). */
static bool wait_freezer_state(const char *unit, const char *want) {
        char runtime_dir[PATH_MAX];

        snprintf(runtime_dir, sizeof(runtime_dir), "%s/xdg", um_dir);
        return test_wait_unit_property(runtime_dir, unit, "FreezerState", want, 10 * USEC_PER_SEC);
}

/* The test's user manager's PID. */
static pid_t um_pid(void) {
        char path[256];
        _cleanup_free_ char *text = NULL;
        int pid = 0;

        snprintf(path, sizeof(path), "%s/manager.pid", um_dir);
        ck_assert_int_ge(read_one_lineat(AT_FDCWD, path, &text), 0);
        ck_assert_int_eq(sscanf(text, "%d", &pid), 1);
        return (pid_t) pid;
}

/* unit, a nanosleep workload of the user manager, with rule (if not NULL)
 * as its rule file, in standby and frozen through the manager (above). */
static sd_bus *standby_sleeper(const char *unit, const char *rule, char *ret_sub, size_t size) {
        char cmd[PATH_MAX + 32], file[128];

        if (rule) {
                snprintf(file, sizeof(file), "60-%s.rule", unit);
                write_rule(file, rule);
        }
        snprintf(cmd, sizeof(cmd), "%s nanosleep", test_bin("standby-workload"));
        sd_bus *bus = standby_through_user_manager(unit, cmd, ret_sub, size);
        ck_assert(wait_freezer_state(unit, "frozen"));
        return bus;
}

/* The systemd manager that froze a unit is stopped (SIGSTOP): a push for
 * the unit is answered at once, and the unit is thawed all the same,
 * through cgroup.freeze, once ThawUnit has had its moment; the thaw is
 * recorded then. */
START_TEST(test_loop_systemd_stopped_thaws_through_cgroupfs) {
        char sub[600];
        int acted;

        if (!test_need_user_manager())
                return;
        sd_bus *bus = standby_sleeper("standby-a.service",
                                      "[Match]\nEvent=push\nUnit=standby-a.service\n[Action]\nThaw=standby-a.service\n", sub,
                                      sizeof(sub));
        pid_t pid = um_pid();
        ck_assert_int_eq(kill(pid, SIGSTOP), 0);
        char *error = push_within(bus, "standby-a.service", 2 * USEC_PER_SEC, &acted);
        ck_assert_msg(!error, "a push was not answered while systemd was stopped: %s", error);
        ck_assert_int_eq(acted, 1);
        /* ThawUnit unanswered: thawed through cgroup.freeze, systemd still stopped. */
        ck_assert(wait_frozen(sub, false));
        ck_assert_uint_eq(statistic(bus, "systemd_fallbacks"), 1);
        /* Its record waited for that: the 1 that cgroup.freeze read while
         * ThawUnit was unanswered was no freeze again, and a running unit
         * is not left recorded as frozen. */
        ck_assert(wait_journal_state(sub, UNIT_THAWED, 5 * USEC_PER_SEC));
        ck_assert_int_eq(kill(pid, SIGCONT), 0);

        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* systemd stops a unit while it is frozen (its main process killed; the
 * rest ignores SIGTERM and cannot see it anyway): ThawUnit answers
 * UnitInactive, and a push must still thaw it, through cgroup.freeze. */
START_TEST(test_loop_systemd_inactive_thaws_through_cgroupfs) {
        char cmd[8192], sub[600];
        _cleanup_free_ char *out = NULL;
        int acted;

        if (!test_need_user_manager())
                return;
        char bin[PATH_MAX];
        ck_assert_ptr_nonnull(realpath(test_bin("standby-workload"), bin));
        write_rule("60-k.rule", "[Match]\nEvent=push\nUnit=standby-k.service\n[Action]\nThaw=standby-k.service\n");
        snprintf(cmd, sizeof(cmd), "-p TimeoutStopSec=120 /bin/sh -c 'trap \"\" TERM; %s nanosleep & wait'", bin);
        sd_bus *bus = standby_through_user_manager("standby-k.service", cmd, sub, sizeof(sub));

        snprintf(cmd, sizeof(cmd), "XDG_RUNTIME_DIR=%s/xdg systemctl --user kill --signal=SIGKILL --kill-who=main "
                 "standby-k.service 2>&1", um_dir);
        free(out);
        out = NULL;
        ck_assert_msg(test_run_shell(cmd, &out) == 0, "systemctl kill: %s", out);
        char runtime_dir[PATH_MAX];
        snprintf(runtime_dir, sizeof(runtime_dir), "%s/xdg", um_dir);
        bool stopping = test_wait_unit_property(runtime_dir, "standby-k.service", "ActiveState", "deactivating",
                                                20 * USEC_PER_SEC);
        ck_assert_msg(stopping, "standby-k.service did not start stopping");
        ck_assert(test_frozen(sub));

        ck_assert_ptr_null(push(bus, "standby-k.service", &acted));
        ck_assert_int_eq(acted, 1);
        ck_assert(wait_frozen(sub, false));
        ck_assert_uint_eq(statistic(bus, "systemd_fallbacks"), 1);

        leave_user_manager_standby(bus, "standby-k.service");
}
END_TEST

/* A thaw window through systemd: the thaws-th thaw done by ThawUnit
 * (counted, not sampled: a loaded host may read systemd's "running" only
 * after the window closed), then frozen again when it ends, in the kernel
 * and in systemd's view, with no thaw past systemd. */
static void assert_window_through_systemd(sd_bus *bus, const char *unit, const char *sub, uint64_t thaws) {
        ck_assert_msg(wait_statistic(bus, "systemd_thaws", thaws, 10 * USEC_PER_SEC), "%s was not thawed by ThawUnit",
                      unit);
        ck_assert(wait_frozen(sub, true));
        ck_assert(wait_freezer_state(unit, "frozen"));
        ck_assert_uint_eq(statistic(bus, "systemd_fallbacks"), 0);
        ck_assert_uint_eq(statistic(bus, "thaw_failures"), 0);
}

static bool saw_job_released(void *bus) {
        return statistic(bus, "jobs_released") >= 1;
}

/* Its unit ran twice: at exit, and once more by its timer. */
static bool ran_twice(void *path) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        size_t n = 0;
        int c;

        while (f && (c = fgetc(f)) != EOF)
                n += c == '\n';
        return n >= 2;
}

/* A unit held while its timer starts it: its start job is cancelled at the
 * user manager (which would otherwise report the running job twice a
 * second for all of standby), the unit stays "activating" and held, its
 * command runs at exit. A unit someone asked for keeps its job. */
START_TEST(test_hold_releases_timer_job) {
        char cmd[8192], sub[600], log[PATH_MAX];
        _cleanup_free_ char *out = NULL;

        if (!test_need_user_manager())
                return;
        snprintf(cmd, sizeof(cmd), "%s nanosleep", test_bin("standby-workload"));
        sd_bus *bus = standby_through_user_manager("standby-a.service", cmd, sub, sizeof(sub));

        /* Asked for: held with its job (systemctl would wait for it). Each
         * command here waits 0.5 s before it ends or writes: holding takes
         * a moment (docs/benchmark.md, section 7, measures it), and this
         * checks the hold, not its speed. */
        snprintf(cmd, sizeof(cmd), "XDG_RUNTIME_DIR=%s/xdg systemd-run --user --no-block --unit=held-asked "
                 "-p Type=oneshot /bin/sleep 0.5 2>&1", um_dir);
        ck_assert_msg(test_run_shell(cmd, &out) == 0, "systemd-run: %s", out);
        ck_assert(wait_frozen("um.service/app.slice/held-asked.service", true));

        /* Started by its timer: held, its job released. Unit files, not
         * systemd-run's transient units, whose cgroup systemd makes before
         * any job starts them. */
        snprintf(log, sizeof(log), "%s/held-tick.log", harness_dir);
        char units[PATH_MAX], path[PATH_MAX + 32];
        snprintf(units, sizeof(units), "%s/xdg/systemd/user", um_dir);
        snprintf(cmd, sizeof(cmd), "%s/xdg/systemd", um_dir);
        (void) mkdir(cmd, 0755);
        ck_assert(mkdir(units, 0755) == 0 || errno == EEXIST);
        snprintf(path, sizeof(path), "%s/held-tick.service", units);
        FILE *f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        fprintf(f, "[Service]\nType=oneshot\nExecStart=/bin/sh -c 'sleep 0.5; echo ran >> %s'\n", log);
        ck_assert_int_eq(fclose(f), 0);
        snprintf(path, sizeof(path), "%s/held-tick.timer", units);
        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        fputs("[Timer]\nOnActiveSec=0.2s\nOnUnitActiveSec=1s\nAccuracySec=1ms\n", f);
        ck_assert_int_eq(fclose(f), 0);
        snprintf(cmd, sizeof(cmd), "export XDG_RUNTIME_DIR=%s/xdg; systemctl --user daemon-reload && "
                 "systemctl --user start held-tick.timer 2>&1", um_dir);
        free(out);
        out = NULL;
        ck_assert_msg(test_run_shell(cmd, &out) == 0, "the timer: %s", out);
        char runtime_dir[PATH_MAX];
        snprintf(runtime_dir, sizeof(runtime_dir), "%s/xdg", um_dir);
        /* Its job started it (its cgroup may be there before). */
        ck_assert(test_wait_unit_property(runtime_dir, "held-tick.service", "ActiveState", "activating",
                                          10 * USEC_PER_SEC));
        ck_assert(wait_frozen("um.service/app.slice/held-tick.service", true));
        ck_assert_msg(test_wait_for(saw_job_released, bus, 10 * USEC_PER_SEC), "the timer's job was not released");

        /* The one released is the timer's: the other keeps its job. */
        _cleanup_free_ char *asked_job = test_unit_show(runtime_dir, "held-asked.service", "Job"),
                            *tick_job = test_unit_show(runtime_dir, "held-tick.service", "Job"),
                            *tick_state = test_unit_show(runtime_dir, "held-tick.service", "ActiveState"),
                            *timer_state = test_unit_show(runtime_dir, "held-tick.timer", "SubState");
        ck_assert_msg(!streq(asked_job, ""), "held-asked.service lost its job");
        ck_assert_msg(streq(tick_job, ""), "held-tick.service still has job %s", tick_job);
        ck_assert_str_eq(tick_state, "activating");
        ck_assert_str_eq(timer_state, "running"); /* fired, waiting for its unit */
        ck_assert_uint_eq(statistic(bus, "jobs_released"), 1);
        ck_assert_int_eq(access(log, F_OK), -1); /* held: it has not run */

        /* At exit it runs, and its timer keeps its schedule: it runs again. */
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert_msg(test_wait_for(ran_twice, log, 10 * USEC_PER_SEC), "the timer did not run its unit again");
        ck_assert(!test_anything_frozen());
        snprintf(cmd, sizeof(cmd), "XDG_RUNTIME_DIR=%s/xdg systemctl --user stop held-tick.timer 2>&1", um_dir);
        free(out);
        out = NULL;
        (void) test_run_shell(cmd, &out);
        (void) unlink(log);
        um_kill("standby-a.service");
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* thaw --for of a unit systemd froze: thawed through systemd before the
 * command returns (the listener answers once ThawUnit is), and frozen
 * again through systemd when the listener's window ends. */
START_TEST(test_loop_systemd_thaw_window) {
        char sub[600];
        _cleanup_free_ char *out = NULL, *err = NULL;

        if (!test_need_user_manager())
                return;
        sd_bus *bus = standby_sleeper("standby-w.service", NULL, sub, sizeof(sub));

        ck_assert_msg(test_manager(&err, "thaw", test_cgpath(sub), "--for", "1s", "--bus-address", bus_address,
                                   NULL) == EXIT_OK,
                      "%s", err);
        ck_assert(!test_frozen(sub));
        assert_window_through_systemd(bus, "standby-w.service", sub, 1);

        leave_user_manager_standby(bus, "standby-w.service");
}
END_TEST

static bool no_link_authenticated(void *bus) {
        return statistic(bus, "systemd_links") == 0;
}

/* The user manager does something that sends signals (a transient unit
 * runs, outside the targets: one held there would be asked about on the
 * link), at most every 200 ms, until the listener has closed its link. */
static bool link_closed_by_noise(void *bus) {
        static usec_t last;
        static unsigned n;
        char cmd[1024];
        _cleanup_free_ char *out = NULL;

        if (no_link_authenticated(bus))
                return true;
        if (now_usec(CLOCK_MONOTONIC) - last >= 200 * USEC_PER_MSEC) {
                snprintf(cmd, sizeof(cmd),
                         "XDG_RUNTIME_DIR=%s/xdg systemd-run --user --slice=noise.slice --unit=standby-noise-%u /bin/true",
                         um_dir, n++);
                (void) test_run_shell(cmd, &out);
                last = now_usec(CLOCK_MONOTONIC);
        }
        return false;
}

/* The listener's link to the manager is authenticated only while used:
 * systemd sends every signal to each authenticated private connection, so
 * the first one that no call of the listener's caused closes it. A push
 * thaws the unit through systemd and the window's end freezes it through
 * systemd again; the link stays open while the manager is quiet, and once
 * a transient unit of someone else's runs it is closed, and the next push
 * still thaws through systemd, from the spare. */
START_TEST(test_loop_systemd_link_closed_when_idle) {
        char sub[600];
        int acted;

        if (!test_need_user_manager())
                return;
        sd_bus *bus = standby_sleeper("standby-i.service",
                                      "[Match]\nEvent=push\nUnit=standby-i.service\n[Action]\nThaw=standby-i.service\nFor=3s\n",
                                      sub, sizeof(sub));
        ck_assert_uint_eq(statistic(bus, "systemd_links"), 0); /* a spare, connected at the enter */

        for (int round = 0; round < 2; round++) {
                char *error = push_within(bus, "standby-i.service", 2 * USEC_PER_SEC, &acted);
                ck_assert_msg(!error, "a push was not answered: %s", error);
                ck_assert_int_eq(acted, 1);
                ck_assert(wait_frozen(sub, false));
                assert_window_through_systemd(bus, "standby-i.service", sub, round + 1);
                uint64_t signals = statistic(bus, "systemd_signals");
                ck_assert_msg(test_wait_for(link_closed_by_noise, bus, 10 * USEC_PER_SEC),
                              "round %d: the link is still authenticated", round);
                ck_assert_uint_gt(statistic(bus, "systemd_signals"), signals);
        }
        ck_assert_uint_eq(statistic(bus, "refreezes"), 2);

        leave_user_manager_standby(bus, "standby-i.service");
}
END_TEST

/* A window that ends while its ThawUnit is unanswered (the manager
 * stopped, SIGSTOP, for longer than the window) waits for the answer,
 * and then freezes the unit again: the journal's word that it is frozen,
 * with the thaw not yet recorded, is not taken. */
START_TEST(test_loop_systemd_window_waits_for_thaw) {
        char sub[600];
        int acted;

        if (!test_need_user_manager())
                return;
        sd_bus *bus = standby_sleeper("standby-w.service",
                                      "[Match]\nEvent=push\nUnit=standby-w.service\n[Action]\nThaw=standby-w.service\n"
                                      "For=200ms\n",
                                      sub, sizeof(sub));
        pid_t pid = um_pid();
        ck_assert_int_eq(kill(pid, SIGSTOP), 0);
        char *error = push_within(bus, "standby-w.service", 2 * USEC_PER_SEC, &acted);
        ck_assert_msg(!error, "a push was not answered while systemd was stopped: %s", error);
        ck_assert_int_eq(acted, 1);
        /* Past the window's end, before ThawUnit's 1 s fallback: a deadline
         * to pass, not an absence to show. */
        (void) poll(NULL, 0, 500);
        ck_assert_int_eq(kill(pid, SIGCONT), 0);

        /* Thawed (by systemd's answer or the fallback), recorded, and then
         * the window's refreeze, through systemd. */
        ck_assert_msg(wait_statistic(bus, "refreezes", 1, 10 * USEC_PER_SEC), "the window never froze the unit again");
        ck_assert_uint_ge(statistic(bus, "records"), 1);
        ck_assert(wait_freezer_state("standby-w.service", "frozen"));
        ck_assert(wait_frozen(sub, true));
        ck_assert(wait_journal_state(sub, UNIT_FROZEN, 5 * USEC_PER_SEC));

        leave_user_manager_standby(bus, "standby-w.service");
}
END_TEST

/* EndWhenIdle=yes on a unit thawed through a stopped systemd manager
 * (SIGSTOP): while its ThawUnit is unanswered the unit is frozen still and
 * its threads sleep in the freezer, which no look may take for its work
 * done. Once thawed (the 1 s fallback), a spinning unit keeps its window
 * to For=, no window ended by a look. */
START_TEST(test_loop_systemd_idle_look_waits_for_thaw) {
        char sub[600], cmd[PATH_MAX + 32];
        int acted;

        if (!test_need_user_manager())
                return;
        write_rule("60-standby-i.rule", "[Match]\nEvent=push\nUnit=standby-i.service\n[Action]\nThaw=standby-i.service\n"
                                        "For=2s\nEndWhenIdle=yes\n");
        snprintf(cmd, sizeof(cmd), "%s busy", test_bin("standby-workload"));
        sd_bus *bus = standby_through_user_manager("standby-i.service", cmd, sub, sizeof(sub));
        ck_assert(wait_freezer_state("standby-i.service", "frozen"));
        pid_t pid = um_pid();
        ck_assert_int_eq(kill(pid, SIGSTOP), 0);
        char *error = push_within(bus, "standby-i.service", 2 * USEC_PER_SEC, &acted);
        ck_assert_msg(!error, "a push was not answered while systemd was stopped: %s", error);
        ck_assert_int_eq(acted, 1);
        /* Thawed by the fallback, systemd still stopped. */
        ck_assert(wait_frozen(sub, false));
        ck_assert_int_eq(kill(pid, SIGCONT), 0);

        ck_assert_msg(wait_statistic(bus, "refreezes", 1, 10 * USEC_PER_SEC), "the window never froze the unit again");
        ck_assert_uint_ge(statistic(bus, "idle_looks"), 1);
        ck_assert_msg(statistic(bus, "idle_ends") == 0, "a look took the unit still frozen for its work done");
        ck_assert(wait_frozen(sub, true));
        leave_user_manager_standby(bus, "standby-i.service");
}
END_TEST

/* systemd drops a private connection that has not authenticated within
 * 90 s: the spare to a quiet manager is replaced before that (a minute
 * after it connected, with 10 s of timer slack; the test allows 80 s),
 * and the next thaw goes through systemd, no fallback. */
START_TEST(test_loop_systemd_spare_renewed) {
        char sub[600];
        int acted;

        if (!test_need_user_manager())
                return;
        sd_bus *bus = standby_sleeper("standby-r.service",
                                      "[Match]\nEvent=push\nUnit=standby-r.service\n[Action]\nThaw=standby-r.service\n", sub,
                                      sizeof(sub));

        ck_assert_msg(wait_statistic(bus, "systemd_renewals", 1, 80 * USEC_PER_SEC), "the spare was not renewed within 80 s");
        char *error = push_within(bus, "standby-r.service", 2 * USEC_PER_SEC, &acted);
        ck_assert_msg(!error, "a push was not answered: %s", error);
        ck_assert_int_eq(acted, 1);
        ck_assert(wait_frozen(sub, false));
        ck_assert(wait_statistic(bus, "systemd_thaws", 1, 10 * USEC_PER_SEC)); /* systemd thawed it */
        ck_assert_uint_eq(statistic(bus, "systemd_fallbacks"), 0);

        leave_user_manager_standby(bus, "standby-r.service");
}
END_TEST

void listener_systemd_tests(const ListenerCases *c) {
        tcase_add_test(c->loop_systemd, test_loop_systemd_stopped_thaws_through_cgroupfs);
        tcase_add_test(c->loop_systemd, test_loop_systemd_window_waits_for_thaw);
        tcase_add_test(c->loop_systemd, test_loop_systemd_idle_look_waits_for_thaw);
        tcase_add_test(c->loop_systemd, test_loop_systemd_inactive_thaws_through_cgroupfs);
        tcase_add_test(c->loop_systemd, test_loop_systemd_thaw_window);
        tcase_add_test(c->loop_systemd, test_loop_systemd_link_closed_when_idle);
        tcase_add_test(c->loop_systemd, test_hold_releases_timer_job);
        tcase_add_test(c->systemd_spare, test_loop_systemd_spare_renewed);
}
