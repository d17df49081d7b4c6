/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Rules of Event=socket: a connection to a frozen server's listening socket
 * wakes the server. */
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "listener-harness.h"
#include "standby.h"
#include "test-util.h"

static bool holds_sockets(void *userdata) {
        return count_held() >= *(int *) userdata;
}

static bool holds_none(void *userdata) {
        return count_held() == 0;
}

/* Event=socket: an unmodified TCP server, frozen, is woken by a new client
 * and by data on a connection it already had; the listener holds its sockets
 * only while it is frozen. */
START_TEST(test_socket_wakes_server) {
        int port = 25000 + (int) (getpid() % 5000), tick, two = 2; /* below the ephemeral range */
        char portarg[16];

        if (!test_need_root_cgroup2())
                return;
        write_rule("60-srv.rule", "[Match]\nEvent=socket\nUnit=srv.service\n[Action]\nThaw=srv.service\nFor=1s\n");
        snprintf(portarg, sizeof(portarg), "%d", port);
        char *argv[] = { (char *) test_bin("standby-workload"), "echo-server", "--port", portarg, "--tick-fd", "3", NULL };
        server_pid = test_spawn("srv.service", argv, &tick);
        ck_assert_int_eq(test_ticks(tick, 1, 5 * USEC_PER_SEC), 1); /* listening */
        int a = tcp_connect(port);
        ck_assert(echo(a, "hello\n"));

        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        /* The listening socket and the connection to a. */
        ck_assert_msg(test_wait_for(holds_sockets, &two, 5 * USEC_PER_SEC), "listener holds %d sockets",
                      count_held());

        /* A new client: its handshake completes, its request wakes the server. */
        int b = tcp_connect(port);
        ck_assert(echo(b, "ping\n"));
        ck_assert(!test_frozen("srv.service"));
        /* The first event of the standby wrote cgroup.freeze before its
         * dispatch, and the listener stepped aside once, after that write,
         * not again after the dispatch's. */
        ck_assert_uint_eq(statistic(bus, "thaws"), 1);
        ck_assert_uint_eq(statistic(bus, "thawed_first"), 1);
        ck_assert_uint_eq(statistic(bus, "yields"), 1);
        ck_assert_msg(test_wait_for(holds_none, NULL, 5 * USEC_PER_SEC), "duplicates kept after the thaw");

        /* The window closes; the sockets are held again; data on the old
         * connection wakes it as well. */
        ck_assert(wait_frozen("srv.service", true));
        ck_assert(test_wait_for(holds_sockets, &two, 5 * USEC_PER_SEC));
        ck_assert(echo(a, "again\n"));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(test_wait_for(holds_none, NULL, 5 * USEC_PER_SEC));
        close(a);
        close(b);
        sd_bus_flush_close_unref(bus);
}
END_TEST

void listener_socket_tests(const ListenerCases *c) {
        tcase_add_test(c->dbus, test_socket_wakes_server);
}
