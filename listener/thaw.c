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
        else if (c->fd < 0 && !c->fds_refused)
                listener_report_note(l, cgroup, -ENOENT);
}

/* After an event's thaws (the first matching rule's, all its Thaw= units
 * written, or their ThawUnit sent) the listener yields its CPU once: a
 * thawed task that the kernel placed on it (no other CPU idle) would
 * otherwise wait for the listener's bookkeeping, the record, the window
 * and the return to the loop, which the scheduler lets run to the end of
 * its slice. Where the woken task went to another CPU, it costs one
 * system call. */
void listener_step_aside(Listener *l) {
        l->step_aside = false;
        l->stats.yields++;
        (void) sched_yield();
}

/* What one list of units' writes did, for the bookkeeping after them. */
typedef struct ThawDone {
        char **done;         /* thawed now: to record, and to window */
        size_t failed, gone;
        usec_t thawed;       /* when the writes ended */
} ThawDone;

/* Returns 0, or -ENOMEM with the writes cut short (what was thawed before
 * is still recorded). */
static int thaw_write(Listener *l, char **leaves, usec_t now, usec_t until, bool end_when_idle, ThawDone *d) {
        int ret = 0;

        for (char **x = leaves; x && *x; x++) {
                int r = listener_unit_thaw(l, *x, now, until);
                note_outcome(l, *x, r);
                if (r == 0) /* in an open window: its work begins anew */
                        listener_windows_touch(l, *x, end_when_idle);
                if (r == -ENOENT)
                        d->gone++;
                else if (r < 0)
                        d->failed++;
                else if (r > 0 && strv_extend(&d->done, *x) < 0) {
                        ret = -ENOMEM;
                        break;
                }
        }
        d->thawed = now_usec(CLOCK_MONOTONIC);
        return ret;
}

static int thaw_settle(Listener *l, ThawDone *d, usec_t until, bool end_when_idle, usec_t received) {
        int r;

        /* A thaw that failed is no coalesced event: it is counted, and
         * listener_unit_thaw() logged it. */
        l->stats.thaw_failures += d->failed;
        if (!d->done) {
                /* Coalesced: every unit it names is in its open window. */
                if (d->failed == 0 && d->gone == 0)
                        l->stats.coalesced++;
                return d->failed > 0 ? -EIO : 0;
        }
        /* The listener's own time: the yield, if any, came after. */
        usec_t took = d->thawed - received;
        l->stats.thaws++;
        l->stats.thaw_usec_total += took;
        l->stats.thaw_usec_max = MAX(l->stats.thaw_usec_max, took);
        log_debug("Thawed %zu cgroups, %.3f ms after the event.", strv_length(d->done), (double) took / 1000.0);
        /* Told after the step aside: the thawed task ran first. */
        for (char **x = d->done; *x; x++)
                listener_bus_thawed(l, *x, l->thaw_cause);

        listener_wake_thawed(l, d->done, took, until == USEC_INFINITY ? 0 : until - MIN(until, d->thawed));

        /* The record, once this event is answered. */
        r = listener_record_thaws(l, d->done, until);
        if (r < 0)
                return r;
        if (until == USEC_INFINITY)
                return 0;
        return listener_add_window(l, d->done, until, end_when_idle);
}

static usec_t window_end(usec_t now, usec_t duration) {
        return duration >= USEC_INFINITY - now ? USEC_INFINITY : now + duration;
}

int listener_thaw_leaves(Listener *l, char **leaves, usec_t duration, bool end_when_idle, usec_t received) {
        usec_t now = now_usec(CLOCK_MONOTONIC), until = window_end(now, duration);
        ThawDone d = {};
        int r, k;

        r = thaw_write(l, leaves, now, until, end_when_idle, &d);
        if (d.done && l->step_aside)
                listener_step_aside(l);
        k = thaw_settle(l, &d, until, end_when_idle, received);
        strv_free(d.done);
        return r < 0 ? r : k;
}

/* Thaws the units a rule's unit name stands for, for duration, unless
 * their window is open. */
int listener_thaw(Listener *l, const char *unit, usec_t duration, bool end_when_idle, usec_t received) {
        return listener_thaw_leaves(l, listener_resolve_unit(l, unit), duration, end_when_idle, received);
}

int listener_thaw_rule(Listener *l, const Rule *rule, usec_t received) {
        size_t n = strv_length(rule->thaw);
        usec_t now, until;
        ThawDone *d;
        bool any = false;
        int r = 0, k;

        if (n <= 1)
                return n == 1 ? listener_thaw(l, rule->thaw[0], rule->duration, rule->end_when_idle, received) : 0;
        d = calloc(n, sizeof(ThawDone));
        if (!d) {
                /* Name by name: each name's bookkeeping before the next one's writes. */
                for (size_t i = 0; i < n; i++)
                        if ((k = listener_thaw(l, rule->thaw[i], rule->duration, rule->end_when_idle, received)) < 0)
                                r = k;
                return r;
        }
        now = now_usec(CLOCK_MONOTONIC);
        until = window_end(now, rule->duration);
        for (size_t i = 0; i < n; i++) {
                if ((k = thaw_write(l, listener_resolve_unit(l, rule->thaw[i]), now, until, rule->end_when_idle,
                                    &d[i])) < 0)
                        r = k;
                any = any || d[i].done;
        }
        if (any && l->step_aside)
                listener_step_aside(l);
        for (size_t i = 0; i < n; i++) {
                if ((k = thaw_settle(l, &d[i], until, rule->end_when_idle, received)) < 0 && r >= 0)
                        r = k;
                strv_free(d[i].done);
        }
        free(d);
        return r;
}
