/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Fixtures for tests on the real kernel: a unique cgroup subtree per test with
 * real processes in it, a private state directory, and the built binaries. */

#include <check.h>
#include <stdbool.h>
#include <sys/types.h>

#include "macro.h"
#include "time-util.h"

#define TEST_MAX_PIDS 2048

typedef struct TestEnv {
        char *mount;         /* cgroup2 mount */
        int root_fd;
        char *base;          /* rel path of this test's subtree: standby-test.<runner>.<n> */
        char *state_dir;     /* a fresh --state-dir */
        char *config;        /* a config file targeting base */
        pid_t pids[TEST_MAX_PIDS];
        size_t n_pids;
        const char *unavailable; /* why T could not be set up (not root, no cgroup2): tests skip */
} TestEnv;

extern TestEnv T;

/* Check has no skip of its own: a test that cannot run here records why with
 * test_skip() and returns. The record (the test's name from Check's
 * tcase_name(), and the reason) goes to the file the runner named in
 * STANDBY_TEST_SKIP_FILE (the test runs in a forked process), and to stderr;
 * the runner counts skips apart from passes, lists them, and fails on one
 * that STANDBY_TEST_EXPECTED_SKIPS (space-separated fnmatch patterns of test
 * names) does not allow. Returns false. */
bool test_skip(const char *fmt, ...) _printf_(1, 2);

/* Skips the calling test (test_skip) unless root with cgroup v2. */
bool test_need_root_cgroup2(void);

/* Checked fixture: create T (base cgroup, state dir, config with Targets=base).
 * Not root, or no cgroup2: sets T.unavailable and creates nothing, so that the
 * test's test_need_root_cgroup2() skips (rather than the fixture failing). */
void test_env_setup(void);
/* Checked fixture: thaw, kill (by pid) and remove everything of T. */
void test_env_teardown(void);
/* This runner's id (STANDBY_TEST_RUNNER), in the names of what tests make. */
const char *test_runner_id(void);
/* Unchecked fixture (runs in the runner): removes what a failed test left. */
void test_env_sweep(void);
/* A test case of tests on the real kernel, added to s: T set up and torn
 * down around each test, what a crashed one left swept afterwards; timeout
 * in seconds (0: Check's default). */
TCase *test_kernel_tcase(Suite *s, const char *name, double timeout);

/* Writes T.config: "[Standby]\nTargets=<base>\n" plus extra lines. */
void test_write_config(const char *extra);

/* mkdir -p of base/sub; returns an fd of it. */
int test_cgroup(const char *sub);
/* Path "base/sub" (static buffer rotation; copy if kept). */
const char *test_cgpath(const char *sub);
/* Appends " systemd ADDRESS" to the journal's line of the unit sub (in
 * T.state_dir), as a unit standby froze through that manager. */
void test_journal_set_address(const char *sub, const char *address);

/* Starts argv in cgroup base/sub. With ret_tick_fd, a pipe is passed as fd 3
 * (argv says "--tick-fd 3" itself); the read end is returned. */
pid_t test_spawn(const char *sub, char *const argv[], int *ret_tick_fd);
/* Starts a standby-workload of the given kind in base/sub. */
pid_t test_spawn_workload(const char *sub, const char *kind, int period_ms, int threads, int *ret_tick_fd);
/* Forks a child that joins base/sub (or stays where it is, sub == NULL) and runs fn. */
pid_t test_fork(const char *sub, void (*fn)(void *userdata), void *userdata);

/* Runs build/standby-manager with T's --config and --state-dir and the given
 * arguments (NULL-terminated). Returns the exit status, or 128+signal. The
 * stderr text is returned in ret_err if not NULL (caller frees). */
int test_manager(char **ret_err, const char *arg, ...);
int test_manager_env(const char *env, char **ret_out, char **ret_err, const char *arg, ...);

/* Whether /dev/fuse is usable (test_skip()s if not). */
bool test_have_fuse(void);
/* Starts a never-answering FUSE server (in this process's cgroup, outside
 * base) and its client in base/sub; returns the client's pid once it is
 * stuck in state D, so that base/sub cannot freeze. */
pid_t test_start_stuck_client(const char *sub);

/* Reads ticks from fd until n arrived or timeout passed; returns the count. */
int test_ticks(int fd, int n, usec_t timeout);
/* Discards pending ticks. */
void test_drain(int fd);
/* Bytes waiting unread on fd (FIONREAD): on a tick pipe, 0 means no tick. */
int test_pending(int fd);

/* Absences are shown against an event, never by sleeping through a window:
 * a clock is a standby-workload nanosleep started in the test process's own
 * cgroup (outside every target, never frozen), ticking every period_ms on
 * the returned fd; its pid is tracked and killed in teardown. */
int test_start_clock(int period_ms);
/* Waits (bounded, asserted) for n more ticks of clock. */
void test_clock_ticks(int clock, int n);
/* Waits (bounded, asserted) for n more ticks of clock, then returns what
 * fd has pending: 0 says that fd stayed silent while the clock, running,
 * ticked n times. */
int test_pending_after_clock(int fd, int clock, int n);

/* Kernel state of base/sub: frozen per cgroup.events, and cgroup.freeze. */
bool test_frozen(const char *sub);
/* True if any cgroup.freeze below base reads 1. */
bool test_anything_frozen(void);

/* Writes text to a new file /tmp/standby-test-XXXXXX; returns its path (caller
 * frees and unlinks). */
char *test_write_tmp(const char *text);

/* Runs a shell command line; returns its exit status and its output (both
 * streams if the command redirects 2>&1; caller frees). */
int test_run_shell(const char *cmd, char **ret_out);

/* Starts a dbus-daemon (tests/data/dbus-test.conf) listening on dir/bus and
 * returns its pid once it listens; its address goes to ret_address. The
 * caller stops it by that pid (test_stop_pid). */
pid_t test_start_dbus(const char *dir, char *ret_address, size_t size);
/* SIGTERM to pid, and waits for it; nothing if pid <= 0. */
void test_stop_pid(pid_t pid);
/* A client connection to the bus at address (fails the test if none). */
struct sd_bus *test_bus_client(const char *address);
/* Processes bus until *answered is set (by a reply's handler), timeout at
 * most; returns whether it was. */
bool test_bus_wait_answered(struct sd_bus *bus, const int *answered, usec_t timeout);

/* Starts a systemd --user manager (tests/env/user-manager.sh) for the tests
 * of the systemd backend: its files in dir (its private socket
 * dir/xdg/systemd/private), its cgroup cgrel (relative to the cgroup2
 * mount). Returns false, starting nothing, when there is no
 * /lib/systemd/systemd. The manager is stopped by test_user_manager_stop(),
 * also at the exit of the test's process (a failed assertion). */
bool test_user_manager_start(const char *dir, const char *cgrel);
/* Skips the calling test (test_skip) unless root with cgroup v2 and a
 * manager that test_user_manager_start() started. */
bool test_need_user_manager(void);
/* Stops the manager that test_user_manager_start() started, continued
 * first (a failed test may have left it stopped); nothing if none runs. */
void test_user_manager_stop(void);

/* Path of a built binary (STANDBY_BUILD_DIR, default "build"). */
const char *test_bin(const char *name);

/* Waits (bounded) for cond(userdata) to be true, for conditions the kernel
 * sends no event for (a lock wait appearing in /proc/locks). Checks every 1 ms. */
bool test_wait_for(bool (*cond)(void *), void *userdata, usec_t timeout);
/* Waits for cgroup.events of the cgroup dir_fd to say "populated 0",
 * timeout at most; whether it did. */
bool test_wait_unpopulated(int dir_fd, usec_t timeout);
/* A unit's property as `systemctl --user show` prints it, of the manager
 * whose runtime directory is runtime_dir; the caller frees it. */
char *test_unit_show(const char *runtime_dir, const char *unit, const char *property);
/* Waits, at most timeout, until systemd's property of unit reads want, told
 * of each change by the unit's PropertiesChanged on the private socket of
 * the manager whose runtime directory is runtime_dir (systemd --user's
 * $XDG_RUNTIME_DIR). */
bool test_wait_unit_property(const char *runtime_dir, const char *unit, const char *property, const char *want,
                             usec_t timeout);
/* Forks a child that waits until *ret_release is closed, or timeout, then
 * calls at_end(userdata) (if not NULL) and exits: a process that holds what
 * it inherited, or acts late, for a test that must not hang on a fault. The
 * child dies with the test. */
pid_t test_fork_until_released(usec_t timeout, void (*at_end)(void *), void *userdata, int *ret_release);

Suite *unit_name_suite(void);
Suite *log_suite(void);
Suite *config_suite(void);
Suite *journal_suite(void);
Suite *cgroup_suite(void);
Suite *slack_suite(void);
Suite *locks_suite(void);
Suite *manager_suite(void);
Suite *crash_suite(void);
Suite *bench_suite(void);
Suite *rules_suite(void);
Suite *listener_suite(void);
Suite *dbus_wire_suite(void);
Suite *dispatch_suite(void);
Suite *match_suite(void);
Suite *units_suite(void);
Suite *systemd_suite(void);
Suite *hostile_suite(void);
