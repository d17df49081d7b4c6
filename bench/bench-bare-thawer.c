/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The least that any listener can add to an event: a process that does
 * nothing but wait in epoll and, when its one fd becomes readable, write 0 to
 * the frozen service's cgroup.freeze. For a socket event the fd is a
 * duplicate of the server's listening socket; for a D-Bus call it is a bus
 * monitor connection whose only match is a method call to the service's
 * name, so any byte on it is such a call; for a push it is a bus connection
 * of its own that owns a name and answers a Push call to it, as the
 * listener's Push does, with sd-bus. The monitor thawer on the listener's
 * own D-Bus service is checked: before its write it reads the call from the
 * monitor and finds it unread in the service's bus connections, for a
 * monitor is shown calls the bus then refuses. A lower bound of what a
 * correct listener does: it trusts the connections it duplicated at its
 * start, where the listener looks only at the name's owner's, found and
 * checked anew at every journal change. No rules, no journal, no credentials
 * asked, no event loop library. What it adds beyond the bench's own thaw
 * (bench-thawed) is the price of waking a process at all on this machine;
 * what standby-listener adds beyond it is standby-listener's own. */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "bench.h"
#include "bus-monitor.h"
#include "cgroup.h"
#include "../listener/dbus-wire.h"
#include "fileio.h"
#include "macro.h"
#include "pidfd.h"

#define MAX_HELD 16

/* Duplicates of pid's descriptors 3-255 that keep() accepts (arg: its
 * own), at most MAX_HELD. */
static int dup_fds_of(pid_t pid, bool (*keep)(int fd, const void *arg), const void *arg, int held[static MAX_HELD],
                      int *ret_n) {
        _cleanup_close_ int pidfd = pidfd_of_pid(pid);
        int n = 0;

        if (pidfd < 0)
                return pidfd;
        for (int fd = 3; fd < 256 && n < MAX_HELD; fd++) {
                int dup = pidfd_dup_fd(pidfd, fd);
                if (dup < 0)
                        continue;
                if (keep(dup, arg))
                        held[n++] = dup;
                else
                        close(dup);
        }
        *ret_n = n;
        return 0;
}

static bool is_listening(int fd, const void *arg) {
        int listening = 0;
        socklen_t len = sizeof(listening);
        return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) >= 0 && listening;
}

/* Duplicates of the listening sockets of pid, added (disarmed) to ep. */
static int hold_listening_sockets(pid_t pid, int ep, int held[static MAX_HELD], int *ret_n) {
        int r = dup_fds_of(pid, is_listening, NULL, held, ret_n);
        if (r < 0)
                return r;
        for (int i = 0; i < *ret_n; i++) {
                struct epoll_event ev = { .events = 0, .data.fd = held[i] };
                if (epoll_ctl(ep, EPOLL_CTL_ADD, held[i], &ev) < 0)
                        return -errno;
        }
        return *ret_n > 0 ? 0 : -ENOTSOCK;
}

/* A monitor connection (the listener's own kind: bus-monitor.c) that is sent
 * every method call to name and nothing else, but the bus's NameLost right
 * after becoming a monitor, which the drain at each arm takes. */
static int monitor_calls_to(const char *address, const char *name, int ep, int held[static MAX_HELD], int *ret_n) {
        char match[320], *matches[] = { match, NULL };
        int r;

        snprintf(match, sizeof(match), "type='method_call',destination='%s'", name);
        r = bus_monitor_open(address, matches, NULL, NULL, &held[0]);
        if (r < 0)
                return r;
        struct epoll_event ev = { .events = 0, .data.fd = held[0] };
        if (epoll_ctl(ep, EPOLL_CTL_ADD, held[0], &ev) < 0)
                return -errno;
        *ret_n = 1;
        return 0;
}

static bool is_connected_to(int fd, const void *bus) {
        struct sockaddr_un peer = {};
        socklen_t len = sizeof(peer);
        return getpeername(fd, (struct sockaddr *) &peer, &len) >= 0 && peer.sun_family == AF_UNIX &&
               strncmp(peer.sun_path, ((const struct sockaddr_un *) bus)->sun_path, sizeof(peer.sun_path)) == 0;
}

/* The bus connections of pid: its connected Unix stream sockets whose peer
 * is the bus's path (address's unix:path=). */
static int hold_bus_connections(pid_t pid, const char *address, int conns[static MAX_HELD], int *ret_n) {
        const char *prefix = "unix:path=";
        struct sockaddr_un bus = { .sun_family = AF_UNIX };
        size_t path_len;
        int r;

        if (strncmp(address, prefix, strlen(prefix)) != 0)
                return -EAFNOSUPPORT;
        path_len = strcspn(address + strlen(prefix), ",");
        if (path_len >= sizeof(bus.sun_path))
                return -ENAMETOOLONG;
        memcpy(bus.sun_path, address + strlen(prefix), path_len);
        r = dup_fds_of(pid, is_connected_to, &bus, conns, ret_n);
        return r < 0 ? r : *ret_n > 0 ? 0 : -ENOTCONN;
}

/* The checked thawer's test: the monitor's next message is a call (whole:
 * the bus writes a message in one piece to a monitor this idle), and it is
 * unread in one of the service's bus connections. */
static bool call_delivered(int monitor, const char *bus_name, const int conns[], int n) {
        static uint8_t msg[64 * 1024], unread[256 * 1024];
        char sender[256];
        DBusHeader h;
        ssize_t k = recv(monitor, msg, sizeof(msg), MSG_DONTWAIT);

        if (k <= 0 || dbus_wire_header(msg, (size_t) k, &h) != 1 || h.header_size > (size_t) k ||
            dbus_wire_field(msg, &h, DBUS_FIELD_SENDER, sender, sizeof(sender)) != 1)
                return false;
        for (int i = 0; i < n; i++) {
                ssize_t u = recv(conns[i], unread, sizeof(unread), MSG_PEEK | MSG_DONTWAIT);
                if (u > 0 && dbus_wire_holds_call(unread, (size_t) u, bus_name, sender, h.serial))
                        return true;
        }
        return false;
}

/* The push thawer's cgroup.freeze, and whether the armed Push came. */
typedef struct PushThawer {
        int freeze_fd;
        bool pushed;
} PushThawer;

/* Push(s unit, s reason) → b, the listener's signature: thaws, then
 * answers, as the listener does. */
static int method_push(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        PushThawer *p = userdata;

        if (cgroup_write_freeze(p->freeze_fd, false) < 0)
                _exit(1);
        p->pushed = true;
        return sd_bus_reply_method_return(m, "b", 1);
}

static const sd_bus_vtable push_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("Push", "ss", "b", method_push, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END
};

/* The push thawer's child: owns push_name on address and, armed, answers
 * one Push call, thawing first; EOF on arm_fd ends it. */
static _Noreturn void push_thawer_main(int freeze_fd, const BareTarget *target, int arm_fd, int ack_fd) {
        PushThawer p = { .freeze_fd = freeze_fd };
        sd_bus *bus = NULL;
        char c = 0;

        if (sd_bus_new(&bus) < 0 || sd_bus_set_address(bus, target->bus_address) < 0 ||
            sd_bus_set_bus_client(bus, 1) < 0 || sd_bus_start(bus) < 0 ||
            sd_bus_add_object_vtable(bus, NULL, "/org/standby/Listener1", "org.standby.Listener1", push_vtable, &p) < 0 ||
            sd_bus_request_name(bus, target->push_name, 0) < 0)
                _exit(1);
        if (write(ack_fd, "r", 1) != 1)
                _exit(1);
        while (read(arm_fd, &c, 1) == 1) {
                p.pushed = false;
                if (write(ack_fd, "k", 1) != 1)
                        _exit(1);
                while (!p.pushed) {
                        int r = sd_bus_process(bus, NULL);
                        if (r == 0)
                                r = sd_bus_wait(bus, UINT64_MAX);
                        if (r < 0 && r != -EINTR)
                                _exit(1);
                }
                (void) sd_bus_flush(bus);
        }
        _exit(0);
}

/* The child: armed by one byte on arm_fd (it answers on ack_fd), it thaws
 * once on the next readable fd; EOF on arm_fd ends it. */
static _Noreturn void thawer_main(int cg_fd, const BareTarget *target, int arm_fd, int ack_fd) {
        int ep = epoll_create1(EPOLL_CLOEXEC), freeze_fd = -EBADF, held[MAX_HELD], n = 0, conns[MAX_HELD], n_conns = 0;
        bool checked = target->bus_address && target->service > 0;
        char c = 0, drain[4096];

        /* Not the parent's handlers (a test runner's SIGTERM handler kills
         * its whole process group): stop() ends it with SIGTERM. A
         * terminal's SIGINT is the bench's to handle. */
        (void) signal(SIGTERM, SIG_DFL);
        (void) signal(SIGINT, SIG_IGN);
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        (void) prctl(PR_SET_NAME, "bare-thawer");
        if (ep < 0 || cgroup_open_freeze(cg_fd, &freeze_fd) < 0)
                _exit(1);
        if (target->push_name)
                push_thawer_main(freeze_fd, target, arm_fd, ack_fd);
        if ((target->bus_address ? monitor_calls_to(target->bus_address, target->bus_name, ep, held, &n)
                                 : hold_listening_sockets(target->service, ep, held, &n)) < 0)
                _exit(1);
        if (checked && hold_bus_connections(target->service, target->bus_address, conns, &n_conns) < 0)
                _exit(1);
        if (write(ack_fd, "r", 1) != 1) /* ready: start() returns */
                _exit(1);
        while (read(arm_fd, &c, 1) == 1) {
                /* Calls the monitor saw while disarmed (the bench-thawed
                 * samples call the same service) are not this event. */
                while (target->bus_address && recv(held[0], drain, sizeof(drain), MSG_DONTWAIT) > 0)
                        ;
                /* Re-armed for one event each time, so that it never spins on a
                 * connection the server has yet to accept. */
                for (int i = 0; i < n; i++) {
                        struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT, .data.fd = held[i] };
                        if (epoll_ctl(ep, EPOLL_CTL_MOD, held[i], &ev) < 0)
                                _exit(1);
                }
                if (write(ack_fd, "k", 1) != 1)
                        _exit(1);
                struct epoll_event out;
                while (epoll_wait(ep, &out, 1, -1) < 0)
                        if (errno != EINTR)
                                _exit(1);
                /* A monitor the bus dropped is no event, nor is a call the
                 * checked thawer cannot find delivered: fail, loudly. */
                if (out.events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR) ||
                    (checked && !call_delivered(held[0], target->bus_name, conns, n_conns)) ||
                    cgroup_write_freeze(freeze_fd, false) < 0)
                        _exit(1);
        }
        _exit(0);
}

int bare_thawer_start(BareThawer *t, int cg_fd, const BareTarget *target) {
        int arm[2], ack[2];

        *t = (BareThawer) { .pid = 0, .arm_fd = -EBADF, .ack_fd = -EBADF };
        if (pipe2(arm, O_CLOEXEC) < 0)
                return -errno;
        if (pipe2(ack, O_CLOEXEC) < 0) {
                int r = -errno;
                close(arm[0]);
                close(arm[1]);
                return r;
        }
        t->pid = fork();
        if (t->pid < 0) {
                int r = -errno;
                close(arm[0]), close(arm[1]), close(ack[0]), close(ack[1]);
                return r;
        }
        if (t->pid == 0) {
                close(arm[1]);
                close(ack[0]);
                thawer_main(cg_fd, target, arm[0], ack[1]);
        }
        close(arm[0]);
        close(ack[1]);
        t->arm_fd = arm[1];
        t->ack_fd = ack[0];
        /* Its fds held (its monitor set up), or it failed: 5 s bound. */
        struct pollfd p = { .fd = t->ack_fd, .events = POLLIN };
        char c;
        if (poll(&p, 1, 5000) != 1 || read(t->ack_fd, &c, 1) != 1) {
                bare_thawer_stop(t);
                return -EIO;
        }
        return 0;
}

/* Returns once the thawer waits for the next event (5 s bound). */
int bare_thawer_arm(BareThawer *t) {
        struct pollfd p = { .fd = t->ack_fd, .events = POLLIN };
        char c;

        if (write(t->arm_fd, "a", 1) != 1 || poll(&p, 1, 5000) != 1 || read(t->ack_fd, &c, 1) != 1)
                return -EIO;
        return 0;
}

void bare_thawer_stop(BareThawer *t) {
        t->arm_fd = safe_close(t->arm_fd);
        t->ack_fd = safe_close(t->ack_fd);
        if (t->pid > 0) {
                /* EOF on its pipe ends it, unless it waits for a connection. */
                kill(t->pid, SIGTERM);
                (void) waitpid(t->pid, NULL, 0);
                t->pid = 0;
        }
}
