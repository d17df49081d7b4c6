/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Events to rules: which rules an event matches, and what each asks for
 * (a thaw, the end of standby, or, while standby is not active, a late
 * action to replay once it is). */
#include "listener.h"
#include "log.h"

static bool str_matches(const char *want, const char *have) {
        return !want || (have && streq(want, have));
}

/* A key a rule leaves out matches anything. */
static bool rule_matches(const Rule *rule, const Event *ev) {
        if (rule->event != ev->kind)
                return false;
        if (ev->rule)
                return rule == ev->rule; /* a D-Bus match belongs to its rule */
        switch (ev->kind) {
        case EVENT_PUSH:
        case EVENT_SOCKET:
                return str_matches(rule->unit, ev->unit);
        case EVENT_LINK:
        case EVENT_ADDRESS:
                return str_matches(rule->interface, ev->interface) && str_matches(rule->change, ev->change) &&
                       (!rule->family || rule->family == ev->family);
        case EVENT_INPUT:
                return (!rule->device || (ev->device && streq(rule->device, ev->device)) ||
                        (ev->device_path && streq(rule->device, ev->device_path))) &&
                       rule->key_type == ev->key_type && rule->key_code == ev->key_code &&
                       (rule->value < 0 || rule->value == ev->value);
        case EVENT_UEVENT:
                return str_matches(rule->subsystem, ev->subsystem) && str_matches(rule->change, ev->change);
        default:
                return false;
        }
}

int listener_dispatch(Listener *l, const Event *ev, usec_t received) {
        int matched = 0, r;

        l->stats.events++;
        for (size_t i = 0; l->rules && i < l->rules->n_rules; i++) {
                const Rule *rule = &l->rules->rules[i];

                if (!rule_matches(rule, ev))
                        continue;
                matched++;
                l->stats.matched++;

                if (!l->standby_active) {
                        if (rule->exit_standby)
                                listener_remember_late(l, NULL, 0);
                        for (char **t = rule->thaw; !rule->exit_standby && t && *t; t++)
                                listener_remember_late(l, *t, rule->duration);
                        continue;
                }
                /* While an exit runs, what any event asks for is under way. */
                if (listener_exiting(l))
                        continue;
                if (rule->exit_standby) {
                        listener_exit_standby(l, rule->path);
                        break; /* nothing left to thaw */
                }
                for (char **t = rule->thaw; t && *t; t++) {
                        r = listener_thaw(l, *t, rule->duration, received);
                        if (r < 0)
                                log_warning_errno(r, "Failed to thaw %s (rule %s): %m", *t, rule->path);
                }
        }
        return matched;
}
