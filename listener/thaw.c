/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a matching rule does: thaw units for a window (coalescing repeats),
 * freeze them again when it closes, or end standby. All under the journal's
 * lock, through the same engine as standby-manager. */
#include "listener.h"
#include "log.h"
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
        int r;

        r = manager_lock_journal(&l->m, true);
        if (r >= 0) {
                r = freeze_refreeze_due(&l->m, w->leaves, w->deadline);
                if (r > 0)
                        l->stats.refreezes++;
                if (r < 0)
                        log_warning_errno(r, "Failed to freeze again after a thaw window: %m");
        }
        manager_unlock_journal(&l->m);
        window_unlink(l, w);
        return 0;
}

static int add_window(Listener *l, char **leaves, usec_t deadline) {
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
        /* The only timers the listener has: each fires once, at a window's end. */
        r = sd_event_add_time(l->event, &w->timer, CLOCK_MONOTONIC, deadline, 0, on_window_end, w);
        if (r < 0) {
                window_free(w);
                return r;
        }
        w->next = l->windows;
        l->windows = w;
        return 0;
}

/* Thaws a unit for duration unless its window is open; the journal is locked. */
static int thaw_for(Listener *l, const char *unit, usec_t duration, usec_t received) {
        _cleanup_strv_free_ char **leaves = NULL, **todo = NULL;
        usec_t now = now_usec(CLOCK_MONOTONIC);
        int r;

        r = select_named_unit(&l->m, unit, &leaves);
        if (r < 0)
                return log_warning_errno(r, "Rule names %s, which cannot be resolved: %m", unit);
        r = strv_split_words("", &todo);
        if (r < 0)
                return r;
        for (char **x = leaves; *x; x++) {
                JournalUnit *u = journal_find_unit(l->m.journal, *x);
                if (!u)
                        continue; /* not frozen by standby: nothing to do */
                /* Repeated events within a window coalesce into its one thaw. */
                if (u->state == UNIT_THAWED && (u->thaw_until == USEC_INFINITY || u->thaw_until > now))
                        continue;
                if (u->state == UNIT_FROZEN || u->state == UNIT_THAWED)
                        if ((r = strv_extend(&todo, *x)) < 0)
                                return r;
        }
        if (!todo[0]) {
                l->stats.coalesced++;
                return 0;
        }
        r = thaw_units(&l->m, todo, duration);
        if (r < 0)
                return r;
        usec_t took = now_usec(CLOCK_MONOTONIC) - received;
        l->stats.thaws++;
        l->stats.thaw_usec_total += took;
        l->stats.thaw_usec_max = MAX(l->stats.thaw_usec_max, took);
        if (duration == USEC_INFINITY)
                return 0;
        JournalUnit *u = journal_find_unit(l->m.journal, todo[0]);
        return add_window(l, todo, u ? u->thaw_until : now + duration);
}

static bool str_matches(const char *want, const char *have) {
        return !want || (have && streq(want, have));
}

/* A key a rule leaves out matches anything. */
static bool rule_matches(const Rule *rule, const Event *ev) {
        if (rule->event != ev->kind)
                return false;
        if (ev->rule)
                return rule == ev->rule; /* a D-Bus match belongs to its rule */
        switch (ev->kind) {
        case EVENT_PUSH:
        case EVENT_SOCKET:
                return str_matches(rule->unit, ev->unit);
        case EVENT_LINK:
        case EVENT_ADDRESS:
                return str_matches(rule->interface, ev->interface) && str_matches(rule->change, ev->change) &&
                       (!rule->family || rule->family == ev->family);
        case EVENT_INPUT:
                return (!rule->device || (ev->device && streq(rule->device, ev->device)) ||
                        (ev->device_path && streq(rule->device, ev->device_path))) &&
                       rule->key_type == ev->key_type && rule->key_code == ev->key_code &&
                       (rule->value < 0 || rule->value == ev->value);
        case EVENT_UEVENT:
                return str_matches(rule->subsystem, ev->subsystem) && str_matches(rule->change, ev->change);
        default:
                return false;
        }
}

int listener_dispatch(Listener *l, const Event *ev, usec_t received) {
        int matched = 0, r;

        l->stats.events++;
        for (size_t i = 0; l->rules && i < l->rules->n_rules; i++) {
                const Rule *rule = &l->rules->rules[i];

                if (!rule_matches(rule, ev))
                        continue;
                matched++;
                l->stats.matched++;

                r = manager_lock_journal(&l->m, true);
                if (r < 0)
                        continue;
                if (l->m.journal->phase != JOURNAL_ACTIVE) {
                        manager_unlock_journal(&l->m);
                        continue;
                }
                if (rule->exit_standby) {
                        r = manager_exit_standby(&l->m);
                        if (r >= 0)
                                l->stats.exits++;
                        else
                                log_error_errno(r, "Failed to end standby (rule %s): %m", rule->path);
                        listener_drop_windows(l);
                        manager_unlock_journal(&l->m);
                        break; /* nothing left to thaw */
                }
                for (char **t = rule->thaw; t && *t; t++) {
                        r = thaw_for(l, *t, rule->duration, received);
                        if (r < 0)
                                log_warning_errno(r, "Failed to thaw %s (rule %s): %m", *t, rule->path);
                }
                manager_unlock_journal(&l->m);
        }
        return matched;
}

int listener_reconcile(Listener *l) {
        usec_t now = now_usec(CLOCK_MONOTONIC);
        int r;

        listener_drop_windows(l);
        r = manager_lock_journal(&l->m, false);
        if (r < 0)
                return r;
        l->standby_active = l->m.journal->phase == JOURNAL_ACTIVE;
        /* Windows opened before a restart close on time (or now, if overdue). */
        for (size_t i = 0; l->standby_active && i < l->m.journal->n_units; i++) {
                JournalUnit *u = &l->m.journal->units[i];
                char *one[] = { u->cgroup, NULL };

                if (u->state != UNIT_THAWED || u->thaw_until == USEC_INFINITY || u->thaw_until == 0)
                        continue;
                r = add_window(l, one, MAX(u->thaw_until, now));
                if (r < 0)
                        break;
                /* freeze_refreeze_due() matches on the exact deadline. */
                l->windows->deadline = u->thaw_until;
        }
        manager_unlock_journal(&l->m);
        return r < 0 ? r : 0;
}
