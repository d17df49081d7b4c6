/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Thaw windows: one sd-event timer per thaw, at its deadline, which
 * queues its end for the dispatcher, which starts the refreeze of its
 * units (refreeze.c); the only timers the listener has while idle in
 * standby. A window of a rule with EndWhenIdle=yes also looks at its
 * units' threads, first LISTENER_IDLE_FIRST_LOOK after the thaw and then
 * at twice the time before, and ends at the first look that finds them
 * all asleep (window-idle.c): For= is its bound, and a window of 5 s
 * costs at most 8 looks. And their reconcile with the journal. */
#include "listener.h"
#include "strv.h"

static Window *window_free(Window *w) {
        if (!w)
                return NULL;
        sd_event_source_disable_unref(w->timer);
        sd_event_source_disable_unref(w->idle_look);
        strv_free(w->leaves);
        free(w);
        return NULL;
}

static void window_unlink(Listener *l, Window *w) {
        for (Window **p = &l->windows; *p; p = &(*p)->next)
                if (*p == w) {
                        *p = w->next;
                        break;
                }
        window_free(w);
}

void listener_drop_windows(Listener *l) {
        while (l->windows) {
                Window *w = l->windows;
                l->windows = w->next;
                window_free(w);
        }
}

/* Closes a window: starts the refreeze of its units (refreeze.c), whose
 * end loop events bring. It waits, due, while another process holds the
 * journal's lock, or while a unit's ThawUnit is unanswered: that unit has
 * no record yet, and the refreeze would take the journal's word that it is
 * frozen (its record, once settled, queues the window again). The
 * dispatcher calls this after writing the pending records. */
static void window_close(Listener *l, Window *w) {
        if (listener_units_thaw_in_flight(l, w->leaves) ||
            listener_refreeze_start(l, w->leaves, w->deadline) == -EAGAIN) {
                w->due = true;
                return;
        }
        window_unlink(l, w);
}

static int on_window_end(sd_event_source *s, uint64_t usec, void *userdata) {
        Window *w = userdata;

        w->due = true;
        listener_enqueue(w->listener, LISTENER_WORK_WINDOWS_DUE);
        return 0;
}

/* The look after step: none past the deadline, whose timer ends it anyway. */
static int arm_idle_look(Window *w, usec_t step);

static int on_idle_look(sd_event_source *s, uint64_t usec, void *userdata) {
        Window *w = userdata;
        Listener *l = w->listener;

        l->stats.idle_looks++;
        if (!listener_leaves_idle(l, w->leaves)) {
                if (arm_idle_look(w, w->idle_step * 2) < 0)
                        w->idle_look = sd_event_source_disable_unref(w->idle_look); /* For= ends it */
                return 0;
        }
        w->idle_look = sd_event_source_disable_unref(w->idle_look);
        l->stats.idle_ends++;
        w->due = true;
        listener_enqueue(l, LISTENER_WORK_WINDOWS_DUE);
        return 0;
}

static int arm_idle_look(Window *w, usec_t step) {
        usec_t at = now_usec(CLOCK_MONOTONIC) + step;

        w->idle_step = step;
        if (at >= w->deadline) {
                w->idle_look = sd_event_source_disable_unref(w->idle_look);
                return 0;
        }
        if (w->idle_look) {
                int r = sd_event_source_set_time(w->idle_look, at);
                return r < 0 ? r : sd_event_source_set_enabled(w->idle_look, SD_EVENT_ONESHOT);
        }
        /* Accuracy 1 ms: a look a little late costs a little window. */
        return sd_event_add_time(w->listener->event, &w->idle_look, CLOCK_MONOTONIC, at, USEC_PER_MSEC, on_idle_look, w);
}

int listener_add_window(Listener *l, char **leaves, usec_t deadline, bool end_when_idle) {
        Window *w = calloc(1, sizeof(Window));
        int r;

        if (!w)
                return -ENOMEM;
        w->listener = l;
        w->deadline = deadline;
        for (char **x = leaves; *x; x++)
                if ((r = strv_extend(&w->leaves, *x)) < 0) {
                        window_free(w);
                        return r;
                }
        /* Fires once, at the window's end. */
        r = sd_event_add_time(l->event, &w->timer, CLOCK_MONOTONIC, deadline, 0, on_window_end, w);
        if (r < 0) {
                window_free(w);
                return r;
        }
        if (end_when_idle && (r = arm_idle_look(w, LISTENER_IDLE_FIRST_LOOK)) < 0) {
                window_free(w);
                return r;
        }
        w->next = l->windows;
        l->windows = w;
        return 0;
}

void listener_windows_retry(Listener *l) {
        for (Window *w = l->windows, *next; w; w = next) {
                next = w->next;
                if (w->due)
                        window_close(l, w);
        }
}

int listener_windows_reconcile(Listener *l) {
        usec_t now = now_usec(CLOCK_MONOTONIC);
        int r;

        listener_drop_windows(l);
        listener_drop_refreezes(l);
        r = manager_read_journal(&l->m);
        if (r < 0)
                return r;
        (void) listener_phase_follow_journal(l, l->m.journal->phase == JOURNAL_ACTIVE);
        listener_cache_refresh(l);
        listener_forget_resolved(l);
        /* Windows opened before a restart close on time (or now, if overdue). */
        for (size_t i = 0; listener_standby_active(l) && i < l->m.journal->n_units; i++) {
                JournalUnit *u = &l->m.journal->units[i];
                char *one[] = { u->cgroup, NULL };

                if (u->state != UNIT_THAWED || u->thaw_until == USEC_INFINITY || u->thaw_until == 0)
                        continue;
                r = listener_add_window(l, one, MAX(u->thaw_until, now), false);
                if (r < 0)
                        break;
                /* freeze_refreeze_due() matches on the exact deadline. */
                l->windows->deadline = u->thaw_until;
        }
        manager_unlock_journal(&l->m);
        return r < 0 ? r : 0;
}
