/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Thaw windows: one sd-event timer per thaw, at its deadline, which starts
 * the refreeze of its units (refreeze.c); the only timers the listener has
 * while idle in standby. */
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

static int on_window_end(sd_event_source *s, uint64_t usec, void *userdata) {
        Window *w = userdata;
        Listener *l = w->listener;

        /* Started here, finished by loop events (refreeze.c); or, while
         * another process holds the journal's lock, once it lets go; or,
         * while a unit's ThawUnit is unanswered, once it is recorded. */
        if (listener_refreeze_start(l, w->leaves, w->deadline) == -EAGAIN) {
                w->due = true;
                return 0;
        }
        window_unlink(l, w);
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
                        (void) on_window_end(w->timer, 0, w);
        }
}
