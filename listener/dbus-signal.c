/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Event=dbus-signal: a D-Bus signal that a rule's Match= names, through a
 * match rule of the listener's own on the bus, installed without waiting. */
#include "bus-owner.h"
#include "dbus-names.h"
#include "listener.h"
#include "log.h"

/* Event=dbus-signal's [Match]. */
typedef struct SignalMatch {
        char *match;
        BusOwner *sender; /* sender='s owner, when Match= names one */
} SignalMatch;

/* One match slot per dbus-signal rule. */
typedef struct SignalState {
        sd_bus_slot **slots;
        size_t n_slots;
} SignalState;

static const EventKind event_kind_dbus_signal;
extern const ListenerSource listener_source_dbus_signal;

static int on_signal_match(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        const Rule *rule = userdata;
        const SignalMatch *m = rule->match;
        Listener *l = rule->userdata;

        /* A signal sent to the listener alone reaches it whatever Match=
         * says; a sender= that is a well-known name is checked by the bus
         * for broadcasts routed by this match, not for those another match
         * brought (sd-bus cannot check it). */
        if (!bus_signal_is_broadcast(msg) || (m->sender && !bus_owner_sent(m->sender, msg))) {
                log_debug("Ignored the D-Bus signal %s.%s from %s for %s: %s.", strna(sd_bus_message_get_interface(msg)),
                          strna(sd_bus_message_get_member(msg)), strna(sd_bus_message_get_sender(msg)), rule->path,
                          bus_signal_is_broadcast(msg) ? "not from the owner of its sender=" : "sent to the listener alone");
                return 0;
        }
        log_debug("D-Bus signal %s.%s matched %s.", strna(sd_bus_message_get_interface(msg)),
                  strna(sd_bus_message_get_member(msg)), rule->path);
        (void) listener_dispatch(l, &(Event) { .kind = &event_kind_dbus_signal, .rule = rule }, now_usec(CLOCK_MONOTONIC));
        return 0;
}

/* The bus's answer to a rule's AddMatch: asked without waiting (a hung bus
 * would stall the loop for every rule at each reload). */
static int on_match_installed(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        const Rule *rule = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);

        if (e)
                log_error("%s: Match=%s: the bus refused it (%s); the rule fires on nothing.", rule->path,
                          ((const SignalMatch *) rule->match)->match, e->message ?: e->name);
        return 0;
}

static void drop_slots(SignalState *st) {
        for (size_t i = 0; i < st->n_slots; i++)
                sd_bus_slot_unref(st->slots[i]);
        st->slots = mfree(st->slots);
        st->n_slots = 0;
}

static int setup_signal_matches(Listener *l) {
        SignalState *st = listener_source_state(l, &listener_source_dbus_signal);
        int r;

        drop_slots(st);

        for (size_t i = 0; l->rules && i < l->rules->n_rules; i++) {
                Rule *rule = &l->rules->rules[i];
                sd_bus_slot **ns;

                if (rule->event != &event_kind_dbus_signal)
                        continue;
                ns = realloc(st->slots, (st->n_slots + 1) * sizeof(sd_bus_slot *));
                if (!ns)
                        return -ENOMEM;
                st->slots = ns;
                rule->userdata = l;
                SignalMatch *m = rule->match;
                const char *match = m->match;
                _cleanup_free_ char *sender = dbus_match_value(match, "sender");
                m->sender = bus_owner_free(m->sender);
                if (sender && (r = bus_owner_new(l->bus, sender, NULL, NULL, &m->sender)) < 0) {
                        log_error_errno(r, "%s: Match=%s: cannot follow who owns %s; the rule is not used: %m",
                                        rule->path, match, sender);
                        continue;
                }
                r = sd_bus_add_match_async(l->bus, &st->slots[st->n_slots], match, on_signal_match,
                                           on_match_installed, rule);
                if (r < 0) {
                        log_error_errno(r, "%s: Match=%s: not a D-Bus match rule the bus takes: %m", rule->path, match);
                        continue;
                }
                st->n_slots++;
        }
        return 0;
}

static void stop_signal_matches(Listener *l) {
        for (size_t i = 0; l->rules && i < l->rules->n_rules; i++)
                if (l->rules->rules[i].event == &event_kind_dbus_signal)
                        ((SignalMatch *) l->rules->rules[i].match)->sender =
                                bus_owner_free(((SignalMatch *) l->rules->rules[i].match)->sender);
        drop_slots(listener_source_state(l, &listener_source_dbus_signal));
}

/* Event=dbus-signal: Match=, a D-Bus match rule. */
static void signal_match_done(void *match) {
        free(((SignalMatch *) match)->match);
        bus_owner_free(((SignalMatch *) match)->sender);
}

static int parse_signal_match(Rule *rule, const char *value, char **ret_why) {
        const char *why = dbus_match_check(value);
        if (why)
                return rule_key_fail(ret_why, "Match=%s: %s; expected a D-Bus match rule such as "
                                     "\"type='signal',interface='org.example.Push'\"", value, why);
        _cleanup_free_ char *destination = dbus_match_value(value, "destination");
        if (destination)
                return rule_key_fail(ret_why, "Match=%s: destination= would match only signals sent to the listener "
                                     "alone, which anyone may send and which fire no rule", value);
        return rule_key_string(&((SignalMatch *) rule->match)->match, value);
}

static int check_signal(const Rule *rule, char **ret_why) {
        if (!((const SignalMatch *) rule->match)->match)
                return rule_key_fail(ret_why, "Event=dbus-signal needs Match=");
        return 0;
}

static char *describe_signal(const Rule *rule) {
        char *s;
        return asprintf(&s, "on the D-Bus signal %s", ((const SignalMatch *) rule->match)->match) < 0 ? NULL : s;
}

/* A signal match belongs to its rule. */
static bool match_signal(const Rule *rule, const Event *ev) {
        return rule == ev->rule;
}

static const EventKind event_kind_dbus_signal = {
        .name = "dbus-signal",
        .match_size = sizeof(SignalMatch),
        .done = signal_match_done,
        .keys = (const RuleKey[]) { { "Match", parse_signal_match }, {} },
        .check = check_signal,
        .describe = describe_signal,
        .matches = match_signal,
};

const ListenerSource listener_source_dbus_signal = {
        .name = "dbus-signal",
        .state_size = sizeof(SignalState),
        .kinds = (const EventKind * const[]) { &event_kind_dbus_signal, NULL },
        .start = setup_signal_matches,
        .reload = setup_signal_matches,
        .stop = stop_signal_matches,
};
