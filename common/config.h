/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "standby.h"
#include "time-util.h"

/* /etc/standby/standby.conf: the sections [Standby], [Strategy],
 * [Maintenance] and [Lateness], read by common/ini-file.c. */

typedef enum FreezeFailure {
        FREEZE_FAILURE_SKIP,   /* leave that unit running, list it in status */
        FREEZE_FAILURE_ABORT,  /* roll the whole enter back */
} FreezeFailure;

typedef enum Backend {
        BACKEND_AUTO,        /* systemd where a manager of the unit answers, else cgroupfs */
        BACKEND_SYSTEMD,     /* FreezeUnit/ThawUnit; error when no manager answers */
        BACKEND_CGROUPFS,    /* cgroup.freeze, always */
} Backend;

/* What starts standby and what ends it (EnterOn=, LeaveOn=): bits. */
typedef enum PowerTrigger {
        TRIGGER_LID = 1u << 0,       /* enter: lid closed; leave: lid opened */
        TRIGGER_POWER_KEY = 1u << 1, /* the power key pressed */
        TRIGGER_IDLE = 1u << 2,      /* enter only: logind's IdleHint, IdleEnterSec= after it turned true */
        TRIGGER_INPUT = 1u << 3,     /* leave only: any key or button on any input device */
} PowerTrigger;

/* One pattern of a [Strategy] line: the units it matches take the line's
 * strategy instead of Strategy=. */
typedef struct UnitStrategy {
        char *pattern;           /* a unit name or a cgroup path (with a '/'), either may hold * ? [ */
        Strategy strategy;       /* STRATEGY_FREEZE or STRATEGY_SLACK; ignored when none */
        bool none;               /* None=: left alone, neither frozen nor slacked */
        uint64_t slack_ns;       /* Slack=: the bound; 0: the largest value the kernel takes */
} UnitStrategy;

typedef struct Config {
        char **targets;          /* unit names or cgroup rel paths */
        char **exempt;           /* unit names or cgroup rel paths never touched */
        Strategy strategy;
        usec_t freeze_timeout;
        FreezeFailure on_freeze_timeout;
        uint64_t slack_ns;       /* 0: the largest value the kernel takes */
        bool deadlock_guard;
        bool freeze_sessions;    /* freeze logind's session scopes (session-*.scope) too */
        char *group;             /* members may run standby verbs besides root */
        Backend backend;
        char *systemd_address;   /* the manager of every target unit; NULL: derived per unit */
        unsigned enter_on;       /* PowerTrigger bits: what makes the listener enter standby */
        unsigned leave_on;       /* PowerTrigger bits: what makes it leave standby */
        usec_t idle_enter;       /* how long logind's IdleHint stays true before standby is entered */
        usec_t inhibit_delay_max; /* the longest an app's delay lock holds off a freeze */
        bool users_may_block;    /* any user (not only root or Group=) may take a block lock */
        bool freeze_before_sleep; /* freeze within logind's delay before a real sleep */
        usec_t lateness;         /* [Maintenance] Lateness=: how late a frozen unit's periodic work may run; infinity: never */
        usec_t window_max;       /* [Maintenance] WindowMax=: a maintenance window's bound */
        char **lateness_units;   /* [Lateness] UNIT=TIME: a unit's or slice's own lateness */
        usec_t *lateness_usec;   /* ... and its value, in the same order */
        size_t n_lateness;
        UnitStrategy *unit_strategies; /* [Strategy], in the order read (drop-ins after the file) */
        size_t n_unit_strategies;
} Config;

/* The lateness of the unit whose cgroup is rel: that of the nearest unit
 * or slice on its path named in [Lateness], else Lateness=. */
usec_t config_lateness_of(const Config *c, const char *rel);

/* The [Strategy] pattern that decides for cgroup (a path relative to the
 * cgroup2 mount, a unit's leaf): of the patterns that match one of its path
 * components (a unit name pattern that component's name, a path pattern
 * the path up to it), the one matching the deepest component, and of
 * those the last read (so a drop-in overrides the file). NULL when none
 * matches: Strategy= decides. The pointer is into c. */
const UnitStrategy *config_unit_strategy(const Config *c, const char *cgroup);

/* "lid power-key", for messages and status; ret is the caller's. */
int config_triggers_to_string(unsigned triggers, char **ret);

/* Defaults, as documented in standby.conf(5). */
int config_new_default(Config **ret);
Config *config_free(Config *c);
static inline void config_freep(Config **c) {
        config_free(*c);
}
#define _cleanup_config_ __attribute__((cleanup(config_freep)))

/* Loads path over the defaults, then its drop-ins (*.conf of
 * config_dropin_dirs(), sorted by file name across those directories; a
 * name in an earlier directory hides it in a later one, and a symbolic link
 * to /dev/null masks it). A missing file is not an error when missing_ok
 * (the default path); its drop-ins are read all the same. Every file must
 * be a regular file, not a symbolic link, owned by root and writable by
 * root alone (-EPERM), and so must every drop-in directory. On a parse
 * error returns -EINVAL and a message "FILE:LINE: what was expected" (or
 * "FILE: why") in ret_error (caller frees); nothing is returned in ret
 * then. */
int config_load(const char *path, bool missing_ok, Config **ret, char **ret_error);

/* The drop-in directories of path, highest priority first: "PATH.d"; for
 * the installed standby.conf also /run/standby/standby.conf.d and
 * /usr/lib/standby/standby.conf.d. *ret is the caller's (strv_free()). */
int config_dropin_dirs(const char *path, char ***ret);

/* Parses text (size bytes, need not be NUL-terminated) over the defaults,
 * named path in messages. Returns as config_load(). */
int config_parse_buffer(const char *path, const char *text, size_t size, Config **ret, char **ret_error);
