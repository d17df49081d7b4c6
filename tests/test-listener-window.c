/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Thaws asked over the bus: their windows are the listener's, and their
 * replies (PushEx) say what they did: failed, or the unit gone. Windows
 * that end when their work ends (EndWhenIdle=). */
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "listener-harness.h"
#include "manager.h"
#include "strv.h"
#include "test-util.h"

/* PushEx(unit, reason) or Thaw(cgroups, usec): the cgroups thawed, and
 * those not thawed each with why ("cgroup: why", in ret_failed). Returns
 * the bus error's name, or NULL. */
static char *thaw_call(sd_bus *bus, const char *method, const char *unit, char **cgroups, uint64_t usec,
                       char ***ret_thawed, char ***ret_failed) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *call = NULL, *reply = NULL;
        char **thawed = NULL, **failed = NULL;
        const char *a, *b;
        char *name = NULL;
        int r;

        ck_assert_int_ge(sd_bus_message_new_method_call(bus, &call, "org.standby.Listener1", "/org/standby/Listener1",
                                                        "org.standby.Listener1", method),
                         0);
        if (unit)
                ck_assert_int_ge(sd_bus_message_append(call, "ss", unit, "test"), 0);
        else {
                ck_assert_int_ge(sd_bus_message_append_strv(call, cgroups), 0);
                ck_assert_int_ge(sd_bus_message_append(call, "t", usec), 0);
        }
        r = sd_bus_call(bus, call, 10 * USEC_PER_SEC, &error, &reply);
        if (r < 0)
                name = strdup(error.name ? error.name : "?");
        else {
                ck_assert_int_ge(sd_bus_message_read_strv(reply, &thawed), 0);
                ck_assert_int_ge(sd_bus_message_enter_container(reply, 'a', "(ss)"), 0);
                while (sd_bus_message_read(reply, "(ss)", &a, &b) > 0) {
                        char *x = NULL;
                        ck_assert_int_ge(asprintf(&x, "%s: %s", a, b), 0);
                        ck_assert_int_ge(strv_consume(&failed, x), 0);
                }
        }
        sd_bus_error_free(&error);
        sd_bus_message_unref(call);
        sd_bus_message_unref(reply);
        *ret_thawed = thawed;
        *ret_failed = failed;
        return name;
}

/* standby-manager thaw --for asks the listener, which owns the window: the
 * command exits at once, the unit runs, and the listener freezes it again
 * when the window ends. */
START_TEST(test_thaw_for_window_is_the_listeners) {
        _cleanup_free_ char *err = NULL;
        int mail;

        if (!test_need_root_cgroup2())
                return;
        test_spawn_workload("mail.service", "nanosleep", 10, 1, &mail);
        test_spawn_workload("other.service", "idle", 100, 1, NULL);
        /* Started in standby, and exempt: neither frozen nor held. */
        test_write_config("Exempt=late.service\n");
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        test_drain(mail);

        ck_assert_msg(test_manager(&err, "thaw", test_cgpath("mail.service"), "--for", "1s", "--bus-address",
                                   bus_address, NULL) == EXIT_OK,
                      "%s", err);
        ck_assert(!test_frozen("mail.service"));
        ck_assert(test_frozen("other.service"));
        ck_assert_int_eq(test_ticks(mail, 3, 5 * USEC_PER_SEC), 3);
        ck_assert(wait_journal_state("mail.service", UNIT_THAWED, 5 * USEC_PER_SEC));
        /* The window's end: the listener's refreeze. */
        ck_assert(wait_frozen("mail.service", true));
        ck_assert(wait_journal_state("mail.service", UNIT_FROZEN, 5 * USEC_PER_SEC));
        ck_assert_uint_eq(statistic(bus, "refreezes"), 1);

        /* A unit standby did not freeze (exempt): not thawed, and said so. */
        free(TAKE_PTR(err));
        test_spawn_workload("late.service", "idle", 100, 1, NULL);
        ck_assert_int_eq(test_manager(&err, "thaw", test_cgpath("late.service"), "--for", "1s", "--bus-address",
                                      bus_address, NULL),
                         EXIT_NOT_ACTIVE);
        ck_assert_msg(strstr(err, "/late.service: not thawed: not frozen by standby"), "%s", err);

        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
        /* Outside standby the listener opens no window. */
        free(TAKE_PTR(err));
        ck_assert_int_eq(test_manager(&err, "thaw", test_cgpath("mail.service"), "--for", "1s", "--bus-address",
                                      bus_address, NULL),
                         EXIT_NOT_ACTIVE);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* Without a listener, thaw --for refuses, and says why: nobody would
 * freeze the unit again. */
START_TEST(test_thaw_for_needs_the_listener) {
        _cleanup_free_ char *err = NULL;

        if (!test_need_root_cgroup2())
                return;
        test_spawn_workload("mail.service", "idle", 100, 1, NULL);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert_int_eq(test_manager(&err, "thaw", test_cgpath("mail.service"), "--for", "1s", "--bus-address",
                                      bus_address, NULL),
                         EXIT_FAILURE_GENERIC);
        ck_assert_msg(strstr(err, "thaw --for needs it running"), "%s", err);
        ck_assert(test_frozen("mail.service"));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
}
END_TEST

/* PushEx answers with what the push did: a unit that a frozen cgroup above
 * it keeps frozen is a failure, said, logged and counted, never a
 * coalesced event. */
START_TEST(test_push_ex_reports_failed_thaw) {
        _cleanup_strv_free_ char **thawed = NULL, **failed = NULL;
        char expect[600];

        if (!test_need_root_cgroup2())
                return;
        write_rule("30-pair.rule", "[Match]\nEvent=push\nUnit=pair.service\n[Action]\nThaw=mail.service\n"
                                   "Thaw=held.service\nFor=30s\n");
        test_spawn_workload("mail.service", "idle", 100, 1, NULL);
        test_spawn_workload("outer.slice/held.service", "idle", 100, 1, NULL);
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert(test_frozen("outer.slice/held.service"));

        /* Someone else freezes the slice above held.service. */
        _cleanup_close_ int outer = test_cgroup("outer.slice");
        ck_assert_int_ge(cgroup_set_freeze(outer, true), 0);
        (void) statistic(bus, "events"); /* the journal change is taken before a call */

        ck_assert_ptr_null(thaw_call(bus, "PushEx", "pair.service", NULL, 0, &thawed, &failed));
        ck_assert_msg(thawed && streq(thawed[0], test_cgpath("mail.service")) && !thawed[1], "thawed: %s",
                      thawed ? thawed[0] : "none");
        snprintf(expect, sizeof(expect), "%s: still frozen: a cgroup above it is frozen",
                 test_cgpath("outer.slice/held.service"));
        ck_assert_msg(failed && streq(failed[0], expect) && !failed[1], "failed: %s", failed ? failed[0] : "none");
        ck_assert(!test_frozen("mail.service"));
        ck_assert_uint_eq(statistic(bus, "thaw_failures"), 1);
        ck_assert_uint_eq(statistic(bus, "coalesced"), 0);
        _cleanup_free_ char *status = NULL;
        ck_assert_int_eq(test_manager_env(NULL, &status, NULL, "status", "--bus-address", bus_address, NULL), EXIT_OK);
        ck_assert_msg(strstr(status, ", 1 units not thawed (see its log)"), "%s", status);

        /* Thaw answers the same way; inside its window mail.service is thawed already. */
        strv_free(TAKE_PTR(thawed));
        strv_free(TAKE_PTR(failed));
        char *both[] = { (char *) test_cgpath("mail.service"), (char *) "not/standbys.service", NULL };
        ck_assert_ptr_null(thaw_call(bus, "Thaw", NULL, both, 5 * USEC_PER_SEC, &thawed, &failed));
        ck_assert(thawed && streq(thawed[0], test_cgpath("mail.service")) && !thawed[1]);
        ck_assert_msg(failed && streq(failed[0], "not/standbys.service: not frozen by standby") && !failed[1],
                      "failed: %s", failed ? failed[0] : "none");

        ck_assert_int_ge(cgroup_set_freeze(outer, false), 0);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* A unit whose cgroup was removed while frozen (its processes killed): the
 * push says its cgroup is gone; neither a failure nor a coalesced event. */
START_TEST(test_push_ex_reports_gone) {
        _cleanup_strv_free_ char **thawed = NULL, **failed = NULL;
        char expect[600];

        if (!test_need_root_cgroup2())
                return;
        pid_t pid = test_spawn_workload("mail.service", "idle", 100, 1, NULL);
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        (void) statistic(bus, "events"); /* the journal change is taken before a call */

        kill_and_remove(pid, "mail.service");

        ck_assert_ptr_null(thaw_call(bus, "PushEx", "mail.service", NULL, 0, &thawed, &failed));
        ck_assert(!thawed);
        snprintf(expect, sizeof(expect), "%s: its cgroup is gone", test_cgpath("mail.service"));
        ck_assert_msg(failed && streq(failed[0], expect) && !failed[1], "failed: %s", failed ? failed[0] : "none");
        ck_assert_uint_eq(statistic(bus, "thaw_failures"), 0);
        ck_assert_uint_eq(statistic(bus, "coalesced"), 0);

        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* EndWhenIdle=yes: a server that answers at once is frozen again well
 * before For= (30 s; the bound allows 5), by a look at its threads, and
 * data on its connection after that wakes it again. */
START_TEST(test_window_ends_when_server_idle) {
        int port = 30000 + (int) (getpid() % 2000), tick;
        char portarg[16];

        if (!test_need_root_cgroup2())
                return;
        write_rule("60-srv.rule",
                   "[Match]\nEvent=socket\nUnit=srv.service\n[Action]\nThaw=srv.service\nFor=30s\nEndWhenIdle=yes\n");
        snprintf(portarg, sizeof(portarg), "%d", port);
        char *argv[] = {
                (char *) test_bin("standby-workload"), "echo-server", "--port", portarg, "--tick-fd", "3", NULL
        };
        server_pid = test_spawn("srv.service", argv, &tick);
        ck_assert_int_eq(test_ticks(tick, 1, 5 * USEC_PER_SEC), 1); /* listening */
        int a = tcp_connect(port);
        ck_assert(echo(a, "hello\n"));
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert(wait_frozen("srv.service", true));

        for (uint64_t round = 1; round <= 2; round++) {
                usec_t t0 = now_usec(CLOCK_MONOTONIC);
                ck_assert(echo(a, "ping\n")); /* answered: thawed by the event */
                ck_assert_msg(wait_statistic(bus, "idle_ends", round, 5 * USEC_PER_SEC),
                              "round %" PRIu64 ": the window of For=30s did not end when the server slept", round);
                ck_assert(wait_frozen("srv.service", true));
                ck_assert_msg(now_usec(CLOCK_MONOTONIC) - t0 < 5 * USEC_PER_SEC, "frozen again only after 5 s");
                ck_assert_uint_eq(statistic(bus, "refreezes"), round);
        }
        ck_assert_uint_ge(statistic(bus, "idle_looks"), 2);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        close(a);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* EndWhenIdle=yes on a unit that keeps working (a thread spinning): the
 * looks find it busy, at doubling times, and For= ends the window. */
START_TEST(test_window_busy_lasts_for) {
        int acted;

        if (!test_need_root_cgroup2())
                return;
        write_rule("60-busy.rule", "[Match]\nEvent=push\nUnit=busy.service\n[Action]\nThaw=busy.service\nFor="
                                   "1500ms\nEndWhenIdle=yes\n");
        test_spawn_workload("busy.service", "busy", 100, 1, NULL);
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        usec_t t0 = now_usec(CLOCK_MONOTONIC);
        char *error = push_within(bus, "busy.service", 2 * USEC_PER_SEC, &acted);
        ck_assert_msg(!error, "the push was not answered: %s", error);
        ck_assert_int_eq(acted, 1);
        ck_assert_msg(wait_statistic(bus, "refreezes", 1, 10 * USEC_PER_SEC), "the window never ended");
        usec_t took = now_usec(CLOCK_MONOTONIC) - t0;
        ck_assert_msg(took >= 1400 * USEC_PER_MSEC,
                      "a busy unit frozen again %.3f s after its thaw, before For=", (double) took / USEC_PER_SEC);
        ck_assert_uint_eq(statistic(bus, "idle_ends"), 0);
        /* 20, 40, 80, 160, 320, 640 ms apart: six looks inside 1.5 s, one
         * or two fewer where the loop is late on a loaded host. */
        ck_assert_uint_ge(statistic(bus, "idle_looks"), 4);
        ck_assert(wait_frozen("busy.service", true));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* Maintenance windows: two frozen units with periodic work and no rule,
 * one accepting 1 s of lateness and the other 2 s, both run while standby
 * lasts, in windows they share (the 2 s class rides along with every other
 * window of the 1 s one), and are frozen again between them. */
START_TEST(test_maintenance_windows_shared) {
        int fast, slow;

        if (!test_need_root_cgroup2())
                return;
        test_write_config("[Maintenance]\nLateness=infinity\n[Lateness]\nfast.service=1s\nslow.service=2s\n");
        test_spawn_workload("fast.service", "nanosleep", 100, 1, &fast);
        test_spawn_workload("slow.service", "nanosleep", 100, 1, &slow);
        ck_assert_int_eq(test_ticks(fast, 1, 5 * USEC_PER_SEC), 1);
        ck_assert_int_eq(test_ticks(slow, 1, 5 * USEC_PER_SEC), 1);
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert(test_frozen("fast.service") && test_frozen("slow.service"));
        test_drain(fast);
        test_drain(slow);

        /* Each ticks in its windows: its timer elapsed while it was frozen. */
        ck_assert_msg(test_ticks(fast, 3, 10 * USEC_PER_SEC) == 3, "fast.service ran in fewer than 3 windows");
        ck_assert_msg(test_ticks(slow, 2, 10 * USEC_PER_SEC) == 2, "slow.service ran in fewer than 2 windows");
        uint64_t windows = statistic(bus, "maintenance_windows"), thaws = statistic(bus, "maintenance_thaws");
        ck_assert_uint_ge(windows, 3);
        /* Shared: more units thawed than windows opened, and no window of
         * the 2 s class alone (it would make windows reach thaws). */
        ck_assert_msg(thaws > windows, "%" PRIu64 " windows, %" PRIu64 " units thawed: none shared", windows, thaws);
        /* Each window ends by a look at its threads (the last may be to come). */
        ck_assert_uint_ge(statistic(bus, "idle_looks") + 1, windows);
        /* Between windows, frozen: each window ended at its first look. */
        ck_assert(wait_frozen("fast.service", true));
        ck_assert(wait_frozen("slow.service", true));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* A standby with config and unit's push rule (For=1s): a push's window,
 * long enough for two windows of a 1 s class, and no maintenance window. */
static void assert_no_maintenance(const char *config, const char *unit) {
        char rule[256];
        int acted;

        test_write_config(config);
        snprintf(rule, sizeof(rule), "[Match]\nEvent=push\nUnit=%s\n[Action]\nThaw=%s\nFor=1s\n", unit, unit);
        write_rule("60-push.rule", rule);
        test_spawn_workload(unit, "nanosleep", 100, 1, NULL);
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        char *error = push_within(bus, unit, 2 * USEC_PER_SEC, &acted);
        ck_assert_msg(!error, "%s", error);
        ck_assert(wait_statistic(bus, "refreezes", 1, 5 * USEC_PER_SEC));
        ck_assert_uint_eq(statistic(bus, "maintenance_windows"), 0);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}

/* Lateness=infinity and no [Lateness]: no maintenance window, no timer. */
START_TEST(test_maintenance_off) {
        if (test_need_root_cgroup2())
                assert_no_maintenance("[Maintenance]\nLateness=infinity\n", "tick.service");
}
END_TEST

/* A lateness so long that its due time is past what a usec_t holds (a
 * root's typo, "18446744073709551614us"): never due, no window and no
 * timer firing in a loop (which the push's window would have seen). */
START_TEST(test_maintenance_lateness_no_overflow) {
        if (test_need_root_cgroup2())
                assert_no_maintenance("[Maintenance]\nLateness=infinity\n[Lateness]\nfar.service="
                                      "18446744073709551614us\n",
                                      "far.service");
}
END_TEST

/* A reload brings [Lateness] into a standby that had no maintenance
 * windows: the unit runs in windows from then on. */
START_TEST(test_maintenance_reload) {
        int tick;

        if (!test_need_root_cgroup2())
                return;
        test_write_config("[Maintenance]\nLateness=infinity\n");
        test_spawn_workload("tick.service", "nanosleep", 100, 1, &tick);
        ck_assert_int_eq(test_ticks(tick, 1, 5 * USEC_PER_SEC), 1);
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert(test_frozen("tick.service"));
        test_drain(tick);

        test_write_config("[Maintenance]\nLateness=infinity\n[Lateness]\ntick.service=1s\n");
        ck_assert_int_eq(kill(listener_pid, SIGHUP), 0);
        ck_assert_msg(test_ticks(tick, 2, 10 * USEC_PER_SEC) == 2,
                      "tick.service ran in fewer than 2 windows after the reload");
        ck_assert_uint_ge(statistic(bus, "maintenance_windows"), 2);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* A unit started during standby (held) with a lateness no frozen unit had
 * when standby began: its class comes with it, and its windows. */
START_TEST(test_maintenance_class_of_held_unit) {
        int tick;

        if (!test_need_root_cgroup2())
                return;
        test_write_config("[Maintenance]\nLateness=infinity\n[Lateness]\nlate.service=1s\n");
        test_spawn_workload("other.service", "idle", 100, 1, NULL);
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        /* Answered after the journal change: the watch is up. */
        ck_assert_uint_eq(statistic(bus, "held"), 0);
        test_spawn_workload("late.service", "nanosleep", 100, 1, &tick);
        ck_assert_msg(wait_statistic(bus, "held", 1, 5 * USEC_PER_SEC), "late.service was not held");
        ck_assert_msg(test_ticks(tick, 2, 10 * USEC_PER_SEC) == 2, "late.service ran in fewer than 2 windows");
        ck_assert_uint_ge(statistic(bus, "maintenance_windows"), 1);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* A unit of more threads than a look reads (4096), all asleep: taken as
 * busy, its window lasting For=, so that no unit makes a look long. */
START_TEST(test_window_look_bounded) {
        int acted;

        if (!test_need_root_cgroup2())
                return;
        write_rule("60-many.rule",
                   "[Match]\nEvent=push\nUnit=many.service\n[Action]\nThaw=many.service\nFor=1s\nEndWhenIdle=yes\n");
        for (int i = 0; i < 5; i++) /* the workload's threads: 1,024 at most */
                test_spawn_workload("many.service", "idle", 100, 1000, NULL);
        _cleanup_close_ int cg = test_cgroup("many.service");
        _cleanup_free_ pid_t *tids = NULL;
        size_t n = 0;
        for (int i = 0; i < 100 && n < 5000; i++) { /* bounded: 10 s */
                tids = mfree(tids);
                ck_assert_int_ge(cgroup_list_pids(cg, true, &tids, &n), 0);
                if (n < 5000)
                        (void) poll(NULL, 0, 100);
        }
        ck_assert_uint_ge(n, 5000);
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        char *error = push_within(bus, "many.service", 2 * USEC_PER_SEC, &acted);
        ck_assert_msg(!error, "%s", error);
        ck_assert(wait_statistic(bus, "refreezes", 1, 10 * USEC_PER_SEC));
        ck_assert_uint_ge(statistic(bus, "idle_looks"), 1);
        ck_assert_uint_eq(statistic(bus, "idle_ends"), 0);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* Many windows, each closed by a refreeze (whose deadlock guard runs in a
 * thread of its own): the listener's locked memory stays what it was,
 * not a malloc arena per thread. */
START_TEST(test_refreezes_keep_memory) {
        int acted;

        if (!test_need_root_cgroup2())
                return;
        write_rule("60-tick.rule",
                   "[Match]\nEvent=push\nUnit=tick.service\n[Action]\nThaw=tick.service\nFor=1s\nEndWhenIdle=yes\n");
        test_spawn_workload("tick.service", "idle", 100, 1, NULL);
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        uint64_t before = 0;
        for (uint64_t i = 1; i <= 120; i++) {
                char *error = push_within(bus, "tick.service", 2 * USEC_PER_SEC, &acted);
                ck_assert_msg(!error, "push %" PRIu64 ": %s", i, error);
                ck_assert_msg(wait_statistic(bus, "refreezes", i, 10 * USEC_PER_SEC), "window %" PRIu64 " never ended",
                              i);
                if (i == 20)
                        before = test_rss_kib(listener_pid); /* past the first windows' growth */
        }
        uint64_t after = test_rss_kib(listener_pid);
        /* Under ASan freed memory waits in its quarantine (256 MB at most)
         * before it is reused: a bound above that still tells the leak (some
         * 20 MB a refreeze) apart. */
#if defined(__SANITIZE_ADDRESS__)
        const uint64_t slack_kib = 320 * 1024;
#else
        const uint64_t slack_kib = 16 * 1024;
#endif
        ck_assert_msg(after < before + slack_kib, "RSS %" PRIu64 " KiB after 20 refreezes, %" PRIu64 " after 120",
                      before, after);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* One window over two units, one spinning: the idle one is frozen again at
 * a look, the busy one keeps the window to For=. A unit at work (a user's,
 * say) keeps no other unit thawed. */
START_TEST(test_window_idle_unit_leaves_busy_one) {
        int acted;

        if (!test_need_root_cgroup2())
                return;
        write_rule("60-pair.rule", "[Match]\nEvent=push\nUnit=pair.service\n[Action]\nThaw=calm.service busy.service\n"
                                   "For=3s\nEndWhenIdle=yes\n");
        test_spawn_workload("calm.service", "idle", 100, 1, NULL);
        test_spawn_workload("busy.service", "busy", 100, 1, NULL);
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        usec_t t0 = now_usec(CLOCK_MONOTONIC);
        char *error = push_within(bus, "pair.service", 2 * USEC_PER_SEC, &acted);
        ck_assert_msg(!error, "%s", error);
        ck_assert(wait_statistic(bus, "idle_ends", 1, 5 * USEC_PER_SEC));
        ck_assert(wait_frozen("calm.service", true));
        usec_t calm = now_usec(CLOCK_MONOTONIC) - t0;
        ck_assert_msg(!test_frozen("busy.service") || now_usec(CLOCK_MONOTONIC) - t0 >= 2900 * USEC_PER_MSEC,
                      "the busy unit was frozen with the idle one");
        ck_assert(wait_frozen("busy.service", true));
        usec_t busy = now_usec(CLOCK_MONOTONIC) - t0;
        ck_assert_msg(calm < 2 * USEC_PER_SEC && busy >= 2900 * USEC_PER_MSEC,
                      "idle unit frozen again after %.2f s, busy one after %.2f s", (double) calm / USEC_PER_SEC,
                      (double) busy / USEC_PER_SEC);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* An event whose rule has no EndWhenIdle=, for a unit already thawed in a
 * window that looks at it: the unit keeps that window to its end, no look
 * ending it sooner (its rule asked for its whole window). The unit is made
 * to look idle (SIGSTOP: state T) after the second event. */
START_TEST(test_window_event_without_idle_keeps_window) {
        int acted;

        if (!test_need_root_cgroup2())
                return;
        write_rule("60-first.rule", "[Match]\nEvent=push\nUnit=first.service\n[Action]\nThaw=spin.service\nFor=4s\n"
                                    "EndWhenIdle=yes\n");
        write_rule("61-second.rule", "[Match]\nEvent=push\nUnit=second.service\n[Action]\nThaw=spin.service\nFor=4s\n");
        pid_t pid = test_spawn_workload("spin.service", "busy", 100, 1, NULL);
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        usec_t t0 = now_usec(CLOCK_MONOTONIC);
        char *error = push_within(bus, "first.service", 2 * USEC_PER_SEC, &acted);
        ck_assert_msg(!error, "%s", error);
        ck_assert(wait_statistic(bus, "idle_looks", 1, 5 * USEC_PER_SEC)); /* looked at: busy */
        error = push_within(bus, "second.service", 2 * USEC_PER_SEC, &acted);
        ck_assert_msg(!error, "%s", error);
        ck_assert_int_eq(kill(pid, SIGSTOP), 0);
        ck_assert(wait_statistic(bus, "refreezes", 1, 10 * USEC_PER_SEC));
        usec_t took = now_usec(CLOCK_MONOTONIC) - t0;
        ck_assert_int_eq(kill(pid, SIGCONT), 0);
        ck_assert_uint_eq(statistic(bus, "idle_ends"), 0);
        ck_assert_msg(took >= 3800 * USEC_PER_MSEC,
                      "frozen again %.2f s after the first event, before its window's end",
                      (double) took / USEC_PER_SEC);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

void listener_window_tests(const ListenerCases *c) {
        tcase_add_test(c->window, test_thaw_for_window_is_the_listeners);
        tcase_add_test(c->window, test_thaw_for_needs_the_listener);
        tcase_add_test(c->window, test_push_ex_reports_failed_thaw);
        tcase_add_test(c->window, test_push_ex_reports_gone);
        tcase_add_test(c->window, test_window_ends_when_server_idle);
        tcase_add_test(c->window, test_window_busy_lasts_for);
        tcase_add_test(c->window, test_window_look_bounded);
        tcase_add_test(c->window, test_window_idle_unit_leaves_busy_one);
        tcase_add_test(c->window, test_window_event_without_idle_keeps_window);
        tcase_add_test(c->window, test_refreezes_keep_memory);
        tcase_add_test(c->window, test_maintenance_windows_shared);
        tcase_add_test(c->window, test_maintenance_off);
        tcase_add_test(c->window, test_maintenance_lateness_no_overflow);
        tcase_add_test(c->window, test_maintenance_reload);
        tcase_add_test(c->window, test_maintenance_class_of_held_unit);
}
