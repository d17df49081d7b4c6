/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The dispatcher: the one place that acts on what handlers queued
 * (queue.c), once per turn of the loop, right after the handler that queued
 * it and before any other event is judged. Handlers (event sources, timers,
 * completions, the journal's transactions) never call one another for what
 * follows a change; they queue it, and this runs it in a fixed order:
 *
 *   1. LOCK_FREE: the journal's lock came free. What was put off for it:
 *      settled refreezes and deadlock guards (refreeze.c).
 *      HOLDS, or LOCK_FREE: the cgroups frozen as they were made
 *      (cgroup-watch.c), all those of the turn recorded in one journal
 *      transaction. Their journal changes join step 2.
 *   2. JOURNAL_CHANGED: the listener's copy of the journal is newer than
 *      what follows it: the unit cache (and what a rule's unit name stands
 *      for), the bus connections peeked for calls to frozen units, the
 *      sockets held for them, the cgroup watch, the spare links to the
 *      managers that froze units, the maintenance windows' classes; and
 *      last, the bus's clients are told what changed of the standby's
 *      state (bus-state.c).
 *   3. RECORDS: thaws done and not yet in the journal are recorded.
 *   4. WINDOWS_DUE: windows that ended close (their refreezes start),
 *      after the records of step 3; one whose end must wait (for the
 *      lock, or for a thaw in flight through systemd to settle and be
 *      recorded) stays due until queued again.
 *   5. BLOCKS_CHANGED: the first block lock on standby was taken or the
 *      last one went (inhibit.c): logind's locks and the idle policy
 *      follow (logind.c).
 *   6. INHIBITORS_CHANGED: a lock on standby was taken or went: the
 *      bus's clients are told (the Inhibitors property).
 *
 * Work that 3 and 4 queue (their journal changes) runs at once in the next
 * turn, again before any event. An event's own thaw never waits for this:
 * only what follows it (its record, its window's end) does. */
#include "listener.h"
#include "log.h"

static int on_dispatch(sd_event_source *s, void *userdata) {
        Listener *l = userdata;
        ListenerWork work = listener_queue_take(l);

        if (work & LISTENER_WORK_LOCK_FREE) {
                listener_refreeze_retry(l);
                /* And records and windows that waited for the lock. */
                work |= LISTENER_WORK_RECORDS | LISTENER_WORK_WINDOWS_DUE;
        }
        if (work & (LISTENER_WORK_LOCK_FREE | LISTENER_WORK_HOLDS))
                listener_cgroup_watch_record(l);
        work |= listener_queue_take(l);
        if (work & LISTENER_WORK_JOURNAL_CHANGED) {
                listener_cache_refresh(l);
                (void) listener_sync_call_targets(l);
                (void) listener_sync_sockets(l);
                (void) listener_cgroup_watch_sync(l);
                listener_systemd_links_sync(l);
                /* A unit held since with a lateness of its own: its class. */
                (void) listener_maintenance_follow(l);
                listener_bus_state_sync(l);
        }
        /* Records first, windows after: a refreeze takes the journal's
         * word for what its units are. */
        if (work & (LISTENER_WORK_RECORDS | LISTENER_WORK_WINDOWS_DUE))
                listener_flush_records(l);
        if (work & LISTENER_WORK_WINDOWS_DUE)
                listener_windows_retry(l);
        if (work & LISTENER_WORK_BLOCKS_CHANGED)
                listener_logind_blocks_changed(l);
        if (work & LISTENER_WORK_INHIBITORS_CHANGED)
                listener_bus_state_inhibitors_changed(l);
        return 0;
}

int listener_dispatcher_init(Listener *l) {
        int r = listener_queue_init(l, on_dispatch);
        if (r < 0)
                return log_error_errno(r, "Cannot set up the listener's dispatcher: %m");
        return 0;
}
