/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The owner of each unit's state in the listener, and of its reconcile
 * with the journal and the kernel (docs/design.md draws the machine).
 *
 * Three views of a unit: the journal (the engine's, under its lock), the
 * listener's in-memory copy of it (CachedUnit: what an event is judged by,
 * with the unit's cgroup.freeze kept open), and the kernel's cgroup.freeze.
 * The copy is rebuilt from the journal on every change of the journal, with
 * the thaws done but not yet recorded laid over it. A thaw is written
 * first and recorded 2 ms later, through the engine (freeze_record), once
 * the woken service and its client have had the CPU; a record is dropped
 * if standby ended or began anew since, or if the unit's cgroup.freeze
 * reads 1 again (someone froze it since). At start, a unit the journal
 * calls frozen whose cgroup.freeze reads 0 (a thaw the last listener did
 * not live to record) is frozen again, and windows are rebuilt from the
 * journal. The listener never writes a JournalUnit itself. Every change
 * of a unit's state, in the copy or recorded, is a move of the table in
 * unit-machine.c (unit_move(), listener_unit_record()). */
#include <assert.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/inotify.h>

#include "cgroup.h"
#include "listener.h"
#include "log.h"
#include "strv.h"
#include "unit-machine.h"

static bool thaw_in_flight(Listener *l, const char *cgroup) {
        return strv_contains(l->thaws_in_flight, cgroup);
}

bool listener_units_thaw_in_flight(Listener *l, char **cgroups) {
        for (char **x = cgroups; x && *x; x++)
                if (thaw_in_flight(l, *x))
                        return true;
        return false;
}

/* Whether a unit thawed by the listener has been frozen again since
 * (standby-manager freeze): its pending thaw record is then stale. Not
 * while its ThawUnit is unanswered: systemd has not written the 0 yet. */
static bool frozen_again(Listener *l, const CachedUnit *c) {
        bool frozen = false;
        return c && c->fd >= 0 && !thaw_in_flight(l, c->cgroup) && cgroup_get_freeze(c->fd, &frozen) >= 0 && frozen;
}

/* The one way the copy of a unit changes state: a move of the table; one
 * the table does not hold is a bug, logged, and the state stays. */
static int unit_move(CachedUnit *c, UnitEvent event) {
        UnitState to;
        int r;

        r = unit_machine_next(c->state, event, &to);
        if (r < 0)
                return log_error_errno(r, "%s: no move from %s on %s; its state stays.", c->cgroup,
                                       unit_machine_state_to_string(c->state), unit_event_to_string(event));
        c->state = to;
        return 0;
}

int listener_unit_record(Listener *l, const char *cgroup, UnitEvent event, usec_t thaw_until, const char *reason) {
        return freeze_record(&l->m, cgroup, unit_machine_journal_mask(event), unit_machine_target(event), thaw_until,
                             reason);
}

CachedUnit *listener_cached_unit(Listener *l, const char *cgroup) {
        for (size_t i = 0; i < l->n_cache; i++)
                if (streq(l->cache[i].cgroup, cgroup))
                        return &l->cache[i];
        return NULL;
}

typedef struct OldUnit {
        const char *cgroup;
        CachedUnit *unit;
} OldUnit;

static int old_unit_cmp(const void *a, const void *b) {
        return strcmp(((const OldUnit *) a)->cgroup, ((const OldUnit *) b)->cgroup);
}

void listener_cache_refresh(Listener *l) {
        CachedUnit *old = l->cache;
        size_t n_old = l->n_cache, n_index = 0;
        Journal *j = l->m.journal;

        /* What a rule's unit name stands for follows the journal. */
        listener_forget_resolved(l);

        /* The units already known, sorted by cgroup: a user makes as many
         * units as he makes cgroups, and this runs on every journal change
         * (a search of the old list per unit took 0.2-0.3 s of the loop per
         * change with 9000 units). Without memory for it, nothing is kept:
         * every unit is opened anew. */
        _cleanup_free_ OldUnit *index = n_old > 0 ? calloc(n_old, sizeof(OldUnit)) : NULL;
        for (size_t k = 0; index && k < n_old; k++)
                if (old[k].cgroup)
                        index[n_index++] = (OldUnit) { old[k].cgroup, &old[k] };
        if (n_index > 1)
                qsort(index, n_index, sizeof(OldUnit), old_unit_cmp);

        l->cache_generation++;
        l->cache = calloc(j ? j->n_units + 1 : 1, sizeof(CachedUnit));
        l->n_cache = 0;
        for (size_t i = 0; l->cache && j && i < j->n_units; i++) {
                CachedUnit *c = &l->cache[l->n_cache];
                c->fd = c->freeze_fd = -EBADF;
                /* Keep the open fds of a unit already known (once: a taken
                 * one has no cgroup left). */
                OldUnit key = { .cgroup = j->units[i].cgroup };
                OldUnit *o = n_index > 0 ? bsearch(&key, index, n_index, sizeof(OldUnit), old_unit_cmp) : NULL;
                if (o && o->unit->cgroup) {
                        c->fd = TAKE_FD(o->unit->fd);
                        c->freeze_fd = TAKE_FD(o->unit->freeze_fd);
                        c->charge = o->unit->charge;
                        o->unit->charge.n = 0;
                        c->fds_refused = o->unit->fds_refused;
                        c->cgroup = TAKE_PTR(o->unit->cgroup);
                }
                if (!c->cgroup && !(c->cgroup = strdup(j->units[i].cgroup)))
                        break;
                /* Opened now, off the event's path, within the share of its
                 * account (a user makes as many units as empty cgroups);
                 * past it, at each thaw. */
                if (c->fd < 0 && !c->fds_refused && c->charge.n == 0 &&
                    listener_fds_charge_for(l, c->cgroup, &c->charge) >= 0 &&
                    listener_fds_take(l, &c->charge, 2, "the cgroups of journal units") < 0)
                        c->fds_refused = true;
                if (c->fd < 0 && c->charge.n > 0)
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
                            !unit_machine_allows(c->state, UNIT_EVENT_THAW))
                                continue;
                        if (c->state == UNIT_FROZEN && frozen_again(l, c))
                                continue;
                        if (unit_move(c, UNIT_EVENT_THAW) >= 0)
                                c->thaw_until = l->pending[k].until;
                }
                free(c->systemd);
                c->systemd = j->units[i].systemd ? strdup(j->units[i].systemd) : NULL;
                l->n_cache++;
        }
        for (size_t k = 0; k < n_old; k++) {
                safe_close(old[k].fd);
                safe_close(old[k].freeze_fd);
                listener_fds_give_back_all(l, &old[k].charge);
                free(old[k].cgroup);
                free(old[k].systemd);
        }
        free(old);
}

static void free_records(Listener *l) {
        for (size_t k = 0; k < l->n_pending; k++)
                free(l->pending[k].cgroup);
        l->pending = mfree(l->pending);
        l->n_pending = 0;
}

void listener_drop_records(Listener *l) {
        free_records(l);
        if (l->record_source)
                (void) sd_event_source_set_enabled(l->record_source, SD_EVENT_OFF);
}

/* Writes the pending records, but not those of thaws still in flight
 * through systemd: they stay pending until settled
 * (listener_unit_thaw_settled() arms the timer again), or, at the end
 * (wait), are dropped, the call perhaps never sent: the journal keeps
 * saying frozen, and a thaw that lands after all is frozen again by the
 * next listener (listener_enforce_journal()). */
static void flush_records(Listener *l, bool wait) {
        bool skipped = false;
        size_t kept = 0;
        int r;

        if (l->n_pending == 0)
                return;
        r = wait ? manager_lock_journal(&l->m, true) : listener_journal_begin(l);
        if (r == -EAGAIN)
                return; /* kept, for when the lock is free */
        size_t changed = 0;
        if (r >= 0) {
                for (size_t k = 0; k < l->n_pending; k++) {
                        /* Not if standby ended, or began anew, since the thaw. */
                        if (l->m.journal->phase != JOURNAL_ACTIVE || l->m.journal->since != l->pending[k].since) {
                                skipped = true;
                                continue;
                        }
                        if (thaw_in_flight(l, l->pending[k].cgroup)) {
                                if (wait) {
                                        skipped = true;
                                        continue;
                                }
                                PendingRecord p = l->pending[kept];
                                l->pending[kept++] = l->pending[k];
                                l->pending[k] = p;
                                continue;
                        }
                        /* Nor if someone froze it again since (standby-manager freeze). */
                        if (frozen_again(l, listener_cached_unit(l, l->pending[k].cgroup))) {
                                skipped = true;
                                continue;
                        }
                        /* From whatever the journal still says of it: the
                         * state its thaw moved it from (thaw, or take-back
                         * from its refreeze). */
                        r = freeze_record(&l->m, l->pending[k].cgroup,
                                          unit_machine_journal_mask(UNIT_EVENT_THAW) |
                                                  unit_machine_journal_mask(UNIT_EVENT_TAKE_BACK),
                                          unit_machine_target(UNIT_EVENT_THAW), l->pending[k].until, NULL);
                        changed += r > 0;
                }
        }
        if (r >= 0) {
                r = listener_journal_commit(l, changed > 0 ? LISTENER_JOURNAL_RECORDED : LISTENER_JOURNAL_UNCHANGED);
                if (r < 0)
                        log_error_errno(r, "Failed to record a thaw in the journal: %m");
                else
                        l->stats.records += changed;
        } else
                (void) listener_journal_commit(l, LISTENER_JOURNAL_UNCHANGED);
        if (kept > 0) {
                /* The rest are written (or lost with a failed save): the
                 * kept ones stay, for when their thaws settle. */
                for (size_t k = kept; k < l->n_pending; k++)
                        free(l->pending[k].cgroup);
                l->n_pending = kept;
        } else
                /* Written: the record timer stays as it is, for a window
                 * due since its thaw settled (on_record()). */
                free_records(l);
        /* A thaw overtaken by others: the in-memory view goes back to the
         * journal's. */
        if (skipped && r >= 0)
                listener_enqueue(l, LISTENER_WORK_JOURNAL_CHANGED);
}

void listener_flush_records(Listener *l) {
        flush_records(l, false);
}

void listener_flush_records_wait(Listener *l) {
        flush_records(l, true);
}

/* The pending records, then the windows that ended while a thaw of theirs
 * was in flight through systemd (due), now that it settled and is
 * recorded: the dispatcher's, in that order. */
static int on_record(sd_event_source *s, uint64_t usec, void *userdata) {
        listener_enqueue(userdata, LISTENER_WORK_RECORDS | LISTENER_WORK_WINDOWS_DUE);
        return 0;
}

/* Arms the one-shot record timer unless it is armed already (its records
 * then go with the pending ones). */
static int arm_record(Listener *l) {
        int enabled = SD_EVENT_OFF;
        int r;

        /* In absolute time: a thaw from the loop's hot path (loop.c) comes
         * before sd-event reads the clock, and its sd_event_now() is stale. */
        usec_t at = now_usec(CLOCK_MONOTONIC) + l->record_delay;
        if (!l->record_source)
                return sd_event_add_time(l->event, &l->record_source, CLOCK_MONOTONIC, at,
                                         LISTENER_RECORD_ACCURACY_USEC, on_record, l);
        if (sd_event_source_get_enabled(l->record_source, &enabled) >= 0 && enabled != SD_EVENT_OFF)
                return 0;
        r = sd_event_source_set_time(l->record_source, at);
        if (r >= 0)
                r = sd_event_source_set_enabled(l->record_source, SD_EVENT_ONESHOT);
        return r;
}

int listener_unit_refreezing(Listener *l, const char *cgroup, UnitReleased released, void *userdata) {
        UnitRefreezing *n = reallocarray(l->refreezing, l->n_refreezing + 1, sizeof(UnitRefreezing));

        if (!n)
                return -ENOMEM;
        l->refreezing = n;
        n[l->n_refreezing] = (UnitRefreezing) { .cgroup = strdup(cgroup), .released = released, .userdata = userdata };
        if (!n[l->n_refreezing].cgroup)
                return -ENOMEM;
        l->n_refreezing++;
        return 0;
}

/* The registration of a unit's refreeze in flight, or -1. */
static ssize_t refreezing_find(Listener *l, const char *cgroup) {
        for (size_t i = 0; i < l->n_refreezing; i++)
                if (streq(l->refreezing[i].cgroup, cgroup))
                        return (ssize_t) i;
        return -1;
}

static void refreezing_forget(Listener *l, size_t i) {
        free(l->refreezing[i].cgroup);
        memmove(&l->refreezing[i], &l->refreezing[i + 1], (l->n_refreezing - i - 1) * sizeof(UnitRefreezing));
        if (--l->n_refreezing == 0)
                l->refreezing = mfree(l->refreezing);
}

void listener_unit_refrozen(Listener *l, const char *cgroup, void *userdata) {
        for (size_t i = 0; i < l->n_refreezing; i++)
                if (l->refreezing[i].userdata == userdata && streq(l->refreezing[i].cgroup, cgroup)) {
                        refreezing_forget(l, i);
                        return;
                }
}

/* A unit freezing again that an event takes back: its refreeze (i, from
 * refreezing_find()) lets go of it. */
static void unit_release(Listener *l, size_t i, const char *cgroup) {
        UnitRefreezing r = l->refreezing[i];

        l->refreezing[i].cgroup = NULL;
        refreezing_forget(l, i);
        r.released(r.userdata, cgroup);
        free(r.cgroup);
}

/* The one place that thaws a unit for an event: its state and the table
 * say whether it is to be thawed (unit_machine_event_thaws(): frozen;
 * thawed, with its window over; freezing again, its refreeze in flight,
 * which then lets go of it), the thaw is written the way it was frozen,
 * and the new state is kept until its record. Returns 1 if it thawed it, 0
 * if there was nothing to do, -ENOENT if its cgroup is gone, another
 * negative errno if the thaw failed (logged). */
int listener_unit_thaw(Listener *l, const char *cgroup, usec_t now, usec_t until) {
        CachedUnit *c = listener_cached_unit(l, cgroup);
        ssize_t refreezing;
        UnitEvent event;
        int r;

        if (!c)
                return 0; /* not frozen by standby: nothing to do */
        /* Repeated events within a window coalesce into its one thaw. */
        refreezing = c->state == UNIT_FREEZING ? refreezing_find(l, c->cgroup) : -1;
        event = unit_machine_event_thaws(c->state, c->thaw_until == USEC_INFINITY || c->thaw_until > now,
                                         refreezing >= 0);
        if (event < 0)
                return 0;
        if (event == UNIT_EVENT_TAKE_BACK)
                unit_release(l, (size_t) refreezing, c->cgroup);
        /* Past its account's share, opened for this thaw alone. */
        _cleanup_close_ int fd = -EBADF;
        if (c->fd < 0 && (r = cgroup_open(l->m.root_fd, c->cgroup, &fd)) < 0)
                return r == -ENOENT ? r : log_warning_errno(r, "Failed to open %s to thaw it: %m", c->cgroup);
        /* Through systemd where systemd froze it: never one way in, the
         * other out. Not waited for (systemd-link.c). */
        r = listener_unit_set_freeze(l, c->cgroup, c->systemd, c->fd >= 0 ? c->fd : fd, c->freeze_fd, false);
        if (r == -ENODEV || r == -ENOENT)
                return -ENOENT; /* removed since it was opened: nothing to thaw */
        if (r < 0)
                return log_warning_errno(r, "Failed to thaw %s: %m", c->cgroup);
        if (unit_move(c, event) >= 0)
                c->thaw_until = until;
        return 1;
}

bool listener_unit_thaw_ahead(const CachedUnit *c) {
        return c->state == UNIT_FROZEN && !c->systemd && c->freeze_fd >= 0 &&
               cgroup_write_freeze(c->freeze_fd, false) >= 0;
}

void listener_unit_made_anew(Listener *l, const char *cgroup, int cg_fd) {
        CachedUnit *c = listener_cached_unit(l, cgroup);

        if (!c)
                return;
        /* What it kept open is the removed cgroup's, which no write thaws. */
        c->freeze_fd = safe_close(c->freeze_fd);
        c->fd = safe_close(c->fd);
        if (c->charge.n == 0)
                return; /* past its account's share: opened by name at the thaw */
        c->fd = fcntl(cg_fd, F_DUPFD_CLOEXEC, 3);
        if (c->fd < 0)
                c->fd = -EBADF; /* opened by name at the thaw */
        else
                (void) cgroup_open_freeze(c->fd, &c->freeze_fd);
}

int listener_unit_thaw_sent(Listener *l, const char *cgroup) {
        return strv_extend(&l->thaws_in_flight, cgroup);
}

void listener_unit_thaw_settled(Listener *l, const char *cgroup) {
        size_t n = strv_length(l->thaws_in_flight);

        for (size_t i = 0; i < n; i++)
                if (streq(l->thaws_in_flight[i], cgroup)) {
                        free(l->thaws_in_flight[i]);
                        memmove(&l->thaws_in_flight[i], &l->thaws_in_flight[i + 1], (n - i) * sizeof(char *));
                        break;
                }
        /* Its record, and a window that ended meanwhile: from the record
         * timer, not from inside the call's answer (which can come
         * synchronously, from inside the thaw that sent the call). */
        int r = arm_record(l);
        if (r < 0)
                log_warning_errno(r, "Cannot schedule the record of %s's thaw: %m; it waits for the next one.", cgroup);
}

/* A thaw asked of systemd settled: the call that asked for it is told
 * (report.c), and the unit's record may go. */
static void on_systemd_thaw(void *userdata, const char *cgroup, int r) {
        Listener *l = userdata;

        listener_report_settled(l, cgroup, r);
        listener_unit_thaw_settled(l, cgroup);
}

int listener_unit_set_freeze(Listener *l, const char *cgroup, const char *address, int cg_fd, int freeze_fd, bool freeze) {
        int r;

        if (address && freeze)
                return listener_systemd_set_freeze(l, address, cgroup, true, NULL, NULL);
        if (address) {
                /* Settled once, by its answer or its fallback. */
                r = listener_unit_thaw_sent(l, cgroup);
                if (r >= 0)
                        r = listener_systemd_set_freeze(l, address, cgroup, false, on_systemd_thaw, l);
                if (r >= 0)
                        return 0;
                listener_unit_thaw_settled(l, cgroup);
                /* Nothing asked of systemd: thawed here, as its fallback would. */
                log_warning_errno(r, "%s: cannot ask systemd to thaw it (%m); thawing it through cgroup.freeze.", cgroup);
        }
        if (freeze_fd >= 0)
                return cgroup_write_freeze(freeze_fd, freeze);
        return cgroup_set_freeze(cg_fd, freeze);
}

int listener_record_thaws(Listener *l, char **cgroups, usec_t until) {
        int r;

        for (char **x = cgroups; x && *x; x++) {
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
        if (r < 0)
                listener_flush_records(l); /* no loop to defer to: record now */
        return 0;
}

void listener_unit_states_free(Listener *l) {
        assert(!l->m.journal);
        listener_cache_refresh(l); /* with no journal: empties and closes the copy */
        l->cache = mfree(l->cache);
        l->thaws_in_flight = strv_free(l->thaws_in_flight);
        listener_drop_records(l);
        l->record_source = sd_event_source_disable_unref(l->record_source);
        for (size_t i = 0; i < l->n_refreezing; i++)
                free(l->refreezing[i].cgroup);
        l->refreezing = mfree(l->refreezing);
        l->n_refreezing = 0;
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
