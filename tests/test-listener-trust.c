/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Who may wake what: pushes judged by the caller's bus credentials and
 * groups, statistics access, many new callers at once, and the bus policy
 * that judges a call of a dbus-call rule. */
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "listener-harness.h"
#include "standby.h"
#include "test-util.h"

/* Who may borrow the listener: root or Group= as the bus saw the
 * caller's connection, nothing that a process sends without a connection. */

/* A child that connects to the bus as uid 65534 with the groups at_connect,
 * then (its saved uid 0 lets it) takes the groups at_call before it calls
 * method (Push, or GetStatistics); so that the caller's credentials at
 * connect and in /proc when the call is handled differ. Returns 0 when the
 * call was allowed, 1 when denied with AccessDenied, more on a failure. */
static int call_as_nobody(const char *method, const gid_t *at_connect, int n_connect, const gid_t *at_call,
                          int n_call) {
        int status;
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                sd_bus_error error = SD_BUS_ERROR_NULL;
                sd_bus *bus = NULL;
                int r;

                if (setgroups((size_t) n_connect, at_connect) < 0 || setresgid(65534, 65534, 65534) < 0 ||
                    setresuid(65534, 65534, 0) < 0)
                        _exit(2);
                if (sd_bus_new(&bus) < 0 || sd_bus_set_address(bus, bus_address) < 0 ||
                    sd_bus_set_bus_client(bus, true) < 0 || sd_bus_start(bus) < 0)
                        _exit(3);
                if (setresuid(-1, 0, -1) < 0 || setgroups((size_t) n_call, at_call) < 0 ||
                    setresuid(65534, 65534, 65534) < 0)
                        _exit(4);
                if (streq(method, "Push"))
                        r = sd_bus_call_method(bus, "org.standby.Listener1", "/org/standby/Listener1",
                                               "org.standby.Listener1", "Push", &error, NULL, "ss", "mail.service", "test");
                else
                        r = sd_bus_call_method(bus, "org.standby.Listener1", "/org/standby/Listener1",
                                               "org.standby.Listener1", method, &error, NULL, "");
                _exit(r >= 0 ? 0 : sd_bus_error_has_name(&error, SD_BUS_ERROR_ACCESS_DENIED) ? 1 : 5);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status), "the caller died (0x%x)", (unsigned) status);
        return WEXITSTATUS(status);
}

/* Group=users; standby entered with an idle mail.service; returns the gid. */
static gid_t standby_with_group(void) {
        struct group *g = getgrnam("users");
        ck_assert_msg(g, "this test needs the group \"users\"");
        test_write_config("Group=users\n");
        sd_bus_flush_close_unref(standby_with_idle_mail());
        return g->gr_gid;
}

/* In standby_with_group(): a push as nobody, in the group at_connect when
 * it connects and at_call when it calls, is refused (want 1: mail.service
 * stays frozen) or let in (want 0: it is thawed); what says which failed. */
static void push_as_nobody(gid_t at_connect, gid_t at_call, int want, const char *what) {
        int r = call_as_nobody("Push", &at_connect, 1, &at_call, 1);
        ck_assert_msg(r == want, "%s (%d)", what, r);
        ck_assert(test_frozen("mail.service") == (want == 1));
}

/* A non-root caller in Group= may push; one outside it may not. */
START_TEST(test_push_group_member) {
        if (!test_need_root_cgroup2())
                return;
        gid_t users = standby_with_group(), other = 65534;

        push_as_nobody(other, other, 1, "a caller outside the group was let in");
        push_as_nobody(users, users, 0, "a caller in the group was refused");
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
}
END_TEST

/* The verdict is the bus's credentials of the connection, not what /proc
 * says of the caller's PID when the call is handled (which may by then be
 * another process): a caller that was in the group when it connected and
 * left it since is let in; one that joined it after connecting is not. */
START_TEST(test_push_judged_by_bus_creds) {
        if (!test_need_root_cgroup2())
                return;
        gid_t users = standby_with_group(), other = 65534;

        push_as_nobody(other, users, 1, "a caller that joined the group after connecting was let in");
        push_as_nobody(users, other, 0, "a caller in the group when it connected was refused");
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
}
END_TEST

/* The statistics are for root and Group= only. */
START_TEST(test_statistics_access) {
        if (!test_need_root_cgroup2())
                return;
        gid_t users = standby_with_group(), other = 65534;

        ck_assert_int_eq(call_as_nobody("GetStatistics", &other, 1, &other, 1), 1);
        ck_assert_int_eq(call_as_nobody("GetStatistics", &users, 1, &users, 1), 0);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
}
END_TEST

static int count_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        int *counts = userdata; /* [allowed, denied, other] */
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        counts[!e ? 0 : sd_bus_error_has_name(e, SD_BUS_ERROR_ACCESS_DENIED) ? 1 : 2]++;
        return 0;
}

/* A child that connects as nobody in group and sends n pushes at once,
 * before any answer (each waits on the listener's question to the bus
 * about this new caller); returns how many were allowed (in the low byte)
 * and denied (times 16), or 255 on a failure. */
static int pipelined_pushes_as_nobody(gid_t group, int n) {
        int status;
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                int counts[3] = {};
                sd_bus *bus = NULL;

                if (setgroups(1, &group) < 0 || setresgid(65534, 65534, 65534) < 0 ||
                    setresuid(65534, 65534, 65534) < 0)
                        _exit(255);
                if (sd_bus_new(&bus) < 0 || sd_bus_set_address(bus, bus_address) < 0 ||
                    sd_bus_set_bus_client(bus, true) < 0 || sd_bus_start(bus) < 0)
                        _exit(255);
                for (int i = 0; i < n; i++)
                        if (sd_bus_call_method_async(bus, NULL, "org.standby.Listener1", "/org/standby/Listener1",
                                                     "org.standby.Listener1", "Push", count_reply, counts, "ss",
                                                     "other.service", "test") < 0)
                                _exit(255);
                for (usec_t deadline = now_usec(CLOCK_MONOTONIC) + 5 * USEC_PER_SEC;
                     counts[0] + counts[1] + counts[2] < n;) {
                        int t = deadline_poll_timeout(deadline);
                        if (t == 0 || sd_bus_process(bus, NULL) < 0)
                                _exit(255);
                        (void) sd_bus_wait(bus, (uint64_t) t * USEC_PER_MSEC);
                }
                _exit(counts[2] ? 255 : counts[0] + 16 * counts[1]);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status), "the caller died (0x%x)", (unsigned) status);
        return WEXITSTATUS(status);
}

static int on_marker(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        *(bool *) userdata = true;
        return 0;
}

static bool all_read(void *userdata) {
        return !has_unread(userdata);
}

/* The listener asks the bus for a new caller's credentials without waiting
 * for the answer: calls that come meanwhile, from that caller and others,
 * are each judged and answered once it comes, in whatever order; and while
 * the answer does not come (the bus stopped once the listener has read a
 * new caller's push), a netlink event thaws its unit. */
START_TEST(test_push_pipelined_new_callers) {
        int sync[2], status;
        bool marked = false;

        if (!test_need_root_cgroup2())
                return;
        write_rule("50-up.rule", "[Match]\nEvent=link\nInterface=sb0\nChange=up\n[Action]\nThaw=net.service\n");
        test_spawn_workload("net.service", "idle", 100, 1, NULL);
        make_netns();
        gid_t users = standby_with_group(), other = 65534;

        ck_assert_int_eq(pipelined_pushes_as_nobody(other, 8), 8 * 16);
        ck_assert_int_eq(pipelined_pushes_as_nobody(users, 8), 8);

        sd_bus *bus = client();
        ck_assert_int_ge(sd_bus_match_signal(bus, NULL, NULL, "/org/example", "org.example.Test", "Sent", on_marker,
                                             &marked), 0);
        ck_assert_int_eq(pipe2(sync, O_CLOEXEC), 0);
        ck_assert_int_eq(kill(listener_pid, SIGSTOP), 0);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                sd_bus *ub = NULL;
                char c;
                close(sync[1]);
                if (setgroups(1, &users) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                        _exit(2);
                if (sd_bus_new(&ub) < 0 || sd_bus_set_address(ub, bus_address) < 0 || sd_bus_set_bus_client(ub, true) < 0 ||
                    sd_bus_start(ub) < 0)
                        _exit(3);
                if (sd_bus_call_method_async(ub, NULL, "org.standby.Listener1", "/org/standby/Listener1",
                                             "org.standby.Listener1", "Push", NULL, NULL, "ss", "other.service", "test") < 0 ||
                    sd_bus_emit_signal(ub, "/org/example", "org.example.Test", "Sent", "") < 0 || sd_bus_flush(ub) < 0)
                        _exit(4);
                (void) !read(sync[0], &c, 1); /* connected until the test is done */
                _exit(0);
        }
        close(sync[0]);
        /* The marker is routed after the push: the push waits in the
         * listener's socket. */
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC;
        while (!marked && now_usec(CLOCK_MONOTONIC) < deadline)
                if (sd_bus_process(bus, NULL) == 0)
                        (void) sd_bus_wait(bus, 100 * USEC_PER_MSEC);
        ck_assert_msg(marked, "the caller's marker never came");
        ck_assert_int_eq(kill(dbus_pid, SIGSTOP), 0);
        ck_assert_int_eq(kill(listener_pid, SIGCONT), 0);
        /* The listener has read the push, and so asked the bus about its
         * caller, before the link goes up. */
        bool read_all = test_wait_for(all_read, &listener_pid, 10 * USEC_PER_SEC);
        if (read_all)
                run_ip("-n", listener_netns, "link", "set", "sb0", "up", NULL, NULL);
        bool thawed = read_all && wait_frozen("net.service", false);
        ck_assert_int_eq(kill(dbus_pid, SIGCONT), 0);
        close(sync[1]);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(read_all, "the listener did not read the push");
        ck_assert_msg(thawed, "a netlink event was not handled while a caller's credentials were asked of a stopped bus");
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the caller: 0x%x", (unsigned) status);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

static int note_error(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        *(char **) userdata = strdup(e ? e->name : "");
        return 0;
}

/* Waiting for the bus's word on new callers is shared fairly: a user whose
 * one connection sends 200 calls back to back, all in the listener's queue
 * before any answer (the listener stopped meanwhile), takes one place; a
 * root caller behind them is served, not answered LimitsExceeded. */
START_TEST(test_push_creds_one_place_per_sender) {
        bool marked = false;
        char *root_error = NULL;
        int status;

        if (!test_need_root_cgroup2())
                return;
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_ge(sd_bus_match_signal(bus, NULL, NULL, "/org/example", "org.example.Test", "Sent", on_marker,
                                             &marked), 0);
        ck_assert_int_eq(kill(listener_pid, SIGSTOP), 0);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                int counts[3] = {};
                sd_bus *ub = NULL;
                if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                        _exit(2);
                if (sd_bus_new(&ub) < 0 || sd_bus_set_address(ub, bus_address) < 0 || sd_bus_set_bus_client(ub, true) < 0 ||
                    sd_bus_start(ub) < 0)
                        _exit(3);
                for (int i = 0; i < 200; i++)
                        if (sd_bus_call_method_async(ub, NULL, "org.standby.Listener1", "/org/standby/Listener1",
                                                     "org.standby.Listener1", "Push", count_reply, counts, "ss",
                                                     "mail.service", "test") < 0)
                                _exit(4);
                /* Routed after the calls (one sender, in order): when the
                 * test sees it, they wait in the listener's queue. */
                if (sd_bus_emit_signal(ub, "/org/example", "org.example.Test", "Sent", "") < 0 || sd_bus_flush(ub) < 0)
                        _exit(5);
                for (usec_t deadline = now_usec(CLOCK_MONOTONIC) + 20 * USEC_PER_SEC; counts[0] + counts[1] + counts[2] < 200;) {
                        int t = deadline_poll_timeout(deadline);
                        if (t == 0 || sd_bus_process(ub, NULL) < 0)
                                _exit(6);
                        (void) sd_bus_wait(ub, (uint64_t) t * USEC_PER_MSEC);
                }
                _exit(counts[0] ? 7 : 0); /* nobody is never allowed */
        }
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC;
        while (!marked && now_usec(CLOCK_MONOTONIC) < deadline)
                if (sd_bus_process(bus, NULL) == 0)
                        (void) sd_bus_wait(bus, 100 * USEC_PER_MSEC);
        ck_assert_msg(marked, "the flood's marker never came");
        ck_assert_int_ge(sd_bus_call_method_async(bus, NULL, "org.standby.Listener1", "/org/standby/Listener1",
                                                  "org.standby.Listener1", "GetStatistics", note_error, &root_error, ""),
                         0);
        ck_assert_int_ge(sd_bus_flush(bus), 0);
        ck_assert_int_eq(kill(listener_pid, SIGCONT), 0);
        deadline = now_usec(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC;
        while (!root_error && now_usec(CLOCK_MONOTONIC) < deadline)
                if (sd_bus_process(bus, NULL) == 0)
                        (void) sd_bus_wait(bus, 100 * USEC_PER_MSEC);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the flooding caller: 0x%x", (unsigned) status);
        ck_assert_msg(root_error, "root's call was never answered");
        ck_assert_msg(streq(root_error, ""), "root's call behind another user's flood: %s", root_error);
        free(root_error);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* In a child as uid 65534: calls org.example.Mail's method; returns the
 * bus error's name (or "" when it was answered). */
static char *call_mail_as_nobody(const char *method) {
        int p[2], status;
        char name[256] = {};

        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                sd_bus_error error = SD_BUS_ERROR_NULL;
                sd_bus *bus = NULL;
                if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                        _exit(2);
                if (sd_bus_new(&bus) < 0 || sd_bus_set_address(bus, bus_address) < 0 ||
                    sd_bus_set_bus_client(bus, true) < 0 || sd_bus_start(bus) < 0)
                        _exit(3);
                if (sd_bus_call_method(bus, "org.example.Mail", "/org/standby/Bench", "org.standby.Bench", method, &error,
                                       NULL, "") < 0 && error.name)
                        (void) !write(p[1], error.name, strlen(error.name));
                _exit(0);
        }
        close(p[1]);
        ck_assert_int_ge(read(p[0], name, sizeof(name) - 1), 0);
        close(p[0]);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the caller failed (0x%x)", (unsigned) status);
        return strdup(name);
}

/* Event=dbus-call fires only on calls the bus delivered: a call its policy
 * refuses (the monitor sees it all the same) wakes nothing; the same method
 * called by one the policy lets through does. */
START_TEST(test_dbus_call_refused_by_policy) {
        if (!test_need_root_cgroup2())
                return;
        restart_dbus_with("<policy context=\"default\"><deny send_destination=\"org.example.Mail\" "
                          "send_interface=\"org.standby.Bench\" send_member=\"Secret\"/></policy>\n"
                          "<policy user=\"root\"><allow send_destination=\"org.example.Mail\" "
                          "send_interface=\"org.standby.Bench\" send_member=\"Secret\"/></policy>");
        write_rule("80-call.rule", "[Match]\nEvent=dbus-call\nBusName=org.example.Mail\n[Action]\nThaw=mail.service\n");
        spawn_mail_bus_service();
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert(test_frozen("mail.service"));

        _cleanup_free_ char *refused = call_mail_as_nobody("Secret");
        ck_assert_str_eq(refused, SD_BUS_ERROR_ACCESS_DENIED);
        ck_assert_msg(test_wait_for(saw_call_judged, bus, 5 * USEC_PER_SEC), "the listener never judged the call");
        ck_assert_msg(statistic(bus, "thaws") == 0, "a call the bus refused thawed the unit");
        ck_assert_uint_eq(statistic(bus, "undelivered"), 1);
        ck_assert(test_frozen("mail.service"));

        /* Root may: delivered, it thaws the service, which answers (it has
         * no such method). */
        sd_bus_error error = SD_BUS_ERROR_NULL;
        ck_assert_int_lt(sd_bus_call_method(bus, "org.example.Mail", "/org/standby/Bench", "org.standby.Bench", "Secret",
                                            &error, NULL, ""), 0);
        ck_assert_msg(sd_bus_error_has_name(&error, SD_BUS_ERROR_UNKNOWN_METHOD), "%s", strna(error.name));
        sd_bus_error_free(&error);
        ck_assert_uint_eq(statistic(bus, "thaws"), 1);
        ck_assert_uint_eq(statistic(bus, "undelivered"), 1);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

void listener_trust_tests(const ListenerCases *c) {
        tcase_add_test(c->trust, test_push_group_member);
        tcase_add_test(c->trust, test_push_judged_by_bus_creds);
        tcase_add_test(c->trust, test_statistics_access);
        tcase_add_test(c->trust, test_push_pipelined_new_callers);
        tcase_add_test(c->trust, test_push_creds_one_place_per_sender);
        tcase_add_test(c->trust, test_dbus_call_refused_by_policy);
}
