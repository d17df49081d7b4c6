/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* New work held during standby: the engine's side of what the listener does
 * when a cgroup appears below the targets (listener/cgroup-watch.c).
 *
 * The caller freezes the cgroup first and this records it in the journal's
 * copy in memory; the caller saves once for all it held in one turn of its
 * loop (a cgroup made costs no journal read or save of its own). Frozen
 * before recorded loses nothing of exit's promise: exit's walk thaws
 * whatever is frozen below the targets, recorded or not. Always through
 * cgroup.freeze, never FreezeUnit: the cgroup is held the
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
 * that a new cgroup is not recorded and its caller thaws it again: it runs,
 * as a unit started during standby did before it was held, unless an
 * ancestor of it is frozen (then the kernel freezes it with that ancestor,
 * and thawing the ancestor thaws it). Nothing stays frozen that the journal
 * does not name or exit's walk does not thaw. */
#include "cgroup.h"
#include "log.h"
#include "manager.h"

int freeze_hold(Manager *m, const char *cgroup, int cg_fd) {
        JournalUnit *u;
        UnitState state;
        bool frozen = false;
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
        if (u && u->state != UNIT_FROZEN && u->state != UNIT_FREEZING)
                return 0; /* thawed for a window, skipped, a lock holder: as that unit is */
        r = cgroup_get_frozen(cg_fd, &frozen, NULL);
        if (r == -ENOENT || r == -ENODEV)
                return -ENOENT;
        /* Unreadable: freezing, which exit undoes all the same. */
        state = r >= 0 && frozen ? UNIT_FROZEN : UNIT_FREEZING;
        if (!u) {
                CgroupAccount a;

                r = cgroup_account(m->root_fd, cgroup, &a);
                if (r < 0)
                        return r;
                r = journal_add_held_unit(m->journal, cgroup, a.uid, a.prefix_len, state, HOLD_REASON);
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
        } else {
                /* The same name made again: held the way a new one is. */
                u->state = state;
                u->systemd = mfree(u->systemd);
        }
        return 1;
}
