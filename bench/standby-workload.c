/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* standby-workload: one program per way user space wakes the CPU. Each wakeup
 * writes one byte to the tick fd (non-blocking; a full pipe drops ticks), so a
 * test or the bench sees progress stop under standby and resume after it. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <linux/input.h>
#include <linux/rtnetlink.h>
#include <sched.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

static int tick_fd = -1;
static long period_ms = 100;

static void tick(void) {
        if (tick_fd >= 0) {
                ssize_t n = write(tick_fd, "t", 1);
                (void) n; /* EAGAIN: the reader is behind; dropping is fine */
        }
}

static void *loop_nanosleep(void *arg) {
        struct timespec ts = { .tv_sec = period_ms / 1000, .tv_nsec = (period_ms % 1000) * 1000000L };
        for (;;) {
                /* The timer under test, not a wait for an event: its
                 * expiries (and their slack) are what the bench counts. */
                nanosleep(&ts, NULL);
                tick();
        }
        return NULL;
}

/* As glibc's sleep() does: one buffer for the request and the remainder. */
static void *loop_sleep(void *arg) {
        for (;;) {
                struct timespec ts = { .tv_sec = period_ms / 1000, .tv_nsec = (period_ms % 1000) * 1000000L };
                nanosleep(&ts, &ts);
                tick();
        }
        return NULL;
}

static void *loop_poll(void *arg) {
        for (;;) {
                poll(NULL, 0, (int) period_ms);
                tick();
        }
        return NULL;
}

static void *loop_select(void *arg) {
        for (;;) {
                struct timeval tv = { .tv_sec = period_ms / 1000, .tv_usec = (period_ms % 1000) * 1000 };
                select(0, NULL, NULL, NULL, &tv);
                tick();
        }
        return NULL;
}

static void *loop_epoll(void *arg) {
        int ep = epoll_create1(EPOLL_CLOEXEC);
        struct epoll_event ev;
        for (;;) {
                epoll_wait(ep, &ev, 1, (int) period_ms);
                tick();
        }
        return NULL;
}

static void *loop_timerfd(void *arg) {
        int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
        struct itimerspec its = {
                .it_interval = { period_ms / 1000, (period_ms % 1000) * 1000000L },
                .it_value = { period_ms / 1000, (period_ms % 1000) * 1000000L },
        };
        uint64_t n;
        timerfd_settime(fd, 0, &its, NULL);
        for (;;)
                if (read(fd, &n, sizeof(n)) == sizeof(n))
                        tick();
        return NULL;
}

static void *loop_posix_timer(void *arg) {
        /* Delivery by signal to this thread, taken synchronously with sigwaitinfo. */
        struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGRTMIN };
        struct itimerspec its = {
                .it_interval = { period_ms / 1000, (period_ms % 1000) * 1000000L },
                .it_value = { period_ms / 1000, (period_ms % 1000) * 1000000L },
        };
        sigset_t set;
        timer_t t;

        sigemptyset(&set);
        sigaddset(&set, SIGRTMIN);
        pthread_sigmask(SIG_BLOCK, &set, NULL);
        sev._sigev_un._tid = (pid_t) syscall(SYS_gettid);
        timer_create(CLOCK_MONOTONIC, &sev, &t);
        timer_settime(t, 0, &its, NULL);
        for (;;)
                if (sigwaitinfo(&set, NULL) > 0)
                        tick();
        return NULL;
}

static void *loop_futex(void *arg) {
        static atomic_int word;
        for (;;) {
                struct timespec ts = { .tv_sec = period_ms / 1000, .tv_nsec = (period_ms % 1000) * 1000000L };
                /* Nobody wakes the futex: only its timeout does. */
                syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
                tick();
        }
        return NULL;
}

static void *loop_busy(void *arg) {
        volatile uint64_t x = 0;
        for (;;) {
                for (int i = 0; i < 1000000; i++)
                        x++;
                tick();
        }
        return NULL;
}

/* An event-driven TCP server on 127.0.0.1:port: echoes each line back. It
 * wakes only for its clients, like a real daemon. */
static int server_port;

/* A client of a server at 127.0.0.1:--port, as a mail or chat client keeps
 * one: it answers each 'm' (a message) with 'r', and sends 'k' (a
 * keepalive, a mail check) at every multiple of the period in wall-clock
 * time, so that the server knows when each was due. A run missed while the
 * process could not run is not made up. It reconnects once a second while
 * the server is away. */
static int client_connect(void) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t) server_port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        for (;;) {
                int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (fd >= 0 && connect(fd, (struct sockaddr *) &sa, sizeof(sa)) == 0)
                        return fd;
                if (fd >= 0)
                        close(fd);
                sleep(1);
        }
}

static long long wall_ms(void) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        return (long long) now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

static void *loop_client(void *arg) {
        int fd = client_connect();
        long long due = (wall_ms() / period_ms + 1) * period_ms;
        for (;;) {
                long long now = wall_ms();
                if (now >= due) {
                        /* Sent when noticed, however late; the dues that
                         * passed meanwhile are not made up. */
                        if (write(fd, "k", 1) != 1) {
                                close(fd);
                                fd = client_connect();
                        }
                        tick();
                        due = (now / period_ms + 1) * period_ms;
                        continue;
                }
                struct pollfd p = { .fd = fd, .events = POLLIN };
                if (poll(&p, 1, (int) (due - now)) <= 0)
                        continue;
                char buf[256];
                ssize_t got = read(fd, buf, sizeof(buf));
                if (got <= 0) {
                        close(fd);
                        fd = client_connect();
                        continue;
                }
                for (ssize_t i = 0; i < got; i++)
                        if (buf[i] == 'm' && write(fd, "r", 1) != 1)
                                break;
                tick();
        }
        return NULL;
}

static void *loop_echo_server(void *arg) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t) server_port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        struct pollfd pfds[64];
        int one = 1, n = 1;

        pfds[0].fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        setsockopt(pfds[0].fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(pfds[0].fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(pfds[0].fd, 16) < 0) {
                fprintf(stderr, "standby-workload: cannot listen on 127.0.0.1:%d: %s\n", server_port, strerror(errno));
                exit(1);
        }
        pfds[0].events = POLLIN;
        tick(); /* listening */
        for (;;) {
                if (poll(pfds, (nfds_t) n, -1) < 0)
                        continue;
                if ((pfds[0].revents & POLLIN) && n < 64) {
                        int c = accept4(pfds[0].fd, NULL, NULL, SOCK_CLOEXEC);
                        if (c >= 0)
                                pfds[n++] = (struct pollfd) { .fd = c, .events = POLLIN };
                }
                for (int i = 1; i < n; i++) {
                        char buf[512];
                        ssize_t k;
                        if (!(pfds[i].revents & (POLLIN | POLLHUP)))
                                continue;
                        k = read(pfds[i].fd, buf, sizeof(buf));
                        if (k <= 0) {
                                close(pfds[i].fd);
                                pfds[i--] = pfds[--n];
                                continue;
                        }
                        if (write(pfds[i].fd, buf, (size_t) k) == k)
                                tick();
                }
        }
        return NULL;
}

/* An event-driven push receiver: holds a TCP connection to a push server at
 * 127.0.0.1:port and acknowledges every message with one byte. */
static void *loop_push_receiver(void *arg) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t) server_port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        char buf[512];

        if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                fprintf(stderr, "standby-workload: cannot reach the push server at 127.0.0.1:%d: %s\n", server_port,
                        strerror(errno));
                exit(1);
        }
        tick(); /* connected */
        for (;;) {
                ssize_t k = read(fd, buf, sizeof(buf));
                if (k <= 0)
                        exit(0); /* the server went away */
                if (write(fd, "a", 1) == 1)
                        tick();
        }
        return NULL;
}

static const char *bus_address, *bus_name = "org.standby.BenchService";
/* A second name bus-service owns (--bus-alias), on a second connection of
 * the same process: calls to it reach the same process, but not a monitor
 * watching calls to bus_name (dbus-daemon matches destination= against
 * every name the addressed connection owns). */
static const char *bus_alias;

/* Connects to bus_address (default: the system bus) or exits. */
static sd_bus *bus_connect(void) {
        sd_bus *bus = NULL;
        if (sd_bus_new(&bus) < 0 || sd_bus_set_address(bus, bus_address ? bus_address : "unix:path=/run/dbus/system_bus_socket") < 0 ||
            sd_bus_set_bus_client(bus, 1) < 0 || sd_bus_start(bus) < 0) {
                fprintf(stderr, "standby-workload: cannot reach %s\n", bus_address ? bus_address : "the system bus");
                exit(1);
        }
        return bus;
}

/* Serves the bus until it fails. */
static void bus_serve(sd_bus *bus) {
        for (;;) {
                int r = sd_bus_process(bus, NULL);
                if (r < 0)
                        exit(1);
                if (r == 0 && sd_bus_wait(bus, UINT64_MAX) < 0)
                        exit(1);
        }
}

/* A process woken by IPC from an unfrozen peer: subscribes to the
 * org.standby.Bench.Tick broadcast on bus_address and handles each one. */
static int on_broadcast(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        tick();
        return 0;
}

static void *loop_broadcast_receiver(void *arg) {
        sd_bus *bus = bus_connect();

        if (sd_bus_add_match(bus, NULL, "type='signal',interface='org.standby.Bench',member='Tick'", on_broadcast, NULL) < 0) {
                fprintf(stderr, "standby-workload: cannot subscribe to the broadcasts\n");
                exit(1);
        }
        tick(); /* subscribed */
        bus_serve(bus);
        return NULL;
}

/* The unfrozen peer: broadcasts org.standby.Bench.Tick every period. */
static void *loop_broadcaster(void *arg) {
        sd_bus *bus = bus_connect();
        struct timespec ts = { .tv_sec = period_ms / 1000, .tv_nsec = (period_ms % 1000) * 1000000L };

        for (;;) {
                if (sd_bus_emit_signal(bus, "/org/standby/Bench", "org.standby.Bench", "Tick", "") < 0 || sd_bus_flush(bus) < 0)
                        exit(1);
                tick();
                nanosleep(&ts, NULL); /* the broadcast period itself */
        }
        return NULL;
}

/* A D-Bus service owning bus_name on bus_address, answering
 * org.standby.Bench.Ping with "pong", and Stamp with the CLOCK_MONOTONIC
 * time (us) at which it replies (the bench's end point for a D-Bus call,
 * whose reply carries no kernel time stamp): woken only by its callers. */

static int ping(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        tick();
        return sd_bus_reply_method_return(m, "s", "pong");
}

static int stamp(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct timespec ts;

        tick();
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return sd_bus_reply_method_return(m, "t", (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u);
}

static const sd_bus_vtable bench_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("Ping", "", "s", ping, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Stamp", "", "t", stamp, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END
};

/* A connection that owns name and serves bench_vtable. */
static sd_bus *bus_serving(const char *name) {
        sd_bus *bus = bus_connect();

        if (sd_bus_add_object_vtable(bus, NULL, "/org/standby/Bench", "org.standby.Bench", bench_vtable, NULL) < 0 ||
            sd_bus_request_name(bus, name, 0) < 0) {
                fprintf(stderr, "standby-workload: cannot serve %s on %s\n", name, bus_address ? bus_address : "the system bus");
                exit(1);
        }
        return bus;
}

static void *serve_alias(void *arg) {
        bus_serve(arg);
        return NULL;
}

static void *loop_bus_service(void *arg) {
        sd_bus *bus = bus_serving(bus_name);
        pthread_t alias_thread;

        if (bus_alias && pthread_create(&alias_thread, NULL, serve_alias, bus_serving(bus_alias)) != 0) {
                fprintf(stderr, "standby-workload: cannot start the thread serving %s\n", bus_alias);
                exit(1);
        }
        tick(); /* owns its names */
        bus_serve(bus);
        return NULL;
}

/* A network-aware service (a mail client that reconnects when a link comes
 * up, say): subscribed to rtnetlink's link group, it handles every link
 * message. --netns PATH puts it in that network namespace first. */
static const char *netns_path, *input_path;

static void *loop_link_watcher(void *arg) {
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = RTMGRP_LINK };
        char buf[8192];
        int fd;

        if (netns_path) {
                int ns = open(netns_path, O_RDONLY | O_CLOEXEC);
                if (ns < 0 || setns(ns, CLONE_NEWNET) < 0) {
                        fprintf(stderr, "standby-workload: cannot enter the network namespace %s: %s\n", netns_path,
                                strerror(errno));
                        exit(1);
                }
                close(ns);
        }
        fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
        if (fd < 0 || bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                fprintf(stderr, "standby-workload: cannot subscribe to link messages: %s\n", strerror(errno));
                exit(1);
        }
        tick(); /* subscribed */
        for (;;) {
                ssize_t k = recv(fd, buf, sizeof(buf), 0);
                if (k < 0 && errno != ENOBUFS && errno != EINTR)
                        exit(1);
                for (struct nlmsghdr *h = (struct nlmsghdr *) buf; k > 0 && NLMSG_OK(h, (size_t) k); h = NLMSG_NEXT(h, k))
                        if (h->nlmsg_type == RTM_NEWLINK || h->nlmsg_type == RTM_DELLINK)
                                tick();
        }
        return NULL;
}

/* A power-key handler (what a desktop runs): reads struct input_event
 * records from --input PATH, an evdev device or a FIFO carrying the same
 * records, and handles every KEY_POWER press. */
static void *loop_input_handler(void *arg) {
        struct input_event ev[64];
        /* A FIFO is opened read-write, so that it never reports a hang-up. */
        int fd = input_path ? open(input_path, O_RDWR | O_CLOEXEC | O_NOCTTY) : -1;

        if (fd < 0) {
                fprintf(stderr, "standby-workload: cannot open the input %s: %s\n", input_path ? input_path : "(none: --input)",
                        strerror(errno));
                exit(1);
        }
        tick(); /* open */
        for (;;) {
                ssize_t k = read(fd, ev, sizeof(ev));
                if (k <= 0 && errno != EINTR)
                        exit(k == 0 ? 0 : 1);
                for (ssize_t i = 0; i < k / (ssize_t) sizeof(ev[0]); i++)
                        if (ev[i].type == EV_KEY && ev[i].code == KEY_POWER && ev[i].value == 1)
                                tick();
        }
        return NULL;
}

static void *loop_idle(void *arg) {
        for (;;)
                pause();
        return NULL;
}

static const struct {
        const char *name;
        void *(*loop)(void *);
} kinds[] = {
        { "nanosleep", loop_nanosleep }, { "sleep", loop_sleep },       { "poll", loop_poll },       { "select", loop_select },
        { "epoll", loop_epoll },         { "timerfd", loop_timerfd }, { "posix-timer", loop_posix_timer },
        { "futex", loop_futex },         { "busy", loop_busy },       { "idle", loop_idle },
        { "echo-server", loop_echo_server }, { "client", loop_client }, { "bus-service", loop_bus_service },
        { "push-receiver", loop_push_receiver }, { "broadcast-receiver", loop_broadcast_receiver },
        { "broadcaster", loop_broadcaster },
        { "link-watcher", loop_link_watcher }, { "input-handler", loop_input_handler },
};

static void usage(FILE *f) {
        fprintf(f, "Usage: standby-workload KIND [--period-ms N] [--threads N] [--tick-fd FD] [--port N]\n"
                   "                        [--bus-address ADDR] [--bus-name NAME] [--bus-alias NAME]\n"
                   "                        [--netns PATH] [--input PATH]\n"
                   "Kinds:");
        for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
                fprintf(f, " %s", kinds[i].name);
        fprintf(f, "\nEach wakeup writes one byte to FD (default: none).\n"
                   "client connects to 127.0.0.1:--port, answers each 'm' with 'r' and sends 'k' at\n"
                   "every multiple of the period (wall clock).\n"
                   "bus-service owns --bus-name and, given, --bus-alias too (on a second connection).\n"
                   "link-watcher handles rtnetlink link messages (in the namespace at --netns PATH).\n"
                   "input-handler handles KEY_POWER presses read from --input PATH (evdev or FIFO).\n");
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "period-ms", required_argument, NULL, 'p' },
                { "threads", required_argument, NULL, 't' },
                { "tick-fd", required_argument, NULL, 'f' },
                { "port", required_argument, NULL, 'P' },
                { "bus-address", required_argument, NULL, 'B' },
                { "bus-name", required_argument, NULL, 'N' },
                { "bus-alias", required_argument, NULL, 'A' },
                { "netns", required_argument, NULL, 'n' },
                { "input", required_argument, NULL, 'i' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        void *(*loop)(void *) = NULL;
        long threads = 1;
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'p':
                        period_ms = strtol(optarg, NULL, 10);
                        break;
                case 't':
                        threads = strtol(optarg, NULL, 10);
                        break;
                case 'f':
                        tick_fd = (int) strtol(optarg, NULL, 10);
                        break;
                case 'P':
                        server_port = (int) strtol(optarg, NULL, 10);
                        break;
                case 'B':
                        bus_address = optarg;
                        break;
                case 'N':
                        bus_name = optarg;
                        break;
                case 'A':
                        bus_alias = optarg;
                        break;
                case 'n':
                        netns_path = optarg;
                        break;
                case 'i':
                        input_path = optarg;
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                default:
                        usage(stderr);
                        return 2;
                }
        if (optind + 1 != argc || period_ms <= 0 || threads < 1 || threads > 1024) {
                usage(stderr);
                return 2;
        }
        for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
                if (strcmp(argv[optind], kinds[i].name) == 0)
                        loop = kinds[i].loop;
        if (!loop) {
                fprintf(stderr, "standby-workload: unknown kind \"%s\"\n", argv[optind]);
                usage(stderr);
                return 2;
        }
        if (tick_fd >= 0)
                fcntl(tick_fd, F_SETFL, fcntl(tick_fd, F_GETFL) | O_NONBLOCK);

        /* Block the posix-timer signal everywhere, so that only sigwaitinfo takes it. */
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGRTMIN);
        pthread_sigmask(SIG_BLOCK, &set, NULL);

        for (long i = 1; i < threads; i++) {
                pthread_t t;
                if (pthread_create(&t, NULL, loop, NULL) != 0) {
                        fprintf(stderr, "standby-workload: pthread_create: %s\n", strerror(errno));
                        return 1;
                }
        }
        loop(NULL);
        return 0;
}
