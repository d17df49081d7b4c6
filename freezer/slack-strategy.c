/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The rival strategy: a huge timer slack on every thread, nothing frozen. */
#include <inttypes.h>

#include "cgroup.h"
#include "log.h"
#include "manager.h"
#include "proc.h"
#include "slack.h"
#include "strv.h"

/* Threads appear while we work; a few passes catch those that were created
 * between listing a cgroup and writing its threads' slack. */
#define SLACK_PASSES 4

/* The slack a unit's threads carry: its own bound, or the journal's. */
static uint64_t unit_slack(const Journal *j, const JournalUnit *u) {
        return u && u->slack_ns != 0 ? u->slack_ns : j->slack_ns;
}

/* The slack a thread had before standby. A thread created during standby
 * inherited the standby slack (bound) from its creator, so its own current
 * value is not its original: take its process's main thread's, or the
 * kernel default. */
static uint64_t original_slack(Manager *m, pid_t pid, uint64_t current, uint64_t bound) {
        if (current != bound)
                return current;
        JournalThread *main_thread = journal_find_thread(m->journal, pid);
        if (main_thread)
                return main_thread->original_ns;
        return SLACK_KERNEL_DEFAULT_NS;
}

/* Records (in the journal, saved before any write) and then slacks every
 * thread of the given cgroups that is not yet recorded. Returns how many new. */
static int slack_pass(Manager *m, char **leaves, size_t *ret_new) {
        size_t first = m->journal->n_threads, bounds_allocated = 0;
        _cleanup_free_ uint64_t *bounds = NULL; /* of each new thread, from first on */
        int r;

        for (char **l = leaves; *l; l++) {
                _cleanup_close_ int fd = -EBADF;
                _cleanup_free_ pid_t *pids = NULL;
                uint64_t bound = unit_slack(m->journal, journal_find_unit(m->journal, *l));
                size_t n = 0;

                if (cgroup_open(m->root_fd, *l, &fd) < 0 || cgroup_list_pids(fd, false, &pids, &n) < 0)
                        continue; /* gone */
                for (size_t p = 0; p < n; p++) {
                        _cleanup_free_ pid_t *tids = NULL;
                        size_t nt = 0;

                        if (proc_list_tids(pids[p], &tids, &nt) < 0)
                                continue;
                        /* The main thread first, so that its original is known to the others. */
                        for (size_t t = 0; t < nt; t++)
                                if (tids[t] == pids[p] && t != 0) {
                                        tids[t] = tids[0];
                                        tids[0] = pids[p];
                                }
                        for (size_t t = 0; t < nt; t++) {
                                ProcStat st;
                                uint64_t cur;

                                if (journal_find_thread(m->journal, tids[t]))
                                        continue;
                                if (proc_get_stat(tids[t], &st) < 0 || slack_get(tids[t], &cur) < 0)
                                        continue;
                                if (!GROW_ARRAY(bounds, bounds_allocated, m->journal->n_threads - first + 1))
                                        return -ENOMEM;
                                r = journal_add_thread(m->journal, tids[t], st.starttime,
                                                       original_slack(m, pids[p], cur, bound));
                                if (r < 0)
                                        return r;
                                bounds[m->journal->n_threads - 1 - first] = bound;
                        }
                }
        }

        if (m->journal->n_threads == first) {
                *ret_new = 0;
                return 0;
        }

        r = manager_save_journal(m);
        if (r < 0)
                return log_error_errno(r, "Failed to write the journal in %s: %m", m->state_dir);

        for (size_t i = first; i < m->journal->n_threads; i++) {
                JournalThread *t = &m->journal->threads[i];
                uint64_t took = 0, bound = bounds[i - first];
                r = slack_set(t->tid, bound, &took);
                if (r == -ENOENT || r == -ESRCH)
                        continue;
                if (r < 0)
                        return log_error_errno(r, "Failed to set the timer slack of thread %d: %m", (int) t->tid);
                manager_step(m);
                /* The kernel's word: real-time threads always keep a slack of 0. */
                if (took != bound)
                        log_notice("Thread %d took a timer slack of %" PRIu64 " ns, not %" PRIu64 " (a real-time "
                                   "thread?): its timers still fire on time.", (int) t->tid, took, bound);
        }
        *ret_new = m->journal->n_threads - first;
        return 0;
}

/* A bound of 0 is the largest the kernel takes, probed once per run. */
static int resolve_bound(uint64_t bound, uint64_t *max, uint64_t *ret) {
        int r;

        if (bound == 0 && *max == 0) {
                r = slack_probe_max(max);
                if (r < 0)
                        return log_error_errno(r, "Failed to find the largest timer slack this kernel takes: %m");
        }
        *ret = bound == 0 ? *max : bound;
        return 0;
}

int slack_apply(Manager *m, char **leaves, size_t *ret_threads) {
        _cleanup_strv_free_ char **new_units = NULL;
        uint64_t max = 0;
        size_t total = 0, first;
        int r;

        r = resolve_bound(m->config->slack_ns, &max, &m->journal->slack_ns);
        if (r < 0)
                return r;
        r = strv_split_words("", &new_units);
        if (r < 0)
                return r;
        for (char **l = leaves; *l; l++)
                if (!journal_find_unit(m->journal, *l) && (r = strv_extend(&new_units, *l)) < 0)
                        return r;
        /* The exit kick freezes: through systemd where it manages the unit. */
        first = m->journal->n_units;
        r = journal_add_units_with_backend(m, new_units, UNIT_SLACKED);
        if (r < 0)
                return r;
        /* Each unit's own bound, named by its [Strategy] line; recorded
         * with it before any thread carries it. */
        for (size_t i = first; m->journal->per_unit && i < m->journal->n_units; i++) {
                JournalUnit *u = &m->journal->units[i];
                const UnitStrategy *us = config_unit_strategy(m->config, u->cgroup);
                if (u->state != UNIT_SLACKED || !us || us->none || us->strategy != STRATEGY_SLACK)
                        continue;
                r = resolve_bound(us->slack_ns, &max, &u->slack_ns);
                if (r < 0)
                        return r;
        }

        for (int pass = 0; pass < SLACK_PASSES; pass++) {
                size_t added = 0;
                r = slack_pass(m, leaves, &added);
                if (r < 0)
                        return r;
                total += added;
                if (added == 0)
                        break;
        }
        if (ret_threads)
                *ret_threads = total;
        return 0;
}

int slack_enter(Manager *m, char **leaves) {
        usec_t t0 = now_usec(CLOCK_MONOTONIC);
        size_t total = 0;
        int r;

        m->journal->phase = JOURNAL_ENTERING;
        m->journal->strategy = STRATEGY_SLACK;
        m->journal->since = now_usec(CLOCK_REALTIME);
        r = slack_apply(m, leaves, &total);
        if (r < 0)
                return r;

        m->journal->phase = JOURNAL_ACTIVE;
        r = manager_save_journal(m);
        if (r < 0)
                return log_error_errno(r, "Failed to write the journal in %s: %m", m->state_dir);
        log_info("Standby entered: timer slack %" PRIu64 " ns on %zu threads in %zu cgroups, in %.1f ms.",
                 m->journal->slack_ns, total, strv_length(leaves),
                 (double) (now_usec(CLOCK_MONOTONIC) - t0) / 1000.0);
        return 0;
}

/* A timer armed during standby keeps the range it was armed with after the
 * slack is restored: a sleeper could stay asleep long after exit. Passing each
 * cgroup through a freeze and thaw interrupts every sleep, and the kernel
 * restarts poll, select and futex waits with the restored slack (their restart
 * blocks keep the soft expiry; nanosleep's does not: see rearm.c), and
 * epoll_wait returns EINTR to its caller's loop. The units are
 * first marked "freezing" in the journal, so that a crash part-way through the
 * kick is undone by the next exit like any other freeze. */
static int kick_units(Manager *m) {
        _cleanup_free_ int *fds = NULL;
        _cleanup_free_ size_t *idx = NULL;
        _cleanup_free_ SystemdCall **calls = NULL;
        _cleanup_free_ int *results = NULL;
        _cleanup_strv_free_ char **cgroups = NULL;
        size_t n = 0;
        int r;

        fds = calloc(m->journal->n_units + 1, sizeof(int));
        idx = calloc(m->journal->n_units + 1, sizeof(size_t));
        calls = calloc(m->journal->n_units + 1, sizeof(SystemdCall *));
        results = calloc(m->journal->n_units + 1, sizeof(int));
        if (!fds || !idx || !calls || !results)
                return -ENOMEM;
        for (size_t i = 0; i < m->journal->n_units; i++) {
                JournalUnit *u = &m->journal->units[i];
                bool frozen;

                if (u->state != UNIT_SLACKED)
                        continue;
                if (cgroup_open(m->root_fd, u->cgroup, &fds[n]) < 0)
                        continue;
                /* Someone else froze it meanwhile: not ours to thaw. */
                if (cgroup_get_freeze(fds[n], &frozen) < 0 || frozen) {
                        fds[n] = safe_close(fds[n]);
                        continue;
                }
                u->state = UNIT_FREEZING;
                if (strv_extend(&cgroups, u->cgroup) < 0) {
                        fds[n] = safe_close(fds[n]);
                        return -ENOMEM;
                }
                idx[n++] = i;
        }
        r = manager_save_journal(m);
        if (r >= 0) {
                /* Through systemd, every FreezeUnit in flight at once: one
                 * unit that cannot freeze costs FreezeTimeout= once. */
                for (size_t i = 0; i < n; i++) {
                        const JournalUnit *u = &m->journal->units[idx[i]];
                        if (!u->systemd || systemd_call_send(u->systemd, u->cgroup, SYSTEMD_FREEZE_UNIT,
                                                             &calls[i]) < 0)
                                (void) cgroup_set_freeze(fds[i], true);
                        manager_step(m);
                }
                usec_t until = now_usec(CLOCK_MONOTONIC) + m->config->freeze_timeout;
                (void) systemd_calls_wait(calls, n, until);
                (void) cgroup_wait_frozen(fds, n, true, until, NULL);
                for (size_t i = 0; i < n; i++)
                        calls[i] = systemd_call_free(calls[i]);
                /* Thawed all at once: a manager slow on purpose costs one bound. */
                r = units_thaw(m, cgroups, fds, n, results);
                if (r >= 0)
                        r = cgroup_wait_frozen(fds, n, false, now_usec(CLOCK_MONOTONIC) + m->config->freeze_timeout, NULL);
        }
        for (size_t i = 0; i < n; i++)
                safe_close(fds[i]);
        return r;
}

bool slack_any_units(const Journal *j) {
        for (size_t i = 0; i < j->n_units; i++)
                if (j->units[i].state == UNIT_SLACKED)
                        return true;
        return false;
}

int slack_unit_threads(Manager *m, pid_t **ret, size_t *ret_n) {
        _cleanup_free_ pid_t *all = NULL;
        size_t n = 0;

        for (size_t i = 0; i < m->journal->n_units; i++) {
                _cleanup_close_ int fd = -EBADF;
                _cleanup_free_ pid_t *tids = NULL;
                size_t k = 0;

                if (m->journal->units[i].state != UNIT_SLACKED)
                        continue;
                if (cgroup_open(m->root_fd, m->journal->units[i].cgroup, &fd) < 0 ||
                    cgroup_list_pids(fd, true, &tids, &k) < 0)
                        continue; /* gone */
                pid_t *na = realloc(all, (n + k + 1) * sizeof(pid_t));
                if (!na)
                        return -ENOMEM;
                all = na;
                if (k > 0) /* an empty cgroup has no list to copy (NULL) */
                        memcpy(all + n, tids, k * sizeof(pid_t));
                n += k;
        }
        *ret = TAKE_PTR(all);
        *ret_n = n;
        return 0;
}

int slack_exit(Manager *m) {
        size_t restored = 0, gone = 0;
        int r;

        /* Every unit is listed as slacked before any write, so the kick can never
         * leave a cgroup frozen: exit reruns it on a crash. */
        for (size_t i = 0; i < m->journal->n_threads; i++) {
                JournalThread *t = &m->journal->threads[i];
                ProcStat st;

                if (proc_get_stat(t->tid, &st) < 0 || st.starttime != t->starttime) {
                        gone++; /* exited, or the tid now names another thread */
                        continue;
                }
                r = slack_set(t->tid, t->original_ns, NULL);
                if (r == -ENOENT || r == -ESRCH) {
                        gone++;
                        continue;
                }
                if (r < 0)
                        return log_error_errno(r, "Failed to restore the timer slack of thread %d: %m", (int) t->tid);
                manager_step(m);
                restored++;
        }

        /* Threads created during standby inherited their unit's standby
         * slack: those that still carry it get the kernel's default (set
         * as a number: writing 0 would give them the default they too
         * inherited, the standby slack). */
        for (size_t i = 0; i < m->journal->n_units; i++) {
                const JournalUnit *u = &m->journal->units[i];
                _cleanup_close_ int fd = -EBADF;
                _cleanup_free_ pid_t *tids = NULL;
                size_t n = 0;

                if (u->state != UNIT_SLACKED || cgroup_open(m->root_fd, u->cgroup, &fd) < 0 ||
                    cgroup_list_pids(fd, true, &tids, &n) < 0)
                        continue; /* gone */
                for (size_t k = 0; k < n; k++) {
                        uint64_t cur;
                        if (journal_find_thread(m->journal, tids[k]) || slack_get(tids[k], &cur) < 0 ||
                            cur != unit_slack(m->journal, u))
                                continue;
                        if (slack_set(tids[k], SLACK_KERNEL_DEFAULT_NS, NULL) >= 0)
                                restored++;
                }
        }

        /* Before the kick: a kicked nanosleep would restart on its old expiry. */
        size_t rearmed = 0;
        (void) rearm_nanosleepers(m, &rearmed);

        log_info("Timer slack restored on %zu threads (%zu gone), %zu sleeps in nanosleep re-armed.", restored, gone,
                 rearmed);
        m->journal->n_threads = 0;

        /* The kicked units are left "freezing" in the journal: freeze_exit()
         * confirms they are thawed and drops them. */
        r = kick_units(m);
        if (r < 0)
                log_warning_errno(r, "Some cgroups did not pass through the freeze/thaw kick: %m");
        for (size_t i = 0; i < m->journal->n_units;)
                if (m->journal->units[i].state == UNIT_SLACKED)
                        journal_remove_unit(m->journal, &m->journal->units[i]);
                else
                        i++;
        return 0;
}
