/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* standby-manager asks standby-listener over D-Bus (libsystemd through
 * sdbus-dl.c): status for its statistics, thaw --for for a thaw window. */
#include <stddef.h>

#include "sdbus-dl.h"

#include "log.h"
#include "manager.h"
#include "strv.h"

#define LISTENER_BUS_NAME "org.standby.Listener1"

/* The bus the listener is on: the system bus, or address (tests, the bench).
 * Connected by deadline (CLOCK_MONOTONIC): sd-bus bounds a call by its
 * timeout, but not the authentication and Hello before it (its own 90 s),
 * and a stopped bus daemon still has the kernel queue the connection. */
static int open_bus(const SdBus *bus_fn, const char *address, usec_t deadline, sd_bus **ret) {
        sd_bus *b = NULL;
        int r;

        if (!address)
                address = secure_getenv("DBUS_SYSTEM_BUS_ADDRESS") ?: "unix:path=/run/dbus/system_bus_socket";
        r = bus_fn->new_(&b);
        if (r >= 0)
                r = bus_fn->set_address(b, address);
        if (r >= 0)
                r = bus_fn->set_bus_client(b, 1);
        if (r >= 0)
                r = bus_fn->start(b);
        while (r >= 0 && (r = bus_fn->is_ready(b)) == 0) {
                r = bus_fn->process(b, NULL);
                if (r != 0)
                        continue;
                usec_t now = now_usec(CLOCK_MONOTONIC);
                r = now >= deadline ? -ETIMEDOUT : bus_fn->wait(b, deadline - now);
        }
        if (r < 0) {
                if (b)
                        (void) bus_fn->close_unref_noflush(b);
                return r;
        }
        *ret = b;
        return 0;
}

/* What is left until deadline, for a call's timeout (at least 1 ms: 0 would
 * mean sd-bus's default). */
static usec_t left(usec_t deadline) {
        usec_t now = now_usec(CLOCK_MONOTONIC);
        return deadline > now + USEC_PER_MSEC ? deadline - now : USEC_PER_MSEC;
}

/* Opens a connection to address (the system bus if NULL) and calls member
 * of interface on the listener's object, with arg (a string) if not NULL,
 * all within 2 s: the connection in *ret_bus (for the caller to close, set
 * as soon as it is open), the reply in *ret_reply. */
static int call_listener(const SdBus *bus_fn, const char *address, const char *interface, const char *member,
                         const char *arg, sd_bus **ret_bus, sd_bus_message **ret_reply, sd_bus_error *error) {
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + 2 * USEC_PER_SEC;
        int r = open_bus(bus_fn, address, deadline, ret_bus);

        if (r < 0)
                return r;
        (void) bus_fn->set_method_call_timeout(*ret_bus, left(deadline));
        return arg ? bus_fn->call_method(*ret_bus, LISTENER_BUS_NAME, "/org/standby/Listener1", interface, member, error,
                                         ret_reply, "s", arg)
                   : bus_fn->call_method(*ret_bus, LISTENER_BUS_NAME, "/org/standby/Listener1", interface, member, error,
                                         ret_reply, "");
}

int listener_stats_get(const char *address, ListenerStat **ret, size_t *ret_n) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        sd_bus *b = NULL;
        ListenerStat *stats = NULL;
        size_t n = 0;
        const char *key;
        uint64_t value;
        int r = 0;

        const SdBus *bus_fn = sdbus_get(&r);
        if (!bus_fn)
                return r;
#define bus (*bus_fn)
        r = call_listener(bus_fn, address, "org.standby.Listener1", "GetStatistics", NULL, &b, &reply, &error);
        if (r < 0)
                goto finish;
        r = bus.enter_container(reply, 'a', "{st}");
        while (r >= 0 && (r = bus.read(reply, "{st}", &key, &value)) > 0) {
                ListenerStat *ns = realloc(stats, (n + 1) * sizeof(ListenerStat));
                if (!ns) {
                        r = -ENOMEM;
                        break;
                }
                stats = ns;
                snprintf(stats[n].key, sizeof(stats[n].key), "%s", key);
                stats[n++].value = value;
        }
finish:
        bus.error_free(&error);
        if (reply)
                bus.message_unref(reply);
        if (b)
                bus.close_unref_noflush(b);
        if (r < 0) {
                free(stats);
                return r;
        }
        *ret = stats;
        *ret_n = n;
        return 0;
#undef bus
}

/* Reads an array of strings of the reply into a strv. */
static int read_strings(const SdBus *bus_fn, sd_bus_message *reply, const char *contents, char ***ret_a,
                        char ***ret_b) {
        const char *a, *b;
        int r;

        r = bus_fn->enter_container(reply, 'a', contents);
        while (r >= 0) {
                if (ret_b)
                        r = bus_fn->read(reply, "(ss)", &a, &b);
                else
                        r = bus_fn->read(reply, "s", &a);
                if (r <= 0)
                        break;
                if ((r = strv_extend(ret_a, a)) < 0 || (ret_b && (r = strv_extend(ret_b, b)) < 0))
                        break;
        }
        if (r >= 0)
                r = bus_fn->exit_container(reply);
        return r;
}

int listener_thaw_window(const char *address, char **cgroups, usec_t duration, char ***ret_thawed,
                         char ***ret_failed, char ***ret_why, char **ret_error) {
        _cleanup_strv_free_ char **thawed = NULL, **failed = NULL, **why = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *call = NULL, *reply = NULL;
        sd_bus *b = NULL;
        int r = 0;

        const SdBus *bus_fn = sdbus_get(&r);
        if (!bus_fn)
                return r;
#define bus (*bus_fn)
        /* The listener answers once its thaws through systemd settle: within
         * 3 s (LISTENER_REPORT_TIMEOUT_USEC). */
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC;
        r = open_bus(bus_fn, address, deadline, &b);
        if (r >= 0)
                r = bus.message_new_method_call(b, &call, LISTENER_BUS_NAME, "/org/standby/Listener1",
                                                "org.standby.Listener1", "Thaw");
        if (r >= 0)
                r = bus.append_strv(call, cgroups);
        if (r >= 0)
                r = bus.append(call, "t", (uint64_t) duration);
        if (r >= 0)
                r = bus.call(b, call, left(deadline), &error, &reply);
        if (r >= 0)
                r = read_strings(bus_fn, reply, "s", &thawed, NULL);
        if (r >= 0)
                r = read_strings(bus_fn, reply, "(ss)", &failed, &why);
        if (r < 0 && ret_error && error.name)
                *ret_error = strdup(error.name);
        bus.error_free(&error);
        if (call)
                bus.message_unref(call);
        if (reply)
                bus.message_unref(reply);
        if (b)
                bus.close_unref_noflush(b);
        if (r < 0)
                return r;
        *ret_thawed = TAKE_PTR(thawed);
        *ret_failed = TAKE_PTR(failed);
        *ret_why = TAKE_PTR(why);
        return 0;
#undef bus
}

int listener_prepare_entry(const char *address, usec_t timeout, sd_bus **ret_bus) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *call = NULL, *reply = NULL;
        sd_bus *b = NULL;
        int r = 0;

        const SdBus *bus_fn = sdbus_get(&r);
        if (!bus_fn)
                return r;
#define bus (*bus_fn)
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + timeout;
        r = open_bus(bus_fn, address, deadline, &b);
        if (r >= 0)
                r = bus.message_new_method_call(b, &call, LISTENER_BUS_NAME, "/org/standby/Listener1",
                                                "org.standby.Listener1", "PrepareEntry");
        if (r >= 0)
                r = bus.call(b, call, left(deadline), &error, &reply);
        bus.error_free(&error);
        if (call)
                bus.message_unref(call);
        if (reply)
                bus.message_unref(reply);
        if (r >= 0) {
                *ret_bus = b;
                return 0;
        }
        if (b)
                bus.close_unref_noflush(b);
        return r;
#undef bus
}

void listener_prepare_done(sd_bus *b) {
        int r = 0;
        const SdBus *bus_fn = sdbus_get(&r);

        if (b && bus_fn)
                bus_fn->close_unref_noflush(b);
}

int listener_power_get(const char *address, char ***ret_pairs, char ***ret_locks) {
        _cleanup_strv_free_ char **pairs = NULL, **locks = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL, *reply2 = NULL;
        const char *k, *v, *what, *who, *why, *mode;
        uint32_t uid, pid;
        sd_bus *b = NULL;
        int r = 0;

        const SdBus *bus_fn = sdbus_get(&r);
        if (!bus_fn)
                return r;
#define bus (*bus_fn)
        r = call_listener(bus_fn, address, "org.standby.Listener1", "GetPowerState", NULL, &b, &reply, &error);
        if (r >= 0)
                r = bus.enter_container(reply, 'a', "{ss}");
        while (r >= 0 && (r = bus.read(reply, "{ss}", &k, &v)) > 0)
                if ((r = strv_extend(&pairs, k)) < 0 || (r = strv_extend(&pairs, v)) < 0)
                        break;
        if (r >= 0)
                r = bus.call_method(b, LISTENER_BUS_NAME, "/org/standby/Listener1", "org.standby.Listener1",
                                    "ListInhibitors", &error, &reply2, "");
        if (r >= 0)
                r = bus.enter_container(reply2, 'a', "(ssssuu)");
        while (r >= 0 && (r = bus.read(reply2, "(ssssuu)", &what, &who, &why, &mode, &uid, &pid)) > 0) {
                char *line = NULL;
                if (asprintf(&line, "%s lock: %s (uid %u, pid %u): %s", mode, who, uid, pid, why) < 0 ||
                    (r = strv_extend(&locks, line)) < 0)
                        r = -ENOMEM;
                free(line);
                if (r < 0)
                        break;
        }
        bus.error_free(&error);
        if (reply)
                bus.message_unref(reply);
        if (reply2)
                bus.message_unref(reply2);
        if (b)
                bus.close_unref_noflush(b);
        if (r < 0)
                return r;
        *ret_pairs = TAKE_PTR(pairs);
        *ret_locks = TAKE_PTR(locks);
        return 0;
#undef bus
}

void listener_properties_done(ListenerProperties *p) {
        free(p->state);
        free(p->strategy);
        free(p->entered_by);
        strv_free(p->locks);
        *p = (ListenerProperties) {};
}

/* One property of GetAll's reply, its name read already: the value, or
 * skipped when it is not one standby-manager shows. */
static int read_property(const SdBus *bus_fn, sd_bus_message *reply, const char *name, ListenerProperties *p) {
        static const struct {
                const char *name;
                size_t offset;
        } counters[] = {
                { "Since", offsetof(ListenerProperties, since) },
                { "Events", offsetof(ListenerProperties, events) },
                { "Thaws", offsetof(ListenerProperties, thaws) },
                { "Refreezes", offsetof(ListenerProperties, refreezes) },
                { "ThawFailures", offsetof(ListenerProperties, thaw_failures) },
                { "Exits", offsetof(ListenerProperties, exits) },
        };
        char **text = streq(name, "State")       ? &p->state
                      : streq(name, "Strategy")  ? &p->strategy
                      : streq(name, "EnteredBy") ? &p->entered_by
                                                 : NULL;
        const char *s, *what, *who, *why, *mode;
        uint32_t uid, pid;
        int r;

        if (text) {
                r = bus_fn->read(reply, "v", "s", &s);
                return r < 0 ? r : free_and_strdup(text, s);
        }
        for (size_t i = 0; i < ELEMENTSOF(counters); i++)
                if (streq(name, counters[i].name))
                        return bus_fn->read(reply, "v", "t", (uint64_t *) ((char *) p + counters[i].offset));
        if (!streq(name, "Inhibitors"))
                return bus_fn->skip(reply, "v");
        r = bus_fn->enter_container(reply, 'v', "a(ssssuu)");
        if (r >= 0)
                r = bus_fn->enter_container(reply, 'a', "(ssssuu)");
        while (r >= 0 && (r = bus_fn->read(reply, "(ssssuu)", &what, &who, &why, &mode, &uid, &pid)) > 0) {
                char *line;
                if (asprintf(&line, "%s lock: %s (uid %u, pid %u): %s", mode, who, uid, pid, why) < 0)
                        return -ENOMEM;
                r = strv_consume(&p->locks, line);
        }
        if (r >= 0)
                r = bus_fn->exit_container(reply);
        if (r >= 0)
                r = bus_fn->exit_container(reply);
        return r;
}

int listener_properties_get(const char *address, ListenerProperties *ret) {
        ListenerProperties p = {};
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        sd_bus *b = NULL;
        const char *name;
        int r = 0;

        const SdBus *bus_fn = sdbus_get(&r);
        if (!bus_fn)
                return r;
#define bus (*bus_fn)
        r = call_listener(bus_fn, address, "org.freedesktop.DBus.Properties", "GetAll", "org.standby.Listener1", &b,
                          &reply, &error);
        if (r >= 0)
                r = bus.enter_container(reply, 'a', "{sv}");
        while (r >= 0 && (r = bus.enter_container(reply, 'e', "sv")) > 0) {
                r = bus.read(reply, "s", &name);
                if (r >= 0)
                        r = read_property(bus_fn, reply, name, &p);
                if (r >= 0)
                        r = bus.exit_container(reply);
        }
        if (r >= 0 && !p.state)
                r = -EBADMSG; /* not the listener's interface */
        if (r >= 0 && ((!p.strategy && !(p.strategy = strdup(""))) || (!p.entered_by && !(p.entered_by = strdup("")))))
                r = -ENOMEM;
        bus.error_free(&error);
        if (reply)
                bus.message_unref(reply);
        if (b)
                bus.close_unref_noflush(b);
        if (r < 0) {
                listener_properties_done(&p);
                return r;
        }
        *ret = p;
        return 0;
#undef bus
}
