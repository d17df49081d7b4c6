/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Rules of Event=dbus-signal and Event=dbus-call: a signal wakes its rule's
 * units (not a directed one, not from a forged sender); a call to a frozen
 * service thaws its owner, also one sent before standby. */
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "listener-harness.h"
#include "standby.h"
#include "test-util.h"

/* Event=dbus-signal: a signal that matches the rule's Match= thaws its units;
 * another signal, which the listener does receive (another rule's match
 * takes it), thaws only that rule's units. */
START_TEST(test_dbus_signal_rule) {
        if (!test_need_root_cgroup2())
                return;
        write_rule("40-sig.rule", "[Match]\nEvent=dbus-signal\nMatch=type='signal',interface='org.example.Push',"
                                  "member='NewMail'\n[Action]\nThaw=mail.service\n");
        write_rule("41-sig.rule", "[Match]\nEvent=dbus-signal\nMatch=type='signal',interface='org.example.Push',"
                                  "member='Other'\n[Action]\nThaw=other.service\n");
        test_spawn_workload("other.service", "idle", 100, 1, NULL);
        sd_bus *bus = standby_with_idle_mail();

        ck_assert_int_ge(sd_bus_emit_signal(bus, "/org/example", "org.example.Push", "Other", ""), 0);
        ck_assert_int_ge(sd_bus_flush(bus), 0);
        /* The bus delivers the signal before this call (one sender, in
         * order): it was an event, its own rule thawed other.service, and
         * mail.service's rule did not take it. */
        ck_assert_uint_eq(statistic(bus, "events"), 1);
        ck_assert_uint_eq(statistic(bus, "matched"), 1);
        ck_assert_uint_eq(statistic(bus, "thaws"), 1);
        ck_assert(!test_frozen("other.service"));
        ck_assert(test_frozen("mail.service"));

        ck_assert_int_ge(sd_bus_emit_signal(bus, "/org/example", "org.example.Push", "NewMail", ""), 0);
        ck_assert_int_ge(sd_bus_flush(bus), 0);
        ck_assert(wait_frozen("mail.service", false));
        ck_assert_uint_eq(statistic(bus, "events"), 2);
        ck_assert_uint_eq(statistic(bus, "matched"), 2);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* A signal sent to the listener's connection alone reaches it whatever its
 * match rules say: another user's directed signal does not fire a rule
 * whose sender= names a well-known name, nor any other. */
START_TEST(test_dbus_signal_directed_ignored) {
        int status;

        if (!test_need_root_cgroup2())
                return;
        write_rule("40-sig.rule", "[Match]\nEvent=dbus-signal\nMatch=type='signal',sender='org.example.Mail',"
                                  "interface='org.example.Push',member='NewMail'\n[Action]\nThaw=mail.service\n");
        sd_bus *bus = standby_with_idle_mail();
        const char *owner = NULL;
        sd_bus_creds *creds = NULL;
        ck_assert_int_ge(sd_bus_get_name_creds(bus, "org.standby.Listener1", SD_BUS_CREDS_UNIQUE_NAME, &creds), 0);
        ck_assert_int_ge(sd_bus_creds_get_unique_name(creds, &owner), 0);
        char *dest = strdup(owner);
        sd_bus_creds_unref(creds);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                        _exit(2);
                sd_bus *ub = NULL;
                sd_bus_message *m = NULL;
                if (sd_bus_new(&ub) < 0 || sd_bus_set_address(ub, bus_address) < 0 || sd_bus_set_bus_client(ub, true) < 0 ||
                    sd_bus_start(ub) < 0)
                        _exit(3);
                if (sd_bus_message_new_signal(ub, &m, "/org/example", "org.example.Push", "NewMail") < 0 ||
                    sd_bus_message_set_destination(m, dest) < 0 || sd_bus_send(ub, m, NULL) < 0)
                        _exit(4);
                /* Answered after the signal (one sender, in order): the
                 * listener has handled it. */
                if (sd_bus_call_method(ub, "org.standby.Listener1", "/org/standby/Listener1", "org.standby.Listener1",
                                       "ListInhibitors", NULL, NULL, "") < 0)
                        _exit(5);
                _exit(0);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "forger: 0x%x", status);
        free(dest);
        ck_assert_msg(statistic(bus, "matched") == 0, "uid 65534's directed signal fired a sender= rule");
        ck_assert(test_frozen("mail.service"));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* sender= naming a well-known name: a broadcast that another rule's match
 * brings to the listener fires only the rules whose sender= its sender
 * owns. */
START_TEST(test_dbus_signal_sender_owner) {
        if (!test_need_root_cgroup2())
                return;
        write_rule("40-sig.rule", "[Match]\nEvent=dbus-signal\nMatch=type='signal',sender='org.example.Mail',"
                                  "interface='org.example.Push',member='NewMail'\n[Action]\nThaw=mail.service\n");
        write_rule("41-sig.rule", "[Match]\nEvent=dbus-signal\nMatch=type='signal',interface='org.example.Push'\n"
                                  "[Action]\nThaw=other.service\n");
        test_spawn_workload("other.service", "idle", 100, 1, NULL);
        sd_bus *bus = standby_with_idle_mail(), *mail = client();

        /* From a connection that does not own org.example.Mail. */
        ck_assert_int_ge(sd_bus_emit_signal(bus, "/org/example", "org.example.Push", "NewMail", ""), 0);
        ck_assert_int_ge(sd_bus_flush(bus), 0);
        ck_assert_uint_eq(statistic(bus, "events"), 1);
        ck_assert_msg(statistic(bus, "matched") == 1, "a signal not from org.example.Mail fired its sender= rule");
        ck_assert(!test_frozen("other.service"));
        ck_assert(test_frozen("mail.service"));

        /* From its owner: the bus tells the listener of the new owner
         * before it passes on what the owner sends next. */
        ck_assert_int_ge(sd_bus_request_name(mail, "org.example.Mail", 0), 0);
        ck_assert_int_ge(sd_bus_emit_signal(mail, "/org/example", "org.example.Push", "NewMail", ""), 0);
        ck_assert_int_ge(sd_bus_flush(mail), 0);
        ck_assert(wait_frozen("mail.service", false));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(mail);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* Event=dbus-call: a call to a frozen service's bus name thaws it in time for
 * it to answer; calls to other names do not. */
START_TEST(test_dbus_call_thaws_owner) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        const char *answer;

        if (!test_need_root_cgroup2())
                return;
        write_rule("80-call.rule", "[Match]\nEvent=dbus-call\nBusName=org.example.Mail\n[Action]\n"
                                   "Thaw=mail.service\nFor=1s\n");
        spawn_mail_bus_service();

        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert(test_frozen("mail.service"));

        /* The caller's timeout (5 s) is far above a thaw: the answer comes. */
        ck_assert_int_ge(sd_bus_call_method(bus, "org.example.Mail", "/org/standby/Bench", "org.standby.Bench", "Ping",
                                            &error, &reply, ""), 0);
        ck_assert_int_ge(sd_bus_message_read(reply, "s", &answer), 0);
        ck_assert_str_eq(answer, "pong");
        ck_assert_uint_eq(statistic(bus, "thaws"), 1);
        sd_bus_message_unref(reply);
        reply = NULL;
        ck_assert(wait_frozen("mail.service", true));

        /* A call larger than the listener's read buffer (its header comes
         * first, the body is skipped as it arrives): Ping takes no argument,
         * so the woken service answers with an error, but it answers. */
        _cleanup_free_ char *big = malloc(200 * 1024 + 1);
        ck_assert_ptr_nonnull(big);
        memset(big, 'x', 200 * 1024);
        big[200 * 1024] = 0;
        ck_assert_int_lt(sd_bus_call_method(bus, "org.example.Mail", "/org/standby/Bench", "org.standby.Bench", "Ping",
                                            &error, NULL, "s", big), 0);
        ck_assert_msg(sd_bus_error_has_name(&error, SD_BUS_ERROR_INVALID_ARGS), "%s", strna(error.name));
        sd_bus_error_free(&error);
        ck_assert_uint_eq(statistic(bus, "thaws"), 2);
        ck_assert(wait_frozen("mail.service", true));

        /* The monitor kept its place in the stream: the next call still
         * thaws, and after its write the listener stepped aside for the
         * service. (The first call may have come before the listener read
         * the enter's journal, and was found unread when it did: a thaw
         * outside any event's dispatch, which yields nothing.) */
        uint64_t yields = statistic(bus, "yields");
        ck_assert_int_ge(sd_bus_call_method(bus, "org.example.Mail", "/org/standby/Bench", "org.standby.Bench", "Ping",
                                            &error, &reply, ""), 0);
        ck_assert_uint_eq(statistic(bus, "thaws"), 3);
        ck_assert_uint_eq(statistic(bus, "yields"), yields + 1);
        sd_bus_message_unref(reply);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

static int on_pong(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        *(int *) userdata = sd_bus_message_is_method_error(m, NULL) ? -1 : 1;
        return 0;
}

/* An Event=dbus-call rule for org.example.Mail that thaws mail.service for
 * window, the service (its process in *ret_service), the listener and a
 * client of the bus: returns the client. */
static sd_bus *start_mail_call_rule(const char *window, pid_t *ret_service) {
        char rule[256];

        snprintf(rule, sizeof(rule), "[Match]\nEvent=dbus-call\nBusName=org.example.Mail\n[Action]\n"
                                     "Thaw=mail.service\nFor=%s\n", window);
        write_rule("80-call.rule", rule);
        *ret_service = spawn_mail_bus_service();
        start_listener();
        return client();
}

/* A D-Bus call that reached the service before standby began, and that it
 * had not read when it froze (it was stopped, SIGSTOP), is answered: once
 * standby is entered the listener finds the call waiting in the frozen
 * service's socket and thaws it. */
START_TEST(test_dbus_call_unread_at_enter) {
        sd_bus_slot *slot = NULL;
        int answered = 0;

        if (!test_need_root_cgroup2())
                return;
        pid_t service;
        sd_bus *bus = start_mail_call_rule("1s", &service);

        ck_assert_int_eq(kill(service, SIGSTOP), 0);
        ck_assert(test_wait_for(is_stopped, &service, 5 * USEC_PER_SEC));
        ck_assert_int_ge(sd_bus_call_method_async(bus, &slot, "org.example.Mail", "/org/standby/Bench", "org.standby.Bench",
                                                  "Ping", on_pong, &answered, ""), 0);
        ck_assert_int_ge(sd_bus_flush(bus), 0);
        ck_assert_msg(test_wait_for(has_unread, &service, 5 * USEC_PER_SEC), "the call never reached the service");

        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert_int_eq(kill(service, SIGCONT), 0); /* it stays frozen: the signal waits */

        /* answered is set by on_pong(), from within sd_bus_process(). */
        ck_assert_msg(test_bus_wait_answered(bus, &answered, 5 * USEC_PER_SEC),
                      "the call was not answered during standby");
        ck_assert_int_eq(answered, 1);
        ck_assert_uint_ge(statistic(bus, "replayed"), 1);
        sd_bus_slot_unref(slot);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* standby-manager freezes a service that an event had thawed for a window,
 * and a call reaches it, both while the listener is stopped: the call is
 * judged by the journal as it is now, delivered to a frozen unit, and
 * thaws it. Judged by the listener's view before the change (the service
 * running, its window open), it would be left unread in a frozen service. */
START_TEST(test_dbus_call_with_its_freeze_in_one_wakeup) {
        sd_bus_slot *slot = NULL;
        int answered = 0;

        if (!test_need_root_cgroup2())
                return;
        pid_t service;
        sd_bus *bus = start_mail_call_rule("60s", &service);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert_int_ge(sd_bus_call_method(bus, "org.example.Mail", "/org/standby/Bench", "org.standby.Bench", "Ping",
                                            NULL, NULL, ""), 0);
        ck_assert(wait_statistic(bus, "records", 1, 5 * USEC_PER_SEC)); /* thawed, in the journal too */
        ck_assert(!test_frozen("mail.service"));

        ck_assert_int_eq(kill(listener_pid, SIGSTOP), 0);
        ck_assert(test_wait_for(is_stopped, &listener_pid, 5 * USEC_PER_SEC));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "freeze", test_cgpath("mail.service"), NULL), EXIT_OK);
        ck_assert(test_frozen("mail.service"));
        ck_assert_int_ge(sd_bus_call_method_async(bus, &slot, "org.example.Mail", "/org/standby/Bench", "org.standby.Bench",
                                                  "Ping", on_pong, &answered, ""), 0);
        ck_assert_int_ge(sd_bus_flush(bus), 0);
        ck_assert_msg(test_wait_for(has_unread, &service, 5 * USEC_PER_SEC), "the call never reached the service");
        /* The bus handles one message whole, its monitors' copies too,
         * before the next: once this is answered, the listener's copy waits. */
        ck_assert_int_ge(sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                            "GetId", NULL, NULL, ""), 0);
        ck_assert_int_eq(kill(listener_pid, SIGCONT), 0);

        ck_assert_msg(test_bus_wait_answered(bus, &answered, 5 * USEC_PER_SEC),
                      "the call to the frozen service was not answered");
        ck_assert_int_eq(answered, 1);
        ck_assert_uint_eq(statistic(bus, "thaws"), 2);
        sd_bus_slot_unref(slot);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

static bool mail_unowned(void *userdata) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        int r = sd_bus_call_method(userdata, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                   "GetNameOwner", &error, NULL, "s", "org.example.Mail");
        bool unowned = r < 0 && sd_bus_error_has_name(&error, "org.freedesktop.DBus.Error.NameHasNoOwner");
        sd_bus_error_free(&error);
        return unowned;
}

/* The listener holds a duplicate of a frozen owner's bus connection; the
 * owner killed (SIGKILL reaches a frozen process), the duplicate goes with
 * it, and the bus sees the connection close and frees the name at once,
 * with nothing else changing: a held one would keep the name owned, and
 * a restarted service could not take it. */
START_TEST(test_dbus_call_owner_killed_frees_its_name) {
        if (!test_need_root_cgroup2())
                return;
        pid_t service;
        sd_bus *bus = start_mail_call_rule("1s", &service);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        (void) statistic(bus, "events"); /* the journal change is taken before a call: the connection held */
        ck_assert(test_frozen("mail.service"));
        ck_assert(!mail_unowned(bus));
        server_pid = service;
        ck_assert_int_eq(count_held(), 1); /* its bus connection, once */

        ck_assert_int_eq(kill(service, SIGKILL), 0);
        ck_assert_msg(test_wait_for(mail_unowned, bus, 5 * USEC_PER_SEC), "the killed owner's name stayed owned");
        server_pid = 0;
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

void listener_dbus_rules_tests(const ListenerCases *c) {
        tcase_add_test(c->dbus, test_dbus_signal_rule);
        tcase_add_test(c->dbus, test_dbus_signal_directed_ignored);
        tcase_add_test(c->dbus, test_dbus_signal_sender_owner);
        tcase_add_test(c->dbus, test_dbus_call_thaws_owner);
        tcase_add_test(c->dbus, test_dbus_call_with_its_freeze_in_one_wakeup);
        tcase_add_test(c->dbus, test_dbus_call_owner_killed_frees_its_name);
        tcase_add_test(c->dbus, test_dbus_call_unread_at_enter);
}
