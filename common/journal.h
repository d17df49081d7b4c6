/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "standby.h"
#include "time-util.h"

/* The standby journal: /run/standby/state (the directory can be overridden).
 * It lists every cgroup standby froze or is about to freeze and every thread
 * whose timer slack it changed, with the original value. It is written (to a
 * temporary file, then rename) BEFORE each change it records, under an
 * exclusive flock on /run/standby/lock, so a crash at any point leaves a
 * journal from which `standby-manager exit` undoes everything.
 * The file exists exactly while something is frozen or slacked. */

typedef enum JournalPhase {
        JOURNAL_NONE,      /* not in standby (units may still be frozen by hand) */
        JOURNAL_ENTERING,  /* enter in progress, or crashed part-way */
        JOURNAL_ACTIVE,
        JOURNAL_EXITING,
        _JOURNAL_PHASE_MAX,
        _JOURNAL_PHASE_INVALID = -1,
} JournalPhase;

typedef enum UnitState {
        UNIT_FREEZING,     /* recorded, freeze written or about to be */
        UNIT_FROZEN,       /* kernel reported frozen 1 */
        UNIT_THAWED,       /* thawed on request until thaw_until (or standby end) */
        UNIT_SKIPPED,      /* did not freeze within FreezeTimeout, left running */
        UNIT_LOCKHOLDER,   /* thawed: holds a file lock a running process waits on */
        UNIT_SLACKED,      /* slack strategy: its threads carry the standby slack */
        UNIT_LEFT,         /* its [Strategy] is None=: never touched, nor undone */
        _UNIT_STATE_MAX,
        _UNIT_STATE_INVALID = -1,
} UnitState;

typedef struct JournalUnit {
        char *cgroup;          /* rel path below the cgroup2 mount */
        UnitState state;
        usec_t thaw_until;     /* CLOCK_MONOTONIC; 0 = none, USEC_INFINITY = until exit */
        char *reason;          /* why skipped/thawed; may be NULL */
        char *systemd;         /* the address of the systemd manager that froze it; NULL: cgroupfs */
        uid_t held_uid;        /* held during standby: its account's owner (0: root's); JOURNAL_NOT_HELD for enter's */
        uint64_t slack_ns;     /* UNIT_SLACKED: the slack its threads carry; 0: the journal's slack_ns */
        size_t held_size;      /* JOURNAL_HELD_LINE_SIZE(cgroup) once counted, 0 before */
} JournalUnit;

#define JOURNAL_NOT_HELD ((uid_t) -1)

typedef struct JournalThread {
        pid_t tid;
        uint64_t starttime;    /* /proc/TID/stat field 22: guards against tid reuse */
        uint64_t original_ns;
} JournalThread;

typedef struct Journal {
        JournalPhase phase;
        Strategy strategy;
        usec_t since;          /* CLOCK_REALTIME when standby was entered */
        uint64_t slack_ns;     /* the slack applied by the slack strategy */
        bool per_unit;         /* entered with each unit's [Strategy] line (standby.conf(5)), not one for all */
        JournalUnit *units;
        size_t n_units;
        JournalThread *threads;
        size_t n_threads;
        size_t find_hint;      /* where journal_find_unit() last found one */
        /* What journal_parse() could not read: every bad line is counted in
         * n_errors, the first JOURNAL_ERRORS_KEPT are described in errors
         * ("line N: why"). A journal with n_errors > 0 is damaged: what it
         * holds is what could be read, the rest is lost. */
        char **errors;
        size_t n_errors;
} Journal;

#define JOURNAL_ERRORS_KEPT 8
/* The largest journal, the one limit for both ways: journal_format() (and
 * so journal_save()) refuses to write more, journal_load() reads a file of
 * up to exactly this many bytes. Far beyond any real one (a unit line is at
 * most 4 bytes per byte of its path), small enough to read in one go. */
#define JOURNAL_SIZE_MAX (16U * 1024U * 1024U)
/* What the unit lines may take, so that a journal stays below its limit
 * with every unit's reason and systemd address on top: enter's units, left
 * running past JOURNAL_UNITS_BUDGET (the longest names first); the units
 * held during standby, not held past JOURNAL_HELD_BUDGET in all, nor past
 * JOURNAL_HELD_USERS_BUDGET for all users' together (the rest is root's),
 * nor past JOURNAL_HELD_UID_BUDGET for one user's account (the delegated
 * subtree their cgroups lie in, common/cgroup.h's CgroupAccount): one
 * user's new cgroups do not use up what other users' and root's need. The
 * remaining quarter is for the header, reasons, addresses and threads. */
#define JOURNAL_UNITS_BUDGET (JOURNAL_SIZE_MAX / 2)
#define JOURNAL_HELD_BUDGET (JOURNAL_SIZE_MAX / 4)
#define JOURNAL_HELD_USERS_BUDGET (JOURNAL_HELD_BUDGET / 4 * 3)
#define JOURNAL_HELD_UID_BUDGET (JOURNAL_HELD_BUDGET / 8)

/* The bytes s takes in the journal once escaped (every byte outside
 * printable ASCII, the space and '\\' take four). */
size_t journal_escaped_size(const char *s);
/* The bytes a unit line for cgroup takes, before its reason and systemd
 * address, with a slacked unit's "slack NS"; a held unit's with its "held
 * UID". */
#define JOURNAL_UNIT_LINE_SIZE(cgroup) \
        (journal_escaped_size(cgroup) + sizeof("unit lock-holder 18446744073709551615  \\- slack 18446744073709551615\n"))
#define JOURNAL_HELD_LINE_SIZE(cgroup) (JOURNAL_UNIT_LINE_SIZE(cgroup) + sizeof(" held 4294967295") - 1)

const char *journal_phase_to_string(JournalPhase p);
const char *unit_state_to_string(UnitState s);

Journal *journal_new(void);
Journal *journal_free(Journal *j);
static inline void journal_freep(Journal **j) {
        journal_free(*j);
}
#define _cleanup_journal_ __attribute__((cleanup(journal_freep)))

int journal_add_unit(Journal *j, const char *cgroup, UnitState state, const char *reason);
/* Adds cgroup as a unit held during standby, of the account whose
 * delegation root is owned by uid (0: root's) and named by cgroup's first
 * account_len bytes (0 for root's): -EDQUOT when its line would take the
 * held units past JOURNAL_HELD_BUDGET, a user's past
 * JOURNAL_HELD_USERS_BUDGET, or those held below the same delegation root
 * past JOURNAL_HELD_UID_BUDGET (nothing added); -ENOMEM. */
int journal_add_held_unit(Journal *j, const char *cgroup, uid_t uid, size_t account_len, UnitState state,
                          const char *reason);
JournalUnit *journal_find_unit(Journal *j, const char *cgroup);
void journal_remove_unit(Journal *j, JournalUnit *u);
int journal_unit_set_reason(JournalUnit *u, const char *reason);
int journal_add_thread(Journal *j, pid_t tid, uint64_t starttime, uint64_t original_ns);
JournalThread *journal_find_thread(Journal *j, pid_t tid);
bool journal_is_empty(const Journal *j);
static inline bool journal_is_damaged(const Journal *j) {
        return j->n_errors > 0;
}

/* Opens (creating with mode 0700 if create) the state directory. Refuses a
 * symlink (-ELOOP), something other than a directory (-ENOTDIR), a directory
 * owned by neither root nor the caller (-EPERM), or one that group or others
 * may write to (-EACCES): someone else could plant a journal in it. */
int journal_dir_open(const char *dir, bool create, int *ret_fd);

/* Takes the journal lock (LOCK_EX or LOCK_SH), blocking. The lock is released
 * when ret_lock_fd is closed. */
int journal_lock(int dir_fd, int operation, int *ret_lock_fd);

/* Parses a journal from size bytes at buf (any bytes: NUL, no final newline,
 * garbage). Never fails on content: every line that cannot be read (a bad
 * header, an unknown key, a bad value, a line after "end", no "end" line at
 * all) is skipped and recorded in the journal's errors with its line number,
 * and what could be read is kept. Returns 0, or -ENOMEM. */
int journal_parse(const char *buf, size_t size, Journal **ret);

/* The journal's text, exactly as journal_save() writes it (journal_parse()
 * reads it back equal). The caller frees *ret. -ENOMEM, -EFBIG beyond
 * JOURNAL_SIZE_MAX. */
int journal_format(const Journal *j, char **ret, size_t *ret_size);

/* Reads and parses the journal file: -ENOENT when there is none (nothing in
 * standby), -EFBIG beyond JOURNAL_SIZE_MAX, or a read error. A damaged file
 * loads (see journal_parse()): check journal_is_damaged(). */
int journal_load(int dir_fd, Journal **ret);

/* Writes atomically (a temporary file, then rename): on any failure (-ENOSPC
 * on a full file system, say) the previous file is left as it was. Removes
 * the file when the journal is empty (which needs no space). */
int journal_save(int dir_fd, const Journal *j);

/* Removes the journal file: the last resort of exit when a journal that
 * would still be true cannot be written. */
int journal_remove(int dir_fd);

/* Name of the journal file inside the state directory. */
#define JOURNAL_FILE "state"
#define JOURNAL_LOCK_FILE "lock"
