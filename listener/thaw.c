/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a matching rule's Thaw= does: thaw the units its names stand for
 * (names.c), each as its state says (unit-state.c), for a window
 * (windows.c); events inside an open window coalesce into its one thaw and
 * cost no system call. The thaw is on the event's critical path: one write
 * of "0" to each unit's kept-open cgroup.freeze, or a ThawUnit sent; the
 * record follows 2 ms later (unit-state.c). A thaw asked over the bus
 * (Thaw, PushEx) notes each unit's outcome for its reply (report.c). */
#include <sched.h>

#include "listener.h"
#include "log.h"
#include "strv.h"

/* One unit's outcome, for the reply of a call being handled: r from
 * listener_unit_thaw(). */
static void note_outcome(Listener *l, const char *cgroup, int r) {
        CachedUnit *c = listener_cached_unit(l, cgroup);

        if (!l->collecting)
                return;
        if (r > 0)
                /* Through systemd, known done when ThawUnit is answered. */
                listener_report_note(l, cgroup, c && c->systemd ? 1 : 0);
        else if (r < 0)
                listener_report_note(l, cgroup, r);
        else if (!c)
                listener_report_note(l, cgroup, -ESRCH);
        else if (c->state == UNIT_THAWED)
                listener_report_note(l, cgroup, 0); /* thawed already, its window open */
        else if (c->fd < 0)
                listener_report_note(l, cgroup, -ENOENT);
}

/* After an event's first thaw the listener yields its CPU once: a thawed
 * task woken on it (the kernel wakes it on the writer's CPU when its own is
 * busy) would otherwise wait for the listener's bookkeeping, the record,
 * the window and the return to the loop, which the scheduler lets run to
 * the end of its slice. Where the woken task went to another CPU, it
 * costs one system call. */
void listener_step_aside(Listener *l) {
        l->step_aside = false;
        l->stats.yields++;
        (void) sched_yield();
}

int listener_thaw_leaves(Listener *l, char **leaves, usec_t duration, usec_t received) {
        usec_t now = now_usec(CLOCK_MONOTONIC);
        usec_t until = duration >= USEC_INFINITY - now ? USEC_INFINITY : now + duration;
        _cleanup_strv_free_ char **done = NULL;
        size_t failed = 0, gone = 0;
        int r;

        for (char **x = leaves; x && *x; x++) {
                r = listener_unit_thaw(l, *x, now, until);
                note_outcome(l, *x, r);
                if (r == -ENOENT)
                        gone++;
                else if (r < 0)
                        failed++;
                else if (r > 0 && (r = strv_extend(&done, *x)) < 0)
                        return r;
        }
        /* A thaw that failed is no coalesced event: it is counted, and
         * listener_unit_thaw() logged it. */
        l->stats.thaw_failures += failed;
        if (done && l->step_aside)
                listener_step_aside(l);
        if (!done) {
                /* Coalesced: every unit it names is in its open window. */
                if (failed == 0 && gone == 0)
                        l->stats.coalesced++;
                return failed > 0 ? -EIO : 0;
        }
        usec_t took = now_usec(CLOCK_MONOTONIC) - received;
        l->stats.thaws++;
        l->stats.thaw_usec_total += took;
        l->stats.thaw_usec_max = MAX(l->stats.thaw_usec_max, took);
        log_debug("Thawed %zu cgroups, %.3f ms after the event.", strv_length(done), (double) took / 1000.0);

        /* The record, once this event is answered. */
        r = listener_record_thaws(l, done, until);
        if (r < 0)
                return r;
        if (until == USEC_INFINITY)
                return 0;
        return listener_add_window(l, done, until);
}

/* Thaws the units a rule's unit name stands for, for duration, unless
 * their window is open. */
int listener_thaw(Listener *l, const char *unit, usec_t duration, usec_t received) {
        return listener_thaw_leaves(l, listener_resolve_unit(l, unit), duration, received);
}
