/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The freeze strategy: cgroup v2 cgroup.freeze on each unit (leaf) cgroup. */
#include <assert.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>

#include "cgroup.h"
#include "fileio.h"
#include "locks.h"
#include "log.h"
#include "manager.h"
#include "private-socket.h"
#include "proc.h"
#include "sdbus-dl.h"
#include "strv.h"
#include "unit-name.h"

/* Open cgroup fds for a set of journal units, parallel to the names. */
typedef struct Batch {
        char **cgroups;
        int *fds;
        bool *done;
        SystemdCall **calls; /* a FreezeUnit in flight, or NULL */
        size_t n;
        CgroupOpener opener;
} Batch;

/* Cancels the FreezeUnit calls still in flight. */
static void batch_forget_calls(Batch *b) {
        for (size_t i = 0; b->calls && i < b->n; i++)
                b->calls[i] = systemd_call_free(b->calls[i]);
}

static void batch_done(Batch *b) {
        batch_forget_calls(b);
        for (size_t i = 0; i < b->n; i++)
                safe_close(b->fds[i]);
        free(b->calls);
        free(b->fds);
        free(b->done);
        strv_free(b->cgroups);
        cgroup_opener_done(&b->opener);
        *b = (Batch) {};
}

static int batch_add(Manager *m, Batch *b, const char *cgroup) {
        int fd, r;
        int *nf;
        bool *nd;
        SystemdCall **nc;

        if (!b->opener.parent)
                b->opener = CGROUP_OPENER_INIT(m->root_fd);
        r = cgroup_opener_open(&b->opener, cgroup, &fd);
        if (r < 0)
                return r;
        nf = realloc(b->fds, (b->n + 1) * sizeof(int));
        if (!nf)
                goto oom;
        b->fds = nf;
        nd = realloc(b->done, (b->n + 1) * sizeof(bool));
        if (!nd)
                goto oom;
        b->done = nd;
        nc = realloc(b->calls, (b->n + 1) * sizeof(SystemdCall *));
        if (!nc)
                goto oom;
        b->calls = nc;
        r = strv_extend(&b->cgroups, cgroup);
        if (r < 0)
                goto oom;
        b->fds[b->n] = fd;
        b->calls[b->n] = NULL;
        b->done[b->n++] = false;
        return 0;
oom:
        safe_close(fd);
        return -ENOMEM;
}

/* Takes the last cgroup out of the batch again (its freeze write failed). */
static void batch_pop(Batch *b) {
        assert(b->n > 0);
        b->n--;
        safe_close(b->fds[b->n]);
        b->calls[b->n] = systemd_call_free(b->calls[b->n]);
        free(b->cgroups[b->n]);
        b->cgroups[b->n] = NULL;
}

/* Which tasks keep a cgroup from reaching "frozen 1": a frozen task sleeps in
 * do_freezer_trap; anything else (state D in a FUSE read, say) blocks it. */
static int describe_blockers(int cg_fd, char **ret) {
        _cleanup_free_ pid_t *tids = NULL;
        _cleanup_free_ char *out = NULL;
        size_t n = 0, shown = 0, len = 0;
        int r;

        r = cgroup_list_pids(cg_fd, true, &tids, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *wchan = NULL, *comm = NULL;
                ProcStat st;
                char buf[256];

                if (proc_get_stat(tids[i], &st) < 0 || st.state == 'Z' || st.state == 'X')
                        continue;
                (void) proc_get_wchan(tids[i], &wchan);
                if (wchan && streq(wchan, "do_freezer_trap") && st.state != 'D')
                        continue;
                (void) proc_get_comm(tids[i], &comm);
                if (shown++ >= 4)
                        continue;
                int k = snprintf(buf, sizeof(buf), "%spid %d (%s) state %c wchan %s", shown > 1 ? "; " : "",
                                 (int) tids[i], comm ? comm : "?", st.state, isempty(wchan) ? "-" : wchan);
                char *no = realloc(out, len + (size_t) k + 1);
                if (!no)
                        return -ENOMEM;
                out = no;
                memcpy(out + len, buf, (size_t) k + 1);
                len += (size_t) k;
        }
        if (shown > 4) {
                char *more = NULL;
                if (asprintf(&more, "%s; and %zu more", out, shown - 4) < 0)
                        return -ENOMEM;
                free(out);
                out = more;
        }
        if (!out && !(out = strdup("no task found in the way (it may have gone)")))
                return -ENOMEM;
        *ret = TAKE_PTR(out);
        return 0;
}

/* A thaw that systemd did not do (r: why; 0 when it answered, but
 * whoever answers on a user's socket may say anything). Nothing standby
 * froze may stay frozen, so the kernel decides: a cgroup that is gone needs
 * nothing (-ENOENT); one still frozen is thawed through cgroup.freeze, and
 * *ret_wrote says so. */
static int unit_thaw_behind_systemd(const JournalUnit *u, int cg_fd, int r, bool *ret_wrote) {
        bool frozen;
        int q;

        *ret_wrote = false;
        q = cgroup_get_freeze(cg_fd, &frozen);
        if (q == -ENOENT)
                return q;
        if (q < 0)
                return log_error_errno(q, "%s: cannot read its cgroup.freeze: %m", u->cgroup);
        if (!frozen)
                return 0;
        if (r == -ESRCH)
                /* Stopped while frozen (its watchdog, RuntimeMaxSec=, a kill):
                 * systemd calls it inactive and refuses the thaw, and its
                 * processes wait frozen for a stop they cannot see. */
                log_warning("%s: systemd says %s is not active, but its cgroup is frozen: thawing it through "
                            "cgroup.freeze.", u->cgroup, unit_name_of_cgroup(u->cgroup));
        else if (r >= 0)
                log_warning("%s: systemd answered the thaw, but its cgroup.freeze still says 1: thawing it "
                            "through cgroup.freeze.", u->cgroup);
        else
                /* A job pending (being stopped at shutdown, say), the manager
                 * gone, slow, or refused: thaw it directly. */
                log_warning("%s: systemd did not thaw it (%s); thawing it through cgroup.freeze.", u->cgroup,
                            private_socket_strerror(r));
        q = cgroup_set_freeze(cg_fd, false);
        if (q < 0)
                return q == -ENOENT ? q : log_error_errno(q, "%s: cannot write its cgroup.freeze: %m", u->cgroup);
        *ret_wrote = true;
        return 0;
}

int unit_set_freeze(const JournalUnit *u, int cg_fd, bool freeze) {
        int r;

        if (!u || !u->systemd)
                return cgroup_set_freeze(cg_fd, freeze);
        r = systemd_set_freeze(u->systemd, u->cgroup, freeze);
        if (r >= 0 && freeze)
                return r;
        if (freeze)
                /* No active unit there: one being stopped is not frozen. */
                return r == -ESRCH ? -ENOENT : r;
        bool wrote;
        return unit_thaw_behind_systemd(u, cg_fd, r, &wrote);
}

int units_thaw(Manager *m, char **cgroups, const int *cg_fds, size_t n, int *results) {
        _cleanup_free_ SystemdCall **calls = calloc(n + 1, sizeof(SystemdCall *));
        _cleanup_free_ SystemdCall **states = calloc(n + 1, sizeof(SystemdCall *));

        if (!calls || !states)
                return -ENOMEM;
        /* What needs no manager first: no manager's answer delays it. */
        for (size_t i = 0; i < n; i++) {
                const JournalUnit *u = journal_find_unit(m->journal, cgroups[i]);
                if (u && u->systemd) {
                        results[i] = systemd_call_send(u->systemd, u->cgroup, SYSTEMD_THAW_UNIT, &calls[i]);
                        continue;
                }
                results[i] = cgroup_set_freeze(cg_fds[i], false);
                if (results[i] < 0 && results[i] != -ENOENT)
                        log_error_errno(results[i], "Failed to thaw %s: %m", cgroups[i]);
                else if (results[i] >= 0)
                        manager_step(m);
        }
        /* Every manager asked at once; one bound for all their answers. */
        (void) systemd_calls_wait(calls, n, now_usec(CLOCK_MONOTONIC) + SDBUS_CONNECT_TIMEOUT_USEC);
        for (size_t i = 0; i < n; i++) {
                const JournalUnit *u = journal_find_unit(m->journal, cgroups[i]);
                bool wrote = false;

                if (!u || !u->systemd)
                        continue;
                int r = calls[i] ? systemd_call_result(calls[i]) : results[i];
                calls[i] = systemd_call_free(calls[i]);
                results[i] = unit_thaw_behind_systemd(u, cg_fds[i], r, &wrote);
                if (results[i] >= 0)
                        manager_step(m);
                /* systemd 252 keeps FreezerState=frozen for a unit stopped
                 * while frozen: asked, to say that its view and the
                 * kernel's now differ (a manager that failed to answer is
                 * not asked again). */
                if (wrote)
                        (void) systemd_call_send(u->systemd, u->cgroup, SYSTEMD_GET_FREEZER_STATE, &states[i]);
        }
        (void) systemd_calls_wait(states, n, now_usec(CLOCK_MONOTONIC) + SDBUS_CONNECT_TIMEOUT_USEC);
        for (size_t i = 0; i < n; i++) {
                const char *state = states[i] && systemd_call_result(states[i]) == 0 ? systemd_call_value(states[i])
                                                                                      : NULL;
                if (state && (streq(state, "frozen") || streq(state, "freezing")))
                        log_warning("%s: systemd still reports FreezerState=%s for %s although its cgroup is thawed "
                                    "(systemd keeps that state for a unit stopped while frozen).",
                                    cgroups[i], state, unit_name_of_cgroup(cgroups[i]));
                states[i] = systemd_call_free(states[i]);
        }
        return 0;
}

/* Thaws every cgroup of the batch (units_thaw(): within one bound,
 * dropping the ones that vanished from both the batch's view and the
 * journal), then waits for all. A thaw that fails is reported and the rest
 * go on: its cgroup is left out of the wait (done stays false) and the
 * first error is returned. */
static int batch_thaw(Manager *m, Batch *b, usec_t timeout) {
        _cleanup_free_ int *fds = NULL, *results = NULL;
        _cleanup_free_ size_t *idx = NULL;
        _cleanup_free_ bool *done = NULL;
        size_t n = 0;
        int r, ret = 0;

        fds = calloc(b->n + 1, sizeof(int));
        results = calloc(b->n + 1, sizeof(int));
        idx = calloc(b->n + 1, sizeof(size_t));
        done = calloc(b->n + 1, sizeof(bool));
        if (!fds || !results || !idx || !done)
                return -ENOMEM;
        r = units_thaw(m, b->cgroups, b->fds, b->n, results);
        if (r < 0)
                return r;
        for (size_t i = 0; i < b->n; i++) {
                if (results[i] == -ENOENT) {
                        /* Gone: nothing left to thaw. */
                        JournalUnit *u = journal_find_unit(m->journal, b->cgroups[i]);
                        if (u)
                                journal_remove_unit(m->journal, u);
                        b->done[i] = true;
                        continue;
                }
                if (results[i] < 0) {
                        if (ret == 0)
                                ret = results[i];
                        continue;
                }
                fds[n] = b->fds[i];
                idx[n++] = i;
        }
        r = cgroup_wait_frozen(fds, n, false, now_usec(CLOCK_MONOTONIC) + timeout, done);
        for (size_t k = 0; k < n; k++)
                b->done[idx[k]] = done[k];
        if (r < 0 && r != -ETIME)
                return log_error_errno(r, "Failed to wait for cgroups to thaw: %m");
        return ret < 0 ? ret : r;
}

/* Whether one of pids holds a file lock that a process not frozen by us
 * (frozen() says which cgroups are) waits for: 1 and why in ret_reason, or 0. */
static int lock_holder_reason(const pid_t *pids, size_t n, const LockWait *waits, size_t n_waits,
                              bool (*frozen)(const char *cgroup, void *userdata), void *userdata, char **ret_reason) {
        for (size_t w = 0; w < n_waits; w++) {
                _cleanup_free_ char *waiter_cg = NULL, *comm = NULL;
                bool holder_here = false;

                for (size_t p = 0; p < n; p++)
                        if (pids[p] == waits[w].holder)
                                holder_here = true;
                if (!holder_here || waits[w].waiter <= 0)
                        continue;
                /* A waiter that is itself frozen by us is no victim. */
                if (cgroup_of_pid(waits[w].waiter, &waiter_cg) >= 0 && frozen(waiter_cg, userdata))
                        continue;
                (void) proc_get_comm(waits[w].waiter, &comm);
                if (asprintf(ret_reason, "pid %d holds a %s lock that running pid %d (%s) waits for",
                             (int) waits[w].holder, waits[w].type, (int) waits[w].waiter, comm ? comm : "?") < 0)
                        return -ENOMEM;
                return 1;
        }
        return 0;
}

static bool journal_says_frozen(const char *cgroup, void *userdata) {
        JournalUnit *u = journal_find_unit(userdata, cgroup);
        return u && u->state == UNIT_FROZEN;
}

static bool listed_frozen(const char *cgroup, void *userdata) {
        return strv_contains(userdata, cgroup);
}

/* The deadlock guard: a frozen process holding a file lock that a process
 * outside the frozen set is blocked on would block that process for the whole
 * standby. Thaw the holder's unit and say why. */
static int guard_lock_holders(Manager *m, Batch *b, LockScan *scan, char **kept) {
        _cleanup_free_ LockWait *waits = NULL;
        size_t n_waits = 0;
        int r;

        if (!lock_scan_finish(scan, m->root_fd, kept))
                return 0; /* nobody that stays running waits for a lock */
        r = locks_read_waits("/proc/locks", &waits, &n_waits);
        if (r < 0)
                return log_warning_errno(r, "Cannot read /proc/locks, deadlock guard skipped: %m");

        _cleanup_strv_free_ char **holders = NULL, **reasons = NULL;
        _cleanup_free_ int *fds = calloc(b->n + 1, sizeof(int)), *results = calloc(b->n + 1, sizeof(int));
        size_t n_holders = 0;

        if (!fds || !results)
                return -ENOMEM;
        for (size_t i = 0; i < b->n; i++) {
                _cleanup_free_ pid_t *pids = NULL;
                _cleanup_free_ char *reason = NULL;
                size_t n = 0;
                JournalUnit *u = journal_find_unit(m->journal, b->cgroups[i]);

                if (!u || u->state != UNIT_FROZEN)
                        continue;
                if (cgroup_list_pids(b->fds[i], false, &pids, &n) < 0)
                        continue;

                r = lock_holder_reason(pids, n, waits, n_waits, journal_says_frozen, m->journal, &reason);
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;
                if (strv_extend(&holders, u->cgroup) < 0 || strv_consume(&reasons, TAKE_PTR(reason)) < 0)
                        return -ENOMEM;
                fds[n_holders++] = b->fds[i];
        }
        /* All at once: a user's manager answers them within one bound. */
        r = units_thaw(m, holders, fds, n_holders, results);
        if (r < 0)
                return r;
        for (size_t k = 0; k < n_holders; k++) {
                JournalUnit *u = journal_find_unit(m->journal, holders[k]);
                if (results[k] < 0 && results[k] != -ENOENT)
                        return log_error_errno(results[k], "Failed to thaw lock holder %s: %m", holders[k]);
                if (!u)
                        continue;
                log_warning("Leaving %s running: %s.", u->cgroup, reasons[k]);
                u->state = UNIT_LOCKHOLDER;
                r = journal_unit_set_reason(u, reasons[k]);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Whether a unit the journal calls frozen is in fact running: the listener
 * thaws first and records it a little later, and a freeze in between must
 * not take the journal's word and leave the unit running. */
static bool journal_frozen_but_running(Manager *m, const JournalUnit *u) {
        _cleanup_close_ int fd = -EBADF;
        bool frozen = true;

        if (cgroup_open(m->root_fd, u->cgroup, &fd) < 0 || cgroup_get_freeze(fd, &frozen) < 0)
                return false; /* gone, or unreadable: nothing to freeze again */
        if (!frozen)
                log_debug("%s: the journal says frozen, cgroup.freeze says 0: freezing it again.", u->cgroup);
        return !frozen;
}

/* The FreezeUnit calls systemd answered with an error: a unit that is
 * not active (being stopped) is not frozen and leaves the journal, as a
 * cgroup gone does; any other refusal leaves it running, recorded as skipped
 * (thawed again with the units that time out). */
static int systemd_refusals(Manager *m, Batch *b, size_t *failed) {
        for (size_t i = 0; i < b->n; i++) {
                _cleanup_free_ char *reason = NULL;
                JournalUnit *u = journal_find_unit(m->journal, b->cgroups[i]);
                int r = b->calls[i] ? systemd_call_result(b->calls[i]) : 0;

                /* Unanswered by the deadline: the kernel's word decides. */
                if (!u || r >= 0 || r == -ETIMEDOUT)
                        continue;
                if (r == -ESRCH) {
                        journal_remove_unit(m->journal, u);
                        b->done[i] = true;
                        continue;
                }
                errno = -r;
                if (asprintf(&reason, "systemd did not freeze it: %m") < 0)
                        return -ENOMEM;
                log_warning("Leaving %s running: %s.", u->cgroup, reason);
                u->state = UNIT_SKIPPED;
                if (journal_unit_set_reason(u, reason) < 0)
                        return -ENOMEM;
                (*failed)++;
        }
        return 0;
}

/* Waits until deadline for the cgroups of the batch still freezing (not
 * gone, not refused) to say "frozen 1", into b->done. */
static int batch_wait_freezing(Manager *m, Batch *b, usec_t deadline) {
        _cleanup_free_ int *fds = calloc(b->n + 1, sizeof(int));
        _cleanup_free_ size_t *idx = calloc(b->n + 1, sizeof(size_t));
        _cleanup_free_ bool *done = calloc(b->n + 1, sizeof(bool));
        size_t n = 0;
        int r;

        if (!fds || !idx || !done)
                return -ENOMEM;
        for (size_t i = 0; i < b->n; i++) {
                JournalUnit *u = journal_find_unit(m->journal, b->cgroups[i]);
                if (b->done[i] || !u || u->state != UNIT_FREEZING)
                        continue;
                fds[n] = b->fds[i];
                idx[n++] = i;
        }
        r = cgroup_wait_frozen(fds, n, true, deadline, done);
        for (size_t k = 0; k < n; k++)
                b->done[idx[k]] = done[k];
        return r;
}

int freeze_leaves(Manager *m, char **leaves, LockScan *scan, char **kept, size_t *ret_frozen,
                         size_t *ret_skipped) {
        _cleanup_(batch_done) Batch b = {};
        _cleanup_strv_free_ char **new_units = NULL;
        size_t frozen = 0, skipped = 0, failed = 0;
        int r;

        r = strv_split_words("", &new_units);
        if (r < 0)
                return r;
        for (char **l = leaves; *l; l++) {
                JournalUnit *u = journal_find_unit(m->journal, *l);
                if (u && u->state == UNIT_FROZEN && !journal_frozen_but_running(m, u))
                        continue;
                if (!u) {
                        r = strv_extend(&new_units, *l);
                        if (r < 0)
                                return r;
                } else
                        u->state = UNIT_FREEZING;
        }
        r = journal_add_units_with_backend(m, new_units, UNIT_FREEZING);
        if (r < 0)
                return r;

        /* The journal names every cgroup before any of them is frozen. */
        r = manager_save_journal(m);
        if (r < 0)
                return log_error_errno(r, "Failed to write the journal in %s: %m", m->state_dir);

        /* The scan (started by the caller, on another CPU) is not waited for:
         * the guard joins it after the freeze. */
        usec_t t0 = now_usec(CLOCK_MONOTONIC);
        /* Each cgroup is opened and frozen in one step, so that the kernel
         * freezes the first units while the next ones are being opened. */
        for (char **l = leaves; *l; l++) {
                JournalUnit *u = journal_find_unit(m->journal, *l);
                if (!u || u->state != UNIT_FREEZING)
                        continue;
                bool added = false;
                r = batch_add(m, &b, *l);
                if (r >= 0) {
                        added = true;
                        /* Through systemd, sent without waiting for its
                         * answer: the deadline below bounds all of them. */
                        r = u->systemd ? systemd_call_send(u->systemd, u->cgroup, SYSTEMD_FREEZE_UNIT,
                                                           &b.calls[b.n - 1])
                                       : cgroup_set_freeze(b.fds[b.n - 1], true);
                }
                if (r == -ENOENT) {
                        /* Gone: nothing left to freeze. */
                        if (added)
                                b.done[b.n - 1] = true;
                        journal_remove_unit(m->journal, u);
                        continue;
                }
                if (r < 0) {
                        /* One unit that cannot be opened or frozen (a mount
                         * point put there since the walk, a systemd that
                         * refuses) does not stop the others: it stays
                         * running, recorded as skipped. */
                        _cleanup_free_ char *reason = NULL;
                        if (added) {
                                (void) unit_set_freeze(u, b.fds[b.n - 1], false);
                                batch_pop(&b);
                        }
                        errno = -r;
                        if (r == -EXDEV ? !(reason = strdup("another file system is mounted there"))
                                        : asprintf(&reason, "cannot freeze it: %m") < 0)
                                return -ENOMEM;
                        log_warning("Leaving %s running: %s.", *l, reason);
                        u->state = UNIT_SKIPPED;
                        if (journal_unit_set_reason(u, reason) < 0)
                                return -ENOMEM;
                        failed++;
                        continue;
                }
                manager_step(m);
        }
        usec_t until = now_usec(CLOCK_MONOTONIC) + m->config->freeze_timeout;
        if (m->freeze_deadline > 0 && m->freeze_deadline < until)
                until = m->freeze_deadline;
        r = systemd_calls_wait(b.calls, b.n, until);
        if (r < 0 && r != -ETIME)
                return log_error_errno(r, "Failed to wait for systemd to freeze units: %m");
        r = systemd_refusals(m, &b, &failed);
        if (r < 0)
                return r;
        r = batch_wait_freezing(m, &b, until);
        /* An answer still to come is dropped: the kernel's word decides. */
        batch_forget_calls(&b);
        if (r < 0 && r != -ETIME)
                return log_error_errno(r, "Failed to wait for cgroups to freeze: %m");
        log_debug("Froze %zu cgroups in %.2f ms.", b.n, (double) (now_usec(CLOCK_MONOTONIC) - t0) / 1000.0);

        for (size_t i = 0; i < b.n; i++) {
                JournalUnit *u = journal_find_unit(m->journal, b.cgroups[i]);
                _cleanup_free_ char *who = NULL, *reason = NULL;
                char tbuf[32];

                if (!u || u->state == UNIT_SKIPPED)
                        continue; /* gone, or refused by systemd (said above) */
                if (b.done[i]) {
                        u->state = UNIT_FROZEN;
                        u->thaw_until = 0;
                        (void) journal_unit_set_reason(u, NULL);
                        frozen++;
                        continue;
                }
                (void) describe_blockers(b.fds[i], &who);
                if (asprintf(&reason, "did not freeze within %s: %s",
                             format_duration(tbuf, sizeof(tbuf), m->config->freeze_timeout), who ? who : "?") < 0)
                        return -ENOMEM;
                log_warning("%s %s.", u->cgroup, reason);
                u->state = UNIT_SKIPPED;
                r = journal_unit_set_reason(u, reason);
                if (r < 0)
                        return r;
                skipped++;
        }

        if (skipped > 0 && m->config->on_freeze_timeout == FREEZE_FAILURE_ABORT) {
                log_error("OnFreezeTimeout=abort: rolling back, thawing the %zu units frozen so far.", b.n);
                r = batch_thaw(m, &b, m->config->freeze_timeout);
                if (r < 0 && r != -ETIME)
                        return r;
                for (size_t i = 0; i < b.n; i++) {
                        JournalUnit *u = journal_find_unit(m->journal, b.cgroups[i]);
                        if (u && b.done[i])
                                journal_remove_unit(m->journal, u);
                        else if (u)
                                log_error("%s did not thaw; it stays in the journal.", u->cgroup);
                }
                /* Those that could not be frozen at all were never written. */
                for (char **l = leaves; *l; l++) {
                        JournalUnit *u = journal_find_unit(m->journal, *l);
                        if (u && u->state == UNIT_SKIPPED && !strv_contains(b.cgroups, *l))
                                journal_remove_unit(m->journal, u);
                }
                return -ECANCELED;
        }

        /* Units that did not freeze are left running, not half-frozen; all
         * at once, so that a manager slow on purpose costs one bound. */
        _cleanup_strv_free_ char **thaw = NULL;
        _cleanup_free_ int *thaw_fds = calloc(b.n + 1, sizeof(int)), *results = calloc(b.n + 1, sizeof(int));
        size_t n_thaw = 0;
        if (!thaw_fds || !results)
                return -ENOMEM;
        for (size_t i = 0; i < b.n; i++) {
                JournalUnit *u = journal_find_unit(m->journal, b.cgroups[i]);
                if (u && u->state == UNIT_SKIPPED) {
                        if (strv_extend(&thaw, u->cgroup) < 0)
                                return -ENOMEM;
                        thaw_fds[n_thaw++] = b.fds[i];
                }
        }
        r = units_thaw(m, thaw, thaw_fds, n_thaw, results);
        if (r < 0)
                return r;
        for (size_t k = 0; k < n_thaw; k++)
                if (results[k] < 0 && results[k] != -ENOENT)
                        return results[k]; /* logged */

        if (scan) {
                r = guard_lock_holders(m, &b, scan, kept);
                log_debug("Deadlock guard done %.2f ms after the freeze writes.",
                          (double) (now_usec(CLOCK_MONOTONIC) - t0) / 1000.0);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < b.n; i++) {
                        JournalUnit *u = journal_find_unit(m->journal, b.cgroups[i]);
                        if (u && u->state == UNIT_LOCKHOLDER)
                                frozen--, skipped++;
                }
        }

        if (ret_frozen)
                *ret_frozen = frozen;
        if (ret_skipped)
                *ret_skipped = skipped + failed;
        return 0;
}

int freeze_enter(Manager *m) {
        _cleanup_strv_free_ char **targets = NULL, **units = NULL, **kept = NULL;
        _cleanup_(lock_scan_done) LockScan scan = {};
        size_t frozen = 0, skipped = 0;
        usec_t t0 = now_usec(CLOCK_MONOTONIC);
        int r;

        r = select_targets(m, &targets);
        if (r < 0)
                return r;
        /* Started first: it mostly runs while the units are selected. */
        if (m->config->deadlock_guard)
                lock_scan_start(&scan, m->root_fd, targets);
        r = select_units(m, targets, &units, &kept);
        if (r < 0)
                return r;
        log_debug("Selected %zu units in %.2f ms.", strv_length(units), (double) (now_usec(CLOCK_MONOTONIC) - t0) / 1000.0);

        m->journal->phase = JOURNAL_ENTERING;
        m->journal->strategy = STRATEGY_FREEZE;
        m->journal->since = now_usec(CLOCK_REALTIME);

        r = freeze_leaves(m, units, m->config->deadlock_guard ? &scan : NULL, kept, &frozen, &skipped);
        if (r == -ECANCELED) {
                /* What an exit before could not thaw stays for the next exit. */
                m->journal->phase = m->journal->n_units > 0 ? JOURNAL_EXITING : JOURNAL_NONE;
                (void) manager_save_journal(m);
                return r;
        }
        if (r < 0)
                return r;

        m->journal->phase = JOURNAL_ACTIVE;
        r = manager_save_journal(m);
        if (r < 0) {
                /* A full state directory, say: standby without a journal that
                 * says so would not last (the listener would not know it), so
                 * everything is undone; the removal needs no space. */
                log_error_errno(r, "Failed to write the journal in %s: %m; thawing everything again.", m->state_dir);
                (void) manager_exit_standby(m);
                return r;
        }

        log_info("Standby entered: %zu units frozen, %zu left running, in %.1f ms.", frozen, skipped,
                 (double) (now_usec(CLOCK_MONOTONIC) - t0) / 1000.0);
        return 0;
}

int freeze_units(Manager *m, char **leaves) {
        size_t frozen = 0, skipped = 0;
        int r;

        r = freeze_leaves(m, leaves, NULL, NULL, &frozen, &skipped);
        if (r < 0)
                return r;
        r = manager_save_journal(m);
        if (r < 0)
                return log_error_errno(r, "Failed to write the journal in %s: %m", m->state_dir);
        log_info("%zu cgroups frozen%s.", frozen, skipped ? ", some left running (see status)" : "");
        return skipped ? -ETIME : 0;
}

int thaw_units(Manager *m, char **leaves, usec_t duration) {
        _cleanup_(batch_done) Batch b = {};
        usec_t until = duration == USEC_INFINITY ? USEC_INFINITY : now_usec(CLOCK_MONOTONIC) + duration;
        int r;

        for (char **l = leaves; *l; l++) {
                JournalUnit *u = journal_find_unit(m->journal, *l);
                if (!u || (u->state != UNIT_FROZEN && u->state != UNIT_FREEZING && u->state != UNIT_THAWED))
                        continue;
                r = batch_add(m, &b, *l);
                if (r == -ENOENT) {
                        journal_remove_unit(m->journal, u);
                        continue;
                }
                if (r < 0)
                        return log_error_errno(r, "Failed to open cgroup %s: %m", *l);
                /* Outside standby a thaw for good simply forgets the unit. */
                if (m->journal->phase == JOURNAL_NONE && duration == USEC_INFINITY)
                        continue;
                u->state = UNIT_THAWED;
                u->thaw_until = until;
        }
        if (b.n == 0)
                return -ESRCH;

        r = batch_thaw(m, &b, m->config->freeze_timeout);
        if (r == -ETIME) {
                for (size_t i = 0; i < b.n; i++)
                        if (!b.done[i])
                                log_error("%s did not thaw within the timeout (is a parent cgroup frozen?).", b.cgroups[i]);
                return r;
        }
        if (r < 0)
                return r;

        if (m->journal->phase == JOURNAL_NONE && duration == USEC_INFINITY)
                for (size_t i = 0; i < b.n; i++) {
                        JournalUnit *u = journal_find_unit(m->journal, b.cgroups[i]);
                        if (u)
                                journal_remove_unit(m->journal, u);
                }

        /* A crash here leaves a thawed unit marked frozen-to-be: safe, never the reverse. */
        r = manager_save_journal(m);
        if (r < 0)
                return log_error_errno(r, "Failed to write the journal in %s: %m", m->state_dir);
        log_info("%zu cgroups thawed.", b.n);
        return 0;
}

/* How many of the cgroups it thawed exit's walk keeps open to wait for,
 * at most: any user makes frozen cgroups by the thousand, and one fd each
 * ran the walk out of descriptors, its own opens failing. Past it, the
 * walk waits for those (one deadline for the whole walk) and goes on. */
#define EXIT_WALK_WINDOW 64

typedef struct ExitWalk {
        Manager *m;
        int *fds;              /* what the walk thawed, to wait for: EXIT_WALK_WINDOW at most */
        char **cgroups;
        size_t n, cap;
        size_t thawed;         /* all it thawed */
        usec_t deadline;       /* of the waits: set at the first */
        size_t stuck;          /* waited for, and did not thaw */
        size_t failed;
        size_t target_depth;   /* '/'s in the target walked */
        size_t deep;           /* cgroups CGROUP_DEPTH_MAX levels down walked below (by exit_walk_deep) */
        const char *deep_rel;  /* the one being walked below */
} ExitWalk;

/* Waits for the cgroups the walk thawed and kept, and lets them go. */
static void exit_walk_wait(ExitWalk *w) {
        if (w->n == 0)
                return;
        if (w->deadline == 0)
                w->deadline = now_usec(CLOCK_MONOTONIC) + w->m->config->freeze_timeout;
        _cleanup_free_ bool *done = calloc(w->n, sizeof(bool));
        if (done)
                (void) cgroup_wait_frozen(w->fds, w->n, false, w->deadline, done);
        for (size_t i = 0; i < w->n; i++) {
                if (!done || !done[i]) {
                        log_error("%s did not thaw within the timeout.", w->cgroups[i]);
                        w->stuck++;
                }
                w->fds[i] = safe_close(w->fds[i]);
        }
        w->cgroups = strv_free(w->cgroups);
        w->n = 0;
}

/* A cgroup found frozen: thawed, and kept to wait for. */
static void exit_walk_thaw(ExitWalk *w, int fd, const char *rel) {
        if (w->n >= EXIT_WALK_WINDOW)
                exit_walk_wait(w);
        int r = cgroup_set_freeze(fd, false);
        if (r == -ENOENT)
                return;
        if (r < 0) {
                log_error_errno(r, "Failed to thaw %s: %m", rel);
                w->failed++;
                return;
        }
        manager_step(w->m);
        w->thawed++;
        log_notice("%s was frozen, and not by a unit the journal could name: thawed.", rel);
        if (!GROW_ARRAY(w->fds, w->cap, w->n + 1) || strv_extend(&w->cgroups, rel) < 0) {
                w->failed++;
                return;
        }
        w->fds[w->n] = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (w->fds[w->n] < 0) {
                free(w->cgroups[w->n]);
                w->cgroups[w->n] = NULL;
                return;
        }
        w->n++;
}

static int exit_walk_deep(int fd, size_t depth, void *userdata) {
        ExitWalk *w = userdata;
        bool frozen;
        char name[PATH_MAX];

        if (cgroup_get_freeze(fd, &frozen) >= 0 && frozen) {
                /* Its path grows with the depth: named by where it is. */
                snprintf(name, sizeof(name), "a cgroup %zu levels below %.2000s", depth, w->deep_rel);
                exit_walk_thaw(w, fd, name);
        }
        return CGROUP_WALK_CONTINUE;
}

static int exit_walk_one(int fd, const char *rel, void *userdata) {
        ExitWalk *w = userdata;
        struct stat st;
        bool frozen;

        if (cgroup_get_freeze(fd, &frozen) >= 0 && frozen) /* else gone, or the root of a tree */
                exit_walk_thaw(w, fd, rel);
        /* Where cgroup_walk() stops, a user's chain may go on, as deep as
         * they like: walked below by "..", which any depth costs no more
         * than its cgroups do. Freezing is hierarchical, so no cgroup down
         * there is frozen unless its own cgroup.freeze or an ancestor's
         * reads 1, and each is thawed where it does. */
        size_t depth = 0;
        for (const char *p = rel; (p = strchr(p, '/')); p++)
                depth++;
        if (depth - w->target_depth != CGROUP_DEPTH_MAX || fstat(fd, &st) < 0 || st.st_nlink == 2)
                return CGROUP_WALK_CONTINUE;
        w->deep_rel = rel;
        int r = cgroup_walk_below(fd, exit_walk_deep, w);
        if (r < 0 || r > 0) {
                log_error("Below %s, %d cgroups could not be checked (unreadable, or removed during the walk).",
                          rel, r < 0 ? 1 : r);
                w->failed++;
        }
        w->deep++;
        return CGROUP_WALK_CONTINUE;
}

/* The fallback that makes exit's promise hold whatever the journal says or
 * lost: every cgroup at or below each target whose cgroup.freeze reads 1 is
 * thawed (by fd, any name, any depth, never across a mount point), then
 * each target's cgroup.events is read, which says frozen 1 only when some
 * ancestor above it is frozen. Returns the number thawed, or -EBUSY when
 * something stays frozen (each logged). */
static int exit_walk_targets(Manager *m, size_t *ret_thawed) {
        _cleanup_strv_free_ char **targets = NULL;
        ExitWalk w = { .m = m };
        size_t unwalked = 0, stuck = 0;
        int r;

        /* Each target on its own: one that cannot be resolved (a unit name
         * a user has given a cgroup of his own too) must not keep exit from
         * checking the others, nor fail every exit from now on: the units
         * the journal named below it are thawed all the same. */
        targets = calloc(1, sizeof(char *));
        if (!targets)
                return -ENOMEM;
        for (char **c = m->config->targets; c && *c; c++) {
                _cleanup_free_ char *rel = NULL;

                r = unit_resolve_cgroup(m->root_fd, NULL, *c, &rel);
                if (r == -ENOENT)
                        continue;
                if (r < 0 || isempty(rel)) {
                        log_warning_errno(r < 0 ? r : -EINVAL, "Target %s in %s: cannot resolve it (%m); what is "
                                          "frozen below it is not checked.", *c, m->config_path);
                        continue;
                }
                if (!strv_contains(targets, rel) && strv_consume(&targets, TAKE_PTR(rel)) < 0)
                        return -ENOMEM;
        }
        for (char **t = targets; *t; t++) {
                w.target_depth = 0;
                for (const char *p = *t; (p = strchr(p, '/')); p++)
                        w.target_depth++;
                w.deep = 0;
                r = cgroup_walk(m->root_fd, *t, exit_walk_one, &w);
                /* What cgroup_walk() could not go into for depth was walked
                 * below by exit_walk_one(). */
                if (r > 0)
                        r -= (int) MIN((size_t) r, w.deep);
                if (r < 0 && r != -ENOENT) {
                        log_error_errno(r, "Cannot walk the cgroups below %s: %m", *t);
                        unwalked++;
                } else if (r > 0) {
                        log_error("Below %s, %d cgroups could not be checked (unreadable).", *t, r);
                        unwalked += (size_t) r;
                }
        }
        exit_walk_wait(&w);
        stuck += w.stuck;
        for (char **t = targets; *t; t++) {
                _cleanup_close_ int fd = -EBADF;
                bool frozen;

                if (cgroup_open(m->root_fd, *t, &fd) >= 0 && cgroup_get_frozen(fd, &frozen, NULL) >= 0 && frozen) {
                        log_error("%s is frozen by a cgroup above it, outside standby's targets: not standby's "
                                  "to thaw.", *t);
                        stuck++;
                }
        }
        free(w.fds);
        strv_free(w.cgroups);
        *ret_thawed = w.thawed;
        return stuck + w.failed + unwalked > 0 ? -EBUSY : 0;
}

static int cmp_strp(const void *a, const void *b) {
        return strcmp(*(char * const *) a, *(char * const *) b);
}

int freeze_exit(Manager *m, size_t *ret_walk_thawed) {
        _cleanup_(batch_done) Batch b = {};
        size_t stuck = 0;
        int r, q;

        /* Every unit the journal names, whatever fails on the way: the first
         * promise is that exit gives the machine back. */
        for (size_t i = 0; i < m->journal->n_units; i++) {
                JournalUnit *u = &m->journal->units[i];
                if (u->state == UNIT_SLACKED || u->state == UNIT_LEFT)
                        continue; /* slack_exit()'s; never touched */
                r = batch_add(m, &b, u->cgroup);
                if (r == -ENOENT || r == -ENOTDIR)
                        continue;
                if (r == -ENOMEM)
                        return r;
                if (r < 0 && (u->state == UNIT_SKIPPED || u->state == UNIT_LOCKHOLDER))
                        log_debug("%s: cannot open it (%m); it was left running.", u->cgroup);
                else if (r < 0)
                        log_error_errno(r, "Cannot open %s: %m; the walk below the targets looks for it.", u->cgroup);

        }

        r = batch_thaw(m, &b, m->config->freeze_timeout);
        if (r == -ENOMEM)
                return r;
        for (size_t i = 0; i < b.n; i++) {
                JournalUnit *u = journal_find_unit(m->journal, b.cgroups[i]);
                if (!u)
                        continue;
                if (b.done[i]) {
                        journal_remove_unit(m->journal, u);
                        continue;
                }
                log_error("%s did not thaw within the timeout (is a parent cgroup frozen?); it stays in the journal.",
                          u->cgroup);
                stuck++;
        }
        /* Cgroups that vanished while frozen need no thaw; those that cannot
         * be opened are left to the walk (and dropped: nothing could thaw
         * them through the journal either). Looked up sorted: a journal may
         * name as many units as users make cgroups. */
        _cleanup_free_ char **sorted = calloc(b.n + 1, sizeof(char *));
        if (!sorted)
                return -ENOMEM;
        if (b.n > 0) {
                memcpy(sorted, b.cgroups, b.n * sizeof(char *));
                qsort(sorted, b.n, sizeof(char *), cmp_strp);
        }
        for (size_t i = 0; i < m->journal->n_units;) {
                JournalUnit *u = &m->journal->units[i];
                bool in_batch = b.n > 0 && bsearch(&u->cgroup, sorted, b.n, sizeof(char *), cmp_strp);
                if (u->state != UNIT_SLACKED && !in_batch)
                        journal_remove_unit(m->journal, u);
                else
                        i++;
        }

        q = exit_walk_targets(m, ret_walk_thawed);
        /* A unit still frozen when its own thaw was waited for may have been
         * kept so by a frozen parent (one its user froze, which is theirs to
         * do), which the walk has thawed since: the kernel's word now
         * decides, so that no user can keep every exit failing, and the
         * journal in "exiting", with a freeze of their own. */
        for (size_t i = 0; stuck > 0 && i < b.n; i++) {
                JournalUnit *u = b.done[i] ? NULL : journal_find_unit(m->journal, b.cgroups[i]);
                bool frozen = true;
                if (!u)
                        continue;
                r = cgroup_get_frozen(b.fds[i], &frozen, NULL);
                if (r == -ENOENT || (r >= 0 && !frozen)) {
                        log_notice("%s runs again now that what was frozen above it is thawed.", u->cgroup);
                        journal_remove_unit(m->journal, u);
                        stuck--;
                }
        }
        return stuck > 0 || q < 0 ? -EBUSY : 0;
}

/* The refreeze of a thaw window in steps that never wait, for the listener's
 * event loop: it writes the freezes itself and watches cgroup.events there. */
int freeze_refreeze_begin(Manager *m, char **leaves, usec_t deadline, char ***ret_due) {
        _cleanup_strv_free_ char **due = NULL;
        int r;

        r = strv_split_words("", &due);
        if (r < 0)
                return r;
        for (char **l = leaves; m->journal->phase == JOURNAL_ACTIVE && l && *l; l++) {
                JournalUnit *u = journal_find_unit(m->journal, *l);
                /* A later thaw (or exit) superseded this one: leave it be. */
                if (!u || u->state != UNIT_THAWED || u->thaw_until != deadline)
                        continue;
                if ((r = strv_extend(&due, *l)) < 0)
                        return r;
                u->state = UNIT_FREEZING;
        }
        /* The journal names every cgroup before any of them is frozen. */
        if (due[0] && (r = manager_save_journal(m)) < 0)
                return r;
        r = (int) strv_length(due);
        *ret_due = TAKE_PTR(due);
        return r;
}

int freeze_record(Manager *m, const char *cgroup, unsigned expect, UnitState state, usec_t thaw_until,
                  const char *reason) {
        JournalUnit *u = journal_find_unit(m->journal, cgroup);
        int r;

        if (!u || u->state < 0 || u->state >= _UNIT_STATE_MAX || !(expect & UNIT_STATE_MASK(u->state)))
                return 0;
        if (state == _UNIT_STATE_INVALID) {
                journal_remove_unit(m->journal, u);
                return 1;
        }
        r = journal_unit_set_reason(u, reason);
        if (r < 0)
                return r;
        u->state = state;
        u->thaw_until = thaw_until;
        return 1;
}

int freeze_describe_blockers(int cg_fd, char **ret) {
        return describe_blockers(cg_fd, ret);
}

int freeze_find_lock_holders(int root_fd, char **candidates, char **frozen, char ***ret_holders, char ***ret_reasons) {
        _cleanup_(lock_scan_done) LockScan scan = {};
        _cleanup_free_ LockWait *waits = NULL;
        _cleanup_strv_free_ char **holders = NULL, **reasons = NULL;
        size_t n_waits = 0;
        int r;

        lock_scan_start(&scan, root_fd, candidates);
        if (lock_scan_finish(&scan, root_fd, NULL)) {
                r = locks_read_waits("/proc/locks", &waits, &n_waits);
                if (r < 0)
                        return r;
        }
        for (char **c = candidates; n_waits > 0 && c && *c; c++) {
                _cleanup_close_ int fd = -EBADF;
                _cleanup_free_ pid_t *pids = NULL;
                _cleanup_free_ char *reason = NULL;
                size_t n = 0;

                if (cgroup_open(root_fd, *c, &fd) < 0 || cgroup_list_pids(fd, false, &pids, &n) < 0)
                        continue;
                r = lock_holder_reason(pids, n, waits, n_waits, listed_frozen, frozen, &reason);
                if (r < 0)
                        return r;
                if (r > 0 && ((r = strv_extend(&holders, *c)) < 0 || (r = strv_extend(&reasons, reason)) < 0))
                        return r;
        }
        *ret_holders = TAKE_PTR(holders);
        *ret_reasons = TAKE_PTR(reasons);
        return 0;
}
