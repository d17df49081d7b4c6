/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A bus monitor connection, read by its owner rather than by sd-bus: the
 * listener's Event=dbus-call watch, and the bench's bare thawer that measures
 * the floor of that watch (the two must see calls the same way). */
#include <errno.h>
#include <fcntl.h>

#include "bus-monitor.h"
#include "macro.h"

int bus_monitor_open(const char *address, char **matches, void (*queued)(sd_bus_message *m, void *userdata),
                     void *userdata, int *ret_fd) {
        sd_bus_message *call = NULL;
        sd_bus *bus = NULL;
        uint64_t t;
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
        if (r >= 0)
                r = sd_bus_message_new_method_call(bus, &call, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                   "org.freedesktop.DBus.Monitoring", "BecomeMonitor");
        if (r >= 0)
                r = sd_bus_message_append_strv(call, matches);
        if (r >= 0)
                r = sd_bus_message_append(call, "u", 0);
        if (r >= 0)
                r = sd_bus_call(bus, call, 0, NULL, NULL);
        sd_bus_message_unref(call);
        /* Only what is queued already (a zero timeout says so): the socket
         * itself is the caller's to read from here on. */
        while (r >= 0 && sd_bus_get_timeout(bus, &t) > 0 && t == 0) {
                sd_bus_message *m = NULL;
                if (sd_bus_process(bus, &m) <= 0)
                        break;
                if (m && queued)
                        queued(m, userdata);
                sd_bus_message_unref(m);
        }
        /* sd-bus closes its fd and no more: the duplicate keeps the connection. */
        if (r >= 0 && (*ret_fd = fcntl(sd_bus_get_fd(bus), F_DUPFD_CLOEXEC, 3)) < 0)
                r = -errno;
        sd_bus_close_unref(bus);
        return r < 0 ? r : 0;
}
