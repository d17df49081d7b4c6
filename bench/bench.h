/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "time-util.h"

struct nl_sock;
struct rtnl_link;
struct sd_bus;

/* bench-stats.c: the harness's arithmetic, tested in tests/test-bench.c. */

/* The p-th percentile (0..100) of n values by linear interpolation between
 * closest ranks, from a sorted copy: v keeps its order. NAN for n == 0. */
double stats_percentile(const double *v, size_t n, double p);
/* Sorts v ascending, in place (for a CDF). */
void stats_sort(double *v, size_t n);
double stats_median(const double *v, size_t n);
double stats_min(const double *v, size_t n);
double stats_max(const double *v, size_t n);
/* Events per second from two counter readings over an interval. */
double stats_rate(uint64_t before, uint64_t after, usec_t interval);

/* Sum over every thread of a cgroup of its wakeups (voluntary context
 * switches from /proc/TID/status: each one is a sleep, ended by a wakeup;
 * preemptions are not counted, so the figure does not depend on load) and of
 * its CPU time (first field of /proc/TID/schedstat, ns). */
int stats_cgroup_schedstat(int cg_fd, uint64_t *ret_runs, uint64_t *ret_cpu_ns);
/* The same for one process (all its threads). */
int stats_pid_schedstat(pid_t pid, uint64_t *ret_runs, uint64_t *ret_cpu_ns);

/* bench-workloads.c: a scratch cgroup tree with real processes in it. */
typedef struct Scratch {
        char *mount;
        int root_fd;
        char *base;            /* standby-bench.<pid> */
        pid_t *pids;
        size_t n_pids;
} Scratch;

int scratch_create(Scratch *s);
/* Thaws, kills (by pid), reaps and removes everything it made. */
void scratch_destroy(Scratch *s);
/* Starts argv in base/sub (created as needed). */
int scratch_spawn(Scratch *s, const char *sub, char *const argv[], pid_t *ret);
/* The same, handing the program a non-blocking pipe as fd 3 (its tick fd);
 * the read end is returned. */
int scratch_spawn_ticking(Scratch *s, const char *sub, char *const argv[], pid_t *ret, int *ret_tick_fd);

/* Runs gnuplot on a script; -ENOENT when gnuplot is not installed. */
int bench_gnuplot(const char *script_path);
/* Opens base/sub. */
int scratch_open(Scratch *s, const char *sub, int *ret_fd);
/* Reads a non-blocking fd empty (a tick pipe). */
void bench_drain(int fd);

/* standby-bench.c: shared by the modes. */
extern Scratch scratch;
extern char tmpdir[256], config_path[300], state_dir[300];
extern const char *bench_manager_path, *bench_workload_path, *bench_output;
/* SIGINT or SIGTERM came: each mode ends early and cleans up. */
extern volatile sig_atomic_t bench_interrupted;
/* -EINTR (said once) if one came, else 0: a mode's loops ask at each step. */
int bench_check_interrupted(void);
/* Runs standby-manager VERB [ARG] on the bench's config and state; returns
 * its wall time, or USEC_INFINITY on failure. */
usec_t run_manager(const char *verb, const char *arg);
/* Writes the bench's standby.conf with Targets=targets. */
int write_config(const char *targets);

/* bench-listener.c: latency of each event kind through standby-listener
 * against a service never frozen, listener RSS, an event storm, idle
 * wakeups, and (churn_seconds > 0) wakeups in standby while a namespace's
 * link and addresses change every second with no rule about them; with
 * systemd, the services run as units of a systemd --user manager and are
 * frozen and thawed through it. */
int bench_listener(const char *listener_path, unsigned samples, unsigned idle_seconds, unsigned churn_seconds,
                   unsigned gap_ms, bool systemd, bool call_rule_socket);

/* bench-loaded.c: a power-key event and a push, each to its answer, on an
 * unloaded listener and on one with a unit stuck in state D at its window's
 * end and its systemd manager stopped; p99 against p99. */
int bench_listener_loaded(const char *listener_path, unsigned samples, unsigned gap_ms);

/* bench-hold.c: in standby, how long a unit made then (its cgroup, then a
 * process moved in) runs before the listener holds it. */
int bench_hold(const char *listener_path, unsigned samples, unsigned gap_ms);

/* bench-cgroup-storm.c: a push and a power-key event to their answers
 * while a user makes cgroups cgroups in standby, against an unloaded
 * listener; then the listener's RSS after the user's chain of depth
 * cgroups of 255-byte names. */
int bench_cgroup_storm(const char *listener_path, unsigned samples, unsigned gap_ms, unsigned cgroups,
                       unsigned depth);

/* bench-selfcheck.c: counts each workload's wakeups both ways over window;
 * prints the comparison. -EBADMSG when they disagree. */
int bench_self_check(const int *fds, char **names, size_t n, usec_t window);

/* bench-listener.c, shared with the compare mode's events. */
extern char bus_address[400];
extern pid_t dbus_pid, listener_pid;
int bench_start_dbus(void);
int bench_write_rule(const char *name, const char *text);   /* in tmpdir/rules */
/* Waits for READY=1; in the network namespace netns_fd unless it is negative. */
int bench_start_listener(const char *path, int netns_fd);
void bench_stop_services(void);                              /* listener, then dbus-daemon, by pid */
int bench_tcp_connect(int port);                             /* 127.0.0.1:port */
/* stamped: SO_TIMESTAMPNS on, before the connect (keep one such socket open
 * throughout: the first one enables the kernel's time stamping globally). */
int bench_tcp_connect_stamped(int port, bool stamped);
int bench_echo(int fd);                                      /* one byte out and back, 5 s bound */
/* And when the echo reached the socket (CLOCK_REALTIME, us), if stamped. */
int bench_echo_stamped(int fd, usec_t *ret_rx);
int bench_hang_up(int fd);                                   /* close once the server has, 5 s bound */
/* One of standby-listener's statistics (GetStatistics); UINT64_MAX when the
 * call fails or the listener has no such key. */
uint64_t bench_listener_statistic(struct sd_bus *bus, const char *key);
uint64_t bench_rss_kib(pid_t pid);                           /* VmRSS, 0 if unknown */

/* bench-bare-thawer.c: the least a listener can add to a socket event, a
 * forked process that only waits in epoll on the server's listening socket
 * and writes its cgroup.freeze. */
typedef struct BareThawer {
        pid_t pid;
        int arm_fd, ack_fd;
} BareThawer;
/* What the bare thawer waits on: the listening sockets of service, or (with
 * bus_address) a monitor of the method calls to bus_name, or (with
 * push_name as well) a Push call to push_name, which it owns. A monitor
 * with service set too is checked: it thaws only on a call it finds unread
 * in one of service's bus connections, as the listener does, so that a
 * call the bus's policy refused would thaw nothing. */
typedef struct BareTarget {
        pid_t service;
        const char *bus_address, *bus_name, *push_name;
} BareTarget;
int bare_thawer_start(BareThawer *t, int cg_fd, const BareTarget *target);
int bare_thawer_arm(BareThawer *t); /* thaw once, on the next event */
void bare_thawer_stop(BareThawer *t);

/* bench-events.c: the compare mode's event schedule. */
enum { EVENTS_CLIENT, EVENTS_PUSH, EVENTS_DBUS, EVENTS_REDIS, EVENTS_MEMCACHED, EVENTS_LINK, EVENTS_INPUT,
       _EVENTS_KIND_MAX };
extern const char * const events_kind_names[_EVENTS_KIND_MAX];
#define EVENTS_MAX_SAMPLES 4096
typedef struct EventSamples {
        double usec[EVENTS_MAX_SAMPLES];
        size_t n;
        unsigned missed;
} EventSamples;
typedef struct Events {
        int echo_port, push_port, redis_port, memcached_port;
        int push_listen, push_conn;
        int netns_fd;            /* the namespace of the veth pair and of the listener */
        struct nl_sock *nl;      /* rtnetlink, in that namespace */
        struct rtnl_link *link;  /* sbb0, toggled up and down */
        bool link_up;
        int link_tick, input_tick;            /* the link watcher's and the power-key handler's */
        int input_listener, input_handler;    /* FIFOs carrying evdev records to each */
        struct sd_bus *bus;      /* the bench's own connection, for D-Bus pushes */
        bool have[_EVENTS_KIND_MAX];
        bool have_ipc;           /* the ipc.service receiver of an unfrozen broadcaster */
        char *daemon_path[_EVENTS_KIND_MAX]; /* EVENTS_REDIS, EVENTS_MEMCACHED: the program, from PATH */
        unsigned seed;
} Events;
#define EVENTS_INIT                                                                                     \
        ((Events) { .push_listen = -EBADF, .push_conn = -EBADF, .netns_fd = -EBADF, .link_tick = -EBADF, \
                    .input_tick = -EBADF, .input_listener = -EBADF, .input_handler = -EBADF, .seed = 20141 })
/* The event kind of a real daemon by its program's name (redis-server,
 * memcached), or -EINVAL. */
int events_daemon_kind(const char *name);
/* Finds each of the named daemons in PATH, for events_setup to start;
 * -ENOENT (and says which) when one is not installed. */
int events_find_daemons(Events *e, char **names);
/* Starts the event-driven services, the daemons found, the dbus-daemon and
 * the listener; e from EVENTS_INIT (and events_find_daemons). */
int events_setup(Events *e, const char *listener_path, const char *workload);
void events_done(Events *e);
/* Fires n events at seeded times within window (and returns at its end);
 * -ENOMEM when there is no room for the schedule. */
int events_run(Events *e, usec_t window, unsigned n, EventSamples *out);

/* bench-period-stats.c: the standby-period mode's measures. */

/* A job due at every multiple of period (seconds, wall clock) in [from, to),
 * which accepts running up to allowed seconds late (its declared lateness;
 * the period, where none is declared): for each due, the first run in
 * [due, due + allowed] gives its lateness (run - due, into late[*n_late]);
 * none there, and it was missed. One run may serve several dues when
 * allowed is longer than the period. runs in any order. Returns how many
 * were due; late has room for that many. */
size_t period_lateness(const double *runs, size_t n, double period, double allowed, double from, double to,
                       double *late, size_t *n_late, unsigned *missed);

/* When redis's "save SECONDS CHANGES" is due after a save at last_save
 * (wall clock, s) once the changes are made: redis compares whole seconds
 * and saves when more than SECONDS have passed. */
double redis_save_due(double last_save, unsigned seconds);
/* The start of postgresql's latest checkpoint (wall clock, s) from
 * pg_controldata's output in the C locale and UTC; 0 if it has none. */
double pg_checkpoint_parse(const char *controldata);

/* Wakeups and CPU time of a cgroup tree, per cgroup holding tasks (a unit),
 * sampled: each thread's voluntary context switches (as
 * stats_cgroup_schedstat counts them) since the start, or since its birth
 * for a thread born after it, summed into the unit it was first seen in; a
 * thread born and gone between two samples is not seen. CPU time from each
 * cgroup's cpu.stat (usage_usec), which keeps what its dead tasks used
 * until the cgroup goes. With kernel, the kernel's own threads too, as the
 * unit UNIT_TRACKER_KERNEL. */
#define UNIT_TRACKER_KERNEL "(kernel threads)"
typedef struct UnitCount {
        char *name;              /* the cgroup's path below the base */
        uint64_t wakeups;
        uint64_t cpu_first, cpu_last;
        bool have_cpu;
} UnitCount;
typedef struct ThreadCount {
        pid_t tid;
        uint64_t last;
        size_t unit;
        unsigned seen;
} ThreadCount;
typedef struct UnitTracker {
        int root_fd;
        char *base;              /* below root_fd */
        bool kernel;
        UnitCount *units;
        size_t n_units, units_cap;
        ThreadCount *threads;
        size_t n_threads, threads_cap;
        unsigned generation;
        usec_t start, end;       /* CLOCK_MONOTONIC of the first and last sample */
} UnitTracker;
int unit_tracker_start(UnitTracker *t, int root_fd, const char *base, bool kernel);
int unit_tracker_sample(UnitTracker *t);
double unit_tracker_rate(const UnitTracker *t, const UnitCount *u);         /* wakeups/s */
double unit_tracker_cpu_ms_per_s(const UnitTracker *t, const UnitCount *u); /* NAN: no cpu.stat */
const UnitCount *unit_tracker_find(const UnitTracker *t, const char *name);
void unit_tracker_done(UnitTracker *t);

/* bench-period.c: a Debian system booted under systemd-nspawn, each strategy
 * over a standby period with a seeded schedule of events. */
typedef struct PeriodOptions {
        const char *work;        /* the rootfs cache and the container's files */
        char **strategies;
        unsigned seconds, recovery_seconds;
        unsigned thaw_first, thaw_window; /* the periodic strategy's first interval, window (s) */
        unsigned seed;
        const char *output;
} PeriodOptions;
int bench_period(const PeriodOptions *po);

/* bench-slack-kinds.c: what a timer slack set from outside does to each
 * kind of wakeup, on this kernel; also used by tests/test-slack.c. */
typedef enum SlackKind {
        SLACK_KIND_NANOSLEEP,            /* clock_nanosleep, relative */
        SLACK_KIND_NANOSLEEP_ABS,        /* clock_nanosleep, TIMER_ABSTIME */
        SLACK_KIND_POLL,
        SLACK_KIND_PPOLL,
        SLACK_KIND_SELECT,
        SLACK_KIND_EPOLL,
        SLACK_KIND_FUTEX,                /* FUTEX_WAIT, relative */
        SLACK_KIND_FUTEX_BITSET_ABS,     /* FUTEX_WAIT_BITSET, absolute */
        SLACK_KIND_TIMERFD,              /* CLOCK_MONOTONIC, one-shot */
        SLACK_KIND_TIMERFD_PERIODIC,     /* its second expiry */
        SLACK_KIND_POSIX_SIGNAL,         /* timer_create, SIGEV_SIGNAL */
        SLACK_KIND_POSIX_THREAD,         /* timer_create, SIGEV_THREAD */
        SLACK_KIND_ITIMER,               /* setitimer(ITIMER_REAL) */
        SLACK_KIND_RT_FIFO_NANOSLEEP,    /* the child runs SCHED_FIFO */
        SLACK_KIND_RT_FIFO_FUTEX,
        SLACK_KIND_RT_RR_POLL,           /* SCHED_RR */
        SLACK_KIND_NEW_THREAD,           /* a thread made after the set sleeps */
        SLACK_KIND_NEW_PROCESS,          /* a process forked after the set sleeps */
        _SLACK_KIND_MAX,
} SlackKind;

#define MAX_SLACK_SAMPLES 100

const char *slack_kind_to_string(SlackKind k);

/* A child process (its own process group) that arms one timer of its kind,
 * due due_ns after "go", and reports. */
typedef struct SlackProbe {
        SlackKind kind;
        pid_t pid;
        int ctl_fd, rep_fd;
} SlackProbe;

/* Forks the child and waits until it is ready; an RT kind is then already
 * real-time. */
int slack_probe_start(SlackKind kind, uint64_t due_ns, SlackProbe *ret);
/* Writes ns to the timerslack_ns of every thread of the child;
 * ret_effective: what its first thread then reads. */
int slack_probe_set(SlackProbe *p, uint64_t ns, uint64_t *ret_effective);
/* Lets the child arm. Returns the expiry it asked for (CLOCK_MONOTONIC ns),
 * the slack of the thread that arms as that thread read it, and its tid;
 * or the error the child met (-EPERM: no real-time policy here). */
int slack_probe_go(SlackProbe *p, uint64_t *ret_target_ns, uint64_t *ret_own_slack_ns, pid_t *ret_tid);
/* Waits up to bound for thread tid to sleep, then finds its timer in
 * /proc/timer_list: its hard minus soft expiry (UINT64_MAX: saturated at
 * KTIME_MAX). -ETIMEDOUT, -ENOENT. */
int slack_probe_range(pid_t tid, uint64_t target_ns, usec_t bound, uint64_t *ret_range_ns);
/* Waits up to bound for the child's wakeup: how late it was. -ETIMEDOUT. */
int slack_probe_wait(SlackProbe *p, usec_t bound, int64_t *ret_late_ns);
/* Kills and reaps the child's process group; closes the pipes. */
void slack_probe_stop(SlackProbe *p);

/* The bench mode: a table of every kind at slack (and at the largest);
 * ends early once *stop is set. */
int bench_slack_kinds(unsigned samples, usec_t slack, const volatile sig_atomic_t *stop);
