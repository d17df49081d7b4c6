/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Vocabulary shared by standby-manager, standby-listener and standby-bench. */

#define STANDBY_VERSION "0.1.0"

#ifndef STANDBY_SYSCONFDIR
#define STANDBY_SYSCONFDIR "/etc"
#endif

#ifndef STANDBY_RULES_LIBDIR
#define STANDBY_RULES_LIBDIR "/usr/lib/standby/rules.d"
#endif

#ifndef STANDBY_CONFD_LIBDIR
#define STANDBY_CONFD_LIBDIR "/usr/lib/standby/standby.conf.d"
#endif

#ifndef STANDBY_SBINDIR
#define STANDBY_SBINDIR "/usr/local/sbin"
#endif

/* The installed standby-manager, which the listener runs for its exits
 * and the freeze before a sleep (listener/run-manager.c). */
#define STANDBY_MANAGER_PATH STANDBY_SBINDIR "/standby-manager"

#define STANDBY_CONFIG_PATH STANDBY_SYSCONFDIR "/standby/standby.conf"
#define STANDBY_STATE_DIR "/run/standby"

typedef enum Strategy {
        STRATEGY_FREEZE,
        STRATEGY_SLACK,
        _STRATEGY_MAX,
        _STRATEGY_INVALID = -1,
} Strategy;

const char *strategy_to_string(Strategy s);
Strategy strategy_from_string(const char *s);

/* Exit codes of standby-manager, documented in standby-manager(8). */
enum {
        EXIT_OK = 0,
        EXIT_FAILURE_GENERIC = 1,  /* an operation failed (message says which) */
        EXIT_USAGE = 2,            /* bad command line */
        EXIT_PERMISSION = 3,       /* not root, nor in the configured group */
        EXIT_NO_CGROUP2 = 4,       /* no cgroup v2 mount, or no v2 freezer */
        EXIT_CONFIG = 5,           /* configuration file malformed or unreadable */
        EXIT_ALREADY = 6,          /* enter: standby already entered */
        EXIT_NOT_ACTIVE = 7,       /* exit/thaw: nothing in standby to act on */
        EXIT_UNKNOWN_UNIT = 8,     /* a unit or cgroup that does not exist or is refused */
        EXIT_ROLLED_BACK = 9,      /* enter aborted by OnFreezeTimeout=abort; all undone */
};

/* status and is-active exit as LSB's status action does (the values of
 * EXIT_PERMISSION and EXIT_NO_CGROUP2 mean these there). */
enum {
        EXIT_STATUS_INACTIVE = 3,  /* standby is not active */
        EXIT_STATUS_UNKNOWN = 4,   /* its state could not be read (permission, no cgroup v2, the journal) */
};
