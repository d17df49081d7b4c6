/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Manager object: the journal under its lock, and leaving standby. Shared
 * by standby-manager and standby-listener (libfreezer.a). */
#include <signal.h>
#include <sys/file.h>

#include "log.h"
#include "manager.h"

void manager_step(Manager *m) {
        if (m->crash_after > 0 && ++m->steps == m->crash_after)
                raise(SIGKILL);
}

int manager_lock_journal(Manager *m, bool exclusive) {
        Journal *j = NULL;
        int r;

        if (m->lock_fd < 0) {
                r = journal_lock(m->state_fd, exclusive ? LOCK_EX : LOCK_SH, &m->lock_fd);
                if (r < 0)
                        return log_error_errno(r, "Failed to lock the journal in %s: %m", m->state_dir);
        }
        r = journal_load(m->state_fd, &j);
        if (r == -ENOENT) {
                j = journal_new();
                if (!j)
                        return -ENOMEM;
        } else if (r < 0)
                return log_error_errno(r, "Failed to read the journal %s/" JOURNAL_FILE ": %m", m->state_dir);
        journal_free(m->journal);
        m->journal = j;
        return 0;
}

int manager_save_journal(Manager *m) {
        int r = journal_save(m->state_fd, m->journal);
        if (r >= 0)
                manager_step(m);
        return r;
}

int manager_read_journal(Manager *m) {
        Journal *j = NULL;
        int r = journal_load(m->state_fd, &j);

        if (r == -ENOENT)
                j = journal_new();
        else if (r < 0)
                return log_error_errno(r, "Failed to read the journal %s/" JOURNAL_FILE ": %m", m->state_dir);
        if (!j)
                return -ENOMEM;
        journal_free(m->journal);
        m->journal = j;
        return 0;
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
