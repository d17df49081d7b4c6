/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Event=dbus-call rules: their [Match] key, BusName=, and how a rule
 * matches a call; the source that delivers the calls is dbus-call.c. */
#include "dbus-names.h"
#include "listener.h"

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
