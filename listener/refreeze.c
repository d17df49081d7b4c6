/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A window's end: its units frozen again, without the loop ever waiting.
 *
 * standby-manager freezes and then waits on cgroup.events for up to
 * FreezeTimeout; the listener cannot: one unit stuck in state D (a FUSE or
 * NFS request) at its window's end would leave it deaf to every event,
 * the power key included, for that long. So the refreeze is a set of loop
 * sources: the journal marks the units freezing, the freezes are written
 * (or FreezeUnit sent), each unit's cgroup.events is watched for POLLPRI
 * (the kernel's change notification) and FreezeTimeout is a timer. When the
 * last unit is frozen, or the timer fires, the outcome goes to the journal
 * (OnFreezeTimeout=: the stuck units thawed again and recorded skipped,
 * with the tasks in the way; with abort, every unit of this refreeze). An
 * event for a unit in flight thaws it, and the refreeze lets go of it.
 *
 * Then the deadlock guard, which reads /proc/locks (12-29 ms), runs in a
 * thread; its end is an eventfd in the loop, where the lock holders it found
 * are thawed and recorded. */
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include "cgroup.h"
#include "listener.h"
#include "log.h"
#include "strv.h"

struct LockGuard {
        Listener *listener;
        pthread_t thread;
        bool started;
        int efd;
        sd_event_source *source;
        int root_fd;
        char **candidates;        /* the units just frozen again */
        char **frozen;            /* every unit frozen: their lock waiters are no victims */
        char **holders, **reasons; /* the thread's answer */
        int r;
        bool apply_due;           /* answered, its journal work put off until the lock is free */
        LockGuard *next;
};

static void refreeze_free(Refreeze *rf) {
        if (!rf)
                return;
        sd_event_source_disable_unref(rf->timer);
        for (size_t i = 0; i < rf->n; i++) {
                if (!rf->units[i].dropped)
                        listener_unit_refrozen(rf->listener, rf->units[i].cgroup, &rf->units[i]);
                sd_event_source_disable_unref(rf->units[i].source);
                safe_close(rf->units[i].events_fd);
                free(rf->units[i].cgroup);
                free(rf->units[i].reason);
        }
        free(rf->units);
        free(rf);
}

static void refreeze_unlink(Listener *l, Refreeze *rf) {
        for (Refreeze **p = &l->refreezes; *p; p = &(*p)->next)
                if (*p == rf) {
                        *p = rf->next;
                        break;
                }
        refreeze_free(rf);
}

static LockGuard *guard_free(LockGuard *g) {
        if (!g)
                return NULL;
        /* The thread's end is its last write: joining it does not wait long. */
        if (g->started)
                (void) pthread_join(g->thread, NULL);
        sd_event_source_disable_unref(g->source);
        safe_close(g->efd);
        strv_free(g->candidates);
        strv_free(g->frozen);
        strv_free(g->holders);
        strv_free(g->reasons);
        free(g);
        return NULL;
}

static void guard_unlink(LockGuard *g) {
        Listener *l = g->listener;

        for (LockGuard **p = &l->guards; *p; p = &(*p)->next)
                if (*p == g) {
                        *p = g->next;
                        break;
                }
        guard_free(g);
}

void listener_drop_refreezes(Listener *l) {
        while (l->refreezes) {
                Refreeze *rf = l->refreezes;
                l->refreezes = rf->next;
                refreeze_free(rf);
        }
        while (l->guards) {
                LockGuard *g = l->guards;
                l->guards = g->next;
                guard_free(g);
        }
}

/* What the refreeze will record of a unit moves through the table: from
 * freezing (window-end's), on what the kernel, the timer or an event says. */
static void unit_move(RefreezeUnit *u, UnitEvent event) {
        UnitState to;

        if (unit_machine_next(u->outcome, event, &to) < 0) {
                log_error("%s: no move from %s on %s in its refreeze; its outcome stays.", u->cgroup,
                          unit_machine_state_to_string(u->outcome), unit_event_to_string(event));
                return;
        }
        u->outcome = to;
}

/* Its outcome known: no longer watched. */
static void unit_done(RefreezeUnit *u, UnitEvent event) {
        unit_move(u, event);
        u->source = sd_event_source_disable_unref(u->source);
        u->events_fd = safe_close(u->events_fd);
        u->refreeze->n_pending--;
}

/* Fires the timer now: the outcome is recorded from the loop, never from an
 * event's path. */
static void refreeze_settle_soon(Refreeze *rf) {
        (void) sd_event_source_set_time(rf->timer, 1);
        (void) sd_event_source_set_enabled(rf->timer, SD_EVENT_ONESHOT);
}

static void *guard_thread(void *userdata) {
        LockGuard *g = userdata;

        g->r = freeze_find_lock_holders(g->root_fd, g->candidates, g->frozen, &g->holders, &g->reasons);
        (void) eventfd_write(g->efd, 1);
        return NULL;
}

/* The guard's answer: its lock holders thawed and recorded, if still frozen. */
static void guard_apply(LockGuard *g) {
        Listener *l = g->listener;
        bool changed = false;
        int r;

        if (!g->holders || !listener_standby_active(l) || listener_exiting(l)) {
                guard_unlink(g);
                return;
        }
        r = listener_journal_begin(l);
        if (r == -EAGAIN) {
                g->apply_due = true; /* listener_refreeze_retry() */
                return;
        }
        for (size_t i = 0; r >= 0 && g->holders[i]; i++) {
                JournalUnit *u = journal_find_unit(l->m.journal, g->holders[i]);
                _cleanup_close_ int cg = -EBADF;

                /* Still frozen since the guard looked: thawed first, then recorded. */
                if (!u || !unit_machine_allows(u->state, UNIT_EVENT_LOCK_HOLDER) ||
                    cgroup_open(l->m.root_fd, u->cgroup, &cg) < 0)
                        continue;
                r = listener_unit_set_freeze(l, u->cgroup, u->systemd, cg, -EBADF, false);
                if (r < 0) {
                        log_error_errno(r, "Failed to thaw lock holder %s: %m", u->cgroup);
                        r = 0;
                        continue;
                }
                log_warning("Leaving %s running: %s.", g->holders[i], g->reasons[i]);
                r = listener_unit_record(l, g->holders[i], UNIT_EVENT_LOCK_HOLDER, 0, g->reasons[i]);
                changed = changed || r > 0;
        }
        r = listener_journal_commit(l, changed ? LISTENER_JOURNAL_RECORDED : LISTENER_JOURNAL_UNCHANGED);
        if (r < 0)
                log_error_errno(r, "Failed to record a lock holder in the journal: %m");
        guard_unlink(g);
}

static int on_guard_done(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        LockGuard *g = userdata;

        (void) pthread_join(g->thread, NULL);
        g->started = false;
        /* Read once: the eventfd stays readable. */
        (void) sd_event_source_set_enabled(g->source, SD_EVENT_OFF);
        if (g->r < 0)
                log_warning_errno(g->r, "Cannot read /proc/locks, deadlock guard skipped: %m");
        guard_apply(g);
        return 0;
}


static int guard_start(Listener *l, char **candidates) {
        LockGuard *g = calloc(1, sizeof(LockGuard));
        Journal *j = l->m.journal;
        int r;

        if (!g)
                return -ENOMEM;
        *g = (LockGuard) { .listener = l, .efd = -EBADF, .root_fd = l->m.root_fd };
        for (char **c = candidates; c && *c; c++)
                if ((r = strv_extend(&g->candidates, *c)) < 0)
                        goto fail;
        for (size_t i = 0; j && i < j->n_units; i++)
                if (j->units[i].state == UNIT_FROZEN && (r = strv_extend(&g->frozen, j->units[i].cgroup)) < 0)
                        goto fail;
        g->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (g->efd < 0) {
                r = negative_errno();
                goto fail;
        }
        r = sd_event_add_io(l->event, &g->source, g->efd, EPOLLIN, on_guard_done, g);
        if (r < 0)
                goto fail;
        r = -pthread_create(&g->thread, NULL, guard_thread, g);
        if (r < 0)
                goto fail;
        g->started = true;
        g->next = l->guards;
        l->guards = g;
        return 0;
fail:
        guard_free(g);
        return r;
}

/* Every unit has its outcome: to the journal, then the guard. */
static void refreeze_settle(Refreeze *rf) {
        Listener *l = rf->listener;
        _cleanup_strv_free_ char **frozen = NULL;
        bool changed = false;
        int r;

        r = listener_journal_begin(l);
        if (r == -EAGAIN) {
                rf->settle_due = true; /* listener_refreeze_retry() */
                return;
        }
        rf->settle_due = false;
        for (size_t i = 0; r >= 0 && i < rf->n; i++) {
                RefreezeUnit *u = &rf->units[i];
                if (u->dropped)
                        continue;
                /* Only if nobody changed it since (an exit, a thaw by hand):
                 * from the state its window's end recorded, to its outcome. */
                r = freeze_record(&l->m, u->cgroup, UNIT_STATE_MASK(unit_machine_target(UNIT_EVENT_WINDOW_END)),
                                  u->outcome, 0, u->reason);
                changed = changed || r > 0;
                if (r > 0 && u->outcome == UNIT_FROZEN && (r = strv_extend(&frozen, u->cgroup)) < 0)
                        break;
        }
        /* Their sockets held, and the cache following, before any other
         * event is judged (dispatch.c). */
        if (r >= 0)
                r = listener_journal_commit(l, changed ? LISTENER_JOURNAL_RECORDED : LISTENER_JOURNAL_UNCHANGED);
        else
                (void) listener_journal_commit(l, changed ? LISTENER_JOURNAL_SAVED : LISTENER_JOURNAL_UNCHANGED);
        if (r < 0)
                log_error_errno(r, "Failed to record a window's refreeze in the journal: %m");
        /* The guard reads the copy of the journal, which the commit keeps. */
        if (r >= 0 && frozen && l->m.config->deadlock_guard && (r = guard_start(l, frozen)) < 0)
                log_warning_errno(r, "Cannot start the deadlock guard after a refreeze: %m");
        refreeze_unlink(l, rf);
}

static int on_events(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        RefreezeUnit *u = userdata;
        bool frozen = false;
        int r;

        r = cgroup_read_events_fd(fd, &frozen, NULL);
        if (r == -ENODEV || r == -ENOENT)
                unit_done(u, UNIT_EVENT_GONE);
        else if (r >= 0 && frozen)
                unit_done(u, UNIT_EVENT_FROZEN);
        else if (r < 0) {
                log_warning_errno(r, "Cannot read %s/cgroup.events: %m", u->cgroup);
                return 0; /* the timer decides */
        }
        if (u->refreeze->n_pending == 0)
                refreeze_settle_soon(u->refreeze);
        return 0;
}

static int on_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Refreeze *rf = userdata;
        Listener *l = rf->listener;
        bool abort = rf->n_pending > 0 && l->m.config->on_freeze_timeout == FREEZE_FAILURE_ABORT;
        char tbuf[32];

        for (size_t i = 0; i < rf->n; i++) {
                RefreezeUnit *u = &rf->units[i];
                _cleanup_free_ char *who = NULL;
                _cleanup_close_ int cg = -EBADF;
                JournalUnit *ju;

                if (u->dropped || (u->outcome != UNIT_FREEZING && !(abort && u->outcome == UNIT_FROZEN)))
                        continue;
                if (cgroup_open(l->m.root_fd, u->cgroup, &cg) < 0) {
                        if (u->outcome == UNIT_FREEZING)
                                unit_done(u, UNIT_EVENT_GONE);
                        continue;
                }
                if (u->outcome == UNIT_FREEZING) {
                        (void) freeze_describe_blockers(cg, &who);
                        if (asprintf(&u->reason, "did not freeze within %s: %s",
                                     format_duration(tbuf, sizeof(tbuf), l->m.config->freeze_timeout), who ?: "?") < 0)
                                u->reason = NULL;
                        unit_done(u, UNIT_EVENT_FREEZE_TIMEOUT);
                } else {
                        unit_move(u, UNIT_EVENT_ABORT);
                        u->reason = strdup("thawed again: OnFreezeTimeout=abort, and another unit of its window "
                                           "did not freeze");
                }
                log_warning("%s %s; left running.", u->cgroup, u->reason ?: "did not freeze");
                /* Never left half-frozen: thawed the way it was frozen. */
                ju = journal_find_unit(l->m.journal, u->cgroup);
                (void) listener_unit_set_freeze(l, u->cgroup, ju ? ju->systemd : NULL, cg, -EBADF, false);
        }
        refreeze_settle(rf);
        return 0;
}

/* An event thawed the unit (unit-state.c, which forgot this registration):
 * no longer this refreeze's. */
static void on_unit_released(void *userdata, const char *cgroup) {
        RefreezeUnit *u = userdata;

        if (u->outcome == UNIT_FREEZING)
                unit_done(u, UNIT_EVENT_TAKE_BACK);
        u->dropped = true;
        if (u->refreeze->n_pending == 0)
                refreeze_settle_soon(u->refreeze);
}

int listener_refreeze_start(Listener *l, char **leaves, usec_t deadline) {
        _cleanup_strv_free_ char **due = NULL;
        ListenerJournalChange change;
        Refreeze *rf = NULL;
        int r;

        r = listener_journal_begin(l);
        if (r == -EAGAIN)
                return r; /* the window waits for the lock (windows.c) */
        if (r >= 0)
                r = freeze_refreeze_begin(&l->m, leaves, deadline, &due);
        /* Recorded freezing (and saved) before any freeze is written. */
        change = r > 0 ? LISTENER_JOURNAL_SAVED : LISTENER_JOURNAL_UNCHANGED;
        if (r > 0) {
                rf = calloc(1, sizeof(Refreeze));
                if (rf && !(rf->units = calloc((size_t) r, sizeof(RefreezeUnit))))
                        rf = mfree(rf);
                r = rf ? 0 : -ENOMEM;
        }
        if (r < 0 || !rf) {
                if (r < 0)
                        log_warning_errno(r, "Failed to freeze again after a thaw window: %m");
                goto finish;
        }
        l->stats.refreezes++;
        rf->listener = l;
        rf->next = l->refreezes;
        l->refreezes = rf;
        for (char **x = due; *x; x++) {
                JournalUnit *ju = journal_find_unit(l->m.journal, *x);
                _cleanup_close_ int cg = -EBADF;
                bool frozen = false;
                char *c = strdup(*x);

                if (!c)
                        continue; /* not frozen: the journal still says freezing, which exit undoes */
                RefreezeUnit *u = &rf->units[rf->n++];
                *u = (RefreezeUnit) { .refreeze = rf, .cgroup = c, .events_fd = -EBADF,
                                      .outcome = unit_machine_target(UNIT_EVENT_WINDOW_END) };
                rf->n_pending++;
                /* An event that thaws it meanwhile takes it out of this refreeze. */
                if (listener_unit_refreezing(l, c, on_unit_released, u) < 0)
                        log_warning("Out of memory: an event for %s is not taken until its refreeze ends.", c);
                r = cgroup_open(l->m.root_fd, *x, &cg);
                if (r >= 0)
                        r = cgroup_open_events(cg, &u->events_fd);
                if (r >= 0)
                        r = listener_unit_set_freeze(l, *x, ju ? ju->systemd : NULL, cg, -EBADF, true);
                if (r >= 0)
                        r = sd_event_add_io(l->event, &u->source, u->events_fd, EPOLLPRI, on_events, u);
                if (r >= 0)
                        /* What the kernel says now; later, what it notifies. */
                        r = cgroup_read_events_fd(u->events_fd, &frozen, NULL);
                if (r == -ENOENT || r == -ENODEV)
                        unit_done(u, UNIT_EVENT_GONE);
                else if (r < 0)
                        /* Not frozen, or not watched: the timer decides, and says why. */
                        log_warning_errno(r, "Failed to freeze %s again: %m", *x);
                else if (frozen)
                        unit_done(u, UNIT_EVENT_FROZEN);
        }
        r = sd_event_add_time_relative(l->event, &rf->timer, CLOCK_MONOTONIC,
                                       rf->n_pending > 0 ? l->m.config->freeze_timeout : 0, 0, on_timeout, rf);
        if (r < 0) {
                log_warning_errno(r, "Cannot time the refreeze of a window: %m");
                (void) on_timeout(NULL, 0, rf); /* what the timer would do, now */
        }
finish:
        /* Its units' bus connections watched for calls, by the dispatcher
         * right after this handler, not only once the journal's change
         * comes back through inotify. */
        (void) listener_journal_commit(l, change);
        return r < 0 ? r : 0;
}

void listener_refreeze_retry(Listener *l) {
        for (Refreeze *rf = l->refreezes, *next; rf; rf = next) {
                next = rf->next;
                if (rf->settle_due)
                        refreeze_settle(rf);
        }
        for (LockGuard *g = l->guards, *next; g; g = next) {
                next = g->next;
                if (g->apply_due)
                        guard_apply(g);
        }
}
