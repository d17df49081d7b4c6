/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* New work held during standby: the engine's side of what the listener does
 * when a cgroup appears below the targets (listener/cgroup-watch.c).
 *
 * The journal names the cgroup first, as enter does, then it is frozen.
 * Always through cgroup.freeze, never FreezeUnit: the cgroup is held the
 * moment it is made, before its unit has a process, and systemd (252)
 * refuses to freeze a unit that is not active yet. An empty cgroup can be
 * frozen, and a process the kernel moves into a frozen cgroup is frozen
 * before it returns to user space, so nothing of the unit runs. systemd does
 * not see this freeze (its FreezerState stays "running"); a thaw, by an
 * event or by exit, goes through cgroup.freeze the same way.
 *
 * The units held take room in the journal, which has one limit for writing
 * and reading: they are held within JOURNAL_HELD_BUDGET, users' within
 * JOURNAL_HELD_USERS_BUDGET of it (the rest is root's), and each user's
 * account (the delegated subtree the cgroup lies in, whatever uid its
 * directories show: cgroup_account()) within JOURNAL_HELD_UID_BUDGET. Past
 * that a new cgroup is neither recorded nor frozen: it runs, as a unit
 * started during standby did before it was held, unless an ancestor of it
 * is frozen (then the kernel freezes it with that ancestor, and thawing the
 * ancestor thaws it). Nothing is
 * frozen that the journal does not name or exit's walk does not thaw. */
#include "cgroup.h"
#include "log.h"
#include "manager.h"

int freeze_hold(Manager *m, const char *cgroup, int cg_fd) {
        JournalUnit *u;
        bool frozen = false, added;
        int r;

        /* The slack strategy freezes nothing: a new unit inherits nothing
         * either, and is left as standby left the others, running. Per
         * unit, a new cgroup goes by its own [Strategy] line: only one that
         * would be frozen is held (a slacked or a None= unit runs). */
        if (!m->journal || m->journal->phase != JOURNAL_ACTIVE)
                return 0;
        const UnitStrategy *us = m->journal->per_unit ? config_unit_strategy(m->config, cgroup) : NULL;
        if (us ? us->none || us->strategy != STRATEGY_FREEZE : m->journal->strategy != STRATEGY_FREEZE)
                return 0;
        u = journal_find_unit(m->journal, cgroup);
        added = !u;
        if (u && u->state != UNIT_FROZEN && u->state != UNIT_FREEZING)
                return 0; /* thawed for a window, skipped, a lock holder: as that unit is */
        if (!u) {
                CgroupAccount a;

                r = cgroup_account(m->root_fd, cgroup, &a);
                if (r < 0)
                        return r;
                r = journal_add_held_unit(m->journal, cgroup, a.uid, a.prefix_len, UNIT_FREEZING, HOLD_REASON);
                if (r == -EDQUOT) {
                        log_notice("Not holding %s, started during standby (it runs): the units held for uid %u "
                                   "would take more than their %u bytes of the journal, users' more than %u, or "
                                   "all held units more than %u.",
                                   cgroup, (unsigned) a.uid, JOURNAL_HELD_UID_BUDGET, JOURNAL_HELD_USERS_BUDGET,
                                   JOURNAL_HELD_BUDGET);
                        return 0;
                }
                if (r < 0)
                        return r;
                u = &m->journal->units[m->journal->n_units - 1];
        } else {
                /* The same name made again: frozen the way this hold freezes. */
                u->state = UNIT_FREEZING;
                u->systemd = mfree(u->systemd);
        }
        r = manager_save_journal(m);
        if (r < 0) {
                /* Not recorded, so not frozen: a unit the journal does not
                 * name could not be thawed by exit. */
                if (added)
                        journal_remove_unit(m->journal, journal_find_unit(m->journal, cgroup));
                return r;
        }
        r = cgroup_set_freeze(cg_fd, true);
        manager_step(m);
        if (r >= 0)
                r = cgroup_get_frozen(cg_fd, &frozen, NULL);
        if (r == -ENOENT || r == -ENODEV) {
                (void) freeze_record(m, cgroup, UNIT_STATE_MASK(UNIT_FREEZING), _UNIT_STATE_INVALID, 0, NULL);
                (void) manager_save_journal(m);
                return -ENOENT;
        }
        if (r < 0)
                return r; /* left freezing: exit undoes it */
        if (frozen) {
                (void) freeze_record(m, cgroup, UNIT_STATE_MASK(UNIT_FREEZING), UNIT_FROZEN, 0, HOLD_REASON);
                r = manager_save_journal(m);
                if (r < 0)
                        log_debug_errno(r, "Cannot record %s frozen (it stays recorded freezing): %m", cgroup);
        }
        return 1;
}
