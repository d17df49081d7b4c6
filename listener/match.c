/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Events to rules: which rules an event matches, and what each asks for
 * (a thaw, the end of standby, or, while standby is not active, a late
 * action to replay once it is). */
#include <limits.h>

#include "listener.h"
#include "log.h"

int listener_dispatch(Listener *l, const Event *ev, usec_t received) {
        int matched = 0, r;

        l->stats.events++;
        l->step_aside = !ev->kind->answers_caller && !ev->stepped_aside;
        for (size_t i = 0; l->rules && i < l->rules->n_rules; i++) {
                const Rule *rule = &l->rules->rules[i];

                if (!listener_source_matches(rule, ev))
                        continue;
                matched++;
                l->stats.matched++;

                if (!listener_standby_active(l)) {
                        listener_remember_late(l, rule);
                        continue;
                }
                /* While an exit runs, what any event asks for is under way. */
                if (listener_exiting(l))
                        continue;
                if (rule->exit_standby) {
                        if (l->phase != LISTENER_PHASE_LEAVE_ASKED) /* logged once, when first asked */
                                listener_wake_exit(l, rule, ev);
                        listener_exit_standby(l, rule->path);
                        break; /* nothing left to thaw */
                }
                char cause[PATH_MAX + 64];
                snprintf(cause, sizeof(cause), "%s event, rule %s", ev->kind->name, rule->path);
                l->thaw_cause = cause;
                l->waking = ev;
                l->waking_rule = rule;
                r = listener_thaw_rule(l, rule, received);
                l->thaw_cause = NULL;
                l->waking = NULL;
                l->waking_rule = NULL;
                if (r < 0)
                        log_warning_errno(r, "Failed to thaw the units of rule %s: %m", rule->path);
        }
        l->step_aside = false;
        return matched;
}
