/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Event=dbus-call: a method call addressed to a bus name whose owner is frozen
 * thaws that unit before the caller times out. The call waits in the owner's
 * socket meanwhile; a second connection, made a monitor through the bus's
 * org.freedesktop.DBus.Monitoring interface, sees it go by.
 *
 * sd-bus opens that connection and makes it a monitor, driven from the
 * listener's loop without waiting (a stopped bus holds up neither the loop
 * nor a reload; a timer bounds the setup); from then on the listener reads
 * it itself, one recv() per wake-up, and looks only at each message's
 * header for its destination (dbus-wire.c): the monitor is read-only, and
 * sd-bus's two reads and full parse of every call were most of the
 * listener's time on this event's path.
 *
 * The monitor sees a call before the bus's policy judges it: a call the
 * policy refuses goes by too (followed by the bus's error to the caller).
 * A rule fires only on a call the bus delivered, found, by its sender and
 * serial, unread in the bus connection of a frozen process of the rule's
 * Thaw= units (bus-peek.c): the bus writes a call to its destination before
 * it shows it to monitors, so a delivered call is there when the monitor
 * tells, and a refused one never is. Calls while nothing of the rule is
 * frozen are left alone: one that reached a unit frozen during enter is
 * found unread when standby begins (late.c). */
#include <assert.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <systemd/sd-daemon.h>

#include "bus-monitor.h"
#include "dbus-wire.h"
#include "listener.h"
#include "log.h"
#include "strv.h"

/* Headers longer than this (fields of 64 KiB) are skipped unread: bus names
 * are at most 255 bytes, and dbus-daemon sends nothing like it. */
#define MONITOR_BUFFER (64u * 1024u)

/* The connection while it becomes a monitor: sd-bus's, driven by an io
 * source and bounded by a timer of the listener's own. */
typedef struct MonitorSetup {
        sd_bus *bus;
        sd_bus_slot *call;             /* BecomeMonitor */
        sd_event_source *io, *timer;
        int result;                    /* 0 while pending, 1 a monitor, or a negative errno */
        char *refusal;                 /* BecomeMonitor's error, if it came */
        bool at_start;                 /* a failure ends the listener, as one at start does */
        bool says_ready;               /* READY=1 waits for it */
        size_t n_names;
} MonitorSetup;

typedef struct CallMonitor {
        int fd;
        DBusWireStream stream; /* MONITOR_BUFFER bytes, from a message boundary */
        MonitorSetup *setup;   /* non-NULL until the fd is read (fd < 0 meanwhile) */
} CallMonitor;

/* The source's state: the monitor connection while dbus-call rules need
 * one, and what it saw. */
typedef struct CallState {
        CallMonitor *monitor;
        sd_event_source *source;
        uint64_t undelivered;  /* calls to a frozen unit's BusName= the bus did not deliver */
        uint64_t calls_seen;   /* method calls the monitor showed, to any watched name, frozen or not */
} CallState;

extern const ListenerSource listener_source_dbus_call;

/* NULL outside the source's life (before its start, after its stop). */
static CallState *state_of(Listener *l) {
        return listener_source_state(l, &listener_source_dbus_call);
}

static void drop_monitor(Listener *l);

static CallMonitor *monitor_of(Listener *l) {
        CallState *st = state_of(l);
        return st ? st->monitor : NULL;
}

static void on_call(Listener *l, const char *dest, const char *sender, uint32_t serial) {
        usec_t received = now_usec(CLOCK_MONOTONIC);

        state_of(l)->calls_seen++;
        for (size_t i = 0; l->rules && i < l->rules->n_rules; i++) {
                const Rule *rule = &l->rules->rules[i];
                if (rule->event != &event_kind_dbus_call || !streq(listener_call_rule_bus_name(rule), dest))
                        continue;
                int r = listener_call_delivered(l, rule, sender, serial);
                if (r == 0) {
                        log_debug("A call from %s to %s that the bus did not deliver: ignored.", sender, dest);
                        state_of(l)->undelivered++;
                }
                if (r <= 0)
                        continue;
                log_debug("Call to %s.", dest);
                (void) listener_dispatch(l, &(Event) { .kind = &event_kind_dbus_call, .rule = rule, .sender = sender },
                                         received);
        }
}

static void on_wire_call(const char *dest, const char *sender, uint32_t serial, void *userdata) {
        on_call(userdata, dest, sender, serial);
}

static int on_monitor_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Listener *l = userdata;
        CallMonitor *cm = monitor_of(l);
        ssize_t n;

        assert(cm->stream.have < MONITOR_BUFFER); /* a partial header is shorter than the buffer */
        /* One read per wake-up; the fd is level-triggered for the rest. */
        n = recv(fd, cm->stream.buf + cm->stream.have, MONITOR_BUFFER - cm->stream.have, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        /* A monitor that fails leaves Event=dbus-call rules dead: as when the
         * bus goes away (bus-api.c), exit to be restarted, and reconnect. */
        if (n <= 0) {
                log_error_errno(n < 0 ? -errno : -ECONNRESET,
                                "The D-Bus monitor connection failed (%m); exiting, to be restarted.");
                drop_monitor(l);
                return sd_event_exit(l->event, EXIT_FAILURE_GENERIC);
        }
        cm->stream.have += (size_t) n;
        if (dbus_wire_stream_consume(&cm->stream, on_wire_call, l) < 0) {
                /* dbus-daemon sends whole, valid messages: this is not it. */
                log_error("The D-Bus monitor connection sent something that is not D-Bus; exiting, to be restarted.");
                drop_monitor(l);
                return sd_event_exit(l->event, EXIT_FAILURE_GENERIC);
        }
        return 0;
}

static void setup_free(MonitorSetup *setup) {
        if (!setup)
                return;
        sd_event_source_disable_unref(setup->io);
        sd_event_source_disable_unref(setup->timer);
        sd_bus_slot_unref(setup->call);
        sd_bus_close_unref(setup->bus); /* what is unsent is dropped: nothing waits */
        free(setup->refusal);
        free(setup);
}

static void drop_monitor(Listener *l) {
        CallState *st = state_of(l);

        if (!st)
                return;
        st->source = sd_event_source_disable_unref(st->source);
        if (st->monitor) {
                setup_free(st->monitor->setup);
                listener_call_owners_drop(l);
                safe_close(st->monitor->fd);
                free(st->monitor->stream.buf);
                st->monitor = mfree(st->monitor);
        }
}

/* A call sd-bus had already read along with the reply to BecomeMonitor. */
static void on_queued(sd_bus_message *m, void *userdata) {
        uint64_t cookie = 0;
        uint8_t type = 0;

        if (sd_bus_message_get_type(m, &type) >= 0 && type == SD_BUS_MESSAGE_METHOD_CALL &&
            sd_bus_message_get_destination(m) && sd_bus_message_get_sender(m) &&
            sd_bus_message_get_cookie(m, &cookie) >= 0)
                on_call(userdata, sd_bus_message_get_destination(m), sd_bus_message_get_sender(m), (uint32_t) cookie);
}

/* The files of the dbus-call rules, for messages: "a.rule, b.rule". */
static char *call_rule_files(Listener *l) {
        char *files = NULL;

        for (size_t i = 0; l->rules && i < l->rules->n_rules; i++) {
                const Rule *rule = &l->rules->rules[i];
                char *more;
                if (rule->event != &event_kind_dbus_call)
                        continue;
                if (asprintf(&more, "%s%s%s", files ?: "", files ? ", " : "", strna(rule->path)) < 0)
                        break;
                free(files);
                files = more;
        }
        return files;
}

/* The setup ended (setup->result says how): the fd is the listener's to
 * read, or the dbus-call rules are dead, which ends the listener at start
 * (to be restarted) and is logged at a reload (the next one tries again). */
static int setup_finish(Listener *l) {
        CallMonitor *cm = monitor_of(l);
        MonitorSetup *setup = cm->setup;
        bool at_start = setup->at_start, says_ready = setup->says_ready;
        size_t n_names = setup->n_names;
        int r = setup->result;

        cm->setup = NULL;
        if (r > 0)
                r = bus_monitor_take_fd(setup->bus, on_queued, l, &cm->fd);
        if (r >= 0)
                r = sd_event_add_io(l->event, &state_of(l)->source, cm->fd, EPOLLIN, on_monitor_io, l);
        if (r >= 0)
                log_info("Watching method calls to %zu bus names.", n_names);
        else {
                _cleanup_free_ char *files = call_rule_files(l);
                if (setup->refusal)
                        log_error("Cannot monitor the bus for the Event=dbus-call rules of %s: BecomeMonitor "
                                  "failed: %s", strna(files), setup->refusal);
                else
                        log_error_errno(r, "Cannot monitor the bus for the Event=dbus-call rules of %s: %m%s",
                                        strna(files), r == -ETIMEDOUT ? " (the bus did not answer in time)" : "");
        }
        setup_free(setup);
        if (r < 0) {
                drop_monitor(l);
                if (at_start) {
                        log_error("Exiting, to be restarted.");
                        return sd_event_exit(l->event, EXIT_FAILURE_GENERIC);
                }
        }
        if (says_ready)
                (void) sd_notify(false, "READY=1");
        return 0;
}

static int on_become_monitor(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        MonitorSetup *setup = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);

        if (!e)
                setup->result = 1;
        else {
                /* The bus's refusal, or sd-bus's word for a lost connection */
                setup->result = -(sd_bus_error_get_errno(e) ?: EIO);
                setup->refusal = strdup(e->message ?: strna(e->name));
        }
        return 0;
}

/* The connection can go on: sd-bus reads and writes what it can, one message
 * at a time, each handed back here (never dispatched: see bus-monitor.h).
 * Before BecomeMonitor's reply the bus sends nothing monitored (NameAcquired
 * at most); from the reply on, bus_monitor_take_fd() takes the rest. */
static int on_setup_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Listener *l = userdata;
        MonitorSetup *setup = monitor_of(l)->setup;
        int r;

        do {
                sd_bus_message *m = NULL;
                r = sd_bus_process(setup->bus, &m);
                sd_bus_message_unref(m);
        } while (r > 0 && setup->result == 0);
        if (r < 0 && setup->result == 0)
                setup->result = r;
        if (setup->result == 0) {
                r = sd_bus_get_events(setup->bus);
                if (r >= 0)
                        r = sd_event_source_set_io_events(setup->io, (uint32_t) r);
                if (r >= 0)
                        return 0;
                setup->result = r;
        }
        return setup_finish(l);
}

static int on_setup_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Listener *l = userdata;

        monitor_of(l)->setup->result = -ETIMEDOUT;
        return setup_finish(l);
}

bool listener_call_monitor_says_ready(Listener *l) {
        if (!monitor_of(l) || !monitor_of(l)->setup)
                return false;
        monitor_of(l)->setup->says_ready = true;
        return true;
}

/* Starts the monitor's setup and returns: connecting, authenticating, Hello
 * and BecomeMonitor go on from the loop (on_setup_io), bounded by a timer.
 * A setup still pending is dropped first (a reload during it). */
static int setup_call_monitor(Listener *l, bool at_start) {
        _cleanup_strv_free_ char **matches = NULL;
        MonitorSetup *setup;
        int r;

        drop_monitor(l);
        for (size_t i = 0; l->rules && i < l->rules->n_rules; i++) {
                const Rule *rule = &l->rules->rules[i];
                char *m;
                if (rule->event != &event_kind_dbus_call)
                        continue;
                if (asprintf(&m, "type='method_call',destination='%s'", listener_call_rule_bus_name(rule)) < 0 ||
                    (r = strv_consume(&matches, m)) < 0)
                        return -ENOMEM;
        }
        if (!matches)
                return 0;

        CallMonitor *cm = state_of(l)->monitor = calloc(1, sizeof(CallMonitor));
        if (!cm)
                return log_error_errno(-ENOMEM, "Cannot monitor the bus for Event=dbus-call rules: %m");
        cm->fd = -EBADF; /* not 0: a failure closes it */
        cm->stream = (DBusWireStream) { .buf = malloc(MONITOR_BUFFER), .size = MONITOR_BUFFER };
        setup = cm->setup = calloc(1, sizeof(MonitorSetup));
        r = cm->stream.buf && setup ? 0 : -ENOMEM;
        if (r >= 0) {
                setup->at_start = at_start;
                setup->n_names = strv_length(matches);
                r = bus_monitor_start(l->bus_address, matches, on_become_monitor, setup, l->call_monitor_timeout,
                                      &setup->bus, &setup->call);
        }
        if (r >= 0)
                r = sd_bus_get_events(setup->bus);
        if (r >= 0)
                r = sd_event_add_io(l->event, &setup->io, sd_bus_get_fd(setup->bus), (uint32_t) r, on_setup_io, l);
        if (r >= 0)
                r = sd_event_add_time_relative(l->event, &setup->timer, CLOCK_MONOTONIC, l->call_monitor_timeout,
                                               USEC_PER_MSEC, on_setup_timeout, l);
        for (size_t i = 0; r >= 0 && l->rules && i < l->rules->n_rules; i++)
                if (l->rules->rules[i].event == &event_kind_dbus_call)
                        r = listener_call_owner_add(l, listener_call_rule_bus_name(&l->rules->rules[i]));
        if (r < 0) {
                _cleanup_free_ char *files = call_rule_files(l);
                drop_monitor(l);
                return log_error_errno(r, "Cannot monitor the bus for the Event=dbus-call rules of %s: %m",
                                       strna(files));
        }
        return 0;
}

static int start_call_monitor(Listener *l) {
        return setup_call_monitor(l, true);
}

/* The calls the monitor reports are looked for in the bus connections of
 * the rules' frozen units (bus-peek.c): found again for the new rules. */
static int reload_call_monitor(Listener *l) {
        int r = setup_call_monitor(l, false);
        (void) listener_sync_call_targets(l);
        return r;
}

static void stop_call_monitor(Listener *l) {
        listener_drop_call_targets(l);
        drop_monitor(l);
}

const ListenerSource listener_source_dbus_call = {
        .name = "dbus-call",
        .kinds = (const EventKind * const[]) { &event_kind_dbus_call, NULL },
        .state_size = sizeof(CallState),
        .statistics = (const ListenerStatistic[]) { LISTENER_SOURCE_STATISTIC(CallState, undelivered),
                                                    LISTENER_SOURCE_STATISTIC(CallState, calls_seen), {} },
        .start = start_call_monitor,
        .before_reload = listener_drop_call_targets, /* they point into the rules */
        .reload = reload_call_monitor,
        .stop = stop_call_monitor,
};
