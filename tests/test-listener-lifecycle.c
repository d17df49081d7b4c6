/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The listener's life: ExitStandby rules, reloads, idleness without wakeups,
 * a restart that reconciles with the journal, late exits, and the exit
 * when its bus goes away. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "listener-harness.h"
#include "manager.h"
#include "test-util.h"

/* ExitStandby=yes ends standby altogether (the push is answered at once;
 * the exit runs apart from the listener's loop). */
START_TEST(test_exit_standby_rule) {
        char p[512];

        if (!test_need_root_cgroup2())
                return;
        sd_bus *bus = standby_with_idle_mail();
        ck_assert_ptr_null(push(bus, "lid.service", NULL));
        ck_assert(wait_journal_state("mail.service", -1, 10 * USEC_PER_SEC));
        ck_assert(!test_anything_frozen());
        snprintf(p, sizeof(p), "%s/" JOURNAL_FILE, T.state_dir);
        ck_assert_int_ne(access(p, F_OK), 0);
        ck_assert_uint_eq(statistic(bus, "exits"), 1);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* SIGHUP: a bad rule set is refused and the old one stays; a good one is taken. */
START_TEST(test_reload) {
        int acted;

        if (!test_need_root_cgroup2())
                return;
        test_spawn_workload("mail.service", "idle", 100, 1, NULL);
        test_spawn_workload("chat.service", "idle", 100, 1, NULL);
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);

        write_rule("30-chat.rule", "[Match]\nEvent=push\nUnit=chat.service\n[Action]\nThaw=chat.service\nFor=teatime\n");
        ck_assert_int_eq(kill(listener_pid, SIGHUP), 0);
        ck_assert(wait_notify("RELOADING=1"));
        ck_assert(wait_notify("READY=1"));
        ck_assert_ptr_null(push(bus, "chat.service", &acted));
        ck_assert_int_eq(acted, 0);
        ck_assert(test_frozen("chat.service"));

        write_rule("30-chat.rule", "[Match]\nEvent=push\nUnit=chat.service\n[Action]\nThaw=chat.service\n");
        ck_assert_int_eq(kill(listener_pid, SIGHUP), 0);
        ck_assert(wait_notify("READY=1"));
        ck_assert_ptr_null(push(bus, "chat.service", &acted));
        ck_assert_int_eq(acted, 1);
        ck_assert(!test_frozen("chat.service"));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* Idle in standby the listener does not run at all: no timer, no polling. */
START_TEST(test_idle_no_wakeups) {
        uint64_t before, after;
        int clock;

        if (!test_need_root_cgroup2())
                return;
        clock = test_start_clock(10);
        /* The same connection throughout: another one's going away would be
         * an event of its own. */
        sd_bus *bus = standby_with_idle_mail();
        /* The journal changes woke it; once it has dealt with them and
         * sleeps again, the count starts. */
        before = listener_settled_runs(bus);
        /* Signals on the bus that no rule matches, and 200 ticks of a
         * running 10 ms clock (a periodic timer of the listener's of 2 s
         * or less would fire in them): not one run. */
        for (int i = 0; i < 10; i++)
                ck_assert_int_ge(sd_bus_emit_signal(bus, "/org/example", "org.example.Push", "NewMail", ""), 0);
        ck_assert_int_ge(sd_bus_flush(bus), 0);
        test_clock_ticks(clock, 200);
        after = listener_runs_after();
        ck_assert_msg(after == before, "listener ran %llu times while idle", (unsigned long long) (after - before));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* kill -9 and restart during a window: the new listener closes it on time. */
START_TEST(test_restart_reconciles) {
        int acted;

        if (!test_need_root_cgroup2())
                return;
        sd_bus *bus = standby_with_idle_mail();
        ck_assert_ptr_null(push(bus, "mail.service", &acted));
        ck_assert(!test_frozen("mail.service"));
        sd_bus_flush_close_unref(bus);

        stop_listener(SIGKILL);
        start_listener();
        ck_assert(wait_frozen("mail.service", true));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
}
END_TEST

/* A rule names a unit, not a place: alice's and bob's mail.service (the same
 * user unit of two users) are both thawed by one push; bob's other unit, and
 * anything named mail.service that standby did not freeze, are not touched. */
START_TEST(test_same_unit_of_two_users) {
        int acted;

        if (!test_need_root_cgroup2())
                return;
        test_spawn_workload("alice.slice/mail.service", "idle", 100, 1, NULL);
        test_spawn_workload("bob.slice/mail.service", "idle", 100, 1, NULL);
        test_spawn_workload("bob.slice/other.service", "idle", 100, 1, NULL);
        test_spawn_workload("elsewhere.slice/mail.service", "idle", 100, 1, NULL);
        test_write_config("Exempt=elsewhere.slice\n");
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert(!test_frozen("elsewhere.slice/mail.service"));

        ck_assert_ptr_null(push(bus, "mail.service", &acted));
        ck_assert(acted);
        ck_assert(wait_frozen("alice.slice/mail.service", false));
        ck_assert(wait_frozen("bob.slice/mail.service", false));
        ck_assert(test_frozen("bob.slice/other.service"));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* A listener killed between a thaw and its record leaves a unit running that
 * the journal calls frozen; the next listener freezes it again. (Simulated
 * exactly: the listener is killed, the unit's cgroup.freeze written 0.) */
START_TEST(test_restart_enforces_journal) {
        _cleanup_free_ char *out = NULL;

        if (!test_need_root_cgroup2())
                return;
        sd_bus *bus = standby_with_idle_mail();
        sd_bus_flush_close_unref(bus);
        ck_assert(wait_frozen("mail.service", true));
        stop_listener(SIGKILL);
        _cleanup_close_ int cg = test_cgroup("mail.service");
        ck_assert_int_eq(cgroup_set_freeze(cg, false), 0);
        ck_assert(wait_frozen("mail.service", false));

        start_listener();
        ck_assert(wait_frozen("mail.service", true));
        ck_assert_int_eq(test_manager_env(NULL, &out, NULL, "status", "--json", NULL), EXIT_OK);
        ck_assert_ptr_nonnull(strstr(out, "\"state\":\"frozen\""));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
}
END_TEST

/* Events during enter are kept per rule: however many events another rule
 * matches meanwhile (broadcast signals any user may send, say), a late
 * ExitStandby= is not pushed out, and standby ends once it is entered. */
START_TEST(test_late_exit_kept_per_rule) {
        sd_bus *bus;
        pid_t enter;

        if (!enter_held_open(&bus, &enter))
                return;
        /* The lid first, then more events of another rule than any ring
         * kept (it held 32). */
        ck_assert_ptr_null(push(bus, "lid.service", NULL));
        for (int i = 0; i < 100; i++)
                ck_assert_ptr_null(push(bus, "mail.service", NULL));
        enter_done(enter);

        /* Both rules are carried out once: mail thawed, then standby left. */
        ck_assert(wait_journal_state("mail.service", -1, 10 * USEC_PER_SEC));
        ck_assert(!test_anything_frozen());
        ck_assert_uint_eq(statistic(bus, "replayed"), 2);
        ck_assert_uint_eq(statistic(bus, "exits"), 1);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* When the bus goes away the listener does not stay up deaf to every D-Bus
 * event: it exits with a failure, for the service manager to start it again
 * (Restart=on-failure), and the new one reconnects. With call_rule the
 * dbus-call monitor may be the first to tell, else the connection with its
 * object. */
static void check_bus_loss_exits(bool call_rule) {
        if (call_rule)
                write_rule("80-call.rule", "[Match]\nEvent=dbus-call\nBusName=org.example.Mail\n[Action]\n"
                                           "Thaw=mail.service\n");
        start_listener();
        test_stop_pid(dbus_pid);
        dbus_pid = 0;
        int status = wait_listener_exit(5 * USEC_PER_SEC);
        ck_assert_msg(status != -1, "the listener still runs 5 s after the bus went away");
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_FAILURE_GENERIC,
                      "the listener ended with wait status 0x%x, not exit status %d", (unsigned) status,
                      EXIT_FAILURE_GENERIC);
}

START_TEST(test_bus_loss_exits) {
        if (test_need_root_cgroup2())
                check_bus_loss_exits(false);
}
END_TEST

START_TEST(test_bus_loss_exits_with_monitor) {
        if (test_need_root_cgroup2())
                check_bus_loss_exits(true);
}
END_TEST

void listener_lifecycle_tests(const ListenerCases *c) {
        tcase_add_test(c->dbus, test_exit_standby_rule);
        tcase_add_test(c->dbus, test_reload);
        tcase_add_test(c->dbus, test_idle_no_wakeups);
        tcase_add_test(c->dbus, test_restart_reconciles);
        tcase_add_test(c->dbus, test_same_unit_of_two_users);
        tcase_add_test(c->dbus, test_restart_enforces_journal);
        tcase_add_test(c->dbus, test_late_exit_kept_per_rule);
        tcase_add_test(c->dbus, test_bus_loss_exits);
        tcase_add_test(c->dbus, test_bus_loss_exits_with_monitor);
}
