/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Events during enter: what rules asked for while standby was not active,
 * carried out once the journal says it began, if the event came after the
 * enter began (after apps were told, when they were: the apps' delay is
 * part of the enter); and the D-Bus calls found unread in a frozen unit's
 * socket. */
#include <limits.h>

#include "listener.h"
#include "log.h"
#include "strv.h"

/* Remembered while standby is inactive: an event that comes while the
 * manager is still freezing would otherwise be lost (a push for a unit just
 * frozen, the lid opened during enter). Per rule, the latest event's time
 * alone: all a replay asks is whether one came after the enter began, and
 * a rule set's size bounds what any number of events can cost. */
void listener_remember_late(Listener *l, const Rule *rule) {
        if (l->late_rules != l->rules) { /* a new rule set: nothing of the old one holds */
                l->late = mfree(l->late);
                l->late_rules = NULL;
        }
        if (!l->late) {
                l->late = calloc(l->rules->n_rules, sizeof(usec_t));
                if (!l->late) {
                        log_warning("Out of memory: an event during enter (%s) is not carried out once standby begins.",
                                    rule->path);
                        return;
                }
                l->late_rules = l->rules;
        }
        l->late[rule - l->rules->rules] = now_usec(CLOCK_REALTIME);
}

void listener_forget_late(Listener *l) {
        l->late = mfree(l->late);
        l->late_rules = NULL;
}

void listener_replay_late(Listener *l) {
        usec_t since = l->m.journal ? l->m.journal->since : USEC_INFINITY;
        if (listener_apps_told(l) && l->told_realtime < since)
                since = l->told_realtime;
        const Rule *exit = NULL;

        for (size_t i = 0; l->late && l->late_rules == l->rules && i < l->rules->n_rules; i++) {
                const Rule *rule = &l->rules->rules[i];
                if (!listener_standby_active(l) || l->late[i] == 0 || l->late[i] < since)
                        continue;
                l->stats.replayed++;
                if (rule->exit_standby) {
                        exit = exit ?: rule;
                        continue;
                }
                char cause[PATH_MAX + 64];
                snprintf(cause, sizeof(cause), "an event during enter, rule %s", rule->path);
                l->thaw_cause = cause;
                l->waking_rule = rule; /* the wake log's: the event itself is gone */
                int r = listener_thaw_rule(l, rule, now_usec(CLOCK_MONOTONIC));
                l->thaw_cause = NULL;
                l->waking_rule = NULL;
                if (r < 0)
                        log_warning("%s: failed to thaw for an event that came during enter.", rule->path);
                else
                        log_info("%s: thawed for an event that came while standby was being entered.", rule->path);
        }
        listener_forget_late(l);
        if (exit) {
                log_info("Ending standby: an ExitStandby= event came while it was being entered.");
                if (l->phase != LISTENER_PHASE_LEAVE_ASKED) /* logged once, when first asked */
                        listener_wake_exit(l, exit, NULL);
                listener_exit_standby(l, "an event during enter");
                return;
        }

        /* A D-Bus call that reached a service before enter began can still be
         * waiting, unread, in its socket: the monitor saw it go by while
         * nothing was frozen. Such a service is woken now. */
        for (size_t i = 0; listener_standby_active(l) && l->rules && i < l->rules->n_rules; i++) {
                const Rule *rule = &l->rules->rules[i];

                for (char **t = rule->thaw; rule->event == &event_kind_dbus_call && t && *t; t++) {
                        _cleanup_strv_free_ char **leaves = NULL;
                        if (listener_unit_leaves(l, *t, &leaves) < 0)
                                continue;
                        for (char **x = leaves; *x; x++)
                                if (listener_unit_has_unread_call(l, *x, listener_call_rule_bus_name(rule))) {
                                        log_info("%s froze with a D-Bus call unread: thawing %s.", *x, *t);
                                        l->stats.replayed++;
                                        l->thaw_cause = "a D-Bus call unread at entry";
                                        l->waking_rule = rule;
                                        (void) listener_thaw(l, *t, rule->duration, rule->end_when_idle,
                                                             now_usec(CLOCK_MONOTONIC));
                                        l->thaw_cause = NULL;
                                        l->waking_rule = NULL;
                                        break;
                                }
                }
        }
}
