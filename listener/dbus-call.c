/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Event=dbus-call: a method call addressed to a bus name whose owner is frozen
 * thaws that unit before the caller times out. The call waits in the owner's
 * socket meanwhile; a second connection, made a monitor through the bus's
 * org.freedesktop.DBus.Monitoring interface, sees it go by. */
#include "listener.h"
#include "log.h"
#include "strv.h"

static int on_monitor_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Listener *l = userdata;

        for (;;) {
                sd_bus_message *m = NULL;
                bool matched = false;
                uint64_t t;
                int r = sd_bus_process(l->monitor, &m);
                if (r < 0)
                        return log_error_errno(r, "The D-Bus monitor connection failed: %m");
                uint8_t type = 0;
                if (m && sd_bus_message_get_type(m, &type) >= 0 && type == SD_BUS_MESSAGE_METHOD_CALL) {
                        const char *dest = sd_bus_message_get_destination(m);
                        for (size_t i = 0; dest && l->rules && i < l->rules->n_rules; i++) {
                                const Rule *rule = &l->rules->rules[i];
                                if (rule->event != EVENT_DBUS_CALL || !streq(rule->bus_name, dest))
                                        continue;
                                log_debug("Call %s.%s to %s.", strna(sd_bus_message_get_interface(m)),
                                          strna(sd_bus_message_get_member(m)), dest);
                                if (listener_dispatch(l, &(Event) { .kind = EVENT_DBUS_CALL, .rule = rule },
                                                      now_usec(CLOCK_MONOTONIC)) > 0)
                                        matched = true;
                        }
                }
                sd_bus_message_unref(m);
                if (r == 0)
                        break;
                /* After a call is handled, the service it woke needs the CPU
                 * more than another read that would find nothing (traced: the
                 * service waited behind it): stop unless sd-bus has messages
                 * queued already (timeout 0). It reads no further than the
                 * message it returns, so the rest still makes the fd readable. */
                if (matched && !(sd_bus_get_timeout(l->monitor, &t) > 0 && t == 0))
                        break;
        }
        return 0;
}

void listener_drop_call_monitor(Listener *l) {
        l->monitor_source = sd_event_source_disable_unref(l->monitor_source);
        l->monitor = sd_bus_flush_close_unref(l->monitor);
}

int listener_setup_call_monitor(Listener *l) {
        _cleanup_strv_free_ char **matches = NULL;
        sd_bus_message *call = NULL;
        int r;

        listener_drop_call_monitor(l);
        for (size_t i = 0; l->rules && i < l->rules->n_rules; i++) {
                const Rule *rule = &l->rules->rules[i];
                char *m;
                if (rule->event != EVENT_DBUS_CALL)
                        continue;
                if (asprintf(&m, "type='method_call',destination='%s'", rule->bus_name) < 0 ||
                    (r = strv_consume(&matches, m)) < 0)
                        return -ENOMEM;
        }
        if (!matches)
                return 0;

        r = sd_bus_new(&l->monitor);
        if (r >= 0)
                r = sd_bus_set_monitor(l->monitor, true);
        if (r >= 0)
                r = l->bus_address ? sd_bus_set_address(l->monitor, l->bus_address)
                                   : sd_bus_set_address(l->monitor, "unix:path=/run/dbus/system_bus_socket");
        if (r >= 0)
                r = sd_bus_set_bus_client(l->monitor, true);
        if (r >= 0)
                r = sd_bus_start(l->monitor);
        if (r >= 0)
                r = sd_bus_message_new_method_call(l->monitor, &call, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                   "org.freedesktop.DBus.Monitoring", "BecomeMonitor");
        if (r >= 0)
                r = sd_bus_message_append_strv(call, matches);
        if (r >= 0)
                r = sd_bus_message_append(call, "u", 0);
        if (r >= 0)
                r = sd_bus_call(l->monitor, call, 0, NULL, NULL);
        sd_bus_message_unref(call);
        if (r >= 0)
                r = sd_event_add_io(l->event, &l->monitor_source, sd_bus_get_fd(l->monitor), EPOLLIN, on_monitor_io, l);
        if (r < 0) {
                listener_drop_call_monitor(l);
                return log_error_errno(r, "Cannot monitor the bus for Event=dbus-call rules: %m");
        }
        log_info("Watching method calls to %zu bus names.", strv_length(matches));
        return 0;
}
