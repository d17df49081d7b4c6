/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The standby phase as the listener sees it: one value, changed only here,
 * each change logged (debug) with its reason. Its transitions (drawn in
 * docs/design.md, "The standby phase"):
 *
 *   inactive -> starting           the policy asked systemd for standby.target (logind.c)
 *   inactive, starting, told -> announcing
 *                                  apps told standby begins, their delay locks waited for (inhibit.c)
 *   announcing -> told             the delay is over; the enter is not in the journal yet
 *   told -> starting               the policy asked for the target after a PrepareEntry
 *   starting, told -> inactive     no enter followed (refused, timed out, apps told it is off)
 *   any before active -> active    the journal says active
 *   active -> leave-asked          an exit asked of systemd (standby-leave.service), not begun
 *   active, leave-asked -> exiting the exit runs as standby-manager here (exit-standby.c)
 *   exiting -> active              it ended without the journal leaving active
 *   active, leave-asked, exiting -> inactive
 *                                  the journal says standby is not active
 *
 * This file calls nothing else of the listener: who changes the phase
 * does what follows from it. */
#include "listener.h"
#include "log.h"

static const char *const phase_names[_LISTENER_PHASE_MAX] = {
        [LISTENER_PHASE_INACTIVE] = "inactive",     [LISTENER_PHASE_STARTING] = "starting",
        [LISTENER_PHASE_ANNOUNCING] = "announcing", [LISTENER_PHASE_TOLD] = "told",
        [LISTENER_PHASE_ACTIVE] = "active",         [LISTENER_PHASE_LEAVE_ASKED] = "leave-asked",
        [LISTENER_PHASE_EXITING] = "exiting",
};

const char *listener_phase_to_string(ListenerPhase p) {
        return p >= 0 && p < _LISTENER_PHASE_MAX ? phase_names[p] : NULL;
}

const char *listener_phase_name(const Listener *l) {
        return listener_phase_to_string(l->phase);
}

bool listener_phase_transition_allowed(ListenerPhase from, ListenerPhase to) {
        switch (to) {
        case LISTENER_PHASE_INACTIVE:
                return from != LISTENER_PHASE_ANNOUNCING;
        case LISTENER_PHASE_STARTING:
                return from == LISTENER_PHASE_INACTIVE || from == LISTENER_PHASE_TOLD;
        case LISTENER_PHASE_ANNOUNCING:
                return from == LISTENER_PHASE_INACTIVE || from == LISTENER_PHASE_STARTING ||
                       from == LISTENER_PHASE_TOLD;
        case LISTENER_PHASE_TOLD:
                return from == LISTENER_PHASE_ANNOUNCING;
        case LISTENER_PHASE_ACTIVE:
                return from != LISTENER_PHASE_ACTIVE && from != LISTENER_PHASE_LEAVE_ASKED;
        case LISTENER_PHASE_LEAVE_ASKED:
                return from == LISTENER_PHASE_ACTIVE;
        case LISTENER_PHASE_EXITING:
                return from == LISTENER_PHASE_ACTIVE || from == LISTENER_PHASE_LEAVE_ASKED;
        default:
                return false;
        }
}

void listener_set_phase(Listener *l, ListenerPhase to, const char *why) {
        if (l->phase == to)
                return;
        /* A change the table does not have is a bug of the caller's: said
         * loudly, and taken, so that the listener follows the journal. */
        if (!listener_phase_transition_allowed(l->phase, to))
                log_error("Unexpected standby phase change %s -> %s (%s).", listener_phase_to_string(l->phase),
                          listener_phase_to_string(to), why);
        else
                log_debug("Standby phase %s -> %s (%s).", listener_phase_to_string(l->phase),
                          listener_phase_to_string(to), why);
        l->phase = to;
}

bool listener_phase_follow_journal(Listener *l, bool journal_active) {
        bool was = listener_standby_active(l);

        if (journal_active && !was)
                listener_set_phase(l, LISTENER_PHASE_ACTIVE, "the journal says active");
        else if (!journal_active && was)
                listener_set_phase(l, LISTENER_PHASE_INACTIVE, "the journal says standby is not active");
        return was != journal_active;
}
