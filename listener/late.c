/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Events during enter: what rules asked for while standby was not active,
 * carried out once the journal says it began, if the event came after the
 * enter began (after apps were told, when they were: the apps' delay is
 * part of the enter); and the D-Bus calls found unread in a frozen unit's
 * socket. */
#include "listener.h"
#include "log.h"
#include "strv.h"

/* Remembered while standby is inactive: an event that comes while the
 * manager is still freezing would otherwise be lost (a push for a unit just
 * frozen, the lid opened during enter). */
void listener_remember_late(Listener *l, const char *unit, usec_t duration) {
        LateAction *a = &l->late[l->n_late % LATE_ACTIONS_MAX];
        char *u = unit ? strdup(unit) : NULL;

        if (unit && !u)
                return;
        if (l->n_late >= LATE_ACTIONS_MAX)
                free(a->unit);
        *a = (LateAction) { .unit = u, .duration = duration, .realtime = now_usec(CLOCK_REALTIME) };
        l->n_late++;
}

void listener_forget_late(Listener *l) {
        for (size_t i = 0; i < MIN(l->n_late, (size_t) LATE_ACTIONS_MAX); i++)
                free(l->late[i].unit);
        l->n_late = 0;
}

void listener_replay_late(Listener *l) {
        size_t n = MIN(l->n_late, (size_t) LATE_ACTIONS_MAX);
        usec_t since = l->m.journal ? l->m.journal->since : USEC_INFINITY;
        if (l->told && l->told_realtime > 0 && l->told_realtime < since)
                since = l->told_realtime;
        bool exit = false;

        for (size_t i = 0; i < n; i++) {
                LateAction *a = &l->late[i];
                if (l->standby_active && a->realtime >= since) {
                        l->stats.replayed++;
                        if (!a->unit)
                                exit = true;
                        else if (listener_thaw(l, a->unit, a->duration, now_usec(CLOCK_MONOTONIC)) < 0)
                                log_warning("Failed to thaw %s for an event that came during enter.", a->unit);
                        else
                                log_info("Thawed %s for an event that came while standby was being entered.", a->unit);
                }
                free(a->unit);
                a->unit = NULL;
        }
        l->n_late = 0;
        if (exit) {
                log_info("Ending standby: an ExitStandby= event came while it was being entered.");
                listener_exit_standby(l, "an event during enter");
                return;
        }

        /* A D-Bus call that reached a service before enter began can still be
         * waiting, unread, in its socket: the monitor saw it go by while
         * nothing was frozen. Such a service is woken now. */
        for (size_t i = 0; l->standby_active && l->rules && i < l->rules->n_rules; i++) {
                const Rule *rule = &l->rules->rules[i];

                for (char **t = rule->thaw; rule->event == &event_kind_dbus_call && t && *t; t++) {
                        _cleanup_strv_free_ char **leaves = NULL;
                        if (listener_unit_leaves(l, *t, &leaves) < 0)
                                continue;
                        for (char **x = leaves; *x; x++)
                                if (listener_unit_has_unread_call(l, *x, listener_call_rule_bus_name(rule))) {
                                        log_info("%s froze with a D-Bus call unread: thawing %s.", *x, *t);
                                        l->stats.replayed++;
                                        (void) listener_thaw(l, *t, rule->duration, now_usec(CLOCK_MONOTONIC));
                                        break;
                                }
                }
        }
}
