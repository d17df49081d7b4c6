/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A bus monitor connection, read by its owner rather than by sd-bus: the
 * listener's Event=dbus-call watch, and the bench's bare thawer that measures
 * the floor of that watch (the two must see calls the same way). */
#include <errno.h>
#include <fcntl.h>

#include "bus-monitor.h"
#include "macro.h"

static int become_monitor_call(sd_bus *bus, char **matches, sd_bus_message **ret) {
        sd_bus_message *call = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &call, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                           "org.freedesktop.DBus.Monitoring", "BecomeMonitor");
        if (r >= 0)
                r = sd_bus_message_append_strv(call, matches);
        if (r >= 0)
                r = sd_bus_message_append(call, "u", 0);
        if (r < 0) {
                sd_bus_message_unref(call);
                return r;
        }
        *ret = call;
        return 0;
}

/* The connection, started: sd_bus_start() connects a non-blocking socket,
 * queues the authentication and Hello, and waits for nothing. */
static int monitor_bus_new(const char *address, sd_bus **ret) {
        sd_bus *bus = NULL;
        int r;

        r = sd_bus_new(&bus);
        if (r >= 0)
                r = sd_bus_set_monitor(bus, true);
        if (r >= 0) /* file descriptors sent along are of no use here */
                r = sd_bus_negotiate_fds(bus, false);
        if (r >= 0)
                r = sd_bus_set_address(bus, address ?: "unix:path=/run/dbus/system_bus_socket");
        if (r >= 0)
                r = sd_bus_set_bus_client(bus, true);
        if (r >= 0)
                r = sd_bus_start(bus);
        if (r < 0) {
                sd_bus_close_unref(bus);
                return r;
        }
        *ret = bus;
        return 0;
}

int bus_monitor_take_fd(sd_bus *bus, void (*queued)(sd_bus_message *m, void *userdata), void *userdata, int *ret_fd) {
        uint64_t t;
        int fd;

        /* Only what is queued already (a zero timeout says so): the socket
         * itself is the caller's to read from here on. */
        while (sd_bus_get_timeout(bus, &t) > 0 && t == 0) {
                sd_bus_message *m = NULL;
                if (sd_bus_process(bus, &m) <= 0)
                        break;
                if (m && queued)
                        queued(m, userdata);
                sd_bus_message_unref(m);
        }
        /* sd-bus closes its fd and no more: the duplicate keeps the connection. */
        fd = fcntl(sd_bus_get_fd(bus), F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return -errno;
        *ret_fd = fd;
        return 0;
}

int bus_monitor_start(const char *address, char **matches, sd_bus_message_handler_t callback, void *userdata,
                      uint64_t timeout_usec, sd_bus **ret_bus, sd_bus_slot **ret_slot) {
        sd_bus_message *call = NULL;
        sd_bus *bus = NULL;
        int r;

        r = monitor_bus_new(address, &bus);
        if (r < 0)
                return r;
        r = become_monitor_call(bus, matches, &call);
        if (r >= 0)
                r = sd_bus_call_async(bus, ret_slot, call, callback, userdata, timeout_usec);
        sd_bus_message_unref(call);
        if (r < 0) {
                sd_bus_close_unref(bus);
                return r;
        }
        *ret_bus = bus;
        return 0;
}

int bus_monitor_open(const char *address, char **matches, void (*queued)(sd_bus_message *m, void *userdata),
                     void *userdata, int *ret_fd) {
        sd_bus_message *call = NULL;
        sd_bus *bus = NULL;
        int r;

        r = monitor_bus_new(address, &bus);
        if (r >= 0)
                r = become_monitor_call(bus, matches, &call);
        if (r >= 0)
                r = sd_bus_call(bus, call, 0, NULL, NULL);
        sd_bus_message_unref(call);
        if (r >= 0)
                r = bus_monitor_take_fd(bus, queued, userdata, ret_fd);
        sd_bus_close_unref(bus);
        return r < 0 ? r : 0;
}
