/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The listener's unit state machine (unit-machine.h): one row per event,
 * the states it moves a unit from and the one it leads to. Everything the
 * listener does to a unit's state asks this table first; a move it does
 * not hold is a bug, refused and logged by the caller. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "manager.h"
#include "unit-machine.h"

/* A set of states: UNIT_NONE's bit, then one per UnitState. */
#define FROM(s) (1u << ((s) + 1))

typedef struct UnitMove {
        const char *name;
        unsigned from;
        UnitState to;
        const char *who;
} UnitMove;

static const UnitMove moves[_UNIT_EVENT_MAX] = {
        [UNIT_EVENT_THAW] = { "thaw", FROM(UNIT_FROZEN) | FROM(UNIT_THAWED), UNIT_THAWED,
                              "an event's rule, a maintenance window (thaw.c)" },
        [UNIT_EVENT_TAKE_BACK] = { "take-back", FROM(UNIT_FREEZING), UNIT_THAWED,
                                   "an event's rule, its refreeze in flight" },
        [UNIT_EVENT_WINDOW_END] = { "window-end", FROM(UNIT_THAWED), UNIT_FREEZING,
                                    "its window's end: For=, or idle (windows.c)" },
        [UNIT_EVENT_HOLD] = { "hold", FROM(UNIT_NONE) | FROM(UNIT_FREEZING) | FROM(UNIT_FROZEN), UNIT_FREEZING,
                              "a cgroup made in standby (cgroup-watch.c)" },
        [UNIT_EVENT_FROZEN] = { "frozen", FROM(UNIT_FREEZING), UNIT_FROZEN,
                                "cgroup.events (refreeze.c, cgroup-watch.c)" },
        [UNIT_EVENT_FREEZE_TIMEOUT] = { "freeze-timeout", FROM(UNIT_FREEZING), UNIT_SKIPPED,
                                        "FreezeTimeout's timer (refreeze.c)" },
        [UNIT_EVENT_ABORT] = { "abort", FROM(UNIT_FROZEN), UNIT_SKIPPED,
                               "the same, OnFreezeTimeout=abort (refreeze.c)" },
        [UNIT_EVENT_GONE] = { "gone", FROM(UNIT_FREEZING), UNIT_NONE, "cgroup.events (refreeze.c, cgroup-watch.c)" },
        [UNIT_EVENT_LOCK_HOLDER] = { "lock-holder", FROM(UNIT_FROZEN), UNIT_LOCKHOLDER,
                                     "the deadlock guard (refreeze.c)" },
        [UNIT_EVENT_RELEASE] = { "release", FROM(UNIT_FREEZING) | FROM(UNIT_FROZEN), UNIT_NONE,
                                 "a held container's child (cgroup-watch.c)" },
};

static bool event_valid(UnitEvent event) {
        return event >= 0 && event < _UNIT_EVENT_MAX;
}

static bool state_valid(UnitState state) {
        return state == UNIT_NONE || (state >= 0 && state < _UNIT_STATE_MAX);
}

int unit_machine_next(UnitState from, UnitEvent event, UnitState *ret_to) {
        if (!unit_machine_allows(from, event))
                return -EINVAL;
        if (ret_to)
                *ret_to = moves[event].to;
        return 0;
}

bool unit_machine_allows(UnitState from, UnitEvent event) {
        return event_valid(event) && state_valid(from) && (moves[event].from & FROM(from));
}

unsigned unit_machine_journal_mask(UnitEvent event) {
        unsigned mask = 0;

        for (UnitState s = 0; event_valid(event) && s < _UNIT_STATE_MAX; s++)
                if (moves[event].from & FROM(s))
                        mask |= UNIT_STATE_MASK(s);
        return mask;
}

UnitState unit_machine_target(UnitEvent event) {
        return event_valid(event) ? moves[event].to : _UNIT_STATE_INVALID;
}

UnitEvent unit_machine_event_thaws(UnitState state, bool window_open, bool refreezing) {
        if (state == UNIT_THAWED && window_open)
                return _UNIT_EVENT_INVALID; /* coalesced into its window's one thaw */
        if (unit_machine_allows(state, UNIT_EVENT_THAW))
                return UNIT_EVENT_THAW;
        if (refreezing && unit_machine_allows(state, UNIT_EVENT_TAKE_BACK))
                return UNIT_EVENT_TAKE_BACK;
        return _UNIT_EVENT_INVALID;
}

bool unit_machine_stopped(UnitState state) {
        return state == UNIT_FROZEN || state == UNIT_FREEZING;
}

const char *unit_event_to_string(UnitEvent event) {
        return event_valid(event) ? moves[event].name : NULL;
}

const char *unit_machine_state_to_string(UnitState state) {
        return state == UNIT_NONE ? "none" : unit_state_to_string(state);
}

const char *unit_event_who(UnitEvent event) {
        return event_valid(event) ? moves[event].who : NULL;
}

/* One row: the event, the states it moves a unit from, the one it leads
 * to, and who fires it. */
static int format_move(FILE *f, const UnitMove *m) {
        char from[64] = "";

        for (UnitState s = UNIT_NONE; s < _UNIT_STATE_MAX; s++)
                if (m->from & FROM(s)) {
                        if (from[0])
                                strncat(from, ", ", sizeof(from) - strlen(from) - 1);
                        strncat(from, unit_machine_state_to_string(s), sizeof(from) - strlen(from) - 1);
                }
        fprintf(f, "%-15s %-23s %-12s %s\n", m->name, from, unit_machine_state_to_string(m->to), m->who);
        return ferror(f) ? -ENOMEM : 0;
}

int unit_machine_format(char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);
        int r = f ? 0 : -ENOMEM;

        if (f)
                fprintf(f, "%-15s %-23s %-12s %s\n", "event", "from", "to", "who");
        for (UnitEvent e = 0; r >= 0 && e < _UNIT_EVENT_MAX; e++)
                r = format_move(f, &moves[e]);
        if (f && fclose(f) != 0 && r >= 0)
                r = -ENOMEM;
        if (r < 0)
                return r;
        *ret = TAKE_PTR(buf);
        return 0;
}
