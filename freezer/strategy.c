/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A strategy per unit: standby.conf's [Strategy] names, by unit, slice or
 * path, which units are frozen, which slacked (each with its bound) and
 * which left alone; Strategy= decides for the others.
 *
 * One journal holds all three: frozen units as the freeze strategy records
 * them, slacked ones as the slack strategy does (each with its "slack NS"),
 * and the units left alone as "left", which exit drops without touching.
 * The freeze goes first: OnFreezeTimeout=abort rolls back before anything
 * is slacked, and a failure after it undoes both, as any failed enter. */
#include <inttypes.h>

#include "log.h"
#include "manager.h"
#include "strv.h"

#define LEFT_REASON "Strategy: None="

/* Sorts units into the three strategies; the others are the caller's. */
static int split_units(Manager *m, char **units, char ***freeze, char ***slack, char ***none) {
        int r;

        for (char **u = units; *u; u++) {
                const UnitStrategy *us = config_unit_strategy(m->config, *u);
                char ***to = us && us->none                                           ? none
                             : (us ? us->strategy : m->config->strategy) == STRATEGY_SLACK ? slack
                                                                                           : freeze;
                r = strv_extend(to, *u);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Records the units left alone, so that status names them; nothing is
 * written to their cgroups, and exit only drops them. */
static int record_left(Manager *m, char **none) {
        int r;

        for (char **l = none; *l; l++) {
                if (journal_find_unit(m->journal, *l))
                        continue; /* an exit before left it frozen: that exit's to thaw */
                r = journal_add_unit(m->journal, *l, UNIT_LEFT, LEFT_REASON);
                if (r < 0)
                        return r;
        }
        return 0;
}

static void forget_left(Journal *j) {
        for (size_t i = 0; i < j->n_units;)
                if (j->units[i].state == UNIT_LEFT)
                        journal_remove_unit(j, &j->units[i]);
                else
                        i++;
}

int strategy_enter(Manager *m) {
        _cleanup_strv_free_ char **targets = NULL, **units = NULL, **kept = NULL;
        _cleanup_strv_free_ char **freeze = NULL, **slack = NULL, **none = NULL, **running = NULL;
        _cleanup_(lock_scan_done) LockScan scan = {};
        size_t frozen = 0, skipped = 0, threads = 0;
        usec_t t0 = now_usec(CLOCK_MONOTONIC);
        int r;

        r = select_targets(m, &targets);
        if (r < 0)
                return r;
        if (m->config->deadlock_guard)
                lock_scan_start(&scan, m->root_fd, targets);
        r = select_units(m, targets, &units, &kept);
        if (r < 0)
                return r;
        if ((r = strv_split_words("", &freeze)) < 0 || (r = strv_split_words("", &slack)) < 0 ||
            (r = strv_split_words("", &none)) < 0 || (r = split_units(m, units, &freeze, &slack, &none)) < 0)
                return r;
        /* What stays running below the targets, for the deadlock guard: a
         * slacked unit or one left alone may wait for a frozen one's lock. */
        r = strv_split_words("", &running);
        for (char **l = kept; r >= 0 && l && *l; l++)
                r = strv_extend(&running, *l);
        for (char **l = slack; r >= 0 && *l; l++)
                r = strv_extend(&running, *l);
        for (char **l = none; r >= 0 && *l; l++)
                r = strv_extend(&running, *l);
        if (r < 0)
                return r;

        m->journal->phase = JOURNAL_ENTERING;
        m->journal->strategy = m->config->strategy;
        m->journal->per_unit = true;
        m->journal->since = now_usec(CLOCK_REALTIME);
        r = record_left(m, none);
        if (r < 0)
                return r;

        /* Saves the journal, with every frozen and left unit, before the
         * first freeze write. */
        r = freeze_leaves(m, freeze, m->config->deadlock_guard ? &scan : NULL, running, &frozen, &skipped);
        if (r == -ECANCELED) {
                /* Nothing slacked yet; what an exit before could not thaw
                 * stays for the next exit. */
                forget_left(m->journal);
                m->journal->per_unit = false;
                m->journal->phase = m->journal->n_units > 0 ? JOURNAL_EXITING : JOURNAL_NONE;
                (void) manager_save_journal(m);
                return r;
        }
        if (r < 0)
                return r;

        r = slack_apply(m, slack, &threads);
        if (r < 0)
                return r;

        m->journal->phase = JOURNAL_ACTIVE;
        r = manager_save_journal(m);
        if (r < 0)
                return log_error_errno(r, "Failed to write the journal in %s: %m", m->state_dir);
        log_info("Standby entered, a strategy per unit: %zu units frozen, %zu left running that would be; timer "
                 "slack on %zu threads in %zu units; %zu units left alone; in %.1f ms.",
                 frozen, skipped, threads, strv_length(slack), strv_length(none),
                 (double) (now_usec(CLOCK_MONOTONIC) - t0) / 1000.0);
        return 0;
}
