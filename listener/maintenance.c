/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Maintenance windows: the periodic work of frozen units (their own
 * timers, cron's minute, a daemon's timed save or checkpoint) runs in
 * short windows shared by every unit that is due, so that the machine
 * wakes once for all of it, and no unit's work runs later than the
 * lateness it accepts (standby.conf: [Maintenance] Lateness=, a unit's
 * or slice's own in [Lateness]).
 *
 * The units fall into classes by their lateness L. A class is due L after
 * its last window (the first, L after standby began); a timer at the
 * earliest due class wakes the listener, which thaws, in one window, every
 * frozen unit of every class due by then or within a quarter of its own L
 * (so that a class of 60 s rides along with one of 30 s every other time,
 * and classes of close lateness share their windows). A timer of a unit
 * that elapsed while it was frozen fires as it thaws, so its work runs in
 * the window: at most L after it was due. The window ends when the units'
 * threads sleep (window-idle.c), WindowMax= at most. One timer while
 * standby lasts, armed for the next due class only: no periodic wakeup
 * beyond the windows themselves. */
#include "cgroup.h"
#include "listener.h"
#include "log.h"
#include "strv.h"

typedef struct LatenessClass {
        usec_t lateness;
        usec_t due; /* CLOCK_MONOTONIC */
} LatenessClass;

struct Maintenance {
        sd_event_source *timer;
        LatenessClass *classes;
        size_t n_classes;
};

/* L after now; a lateness past what a usec_t holds from now is never due
 * (a wrapped sum would be due at once, the timer firing in a loop). */
static usec_t due_after(usec_t now, usec_t lateness) {
        return lateness >= USEC_INFINITY - now ? USEC_INFINITY : now + lateness;
}

static const LatenessClass *class_of(const LatenessClass *classes, size_t n, usec_t lateness) {
        for (size_t i = 0; i < n; i++)
                if (classes[i].lateness == lateness)
                        return &classes[i];
        return NULL;
}

/* Adds lateness's class to classes, with old's due time if old has it. */
static void class_add(LatenessClass *classes, size_t *n, const Maintenance *m, usec_t lateness, usec_t now) {
        if (lateness == USEC_INFINITY || class_of(classes, *n, lateness))
                return;
        const LatenessClass *old = class_of(m->classes, m->n_classes, lateness);
        classes[(*n)++] = (LatenessClass){ .lateness = lateness, .due = old ? old->due : due_after(now, lateness) };
}

/* The classes of the units frozen now, and Lateness='s (units held later
 * fall into it); a class seen before keeps its due time, a new one is due
 * L from now, and one no unit has any more (gone, or its lateness changed
 * by a reload) is dropped, so that no timer wakes the machine for it. */
static int classes_update(Listener *l, usec_t now) {
        Maintenance *m = l->maintenance;
        LatenessClass *classes = reallocarray(NULL, l->n_cache + 1, sizeof(LatenessClass));
        size_t n = 0;

        if (!classes)
                return -ENOMEM;
        class_add(classes, &n, m, l->m.config->lateness, now);
        for (size_t i = 0; i < l->n_cache; i++)
                class_add(classes, &n, m, config_lateness_of(l->m.config, l->cache[i].cgroup), now);
        free(m->classes);
        m->classes = classes;
        m->n_classes = n;
        return 0;
}

static int arm(Listener *l);

static int on_maintenance(sd_event_source *s, uint64_t usec, void *userdata) {
        Listener *l = userdata;
        usec_t now = now_usec(CLOCK_MONOTONIC);
        _cleanup_strv_free_ char **leaves = NULL;
        int r;

        r = classes_update(l, now);
        for (size_t i = 0; r >= 0 && i < l->maintenance->n_classes; i++) {
                LatenessClass *c = &l->maintenance->classes[i];
                if (c->due > now + c->lateness / 4)
                        continue;
                c->due = due_after(now, c->lateness);
                for (size_t k = 0; r >= 0 && k < l->n_cache; k++) {
                        const CachedUnit *u = &l->cache[k];
                        if (u->state == UNIT_FROZEN && config_lateness_of(l->m.config, u->cgroup) == c->lateness)
                                r = strv_extend(&leaves, u->cgroup);
                }
        }
        if (r < 0)
                log_warning_errno(r, "Cannot open a maintenance window: %m");
        else if (leaves) {
                l->stats.maintenance_windows++;
                l->stats.maintenance_thaws += strv_length(leaves);
                log_debug("Maintenance window for %zu units.", strv_length(leaves));
                l->thaw_cause = "a maintenance window";
                l->waking_source = "maintenance";
                r = listener_thaw_leaves(l, leaves, l->m.config->window_max, true, now);
                l->thaw_cause = NULL;
                l->waking_source = NULL;
                if (r < 0 && r != -EIO)
                        log_warning_errno(r, "Cannot open a maintenance window: %m");
        }
        return arm(l);
}

/* The timer at the earliest due class, or none. Its accuracy, a sixteenth
 * of the shortest lateness (1 s at most), lets the kernel put it with
 * other wakeups; it is set that much early, so that it never fires past
 * the due time. */
static int arm(Listener *l) {
        Maintenance *m = l->maintenance;
        usec_t next = USEC_INFINITY, accuracy = USEC_PER_SEC;

        for (size_t i = 0; i < m->n_classes; i++) {
                next = MIN(next, m->classes[i].due);
                accuracy = MIN(accuracy, m->classes[i].lateness / 16);
        }
        if (next == USEC_INFINITY) {
                m->timer = sd_event_source_disable_unref(m->timer);
                return 0;
        }
        accuracy = MAX(accuracy, 1);
        next -= MIN(next, accuracy);
        if (m->timer) {
                int r = sd_event_source_set_time(m->timer, next);
                if (r >= 0)
                        r = sd_event_source_set_time_accuracy(m->timer, accuracy);
                return r < 0 ? r : sd_event_source_set_enabled(m->timer, SD_EVENT_ONESHOT);
        }
        return sd_event_add_time(l->event, &m->timer, CLOCK_MONOTONIC, next, accuracy, on_maintenance, l);
}

void listener_maintenance_stop(Listener *l) {
        if (!l->maintenance)
                return;
        sd_event_source_disable_unref(l->maintenance->timer);
        free(l->maintenance->classes);
        l->maintenance = mfree(l->maintenance);
}

int listener_maintenance_follow(Listener *l) {
        int r;

        if (!l->maintenance)
                return 0;
        r = classes_update(l, now_usec(CLOCK_MONOTONIC));
        if (r >= 0)
                r = arm(l);
        if (r < 0)
                return log_error_errno(r, "Cannot set up maintenance windows: %m");
        return 0;
}

int listener_maintenance_start(Listener *l) {
        int r;

        listener_maintenance_stop(l);
        if (!listener_standby_active(l))
                return 0;
        l->maintenance = calloc(1, sizeof(Maintenance));
        if (!l->maintenance)
                return log_error_errno(-ENOMEM, "Cannot set up maintenance windows: %m");
        r = classes_update(l, now_usec(CLOCK_MONOTONIC));
        if (r >= 0)
                r = arm(l);
        if (r < 0)
                return log_error_errno(r, "Cannot set up maintenance windows: %m");
        return 0;
}
