/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One change of the journal by the listener: begin (its lock, never
 * waited for, and the journal loaded), the engine's records
 * (freeze_record(), freeze_hold(), freeze_refreeze_begin()), commit (saved
 * if need be, unlocked, and "the journal changed" queued for the
 * dispatcher, which brings everything that follows the journal up to
 * date). While another process holds the lock, begin says -EAGAIN and the
 * lock file is watched: its release queues LISTENER_WORK_LOCK_FREE, and
 * the dispatcher retries what was put off. */
#include <limits.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/inotify.h>

#include "listener.h"
#include "log.h"

static int on_lock_released(sd_event_source *s, const struct inotify_event *ev, void *userdata) {
        Listener *l = userdata;

        l->lock_watch = sd_event_source_disable_unref(l->lock_watch);
        listener_enqueue(l, LISTENER_WORK_LOCK_FREE);
        return 0;
}

int listener_journal_begin(Listener *l) {
        char path[PATH_MAX];
        int r;

        for (int attempt = 0; l->m.lock_fd < 0; attempt++) {
                r = journal_lock(l->m.state_fd, LOCK_EX | LOCK_NB, &l->m.lock_fd);
                if (r >= 0)
                        break;
                if (r != -EWOULDBLOCK)
                        return log_error_errno(r, "Failed to lock the journal in %s: %m", l->m.state_dir);
                if (attempt > 0 || l->lock_watch) {
                        l->stats.journal_busy++;
                        return -EAGAIN;
                }
                /* Told when its holder closes the lock file (a process that
                 * ends closes it too); tried once more after the watch is in
                 * place, so that a release in between is not missed. */
                snprintf(path, sizeof(path), "%s/" JOURNAL_LOCK_FILE, l->m.state_dir);
                r = sd_event_add_inotify(l->event, &l->lock_watch, path, IN_CLOSE_WRITE | IN_CLOSE_NOWRITE,
                                         on_lock_released, l);
                if (r < 0)
                        return log_error_errno(r, "Cannot watch %s: %m", path);
        }
        l->lock_watch = sd_event_source_disable_unref(l->lock_watch);
        return manager_lock_journal(&l->m, true);
}

int listener_journal_commit(Listener *l, ListenerJournalChange change) {
        int r = 0;

        if (change == LISTENER_JOURNAL_RECORDED)
                r = manager_save_journal(&l->m);
        (void) manager_unlock_journal(&l->m);
        /* Followed even if the save failed: the copy in memory is what the
         * listener acts on until the next load. */
        if (change != LISTENER_JOURNAL_UNCHANGED)
                listener_enqueue(l, LISTENER_WORK_JOURNAL_CHANGED);
        return r;
}
