/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <pthread.h>
#include <stdint.h>

#include "config.h"
#include "macro.h"
#include "journal.h"

/* One invocation of standby-manager: what it was told and what it holds. */
typedef struct Manager {
        Config *config;
        const char *config_path;
        char *cgroup_mount;
        int root_fd;             /* the cgroup2 mount; every cgroup is opened beneath it */
        const char *state_dir;
        int state_fd;
        int lock_fd;             /* the journal lock, held for the whole verb */
        Journal *journal;
        bool take_damaged;       /* load a damaged journal (what could be read) instead of refusing it */
        bool journal_lost;       /* exit: the journal file exists but could not be read at all */
        bool journal_busy;       /* status: read as last saved, another process holding its lock */
        bool json;
        const char *bus_address;  /* for status: where standby-listener is */
        uint64_t crash_after;    /* STANDBY_TEST_CRASH_AFTER: see manager_step() */
        uint64_t steps;
        usec_t freeze_deadline;  /* CLOCK_MONOTONIC: no freeze waits past it (0: none), as before a sleep */
} Manager;

/* Fault injection for the crash tests: every state change (a journal save, a
 * freeze or thaw write, a slack write) is a step; when STANDBY_TEST_CRASH_AFTER
 * is N > 0, the manager kills itself with SIGKILL right after step N, exactly
 * as `kill -9` would. */
void manager_step(Manager *m);

/* Locks and loads the journal (an empty one when there is none); the lock is
 * kept until manager_unlock_journal() (or the process ends). */
int manager_lock_journal(Manager *m, bool exclusive);
int manager_unlock_journal(Manager *m);
/* Loads the journal without its lock: enough to read it, since it is only
 * ever replaced whole (rename). A reader that must not block on a writer,
 * as the listener watching the journal while the manager enters, uses it. */
int manager_read_journal(Manager *m);

/* Leaves standby: thaws and restores everything the journal lists (the
 * journal must be locked and loaded; a damaged one gives what could be
 * read), then thaws whatever else is frozen below the targets, and removes
 * or rewrites the journal. Goes on past every error. -ENOENT when there was
 * no journal and nothing was frozen; -EBUSY when something stays frozen. */
int manager_exit_standby(Manager *m);
/* Saves m->journal, counting a step. */
int manager_save_journal(Manager *m);

/* select.c: the unit (leaf) cgroups below the configured targets that standby
 * may touch: not the manager, not its callers, nor anything exempt. The leaves
 * below the targets left running are returned in ret_kept (may be NULL). */
/* The configured targets that exist, as cgroup rel paths. */
int select_targets(Manager *m, char ***ret);
int select_units(Manager *m, char **targets, char ***ret, char ***ret_kept);
/* The cgroups of this process and of every ancestor up to PID 1. */
int select_callers(char ***ret);
/* Whether a cgroup below the targets may be frozen by the rules enter
 * follows: not exempt, not a session scope (unless FreezeSessions=yes), not
 * holding one of callers (from select_callers()). */
bool select_may_hold(Manager *m, char **callers, const char *cgroup);
/* The leaves below one unit or path given on the command line, minus those that
 * hold the manager or its callers. -EINVAL/-ENOENT/-ENOTUNIQ as
 * unit_resolve_cgroup(); -EDEADLK when the unit holds the manager itself. */
int select_named_unit(Manager *m, const char *name, char ***ret);

/* lock-scan.c: whether any thread that stays running waits for a file lock,
 * found in a background thread (see there for why). */
typedef struct LockScan {
        int root_fd;
        char **skip;             /* subtrees not scanned: they will be frozen */
        pthread_t thread;
        bool started;
        bool any;
        int r;
} LockScan;
/* Starts scanning every cgroup except those in skip (and what lies below). */
void lock_scan_start(LockScan *s, int root_fd, char **skip);
/* Waits for the scan; then also checks the cgroups in also (running ones inside
 * the skipped subtrees). True if a waiter was found, or the scan failed. */
bool lock_scan_finish(LockScan *s, int root_fd, char **also);
/* Waits for the scan thread to end (lock_scan_finish does too). */
void lock_scan_done(LockScan *s);

/* freeze.c: the freeze strategy and the freeze/thaw verbs. */
int freeze_enter(Manager *m);
/* Freezes leaves, recording them in the journal (saved) before the first
 * write, as enter does; its phase is the caller's. Units that time out go
 * by OnFreezeTimeout=: skipped, or (abort) everything this call froze
 * thawed again and -ECANCELED. With scan (lock_scan_start() on the
 * targets), the deadlock guard runs; kept are the cgroups below the
 * targets that stay running. */
int freeze_leaves(Manager *m, char **leaves, LockScan *scan, char **kept, size_t *ret_frozen, size_t *ret_skipped);
int freeze_units(Manager *m, char **leaves);
int thaw_units(Manager *m, char **leaves, usec_t duration);
/* Thaws every unit the journal lists, going past every error, then every
 * cgroup below the configured targets whose cgroup.freeze reads 1 (the
 * fallback when the journal is missing, damaged or could not be written);
 * called by exit. ret_walk_thawed: how many the walk thawed. 0 when nothing
 * is frozen below the targets any more and every journal unit thawed,
 * -EBUSY otherwise (each logged). */
int freeze_exit(Manager *m, size_t *ret_walk_thawed);

/* The engine's API for standby-listener, whose loop must never wait: it
 * writes cgroup.freeze itself (or sends FreezeUnit/ThawUnit) and watches
 * cgroup.events as loop sources; these record what it did, journal locked
 * and loaded, and it never writes a JournalUnit itself.
 * freeze_refreeze_begin: marks freezing (and saves) those of leaves still
 * thawed for the window ending at deadline, if standby is active; returns
 * how many, and them in ret_due (an empty list when none). */
int freeze_refreeze_begin(Manager *m, char **leaves, usec_t deadline, char ***ret_due);
/* Moves cgroup's unit to state, with thaw_until and reason (may be NULL), if
 * its state is one in expect (UNIT_STATE_MASK()s or'ed): in another state
 * someone changed it since, and it is left as it is. State
 * _UNIT_STATE_INVALID removes it (its cgroup is gone). Returns 1 if it
 * changed, 0 if not; the caller saves (manager_save_journal). */
#define UNIT_STATE_MASK(s) (1u << (unsigned) (s))
int freeze_record(Manager *m, const char *cgroup, unsigned expect, UnitState state, usec_t thaw_until,
                  const char *reason);
/* hold.c: a cgroup that appeared below the targets during standby, held
 * by the listener (see there). With the journal locked and loaded, and
 * standby active, cgroup frozen by the caller through cgroup.freeze on
 * cg_fd: records it frozen or freezing (as cgroup.events says) in the
 * journal's copy in memory; the caller saves. A cgroup the journal lists
 * already is held again only if it says frozen or freezing (a unit
 * recreated under its old name); one it lists otherwise (thawed for a
 * window, skipped, a lock holder) is that unit's. A new one past the
 * journal's budget for held units (its owner's share, or all of it) is
 * not recorded, said once per cgroup.
 * Returns 1 if it recorded it, 0 if not its to hold (the caller thaws it),
 * or a negative errno (-ENOENT: gone meanwhile). */
int freeze_hold(Manager *m, const char *cgroup, int cg_fd);
#define HOLD_REASON "started during standby"
/* Which tasks keep a cgroup from freezing (pid, comm, state, wchan). */
int freeze_describe_blockers(int cg_fd, char **ret);
/* The deadlock guard's question, for a thread of its own (it reads
 * /proc/locks, which takes 12-29 ms): which of candidates hold a file lock
 * that a process outside frozen waits for. Returns them, each with its
 * reason, in ret_holders and ret_reasons (NULL when none). */
int freeze_find_lock_holders(int root_fd, char **candidates, char **frozen, char ***ret_holders, char ***ret_reasons);

/* slack-strategy.c: slack_enter() enters with the slack strategy for all
 * of leaves; slack_apply() records leaves as slacked (saved) and then
 * writes the slack to each of their threads, each unit's bound its
 * [Strategy] line's where the journal says per_unit, else TimerSlackNSec=
 * (the journal's slack_ns, set here); its phase is the caller's. */
int slack_enter(Manager *m, char **leaves);
int slack_apply(Manager *m, char **leaves, size_t *ret_threads);
int slack_exit(Manager *m);
/* Whether the journal lists a unit as slacked. */
bool slack_any_units(const Journal *j);
/* Every thread of the units the journal lists as slacked. */
int slack_unit_threads(Manager *m, pid_t **ret, size_t *ret_n);

/* strategy.c: enters with each unit's own strategy (standby.conf's
 * [Strategy]; Strategy= for the units no line names): frozen, slacked
 * with its bound, or left alone. */
int strategy_enter(Manager *m);

/* rearm.c: restarts the nanosleep of every thread of the slacked units that
 * sleeps in one, so that it runs with the restored slack. */
int rearm_nanosleepers(Manager *m, size_t *ret_rearmed);

/* listener-stats.c: standby-listener's statistics over D-Bus (address NULL:
 * the system bus). -EOPNOTSUPP without libsystemd; a bus error (the listener
 * not running: -EHOSTUNREACH/-ENXIO and the like) as a negative errno. */
typedef struct ListenerStat {
        char key[32];
        uint64_t value;
} ListenerStat;
int listener_stats_get(const char *address, ListenerStat **ret, size_t *ret_n);
/* What anyone may read of the listener's state: its org.standby.Listener1
 * properties (GetAll). State, Strategy and EnteredBy are "" and the
 * rest 0 when the listener did not give them; each lock, one line. */
typedef struct ListenerProperties {
        char *state, *strategy, *entered_by;
        uint64_t since, events, thaws, refreezes, thaw_failures, exits;
        char **locks;
} ListenerProperties;
int listener_properties_get(const char *address, ListenerProperties *ret);
void listener_properties_done(ListenerProperties *p);
/* Asks the listener to tell apps that standby begins (PrepareEntry), and
 * waits at most timeout for their delay locks to end. A listener that is
 * not there is -ENOENT or the bus's error, for the caller to go on. On
 * success the connection is returned, to be kept open until the enter is
 * done and closed with listener_prepare_done(): its closing with no
 * standby entered tells the listener the enter failed. */
typedef struct sd_bus sd_bus; /* sd-bus.h's: libsystemd is loaded on use (sdbus-dl.c) */
int listener_prepare_entry(const char *address, usec_t timeout, sd_bus **ret_bus);
void listener_prepare_done(sd_bus *b);
/* The listener's entry and leave policy and what logind holds for it
 * (key, value, key, value...), and the apps' locks on standby, one line
 * each. */
int listener_power_get(const char *address, char ***ret_pairs, char ***ret_locks);
/* Asks standby-listener (Thaw) to thaw cgroups for a window of duration,
 * which it owns: it freezes them again when the window ends. Returns the
 * cgroups it thawed, and those it did not, each with why (ret_why, in the
 * same order); or a negative errno, with the bus error's name in
 * *ret_error (may be NULL; the caller frees it). */
int listener_thaw_window(const char *address, char **cgroups, usec_t duration, char ***ret_thawed,
                         char ***ret_failed, char ***ret_why, char **ret_error);

/* systemd-backend.c: FreezeUnit/ThawUnit where systemd manages the unit. */
/* The address of the manager that would manage cgroup's service or scope
 * (SystemdAddress=, else derived from the path), not asked; -ENOENT with
 * Backend=cgroupfs or for another kind of cgroup. */
int systemd_manager_address(const Config *c, const char *cgroup, char **ret_address);
/* The interface of a service's or scope's ControlGroup property. */
const char *systemd_unit_interface(const char *cgroup);
/* Adds each of cgroups to the journal in state, with the systemd manager
 * that will freeze and thaw it: the one whose unit it is, by that
 * manager's ControlGroup, asked of every manager at once and answered
 * within one SDBUS_CONNECT_TIMEOUT_USEC in all; cgroupfs for the others
 * (Backend=auto). With Backend=systemd, a cgroup no manager takes is an
 * error (-ENOTCONN, -ENXIO; logged). */
int journal_add_units_with_backend(Manager *m, char **cgroups, UnitState state);
/* One call, waited for (ThawUnit: SDBUS_CONNECT_TIMEOUT_USEC; FreezeUnit:
 * 30 s). -ESRCH when systemd has no such unit or it is not active
 * (systemd's view: its cgroup may live on, frozen); -EADDRNOTAVAIL for an
 * address of any other form than unix:path= and a plain path. */
int systemd_set_freeze(const char *address, const char *cgroup, bool freeze);
/* Calls without waiting for their answers, so that many are in flight, to
 * every manager at once, and one deadline bounds them all.
 * systemd_call_send: the call is written, or queued behind its manager's
 * connect; -ENOSPC past 64 managers in a run, the error of a manager that
 * already failed to answer in this run, or -EADDRNOTAVAIL.
 * systemd_calls_wait: connects and processes answers until none is in
 * flight (0) or deadline (-ETIME): then the calls still in flight fail
 * with -ETIMEDOUT, and their manager is not asked again in this run
 * (unless all it owes is FreezeUnit, which systemd answers only once the
 * unit is frozen). systemd_call_result: 1 while in flight, 0 once systemd
 * answered, -ESRCH as systemd_set_freeze, or the call's error (a FreezeUnit
 * or ThawUnit refused is logged). systemd_call_value: a property's value
 * once answered. systemd_call_free cancels a call still in flight. */
typedef enum SystemdMethod {
        SYSTEMD_FREEZE_UNIT,
        SYSTEMD_THAW_UNIT,
        SYSTEMD_GET_CONTROL_GROUP,
        SYSTEMD_GET_FREEZER_STATE,
        _SYSTEMD_METHOD_MAX,
} SystemdMethod;
typedef struct SystemdCall SystemdCall;
int systemd_call_send(const char *address, const char *cgroup, SystemdMethod method, SystemdCall **ret);
int systemd_calls_wait(SystemdCall **calls, size_t n, usec_t deadline);
int systemd_call_result(const SystemdCall *c);
const char *systemd_call_value(const SystemdCall *c);
SystemdCall *systemd_call_free(SystemdCall *c);
/* Whether address is one standby itself records: the system manager's
 * private socket, /run/user/UID/systemd/private under that UID's own runtime directory, or the
 * configured SystemdAddress=. -EPERM if not. */
int systemd_address_check(const Config *c, const char *address);
/* Drops, with an error naming the entry, every address in the loaded journal
 * that systemd_address_check() refuses: those units go through cgroupfs. */
void systemd_journal_check_addresses(Manager *m);

/* systemd-target.c: where systemd is PID 1, after standby was entered
 * (entered) or left by hand, starts standby.target or stops
 * standby-enter.service (and so the target), and waits for the job (30 s);
 * nothing for another state directory or configuration than the system's,
 * nor when run by standby-enter.service or standby-leave.service. Logs a
 * failure as a warning and returns it. */
int systemd_target_follow(Manager *m, bool entered);

/* freeze.c: freezes or thaws one journal unit the way it was frozen. */
int unit_set_freeze(const JournalUnit *u, int cg_fd, bool freeze);
/* Thaws n cgroups, each the way the journal says it was frozen (cgroupfs
 * when it does not list it), cg_fds[i] opened on cgroups[i],
 * within one bound whatever their number: those that need no manager at
 * once, every systemd manager's at the same time, answered within
 * SDBUS_CONNECT_TIMEOUT_USEC in all; then every unit whose cgroup.freeze
 * still reads 1 (its manager refused, was slow, or answered without
 * thawing) through cgroup.freeze. Does not wait for the kernel to finish.
 * results[i]: 0, -ENOENT (gone), or the error writing it (logged). */
int units_thaw(Manager *m, char **cgroups, const int *cg_fds, size_t n, int *results);

/* status.c */
int status_print(Manager *m);
/* status and is-active for a caller who cannot read the journal: the
 * listener's properties, over the bus. Returns the verb's exit status. */
int status_print_from_listener(Manager *m, bool is_active);

/* Standby's state for status and is-active, at once: the journal is read
 * under a shared lock when it is free, and as last saved when another
 * process holds the lock (*ret_busy true then); the lock is let go once the
 * journal is read. */
int manager_peek_journal(Manager *m, bool *ret_busy);

/* True while standby holds anything frozen or slacked on purpose: the
 * journal's phase is active or entering (status --json's "active"). */
bool manager_standby_active(const Manager *m);
