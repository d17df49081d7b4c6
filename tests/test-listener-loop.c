/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The listener's loop never waits: not for a unit stuck at its window's
 * end, a locked journal, a hung bus or monitor at reload, nor a user's
 * systemd socket that refuses or stalls its connect. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "listener-harness.h"
#include "manager.h"
#include "test-util.h"

/* A reload asks the bus for each dbus-signal rule's match without waiting:
 * with the bus stopped (as hung), the listener, reloading, still thaws on
 * a netlink event. */
START_TEST(test_loop_reload_with_hung_bus) {
        if (!test_need_root_cgroup2())
                return;
        write_rule("50-up.rule", "[Match]\nEvent=link\nInterface=sb0\nChange=up\n[Action]\nThaw=net.service\n");
        test_spawn_workload("net.service", "idle", 100, 1, NULL);
        make_netns();
        start_listener();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        write_rule("40-sig.rule", "[Match]\nEvent=dbus-signal\nMatch=type='signal',interface='org.example.Push',"
                                  "member='NewMail'\n[Action]\nThaw=mail.service\n");
        ck_assert_int_eq(kill(dbus_pid, SIGSTOP), 0);
        ck_assert_int_eq(kill(listener_pid, SIGHUP), 0);
        bool reloading = wait_notify("RELOADING=1");
        if (reloading)
                run_ip("-n", listener_netns, "link", "set", "sb0", "up", NULL, NULL);
        bool thawed = reloading && wait_frozen("net.service", false);
        ck_assert_int_eq(kill(dbus_pid, SIGCONT), 0);
        ck_assert_msg(reloading, "the listener did not begin the reload");
        ck_assert_msg(thawed, "a netlink event was not handled while a reload waited for a stopped bus");
        ck_assert_msg(wait_notify("READY=1"), "the reload never finished");
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
}
END_TEST

/* A reload sets the dbus-call monitor up again without waiting: with the
 * bus stopped (as hung), a netlink event still thaws while that setup is
 * pending, a second reload replaces it, and once the bus runs again the
 * monitor the last reload set up catches calls. */
START_TEST(test_loop_reload_with_hung_monitor) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;

        if (!test_need_root_cgroup2())
                return;
        write_rule("50-up.rule", "[Match]\nEvent=link\nInterface=sb0\nChange=up\n[Action]\nThaw=net.service\n");
        write_rule("80-call.rule", "[Match]\nEvent=dbus-call\nBusName=org.example.Mail\n[Action]\n"
                                   "Thaw=mail.service\nFor=1s\n");
        test_spawn_workload("net.service", "idle", 100, 1, NULL);
        spawn_mail_bus_service();
        make_netns();
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert_int_eq(kill(dbus_pid, SIGSTOP), 0);
        ck_assert_int_eq(kill(listener_pid, SIGHUP), 0);
        bool reloading = wait_notify("RELOADING=1");
        if (reloading)
                run_ip("-n", listener_netns, "link", "set", "sb0", "up", NULL, NULL);
        bool thawed = reloading && wait_frozen("net.service", false);
        bool again = thawed && kill(listener_pid, SIGHUP) == 0 && wait_notify("RELOADING=1");
        ck_assert_int_eq(kill(dbus_pid, SIGCONT), 0);
        ck_assert_msg(reloading, "the listener did not begin the reload");
        ck_assert_msg(thawed, "a netlink event was not handled while the call monitor's setup waited for a stopped bus");
        ck_assert_msg(again, "the listener did not begin a second reload");
        ck_assert_msg(wait_notify("READY=1"), "the reload never finished");

        ck_assert(test_frozen("mail.service"));
        ck_assert_int_ge(sd_bus_call_method(bus, "org.example.Mail", "/org/standby/Bench", "org.standby.Bench", "Ping",
                                            &error, &reply, ""), 0);
        sd_bus_message_unref(reply);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* The monitor's setup is bounded: against a bus that stays stopped a reload
 * ends (READY=1) when its timer fails the setup, the listener stays up, and
 * the next reload, with the bus back, sets the monitor up again. */
START_TEST(test_loop_reload_monitor_timeout) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;

        if (!test_need_root_cgroup2())
                return;
        ck_assert_int_eq(setenv("STANDBY_LISTENER_CALL_MONITOR_TIMEOUT_USEC", "1000000", 1), 0);
        write_rule("80-call.rule", "[Match]\nEvent=dbus-call\nBusName=org.example.Mail\n[Action]\n"
                                   "Thaw=mail.service\nFor=1s\n");
        spawn_mail_bus_service();
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert_int_eq(kill(dbus_pid, SIGSTOP), 0);
        ck_assert_int_eq(kill(listener_pid, SIGHUP), 0);
        bool reloading = wait_notify("RELOADING=1");
        bool ended = reloading && wait_notify("READY=1");
        ck_assert_int_eq(kill(dbus_pid, SIGCONT), 0);
        ck_assert_msg(reloading, "the listener did not begin the reload");
        ck_assert_msg(ended, "the monitor's setup against a stopped bus did not end within its bound");
        ck_assert_int_eq(wait_listener_exit(0), -1);

        ck_assert_int_eq(kill(listener_pid, SIGHUP), 0);
        ck_assert_msg(wait_notify("READY=1"), "the second reload never finished");
        ck_assert(test_frozen("mail.service"));
        ck_assert_int_ge(sd_bus_call_method(bus, "org.example.Mail", "/org/standby/Bench", "org.standby.Bench", "Ping",
                                            &error, &reply, ""), 0);
        sd_bus_message_unref(reply);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* A unit stuck in state D (a FUSE request never answered) at its window's
 * end: its refreeze cannot finish before FreezeTimeout, and meanwhile a
 * push for another unit is answered, while the journal still says the
 * stuck one is freezing; then the timeout's policy thaws it again and
 * records it skipped, naming the task in the way. */
START_TEST(test_loop_stuck_refreeze_answers_push) {
        _cleanup_free_ char *json = NULL;
        int acted;

        if (!test_need_root_cgroup2() || !test_have_fuse())
                return;
        test_write_config("FreezeTimeout=4s\n");
        write_rule("60-stuck.rule", "[Match]\nEvent=push\nUnit=stuck.service\n[Action]\nThaw=stuck.service\nFor=2s\n");
        test_spawn_workload("stuck.service", "idle", 100, 1, NULL);
        sd_bus *bus = standby_with_idle_mail();
        ck_assert_int_eq(journal_state_of("stuck.service"), UNIT_FROZEN);
        ck_assert_ptr_null(push(bus, "stuck.service", &acted));
        ck_assert_int_eq(acted, 1);
        /* In its window, a task of the unit gets stuck in the kernel. */
        pid_t stuck = test_start_stuck_client("stuck.service");
        ck_assert_int_gt(stuck, 0);

        /* The window ends: the journal says freezing, and stays so until
         * FreezeTimeout (4 s) has passed. */
        ck_assert(wait_journal_state("stuck.service", UNIT_FREEZING, 10 * USEC_PER_SEC));
        char *error = push_within(bus, "mail.service", 2 * USEC_PER_SEC, &acted);
        ck_assert_msg(!error, "a push was not answered while a refreeze was stuck: %s", error);
        ck_assert_int_eq(acted, 1);
        ck_assert_int_eq(journal_state_of("stuck.service"), UNIT_FREEZING);
        ck_assert(wait_frozen("mail.service", false));

        /* OnFreezeTimeout=skip: thawed again, recorded with who is in the way. */
        ck_assert(wait_journal_state("stuck.service", UNIT_SKIPPED, 15 * USEC_PER_SEC));
        ck_assert(wait_frozen("stuck.service", false));
        ck_assert_int_eq(test_manager_env(NULL, &json, NULL, "status", "--json", NULL), EXIT_OK);
        ck_assert_msg(strstr(json, "did not freeze within 4s: pid"), "%s", json);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
        sd_bus_flush_close_unref(bus);
}
END_TEST

static bool journal_busy_twice(void *userdata) {
        uint64_t v = statistic(userdata, "journal_busy");
        return v != UINT64_MAX && v >= 2;
}

/* Another process holds the journal's lock (as a manager verb waiting out
 * FreezeTimeout on a stuck unit does): a thaw's record and a window's end
 * are put off, and a push is answered meanwhile; once the lock is let go,
 * the window's units freeze again and the records are written. */
START_TEST(test_loop_journal_locked_answers_push) {
        char path[512];
        int acted;

        if (!test_need_root_cgroup2())
                return;
        write_rule("50-news.rule", "[Match]\nEvent=push\nUnit=news.service\n[Action]\nThaw=news.service\n");
        test_spawn_workload("news.service", "idle", 100, 1, NULL);
        sd_bus *bus = standby_with_idle_mail();
        snprintf(path, sizeof(path), "%s/" JOURNAL_LOCK_FILE, T.state_dir);
        int lock = open(path, O_RDWR | O_CLOEXEC);
        ck_assert_int_ge(lock, 0);
        ck_assert_int_eq(flock(lock, LOCK_EX), 0);

        /* mail.service's window (1 s) ends while the lock is held: its
         * record was put off 2 ms after the thaw, its refreeze at its end. */
        ck_assert_ptr_null(push(bus, "mail.service", &acted));
        ck_assert_int_eq(acted, 1);
        ck_assert(test_wait_for(journal_busy_twice, bus, 10 * USEC_PER_SEC));
        char *error = push_within(bus, "news.service", 2 * USEC_PER_SEC, &acted);
        ck_assert_msg(!error, "a push was not answered while the journal was locked: %s", error);
        ck_assert_int_eq(acted, 1);
        ck_assert(!test_frozen("news.service"));
        ck_assert_int_eq(journal_state_of("news.service"), UNIT_FROZEN);

        close(lock);
        ck_assert(wait_frozen("mail.service", true));
        ck_assert(wait_journal_state("news.service", UNIT_THAWED, 10 * USEC_PER_SEC));
        ck_assert(wait_journal_state("mail.service", UNIT_FROZEN, 10 * USEC_PER_SEC));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* A test case on the listener's usual fixtures (a private bus, a test
 * cgroup tree; swept after the case), added to s. */
/* A user's runtime directory of the test's making, /run/user/PS_UID, and
 * /run/user itself if it was not there: removed at the test's end, also
 * after a failed assertion (the process exits). */
#define PS_UID 4243
static bool ps_made_run_user;

static void ps_remove_runtime_dir(void) {
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf /run/user/%d", PS_UID);
        (void) !system(cmd);
        if (ps_made_run_user)
                (void) rmdir("/run/user");
}

/* A unit recorded as frozen by the user manager of PS_UID, whose socket
 * (/run/user/UID/systemd/private) is, with link, a link to a socket of the
 * test's own (as one to /run/systemd/private would be), else a socket of
 * the uid's whose queue is full (a connect to it waits): the listener's
 * connect (a child, common/private-socket.c) refuses the link, or does not
 * finish; either way the push is answered, the thaw is done through
 * cgroup.freeze, and nothing reaches the link's target, nor from exit; a
 * refused socket is not tried again at once. */
static void user_socket_case(bool link) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char rt[32], sd[48], sock[64], address[96];
        int acted, filler = -EBADF;

        if (!test_need_root_cgroup2())
                return;
        snprintf(rt, sizeof(rt), "/run/user/%d", PS_UID);
        if (access(rt, F_OK) == 0) {
                test_skip("%s exists: not the test's to use", rt);
                return;
        }
        ps_made_run_user = mkdir("/run/user", 0755) == 0;
        atexit(ps_remove_runtime_dir);
        snprintf(sd, sizeof(sd), "%s/systemd", rt);
        snprintf(sock, sizeof(sock), "%s/private", sd);
        ck_assert_int_eq(mkdir(rt, 0700), 0);
        ck_assert_int_eq(chown(rt, PS_UID, PS_UID), 0);
        ck_assert_int_eq(mkdir(sd, 0755), 0);
        ck_assert_int_eq(chown(sd, PS_UID, PS_UID), 0);
        int target = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        ck_assert_int_ge(target, 0);
        if (link)
                snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/target", harness_dir);
        else
                snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
        ck_assert_int_eq(bind(target, (struct sockaddr *) &sa, sizeof(sa)), 0);
        ck_assert_int_eq(listen(target, link ? 16 : 0), 0);
        ck_assert_int_eq(chown(sa.sun_path, PS_UID, PS_UID), 0);
        if (link)
                ck_assert_int_eq(symlink(sa.sun_path, sock), 0);
        else {
                filler = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
                ck_assert_int_eq(connect(filler, (struct sockaddr *) &sa, sizeof(sa)), 0);
        }

        write_rule("60-a.rule", "[Match]\nEvent=push\nUnit=standby-a.service\n[Action]\nThaw=standby-a.service\n");
        test_spawn_workload("standby-a.service", "nanosleep", 10, 1, NULL);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert(test_frozen("standby-a.service"));
        snprintf(address, sizeof(address), "unix:path=%s", sock);
        test_journal_set_address("standby-a.service", address);
        start_listener();
        sd_bus *bus = client();
        char *error = push_within(bus, "standby-a.service", 3 * USEC_PER_SEC, &acted);
        ck_assert_msg(!error, "a push was not answered: %s", error);
        ck_assert_int_eq(acted, 1);
        ck_assert(wait_frozen("standby-a.service", false));
        ck_assert_uint_eq(statistic(bus, "systemd_fallbacks"), 1);
        if (link) {
                int c = accept4(target, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                ck_assert_msg(c < 0 && errno == EAGAIN, "a connection reached the link's target");
                /* Refused once (connected ahead at the start), and not tried
                 * again for the push: a user cannot make the listener fork
                 * a child at every event or journal change. */
                ck_assert_uint_eq(statistic(bus, "systemd_connects"), 1);
        }

        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
        if (link) {
                int c = accept4(target, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                ck_assert_msg(c < 0 && errno == EAGAIN, "a connection from exit reached the link's target");
        }
        safe_close(filler);
        close(target);
        sd_bus_flush_close_unref(bus);
        ps_remove_runtime_dir();
}

START_TEST(test_loop_user_socket_link_refused) {
        user_socket_case(true);
}
END_TEST

START_TEST(test_loop_user_socket_connect_waits) {
        user_socket_case(false);
}
END_TEST

void listener_loop_tests(const ListenerCases *c) {
        tcase_add_test(c->loop, test_loop_stuck_refreeze_answers_push);
        tcase_add_test(c->loop, test_loop_journal_locked_answers_push);
        tcase_add_test(c->loop, test_loop_reload_with_hung_bus);
        tcase_add_test(c->loop, test_loop_reload_with_hung_monitor);
        tcase_add_test(c->loop, test_loop_reload_monitor_timeout);
        tcase_add_test(c->user_socket, test_loop_user_socket_link_refused);
        tcase_add_test(c->user_socket, test_loop_user_socket_connect_waits);
}
