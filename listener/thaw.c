/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a matching rule does: thaw units for a window (coalescing repeats),
 * freeze them again when it closes, or end standby.
 *
 * The thaw itself is on the event's critical path, so it is a single write of
 * "0" to the kept-open cgroup.freeze of each unit, decided from an in-memory
 * copy of the journal (refreshed whenever the journal changes). The journal
 * is updated afterwards, under its lock, from a one-shot timer a little
 * later: the woken service and its client need the CPU first (on two CPUs,
 * a save right after the thaw kept one of them waiting 50-250 us, traced).
 * Thawing before recording is the safe direction: a crash in
 * between leaves a running unit marked frozen, which exit thaws anyway; a
 * record is dropped if standby was left (or entered anew) in between.
 * Refreezing and ending standby go through the engine, journal first, as
 * standby-manager does. Events inside an open window cost no system call. */
#include <fcntl.h>

#include "cgroup.h"
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

        /* Started here, finished by loop events (refreeze.c). */
        (void) listener_refreeze_start(l, w->leaves, w->deadline);
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

/* Whether a journal leaf belongs to what a rule names: a unit name
 * (mail.service, app.slice) stands for any cgroup of that name and everything
 * below it, wherever it is (alice's and bob's mail.service alike). Rules take
 * unit names only (rules.c). */
static bool leaf_belongs(const char *leaf, const char *name) {
        size_t n = strlen(name);

        for (const char *p = leaf; p; p = strchr(p, '/')) {
                if (*p == '/')
                        p++;
                if (strneq(p, name, n) && (p[n] == 0 || p[n] == '/'))
                        return true;
        }
        return false;
}

int listener_unit_leaves(Listener *l, const char *name, char ***ret) {
        _cleanup_strv_free_ char **leaves = NULL;
        Journal *j = l->m.journal;
        int r;

        r = strv_split_words("", &leaves);
        if (r < 0)
                return r;
        for (size_t i = 0; j && i < j->n_units; i++)
                if (leaf_belongs(j->units[i].cgroup, name) && (r = strv_extend(&leaves, j->units[i].cgroup)) < 0)
                        return r;
        *ret = TAKE_PTR(leaves);
        return 0;
}

/* The leaves of a unit named by a rule: only ever the ones standby froze (the
 * journal's), never a walk of the cgroup tree; resolved once per journal
 * change. */
static char **resolve_cached(Listener *l, const char *unit) {
        for (ResolvedUnit *r = l->resolved; r; r = r->next)
                if (streq(r->name, unit))
                        return r->leaves;
        ResolvedUnit *r = calloc(1, sizeof(ResolvedUnit));
        if (!r || !(r->name = strdup(unit)) || listener_unit_leaves(l, unit, &r->leaves) < 0) {
                if (r)
                        free(r->name);
                free(r);
                return NULL;
        }
        r->next = l->resolved;
        l->resolved = r;
        return r->leaves;
}

void listener_forget_resolved(Listener *l) {
        while (l->resolved) {
                ResolvedUnit *r = l->resolved;
                l->resolved = r->next;
                free(r->name);
                strv_free(r->leaves);
                free(r);
        }
}

/* Whether a unit thawed by the listener has been frozen again since
 * (standby-manager freeze): its pending thaw record is then stale. */
static bool frozen_again(const CachedUnit *c) {
        bool frozen = false;
        return c && c->fd >= 0 && cgroup_get_freeze(c->fd, &frozen) >= 0 && frozen;
}

CachedUnit *listener_cached_unit(Listener *l, const char *cgroup) {
        for (size_t i = 0; i < l->n_cache; i++)
                if (streq(l->cache[i].cgroup, cgroup))
                        return &l->cache[i];
        return NULL;
}

void listener_cache_refresh(Listener *l) {
        CachedUnit *old = l->cache;
        size_t n_old = l->n_cache;
        Journal *j = l->m.journal;

        /* What a rule's unit name stands for follows the journal. */
        listener_forget_resolved(l);

        l->cache = calloc(j ? j->n_units + 1 : 1, sizeof(CachedUnit));
        l->n_cache = 0;
        for (size_t i = 0; l->cache && j && i < j->n_units; i++) {
                CachedUnit *c = &l->cache[l->n_cache];
                c->fd = c->freeze_fd = -EBADF;
                /* Keep the open fds of a unit already known. */
                for (size_t k = 0; k < n_old; k++)
                        if (old[k].cgroup && streq(old[k].cgroup, j->units[i].cgroup)) {
                                c->fd = TAKE_FD(old[k].fd);
                                c->freeze_fd = TAKE_FD(old[k].freeze_fd);
                                c->cgroup = TAKE_PTR(old[k].cgroup);
                        }
                if (!c->cgroup && !(c->cgroup = strdup(j->units[i].cgroup)))
                        break;
                /* Opened now, off the event's path. */
                if (c->fd < 0)
                        (void) cgroup_open(l->m.root_fd, c->cgroup, &c->fd);
                if (c->fd >= 0 && c->freeze_fd < 0)
                        (void) cgroup_open_freeze(c->fd, &c->freeze_fd);
                c->state = j->units[i].state;
                c->thaw_until = j->units[i].thaw_until;
                /* A thaw not yet recorded is still a thaw, unless the unit was
                 * frozen again since (standby-manager freeze): then the
                 * journal's FROZEN is newer than the thaw, and taking the thaw
                 * would drop the unit's watches while it is frozen (an event
                 * lost; the bench caught it when a record came 5 ms late). */
                for (size_t k = 0; k < l->n_pending; k++) {
                        if (!streq(l->pending[k].cgroup, c->cgroup) || l->pending[k].since != j->since ||
                            (c->state != UNIT_FROZEN && c->state != UNIT_THAWED))
                                continue;
                        if (c->state == UNIT_FROZEN && frozen_again(c))
                                continue;
                        c->state = UNIT_THAWED;
                        c->thaw_until = l->pending[k].until;
                }
                free(c->systemd);
                c->systemd = j->units[i].systemd ? strdup(j->units[i].systemd) : NULL;
                /* Connected now, off the event's path, and while its manager
                 * answers: a ThawUnit then costs one write. */
                if (c->systemd)
                        (void) listener_systemd_connect(l, c->systemd);
                l->n_cache++;
        }
        for (size_t k = 0; k < n_old; k++) {
                safe_close(old[k].fd);
                safe_close(old[k].freeze_fd);
                free(old[k].cgroup);
                free(old[k].systemd);
        }
        free(old);
}

void listener_drop_records(Listener *l) {
        for (size_t k = 0; k < l->n_pending; k++)
                free(l->pending[k].cgroup);
        l->pending = mfree(l->pending);
        l->n_pending = 0;
        if (l->record_source)
                (void) sd_event_source_set_enabled(l->record_source, SD_EVENT_OFF);
}

void listener_flush_records(Listener *l) {
        bool skipped = false;
        int r;

        if (l->n_pending == 0)
                return;
        r = manager_lock_journal(&l->m, true);
        if (r >= 0) {
                bool changed = false;
                for (size_t k = 0; k < l->n_pending; k++) {
                        /* Not if standby ended, or began anew, since the thaw. */
                        if (l->m.journal->phase != JOURNAL_ACTIVE || l->m.journal->since != l->pending[k].since) {
                                skipped = true;
                                continue;
                        }
                        /* Nor if someone froze it again since (standby-manager freeze). */
                        if (frozen_again(listener_cached_unit(l, l->pending[k].cgroup))) {
                                skipped = true;
                                continue;
                        }
                        r = freeze_record(&l->m, l->pending[k].cgroup,
                                          UNIT_STATE_MASK(UNIT_FROZEN) | UNIT_STATE_MASK(UNIT_THAWED) |
                                                  UNIT_STATE_MASK(UNIT_FREEZING),
                                          UNIT_THAWED, l->pending[k].until, NULL);
                        changed = changed || r > 0;
                }
                r = changed ? manager_save_journal(&l->m) : 0;
                if (r < 0)
                        log_error_errno(r, "Failed to record a thaw in the journal: %m");
        }
        manager_unlock_journal(&l->m);
        listener_drop_records(l);
        /* A thaw overtaken by others: the in-memory view goes back to the
         * journal's (the watches follow at the next journal change, as the
         * manager's refreeze that overtook it is one). */
        if (skipped && r >= 0)
                listener_cache_refresh(l);
}

static int on_record(sd_event_source *s, uint64_t usec, void *userdata) {
        listener_flush_records(userdata);
        return 0;
}

/* Arms the one-shot record timer unless it is armed already (its records
 * then go with the pending ones). */
static int arm_record(Listener *l) {
        int enabled = SD_EVENT_OFF;
        int r;

        if (!l->record_source)
                return sd_event_add_time_relative(l->event, &l->record_source, CLOCK_MONOTONIC, l->record_delay,
                                                  LISTENER_RECORD_ACCURACY_USEC, on_record, l);
        if (sd_event_source_get_enabled(l->record_source, &enabled) >= 0 && enabled != SD_EVENT_OFF)
                return 0;
        r = sd_event_source_set_time_relative(l->record_source, l->record_delay);
        if (r >= 0)
                r = sd_event_source_set_enabled(l->record_source, SD_EVENT_ONESHOT);
        return r;
}

/* Thaws a unit for duration unless its window is open. */
static int thaw_for(Listener *l, const char *unit, usec_t duration, usec_t received) {
        usec_t now = now_usec(CLOCK_MONOTONIC);
        usec_t until = duration == USEC_INFINITY ? USEC_INFINITY : now + duration;
        char **leaves = resolve_cached(l, unit);
        _cleanup_strv_free_ char **done = NULL;
        int r;

        for (char **x = leaves; x && *x; x++) {
                CachedUnit *c = listener_cached_unit(l, *x);
                if (!c)
                        continue; /* not frozen by standby: nothing to do */
                /* Repeated events within a window coalesce into its one thaw. */
                if (c->state == UNIT_THAWED && (c->thaw_until == USEC_INFINITY || c->thaw_until > now))
                        continue;
                /* A unit whose window's refreeze is in flight is thawed again,
                 * and that refreeze lets go of it. */
                if (c->state != UNIT_FROZEN && c->state != UNIT_THAWED &&
                    !(c->state == UNIT_FREEZING && listener_refreeze_forget(l, c->cgroup)))
                        continue;
                if (c->fd < 0 && cgroup_open(l->m.root_fd, c->cgroup, &c->fd) < 0)
                        continue; /* gone */
                /* Through systemd where systemd froze it: never one way in, the
                 * other out. Not waited for (systemd-link.c). */
                r = listener_unit_set_freeze(l, c->cgroup, c->systemd, c->fd, c->freeze_fd, false);
                if (r < 0) {
                        log_warning_errno(r, "Failed to thaw %s: %m", c->cgroup);
                        continue;
                }
                c->state = UNIT_THAWED;
                c->thaw_until = until;
                if ((r = strv_extend(&done, *x)) < 0)
                        return r;
        }
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
        for (char **x = done; *x; x++) {
                PendingRecord *np = realloc(l->pending, (l->n_pending + 1) * sizeof(PendingRecord));
                if (!np)
                        return -ENOMEM;
                l->pending = np;
                l->pending[l->n_pending] = (PendingRecord) { .cgroup = strdup(*x), .until = until,
                                                             .since = l->m.journal ? l->m.journal->since : 0 };
                if (!l->pending[l->n_pending].cgroup)
                        return -ENOMEM;
                l->n_pending++;
        }
        r = arm_record(l);
        if (r < 0) {
                listener_flush_records(l); /* no loop to defer to: record now */
                r = 0;
        }
        if (until == USEC_INFINITY)
                return 0;
        return add_window(l, done, until);
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

/* Remembered while standby is inactive: an event that comes while the
 * manager is still freezing would otherwise be lost (a push for a unit just
 * frozen, the lid opened during enter). */
static void remember_late(Listener *l, const char *unit, usec_t duration) {
        LateAction *a = &l->late[l->n_late % LATE_ACTIONS_MAX];
        char *u = unit ? strdup(unit) : NULL;

        if (unit && !u)
                return;
        if (l->n_late >= LATE_ACTIONS_MAX)
                free(a->unit);
        *a = (LateAction) { .unit = u, .duration = duration, .realtime = now_usec(CLOCK_REALTIME) };
        l->n_late++;
}

void listener_forget_late(Listener *l) {
        for (size_t i = 0; i < MIN(l->n_late, (size_t) LATE_ACTIONS_MAX); i++)
                free(l->late[i].unit);
        l->n_late = 0;
}

void listener_replay_late(Listener *l) {
        size_t n = MIN(l->n_late, (size_t) LATE_ACTIONS_MAX);
        usec_t since = l->m.journal ? l->m.journal->since : USEC_INFINITY;
        bool exit = false;

        for (size_t i = 0; i < n; i++) {
                LateAction *a = &l->late[i];
                if (l->standby_active && a->realtime >= since) {
                        l->stats.replayed++;
                        if (!a->unit)
                                exit = true;
                        else if (thaw_for(l, a->unit, a->duration, now_usec(CLOCK_MONOTONIC)) < 0)
                                log_warning("Failed to thaw %s for an event that came during enter.", a->unit);
                        else
                                log_info("Thawed %s for an event that came while standby was being entered.", a->unit);
                }
                free(a->unit);
                a->unit = NULL;
        }
        l->n_late = 0;
        if (exit) {
                log_info("Ending standby: an ExitStandby= event came while it was being entered.");
                listener_exit_standby(l, "an event during enter");
                return;
        }

        /* A D-Bus call that reached a service before enter began can still be
         * waiting, unread, in its socket: the monitor saw it go by while
         * nothing was frozen. Such a service is woken now. */
        for (size_t i = 0; l->standby_active && l->rules && i < l->rules->n_rules; i++) {
                const Rule *rule = &l->rules->rules[i];

                for (char **t = rule->thaw; rule->event == EVENT_DBUS_CALL && t && *t; t++) {
                        _cleanup_strv_free_ char **leaves = NULL;
                        if (listener_unit_leaves(l, *t, &leaves) < 0)
                                continue;
                        for (char **x = leaves; *x; x++)
                                if (listener_unit_has_unread_call(l, *x, rule->bus_name)) {
                                        log_info("%s froze with a D-Bus call unread: thawing %s.", *x, *t);
                                        l->stats.replayed++;
                                        (void) thaw_for(l, *t, rule->duration, now_usec(CLOCK_MONOTONIC));
                                        break;
                                }
                }
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

                if (!l->standby_active) {
                        if (rule->exit_standby)
                                remember_late(l, NULL, 0);
                        for (char **t = rule->thaw; !rule->exit_standby && t && *t; t++)
                                remember_late(l, *t, rule->duration);
                        continue;
                }
                /* While an exit runs, what any event asks for is under way. */
                if (l->exit_pid > 0)
                        continue;
                if (rule->exit_standby) {
                        listener_exit_standby(l, rule->path);
                        break; /* nothing left to thaw */
                }
                for (char **t = rule->thaw; t && *t; t++) {
                        r = thaw_for(l, *t, rule->duration, received);
                        if (r < 0)
                                log_warning_errno(r, "Failed to thaw %s (rule %s): %m", *t, rule->path);
                }
        }
        return matched;
}

int listener_enforce_journal(Listener *l) {
        size_t n = 0;
        int r;

        r = manager_lock_journal(&l->m, true);
        for (size_t i = 0; r >= 0 && l->m.journal->phase == JOURNAL_ACTIVE && i < l->m.journal->n_units; i++) {
                JournalUnit *u = &l->m.journal->units[i];
                _cleanup_close_ int fd = -EBADF;
                bool frozen;

                if (u->state != UNIT_FROZEN || cgroup_open(l->m.root_fd, u->cgroup, &fd) < 0 ||
                    cgroup_get_freeze(fd, &frozen) < 0 || frozen)
                        continue;
                log_notice("%s runs, but the journal says frozen (a thaw not recorded before the listener "
                           "stopped): freezing it again.", u->cgroup);
                if (listener_unit_set_freeze(l, u->cgroup, u->systemd, fd, -EBADF, true) < 0)
                        log_warning("Failed to freeze %s again; it stays running.", u->cgroup);
                else
                        n++;
        }
        manager_unlock_journal(&l->m);
        return r < 0 ? r : (int) n;
}

int listener_reconcile(Listener *l) {
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
                r = add_window(l, one, MAX(u->thaw_until, now));
                if (r < 0)
                        break;
                /* freeze_refreeze_due() matches on the exact deadline. */
                l->windows->deadline = u->thaw_until;
        }
        manager_unlock_journal(&l->m);
        return r < 0 ? r : 0;
}
