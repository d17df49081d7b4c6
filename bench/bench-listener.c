/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* standby-bench --listener: what the freezer-plus-listener approach costs an
 * event. A private dbus-daemon, the real standby-listener, and three services
 * in their own units: a TCP server woken by its socket, a TCP server woken by
 * a D-Bus push, a D-Bus service woken by a call to its name. Each event's
 * latency, to the service's reply, is measured with the service frozen and
 * with it never frozen; then the listener's RSS, a storm of 10,000 pushes,
 * the listener's wakeups while idle in standby, and its wakeups in standby
 * while links and addresses change that no rule is about. */
#include <fcntl.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/veth.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <limits.h>
#include <math.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>

#include "bench.h"
#include "cgroup.h"
#include "fileio.h"
#include "log.h"
#include "macro.h"
#include "proc.h"

#define SERVICE_NAME "org.standby.BenchService"
/* The same service outside standby's targets, for the references. */
#define REFERENCE_NAME "org.standby.BenchReference"
/* The listener's own D-Bus service owns this name as well, on a second
 * connection: a call to it reaches the same process, but not the
 * listener's monitor, which watches calls to SERVICE_NAME (dbus-daemon
 * matches a destination against every name of the addressed connection,
 * so one connection owning both would show the monitor both). */
#define SAME_NAME "org.standby.BenchServiceSame"
/* The bare push thawer's name: Push to it thaws the listener's own
 * push.service, as Push to the listener does. */
#define BARE_PUSH_NAME "org.standby.BenchBarePush"

char bus_address[400];
pid_t dbus_pid, listener_pid;

int bench_start_dbus(void) {
        char conf[400], addr_arg[450], line[512] = {};
        int out[2];
        FILE *f;

        snprintf(conf, sizeof(conf), "%s/bus.conf", tmpdir);
        f = fopen(conf, "we");
        if (!f)
                return negative_errno();
        fprintf(f, "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
                   " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
                   "<busconfig><type>system</type><listen>unix:tmpdir=/tmp</listen><auth>EXTERNAL</auth>\n"
                   "<policy context=\"default\"><allow user=\"*\"/><allow own=\"*\"/>"
                   "<allow send_destination=\"*\"/><allow receive_sender=\"*\"/></policy></busconfig>\n");
        fclose(f);
        snprintf(bus_address, sizeof(bus_address), "unix:path=%s/bus", tmpdir);
        snprintf(addr_arg, sizeof(addr_arg), "--address=%s", bus_address);
        char conf_arg[420];
        snprintf(conf_arg, sizeof(conf_arg), "--config-file=%s", conf);
        if (pipe2(out, O_CLOEXEC) < 0)
                return negative_errno();
        dbus_pid = fork();
        if (dbus_pid < 0)
                return negative_errno();
        if (dbus_pid == 0) {
                dup2(out[1], 1);
                int null = open("/dev/null", O_WRONLY);
                dup2(null, 2);
                execlp("dbus-daemon", "dbus-daemon", conf_arg, addr_arg, "--nofork", "--print-address=1", NULL);
                _exit(127);
        }
        close(out[1]);
        struct pollfd p = { .fd = out[0], .events = POLLIN };
        bool ok = poll(&p, 1, 10000) == 1 && read(out[0], line, sizeof(line) - 1) > 0;
        close(out[0]);
        return ok ? 0 : -ETIMEDOUT;
}

int bench_write_rule(const char *name, const char *text) {
        char path[400];
        FILE *f;

        snprintf(path, sizeof(path), "%s/rules/%s", tmpdir, name);
        f = fopen(path, "we");
        if (!f)
                return negative_errno();
        fputs(text, f);
        return fclose(f) == 0 ? 0 : negative_errno();
}

int bench_start_listener(const char *path, int netns_fd) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char env[200], rules[300], buf[256];
        int fd, r = -ETIMEDOUT;

        if (strlen(tmpdir) + sizeof("/notify") > sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        memcpy(sa.sun_path, tmpdir, strlen(tmpdir));
        memcpy(sa.sun_path + strlen(tmpdir), "/notify", sizeof("/notify"));
        (void) unlink(sa.sun_path);
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return negative_errno();
        snprintf(env, sizeof(env), "NOTIFY_SOCKET=%s", sa.sun_path);
        snprintf(rules, sizeof(rules), "%s/rules", tmpdir);
        listener_pid = fork();
        if (listener_pid < 0)
                return negative_errno();
        if (listener_pid == 0) {
                putenv(env);
                if (!getenv("STANDBY_BENCH_DEBUG")) {
                        int null = open("/dev/null", O_WRONLY);
                        dup2(null, 2);
                }
                /* Only the network namespace: the cgroup2 mount stays as it is. */
                if (netns_fd >= 0 && setns(netns_fd, CLONE_NEWNET) < 0)
                        _exit(126);
                execl(path, "standby-listener", "--config", config_path, "--state-dir", state_dir, "--rules-dir",
                      rules, "--bus-address", bus_address, NULL);
                _exit(127);
        }
        /* Ready when it says so. */
        for (usec_t deadline = now_usec(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                int t = deadline_poll_timeout(deadline);
                if (t == 0 || poll(&p, 1, t) <= 0)
                        break;
                ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);
                if (n > 0 && (buf[n] = 0, strstr(buf, "READY=1"))) {
                        r = 0;
                        break;
                }
        }
        close(fd);
        return r;
}

int bench_tcp_connect(int port) {
        return bench_tcp_connect_stamped(port, false);
}

int bench_tcp_connect_stamped(int port, bool stamped) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t) port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
        if (fd < 0 || (stamped && setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)) < 0) ||
            connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                safe_close(fd);
                return -errno;
        }
        return fd;
}

/* Ends a connection and waits, up to 5 s, until the server has closed its
 * end: a server frozen again before it has read the end of the connection
 * holds a readable socket, and the listener rightly thaws it for that. */
int bench_hang_up(int fd) {
        char c;
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int r = shutdown(fd, SHUT_WR) < 0 || poll(&p, 1, 5000) != 1 || read(fd, &c, 1) != 0 ? -ETIMEDOUT : 0;
        safe_close(fd);
        return r;
}

/* One request and its echo, with a 5 s bound. */
int bench_echo(int fd) {
        return bench_echo_stamped(fd, NULL);
}

int bench_echo_stamped(int fd, usec_t *ret_rx) {
        char c, ctl[CMSG_SPACE(sizeof(struct timespec))];
        struct iovec iov = { .iov_base = &c, .iov_len = 1 };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl) };
        struct pollfd p = { .fd = fd, .events = POLLIN };

        if (write(fd, "x", 1) != 1 || poll(&p, 1, 5000) != 1 || recvmsg(fd, &mh, 0) != 1)
                return -ETIMEDOUT;
        if (!ret_rx)
                return 0;
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
                if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
                        struct timespec ts;
                        memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
                        *ret_rx = (usec_t) ts.tv_sec * USEC_PER_SEC + (usec_t) ts.tv_nsec / NSEC_PER_USEC;
                        return 0;
                }
        return -ENODATA;
}

enum { KIND_SOCKET, KIND_PUSH, KIND_DBUS_CALL, _KIND_MAX };
static const char * const kind_names[_KIND_MAX] = { "socket", "push", "dbus-call" };
static const char * const kind_units[_KIND_MAX] = { "socket.service", "push.service", "call.service" };

/* What a sample measures, from the event, in us: until this client has the
 * reply in hand (total), and until the service replied (reply: what the
 * service did, apart from when this client, on the same two CPUs, got one to
 * read it; a client across the network pays that on its own machine). For a
 * TCP reply that is the kernel's receive time stamp on the client's socket;
 * a D-Bus reply has none (AF_UNIX stream sockets do not stamp), so the
 * service reads its clock as it replies and sends that along (Stamp). */
typedef struct Timing {
        double total, reply;
} Timing;

/* The listener mode's run: the options, what it started, and every
 * figure. The samples of each mode are [kind][sample], flattened; the
 * references (bench-thawed, bare-thawed) are measured for has_references()
 * kinds only. */
typedef struct ListenerBench {
        const char *listener_path;
        unsigned samples, idle_seconds, churn_seconds, gap_ms;
        bool systemd, call_rule_socket;
        /* The same-service references: in every round each of the
         * listener's own services is also frozen by the bench behind the
         * journal's back (so the listener holds none of its sockets) and
         * thawed by a bare thawer, woken by the same event on the same
         * service (for dbus-call a call to the service's second name, for
         * push a Push to the bare thawer's name): what the listener adds
         * beyond the least any listener adds, on one service, in one run. */
        BareThawer same_thawer[_KIND_MAX];
        pid_t socket_pid, call_pid;
        int same_cg[_KIND_MAX];
        bool have_same;

        int port_socket, port_push, port_reference;
        /* Where the services live: our own units.slice, or the app.slice of
         * a systemd --user manager (--backend=systemd) that runs them as its
         * units. */
        char units_rel[800], um_dir[400], um_script[4096];
        bool um_started, in_standby;
        pid_t reference_pid;
        int reference_cg[_KIND_MAX];
        BareThawer thawer[_KIND_MAX];
        bool have_floor, have_bare;
        sd_bus *bus;
        int push_conn;

        /* Totals and reply times (Timing) of each mode. */
        double *base, *frozen, *base_reply, *frozen_reply;
        double *floor, *floor_write, *floor_reply, *bare, *bare_reply;
        double *same, *same_reply;      /* socket only: [sample] */
        uint64_t rss_after_events, n_thaws, thaw_total, thaw_max, thawed_first, yields;
        usec_t storm_sent, storm_handled;
        uint64_t storm_thaws, storm_coalesced, rss_after_storm;
        uint64_t idle_runs;
        uint64_t churn_runs, churn_changes, churn_seen;
} ListenerBench;

static void timing_set(Timing *t, usec_t t0, usec_t t0_real, usec_t rx_real) {
        t->total = (double) (now_usec(CLOCK_MONOTONIC) - t0);
        t->reply = (double) rx_real - (double) t0_real;
}

static int on_stamp(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        uint64_t *replied = userdata;
        if (sd_bus_message_is_method_error(m, NULL) || sd_bus_message_read(m, "t", replied) <= 0)
                *replied = UINT64_MAX;
        return 0;
}

/* A Stamp call to name, timed to the service's reply; with thaw_cg, the bench
 * writes that cgroup's cgroup.freeze 0 itself right after sending it
 * (bench-thawed), and ret_write gets how long that write took. Every
 * dbus-call sample goes through here, so that all modes pay the same client. */
static int call_stamp(sd_bus *bus, const char *name, int thaw_cg, Timing *ret, double *ret_write) {
        usec_t t0 = now_usec(CLOCK_MONOTONIC), deadline = t0 + 5 * USEC_PER_SEC;
        uint64_t replied = 0;
        sd_bus_slot *slot = NULL;
        int r;

        r = sd_bus_call_method_async(bus, &slot, name, "/org/standby/Bench", "org.standby.Bench", "Stamp", on_stamp,
                                     &replied, "");
        if (r >= 0 && thaw_cg >= 0) {
                usec_t w0 = now_usec(CLOCK_MONOTONIC);
                r = cgroup_set_freeze(thaw_cg, false);
                if (ret_write)
                        *ret_write = (double) (now_usec(CLOCK_MONOTONIC) - w0);
        }
        while (r >= 0 && replied == 0) {
                usec_t now = now_usec(CLOCK_MONOTONIC);
                if (now >= deadline) {
                        r = -ETIMEDOUT;
                        break;
                }
                r = sd_bus_process(bus, NULL);
                if (r == 0)
                        r = sd_bus_wait(bus, deadline - now);
        }
        sd_bus_slot_unref(slot);
        if (r < 0)
                return r;
        if (replied == UINT64_MAX)
                return -EIO;
        timing_set(ret, t0, t0, replied); /* both CLOCK_MONOTONIC */
        return 0;
}

/* One sample of an event kind: from the event to the service's reply; same:
 * the event that the same-service bare thawer, not the listener, sees. */
static int sample(const ListenerBench *lb, int kind, bool same, Timing *ret) {
        usec_t t0 = now_usec(CLOCK_MONOTONIC), t0_real = now_usec(CLOCK_REALTIME), rx = USEC_INFINITY;
        int r;

        switch (kind) {
        case KIND_SOCKET: {
                /* A new client: connect, ask, get the answer; then, untimed, hang up. */
                int fd = bench_tcp_connect_stamped(lb->port_socket, true);
                if (fd < 0)
                        return fd;
                r = bench_echo_stamped(fd, &rx);
                timing_set(ret, t0, t0_real, rx);
                int q = bench_hang_up(fd);
                return r < 0 ? r : q;
        }
        case KIND_PUSH: {
                /* The push, then a request on the connection it already has. */
                r = sd_bus_call_method(lb->bus, same ? BARE_PUSH_NAME : "org.standby.Listener1", "/org/standby/Listener1",
                                       "org.standby.Listener1", "Push", NULL, NULL, "ss", kind_units[KIND_PUSH], "bench");
                if (r >= 0)
                        r = bench_echo_stamped(lb->push_conn, &rx);
                break;
        }
        default:
                return call_stamp(lb->bus, same ? SAME_NAME : SERVICE_NAME, -EBADF, ret, NULL);
        }
        timing_set(ret, t0, t0_real, rx);
        return r < 0 ? r : 0;
}

uint64_t bench_listener_statistic(sd_bus *bus, const char *key) {
        sd_bus_message *reply = NULL;
        uint64_t v = UINT64_MAX, x;
        const char *k;

        if (sd_bus_call_method(bus, "org.standby.Listener1", "/org/standby/Listener1", "org.standby.Listener1",
                               "GetStatistics", NULL, &reply, "") < 0)
                return UINT64_MAX;
        if (sd_bus_message_enter_container(reply, 'a', "{st}") >= 0)
                while (sd_bus_message_read(reply, "{st}", &k, &x) > 0)
                        if (streq(k, key))
                                v = x;
        sd_bus_message_unref(reply);
        return v;
}

uint64_t bench_rss_kib(pid_t pid) {
        _cleanup_free_ char *buf = NULL;
        char path[64];
        const char *p;

        snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        if (read_full_fileat(AT_FDCWD, path, &buf, NULL) < 0 || !(p = strstr(buf, "VmRSS:")))
                return 0;
        return strtoull(p + 6, NULL, 10);
}

static uint64_t runs(pid_t pid) {
        uint64_t r = 0;
        (void) stats_pid_schedstat(pid, &r, NULL);
        return r;
}

/* Once the listener has served everything sent to it: two round trips over
 * the bus (it serves one source after another without sleeping in
 * between), then until it sleeps (S) again, which it does in epoll_wait
 * with nothing left to read; a count started earlier would take in its
 * way back to sleep. Bounded: 5 s. */
static void listener_settle(sd_bus *bus) {
        (void) bench_listener_statistic(bus, "events");
        (void) bench_listener_statistic(bus, "events");
        for (int i = 0; i < 5000; i++) {
                ProcStat st;
                if (proc_get_stat(listener_pid, &st) < 0 || st.state == 'S')
                        return;
                (void) poll(NULL, 0, 1);
        }
}

/* A network namespace of the bench's own with a veth pair (sbc0 and its
 * peer), an rtnetlink socket in it to change them, and one joined to the
 * link and address groups that counts what changed (what a listener that
 * joined them would be woken by). The bench stays in its namespace. */
typedef struct Churn {
        int netns_fd, watch_fd, ifindex;
        struct nl_sock *nl;
        struct rtnl_link *link;
        struct rtnl_addr *addr[2];    /* 192.0.2.1/24 and 2001:db8::1/64: documentation ranges */
        bool up;                      /* and addressed */
        uint64_t seen;                /* link and address messages the watch read */
} Churn;

static void churn_free(Churn *c) {
        rtnl_link_put(c->link);
        for (int i = 0; i < 2; i++)
                rtnl_addr_put(c->addr[i]);
        nl_socket_free(c->nl);
        safe_close(c->watch_fd);
        /* The namespace, with its veth pair, goes with its last user. */
        safe_close(c->netns_fd);
}

static int churn_addr(Churn *c, int i, int family, const char *text) {
        struct nl_addr *local = NULL;

        c->addr[i] = rtnl_addr_alloc();
        if (!c->addr[i] || nl_addr_parse(text, family, &local) < 0)
                return -ENOMEM;
        rtnl_addr_set_ifindex(c->addr[i], c->ifindex);
        rtnl_addr_set_family(c->addr[i], family);
        (void) rtnl_addr_set_local(c->addr[i], local);
        nl_addr_put(local);
        if (family == AF_INET6)
                rtnl_addr_set_flags(c->addr[i], IFA_F_NODAD); /* no DAD timers of the kernel's */
        return 0;
}

static int churn_setup(Churn *c) {
        _cleanup_close_ int self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK,
                                  .nl_groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR };
        int r = 0, big = 4 << 20;

        *c = (Churn) { .netns_fd = -EBADF, .watch_fd = -EBADF };
        if (self < 0 || unshare(CLONE_NEWNET) < 0)
                return negative_errno();
        c->netns_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
        c->watch_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
        if (c->netns_fd < 0 || c->watch_fd < 0 || bind(c->watch_fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 ||
            setsockopt(c->watch_fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)) < 0)
                r = negative_errno();
        c->nl = r >= 0 ? nl_socket_alloc() : NULL;
        /* libnl's errors are its own (NLE_*): reported as EIO. */
        if (r >= 0 && (!c->nl || nl_connect(c->nl, NETLINK_ROUTE) < 0 ||
                       rtnl_link_veth_add(c->nl, "sbc0", "sbc1", getpid()) < 0 ||
                       rtnl_link_get_kernel(c->nl, 0, "sbc0", &c->link) < 0))
                r = -EIO;
        if (setns(self, CLONE_NEWNET) < 0)
                return log_error_errno(negative_errno(), "Cannot return to the bench's network namespace: %m");
        if (r < 0)
                return r;
        c->ifindex = rtnl_link_get_ifindex(c->link);
        if ((r = churn_addr(c, 0, AF_INET, "192.0.2.1/24")) < 0 || (r = churn_addr(c, 1, AF_INET6, "2001:db8::1/64")) < 0)
                return r;
        return 0;
}

/* One second's changes: the link comes up and gets both addresses, or
 * loses them and goes down (down, the kernel would drop the IPv6 one
 * itself). */
static int churn_step(Churn *c) {
        struct rtnl_link *change = rtnl_link_alloc();
        int r = 0;

        if (!change)
                return -ENOMEM;
        if (c->up) {
                for (int i = 0; r >= 0 && i < 2; i++)
                        if (rtnl_addr_delete(c->nl, c->addr[i], 0) < 0)
                                r = -EIO;
                rtnl_link_unset_flags(change, IFF_UP);
        } else
                rtnl_link_set_flags(change, IFF_UP);
        if (r >= 0 && rtnl_link_change(c->nl, c->link, change, 0) < 0)
                r = -EIO;
        rtnl_link_put(change);
        if (r >= 0 && !c->up)
                for (int i = 0; r >= 0 && i < 2; i++)
                        if (rtnl_addr_add(c->nl, c->addr[i], 0) < 0)
                                r = -EIO;
        c->up = !c->up;
        return r;
}

/* Reads what the watch has queued; an overrun loses messages, so it is
 * read every second. */
static int churn_drain(Churn *c) {
        char buf[65536];

        for (;;) {
                ssize_t k = recv(c->watch_fd, buf, sizeof(buf), MSG_DONTWAIT);
                if (k < 0)
                        return errno == EAGAIN ? 0 : negative_errno();
                for (struct nlmsghdr *h = (struct nlmsghdr *) buf; NLMSG_OK(h, (size_t) k); h = NLMSG_NEXT(h, k))
                        c->seen += h->nlmsg_type == RTM_NEWLINK || h->nlmsg_type == RTM_DELLINK ||
                                   h->nlmsg_type == RTM_NEWADDR || h->nlmsg_type == RTM_DELADDR;
        }
}

/* In standby: the listener started again inside a churning namespace, with
 * the same rules (none about links or addresses); its runs over seconds of
 * one change of each kind per second. */
static int measure_churn(const char *listener_path, sd_bus *bus, unsigned seconds, uint64_t *ret_runs,
                         uint64_t *ret_changes, uint64_t *ret_seen) {
        Churn c;
        uint64_t runs0, changes = 0;
        int r;

        r = churn_setup(&c);
        if (r < 0) {
                log_error_errno(r, "No network namespace with a veth pair: %m");
                goto finish;
        }
        kill(listener_pid, SIGTERM);
        waitpid(listener_pid, NULL, 0);
        listener_pid = 0;
        r = bench_start_listener(listener_path, c.netns_fd);
        if (r < 0) {
                log_error_errno(r, "standby-listener did not become ready in the namespace: %m");
                goto finish;
        }
        listener_settle(bus);
        fprintf(stderr, "[listener] standby with link and address changes every second for %u s\n", seconds);
        runs0 = runs(listener_pid);
        for (unsigned i = 0; i < seconds; i++) {
                if ((r = bench_check_interrupted()) < 0)
                        goto finish;
                if ((r = churn_step(&c)) < 0 || (r = churn_drain(&c)) < 0) {
                        log_error_errno(r, "Cannot change the namespace's link and addresses: %m");
                        goto finish;
                }
                changes += 3;
                (void) poll(NULL, 0, 1000);
        }
        *ret_runs = runs(listener_pid) - runs0;
        r = churn_drain(&c);
        *ret_changes = changes;
        *ret_seen = c.seen;
finish:
        churn_free(&c);
        return r;
}

/* Freezes the unit again; returns once the listener has taken the journal
 * change (and so holds the unit's sockets): it takes journal changes before
 * any other pending event, so its answer to a call sent after the change
 * comes after it. Otherwise a sample could time the listener's re-arming. */
static int refreeze(const ListenerBench *lb, int kind) {
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", lb->units_rel, kind_units[kind]);
        if (run_manager("freeze", path) == USEC_INFINITY)
                return -EIO;
        return bench_listener_statistic(lb->bus, "events") == UINT64_MAX ? -EIO : 0;
}

static int shell(const char *cmd) {
        int r = system(cmd);
        return r == 0 ? 0 : -EIO;
}

/* A systemd --user manager in a cgroup of the scratch tree, and the three
 * services as its transient units. */
static int start_systemd_services(ListenerBench *lb, char *const socket_argv[], char *const push_argv[],
                                  char *const call_argv[]) {
        char cmd[8192], cgrel[700], bin[4096];
        char *const *argvs[] = { socket_argv, push_argv, call_argv };

        if (!realpath("tests/env/user-manager.sh", lb->um_script) || !realpath(bench_workload_path, bin))
                return log_error_errno(-ENOENT, "--backend=systemd runs from the source tree (tests/env/user-manager.sh).");
        snprintf(lb->um_dir, sizeof(lb->um_dir), "%s/um", tmpdir);
        snprintf(cgrel, sizeof(cgrel), "%s/um.service", scratch.base);
        (void) mkdir(lb->um_dir, 0700);
        snprintf(cmd, sizeof(cmd), "'%s' start '%s' '%s'", lb->um_script, lb->um_dir, cgrel);
        if (shell(cmd) < 0)
                return log_error_errno(-EIO, "The systemd --user manager did not start.");
        lb->um_started = true;
        for (int k = 0; k < _KIND_MAX; k++) {
                int n = snprintf(cmd, sizeof(cmd), "XDG_RUNTIME_DIR='%s/xdg' systemd-run --user --quiet --unit=%s '%s'",
                                 lb->um_dir, kind_units[k], bin);
                for (char *const *a = argvs[k] + 1; *a && n < (int) sizeof(cmd) - 64; a++)
                        n += snprintf(cmd + n, sizeof(cmd) - (size_t) n, " '%s'", *a);
                if (shell(cmd) < 0)
                        return log_error_errno(-EIO, "systemd-run %s failed.", kind_units[k]);
        }
        snprintf(lb->units_rel, sizeof(lb->units_rel), "%s/app.slice", cgrel);
        FILE *f = fopen(config_path, "we");
        if (!f)
                return negative_errno();
        fprintf(f, "[Standby]\nTargets=%s\nFreezeTimeout=5s\nBackend=systemd\nSystemdAddress=unix:path=%s/xdg/systemd/private\n",
                lb->units_rel, lb->um_dir);
        return fclose(f) == 0 ? 0 : negative_errno();
}

static void stop_systemd_services(ListenerBench *lb) {
        char cmd[8192];
        if (!lb->um_started)
                return;
        snprintf(cmd, sizeof(cmd), "'%s' stop '%s' x", lb->um_script, lb->um_dir);
        (void) shell(cmd);
        lb->um_started = false;
}

static void print_row(FILE *f, const char *kind, const char *mode, double *v, size_t n, const char *csv_mode) {
        double p50 = stats_percentile(v, n, 50), p99 = stats_percentile(v, n, 99), max = stats_max(v, n);
        printf("%-10s %-12s %10.1f %10.1f %10.1f\n", kind, mode, p50, p99, max);
        if (f)
                fprintf(f, "%s,%s,%zu,%.1f,%.1f,%.1f\n", kind, csv_mode ? csv_mode : mode, n, p50, p99, max);
}

static void print_added(const double *v, const double *ref, unsigned samples) {
        printf("%-10s %-12s %10.1f %10.1f\n", "", "added",
               stats_percentile(v, samples, 50) - stats_percentile(ref, samples, 50),
               stats_percentile(v, samples, 99) - stats_percentile(ref, samples, 99));
}

/* Whether an event kind has the references (bench-thawed, bare-thawed). */
static bool has_references(int kind) {
        return kind == KIND_SOCKET || kind == KIND_DBUS_CALL;
}

/* Per event kind: never frozen, frozen, and what freezing adds; for the
 * socket and dbus-call events also their references (NULL: not measured). */
static void print_table(FILE *csv, bool reply, unsigned samples, double *base, double *frozen, double *floor,
                        double *bare, double *same) {
        char mode[64];

        printf("%-10s %-12s %10s %10s %10s\n", "event", "service", "p50", "p99", "max");
        for (int k = 0; k < _KIND_MAX; k++) {
                const char *names[] = { "never-frozen", "frozen", "bench-thawed", "bare-thawed" };
                bool refs = has_references(k);
                double *series[] = { base + k * samples, frozen + k * samples, refs && floor ? floor + k * samples : NULL,
                                     refs && bare ? bare + k * samples : NULL };
                for (size_t i = 0; i < ELEMENTSOF(series); i++) {
                        if (!series[i])
                                continue;
                        snprintf(mode, sizeof(mode), "%s%s", names[i], reply ? "/reply" : "");
                        print_row(csv, kind_names[k], names[i], series[i], samples, mode);
                        if (i > 0)
                                print_added(series[i], series[0], samples);
                }
                /* What standby-listener adds beyond the least any listener adds,
                 * in the same rounds: on the other service, and on its own
                 * (beyond same: the figure that is the listener's). */
                if (series[3])
                        printf("%-10s %-12s %10.1f\n", "", "beyond bare",
                               stats_percentile(series[1], samples, 50) - stats_percentile(series[3], samples, 50));
                if (same) {
                        double *v = same + k * samples;
                        snprintf(mode, sizeof(mode), "bare-same%s", reply ? "/reply" : "");
                        print_row(csv, kind_names[k], "bare-same", v, samples, mode);
                        print_added(v, series[0], samples);
                        printf("%-10s %-12s %10.1f %10.1f\n", "", "beyond same",
                               stats_percentile(series[1], samples, 50) - stats_percentile(v, samples, 50),
                               stats_percentile(series[1], samples, 99) - stats_percentile(v, samples, 99));
                }
        }
}

#define SYSTEMD_MIN_GAP_MS 15u

/* The idle time before each sample, in every mode alike: an event in
 * standby meets CPUs that have been idle, and waking a halted CPU costs here
 * about as much as the whole reply of a warm one (never frozen: 90-130 us
 * back to back, 220-250 us after 5 ms idle). Without it the reference would
 * run warm, back to back, and the frozen samples (each after a
 * standby-manager run) would not. A deliberate timer, not a wait for something to happen. */
static void settle(unsigned gap_ms) {
        if (gap_ms > 0)
                (void) poll(NULL, 0, (int) gap_ms);
}

/* Whether the reference echo server and D-Bus service answer (at start). */
static bool references_serve(const ListenerBench *lb) {
        Timing t;
        int fd = bench_tcp_connect_stamped(lb->port_reference, false);
        if (fd < 0)
                return false;
        bool ok = bench_echo(fd) >= 0;
        return bench_hang_up(fd) >= 0 && ok && call_stamp(lb->bus, REFERENCE_NAME, -EBADF, &t, NULL) >= 0;
}

/* A sample of a reference, on a second echo server or D-Bus service outside
 * standby's targets, which the listener never sees (were the bench to freeze
 * the listener's own socket.service behind the journal's back, a late thaw
 * record would make the listener hold that service's sockets and thaw it
 * during the next never-frozen sample). The bench freezes it itself, then either thaws it
 * right after the event (thawer NULL: bench-thawed, the kernel's floor, no
 * listener in between), or leaves the thaw to the bare thawer
 * (bench-bare-thawer.c: the least that any listener adds). */
static int reference_sample(ListenerBench *lb, int kind, bool bare, Timing *ret, double *ret_write) {
        BareThawer *thawer = bare ? &lb->thawer[kind] : NULL;
        const char *mode = thawer ? "bare-thawed" : "bench-thawed";
        int cg = lb->reference_cg[kind];
        usec_t rx = 0;
        int r;

        if ((r = cgroup_set_freeze(cg, true)) < 0 ||
            (r = cgroup_wait_frozen(&cg, 1, true, now_usec(CLOCK_MONOTONIC) + 5 * USEC_PER_SEC, NULL)) < 0)
                return r;
        if (thawer && bare_thawer_arm(thawer) < 0)
                return log_error_errno(-EIO, "The bare thawer did not answer.");
        settle(lb->gap_ms);
        *ret_write = 0;
        if (kind == KIND_DBUS_CALL) {
                r = call_stamp(lb->bus, REFERENCE_NAME, thawer ? -EBADF : cg, ret, ret_write);
                return r < 0 ? log_error_errno(r, "The dbus-call event got no reply (%s): %m", mode) : 0;
        }
        usec_t t0 = now_usec(CLOCK_MONOTONIC), t0_real = now_usec(CLOCK_REALTIME);
        int fd = bench_tcp_connect_stamped(lb->port_reference, true);
        usec_t w0 = now_usec(CLOCK_MONOTONIC);
        r = thawer ? 0 : cgroup_set_freeze(cg, false);
        usec_t w1 = now_usec(CLOCK_MONOTONIC);
        if (fd < 0 || r < 0 || bench_echo_stamped(fd, &rx) < 0) {
                safe_close(fd);
                return log_error_errno(-EIO, "The socket event got no reply (%s).", mode);
        }
        timing_set(ret, t0, t0_real, rx);
        *ret_write = (double) (w1 - w0);
        return bench_hang_up(fd);
}

/* An event on the listener's own service of kind, thawed by the bare
 * thawer: the bench freezes it itself, behind the journal's back, once the
 * listener has recorded every thaw it did (a record still pending would be
 * dropped as overtaken by the freeze, and a journal that says frozen makes
 * the listener hold the service's sockets and thaw it too). Each thaw here
 * is of one unit, so records catch up with thaws; a record dropped would
 * fail the run at the bound, loudly. */
static int same_sample(ListenerBench *lb, int kind, unsigned i, uint64_t *thaws_seen, unsigned *wrong) {
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + 5 * USEC_PER_SEC;
        int cg = lb->same_cg[kind], r;
        Timing t;

        for (;;) {
                uint64_t thaws = bench_listener_statistic(lb->bus, "thaws"),
                         records = bench_listener_statistic(lb->bus, "records");
                if (thaws == UINT64_MAX || records == UINT64_MAX)
                        return -EIO;
                if (records >= thaws)
                        break;
                if (now_usec(CLOCK_MONOTONIC) >= deadline)
                        return log_error_errno(-ETIMEDOUT, "The listener recorded %" PRIu64 " of its %" PRIu64
                                               " thaws within 5 s.", records, thaws);
                (void) poll(NULL, 0, 1);
        }
        if ((r = cgroup_set_freeze(cg, true)) < 0 || (r = cgroup_wait_frozen(&cg, 1, true, deadline, NULL)) < 0)
                return log_error_errno(r, "Failed to freeze %s for the bare thawer: %m", kind_units[kind]);
        uint64_t events = bench_listener_statistic(lb->bus, "events"),
                 calls = bench_listener_statistic(lb->bus, "calls_seen");
        if (bare_thawer_arm(&lb->same_thawer[kind]) < 0)
                return log_error_errno(-EIO, "The bare thawer on %s did not answer.", kind_units[kind]);
        settle(lb->gap_ms);
        if ((r = sample(lb, kind, true, &t)) < 0)
                return log_error_errno(r, "%s event got no reply (bare-same): %m", kind_names[kind]);
        lb->same[kind * lb->samples + i] = t.total;
        lb->same_reply[kind * lb->samples + i] = t.reply;
        /* The bare thawer's alone: the listener took no event (it would
         * have written cgroup.freeze even where its dispatch coalesced),
         * and its monitor showed it no call. */
        uint64_t thaws_now = bench_listener_statistic(lb->bus, "thaws"),
                 events_now = bench_listener_statistic(lb->bus, "events"),
                 calls_now = bench_listener_statistic(lb->bus, "calls_seen");
        if (thaws_now != *thaws_seen || events_now != events || calls_now != calls) {
                (*wrong)++;
                fprintf(stderr, "[listener] %s bare-same sample %u: %" PRIu64 " events, %" PRIu64 " thaws, %" PRIu64
                                " calls seen by the listener instead of 0\n",
                        kind_names[kind], i, events_now - events, thaws_now - *thaws_seen, calls_now - calls);
        }
        *thaws_seen = thaws_now;
        return 0;
}

static void listener_bench_done(ListenerBench *lb) {
        if (lb->in_standby)
                (void) run_manager("exit", NULL);
        for (int k = 0; k < _KIND_MAX; k++) {
                bare_thawer_stop(&lb->thawer[k]);
                safe_close(lb->reference_cg[k]);
        }
        for (int k = 0; k < _KIND_MAX; k++) {
                bare_thawer_stop(&lb->same_thawer[k]);
                safe_close(lb->same_cg[k]);
        }
        safe_close(lb->push_conn);
        sd_bus_flush_close_unref(lb->bus);
        bench_stop_services();
        stop_systemd_services(lb);
        free(lb->base);
        free(lb->frozen);
        free(lb->base_reply);
        free(lb->frozen_reply);
        free(lb->floor);
        free(lb->floor_write);
        free(lb->floor_reply);
        free(lb->bare);
        free(lb->bare_reply);
        free(lb->same);
        free(lb->same_reply);
}

/* Phase 1: the bus, the three services (and the references' two) in their
 * units, the rules, the listener; returns once every service answers. */
static int listener_bench_start(ListenerBench *lb) {
        size_t n = (size_t) lb->samples * _KIND_MAX;
        char dir[400], port_arg[3][16];
        int r;

        double **series[] = { &lb->base,  &lb->frozen,      &lb->base_reply, &lb->frozen_reply, &lb->floor,
                              &lb->floor_write, &lb->floor_reply, &lb->bare, &lb->bare_reply,
                              &lb->same, &lb->same_reply };
        for (size_t i = 0; i < ELEMENTSOF(series); i++)
                if (!(*series[i] = calloc(n, sizeof(double))))
                        return -ENOMEM;
        snprintf(dir, sizeof(dir), "%s/rules", tmpdir);
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return log_error_errno(negative_errno(), "Cannot create %s: %m", dir);
        /* Below the ephemeral range (32768-60999 by default), where a client
         * port of an earlier run can still be taken. */
        lb->port_socket = 20000 + 3 * (int) (getpid() % 3000);
        lb->port_push = lb->port_socket + 1;
        lb->port_reference = lb->port_socket + 2;
        snprintf(port_arg[0], sizeof(port_arg[0]), "%d", lb->port_socket);
        snprintf(port_arg[1], sizeof(port_arg[1]), "%d", lb->port_push);
        snprintf(port_arg[2], sizeof(port_arg[2]), "%d", lb->port_reference);

        r = bench_start_dbus();
        if (r < 0)
                return log_error_errno(r, "Failed to start dbus-daemon: %m");

        /* The three services, each in its own unit; wait until each serves. */
        char *srv_socket[] = { (char *) bench_workload_path, "echo-server", "--port", port_arg[0], NULL };
        char *srv_push[] = { (char *) bench_workload_path, "echo-server", "--port", port_arg[1], NULL };
        char *srv_reference[] = { (char *) bench_workload_path, "echo-server", "--port", port_arg[2], NULL };
        char *srv_call[] = { (char *) bench_workload_path, "bus-service", "--bus-address", bus_address, "--bus-name",
                             SERVICE_NAME, "--bus-alias", SAME_NAME, NULL };
        char *srv_call_reference[] = { (char *) bench_workload_path, "bus-service", "--bus-address", bus_address,
                                       "--bus-name", REFERENCE_NAME, NULL };
        if (lb->systemd) {
                if ((r = start_systemd_services(lb, srv_socket, srv_push, srv_call)) < 0)
                        return r;
        } else {
                if ((r = scratch_spawn(&scratch, "units.slice/socket.service", srv_socket, &lb->socket_pid)) < 0 ||
                    (r = scratch_spawn(&scratch, "units.slice/push.service", srv_push, NULL)) < 0 ||
                    (r = scratch_spawn(&scratch, "units.slice/call.service", srv_call, &lb->call_pid)) < 0 ||
                    (r = scratch_spawn(&scratch, "references.slice/socket.service", srv_reference, &lb->reference_pid)) < 0 ||
                    (r = scratch_spawn(&scratch, "references.slice/call.service", srv_call_reference, NULL)) < 0)
                        return log_error_errno(r, "Failed to start the bench's services: %m");
                snprintf(lb->units_rel, sizeof(lb->units_rel), "%s/units.slice", scratch.base);
                if ((r = write_config(lb->units_rel)) < 0)
                        return log_error_errno(r, "Failed to write %s: %m", config_path);
        }
        if ((r = bench_write_rule("10-socket.rule",
                                  "[Match]\nEvent=socket\nUnit=socket.service\n[Action]\nThaw=socket.service\n")) < 0 ||
            (r = bench_write_rule("20-push.rule", "[Match]\nEvent=push\nUnit=push.service\n[Action]\nThaw=push.service\n")) < 0 ||
            /* --call-rule=socket: the listener holds the D-Bus service's own
             * sockets, its bus connection among them, instead of watching the
             * bus's monitor: the other way to see a call coming. */
            (r = bench_write_rule("30-call.rule",
                                  lb->call_rule_socket ? "[Match]\nEvent=socket\nUnit=call.service\n[Action]\nThaw=call.service\n"
                                                       : "[Match]\nEvent=dbus-call\nBusName=" SERVICE_NAME
                                                         "\n[Action]\nThaw=call.service\n")) < 0)
                return log_error_errno(r, "Failed to write the bench's rules in %s: %m", dir);
        r = bench_start_listener(lb->listener_path, -EBADF);
        if (r < 0)
                return log_error_errno(r, "standby-listener did not become ready: %m");
        if ((r = sd_bus_new(&lb->bus)) < 0 || (r = sd_bus_set_address(lb->bus, bus_address)) < 0 ||
            (r = sd_bus_set_bus_client(lb->bus, 1)) < 0 || (r = sd_bus_start(lb->bus)) < 0)
                return log_error_errno(r, "Cannot connect to the bench's bus %s: %m", bus_address);
        /* The servers may still be starting: retry their first request briefly. */
        for (int i = 0; i < 500 && (lb->push_conn = bench_tcp_connect_stamped(lb->port_push, true)) < 0; i++)
                (void) poll(NULL, 0, 10);
        Timing warm;
        bool serving = false;
        for (int i = 0; i < 500 && lb->push_conn >= 0 &&
                        !(serving = sample(lb, KIND_SOCKET, false, &warm) >= 0 &&
                                    sample(lb, KIND_DBUS_CALL, false, &warm) >= 0 &&
                                    call_stamp(lb->bus, SAME_NAME, -EBADF, &warm, NULL) >= 0 &&
                                    (lb->systemd || references_serve(lb)));
             i++)
                (void) poll(NULL, 0, 10);
        if (!serving) {
                log_error("The bench's services did not answer within 5 s (ports %d, %d and %d, bus names %s and %s).",
                          lb->port_socket, lb->port_push, lb->port_reference, SERVICE_NAME, REFERENCE_NAME);
                return -ETIMEDOUT;
        }

        /* The socket and dbus-call events' references (not with systemd:
         * there the cgroup is systemd's to write). */
        const BareTarget targets[_KIND_MAX] = { [KIND_SOCKET] = { .service = lb->reference_pid },
                                                [KIND_DBUS_CALL] = { .bus_address = bus_address,
                                                                     .bus_name = REFERENCE_NAME } };
        lb->have_floor = !lb->systemd &&
                         scratch_open(&scratch, "references.slice/socket.service", &lb->reference_cg[KIND_SOCKET]) >= 0 &&
                         scratch_open(&scratch, "references.slice/call.service", &lb->reference_cg[KIND_DBUS_CALL]) >= 0;
        lb->have_bare = lb->have_floor && lb->reference_pid > 0;
        for (int k = 0; lb->have_bare && k < _KIND_MAX; k++)
                if (has_references(k) && bare_thawer_start(&lb->thawer[k], lb->reference_cg[k], &targets[k]) < 0)
                        lb->have_bare = false;
        const BareTarget same_targets[_KIND_MAX] = {
                [KIND_SOCKET] = { .service = lb->socket_pid },
                [KIND_PUSH] = { .bus_address = bus_address, .push_name = BARE_PUSH_NAME },
                /* Checked: it thaws on a call it finds unread in the
                 * service's bus connection, as the listener does. */
                [KIND_DBUS_CALL] = { .service = lb->call_pid, .bus_address = bus_address, .bus_name = SAME_NAME },
        };
        lb->have_same = lb->have_bare && lb->socket_pid > 0 && lb->call_pid > 0;
        for (int k = 0; lb->have_same && k < _KIND_MAX; k++) {
                char unit[64];
                snprintf(unit, sizeof(unit), "units.slice/%s", kind_units[k]);
                lb->have_same = scratch_open(&scratch, unit, &lb->same_cg[k]) >= 0 &&
                                bare_thawer_start(&lb->same_thawer[k], lb->same_cg[k], &same_targets[k]) >= 0;
        }
        return 0;
}

/* Phase 2, in standby, rounds of: each service frozen and woken through
 * the listener, and the same service running (the reference); for the
 * socket and dbus-call events also bench-thawed and bare-thawed.
 * Interleaved, so that a shared machine's drift meets every mode alike;
 * each sample after the same idle gap. */
static int listener_bench_rounds(ListenerBench *lb) {
        unsigned samples = lb->samples, wrong = 0;
        int r;

        fprintf(stderr, "[listener] %u rounds: each event kind frozen and never frozen%s\n", samples,
                lb->have_floor ? ", the socket and dbus-call events also bench-thawed and bare-thawed" : "");
        if (run_manager("enter", NULL) == USEC_INFINITY)
                return -EIO;
        lb->in_standby = true;
        if (!lb->have_same && !lb->systemd)
                fprintf(stderr, "[listener] no bare thawer on the listener's services: no bare-same references in this run\n");
        /* Each frozen sample must have been answered by one thaw, and each
         * reference by none: a service found running would time a running
         * service, and a thaw in the reference would time a thaw. */
        uint64_t thaws_seen = bench_listener_statistic(lb->bus, "thaws");
        for (unsigned i = 0; i < samples; i++)
                for (int k = 0; k < _KIND_MAX; k++) {
                        if ((r = bench_check_interrupted()) < 0)
                                return r;
                        /* The same-service reference comes first in odd rounds
                         * and last in even ones (never in round 0 before the
                         * listener's sample: the enter froze the service in
                         * the journal). */
                        bool same = lb->have_same;
                        if (same && i % 2 == 1 && (r = same_sample(lb, k, i, &thaws_seen, &wrong)) < 0)
                                return r;
                        /* Odd rounds: reference, refreeze, frozen; even: refreeze,
                         * frozen, reference (the service runs between rounds; after
                         * the enter, round 0 finds it frozen), so that neither is
                         * always the one whose service ran last. */
                        for (int step = 0; step < 2; step++) {
                                int frz = (int) ((i + 1) % 2) == step ? 0 : 1;
                                Timing t;
                                if (frz && (r = refreeze(lb, k)) < 0)
                                        return r;
                                settle(lb->gap_ms);
                                if ((r = sample(lb, k, false, &t)) < 0)
                                        return log_error_errno(r, "%s event got no reply: %m", kind_names[k]);
                                (frz ? lb->frozen : lb->base)[k * samples + i] = t.total;
                                (frz ? lb->frozen_reply : lb->base_reply)[k * samples + i] = t.reply;
                                uint64_t thaws_now = bench_listener_statistic(lb->bus, "thaws");
                                if (thaws_now != thaws_seen + (uint64_t) frz) {
                                        wrong++;
                                        fprintf(stderr, "[listener] %s %s sample %u: %" PRIu64 " thaws instead of %d\n",
                                                kind_names[k], frz ? "frozen" : "never-frozen", i, thaws_now - thaws_seen,
                                                frz);
                                }
                                thaws_seen = thaws_now;
                        }
                        for (int j = 0; has_references(k) && lb->have_floor && j < 2; j++) {
                                bool by_bench = (i + (unsigned) j) % 2 == 0; /* neither always goes first */
                                Timing t = {};
                                double w = 0;
                                if (!by_bench && !lb->have_bare)
                                        continue;
                                if ((r = reference_sample(lb, k, !by_bench, &t, &w)) < 0)
                                        return r;
                                (by_bench ? lb->floor : lb->bare)[k * samples + i] = t.total;
                                (by_bench ? lb->floor_reply : lb->bare_reply)[k * samples + i] = t.reply;
                                if (by_bench)
                                        lb->floor_write[k * samples + i] = w;
                        }
                        if (same && i % 2 == 0 && (r = same_sample(lb, k, i, &thaws_seen, &wrong)) < 0)
                                return r;
                }
        for (int k = 0; k < _KIND_MAX; k++) {
                bare_thawer_stop(&lb->thawer[k]);
                bare_thawer_stop(&lb->same_thawer[k]);
        }
        if (wrong > 0) {
                log_error("%u of %u samples had the wrong number of thaws (see above): the figures would not be valid.",
                          wrong, 2 * samples * _KIND_MAX);
                return -EIO;
        }
        lb->rss_after_events = bench_rss_kib(listener_pid);
        lb->n_thaws = bench_listener_statistic(lb->bus, "thaws");
        lb->thawed_first = bench_listener_statistic(lb->bus, "thawed_first");
        lb->yields = bench_listener_statistic(lb->bus, "yields");
        lb->thaw_total = bench_listener_statistic(lb->bus, "thaw_usec_total");
        lb->thaw_max = bench_listener_statistic(lb->bus, "thaw_usec_max");
        return 0;
}

/* Phase 3: a storm, 10,000 pushes for one unit, frozen, sent without waiting. */
static int listener_bench_storm(ListenerBench *lb) {
        int r;

        if ((r = bench_check_interrupted()) < 0)
                return r;
        fprintf(stderr, "[listener] storm of 10000 pushes\n");
        if ((r = refreeze(lb, KIND_PUSH)) < 0)
                return r;
        uint64_t thaws0 = bench_listener_statistic(lb->bus, "thaws"), coalesced0 = bench_listener_statistic(lb->bus, "coalesced");
        usec_t s0 = now_usec(CLOCK_MONOTONIC);
        for (int i = 0; i < 10000; i++) {
                sd_bus_message *m = NULL;
                if ((r = sd_bus_message_new_method_call(lb->bus, &m, "org.standby.Listener1", "/org/standby/Listener1",
                                                        "org.standby.Listener1", "Push")) < 0 ||
                    (r = sd_bus_message_append(m, "ss", kind_units[KIND_PUSH], "storm")) < 0 ||
                    (r = sd_bus_message_set_expect_reply(m, 0)) < 0 || (r = sd_bus_send(lb->bus, m, NULL)) < 0) {
                        sd_bus_message_unref(m);
                        return log_error_errno(r, "Cannot send the storm's push %d: %m", i);
                }
                sd_bus_message_unref(m);
        }
        (void) sd_bus_flush(lb->bus);
        lb->storm_sent = now_usec(CLOCK_MONOTONIC) - s0;
        /* Answered in order after the pushes from this connection. */
        lb->storm_thaws = bench_listener_statistic(lb->bus, "thaws") - thaws0;
        lb->storm_coalesced = bench_listener_statistic(lb->bus, "coalesced") - coalesced0;
        lb->storm_handled = now_usec(CLOCK_MONOTONIC) - s0;
        lb->rss_after_storm = bench_rss_kib(listener_pid);
        return 0;
}

/* Phase 4, idle in standby: every unit frozen, nothing sent to the
 * listener; then (churn_seconds > 0) standby while links and addresses
 * change that no rule is about; then standby ends. */
static int listener_bench_idle(ListenerBench *lb) {
        int r;

        (void) refreeze(lb, KIND_PUSH);
        listener_settle(lb->bus);
        fprintf(stderr, "[listener] idle in standby for %u s\n", lb->idle_seconds);
        uint64_t runs0 = runs(listener_pid);
        (void) poll(NULL, 0, (int) lb->idle_seconds * 1000);
        lb->idle_runs = runs(listener_pid) - runs0;
        if ((r = bench_check_interrupted()) < 0)
                return r;
        if (lb->churn_seconds > 0 && (r = measure_churn(lb->listener_path, lb->bus, lb->churn_seconds, &lb->churn_runs,
                                                        &lb->churn_changes, &lb->churn_seen)) < 0)
                return r;
        lb->in_standby = false;
        if (run_manager("exit", NULL) == USEC_INFINITY)
                return -EIO;
        return 0;
}

/* Latency CDF per event kind, frozen against never frozen. */
static void listener_bench_plot(ListenerBench *lb) {
        char datp[4096], gpp[4096];

        snprintf(datp, sizeof(datp), "%s/latency.dat", bench_output);
        FILE *dat = fopen(datp, "we");
        if (!dat)
                return;
        /* One block per series (sorted samples, cumulative fraction), blank lines between. */
        for (int k = 0; k < _KIND_MAX; k++)
                for (int frz = 0; frz < 2; frz++) {
                        double *v = (frz ? lb->frozen : lb->base) + k * lb->samples;
                        stats_sort(v, lb->samples);
                        fprintf(dat, "# %s %s\n", kind_names[k], frz ? "frozen" : "never-frozen");
                        for (unsigned i = 0; i < lb->samples; i++)
                                fprintf(dat, "%.1f %.4f\n", v[i], (double) (i + 1) / lb->samples);
                        fprintf(dat, "\n\n");
                }
        fclose(dat);
        snprintf(gpp, sizeof(gpp), "%s/latency.gp", bench_output);
        FILE *gp = fopen(gpp, "we");
        if (!gp)
                return;
        fprintf(gp, "set terminal pngcairo size 900,500\nset output '%s/latency.png'\n"
                    "set title 'Event to the service reply (%u samples each)'\n"
                    "set xlabel 'latency (us)'\nset ylabel 'fraction of events'\nset logscale x\n"
                    "set key bottom right\nset grid\nplot ", bench_output, lb->samples);
        for (int i = 0; i < _KIND_MAX * 2; i++)
                fprintf(gp, "%s'%s/latency.dat' index %d using 1:2 with lines lw 2 lc %d dt %d title '%s %s'",
                        i ? ", " : "", bench_output, i, i / 2 + 1, i % 2 ? 1 : 2, kind_names[i / 2],
                        i % 2 ? "frozen" : "never frozen");
        fprintf(gp, "\n");
        fclose(gp);
        if (bench_gnuplot(gpp) >= 0)
                printf("Plot: %s/latency.png\n", bench_output);
}

/* Phase 5: the tables, listener.csv, the plot, and the rest. */
static void listener_bench_report(ListenerBench *lb) {
        unsigned samples = lb->samples;
        char path[4096];

        snprintf(path, sizeof(path), "%s/listener.csv", bench_output);
        FILE *csv = fopen(path, "we");
        if (csv)
                fprintf(csv, "kind,mode,samples,p50_us,p99_us,max_us\n");
        printf("\nEvent to the woken service's reply, %u samples each (us), each after %u ms idle, %s backend\n",
               samples, lb->gap_ms, lb->systemd ? "systemd (FreezeUnit/ThawUnit)" : "cgroupfs");
        printf("\nUntil the service replied (socket, push: the kernel's receive time stamp on the client's socket;\n"
               "dbus-call: the service's clock as it replied, sent in the reply):\n\n");
        print_table(csv, true, samples, lb->base_reply, lb->frozen_reply, lb->have_floor ? lb->floor_reply : NULL,
                    lb->have_bare ? lb->bare_reply : NULL, lb->have_same ? lb->same_reply : NULL);
        printf("\nUntil the client, on the same CPUs, had read it:\n\n");
        print_table(csv, false, samples, lb->base, lb->frozen, lb->have_floor ? lb->floor : NULL,
                    lb->have_bare ? lb->bare : NULL, lb->have_same ? lb->same : NULL);
        if (lb->have_floor)
                printf("\nbench-thawed: the kernel's floor, no listener: the bench writes cgroup.freeze 0 itself right after "
                       "the event\n(that write alone: p50 %.1f us after a connect, %.1f us after a D-Bus call). What "
                       "the listener adds on top\nis frozen - bench-thawed. The references use a second echo server and "
                       "D-Bus service, outside\nstandby's targets, which the listener never sees.\n",
                       stats_percentile(lb->floor_write + KIND_SOCKET * samples, samples, 50),
                       stats_percentile(lb->floor_write + KIND_DBUS_CALL * samples, samples, 50));
        if (lb->have_bare)
                printf("bare-thawed: the least any listener adds: a bare process woken by the server's listening socket, "
                       "or by a\nbus monitor that sees only calls to the service, writes cgroup.freeze 0 (no rules, no "
                       "journal, no parsing,\nno event loop). What standby-listener adds beyond it is its own, with the two "
                       "services' difference.\n");
        if (lb->have_same)
                printf("bare-same: the listener's own service, frozen by the bench behind the journal's back and "
                       "thawed by a bare\nthawer woken by the same event (dbus-call: a call to the service's second "
                       "name, on a connection\nof its own, which the listener's monitor does not see; push: a Push to the bare thawer's name); beyond "
                       "same (p50, p99) is what\nstandby-listener adds on one service.\n");
        listener_bench_plot(lb);

        printf("\nInside the listener, event received to units thawed: mean %.1f us, max %llu us (%llu thaws)\n",
               lb->n_thaws ? (double) lb->thaw_total / (double) lb->n_thaws : 0.0, (unsigned long long) lb->thaw_max,
               (unsigned long long) lb->n_thaws);
        /* With --call-rule=socket the dbus-call samples are socket events too. */
        printf("Socket events thawed before their dispatch: %llu of %u; thaws after which the listener yielded: %llu\n",
               (unsigned long long) lb->thawed_first, samples * (lb->call_rule_socket ? 2 : 1),
               (unsigned long long) lb->yields);
        printf("Listener RSS: %llu KiB after the events, %llu KiB after the storm\n",
               (unsigned long long) lb->rss_after_events, (unsigned long long) lb->rss_after_storm);
        printf("Storm: 10000 pushes sent in %.1f ms, handled in %.1f ms: %llu thaw(s), %llu coalesced\n",
               (double) lb->storm_sent / 1000.0, (double) lb->storm_handled / 1000.0, (unsigned long long) lb->storm_thaws,
               (unsigned long long) lb->storm_coalesced);
        printf("Idle in standby for %u s: the listener ran %llu times\n", lb->idle_seconds,
               (unsigned long long) lb->idle_runs);
        if (lb->churn_seconds > 0)
                printf("Standby for %u s in a namespace whose link and addresses change every second (%llu changes, "
                       "%llu rtnetlink messages seen), no rule about them: the listener ran %llu times\n",
                       lb->churn_seconds, (unsigned long long) lb->churn_changes, (unsigned long long) lb->churn_seen,
                       (unsigned long long) lb->churn_runs);
        if (csv) {
                fprintf(csv, "# rss_kib_after_events=%llu rss_kib_after_storm=%llu storm_thaws=%llu storm_coalesced=%llu "
                             "storm_handled_ms=%.1f idle_seconds=%u idle_runs=%llu churn_seconds=%u churn_changes=%llu "
                             "churn_messages=%llu churn_runs=%llu\n",
                        (unsigned long long) lb->rss_after_events, (unsigned long long) lb->rss_after_storm,
                        (unsigned long long) lb->storm_thaws, (unsigned long long) lb->storm_coalesced,
                        (double) lb->storm_handled / 1000.0, lb->idle_seconds, (unsigned long long) lb->idle_runs,
                        lb->churn_seconds, (unsigned long long) lb->churn_changes, (unsigned long long) lb->churn_seen,
                        (unsigned long long) lb->churn_runs);
                fclose(csv);
                printf("\nResults: %s\n", path);
        }
}

int bench_listener(const char *listener_path, unsigned samples, unsigned idle_seconds, unsigned churn_seconds,
                   unsigned gap_ms, bool systemd, bool call_rule_socket) {
        _cleanup_(listener_bench_done) ListenerBench lb = {
                .listener_path = listener_path, .samples = samples, .idle_seconds = idle_seconds,
                .churn_seconds = churn_seconds, .gap_ms = gap_ms,
                .systemd = systemd, .call_rule_socket = call_rule_socket, .push_conn = -EBADF,
        };
        int r;

        /* systemd answers FreezeUnit and ThawUnit once cgroup.events says so,
         * and the kernel notifies that file at most once per 10 ms (a jiffy
         * more at HZ=250): a thaw 5 ms after the refreeze would time that
         * limit (ThawUnit then takes 7.9 ms). Every gap, in every mode alike, clears it. */
        if (systemd && gap_ms < SYSTEMD_MIN_GAP_MS) {
                fprintf(stderr, "[listener] systemd backend: idle gap %u ms instead of %u (cgroup.events rate limit)\n",
                        SYSTEMD_MIN_GAP_MS, gap_ms);
                lb.gap_ms = SYSTEMD_MIN_GAP_MS;
        }
        for (int k = 0; k < _KIND_MAX; k++) {
                lb.thawer[k] = (BareThawer) { .arm_fd = -EBADF, .ack_fd = -EBADF };
                lb.reference_cg[k] = -EBADF;
                lb.same_thawer[k] = (BareThawer) { .arm_fd = -EBADF, .ack_fd = -EBADF };
                lb.same_cg[k] = -EBADF;
        }
        if ((r = listener_bench_start(&lb)) < 0 || (r = listener_bench_rounds(&lb)) < 0 ||
            (r = listener_bench_storm(&lb)) < 0 || (r = listener_bench_idle(&lb)) < 0)
                return r;
        listener_bench_report(&lb);
        return 0;
}

void bench_stop_services(void) {
        if (listener_pid > 0) {
                kill(listener_pid, SIGTERM);
                waitpid(listener_pid, NULL, 0);
                listener_pid = 0;
        }
        if (dbus_pid > 0) {
                kill(dbus_pid, SIGTERM);
                waitpid(dbus_pid, NULL, 0);
                dbus_pid = 0;
        }
}
