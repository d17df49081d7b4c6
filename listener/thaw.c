/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a matching rule's Thaw= does: thaw the units its names stand for
 * (names.c), each as its state says (unit-state.c), for a window
 * (windows.c); events inside an open window coalesce into its one thaw and
 * cost no system call. The thaw is on the event's critical path: one write
 * of "0" to each unit's kept-open cgroup.freeze, or a ThawUnit sent; the
 * record follows 2 ms later (unit-state.c). */
#include "listener.h"
#include "log.h"
#include "strv.h"

/* Thaws the units a rule's unit name stands for, for duration, unless
 * their window is open. */
int listener_thaw(Listener *l, const char *unit, usec_t duration, usec_t received) {
        usec_t now = now_usec(CLOCK_MONOTONIC);
        usec_t until = duration == USEC_INFINITY ? USEC_INFINITY : now + duration;
        char **leaves = listener_resolve_unit(l, unit);
        _cleanup_strv_free_ char **done = NULL;
        int r;

        for (char **x = leaves; x && *x; x++)
                if (listener_unit_thaw(l, *x, now, until) > 0 && (r = strv_extend(&done, *x)) < 0)
                        return r;
        if (!done) {
                l->stats.coalesced++;
                return 0;
        }
        usec_t took = now_usec(CLOCK_MONOTONIC) - received;
        l->stats.thaws++;
        l->stats.thaw_usec_total += took;
        l->stats.thaw_usec_max = MAX(l->stats.thaw_usec_max, took);
        log_debug("Thawed %zu cgroups for %s, %.3f ms after the event.", strv_length(done), unit, (double) took / 1000.0);

        /* The record, once this event is answered. */
        r = listener_record_thaws(l, done, until);
        if (r < 0)
                return r;
        if (until == USEC_INFINITY)
                return 0;
        return listener_add_window(l, done, until);
}
