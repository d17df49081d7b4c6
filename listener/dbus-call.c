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
 * Thaw= units (sockets.c): the bus writes a call to its destination before
 * it shows it to monitors, so a delivered call is there when the monitor
 * tells, and a refused one never is. Calls while nothing of the rule is
 * frozen are left alone: one that reached a unit frozen during enter is
 * found unread when standby begins (thaw.c). */
#include <assert.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <systemd/sd-daemon.h>

#include "bus-monitor.h"
#include "bus-owner.h"
#include "dbus-wire.h"
#include "dbus-names.h"
#include "listener.h"
#include "log.h"
#include "strv.h"

/* Headers longer than this (fields of 64 KiB) are skipped unread: bus names
 * are at most 255 bytes, and dbus-daemon sends nothing like it. */
#define MONITOR_BUFFER (64u * 1024u)

/* The process that owns a watched bus name, by the bus's word
 * (GetConnectionUnixProcessID), asked again whenever the name changes hands
 * (NameOwnerChanged); 0 while unknown or unowned. Only its bus connections
 * can hold a call the bus delivered to the name: any other process of a
 * Thaw= unit reads its own connection where it likes, and can stop inside
 * a message whose body it wrote (a signal it sent itself), leaving forged
 * calls as its unread bytes. Both asked without waiting. */
typedef struct CallOwner {
        Listener *listener;
        char *bus_name;
        pid_t pid;
        sd_bus_slot *changed, *query;
        struct CallOwner *next;
} CallOwner;

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
        CallOwner *owners;
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

static int on_owner_pid(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        CallOwner *o = userdata;
        uint32_t pid = 0;

        if (sd_bus_message_is_method_error(reply, NULL) || sd_bus_message_read(reply, "u", &pid) < 0)
                pid = 0; /* no owner */
        o->pid = (pid_t) pid;
        log_debug("%s is owned by process %u.", o->bus_name, pid);
        return 0;
}

static void owner_query(CallOwner *o) {
        o->pid = 0;
        o->query = sd_bus_slot_unref(o->query); /* a reply still to come is dropped */
        if (sd_bus_call_method_async(o->listener->bus, &o->query, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                     "org.freedesktop.DBus", "GetConnectionUnixProcessID", on_owner_pid, o, "s",
                                     o->bus_name) < 0)
                log_warning("Cannot ask the bus who owns %s: calls to it wake nothing.", o->bus_name);
}

static int on_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        if (bus_signal_from_bus(m)) /* anyone may send one to the listener alone */
                owner_query(userdata);
        return 0;
}

static void owners_free(CallOwner *o) {
        while (o) {
                CallOwner *next = o->next;
                sd_bus_slot_unref(o->changed);
                sd_bus_slot_unref(o->query);
                free(o->bus_name);
                free(o);
                o = next;
        }
}

static int owner_add(Listener *l, CallMonitor *cm, const char *bus_name) {
        _cleanup_free_ char *match = NULL;
        CallOwner *o;

        for (o = cm->owners; o; o = o->next)
                if (streq(o->bus_name, bus_name))
                        return 0;
        if (!l->bus)
                return 0; /* no bus: no owner known, no call found */
        o = calloc(1, sizeof(CallOwner));
        if (!o || !(o->bus_name = strdup(bus_name))) {
                free(o);
                return -ENOMEM;
        }
        o->listener = l;
        o->next = cm->owners;
        cm->owners = o;
        if (asprintf(&match, "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
                             "member='NameOwnerChanged',arg0='%s'", bus_name) < 0)
                return -ENOMEM;
        /* The match first: no change between the question and the watch. */
        int r = sd_bus_add_match_async(l->bus, &o->changed, match, on_owner_changed, NULL, o);
        if (r < 0)
                return r;
        owner_query(o);
        return 0;
}

pid_t listener_call_owner_pid(Listener *l, const char *bus_name) {
        for (CallOwner *o = monitor_of(l) ? monitor_of(l)->owners : NULL; o; o = o->next)
                if (streq(o->bus_name, bus_name))
                        return o->pid;
        return 0;
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
                (void) listener_dispatch(l, &(Event) { .kind = &event_kind_dbus_call, .rule = rule }, received);
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
         * bus goes away (push.c), exit to be restarted, and reconnect. */
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
                owners_free(st->monitor->owners);
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
                        r = owner_add(l, cm, listener_call_rule_bus_name(&l->rules->rules[i]));
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

static int reload_call_monitor(Listener *l) {
        return setup_call_monitor(l, false);
}

/* Event=dbus-call: BusName=, the name called. */
typedef struct CallMatch {
        char *bus_name;
} CallMatch;

const char *listener_call_rule_bus_name(const Rule *rule) {
        return rule->event == &event_kind_dbus_call ? ((const CallMatch *) rule->match)->bus_name : NULL;
}

static void call_match_done(void *match) {
        free(((CallMatch *) match)->bus_name);
}

static int parse_bus_name(Rule *rule, const char *value, char **ret_why) {
        if (!dbus_bus_name_is_valid(value))
                return rule_key_fail(ret_why, "BusName=%s: expected a D-Bus bus name such as org.example.Mail (or a "
                                     "unique name such as :1.42)", value);
        return rule_key_string(&((CallMatch *) rule->match)->bus_name, value);
}

static int check_call(const Rule *rule, char **ret_why) {
        if (!((const CallMatch *) rule->match)->bus_name)
                return rule_key_fail(ret_why, "Event=dbus-call needs BusName=");
        return 0;
}

static char *describe_call(const Rule *rule) {
        char *s;
        return asprintf(&s, "on a method call to %s", ((const CallMatch *) rule->match)->bus_name) < 0 ? NULL : s;
}

/* A watched bus name belongs to its rule. */
static bool match_call(const Rule *rule, const Event *ev) {
        return rule == ev->rule;
}

const EventKind event_kind_dbus_call = {
        .name = "dbus-call",
        .match_size = sizeof(CallMatch),
        .done = call_match_done,
        .keys = (const RuleKey[]) { { "BusName", parse_bus_name }, {} },
        .check = check_call,
        .describe = describe_call,
        .matches = match_call,
};

const ListenerSource listener_source_dbus_call = {
        .name = "dbus-call",
        .kinds = (const EventKind * const[]) { &event_kind_dbus_call, NULL },
        .state_size = sizeof(CallState),
        .statistics = (const ListenerStatistic[]) { LISTENER_SOURCE_STATISTIC(CallState, undelivered),
                                                    LISTENER_SOURCE_STATISTIC(CallState, calls_seen), {} },
        .start = start_call_monitor,
        .reload = reload_call_monitor,
        .stop = drop_monitor,
};
