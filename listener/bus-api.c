/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The listener's D-Bus interface, org.standby.Listener1 on
 * /org/standby/Listener1: its one vtable, every method and signal with its
 * arguments' names, and the bus connection it is served on. The handlers
 * live with the behaviour they run (push.c: pushes, thaws, statistics;
 * inhibit.c: locks and the apps' announcement; logind.c: the power state;
 * enter-exit.c: Enter and Exit; bus-state.c: the properties and the
 * signals that follow them) and are reached only from here; each method
 * asks bus-access.c who may call it. The properties are anyone's to read,
 * as systemd's units' are. */
#include <stddef.h>
#include <sys/socket.h>

#include "listener.h"
#include "log.h"

/* No flag: EmitsChangedSignal=false, read when asked. */
#define COUNTER(name) \
        SD_BUS_PROPERTY(name, "t", listener_property_counter, 0, 0)

static const sd_bus_vtable listener_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("State", "s", listener_property_state, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Strategy", "s", listener_property_strategy, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Since", "t", listener_property_since, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("EnteredBy", "s", listener_property_entered_by, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Inhibitors", "a(ssssuu)", listener_property_inhibitors, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        COUNTER("Events"),
        COUNTER("Thaws"),
        COUNTER("Refreezes"),
        COUNTER("ThawFailures"),
        COUNTER("Exits"),
        SD_BUS_METHOD_WITH_ARGS("Enter", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, listener_method_enter,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Exit", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, listener_method_exit,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Push", SD_BUS_ARGS("s", unit, "s", reason), SD_BUS_RESULT("b", matched),
                                listener_method_push, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("PushEx", SD_BUS_ARGS("s", unit, "s", reason),
                                SD_BUS_RESULT("as", thawed, "a(ss)", failed), listener_method_push_ex,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Thaw", SD_BUS_ARGS("as", cgroups, "t", usec),
                                SD_BUS_RESULT("as", thawed, "a(ss)", failed), listener_method_thaw,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ThawUnit", SD_BUS_ARGS("s", unit, "t", usec),
                                SD_BUS_RESULT("as", thawed, "a(ss)", failed), listener_method_thaw_unit,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetStatistics", SD_BUS_NO_ARGS, SD_BUS_RESULT("a{st}", statistics),
                                listener_method_statistics, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Inhibit", SD_BUS_ARGS("s", what, "s", who, "s", why, "s", mode),
                                SD_BUS_RESULT("h", fd), listener_method_inhibit, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListInhibitors", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(ssssuu)", inhibitors),
                                listener_method_list_inhibitors, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("PrepareEntry", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, listener_method_prepare_entry,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetPowerState", SD_BUS_NO_ARGS, SD_BUS_RESULT("a{ss}", state),
                                listener_method_power_state, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_SIGNAL_WITH_ARGS("PrepareForStandby", SD_BUS_ARGS("b", start), 0),
        SD_BUS_SIGNAL_WITH_ARGS("Entered", SD_BUS_ARGS("s", how), 0),
        SD_BUS_SIGNAL_WITH_ARGS("Left", SD_BUS_ARGS("s", why), 0),
        SD_BUS_SIGNAL_WITH_ARGS("Thawed", SD_BUS_ARGS("s", unit, "s", cgroup, "s", cause), 0),
        SD_BUS_VTABLE_END
};

/* The bus went away (dbus-daemon stopped or restarted). Without it Push,
 * dbus-signal and dbus-call rules would be dead for good while the listener
 * looked alive: it exits with a failure instead, so that the service
 * manager (Restart=on-failure) starts it again, and the new one reconnects
 * and reconciles as after any restart. */
static int on_bus_lost(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Listener *l = userdata;

        log_error("Lost the connection to the bus; exiting, to be restarted.");
        return sd_event_exit(l->event, EXIT_FAILURE_GENERIC);
}

static int setup_bus(Listener *l) {
        int r;

        listener_access_setup(l);

        if (l->bus_address) {
                r = sd_bus_new(&l->bus);
                if (r >= 0)
                        r = sd_bus_set_address(l->bus, l->bus_address);
                if (r >= 0)
                        r = sd_bus_set_bus_client(l->bus, true);
                if (r >= 0)
                        r = sd_bus_start(l->bus);
        } else
                r = sd_bus_open_system(&l->bus);
        if (r < 0)
                return log_error_errno(r, "Failed to connect to the bus %s: %m", l->bus_address ?: "(system)");

        r = sd_bus_add_object_vtable(l->bus, NULL, LISTENER_OBJECT_PATH, LISTENER_INTERFACE, listener_vtable, l);
        if (r < 0)
                return log_error_errno(r, "Failed to add the D-Bus object: %m");
        r = sd_bus_request_name(l->bus, LISTENER_BUS_NAME, 0);
        if (r < 0)
                return log_error_errno(r, "Failed to own the bus name " LISTENER_BUS_NAME ": %m");
        r = sd_bus_match_signal(l->bus, NULL, NULL, "/org/freedesktop/DBus/Local", "org.freedesktop.DBus.Local",
                                "Disconnected", on_bus_lost, l);
        if (r < 0)
                return log_error_errno(r, "Failed to watch the bus connection: %m");
        /* Where the bus listens, as its clients' sockets name their peer,
         * and who listened there: how a frozen unit's bus connection is told
         * from its other sockets (bus-peek.c). */
        l->bus_peer_len = sizeof(l->bus_peer);
        socklen_t cred_len = sizeof(l->bus_peer_cred);
        if (getpeername(sd_bus_get_fd(l->bus), (struct sockaddr *) &l->bus_peer, &l->bus_peer_len) < 0 ||
            l->bus_peer.sun_family != AF_UNIX || l->bus_peer_len > sizeof(l->bus_peer) ||
            getsockopt(sd_bus_get_fd(l->bus), SOL_SOCKET, SO_PEERCRED, &l->bus_peer_cred, &cred_len) < 0 ||
            cred_len != sizeof(l->bus_peer_cred) || l->bus_peer_cred.pid <= 0)
                l->bus_peer_len = 0;
        if (l->bus_peer_len <= offsetof(struct sockaddr_un, sun_path))
                log_warning("The bus's socket has no name: Event=dbus-call rules cannot tell a call the bus "
                            "delivered, and fire on none.");
        r = sd_bus_attach_event(l->bus, l->event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return log_error_errno(r, "Failed to attach the bus to the event loop: %m");
        return 0;
}

static void stop_bus(Listener *l) {
        listener_access_stop(l);
        listener_forget_manager_runs(l);
        listener_bus_state_free();
}

/* Event=push comes through this interface (push.c); the bus connection
 * itself outlives every source: this one is set up first, closed last. */
const ListenerSource listener_source_push = {
        .name = "push",
        .kinds = (const EventKind * const[]) { &listener_event_kind_push, NULL },
        .start = setup_bus,
        .stop = stop_bus,
};
