/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Thaw windows: one sd-event timer per thaw, at its deadline, which
 * queues its end for the dispatcher, which starts the refreeze of its
 * units (refreeze.c); the only timers the listener has while idle in
 * standby. A window of a rule with EndWhenIdle=yes also looks at its
 * units' threads, first LISTENER_IDLE_FIRST_LOOK after the thaw and then
 * at twice the time before, and each of its units is frozen again at the
 * first look that finds its threads asleep (window-idle.c), the others
 * looked at again: For= is its bound, and a window of 5 s costs at most
 * 7 looks. And their reconcile with the journal. */
#include "listener.h"
#include "strv.h"

static Window *window_free(Window *w) {
        if (!w)
                return NULL;
        sd_event_source_disable_unref(w->timer);
        sd_event_source_disable_unref(w->idle_look);
        strv_free(w->leaves);
        free(w->cpu_at_open);
        free(w->wakeups_at_open);
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
        uint64_t cpu = 0, wakeups = 0;
        if (w->usage_pending) /* opened in this turn of the loop */
                listener_window_read_open(l, w);
        for (size_t i = 0; w->leaves[i]; i++) {
                char *one[] = { w->leaves[i], NULL };
                uint64_t c, k;
                listener_units_usage(l, one, &c, &k);
                cpu += w->cpu_at_open && c > w->cpu_at_open[i] ? c - w->cpu_at_open[i] : 0;
                wakeups += w->wakeups_at_open && k > w->wakeups_at_open[i] ? k - w->wakeups_at_open[i] : 0;
        }
        listener_wake_window_end(l, w->leaves, now_usec(CLOCK_MONOTONIC) - w->opened, cpu, wakeups);
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

static int on_window_end(sd_event_source *s, uint64_t usec, void *userdata);

/* Moves the units of w that is_idle marks into a window of their own, due
 * now, with w's deadline (the refreeze matches the journal on it) and each
 * unit's usage at the open; w keeps the others. Not due, the new window
 * has no looks, and a timer at the deadline. */
static Window *window_split(Listener *l, Window *w, const bool *is_idle, bool due) {
        size_t n = strv_length(w->leaves), a = 0, b = 0;
        Window *d = calloc(1, sizeof(Window));
        char **idle = calloc(n + 1, sizeof(char *));
        uint64_t *cpu = calloc(n, sizeof(uint64_t)), *wakeups = calloc(n, sizeof(uint64_t));

        if (!d || !idle || !cpu || !wakeups) {
                free(d), free(idle), free(cpu), free(wakeups);
                return NULL;
        }
        if (w->usage_pending)
                listener_window_read_open(l, w);
        for (size_t i = 0; i < n; i++) {
                uint64_t c = w->cpu_at_open ? w->cpu_at_open[i] : 0, k = w->wakeups_at_open ? w->wakeups_at_open[i] : 0;
                if (is_idle[i]) {
                        idle[a] = w->leaves[i];
                        cpu[a] = c, wakeups[a++] = k;
                } else {
                        w->leaves[b] = w->leaves[i];
                        if (w->cpu_at_open)
                                w->cpu_at_open[b] = c, w->wakeups_at_open[b] = k;
                        b++;
                }
        }
        w->leaves[b] = NULL;
        *d = (Window){ .listener = l,
                       .due = due,
                       .leaves = idle,
                       .deadline = w->deadline,
                       .opened = w->opened,
                       .cpu_at_open = w->cpu_at_open ? cpu : mfree(cpu),
                       .wakeups_at_open = w->cpu_at_open ? wakeups : mfree(wakeups),
                       .next = l->windows };
        if (!due && sd_event_add_time(l->event, &d->timer, CLOCK_MONOTONIC, d->deadline, 0, on_window_end, d) < 0)
                d->due = true; /* no timer: closed with the others that are due */
        l->windows = d;
        return d;
}

void listener_windows_touch(Listener *l, const char *leaf, bool end_when_idle) {
        usec_t now = now_usec(CLOCK_MONOTONIC);

        for (Window *w = l->windows; w; w = w->next) {
                ssize_t at = -1;
                for (size_t i = 0; w->leaves[i]; i++)
                        if (streq(w->leaves[i], leaf))
                                at = (ssize_t) i;
                /* Not its window, one that ended at its deadline, or one whose
                 * looks are over and no look ended it: left as it is. */
                if (at < 0 || now >= w->deadline || (!w->idle_look && !w->due))
                        continue;
                if (end_when_idle) {
                        w->due = false;
                        if (arm_idle_look(w, LISTENER_IDLE_FIRST_LOOK) >= 0)
                                continue;
                }
                /* Its own window to the end: w's looks go on for the others. */
                size_t n = strv_length(w->leaves);
                _cleanup_free_ bool *mine = calloc(n, sizeof(bool));
                if (!mine)
                        continue;
                mine[at] = true;
                if (n == 1) {
                        w->due = false;
                        w->idle_look = sd_event_source_disable_unref(w->idle_look);
                } else
                        (void) window_split(l, w, mine, false);
                return;
        }
}

static int on_idle_look(sd_event_source *s, uint64_t usec, void *userdata) {
        Window *w = userdata;
        Listener *l = w->listener;
        size_t n = strv_length(w->leaves), n_idle = 0, budget = LISTENER_LOOK_BUDGET;
        _cleanup_free_ bool *is_idle = calloc(MAX(n, 1), sizeof(bool));

        l->stats.idle_looks++;
        /* Each unit by itself: one unit at work (a user's, spinning) keeps
         * no other unit of the window thawed. From a unit further on each
         * time, so that the budget does not always go to the same ones. */
        for (size_t k = 0; is_idle && k < n; k++) {
                size_t i = (w->look_start + k) % n;
                char *one[] = { w->leaves[i], NULL };
                /* A unit whose ThawUnit is unanswered is frozen still: its
                 * threads sleep in the freezer, its work not begun. */
                is_idle[i] = !listener_units_thaw_in_flight(l, one) && listener_leaf_idle(l, w->leaves[i], &budget);
                n_idle += is_idle[i];
        }
        w->look_start++;
        if (n_idle > 0 && n_idle < n && window_split(l, w, is_idle, true)) {
                l->stats.idle_ends++;
                listener_enqueue(l, LISTENER_WORK_WINDOWS_DUE);
                n_idle = 0; /* the rest look again */
        }
        if (n_idle == 0) {
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
        return sd_event_add_time(w->listener->event, &w->idle_look, CLOCK_MONOTONIC, at, USEC_PER_MSEC, on_idle_look,
                                 w);
}

int listener_add_window(Listener *l, char **leaves, usec_t deadline, bool end_when_idle) {
        Window *w = calloc(1, sizeof(Window));
        int r;

        if (!w)
                return -ENOMEM;
        w->listener = l;
        w->deadline = deadline;
        w->opened = now_usec(CLOCK_MONOTONIC);
        listener_wake_window_opened(l, w);
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
