/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Events for the compare mode: the same seeded schedule of events, during the
 * same windows, under every strategy. Event-driven services in their own
 * units: an echo server that clients connect to, a push receiver holding a
 * TCP connection to the bench's push server, a D-Bus service to which the
 * bench, as a push daemon would, delivers a call, redis-server and memcached
 * answering requests, a link watcher woken by a veth end going up or down in
 * a network namespace of the bench's own, and a power-key handler reading
 * evdev records. The listener runs throughout with a rule for each; under
 * the slack strategy it has nothing to do (nothing is frozen), under freeze
 * it wakes them. Each event is timed to the service's reply; one without a
 * reply within 2 s is missed. */
#include <fcntl.h>
#include <linux/input.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netlink/route/link.h>
#include <netlink/route/link/veth.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <systemd/sd-bus.h>

#include "bench.h"
#include "log.h"
#include "macro.h"

#define EVENT_DEADLINE_USEC (2 * USEC_PER_SEC)
#define LINK_NAME "sbb0"
#define PUSH_BUS_NAME "org.standby.BenchPush"

/* A push over D-Bus: a method call to the service's well-known name. */
static bool dbus_push(Events *e) {
        sd_bus_message *m = NULL, *reply = NULL;
        bool ok = sd_bus_message_new_method_call(e->bus, &m, PUSH_BUS_NAME, "/org/standby/Bench", "org.standby.Bench",
                                                 "Ping") >= 0 &&
                  sd_bus_call(e->bus, m, EVENT_DEADLINE_USEC, NULL, &reply) >= 0;
        sd_bus_message_unref(m);
        sd_bus_message_unref(reply);
        return ok;
}

const char * const events_kind_names[_EVENTS_KIND_MAX] = {
        [EVENTS_CLIENT] = "client", [EVENTS_PUSH] = "push",   [EVENTS_DBUS] = "dbus",   [EVENTS_REDIS] = "redis",
        [EVENTS_MEMCACHED] = "memcached", [EVENTS_LINK] = "link", [EVENTS_INPUT] = "input",
};

/* Waits (bounded) for a tick: a service's reply. */
static bool wait_tick(int fd, usec_t deadline) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int t = deadline_poll_timeout(deadline);
        return t > 0 && poll(&p, 1, t) == 1;
}

/* A network namespace of the bench's own with a veth pair (sbb0 and its
 * peer, both down) and an rtnetlink socket in it; the bench itself stays in
 * its namespace. Its loopback-only world keeps the host's links untouched. */
static int link_setup(Events *e) {
        _cleanup_close_ int self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
        int r;

        if (self < 0 || unshare(CLONE_NEWNET) < 0)
                return negative_errno();
        e->netns_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
        r = e->netns_fd < 0 ? negative_errno() : 0;
        e->nl = r >= 0 ? nl_socket_alloc() : NULL;
        if (r >= 0 && (!e->nl || nl_connect(e->nl, NETLINK_ROUTE) < 0))
                r = -EIO;
        /* libnl's errors are its own (NLE_*): report them as EIO. */
        if (r >= 0 && rtnl_link_veth_add(e->nl, LINK_NAME, "sbb1", getpid()) < 0)
                r = -EIO;
        if (r >= 0 && rtnl_link_get_kernel(e->nl, 0, LINK_NAME, &e->link) < 0)
                r = -EIO;
        if (setns(self, CLONE_NEWNET) < 0)
                return log_error_errno(negative_errno(), "Cannot return to the bench's network namespace: %m");
        return r;
}

static int link_toggle(Events *e) {
        struct rtnl_link *change = rtnl_link_alloc();
        int r;

        if (!change)
                return -ENOMEM;
        if (e->link_up)
                rtnl_link_unset_flags(change, IFF_UP);
        else
                rtnl_link_set_flags(change, IFF_UP);
        r = rtnl_link_change(e->nl, e->link, change, 0) < 0 ? -EIO : 0;
        rtnl_link_put(change);
        if (r >= 0)
                e->link_up = !e->link_up;
        return r;
}

/* A power-button press as evdev reports it, to every reader: a real device
 * hands each of its openers a copy; here each reader has its FIFO. */
static int press_power(Events *e) {
        struct input_event ev[4] = {
                { .type = EV_KEY, .code = KEY_POWER, .value = 1 }, { .type = EV_SYN, .code = SYN_REPORT },
                { .type = EV_KEY, .code = KEY_POWER, .value = 0 }, { .type = EV_SYN, .code = SYN_REPORT },
        };
        if (write(e->input_listener, ev, sizeof(ev)) != (ssize_t) sizeof(ev) ||
            write(e->input_handler, ev, sizeof(ev)) != (ssize_t) sizeof(ev))
                return -EIO;
        return 0;
}

/* The link watcher and the power-key handler, with their rules. */
static int link_and_input_setup(Events *e, const char *workload) {
        char path[2][300], ns[64], rule[600];
        int r;

        r = link_setup(e);
        if (r < 0)
                fprintf(stderr, "standby-bench: no network namespace with a veth pair (%s): link events are left out\n",
                        strerror(-r));
        else {
                snprintf(ns, sizeof(ns), "/proc/%d/fd/%d", (int) getpid(), e->netns_fd);
                char *watcher[] = { (char *) workload, "link-watcher", "--netns", ns, "--tick-fd", "3", NULL };
                r = scratch_spawn_ticking(&scratch, "workloads.slice/link-events.service", watcher, NULL, &e->link_tick);
                if (r < 0 || !wait_tick(e->link_tick, now_usec(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC))
                        return log_error_errno(r < 0 ? r : -ETIMEDOUT, "The link watcher did not start: %m");
                r = bench_write_rule("50-link.rule", "[Match]\nEvent=link\nInterface=" LINK_NAME "\n[Action]\n"
                                                     "Thaw=link-events.service\nFor=1s\n");
                if (r < 0)
                        return r;
                e->have[EVENTS_LINK] = true;
        }

        for (int i = 0; i < 2; i++) {
                snprintf(path[i], sizeof(path[i]), "%s/input-%s", tmpdir, i == 0 ? "listener" : "handler");
                (void) unlink(path[i]);
                if (mkfifo(path[i], 0600) < 0)
                        return log_error_errno(negative_errno(), "Cannot create %s: %m", path[i]);
        }
        /* Read-write: a write never blocks on, nor fails for, a reader not there yet. */
        e->input_listener = open(path[0], O_RDWR | O_NONBLOCK | O_CLOEXEC);
        e->input_handler = open(path[1], O_RDWR | O_NONBLOCK | O_CLOEXEC);
        if (e->input_listener < 0 || e->input_handler < 0)
                return log_error_errno(negative_errno(), "Cannot open the input FIFOs in %s: %m", tmpdir);
        char *handler[] = { (char *) workload, "input-handler", "--input", path[1], "--tick-fd", "3", NULL };
        r = scratch_spawn_ticking(&scratch, "workloads.slice/input-events.service", handler, NULL, &e->input_tick);
        if (r < 0 || !wait_tick(e->input_tick, now_usec(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC))
                return log_error_errno(r < 0 ? r : -ETIMEDOUT, "The power-key handler did not start: %m");
        snprintf(rule, sizeof(rule), "[Match]\nEvent=input\nDevice=%s\nKey=KEY_POWER\nValue=1\n[Action]\n"
                                     "Thaw=input-events.service\nFor=1s\n", path[0]);
        r = bench_write_rule("60-input.rule", rule);
        if (r < 0)
                return r;
        e->have[EVENTS_INPUT] = true;
        return 0;
}

static int listen_on(int port) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t) port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        if (fd < 0)
                return negative_errno();
        (void) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(fd, 4) < 0) {
                int r = negative_errno();
                safe_close(fd);
                return r;
        }
        return fd;
}

/* A request to a real daemon and the start of its answer, with the deadline. */
static bool ask(int port, const char *request, const char *answer) {
        int fd = bench_tcp_connect(port);
        char buf[256] = {};
        size_t len = 0;
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + EVENT_DEADLINE_USEC;
        bool ok = false;

        if (fd < 0)
                return false;
        if (write(fd, request, strlen(request)) == (ssize_t) strlen(request))
                while (len < strlen(answer)) {
                        struct pollfd p = { .fd = fd, .events = POLLIN };
                        int t = deadline_poll_timeout(deadline);
                        if (t == 0 || poll(&p, 1, t) != 1)
                                break;
                        ssize_t k = read(fd, buf + len, sizeof(buf) - 1 - len);
                        if (k <= 0)
                                break;
                        len += (size_t) k;
                        ok = strneq(buf, answer, strlen(answer));
                }
        safe_close(fd);
        return ok;
}

int events_daemon_kind(const char *name) {
        if (streq(name, "redis-server"))
                return EVENTS_REDIS;
        if (streq(name, "memcached"))
                return EVENTS_MEMCACHED;
        return -EINVAL;
}

/* The first executable file called name in PATH (the default search path
 * when it is unset), as execvp() would find it. */
static int find_program(const char *name, char **ret) {
        const char *path = getenv("PATH") ?: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

        for (const char *p = path;;) {
                size_t n = strcspn(p, ":");
                _cleanup_free_ char *candidate = NULL;
                struct stat st;

                /* An empty entry is the current directory, as for execvp(). */
                if (asprintf(&candidate, "%.*s/%s", (int) n, n > 0 ? p : ".", name) < 0)
                        return -ENOMEM;
                if (stat(candidate, &st) == 0 && S_ISREG(st.st_mode) && access(candidate, X_OK) == 0) {
                        *ret = TAKE_PTR(candidate);
                        return 0;
                }
                if (!p[n])
                        return -ENOENT;
                p += n + 1;
        }
}

int events_find_daemons(Events *e, char **names) {
        for (char **d = names; d && *d; d++) {
                int kind = events_daemon_kind(*d), r;
                if (kind < 0)
                        return log_error_errno(kind, "Unknown daemon \"%s\" (redis-server, memcached).", *d);
                if (e->daemon_path[kind])
                        continue; /* listed twice */
                r = find_program(*d, &e->daemon_path[kind]);
                if (r == -ENOENT)
                        return log_error_errno(r, "%s is not installed (not found in PATH): its events and its row "
                                                  "belong to the comparison. Install it (scripts/install-deps.sh), "
                                                  "or leave it out explicitly with --daemons.", *d);
                if (r < 0)
                        return log_error_errno(r, "Cannot look for %s in PATH: %m", *d);
        }
        return 0;
}

int events_setup(Events *e, const char *listener_path, const char *workload) {
        char port_arg[2][16];
        int r;

        e->echo_port = 30000 + (int) (getpid() % 2700); /* below the ephemeral range */
        e->push_port = e->echo_port + 1;
        e->redis_port = e->echo_port + 2;
        e->memcached_port = e->echo_port + 3;
        e->have[EVENTS_CLIENT] = e->have[EVENTS_PUSH] = true;
        snprintf(port_arg[0], sizeof(port_arg[0]), "%d", e->echo_port);
        snprintf(port_arg[1], sizeof(port_arg[1]), "%d", e->push_port);

        e->push_listen = listen_on(e->push_port);
        if (e->push_listen < 0)
                return log_error_errno(e->push_listen, "Cannot listen for the push receiver: %m");
        char *echo[] = { (char *) workload, "echo-server", "--port", port_arg[0], NULL };
        char *push[] = { (char *) workload, "push-receiver", "--port", port_arg[1], NULL };
        if ((r = scratch_spawn(&scratch, "workloads.slice/echo-events.service", echo, NULL)) < 0 ||
            (r = scratch_spawn(&scratch, "workloads.slice/push-events.service", push, NULL)) < 0)
                return log_error_errno(r, "Failed to start the event-driven services: %m");

        /* Real daemons, answering real requests: those events_find_daemons
         * found. One that does not start is an error. */
        char rport[16], mport[16];
        snprintf(rport, sizeof(rport), "%d", e->redis_port);
        snprintf(mport, sizeof(mport), "%d", e->memcached_port);
        char *redis[] = { e->daemon_path[EVENTS_REDIS], "--port", rport, "--bind", "127.0.0.1", "--save", "",
                          "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning", NULL };
        char *memcached[] = { e->daemon_path[EVENTS_MEMCACHED], "-p", mport, "-l", "127.0.0.1", "-U", "0", "-u", "root", NULL };
        if (redis[0]) {
                if ((r = scratch_spawn(&scratch, "workloads.slice/redis.service", redis, NULL)) < 0)
                        return log_error_errno(r, "Failed to start %s: %m", redis[0]);
                e->have[EVENTS_REDIS] = true;
        }
        if (memcached[0]) {
                if ((r = scratch_spawn(&scratch, "workloads.slice/memcached.service", memcached, NULL)) < 0)
                        return log_error_errno(r, "Failed to start %s: %m", memcached[0]);
                e->have[EVENTS_MEMCACHED] = true;
        }
        struct pollfd p = { .fd = e->push_listen, .events = POLLIN };
        if (poll(&p, 1, 10000) != 1 || (e->push_conn = accept4(e->push_listen, NULL, NULL, SOCK_CLOEXEC)) < 0)
                return log_error_errno(-ETIMEDOUT, "The push receiver did not connect.");

        if ((r = bench_start_dbus()) < 0)
                return log_error_errno(r, "Failed to start dbus-daemon: %m");
        char rules[400];
        snprintf(rules, sizeof(rules), "%s/rules", tmpdir);
        (void) mkdir(rules, 0755);
        if ((r = bench_write_rule("10-echo.rule", "[Match]\nEvent=socket\nUnit=echo-events.service\n[Action]\n"
                                                  "Thaw=echo-events.service\nFor=1s\n")) < 0 ||
            (r = bench_write_rule("20-push.rule", "[Match]\nEvent=socket\nUnit=push-events.service\n[Action]\n"
                                                  "Thaw=push-events.service\nFor=1s\n")) < 0 ||
            (r = bench_write_rule("30-redis.rule", "[Match]\nEvent=socket\nUnit=redis.service\n[Action]\n"
                                                   "Thaw=redis.service\nFor=1s\n")) < 0 ||
            (r = bench_write_rule("40-memcached.rule", "[Match]\nEvent=socket\nUnit=memcached.service\n[Action]\n"
                                                       "Thaw=memcached.service\nFor=1s\n")) < 0 ||
            (r = bench_write_rule("70-dbus.rule", "[Match]\nEvent=dbus-call\nBusName=" PUSH_BUS_NAME "\n[Action]\n"
                                                  "Thaw=dbus-events.service\nFor=1s\n")) < 0 ||
            (r = link_and_input_setup(e, workload)) < 0)
                return r;
        if ((r = bench_start_listener(listener_path, e->netns_fd)) < 0)
                return log_error_errno(r, "standby-listener did not start: %m");
        /* A process woken by IPC: an unfrozen peer (in the bench's own cgroup,
         * outside the targets) broadcasts on the bus; the receiver is a unit. */
        char *receiver[] = { (char *) workload, "broadcast-receiver", "--bus-address", bus_address, NULL };
        char *broadcaster[] = { (char *) workload, "broadcaster", "--bus-address", bus_address, "--period-ms", "50", NULL };
        if ((r = scratch_spawn(&scratch, "workloads.slice/ipc.service", receiver, NULL)) < 0 ||
            (r = scratch_spawn(&scratch, "peer.slice/broadcaster.service", broadcaster, NULL)) < 0)
                return log_error_errno(r, "Failed to start the IPC pair: %m");
        e->have_ipc = true;

        /* A D-Bus service that a push daemon (the bench) calls. */
        char *service[] = { (char *) workload, "bus-service", "--bus-address", bus_address, "--bus-name", PUSH_BUS_NAME, NULL };
        if ((r = scratch_spawn(&scratch, "workloads.slice/dbus-events.service", service, NULL)) < 0)
                return log_error_errno(r, "Failed to start the D-Bus service: %m");
        if ((r = sd_bus_new(&e->bus)) < 0 || (r = sd_bus_set_address(e->bus, bus_address)) < 0 ||
            (r = sd_bus_set_bus_client(e->bus, 1)) < 0 || (r = sd_bus_start(e->bus)) < 0)
                return log_error_errno(r, "Cannot connect to the bench's bus: %m");
        e->have[EVENTS_DBUS] = true;

        /* The servers may still be binding: a bounded wait for their first answers. */
        for (int i = 0; i < 500; i++) {
                int fd = bench_tcp_connect(e->echo_port);
                bool ok = fd >= 0 && bench_echo(fd) >= 0;
                safe_close(fd);
                if (ok && e->have[EVENTS_REDIS])
                        ok = ask(e->redis_port, "PING\r\n", "+PONG");
                if (ok && e->have[EVENTS_MEMCACHED])
                        ok = ask(e->memcached_port, "version\r\n", "VERSION");
                if (ok)
                        ok = dbus_push(e);
                if (ok)
                        return 0;
                (void) poll(NULL, 0, 10);
        }
        return log_error_errno(-ETIMEDOUT, "The event-driven servers did not answer.");
}

void events_done(Events *e) {
        char path[300];

        e->bus = sd_bus_flush_close_unref(e->bus);
        bench_stop_services();
        safe_close(e->push_conn);
        safe_close(e->push_listen);
        safe_close(e->link_tick);
        safe_close(e->input_tick);
        safe_close(e->input_listener);
        safe_close(e->input_handler);
        for (int i = 0; i < 2; i++) {
                snprintf(path, sizeof(path), "%s/input-%s", tmpdir, i == 0 ? "listener" : "handler");
                (void) unlink(path);
        }
        if (e->link)
                rtnl_link_put(e->link);
        nl_socket_free(e->nl);
        /* The namespace, with its veth pair, goes with its last user: this fd
         * and the link watcher, which scratch_destroy ends. */
        safe_close(e->netns_fd);
        for (int k = 0; k < _EVENTS_KIND_MAX; k++)
                free(e->daemon_path[k]);
        *e = EVENTS_INIT;
}

/* One event; returns its latency, or USEC_INFINITY when missed. */
static usec_t fire(Events *e, int kind) {
        usec_t t0 = now_usec(CLOCK_MONOTONIC);
        char c;

        if (kind == EVENTS_REDIS || kind == EVENTS_MEMCACHED) {
                bool ok = kind == EVENTS_REDIS ? ask(e->redis_port, "PING\r\n", "+PONG")
                                               : ask(e->memcached_port, "version\r\n", "VERSION");
                return ok ? now_usec(CLOCK_MONOTONIC) - t0 : USEC_INFINITY;
        }

        if (kind == EVENTS_DBUS)
                return dbus_push(e) ? now_usec(CLOCK_MONOTONIC) - t0 : USEC_INFINITY;

        if (kind == EVENTS_LINK || kind == EVENTS_INPUT) {
                int tick = kind == EVENTS_LINK ? e->link_tick : e->input_tick;
                bench_drain(tick);
                t0 = now_usec(CLOCK_MONOTONIC);
                if ((kind == EVENTS_LINK ? link_toggle(e) : press_power(e)) < 0 ||
                    !wait_tick(tick, t0 + EVENT_DEADLINE_USEC))
                        return USEC_INFINITY;
                return now_usec(CLOCK_MONOTONIC) - t0;
        }

        if (kind == EVENTS_CLIENT) {
                /* A client connects and asks. */
                int fd = bench_tcp_connect(e->echo_port);
                struct pollfd p = { .fd = fd, .events = POLLIN };
                bool ok = fd >= 0 && write(fd, "x", 1) == 1 &&
                          poll(&p, 1, (int) (EVENT_DEADLINE_USEC / USEC_PER_MSEC)) == 1 && read(fd, &c, 1) == 1;
                safe_close(fd);
                return ok ? now_usec(CLOCK_MONOTONIC) - t0 : USEC_INFINITY;
        }
        /* The push server sends on the connection the receiver holds. */
        struct pollfd p = { .fd = e->push_conn, .events = POLLIN };
        if (write(e->push_conn, "m", 1) != 1)
                return USEC_INFINITY;
        if (poll(&p, 1, (int) (EVENT_DEADLINE_USEC / USEC_PER_MSEC)) != 1 || read(e->push_conn, &c, 1) != 1)
                return USEC_INFINITY;
        return now_usec(CLOCK_MONOTONIC) - t0;
}

int events_run(Events *e, usec_t window, unsigned n, EventSamples *out) {
        usec_t start = now_usec(CLOCK_MONOTONIC);
        _cleanup_free_ usec_t *times = calloc(n, sizeof(usec_t));
        _cleanup_free_ int *kinds = calloc(n, sizeof(int));

        if (n > 0 && (!times || !kinds))
                return -ENOMEM;
        /* The schedule: seeded, so every strategy sees the same one. */
        for (unsigned i = 0; i < n; i++) {
                times[i] = (usec_t) (rand_r(&e->seed) % (unsigned) (window / 2)) + window / 4 * (i % 2);
                do
                        kinds[i] = (int) (rand_r(&e->seed) % _EVENTS_KIND_MAX);
                while (!e->have[kinds[i]]);
        }
        for (unsigned i = 1; i < n; i++)
                for (unsigned k = i; k > 0 && times[k] < times[k - 1]; k--) {
                        usec_t t = times[k];
                        times[k] = times[k - 1];
                        times[k - 1] = t;
                }
        for (unsigned i = 0; i < n; i++) {
                usec_t at = start + times[i];
                struct timespec ts = { (time_t) (at / USEC_PER_SEC), (long) (at % USEC_PER_SEC) * 1000 };
                /* The schedule's next moment: a planned time, not a wait for an event. */
                while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
                        ;
                usec_t lat = fire(e, kinds[i]);
                EventSamples *s = &out[kinds[i]];
                if (lat == USEC_INFINITY)
                        s->missed++;
                else if (s->n < EVENTS_MAX_SAMPLES)
                        s->usec[s->n++] = (double) lat;
        }
        usec_t end = start + window;
        struct timespec ts = { (time_t) (end / USEC_PER_SEC), (long) (end % USEC_PER_SEC) * 1000 };
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
                ;
        return 0;
}
