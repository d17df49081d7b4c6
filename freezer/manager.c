/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Manager object: the journal under its lock, and leaving standby. Shared
 * by standby-manager and standby-listener (libfreezer.a). */
#include <signal.h>
#include <sys/file.h>

#include "log.h"
#include "manager.h"
#include "report.h"
#include "strv.h"

void manager_step(Manager *m) {
        if (m->crash_after > 0 && ++m->steps == m->crash_after)
                raise(SIGKILL);
}

/* Says what a damaged journal lost, file:line by file:line. */
static void log_damage(Manager *m, const Journal *j) {
        for (char **e = j->errors; e && *e; e++)
                if (strneq(*e, "line ", 5))
                        log_warning("%s/" JOURNAL_FILE ":%s", m->state_dir, *e + strlen("line "));
                else
                        log_warning("%s/" JOURNAL_FILE ": %s", m->state_dir, *e);
        if (j->n_errors > strv_length(j->errors))
                log_warning("%s/" JOURNAL_FILE ": and %zu more lines that cannot be read.", m->state_dir,
                            j->n_errors - strv_length(j->errors));
}

/* Loads the journal into m->journal: an empty one when there is none. A
 * damaged one is reported line by line, and taken only by the callers that
 * set m->take_damaged (exit, which repairs it, and status). */
static int load_journal(Manager *m) {
        Journal *j = NULL;
        int r;

        r = journal_load(m->state_fd, &j);
        if (r == -ENOENT) {
                j = journal_new();
                if (!j)
                        return -ENOMEM;
        } else if (r < 0)
                return log_error_errno(r, "Failed to read the journal %s/" JOURNAL_FILE ": %m", m->state_dir);
        else if (journal_is_damaged(j)) {
                log_damage(m, j);
                if (!m->take_damaged) {
                        journal_free(j);
                        return log_error_errno(-EBADMSG, "The journal %s/" JOURNAL_FILE " is damaged; "
                                               "`standby-manager exit` thaws everything and removes it.",
                                               m->state_dir);
                }
        }
        journal_free(m->journal);
        m->journal = j;
        systemd_journal_check_addresses(m);
        return 0;
}

int manager_lock_journal(Manager *m, bool exclusive) {
        int r;

        if (m->lock_fd < 0) {
                r = journal_lock(m->state_fd, exclusive ? LOCK_EX : LOCK_SH, &m->lock_fd);
                if (r < 0)
                        return log_error_errno(r, "Failed to lock the journal in %s: %m", m->state_dir);
        }
        return load_journal(m);
}

int manager_peek_journal(Manager *m, bool *ret_busy) {
        int r;

        /* A save replaces the file by rename(), so a read without the lock
         * sees one whole journal, the last saved: status need not wait for
         * an enter or an exit that holds the lock for its FreezeTimeout. */
        r = journal_lock(m->state_fd, LOCK_SH | LOCK_NB, &m->lock_fd);
        if (r < 0 && r != -EWOULDBLOCK)
                return log_error_errno(r, "Failed to lock the journal in %s: %m", m->state_dir);
        *ret_busy = r < 0;
        r = load_journal(m);
        /* What status asks next (each unit's FreezerState, the listener)
         * needs no lock, and an exit must not wait for it. */
        m->lock_fd = safe_close(m->lock_fd);
        return r;
}

int manager_save_journal(Manager *m) {
        int r = journal_save(m->state_fd, m->journal);
        if (r >= 0)
                manager_step(m);
        return r;
}

int manager_read_journal(Manager *m) {
        return load_journal(m);
}

int manager_unlock_journal(Manager *m) {
        m->lock_fd = safe_close(m->lock_fd);
        return 0;
}

int manager_exit_standby(Manager *m) {
        /* The period's end counters, before the exit's own thaw runs anything. */
        _cleanup_(period_freep) Period *period = report_period_snapshot_end(m);
        bool recorded = !journal_is_empty(m->journal) || journal_is_damaged(m->journal) || m->journal_lost;
        size_t walk_thawed = 0;
        int r, q = 0;

        m->journal->phase = JOURNAL_EXITING;
        if (recorded) {
                r = manager_save_journal(m);
                if (r < 0)
                        /* A full state file system, say: thawing needs no journal. */
                        log_warning_errno(r, "Cannot write the journal in %s (%m); leaving standby without it.",
                                          m->state_dir);
        }

        if (m->journal->n_threads > 0 || m->journal->strategy == STRATEGY_SLACK || slack_any_units(m->journal))
                q = slack_exit(m);
        r = freeze_exit(m, &walk_thawed);
        if (q < 0 && r >= 0)
                r = q;
        if (!recorded && walk_thawed == 0 && r >= 0)
                return -ENOENT;
        if (!recorded)
                log_notice("No journal, but %zu cgroups below the targets were frozen: thawed.", walk_thawed);
        if (period) {
                _cleanup_free_ char *path = NULL;
                q = report_period_end(m, period, &path);
                if (q < 0)
                        log_warning_errno(q, "Cannot write this standby period's report: %m");
                else
                        log_info("This standby period's report: %s (standby-manager report).", path);
                q = 0;
        }

        /* Only what is known to be undone leaves the journal. A journal
         * that names nothing is not kept for what the walk could not check
         * (a chain deeper than the walks go, which any user can make and
         * enter never freezes): it would only refuse every enter from
         * then on, and the next exit walks the targets all the same. */
        m->journal->phase = r < 0 && (m->journal->n_units > 0 || m->journal->n_threads > 0) ? JOURNAL_EXITING
                                                                                            : JOURNAL_NONE;
        q = manager_save_journal(m);
        if (q < 0) {
                /* What is left cannot be recorded: remove the old journal
                 * rather than leave one that calls thawed units frozen (a
                 * listener starting would freeze them again). Removing needs
                 * no space; the next exit's walk finds what is still frozen. */
                log_error_errno(q, "Cannot write the journal in %s (%m); it would still list:", m->state_dir);
                for (size_t i = 0; i < m->journal->n_units; i++)
                        log_error("  %s (%s)", m->journal->units[i].cgroup,
                                  unit_state_to_string(m->journal->units[i].state));
                if (m->journal->n_threads > 0)
                        log_error("  %zu threads whose timer slack was not restored", m->journal->n_threads);
                q = journal_remove(m->state_fd);
                if (q < 0)
                        log_error_errno(q, "Cannot remove the stale journal %s/" JOURNAL_FILE " either: %m",
                                        m->state_dir);
                else
                        log_error("Removed the journal instead; run `standby-manager exit` again once %s has room.",
                                  m->state_dir);
                if (r >= 0 && !journal_is_empty(m->journal))
                        r = -EBUSY;
        }
        return r;
}
