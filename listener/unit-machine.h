/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The listener's unit state machine: what the listener does to a unit, as
 * one table of (from, event) -> to (unit-machine.c). The states are the
 * journal's (UnitState), and UNIT_NONE for a unit the journal does not
 * list; the listener's in-memory copy of a unit (CachedUnit), a window's
 * refreeze of it (RefreezeUnit) and every record the listener makes move
 * only through this table, and docs/design.md prints it. Pure: no
 * listener, no loop, no I/O. */
#include <stdbool.h>

#include "journal.h"

/* Not in the journal: never frozen by standby, or removed (gone). As
 * freeze_record() takes it: a record to UNIT_NONE removes the unit. */
#define UNIT_NONE _UNIT_STATE_INVALID

typedef enum UnitEvent {
        UNIT_EVENT_THAW,           /* an event's rule or a maintenance window thaws it (or a thaw unrecorded) */
        UNIT_EVENT_TAKE_BACK,      /* the same, while its window's refreeze is in flight: the refreeze lets go */
        UNIT_EVENT_WINDOW_END,     /* its window ended and no later thaw superseded it: freezing again */
        UNIT_EVENT_HOLD,           /* a cgroup made during standby is held: frozen as enter would have */
        UNIT_EVENT_FROZEN,         /* cgroup.events says frozen 1 */
        UNIT_EVENT_FREEZE_TIMEOUT, /* FreezeTimeout passed before it froze: thawed again, left running */
        UNIT_EVENT_ABORT,          /* OnFreezeTimeout=abort: another unit of its window did not freeze */
        UNIT_EVENT_GONE,           /* its cgroup was removed while it was freezing */
        UNIT_EVENT_LOCK_HOLDER,    /* the deadlock guard: it holds a lock that a running task waits for */
        UNIT_EVENT_RELEASE,        /* a held cgroup turned out a container: its child holds the work */
        _UNIT_EVENT_MAX,
        _UNIT_EVENT_INVALID = -1,
} UnitEvent;

/* The state event leads to from from: 0 and *ret_to, or -EINVAL if the
 * table has no such move (ret_to untouched). */
int unit_machine_next(UnitState from, UnitEvent event, UnitState *ret_to);
/* Whether the table has a move from from on event. */
bool unit_machine_allows(UnitState from, UnitEvent event);
/* The states event moves a unit from, as freeze_record()'s expect mask
 * (UNIT_NONE, which no mask holds, left out). */
unsigned unit_machine_journal_mask(UnitEvent event);
/* The state event leads to (each event leads to one), UNIT_NONE included;
 * _UNIT_STATE_INVALID is also what an invalid event gives. */
UnitState unit_machine_target(UnitEvent event);

/* What an event for a unit in state does (unit-state.c's
 * listener_unit_thaw()): UNIT_EVENT_THAW, UNIT_EVENT_TAKE_BACK (freezing,
 * its refreeze the listener's, in flight), or _UNIT_EVENT_INVALID for
 * nothing: a window still open (window_open) coalesces, and a unit frozen
 * by enter or a hold, left running or slacked is not the listener's to
 * thaw. */
UnitEvent unit_machine_event_thaws(UnitState state, bool window_open, bool refreezing);

/* Whether standby keeps a unit in state from running: frozen, or freezing
 * (its freeze written or about to be). */
bool unit_machine_stopped(UnitState state);

const char *unit_event_to_string(UnitEvent event);
/* A state's name in the table: the journal's, or "none". */
const char *unit_machine_state_to_string(UnitState state);
/* Who fires an event, in words (for the table in docs/design.md). */
const char *unit_event_who(UnitEvent event);

/* The table as docs/design.md shows it, one row per event (a string the
 * caller frees). Returns 0 or -ENOMEM. */
int unit_machine_format(char **ret);
