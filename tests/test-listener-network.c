/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Rules of Event=network and Event=uevent, in a network namespace of the
 * test's: link and address changes wake their units; the listener asks the
 * kernel only for what its rules need, and resyncs after an overrun. */
#include <errno.h>
#include <fcntl.h>
#include <linux/rtnetlink.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "listener-harness.h"
#include "manager.h"
#include "test-util.h"

/* Link and address events from rtnetlink, in a network namespace of the
 * test's own: a veth end going up thaws one unit, an IPv4 address on it
 * (documentation range, no traffic) thaws another. */
START_TEST(test_network_events) {
        if (!test_need_root_cgroup2())
                return;
        write_rule("50-up.rule", "[Match]\nEvent=link\nInterface=sb0\nChange=up\n[Action]\nThaw=net.service\n");
        write_rule("51-addr.rule", "[Match]\nEvent=address\nInterface=sb0\nFamily=ipv4\nChange=added\n"
                                   "[Action]\nThaw=addr.service\n");
        test_spawn_workload("net.service", "idle", 100, 1, NULL);
        test_spawn_workload("addr.service", "idle", 100, 1, NULL);
        make_netns();
        start_listener();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);

        run_ip("-n", listener_netns, "addr", "add", "192.0.2.1/24", "dev", "sb0", NULL);
        ck_assert(wait_frozen("addr.service", false));
        ck_assert(test_frozen("net.service"));
        run_ip("-n", listener_netns, "link", "set", "sb0", "up", NULL, NULL);
        ck_assert(wait_frozen("net.service", false));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
}
END_TEST

/* A netlink socket of the test's own in the namespace, joined to the link
 * and address groups: it sees every change a listener could be woken by. */
static int netns_watch(void) {
        char p[128];
        int fd, big = 4 << 20;

        snprintf(p, sizeof(p), "/run/netns/%s", listener_netns);
        _cleanup_close_ int self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
        _cleanup_close_ int ns = open(p, O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(self, 0);
        ck_assert_int_ge(ns, 0);
        ck_assert_int_eq(setns(ns, CLONE_NEWNET), 0);
        fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
        ck_assert_int_ge(fd, 0);
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK,
                                  .nl_groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR };
        ck_assert_int_eq(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)), 0);
        ck_assert_int_eq(setns(self, CLONE_NEWNET), 0);
        return fd;
}

/* Reads what the watch has queued; returns the link and address messages
 * (an overrun would have lost some: it fails the test). */
static int netns_changes(int fd) {
        char buf[65536];
        int n = 0;

        for (;;) {
                ssize_t k = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
                if (k < 0) {
                        ck_assert_int_eq(errno, EAGAIN);
                        return n;
                }
                for (struct nlmsghdr *h = (struct nlmsghdr *) buf; NLMSG_OK(h, (size_t) k); h = NLMSG_NEXT(h, k))
                        n += h->nlmsg_type == RTM_NEWLINK || h->nlmsg_type == RTM_DELLINK ||
                             h->nlmsg_type == RTM_NEWADDR || h->nlmsg_type == RTM_DELADDR;
        }
}

/* Rounds of sb0 going up and down and an IPv4 address added and removed
 * (documentation range, no traffic): four changes each. Every ip(8) run has
 * returned, so the kernel has queued its messages, before this returns. */
static void churn_links(int rounds) {
        for (int i = 0; i < rounds; i++) {
                run_ip("-n", listener_netns, "link", "set", "sb0", "up", NULL, NULL);
                run_ip("-n", listener_netns, "addr", "add", "192.0.2.1/24", "dev", "sb0", NULL);
                run_ip("-n", listener_netns, "addr", "del", "192.0.2.1/24", "dev", "sb0", NULL);
                run_ip("-n", listener_netns, "link", "set", "sb0", "down", NULL, NULL);
        }
}

/* The listener joins only the rtnetlink groups its rules need: with no link
 * or address rule, a burst of link and address changes (seen by the test's
 * own socket in the namespace) does not wake it once; reloaded with a link
 * rule, the same burst is seen as events (so the burst was observable);
 * reloaded with an IPv4 address rule, link changes wake it no more; reloaded
 * without, nothing again. */
START_TEST(test_network_only_what_rules_need) {
        uint64_t before, after, events;
        int watch;

        if (!test_need_root_cgroup2())
                return;
        make_netns();
        watch = netns_watch();
        start_listener();
        sd_bus *bus = client();

        before = listener_settled_runs(bus);
        churn_links(5);
        after = listener_runs_after();
        ck_assert_int_ge(netns_changes(watch), 20);
        ck_assert_msg(after == before, "with no network rule, the listener ran %llu times in a burst of link changes",
                      (unsigned long long) (after - before));

        /* The positive control: a link rule sees the same burst. */
        write_rule("50-up.rule", "[Match]\nEvent=link\nInterface=sb0\n[Action]\nThaw=net.service\n");
        ck_assert_int_eq(kill(listener_pid, SIGHUP), 0);
        ck_assert(wait_notify("READY=1"));
        before = listener_settled_runs(bus);
        events = statistic(bus, "events");
        churn_links(5);
        after = listener_runs_after();
        ck_assert_int_ge(netns_changes(watch), 20);
        ck_assert_uint_gt(after, before);
        ck_assert_uint_eq(statistic(bus, "events") - events, 10); /* up, down: 5 times */

        /* An IPv4 address rule only: link changes do not wake it; an
         * address does, named by its interface. */
        ck_assert_int_eq(unlink_rule("50-up.rule"), 0);
        write_rule("51-addr.rule", "[Match]\nEvent=address\nInterface=sb0\nFamily=ipv4\nChange=added\n"
                                   "[Action]\nThaw=net.service\n");
        ck_assert_int_eq(kill(listener_pid, SIGHUP), 0);
        ck_assert(wait_notify("READY=1"));
        before = listener_settled_runs(bus);
        for (int i = 0; i < 5; i++) {
                run_ip("-n", listener_netns, "link", "set", "sb0", "up", NULL, NULL);
                run_ip("-n", listener_netns, "link", "set", "sb0", "down", NULL, NULL);
        }
        after = listener_runs_after();
        ck_assert_int_ge(netns_changes(watch), 10);
        ck_assert_msg(after == before, "with an address rule only, the listener ran %llu times for link changes",
                      (unsigned long long) (after - before));
        events = statistic(bus, "events");
        uint64_t matched = statistic(bus, "matched");
        run_ip("-n", listener_netns, "addr", "add", "192.0.2.1/24", "dev", "sb0", NULL);
        (void) listener_runs_after();
        ck_assert_uint_eq(statistic(bus, "events") - events, 1);
        ck_assert_uint_eq(statistic(bus, "matched") - matched, 1);
        run_ip("-n", listener_netns, "addr", "del", "192.0.2.1/24", "dev", "sb0", NULL);

        /* No network rule again: the groups are left. */
        ck_assert_int_eq(unlink_rule("51-addr.rule"), 0);
        ck_assert_int_eq(kill(listener_pid, SIGHUP), 0);
        ck_assert(wait_notify("READY=1"));
        before = listener_settled_runs(bus);
        churn_links(5);
        after = listener_runs_after();
        ck_assert_int_ge(netns_changes(watch), 20);
        ck_assert_msg(after == before, "after a reload without network rules, the listener ran %llu times",
                      (unsigned long long) (after - before));
        close(watch);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* Event=uevent: a network device added (in the test's own namespace, where
 * its uevents go) thaws the unit; other subsystems do not. */
START_TEST(test_uevent_rule) {
        if (!test_need_root_cgroup2())
                return;
        write_rule("55-hotplug.rule", "[Match]\nEvent=uevent\nSubsystem=net\nChange=add\n[Action]\nThaw=net.service\n");
        test_spawn_workload("net.service", "idle", 100, 1, NULL);
        make_netns();
        start_listener();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        run_ip("-n", listener_netns, "link", "add", "hot0", "type", "veth", NULL);
        ck_assert(wait_frozen("net.service", false));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
}
END_TEST

/* An overrun of the netlink receive buffer loses events; the listener dumps
 * the state afresh and still sees that the link went up. */
START_TEST(test_network_overrun_resync) {
        if (!test_need_root_cgroup2())
                return;
        write_rule("50-up.rule", "[Match]\nEvent=link\nInterface=sb0\nChange=up\n[Action]\nThaw=net.service\n");
        test_spawn_workload("net.service", "idle", 100, 1, NULL);
        make_netns();
        setenv("STANDBY_LISTENER_NETLINK_RCVBUF", "4096", 1);
        start_listener();
        unsetenv("STANDBY_LISTENER_NETLINK_RCVBUF");
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);

        /* While it cannot read, far more than 4 KiB of events, the last being sb0 up. */
        ck_assert_int_eq(kill(listener_pid, SIGSTOP), 0);
        for (int i = 0; i < 20; i++) {
                char name[32];
                snprintf(name, sizeof(name), "flood%d", i);
                run_ip("-n", listener_netns, "link", "add", name, "type", "veth", NULL);
        }
        run_ip("-n", listener_netns, "link", "set", "sb0", "up", NULL, NULL);
        ck_assert_int_eq(kill(listener_pid, SIGCONT), 0);

        ck_assert(wait_frozen("net.service", false));
        sd_bus *bus = client();
        ck_assert_uint_ge(statistic(bus, "resyncs"), 1);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

void listener_network_tests(const ListenerCases *c) {
        tcase_add_test(c->dbus, test_network_events);
        tcase_add_test(c->dbus, test_network_overrun_resync);
        tcase_add_test(c->dbus, test_network_only_what_rules_need);
        tcase_add_test(c->dbus, test_uevent_rule);
}
