/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fake-user-manager [--get-delay-ms N] [--thaw-delay-ms N] [--lies]
 *                   (--socket PATH | --fd N) CGROUP...
 *
 * What a hostile local user can put on their own private socket
 * (/run/user/UID/systemd/private is theirs): a server that answers a user
 * manager's calls about CGROUP... (paths below the cgroup2 mount, the unit
 * name the last part) truthfully, freezes them itself on FreezeUnit, and
 * answers each ThawUnit (and, with --get-delay-ms, each ControlGroup) only
 * after a delay, one call after the other. --lies answers ThawUnit at once
 * and thaws nothing. --socket binds PATH (an existing socket there is
 * removed first, as the user can); --fd serves a listening socket given.
 * Prints "ready" once it accepts. A held answer is given up at once when
 * the caller hangs up, so the fake never outlives what it stalls. */
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-id128.h>

#include "cgroup.h"
#include "macro.h"
#include "time-util.h"

static char **units; /* CGROUP... */
static size_t n_units;
static int root_fd = -EBADF;
static usec_t get_delay, thaw_delay;
static bool lies;

static int unit_of(const char *name) {
        for (size_t i = 0; i < n_units; i++) {
                const char *slash = strrchr(units[i], '/');
                if (streq(slash ? slash + 1 : units[i], name))
                        return (int) i;
        }
        return -1;
}

static void write_freeze(int i, bool freeze) {
        _cleanup_close_ int fd = -EBADF;
        if (cgroup_open(root_fd, units[i], &fd) >= 0)
                (void) cgroup_set_freeze(fd, freeze);
}

static void stall(sd_bus_message *m, usec_t delay) {
        struct pollfd p = { .fd = sd_bus_get_fd(sd_bus_message_get_bus(m)), .events = POLLRDHUP };
        if (delay > 0 && p.fd >= 0)
                (void) poll(&p, 1, (int) (delay / USEC_PER_MSEC));
}

static int freeze_or_thaw(sd_bus_message *m, bool freeze, sd_bus_error *error) {
        const char *name;
        int i;

        if (sd_bus_message_read(m, "s", &name) < 0 || (i = unit_of(name)) < 0)
                return sd_bus_error_set(error, "org.freedesktop.systemd1.NoSuchUnit", "no such unit");
        if (!freeze)
                stall(m, thaw_delay);
        if (freeze || !lies)
                write_freeze(i, freeze);
        return sd_bus_reply_method_return(m, "");
}

static int on_freeze(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return freeze_or_thaw(m, true, error);
}

static int on_thaw(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return freeze_or_thaw(m, false, error);
}

static int on_property(sd_bus *bus, const char *path, const char *interface, const char *property,
                       sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        char *name = NULL;
        int i;

        if (sd_bus_path_decode(path, "/org/freedesktop/systemd1/unit", &name) <= 0)
                return sd_bus_error_set(error, "org.freedesktop.systemd1.NoSuchUnit", "no such unit");
        i = unit_of(name);
        free(name);
        if (i < 0)
                return sd_bus_error_set(error, "org.freedesktop.systemd1.NoSuchUnit", "no such unit");
        if (streq(property, "FreezerState"))
                return sd_bus_message_append(reply, "s", "running");
        stall(sd_bus_get_current_message(bus), get_delay);
        /* systemd's form: the path below the mount, with a leading slash */
        char cg[PATH_MAX];
        snprintf(cg, sizeof(cg), "/%s", units[i]);
        return sd_bus_message_append(reply, "s", cg);
}

static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("FreezeUnit", "s", "", on_freeze, 0),
        SD_BUS_METHOD("ThawUnit", "s", "", on_thaw, 0),
        SD_BUS_VTABLE_END,
};
static const sd_bus_vtable service_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("ControlGroup", "s", on_property, 0, 0),
        SD_BUS_VTABLE_END,
};
static const sd_bus_vtable unit_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("FreezerState", "s", on_property, 0, 0),
        SD_BUS_VTABLE_END,
};

/* One connection at a time, each served until its caller hangs up: the
 * calls of one are answered one after the other, as a busy manager does. */
_noreturn_ static void serve(int listen_fd) {
        sd_id128_t id;

        (void) sd_id128_randomize(&id);
        printf("ready\n");
        fflush(stdout);
        for (;;) {
                int c = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
                sd_bus *bus = NULL;

                if (c < 0)
                        continue;
                if (sd_bus_new(&bus) < 0 || sd_bus_set_fd(bus, c, c) < 0 || sd_bus_set_server(bus, 1, id) < 0 ||
                    sd_bus_add_object_vtable(bus, NULL, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager",
                                             manager_vtable, NULL) < 0 ||
                    sd_bus_add_fallback_vtable(bus, NULL, "/org/freedesktop/systemd1/unit",
                                               "org.freedesktop.systemd1.Service", service_vtable, NULL, NULL) < 0 ||
                    sd_bus_add_fallback_vtable(bus, NULL, "/org/freedesktop/systemd1/unit",
                                               "org.freedesktop.systemd1.Unit", unit_vtable, NULL, NULL) < 0 ||
                    sd_bus_start(bus) < 0)
                        _exit(1);
                for (;;) {
                        int r = sd_bus_process(bus, NULL);
                        if (r < 0)
                                break;
                        if (r == 0 && sd_bus_wait(bus, UINT64_MAX) < 0)
                                break;
                }
                sd_bus_close_unref(bus);
        }
}

static int bind_socket(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd;

        if (strlen(path) >= sizeof(sa.sun_path)) {
                fprintf(stderr, "fake-user-manager: %s: path too long\n", path);
                exit(2);
        }
        memcpy(sa.sun_path, path, strlen(path) + 1);
        (void) unlink(path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(fd, 16) < 0) {
                fprintf(stderr, "fake-user-manager: %s: %s\n", path, strerror(errno));
                exit(1);
        }
        return fd;
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "get-delay-ms", required_argument, NULL, 'g' },
                { "thaw-delay-ms", required_argument, NULL, 't' },
                { "lies", no_argument, NULL, 'l' },
                { "socket", required_argument, NULL, 's' },
                { "fd", required_argument, NULL, 'f' },
                {},
        };
        _cleanup_free_ char *mount = NULL;
        const char *socket_path = NULL;
        int c, listen_fd = -EBADF;

        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0)
                switch (c) {
                case 'g':
                        get_delay = strtoull(optarg, NULL, 10) * USEC_PER_MSEC;
                        break;
                case 't':
                        thaw_delay = strtoull(optarg, NULL, 10) * USEC_PER_MSEC;
                        break;
                case 'l':
                        lies = true;
                        break;
                case 's':
                        socket_path = optarg;
                        break;
                case 'f':
                        listen_fd = atoi(optarg);
                        break;
                default:
                        return 2;
                }
        if ((!socket_path) == (listen_fd < 0) || optind >= argc) {
                fprintf(stderr, "usage: fake-user-manager [--get-delay-ms N] [--thaw-delay-ms N] [--lies] "
                                "(--socket PATH | --fd N) CGROUP...\n");
                return 2;
        }
        units = argv + optind;
        n_units = (size_t) (argc - optind);
        if (cgroup_find_mount(&mount) < 0 || cgroup_open_root(mount, &root_fd) < 0) {
                fprintf(stderr, "fake-user-manager: no cgroup2 mount\n");
                return 1;
        }
        if (socket_path)
                listen_fd = bind_socket(socket_path);
        serve(listen_fd);
}
