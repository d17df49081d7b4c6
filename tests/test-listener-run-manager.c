/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* standby-manager as the listener runs it (listener/run-manager.c): the
 * exit of an ExitStandby= rule and the freeze before a sleep are a program
 * with descriptors 0-2 only and a fixed environment (tests/helpers/
 * exec-probe stands in for it and writes what it got); and the freeze
 * before a sleep against a journal an exit left "exiting", with a fake
 * logind on the fixture's bus (STANDBY_LISTENER_TEST_LOGIND=1): it owns
 * org.freedesktop.login1, hands out Inhibit locks as pipes whose other end
 * it keeps (logind's way: a lock is released when every copy of its fd is
 * closed, which the kept end sees as POLLERR), and sends PrepareForSleep. */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "cgroup.h"
#include "fileio.h"
#include "journal.h"
#include "listener-harness.h"
#include "manager.h"
#include "test-util.h"

#define LISTENER_BUS_NAME "org.standby.Listener1"
#define LISTENER_PATH "/org/standby/Listener1"

/* The fake logind: its connection, and the kept end of the sleep lock it
 * handed out. */
static sd_bus *logind;
static int sleep_lock = -EBADF;

/* The listener runs exec-probe for standby-manager (absolute, as the
 * listener wants it). */
static void run_probe(void) {
        _cleanup_free_ char *probe = realpath(test_bin("helpers/exec-probe"), NULL);
        ck_assert_ptr_nonnull(probe);
        ck_assert_int_eq(setenv("STANDBY_LISTENER_MANAGER_PATH", probe, 1), 0);
}

static bool journal_gone(void *userdata) {
        char p[512];
        snprintf(p, sizeof(p), "%s/" JOURNAL_FILE, T.state_dir);
        return access(p, F_OK) < 0;
}

/* What exec-probe wrote for verb, or NULL if it never ran for it. */
static char *probe_report(const char *verb) {
        char p[512];
        char *text = NULL;
        snprintf(p, sizeof(p), "%s/exec-probe.%s", T.state_dir, verb);
        if (read_full_fileat(AT_FDCWD, p, &text, NULL) < 0)
                return NULL;
        return text;
}

/* standby-manager had descriptors 0, 1 and 2 only, and no environment
 * but PATH and (if the listener had them) JOURNAL_STREAM and
 * STANDBY_REPORT_DIR. */
static void assert_ran_alone(const char *report) {
        _cleanup_free_ char *copy = strdup(report);
        unsigned fds = 0;
        char *save = NULL;

        ck_assert_ptr_nonnull(copy);
        for (char *x = strtok_r(copy, "\n", &save); x; x = strtok_r(NULL, "\n", &save)) {
                if (strneq(x, "fd ", 3)) {
                        int fd = atoi(x + 3);
                        ck_assert_msg(fd >= 0 && fd <= 2, "standby-manager got the listener's fd %d", fd);
                        fds |= 1U << fd;
                } else if (strneq(x, "env ", 4))
                        ck_assert_msg(strneq(x, "env PATH=", 9) || strneq(x, "env JOURNAL_STREAM=", 19) ||
                                              strneq(x, "env STANDBY_REPORT_DIR=", 23),
                                      "standby-manager got %s", x);
        }
        ck_assert_uint_eq(fds, 7);
}

/* An ExitStandby= rule still ends standby, by standby-manager exit run
 * with none of the listener's descriptors (its bus, inotify and epoll
 * fds) and a fixed environment, told the listener's configuration and
 * state directory. */
START_TEST(test_exit_rule_runs_manager_alone) {
        _cleanup_free_ char *report = NULL;

        if (!test_need_root_cgroup2())
                return;
        ck_assert_int_eq(setenv("STANDBY_TEST_SECRET", "not for standby-manager", 1), 0);
        run_probe();
        sd_bus *bus = standby_with_idle_mail();
        ck_assert(test_frozen("mail.service"));
        ck_assert_ptr_null(push(bus, "lid.service", NULL));
        ck_assert(wait_journal_state("mail.service", -1, 15 * USEC_PER_SEC));
        ck_assert(!test_anything_frozen());
        report = probe_report("exit");
        ck_assert_msg(report, "the listener did not run standby-manager exit");
        assert_ran_alone(report);
        ck_assert_ptr_nonnull(strstr(report, "arg --state-dir\n"));
        ck_assert_ptr_nonnull(strstr(report, "arg --config\n"));
        ck_assert_ptr_nonnull(strstr(report, "arg exit\n"));
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* The fake logind. */
static int fake_inhibit(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *what, *who, *why, *mode;
        int p[2], r;

        r = sd_bus_message_read(m, "ssss", &what, &who, &why, &mode);
        if (r < 0)
                return r;
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        r = sd_bus_reply_method_return(m, "h", p[0]);
        safe_close(p[0]);
        if (streq(what, "sleep")) {
                safe_close(sleep_lock);
                sleep_lock = p[1];
        } else
                safe_close(p[1]);
        return r;
}

static const sd_bus_vtable fake_logind_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("Inhibit", "ssss", "h", fake_inhibit, 0),
        SD_BUS_SIGNAL("PrepareForSleep", "b", 0),
        SD_BUS_VTABLE_END,
};

static void fake_logind_start(void) {
        ck_assert_int_eq(setenv("STANDBY_LISTENER_TEST_LOGIND", "1", 1), 0);
        logind = test_bus_client(bus_address);
        ck_assert_int_ge(sd_bus_add_object_vtable(logind, NULL, "/org/freedesktop/login1",
                                                  "org.freedesktop.login1.Manager", fake_logind_vtable, NULL),
                         0);
        ck_assert_int_ge(sd_bus_request_name(logind, "org.freedesktop.login1", 0), 0);
}

/* Answers the listener's calls until the sleep lock is handed out
 * (released false) or, once it is, until every copy of it is closed
 * (released true); false if not within timeout. */
static bool fake_logind_until(bool released, usec_t timeout) {
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + timeout;

        for (;;) {
                int r;
                while ((r = sd_bus_process(logind, NULL)) > 0)
                        ;
                ck_assert_int_ge(r, 0);
                struct pollfd p[2] = {
                        { .fd = sd_bus_get_fd(logind), .events = (short) sd_bus_get_events(logind) },
                        { .fd = sleep_lock },
                };
                if (!released && sleep_lock >= 0)
                        return true;
                if (released && sleep_lock >= 0 && poll(&p[1], 1, 0) > 0 && (p[1].revents & POLLERR))
                        return true;
                int t = deadline_poll_timeout(deadline);
                if (t == 0)
                        return false;
                (void) poll(p, sleep_lock >= 0 ? 2 : 1, MIN(t, 100));
        }
}

static void fake_logind_sleep(bool start) {
        ck_assert_int_ge(sd_bus_emit_signal(logind, "/org/freedesktop/login1", "org.freedesktop.login1.Manager",
                                            "PrepareForSleep", "b", start),
                         0);
        ck_assert_int_ge(sd_bus_flush(logind), 0);
}

/* The listener's GetPowerState: value of key (owned by the caller). */
static char *power_state(const char *key) {
        sd_bus *bus = test_bus_client(bus_address);
        sd_bus_message *reply = NULL;
        const char *k, *v;
        char *found = NULL;

        ck_assert_int_ge(sd_bus_call_method(bus, LISTENER_BUS_NAME, LISTENER_PATH, LISTENER_BUS_NAME, "GetPowerState",
                                            NULL, &reply, ""),
                         0);
        ck_assert_int_ge(sd_bus_message_enter_container(reply, 'a', "{ss}"), 0);
        while (sd_bus_message_read(reply, "{ss}", &k, &v) > 0)
                if (streq(k, key))
                        found = strdup(v);
        sd_bus_message_unref(reply);
        sd_bus_flush_close_unref(bus);
        ck_assert_ptr_nonnull(found);
        return found;
}

/* A user made an exit fail (a freeze of their own above their units: here
 * the test's base, above the targets), so the journal stays "exiting".
 * The freeze before the next sleep still freezes, as enter does over such
 * a journal: refusing it, any user could turn off the freeze before every
 * sleep. */
START_TEST(test_sleep_freezes_over_failed_exit) {
        _cleanup_free_ char *err = NULL, *outcome = NULL, *report = NULL;
        char extra[512];
        _cleanup_close_ int base = test_cgroup(NULL);

        if (!test_need_root_cgroup2())
                return;
        snprintf(extra, sizeof(extra), "Targets=\nTargets=%s\nEnterOn=none\nLeaveOn=none\nFreezeBeforeSleep=yes\n",
                 test_cgpath("t.slice"));
        test_write_config(extra);
        test_spawn_workload("t.slice/a.service", "idle", 100, 1, NULL);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert_int_eq(cgroup_set_freeze(base, true), 0);
        int left = test_manager(&err, "exit", NULL);
        ck_assert_int_eq(cgroup_set_freeze(base, false), 0);
        ck_assert_msg(left == EXIT_FAILURE_GENERIC, "exit: %d: %s", left, err);
        ck_assert(!journal_gone(NULL));
        ck_assert(!test_frozen("t.slice/a.service"));

        fake_logind_start();
        run_probe();
        start_listener();
        ck_assert_msg(fake_logind_until(false, 10 * USEC_PER_SEC), "the listener took no sleep lock");
        fake_logind_sleep(true);
        ck_assert_msg(fake_logind_until(true, 10 * USEC_PER_SEC), "the sleep lock was never released");
        outcome = power_state("LastSleep");
        ck_assert_msg(streq(outcome, "frozen"), "the freeze before the sleep: %s", outcome);
        ck_assert(test_frozen("t.slice/a.service"));
        report = probe_report("enter");
        ck_assert_msg(report, "the listener did not run standby-manager enter");
        assert_ran_alone(report);
        ck_assert_ptr_nonnull(strstr(report, "arg --before-sleep\n"));

        /* Woken: what was entered for the sleep is left. */
        fake_logind_sleep(false);
        ck_assert_msg(test_wait_for(journal_gone, NULL, 15 * USEC_PER_SEC), "standby was not left on waking");
        ck_assert(!test_anything_frozen());
}
END_TEST

/* An exit under way (another process holds the journal's lock, the journal
 * says "exiting"): the freeze before the sleep is refused at once, not
 * queued behind the exit to freeze what it thawed. */
START_TEST(test_sleep_not_frozen_while_exit_runs) {
        _cleanup_free_ char *outcome = NULL, *report = NULL;
        _cleanup_close_ int state_fd = -EBADF, lock_fd = -EBADF;
        _cleanup_close_ int a = -EBADF;
        Journal *j = NULL;

        if (!test_need_root_cgroup2())
                return;
        test_write_config("EnterOn=none\nLeaveOn=none\nFreezeBeforeSleep=yes\n");
        test_spawn_workload("a.service", "idle", 100, 1, NULL);
        fake_logind_start();
        run_probe();
        start_listener();
        ck_assert_msg(fake_logind_until(false, 10 * USEC_PER_SEC), "the listener took no sleep lock");
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);

        /* An exit's first step: the lock taken, the journal "exiting". */
        ck_assert_int_ge(journal_dir_open(T.state_dir, false, &state_fd), 0);
        ck_assert_int_ge(journal_lock(state_fd, LOCK_EX, &lock_fd), 0);
        ck_assert_int_ge(journal_load(state_fd, &j), 0);
        j->phase = JOURNAL_EXITING;
        ck_assert_int_ge(journal_save(state_fd, j), 0);
        journal_free(j);
        a = test_cgroup("a.service");
        ck_assert_int_ge(cgroup_set_freeze(a, false), 0);

        fake_logind_sleep(true);
        ck_assert_msg(fake_logind_until(true, 10 * USEC_PER_SEC), "the sleep lock was never released");
        outcome = power_state("LastSleep");
        ck_assert_msg(streq(outcome, "standby is being left"), "the freeze before the sleep: %s", outcome);
        report = probe_report("enter");
        ck_assert_msg(!report, "standby-manager enter ran during an exit");
        ck_assert(!test_frozen("a.service"));

        lock_fd = safe_close(lock_fd);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
}
END_TEST

void listener_run_manager_tests(const ListenerCases *c) {
        tcase_add_test(c->dbus, test_exit_rule_runs_manager_alone);
        tcase_add_test(c->dbus, test_sleep_freezes_over_failed_exit);
        tcase_add_test(c->dbus, test_sleep_not_frozen_while_exit_runs);
}
