/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "manager.h"
#include "rules.h"
#include "unit-machine.h"

#define LISTENER_BUS_NAME "org.standby.Listener1"
#define LISTENER_OBJECT_PATH "/org/standby/Listener1"
#define LISTENER_INTERFACE "org.standby.Listener1"

/* The listener's own statistics; a source keeps its own in its state
 * (ListenerSource.statistics). */
typedef struct Statistics {
        uint64_t events;          /* every event any source delivered */
        uint64_t matched;         /* events that matched a rule */
        uint64_t thaws;           /* thaws done (one per window) */
        uint64_t records;         /* units whose thaw was recorded in the journal */
        uint64_t coalesced;       /* matched events inside an open window */
        uint64_t refreezes;       /* windows closed by freezing again */
        uint64_t idle_ends;       /* windows ended before For= because their units' threads slept */
        uint64_t maintenance_windows; /* windows for frozen units' periodic work (maintenance.c) */
        uint64_t maintenance_thaws;   /* units thawed in them */
        uint64_t idle_looks;      /* looks at a window's threads (EndWhenIdle=) */
        uint64_t exits;           /* ExitStandby= actions */
        uint64_t replayed;        /* actions of events that came while standby was being entered */
        uint64_t resyncs;         /* netlink overruns answered by a fresh dump */
        uint64_t forged;          /* netlink messages from a process, not the kernel: dropped */
        uint64_t systemd_thaws;   /* thaws systemd's ThawUnit did, answered without error */
        uint64_t systemd_fallbacks; /* thaws systemd did not do in time, done through cgroup.freeze */
        uint64_t systemd_connects; /* connects to a user manager's socket begun (systemd-link.c) */
        uint64_t systemd_links;   /* links to systemd managers authenticated now: systemd sends them every signal */
        uint64_t systemd_signals; /* signals read on those links, none of them asked for */
        uint64_t systemd_renewals; /* spares replaced before systemd drops them unauthenticated (90 s) */
        uint64_t journal_busy;    /* journal work put off: another process held the journal's lock */
        uint64_t thaw_failures;   /* units an event or a call was to thaw that stayed frozen */
        uint64_t jobs_released;   /* timer jobs of held units cancelled at their manager (held-job.c) */
        uint64_t yields;          /* events after whose thaws the listener stepped aside (sched_yield) */
        uint64_t fds_refused;     /* descriptors not kept for an account past its share (fd-budget.c) */
        uint64_t thaw_usec_total; /* event received -> units thawed */
        uint64_t thaw_usec_max;
} Statistics;

/* A thaw window: units thawed by a rule until deadline, then frozen again. */
typedef struct Window {
        struct Listener *listener;
        bool due;                 /* ended, its refreeze put off until the journal's lock is free */
        char **leaves;
        usec_t deadline;          /* CLOCK_MONOTONIC */
        usec_t opened;            /* CLOCK_MONOTONIC: for the wake log, how long it ran */
        uint64_t *cpu_at_open;    /* each unit's CPU time then (cpu.stat usage_usec), for the wake log */
        uint64_t *wakeups_at_open; /* and its threads' voluntary context switches */
        bool usage_pending;       /* those not read yet: the wake log reads them after the event (wake-log.c) */
        sd_event_source *timer;
        sd_event_source *idle_look; /* EndWhenIdle=: the next look at its units' threads (window-idle.c) */
        usec_t idle_step;         /* the time to that look; doubled after each look that finds work */
        size_t look_start;        /* the unit a look begins with, moved on each time (the budget's fairness) */
        struct Window *next;
} Window;

typedef struct HeldJob HeldJob;

/* Who freezes a unit again (refreeze.c), told when an event thaws it first
 * (unit-state.c). */
typedef void (*UnitReleased)(void *userdata, const char *cgroup);
typedef struct UnitRefreezing {
        char *cgroup;
        UnitReleased released;
        void *userdata;
} UnitRefreezing;

/* What the journal says of a unit, kept in memory for the event path. */
/* fd-budget.c: what a holder of descriptors took, and from whose account. */
typedef struct FdCharge {
        uint64_t account;         /* CgroupAccount.id; 0: root's */
        uid_t uid;                /* its owner, for the log */
        size_t n;
} FdCharge;
typedef struct FdAccount FdAccount;
typedef struct FdBudget {
        size_t pool;              /* the limit of open files less the reserve; 0: not read yet */
        size_t used, users_used;
        FdAccount *accounts;
        size_t n_accounts;
} FdBudget;
/* What the listener keeps for its own work, out of reach of the pool. */
#define LISTENER_FDS_RESERVE_MIN 256

typedef struct CachedUnit {
        char *cgroup;
        UnitState state;
        usec_t thaw_until;
        int fd;                   /* the cgroup, opened when the journal changes */
        int freeze_fd;            /* its cgroup.freeze, open for writing: a thaw is one write */
        FdCharge charge;          /* the two, from its account (fd-budget.c) */
        bool fds_refused;         /* past its account's share: opened at each thaw, not kept */
        char *systemd;            /* the manager that froze it, if systemd did */
} CachedUnit;

typedef struct ResolvedUnit {
        char *name;
        char **leaves;
        struct ResolvedUnit *next;
} ResolvedUnit;


/* A thaw done but not yet in the journal (see thaw.c). */
typedef struct PendingRecord {
        char *cgroup;
        usec_t until;
        usec_t since;             /* the standby it belongs to (the journal's since) */
} PendingRecord;

/* The refreeze of a window's units, in flight (refreeze.c): the freezes are
 * written, each unit's cgroup.events is a loop source, FreezeTimeout a loop
 * timer; nothing waits. */
typedef struct RefreezeUnit {
        struct Refreeze *refreeze;
        char *cgroup;
        int events_fd;            /* its cgroup.events, watched for POLLPRI */
        sd_event_source *source;
        UnitState outcome;        /* what it is recorded as: freezing while pending, then moved by the
                                   * table (unit-machine.c) to frozen, skipped, none (gone) or thawed */
        bool dropped;             /* thawed by an event meanwhile: no longer this refreeze's */
        char *reason;
} RefreezeUnit;

typedef struct Refreeze {
        struct Listener *listener;
        RefreezeUnit *units;
        size_t n, n_pending;
        sd_event_source *timer;   /* FreezeTimeout */
        bool settle_due;          /* settled, its record put off until the journal's lock is free */
        struct Refreeze *next;
} Refreeze;

/* The deadlock guard after a refreeze, in a thread of its own (it reads
 * /proc/locks); its end is an eventfd in the loop (refreeze.c). */
typedef struct LockGuard LockGuard;

/* A connection to a systemd manager, for FreezeUnit/ThawUnit sent
 * asynchronously (systemd-link.c). */
typedef struct SystemdLink SystemdLink;

/* A lock on standby an app holds (inhibit.c). At most
 * LISTENER_INHIBITORS_MAX in all, LISTENER_INHIBITORS_PER_USER_MAX for each
 * uid but root's; LISTENER_INHIBITORS_RESERVED of them only root and Group=
 * may take, so that users cannot use up theirs. */
typedef struct Inhibitor Inhibitor;
#define LISTENER_INHIBITORS_MAX 64
#define LISTENER_INHIBITORS_PER_USER_MAX 8
#define LISTENER_INHIBITORS_RESERVED 16
/* Users (not root, not Group=) whose delay lock was still held when an
 * entry's delay ran out: their delay locks are not waited for again. */
#define LISTENER_LATE_UIDS_MAX 64

/* logind: the lid, the power key, idleness and sleep (logind.c). */

/* A thaw asked over the bus, answered once its outcome is known (report.c). */
typedef struct ThawReport ThawReport;

/* bus-peek.c: who owns each bus name of the dbus-call rules, and the bus
 * connections of their frozen units. */
typedef struct CallOwner CallOwner;
typedef struct CallTarget CallTarget;

/* run-manager.c: standby-manager, run as a program. */
typedef struct ManagerRun ManagerRun;

/* loop.c: a source handled before sd-event's (a thaw's critical path). */
typedef struct LoopSource LoopSource;

/* How many event sources the table in sources.c may have. */
#define LISTENER_SOURCES_MAX 16

/* What a handler leaves for the dispatcher (dispatch.c), which does it
 * once the handler returns, in this order. */
typedef enum ListenerWork {
        LISTENER_WORK_LOCK_FREE = 1 << 0,       /* the journal's lock came free: what waited for it */
        LISTENER_WORK_JOURNAL_CHANGED = 1 << 1, /* l->m.journal is newer than what follows it */
        LISTENER_WORK_RECORDS = 1 << 2,         /* thaws to record in the journal */
        LISTENER_WORK_WINDOWS_DUE = 1 << 3,     /* windows whose end waited */
        LISTENER_WORK_BLOCKS_CHANGED = 1 << 4,  /* the first block lock on standby taken, or the last gone */
        LISTENER_WORK_INHIBITORS_CHANGED = 1 << 5, /* a lock on standby taken or gone: the bus is told */
        LISTENER_WORK_HOLDS = 1 << 6,           /* new cgroups frozen: to record in the journal */
} ListenerWork;

/* The standby phase as the listener sees it (phase.c has the transitions). */
typedef enum ListenerPhase {
        LISTENER_PHASE_INACTIVE,    /* not in standby, nothing under way */
        LISTENER_PHASE_STARTING,    /* the policy asked systemd for standby.target (logind.c) */
        LISTENER_PHASE_ANNOUNCING,  /* apps told standby begins; their delay locks waited for (inhibit.c) */
        LISTENER_PHASE_TOLD,        /* apps told and ready; the enter not yet in the journal */
        LISTENER_PHASE_ACTIVE,      /* the journal says active */
        LISTENER_PHASE_LEAVE_ASKED, /* active; the exit asked of systemd, not begun (exit-standby.c) */
        LISTENER_PHASE_EXITING,     /* active; the exit runs as a child of the listener (exit-standby.c) */
        _LISTENER_PHASE_MAX,
        _LISTENER_PHASE_INVALID = -1,
} ListenerPhase;

/* The daemon: one sd-event loop, no periodic timer (only window deadlines). */
typedef struct Listener {
        sd_event *event;
        sd_event_source *queue_source;    /* the dispatcher, enabled while work is queued (queue.c) */
        ListenerWork queued;
        int loop_fd;                     /* the loop's epoll: sd-event's fd and the hot sources (loop.c) */
        LoopSource *loop_dead;           /* removed hot sources, freed after the epoll batch */
        sd_bus *bus;
        const char *bus_address;  /* NULL: the system bus */
        struct sockaddr_un bus_peer;     /* the bus's listening socket: what its clients' getpeername() say */
        socklen_t bus_peer_len;          /* 0: unknown, no socket counts as a bus connection */
        struct ucred bus_peer_cred;      /* who listened on it: what its clients' SO_PEERCRED say */
        Manager m;                /* the freezing engine, journal and config */
        RuleSet *rules;
        const char **rules_dirs;
        ListenerPhase phase;              /* changed only through listener_set_phase() (phase.c) */
        Window *windows;
        struct Maintenance *maintenance;  /* while standby is active (maintenance.c) */
        Refreeze *refreezes;              /* windows closing (refreeze.c) */
        sd_event_source *lock_watch;      /* the journal's lock file closed: free again? (unit-state.c) */
        LockGuard *guards;
        SystemdLink *systemd_links;
        ThawReport *collecting;           /* the call being handled, while its thaws are done */
        bool step_aside;                  /* the event being dispatched yields after its thaws */
        const char *thaw_cause;           /* what the thaws under way are for (the Thawed signal) */
        ThawReport *reports;              /* calls waiting for their thaws through systemd */
        ManagerRun *exit_run;             /* the exit's standby-manager, until it ends (exit-standby.c) */
        char *leave_why;                  /* why the exit under way began, until standby is left (LastLeave) */
        CachedUnit *cache;
        size_t n_cache;
        uint64_t cache_generation;        /* bumped at each rebuild: what indices into it are good for */
        PendingRecord *pending;
        size_t n_pending;
        char **thaws_in_flight;           /* cgroups asked of systemd to thaw, not yet answered (unit-state.c's) */
        UnitRefreezing *refreezing;       /* units whose refreeze is in flight (unit-state.c's) */
        size_t n_refreezing;
        /* What rules asked for while standby was not (yet) active, one entry
         * per rule of late_rules (late.c): when its latest event came,
         * CLOCK_REALTIME as the journal's since, 0 for none. One a rule, so
         * no rule's events can push out another's. */
        usec_t *late;
        const RuleSet *late_rules;
        sd_event_source *record_source;   /* a one-shot timer: records pending thaws */
        usec_t record_delay;              /* LISTENER_RECORD_DELAY_USEC; tests stretch it */
        usec_t call_monitor_timeout;      /* LISTENER_CALL_MONITOR_TIMEOUT_USEC; tests shorten it */
        ResolvedUnit *resolved;
        sd_event_source *state_watch;    /* inotify on the state directory (standby-listener.c) */
        sd_event_source *state_parent_watch; /* inotify on its parent, for its name */
        sd_event_source *state_rewatch;  /* a one-shot: find the state directory again */
        sd_event_source *state_retry;    /* a one-shot timer: the rewatch again, its watch having failed */
        HeldJob *held_jobs;              /* held units whose timer job is being released (held-job.c) */
        CallOwner *call_owners;          /* the dbus-call rules' bus names, whose process owns each (bus-peek.c) */
        CallTarget *call_targets;        /* the bus connections of their frozen units (bus-peek.c) */
        Inhibitor *inhibitors;           /* apps' locks on standby (inhibit.c) */
        uid_t late_uids[LISTENER_LATE_UIDS_MAX]; /* users whose delay locks are no longer waited for */
        size_t n_late_uids;
        /* When PrepareForStandby(true) was sent, CLOCK_REALTIME; 0 once
         * (false) was, or before any: apps are owed (false) while it is set,
         * and events from then on are carried out at entry (late.c). */
        usec_t told_realtime;
        sd_event_source *told_timer;     /* told, and no enter began: (false) after all */
        usec_t announce_max;
        sd_event_source *announce_timer;
        sd_bus_message **announce_calls; /* PrepareEntry calls answered when the delay ends */
        size_t n_announce_calls;
        void (*announce_done)(struct Listener *l);
        sd_bus_slot *announce_watch;     /* the last PrepareEntry caller's going (inhibit.c) */
        FdBudget fd_budget;              /* descriptors kept for others' sockets and cgroups */
        Statistics stats;
        /* The wake being handled, for its log (wake-log.c): set around a
         * rule's thaw (match.c) or a Thaw call (push.c). */
        const Event *waking;
        const Rule *waking_rule;
        const char *waking_source;       /* a thaw of no event or rule: its kind ("maintenance") */
        struct WakeLog *wake_log;        /* wakes captured, to log once the event's handler returned */
        uint64_t wake_seq;               /* the next wake record's, in the file of wake_ino */
        uint64_t wake_ino;
        void *source_states[LISTENER_SOURCES_MAX]; /* each source's own (sources.c) */
        const struct ListenerSource *source_of_state[LISTENER_SOURCES_MAX]; /* whose, from the start on */
} Listener;

/* One event from any source, as the rules see it; unset fields are NULL/0. */
struct Event {
        const EventKind *kind;
        const char *unit;          /* push, socket */
        const char *interface;     /* link, address */
        int family;                /* address */
        const char *change;        /* link: up/down/carrier; address: added/removed; uevent */
        const char *device;        /* input: device name */
        const char *device_path;   /* input: /dev/input path */
        int key_type, key_code, value;
        const char *subsystem;     /* uevent */
        const Rule *rule;          /* dbus-signal, dbus-call: the rule whose match fired */
        const char *reason;        /* push: the caller's reason */
        const char *sender;        /* push, dbus-call, Thaw: the caller's unique bus name */
        /* The source yielded its CPU already, after a write of its own
         * (socket): the dispatch does not again (listener_step_aside()). */
        bool stepped_aside;
};

/* A statistic: its key in GetStatistics' reply, and where its counter is:
 * a field of Statistics (the listener's own), or of a source's state (the
 * rows of ListenerSource.statistics). */
typedef struct ListenerStatistic {
        const char *key;
        size_t offset;
} ListenerStatistic;
#define LISTENER_STATISTIC(field) { #field, offsetof(Statistics, field) }
#define LISTENER_SOURCE_STATISTIC(type, field) { #field, offsetof(type, field) }

/* sources.c: one row per event source. */
typedef struct ListenerSource {
        const char *name;
        size_t state_size;                   /* its state: zeroed before start, freed after stop */
        const EventKind * const *kinds;      /* the Event= kinds it delivers, NULL-terminated */
        const ListenerStatistic *statistics; /* counters of its state, ending with { NULL } */
        int (*start)(Listener *l);           /* at start; a failure ends the listener */
        void (*before_reload)(Listener *l);  /* what points into the old rules, dropped before they go */
        int (*reload)(Listener *l);          /* with the new rules in place */
        void (*stop)(Listener *l);           /* at the end, in the reverse order */
} ListenerSource;
/* A key a rule leaves out matches anything. */
static inline bool listener_str_matches(const char *want, const char *have) {
        return !want || (have && streq(want, have));
}
/* A source's state (ListenerSource.state_size bytes, its own type), from
 * before its start to after its stop; NULL outside that. */
void *listener_source_state(Listener *l, const ListenerSource *source);
/* statistics.c: GetStatistics' rows, in order: the listener's own, then
 * each started source's. */
typedef int (*ListenerStatisticRow)(const char *key, uint64_t value, void *userdata);
/* Calls row for each; stops at its first negative return, and returns it. */
int listener_statistics_foreach(Listener *l, ListenerStatisticRow row, void *userdata);
/* Whether every field of Statistics has exactly one row (logged if not). */
int listener_statistics_check(void);
/* Sets up every source, in the table's order; checks that every event
 * kind has one. */
int listener_sources_start(Listener *l);
/* Puts rules (loaded whole) in force and sets the sources up for them;
 * returns the rules it replaced, which nothing points into any more (the
 * caller's to free). */
RuleSet *listener_sources_reload(Listener *l, RuleSet *rules);
void listener_sources_stop(Listener *l);
/* Whether ev matches rule, as its source says. */
bool listener_source_matches(const Rule *rule, const Event *ev);

/* queue.c: handlers queue work; the dispatcher does it. */
/* The dispatcher runs before every other source of the loop. */
#define LISTENER_QUEUE_PRIORITY (SD_EVENT_PRIORITY_IMPORTANT - 100)
/* The defer source that calls dispatcher while work is queued. */
int listener_queue_init(Listener *l, sd_event_handler_t dispatcher);
/* Queues work: the dispatcher runs once the current handler returns. */
void listener_enqueue(Listener *l, ListenerWork work);
/* What is queued, no longer queued (the dispatcher's). */
ListenerWork listener_queue_take(Listener *l);
void listener_queue_free(Listener *l);

/* dispatch.c */
/* Sets up the dispatcher of queued work (its order: see dispatch.c). */
int listener_dispatcher_init(Listener *l);

/* journal-transaction.c: one change of the journal by the listener. */
typedef enum ListenerJournalChange {
        LISTENER_JOURNAL_UNCHANGED, /* nothing recorded: only unlocked */
        LISTENER_JOURNAL_RECORDED,  /* records made (freeze_record()): saved */
        LISTENER_JOURNAL_SAVED,     /* saved already by the engine (freeze_refreeze_begin()) */
} ListenerJournalChange;
/* Takes the journal's lock and loads the journal, never waiting: -EAGAIN
 * while another process holds the lock (a manager verb may wait out
 * FreezeTimeout under it); LISTENER_WORK_LOCK_FREE is queued when that
 * process closes the lock file. Other errors are logged. Ended by commit,
 * whatever it returned. */
int listener_journal_begin(Listener *l);
/* Saves the records (RECORDED), lets go of the lock, and, if the journal
 * changed, queues LISTENER_WORK_JOURNAL_CHANGED. Returns the save's error
 * (not logged), else 0. */
int listener_journal_commit(Listener *l, ListenerJournalChange change);

/* loop.c */
/* Called when the fd turned readable (edge-triggered), before sd-event
 * dispatches anything; may not remove sources of the loop. */
typedef void (*LoopHandler)(struct Listener *l, void *userdata);
/* Puts sd-event's fd into the loop's epoll. */
int listener_loop_init(Listener *l);
/* Adds fd (kept open by the caller) as a hot source. */
int listener_loop_add(Listener *l, int fd, LoopHandler handler, void *userdata, LoopSource **ret);
/* Removes it, before the caller closes fd; returns NULL. */
LoopSource *listener_loop_remove(Listener *l, LoopSource *s);
/* Frees the removed sources (at the end). */
void listener_loop_free_removed(Listener *l);
/* Runs until sd_event_exit(); returns its code, or a negative errno. */
int listener_loop_run(Listener *l);

/* match.c */
/* Runs every rule that matches ev; returns how many matched. */
int listener_dispatch(Listener *l, const Event *ev, usec_t received);

/* late.c */
/* Remembers that rule (of l->rules) matched while standby was not active. */
void listener_remember_late(Listener *l, const Rule *rule);
/* Standby just became active: carries out what events asked for since it
 * began (while the manager was still freezing), then forgets the rest. */
void listener_replay_late(Listener *l);
void listener_forget_late(Listener *l);

/* thaw.c */
/* Thaws the units a rule's unit name stands for, for duration (received:
 * when the event came, for the statistics). */
int listener_thaw(Listener *l, const char *unit, usec_t duration, bool end_when_idle, usec_t received);
/* Thaws every unit of the rule's Thaw= for its For=: all written before
 * the listener steps aside and records them. */
int listener_thaw_rule(Listener *l, const Rule *rule, usec_t received);

/* Thaws leaves (cgroups), those standby froze, for duration, as asked
 * over the bus (Thaw); what of them is not frozen by standby is noted
 * failed in the report being collected. */
int listener_thaw_leaves(Listener *l, char **leaves, usec_t duration, bool end_when_idle, usec_t received);
/* Yields the CPU once, after an event's thaws (thaw.c). */
void listener_step_aside(Listener *l);

/* report.c: what a thaw asked over the bus did, for its reply. */
/* How long a reply waits for the thaws through systemd to settle: the
 * fallback through cgroup.freeze comes after LISTENER_SYSTEMD_TIMEOUT_USEC. */
#define LISTENER_REPORT_TIMEOUT_USEC (3 * LISTENER_SYSTEMD_TIMEOUT_USEC)
/* Starts collecting the outcomes of the thaws done while call is handled. */
int listener_report_begin(Listener *l, sd_bus_message *call);
/* A unit's outcome: 0 thawed, 1 pending (through systemd), or a negative
 * errno, why it stays frozen. */
void listener_report_note(Listener *l, const char *cgroup, int outcome);
/* A thaw through systemd settled (r: 0 thawed, or why not). */
void listener_report_settled(Listener *l, const char *cgroup, int r);
/* The call is handled: answered now, or once its thaws settle; returns 1
 * (what an sd-bus method handler returns for a call it took). */
int listener_report_end(Listener *l);
void listener_drop_reports(Listener *l);

/* maintenance.c */
typedef struct Maintenance Maintenance;
/* Sets up the maintenance windows of a standby that is active (again: a
 * class's due time counts from now), or ends them. */
int listener_maintenance_start(Listener *l);
void listener_maintenance_stop(Listener *l);
/* The units or the configuration changed (the journal, a reload): classes
 * of a lateness kept keep their due time, new ones count from now, those
 * no unit has go. */
int listener_maintenance_follow(Listener *l);

/* window-idle.c */
/* The first look at an EndWhenIdle= window's threads, after its thaw: time
 * for the event's work to begin (a woken server reads its request within
 * it), and short against the windows it ends. */
#define LISTENER_IDLE_FIRST_LOOK (20 * USEC_PER_MSEC)
/* The threads and units one look reads at most, over all of a window's
 * units: those past it (a user's unit of thousands of threads, say, that
 * a rule's name matches) are taken as busy this time, so that no unit
 * makes a look cost the loop more than this many small reads. */
#define LISTENER_LOOK_BUDGET 4096
/* Whether every thread of leaf sleeps: none running or runnable, none in
 * an uninterruptible wait (its work is under way). A leaf that cannot be
 * read counts as asleep (gone); one past *budget (of threads and units,
 * taken from it) as busy. */
bool listener_leaf_idle(Listener *l, const char *leaf, size_t *budget);

/* wake-log.c: every wake on record, in the journal with its fields and in
 * the period's wake record (common/wake-record.h); called after the
 * thaw's writes and the step aside, never before. */
/* At start: tells the period's report which cgroup is the listener's
 * (its counters are the report's too). */
void listener_wake_log_start(Listener *l);
/* A window opened: its units' usage is read once the event's handler
 * returned (the baseline of its end's). */
void listener_wake_window_opened(Listener *l, Window *w);
/* Logs what is captured, and frees the wake log (at the end). */
void listener_wake_log_free(Listener *l);
/* units thawed for window (0: none) after took, for l->waking: captured
 * now, logged once the event's handler returned. */
void listener_wake_thawed(Listener *l, char **units, usec_t took, usec_t window);
/* A window's units freeze again: it ran ran, they used cpu_usec and woke
 * wakeups times. */
void listener_wake_window_end(Listener *l, char **units, usec_t ran, uint64_t cpu_usec, uint64_t wakeups);
/* What units used so far: the sum of their cpu.stat usage_usec, and of
 * their threads' voluntary context switches (at most
 * LISTENER_WAKE_THREADS_MAX threads read, each a read of /proc: the loop
 * runs nothing else meanwhile). */
#define LISTENER_WAKE_THREADS_MAX 64
void listener_units_usage(Listener *l, char **units, uint64_t *ret_cpu_usec, uint64_t *ret_wakeups);
/* Reads each unit's usage at the window's open (after the event that
 * opened it: the wake log's). */
void listener_window_read_open(Listener *l, Window *w);
/* rule's ExitStandby= ends standby, for ev (NULL: an event during enter). */
void listener_wake_exit(Listener *l, const Rule *rule, const Event *ev);

/* windows.c */
/* Opens a window: leaves are frozen again at deadline (CLOCK_MONOTONIC),
 * or, end_when_idle, once a look finds all their threads asleep. */
int listener_add_window(Listener *l, char **leaves, usec_t deadline, bool end_when_idle);
/* An event for leaf, already thawed in an open window: the window looks
 * at it again from the first look (end_when_idle), or, if the event's rule
 * has no EndWhenIdle=, keeps it thawed to the window's end, no look ending
 * it sooner. */
void listener_windows_touch(Listener *l, const char *leaf, bool end_when_idle);
/* Closes the windows that ended (due), once their records are written;
 * one whose end must wait (the journal's lock, a thaw in flight) stays due. */
void listener_windows_retry(Listener *l);
void listener_drop_windows(Listener *l);
/* Re-arms windows from the journal (start, restart, standby change), the
 * cache rebuilt from it. */
int listener_windows_reconcile(Listener *l);

/* names.c */
/* The journal's leaves (what standby froze) that a rule's unit name stands
 * for: every cgroup of that name and what is below it. */
int listener_unit_leaves(Listener *l, const char *name, char ***ret);
/* The same, kept until the journal changes (owned by the listener). */
char **listener_resolve_unit(Listener *l, const char *unit);
void listener_forget_resolved(Listener *l);

/* unit-state.c: each unit's state, and its reconcile with the journal and
 * the kernel. */
/* At start: a unit the journal calls frozen but that runs (its thaw was not
 * recorded before the last listener stopped) is frozen again, so that the
 * journal holds. Returns how many. */
int listener_enforce_journal(Listener *l);
/* Rebuilds the in-memory copy of the journal from l->m.journal (loaded). */
void listener_cache_refresh(Listener *l);
/* At the end, the journal freed: the copy closed and emptied, and what
 * unit-state.c keeps beside it (thaws in flight, records pending and
 * their timer) dropped. */
void listener_unit_states_free(Listener *l);
/* The in-memory state of a unit standby froze, or NULL. */
CachedUnit *listener_cached_unit(Listener *l, const char *cgroup);
/* Records event's move of a unit in the journal (locked and loaded by the
 * caller: listener_journal_begin()), from the states the table moves it
 * from on event, to the one it leads to: 1 if recorded, 0 if the journal
 * has the unit in no such state (someone moved it since), or a negative
 * errno (freeze_record()). */
int listener_unit_record(Listener *l, const char *cgroup, UnitEvent event, usec_t thaw_until, const char *reason);
/* Thaws one unit for an event if its state says so, until until; returns 1
 * if it did, 0 if there was nothing to do, -ENOENT if its cgroup is gone,
 * another negative errno if the thaw failed (logged). */
int listener_unit_thaw(Listener *l, const char *cgroup, usec_t now, usec_t until);
/* The kernel's half of a thaw, ahead of its dispatch (sockets.c): written
 * only where the dispatch would write it, a unit frozen in the listener's
 * view, through cgroupfs, its cgroup.freeze kept open; its state stays the
 * dispatch's to change. Returns whether it wrote. */
bool listener_unit_thaw_ahead(const CachedUnit *c);
/* A cgroup of a unit's name made anew (cg_fd: the new one), a unit
 * restarted in standby: the unit's kept fds become the new cgroup's. */
void listener_unit_made_anew(Listener *l, const char *cgroup, int cg_fd);
/* Queues the records of thaws done, written a little later. */
int listener_record_thaws(Listener *l, char **cgroups, usec_t until);
/* A thaw asked of systemd (ThawUnit) is in flight from the call until its
 * answer or the cgroupfs fallback (systemd-link.c): until then
 * cgroup.freeze still reads 1, which is not a freeze again, and the thaw's
 * record waits, and so does a window of the unit that ends meanwhile.
 * Each sent thaw is settled once, but for calls the listener's end
 * cancels (their records are then dropped: flush_records()). */
int listener_unit_thaw_sent(Listener *l, const char *cgroup);
void listener_unit_thaw_settled(Listener *l, const char *cgroup);
/* Thaws or freezes a unit the way standby froze it: cg_fd (or freeze_fd, if
 * >= 0) for cgroupfs, address (if not NULL) for systemd, a thaw there
 * counted in flight until settled, and its outcome told to the call being
 * answered (report.c). */
int listener_unit_set_freeze(Listener *l, const char *cgroup, const char *address, int cg_fd, int freeze_fd, bool freeze);
/* A unit whose refreeze (refreeze.c) is in flight: an event that thaws it
 * first calls released(userdata, cgroup), from inside that thaw, and the
 * registration ends; else it ends with refrozen (cgroup and userdata as
 * given). -ENOMEM: not registered, and an event for it is not taken until
 * its refreeze ends. */
int listener_unit_refreezing(Listener *l, const char *cgroup, UnitReleased released, void *userdata);
void listener_unit_refrozen(Listener *l, const char *cgroup, void *userdata);
/* Whether a thaw of one of cgroups is in flight so. */
bool listener_units_thaw_in_flight(Listener *l, char **cgroups);
/* A thaw is recorded this long after it, once the woken service and its
 * client have had the CPU: a frozen reply took 0.3-0.5 ms (p50), up to
 * 1.7 ms (p99) here; longer, and the next event of a sequence meets the
 * record instead. */
#define LISTENER_RECORD_DELAY_USEC (2 * USEC_PER_MSEC)
/* The dbus-call monitor's setup, all told (connecting, authenticating,
 * Hello, BecomeMonitor): sd-bus's own timeout for a call. */
#define LISTENER_CALL_MONITOR_TIMEOUT_USEC (25 * USEC_PER_SEC)
#define LISTENER_RECORD_ACCURACY_USEC (1 * USEC_PER_MSEC)
/* Writes the pending thaw records to the journal (one save, under its lock). */
void listener_flush_records(Listener *l);
/* The same, waiting for the lock if need be (at the end). */
void listener_flush_records_wait(Listener *l);
/* Forgets them (an exit is under way). */
void listener_drop_records(Listener *l);

/* refreeze.c */
/* A window ends: freezes its units again if nothing superseded it, without
 * waiting (see refreeze.c); -EAGAIN while the journal's lock is another's
 * (the window is then due). The caller has written the pending records
 * and waits for thaws of leaves in flight through systemd. */
int listener_refreeze_start(Listener *l, char **leaves, usec_t deadline);
/* Refreezes and guards whose journal work was put off, tried again. */
void listener_refreeze_retry(Listener *l);
/* Standby ended or an exit began: stops every refreeze and guard in flight
 * (their units are the exit's). */
void listener_drop_refreezes(Listener *l);

/* systemd-link.c */
/* How long the listener waits for systemd's answer to a ThawUnit before it
 * thaws through cgroup.freeze itself. */
#define LISTENER_SYSTEMD_TIMEOUT_USEC (1 * USEC_PER_SEC)
/* How long the child that connects to a user manager's socket may take
 * (common/private-socket.h); the calls queued meanwhile keep their own
 * timeouts (a thaw falls back to cgroup.freeze after the one above). */
#define LISTENER_SYSTEMD_CONNECT_TIMEOUT_USEC (5 * USEC_PER_SEC)
/* What a thaw asked of systemd came to: r 0 thawed (by systemd, or
 * through cgroup.freeze after all), or a negative errno, why not. */
typedef void (*SystemdThawDone)(void *userdata, const char *cgroup, int r);
/* Sends FreezeUnit or ThawUnit for cgroup to the manager at address, not
 * waiting for the answer. A thaw that systemd refuses, or does not answer
 * in time, is done through cgroup.freeze: a thaw never leaves a unit
 * frozen; its outcome goes to done (if not NULL) exactly once, from the
 * loop, never before this returns (nor at all for a call the listener's
 * end cancels). A freeze's outcome is cgroup.events' to tell; its failure
 * to be sent is logged here. Returns 0, or a negative errno if nothing
 * was asked (out of memory): then done is never called. */
int listener_systemd_set_freeze(Listener *l, const char *address, const char *cgroup, bool freeze,
                                SystemdThawDone done, void *userdata);
void listener_drop_systemd_links(Listener *l);
/* Forgets which user managers refused a connect (at the end). */
void listener_forget_refused_links(void);
/* A link to a manager is ready (bus, and link to let go of), or will not
 * be (r < 0; -ECANCELED: the listener ends). */
typedef void (*SystemdLinkReady)(void *userdata, sd_bus *bus, uint64_t link, int r);
/* Calls ready once the manager at address takes calls: at once if it can,
 * before this returns, else once its socket is connected. The link stays
 * authenticated, systemd sending it its signals, until released; ready is
 * called exactly once unless this fails (-ENOMEM). */
int listener_systemd_acquire(Listener *l, const char *address, SystemdLinkReady ready, void *userdata);
void listener_systemd_release(Listener *l, uint64_t link);
/* After the copy of the journal changed: a spare connected ahead for each
 * manager that froze a cached unit; the other links go once unused. */
void listener_systemd_links_sync(Listener *l);

/* held-job.c */
/* Looks at the held units that wait for a process (a removed empty cgroup
 * raises nothing): call once before the units held in one turn are given
 * to listener_release_timer_job(). */
void listener_held_jobs_sweep(Listener *l);
/* A unit just held (cg_fd, kept by the caller): once a process comes into
 * it, its start job is cancelled at its manager if a timer started it, not
 * waiting for any answer (the unit stays held). */
void listener_release_timer_job(Listener *l, int cg_fd, const char *cgroup);
/* Standby ended: drops what is under way. */
void listener_held_jobs_drop(Listener *l);

/* run-manager.c: standby-manager run as a program, the loop not waiting. */
/* Its end (wait status), from the loop; the run is freed after this
 * returns, and its owner forgets it here. */
typedef void (*ManagerRunDone)(Listener *l, pid_t pid, int status, void *userdata);
/* The standby-manager run: STANDBY_MANAGER_PATH, or an absolute path in
 * $STANDBY_LISTENER_MANAGER_PATH (for tests, which run a build
 * directory's binaries). */
const char *listener_manager_path(void);
/* Runs standby-manager [--config ...] [--state-dir ...] args... (the
 * listener's own configuration file and state directory, when not the
 * defaults), with descriptors 0-2 only and a fixed environment; done is
 * called once it ends. Returns 0 and the run (owned by the caller until
 * done), or a negative errno (logged) if it did not start or cannot be
 * watched (then it may run unwatched, and done is never called). */
int listener_manager_run(Listener *l, char **args, ManagerRunDone done, void *userdata, ManagerRun **ret);
pid_t listener_manager_run_pid(const ManagerRun *run);
/* Stops watching a run (the listener ends): it goes on alone. Returns NULL. */
ManagerRun *listener_manager_run_abandon(ManagerRun *run);

/* exit-standby.c */
/* Ends standby in a child process, whose end is a loop event; while it
 * runs, events are answered and change nothing (see there). */
void listener_exit_standby(Listener *l, const char *why);
void listener_forget_exit(Listener *l);

/* phase.c */
const char *listener_phase_to_string(ListenerPhase p);
/* The listener's phase by name ("inactive", "starting", "announcing",
 * "told", "active", "leave-asked", "exiting"), for status and D-Bus. */
const char *listener_phase_name(const Listener *l);
bool listener_phase_transition_allowed(ListenerPhase from, ListenerPhase to);
/* Changes the phase, logged at debug with why; one the table in phase.c
 * does not have is logged as an error, and taken. */
void listener_set_phase(Listener *l, ListenerPhase to, const char *why);
/* The journal says standby is active or not: ACTIVE from any phase before
 * it, INACTIVE from ACTIVE and after. Returns whether that changed whether
 * standby is active. */
bool listener_phase_follow_journal(Listener *l, bool journal_active);
/* Whether the journal says standby is active (an exit may be under way). */
static inline bool listener_standby_active(const Listener *l) {
        return l->phase >= LISTENER_PHASE_ACTIVE;
}
/* Whether an exit is under way: what events ask for is the exit's. */
static inline bool listener_exiting(const Listener *l) {
        return l->phase == LISTENER_PHASE_LEAVE_ASKED || l->phase == LISTENER_PHASE_EXITING;
}
/* Standby wholly over: not active, and the journal (if read) says so. */
static inline bool listener_standby_over(const Listener *l) {
        return !listener_standby_active(l) && (!l->m.journal || l->m.journal->phase == JOURNAL_NONE);
}
/* Whether apps were told standby begins and not yet that it ended. */
static inline bool listener_apps_told(const Listener *l) {
        return l->told_realtime > 0;
}

/* fd-budget.c */
/* The charge of what belongs to cgroup (its account, common/cgroup.h), with
 * nothing taken yet. */
int listener_fds_charge_for(Listener *l, const char *cgroup, FdCharge *ret);
/* Takes n descriptors into c from its account's share: 0, or -EMFILE past
 * it (logged once per account, counted in fds_refused), -ENOMEM. */
int listener_fds_take(Listener *l, FdCharge *c, size_t n, const char *what);
/* Gives back n of what c took (at most all of it). */
void listener_fds_give_back(Listener *l, FdCharge *c, size_t n);
static inline void listener_fds_give_back_all(Listener *l, FdCharge *c) {
        listener_fds_give_back(l, c, c->n);
}
void listener_fds_done(Listener *l);

/* proc-sockets.c */
/* One socket of a process of a cgroup, as listener_for_each_socket() finds it. */
typedef struct SocketRef {
        pid_t pid;                   /* the process */
        int pidfd;                   /* the same */
        int fd;                      /* the socket's number there */
        int dup;                     /* a duplicate of it */
} SocketRef;
/* Calls fn with a duplicate of every socket of every process of the cgroup
 * (but stdout and stderr: output, a journal stream under systemd); fn keeps
 * the duplicate (returns > 0) or leaves it to be closed. A negative return
 * stops the walk. */
int listener_for_each_socket(Listener *l, const char *cgroup, int (*fn)(const SocketRef *s, void *userdata),
                             void *userdata);

/* sockets.c */
/* Holds duplicates of the sockets of every frozen unit an Event=socket rule
 * names, and drops those of units no longer frozen; call after any change. */
int listener_sync_sockets(Listener *l);

/* bus-peek.c */
/* Watches who owns bus_name, a dbus-call rule's (asked of the bus without
 * waiting, again whenever it changes hands); no-op without a bus. */
int listener_call_owner_add(Listener *l, const char *bus_name);
void listener_call_owners_drop(Listener *l);
/* Finds the bus connections of the frozen units of the dbus-call rules'
 * Thaw=, afresh; call after any change of the journal or the rules. */
int listener_sync_call_targets(Listener *l);
/* Before the rules they point into go, and at the end. */
void listener_drop_call_targets(Listener *l);
/* Whether a process of the cgroup has a D-Bus method call to bus_name
 * waiting, unread, on one of its connections to the bus (peeked, never
 * consumed): only the bus writes there, and only what it delivered. */
bool listener_unit_has_unread_call(Listener *l, const char *cgroup, const char *bus_name);
/* Whether the call (sender, serial) to rule's BusName= waits, delivered by
 * the bus, in the bus connection of a frozen process of the rule's Thaw=
 * units: > 0 yes, 0 no, -ESRCH if none of those units is frozen. */
int listener_call_delivered(Listener *l, const Rule *rule, const char *sender, uint32_t serial);

/* dbus-call-rule.c */
extern const EventKind event_kind_dbus_call;
/* An Event=dbus-call rule's BusName=; NULL for a rule of another kind. */
const char *listener_call_rule_bus_name(const Rule *rule);

/* dbus-call.c */
/* Whether the call monitor's setup is still under way; if so, it sends
 * sd_notify's READY=1 itself once it ends (set up or failed). */
bool listener_call_monitor_says_ready(Listener *l);

/* cgroup-watch.c: holds the cgroups made below the targets during standby.
 * Call after every journal change: watches while standby is active (and no
 * exit is under way), stops watching otherwise. */
int listener_cgroup_watch_sync(Listener *l);
/* Records in one journal transaction the cgroups frozen since the last
 * call (LISTENER_WORK_HOLDS), and those frozen while the journal's lock
 * was busy (LISTENER_WORK_LOCK_FREE). */
void listener_cgroup_watch_record(Listener *l);
/* The most cgroups of one user's account (below the topmost cgroup on
 * their path that root does not own) watched for new cgroups at once;
 * past it, such a cgroup is held unwatched. */
#define CGROUP_WATCH_UID_MAX 128U


/* inhibit.c */
void listener_drop_inhibitors(Listener *l);
/* Tells apps that standby begins (once, until listener_announce_end()), and
 * waits, without blocking, for their delay locks (at most max_delay); then
 * answers call (if any) and runs done (if any). */
void listener_announce(Listener *l, sd_bus_message *call, void (*done)(Listener *l), usec_t max_delay);
/* The journal says standby is active while apps were still given their
 * delay: the delay is over (callers answered, what waited on it run). */
void listener_announce_cut_short(Listener *l);
/* Standby is over, everything thawed: tells apps, if they were told it began. */
void listener_announce_end(Listener *l);
/* A block lock on standby, if any is held (with who holds it, the caller's). */
const Inhibitor *listener_blocked(Listener *l, char **ret_description);
/* Inhibit, ListInhibitors, PrepareEntry (bus-api.c's vtable). */
int listener_method_inhibit(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int listener_method_list_inhibitors(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int listener_method_prepare_entry(sd_bus_message *msg, void *userdata, sd_bus_error *error);

/* logind.c */
/* The configuration's policy changed (a reload): locks follow (the input
 * devices it wants: listener_setup_input()). */
void listener_logind_reload(Listener *l);
/* The first block lock on standby was taken, or the last one went
 * (LISTENER_WORK_BLOCKS_CHANGED, dispatch.c): the lid is logind's
 * meanwhile, and idleness may enter again after. */
void listener_logind_blocks_changed(Listener *l);
/* Standby began or ended (the journal says so). */
void listener_logind_state_changed(Listener *l);
/* A switch or key from any input device, for the policy. */
void listener_power_input(Listener *l, unsigned type, unsigned code, int value);
/* Whether the policy wants a device with these capabilities read. */
bool listener_policy_wants_input(Listener *l, bool has_lid, bool has_power_key, bool has_keys);
/* GetPowerState (bus-api.c's vtable). */
int listener_method_power_state(sd_bus_message *msg, void *userdata, sd_bus_error *error);

/* input.c */
/* Opens the input devices the Event=input rules name (again after a reload). */
int listener_setup_input(Listener *l);

/* push.c: Event=push, and Push, PushEx, Thaw, GetStatistics (bus-api.c's
 * vtable). */
extern const EventKind listener_event_kind_push;
int listener_method_push(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int listener_method_push_ex(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int listener_method_thaw(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int listener_method_thaw_unit(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int listener_method_statistics(sd_bus_message *msg, void *userdata, sd_bus_error *error);

/* bus-state.c: the state as properties, and the signals that follow it. */
/* After a journal change (dispatch.c): tells the bus's clients what changed
 * (PropertiesChanged, Entered, Left); the first call, at start, tells nothing. */
void listener_bus_state_sync(Listener *l);
/* The Inhibitors property changed. */
void listener_bus_state_inhibitors_changed(Listener *l);
/* An Enter over the bus, where logind's words are not kept: why (EnteredBy);
 * NULL: the entry it asked for is over (made or not). */
void listener_bus_state_asked(const char *why);
void listener_bus_state_free(void);
int listener_property_state(sd_bus *bus, const char *path, const char *interface, const char *property,
                            sd_bus_message *reply, void *userdata, sd_bus_error *error);
int listener_property_strategy(sd_bus *bus, const char *path, const char *interface, const char *property,
                               sd_bus_message *reply, void *userdata, sd_bus_error *error);
int listener_property_since(sd_bus *bus, const char *path, const char *interface, const char *property,
                            sd_bus_message *reply, void *userdata, sd_bus_error *error);
int listener_property_entered_by(sd_bus *bus, const char *path, const char *interface, const char *property,
                                 sd_bus_message *reply, void *userdata, sd_bus_error *error);
int listener_property_counter(sd_bus *bus, const char *path, const char *interface, const char *property,
                              sd_bus_message *reply, void *userdata, sd_bus_error *error);
/* bus-thawed.c: a unit an event or a call thawed (the Thawed signal). */
void listener_bus_thawed(Listener *l, const char *cgroup, const char *cause);
/* inhibit.c: the Inhibitors property, as ListInhibitors' reply. */
int listener_property_inhibitors(sd_bus *bus, const char *path, const char *interface, const char *property,
                                 sd_bus_message *reply, void *userdata, sd_bus_error *error);

/* enter-exit.c: Enter and Exit (bus-api.c's vtable). */
int listener_method_enter(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int listener_method_exit(sd_bus_message *msg, void *userdata, sd_bus_error *error);
void listener_forget_manager_runs(Listener *l);

/* logind.c: Enter where logind is followed (standby.target started):
 * -EOPNOTSUPP without logind or systemd. How the last entry was asked,
 * and why the last leave came, as the policy tells them (NULL without). */
int listener_logind_enter(Listener *l, const char *why);
const char *listener_logind_last_entry(Listener *l);
const char *listener_logind_last_leave(Listener *l);

/* polkit.c: whether a caller not root nor in Group= may do action, asked
 * of polkit without waiting: 1 (msg is handled again by method, with
 * userdata, once polkit says yes; answered with refusal's error if not),
 * or the error to answer with. */
int listener_polkit_check(sd_bus_message *msg, const char *action, const char *refusal,
                          sd_bus_message_handler_t method, void *userdata, sd_bus_error *error);
/* Whether msg is being handled again because polkit allowed action. */
bool listener_polkit_granted(sd_bus_message *msg, const char *action);
void listener_polkit_stop(void);

/* bus-access.c: who calls a method, and whether they may. */
/* Group='s gid, looked up once at start. */
void listener_access_setup(Listener *l);
/* Drops the calls that wait for their callers' credentials. */
void listener_access_stop(Listener *l);
/* The caller's uid and pid as the bus recorded them when it connected, and
 * whether it is root or in Group=: 0 and those; 1 when they are being asked
 * of the bus (method is then called again with msg once they come); or a
 * negative errno with error set. */
int listener_caller(Listener *l, sd_bus_message *msg, sd_bus_message_handler_t method, uid_t *ret_uid,
                    pid_t *ret_pid, bool *ret_privileged, sd_bus_error *error);
/* 0 when the caller is root or in Group=, or polkit allows action (if
 * not NULL); 1 when that is being asked of the bus or of polkit (method is
 * called again with msg); else the error (set) to answer with, naming what
 * (e.g. "push to"). */
int listener_check_access(Listener *l, sd_bus_message *msg, const char *action, const char *what,
                          sd_bus_message_handler_t method, sd_bus_error *error);
void listener_forget_verdicts(void);
/* The uid the bus recorded for sender, if it is known already. */
bool listener_sender_uid(const char *sender, uid_t *ret_uid);
/* The polkit action a thaw of cgroups by uid asks for: THAW_OWN when
 * every one is below uid's own user manager (user@UID.service) and its
 * directory is uid's, else THAW (an administrator's). */
#define LISTENER_ACTION_THAW "org.standby.thaw"
#define LISTENER_ACTION_THAW_OWN "org.standby.thaw-own"
const char *listener_thaw_action(Listener *l, uid_t uid, char **cgroups);
/* The pid the bus gave for sender when its access was checked, 0 if none
 * is remembered (for the wake log: who called). */
pid_t listener_access_sender_pid(const char *sender);
