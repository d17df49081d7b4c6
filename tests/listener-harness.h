/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The fixtures of the listener's end-to-end tests (tests/test-listener*.c):
 * a real dbus-daemon on a private address, the real standby-listener binary
 * started on it with a rules directory of the test's, real frozen processes;
 * and the helpers those tests share. Each test-listener-<concern>.c adds its
 * tests to the cases of the one suite "listener" (test-listener.c). */

#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "time-util.h"

/* The test cases of suite "listener", each with its fixtures and timeout. */
typedef struct ListenerCases {
        TCase *dbus, *uinput, *trust, *loop, *window, *hold, *user_socket, *loop_systemd, *systemd_spare, *bus_api;
} ListenerCases;

void listener_push_tests(const ListenerCases *c);
void listener_inhibit_tests(const ListenerCases *c);
void listener_lifecycle_tests(const ListenerCases *c);
void listener_dbus_rules_tests(const ListenerCases *c);
void listener_network_tests(const ListenerCases *c);
void listener_socket_tests(const ListenerCases *c);
void listener_input_tests(const ListenerCases *c);
void listener_trust_tests(const ListenerCases *c);
void listener_forged_tests(const ListenerCases *c);
void listener_loop_tests(const ListenerCases *c);
void listener_systemd_tests(const ListenerCases *c);
void listener_window_tests(const ListenerCases *c);
void listener_hold_tests(const ListenerCases *c);
void listener_bus_api_tests(const ListenerCases *c);
void listener_strategy_tests(const ListenerCases *c);
void listener_run_manager_tests(const ListenerCases *c);

/* Checked fixtures of the cases with a systemd --user manager of the
 * test's (tests/env/user-manager.sh), in test-listener-systemd.c: the
 * listener's fixtures and that manager. */
void setup_user_manager(void);
void teardown_user_manager(void);

/* The test's directory (its bus, rules, notify socket), the bus and rules
 * the listener is started with, and the pids of both (0: none runs). */
extern char harness_dir[64], bus_address[512], rules_dir[256];
extern pid_t dbus_pid, listener_pid;
/* When set, start_listener() starts the listener inside this network
 * namespace (an ip-netns(8) name: make_netns() sets it, teardown deletes it). */
extern char listener_netns[64];
/* When set, start_listener() starts the listener in a user namespace of
 * its own, root mapped to root, whose limits (/proc/sys/user) bind it
 * alone; teardown clears it. */
extern bool listener_userns;

/* Checked fixture: T (test-util.h), the test's directory, a notify socket,
 * a private bus, and the rules 10-mail.rule (push mail.service: thaw it for
 * 1s) and 20-lid.rule (push lid.service: exit standby). */
void listener_setup(void);
/* Checked fixture: stops the listener (asserting it exits cleanly on
 * SIGTERM), the network namespace, the bus; removes what setup made. */
void listener_teardown(void);

/* Writes (asserts) or removes (negative errno) a file of the rules directory. */
void write_rule(const char *name, const char *text);
int unlink_rule(const char *name);
/* Starts standby-listener on the fixture's bus, config, state and rules;
 * returns once it said READY=1 (asserted). */
void start_listener(void);
/* Waits (bounded) for the listener to say text over its notify socket
 * (READY=1, RELOADING=1, ...). */
bool wait_notify(const char *text);
/* Sends sig to the listener and reaps it; returns its wait status, or -1
 * if none ran. */
int stop_listener(int sig);
/* Waits (bounded, on a pidfd) for the listener to exit by itself; returns
 * its wait status, or -1 if it still runs. */
int wait_listener_exit(usec_t timeout);

/* A new connection to the fixture's bus (asserted). */
sd_bus *client(void);
/* Push(unit, reason); returns the bus error name, or NULL and *ret_acted. */
char *push(sd_bus *bus, const char *unit, int *ret_acted);
/* Push(unit) with a bound on the answer; returns the bus error name, or
 * NULL and *ret_acted. */
char *push_within(sd_bus *bus, const char *unit, usec_t timeout, int *ret_acted);
/* The listener's statistic key (GetStatistics), or UINT64_MAX when absent. */
uint64_t statistic(sd_bus *bus, const char *key);
/* Whether the listener's statistic key reaches min within timeout. */
bool wait_statistic(sd_bus *bus, const char *key, uint64_t min, usec_t timeout);
/* test_wait_for() predicate on a bus (userdata): statistic undelivered or
 * thaws counted at least once, i.e. a call of a dbus-call rule was judged. */
bool saw_call_judged(void *userdata);

/* The common start: an idle mail.service, the listener, standby entered;
 * returns a client connection to the bus. */
sd_bus *standby_with_idle_mail(void);
/* Whether the test cgroup sub is (want) frozen or not, within 10 s. */
bool wait_frozen(const char *sub, bool want);
/* The journal's state of a unit, or -1 when it does not list it. */
int journal_state_of(const char *sub);
/* Waits (bounded) for the journal to give sub this state (-1: not listed):
 * re-read on every rename into the state directory, which is how each save
 * lands, and on its removal. */
bool wait_journal_state(const char *sub, int want, usec_t timeout);

/* Standby being entered and held open: mail.service frozen, the manager
 * still waiting (FreezeTimeout=1s) for a unit stuck in a FUSE read. Returns
 * the manager's pid (reaped by enter_done()); false where FUSE is not. */
bool enter_held_open(sd_bus **ret_bus, pid_t *ret_enter);
void enter_done(pid_t enter);

/* test_wait_for() predicates on a pid (userdata: pid_t *): in state T
 * (stopped), in state S (sleeping). */
bool is_stopped(void *userdata);
bool is_sleeping(void *userdata);
/* How many times pid's thread has run (/proc/PID/schedstat). */
bool thread_runs(pid_t pid, uint64_t *ret);
/* The listener has served everything sent to it and sleeps again: two
 * round trips over the bus (it serves one source after another without
 * sleeping in between), then its state is S: blocked in epoll_wait, which
 * it enters only with nothing left to read. Returns how often it has run. */
uint64_t listener_settled_runs(sd_bus *bus);
/* How often the listener ran, once a burst is over: a wakeup makes it
 * runnable (state R) at once, and it counts a run before it sleeps (S)
 * again, so waiting for S and then reading the count misses none. */
uint64_t listener_runs_after(void);

/* Runs ip(8) with up to 8 arguments; asserts success. */
void run_ip(const char *a, const char *b, const char *c, const char *d, const char *e, const char *f,
            const char *g, const char *h);
/* A network namespace of the test's (listener_netns), with a veth pair in
 * it (sb0 and its peer, both down), for start_listener() to start in. */
void make_netns(void);

/* A process's socket descriptors: their targets ("socket:[inode]") and,
 * with fds, their numbers. */
typedef struct SocketFd {
        char target[32];
        int fd;
} SocketFd;

/* Lists up to max of pid's socket descriptors into out; returns how many. */
size_t socket_fds(pid_t pid, SocketFd *out, size_t max);
/* Whether some socket of pid (userdata: pid_t *) has bytes its owner has
 * not read. */
bool has_unread(void *userdata);
/* The frozen server whose sockets count_held() compares with the listener's. */
extern pid_t server_pid;
/* How many of the server's sockets the listener holds a duplicate of: the
 * same socket inode in both descriptor tables. Counting the listener's own
 * sockets instead would race with its transient ones (sd_notify's). */
int count_held(void);
/* A TCP connection to 127.0.0.1:port (asserted). */
int tcp_connect(int port);
/* Sends a line and waits (bounded) for the server's echo. */
bool echo(int fd, const char *line);

/* A standby-workload bus-service in mail.service, owning org.example.Mail
 * on the fixture's bus; returns its pid once it ticked (it serves). The
 * tick pipe stays open: the service still writes to it. */
pid_t spawn_mail_bus_service(void);
/* Replaces the fixture's bus by one at the same address whose policy also
 * holds extra (a <policy> element or more). */
void restart_dbus_with(const char *extra);

/* A unit stopped while frozen: its process killed (a frozen task dies of
 * SIGKILL), its cgroup, once the kernel says it is empty, removed. The
 * listener's kept fds of it outlive it. */
void kill_and_remove(pid_t pid, const char *sub);
