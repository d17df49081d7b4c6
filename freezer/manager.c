/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Manager object: the journal under its lock, and leaving standby. Shared
 * by standby-manager and standby-listener (libfreezer.a). */
#include <signal.h>
#include <sys/file.h>

#include "log.h"
#include "manager.h"
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
        int r, q = 0;

        if (journal_is_empty(m->journal))
                return -ENOENT;

        m->journal->phase = JOURNAL_EXITING;
        r = manager_save_journal(m);
        if (r < 0)
                return log_error_errno(r, "Failed to write the journal: %m");

        if (m->journal->n_threads > 0 || m->journal->strategy == STRATEGY_SLACK)
                q = slack_exit(m);
        r = freeze_exit(m);
        if (q < 0 && r >= 0)
                r = q;

        /* Only what is known to be undone leaves the journal. */
        m->journal->phase = r < 0 ? JOURNAL_EXITING : JOURNAL_NONE;
        q = manager_save_journal(m);
        if (q < 0)
                return log_error_errno(q, "Failed to write the journal: %m");
        return r;
}
