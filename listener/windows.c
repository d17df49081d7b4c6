/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Thaw windows: one sd-event timer per thaw, at its deadline, which
 * queues its end for the dispatcher, which starts the refreeze of its
 * units (refreeze.c); the only timers the listener has while idle in
 * standby. And their reconcile with the journal. */
#include "listener.h"
#include "strv.h"

static Window *window_free(Window *w) {
        if (!w)
                return NULL;
        sd_event_source_disable_unref(w->timer);
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

int listener_add_window(Listener *l, char **leaves, usec_t deadline) {
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
        l->standby_active = l->m.journal->phase == JOURNAL_ACTIVE;
        listener_cache_refresh(l);
        listener_forget_resolved(l);
        /* Windows opened before a restart close on time (or now, if overdue). */
        for (size_t i = 0; l->standby_active && i < l->m.journal->n_units; i++) {
                JournalUnit *u = &l->m.journal->units[i];
                char *one[] = { u->cgroup, NULL };

                if (u->state != UNIT_THAWED || u->thaw_until == USEC_INFINITY || u->thaw_until == 0)
                        continue;
                r = listener_add_window(l, one, MAX(u->thaw_until, now));
                if (r < 0)
                        break;
                /* freeze_refreeze_due() matches on the exact deadline. */
                l->windows->deadline = u->thaw_until;
        }
        manager_unlock_journal(&l->m);
        return r < 0 ? r : 0;
}
