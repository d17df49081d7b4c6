/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* standby-manager end to end: the real binary on real cgroups and processes. */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <grp.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cgroup.h"
#include "journal.h"
#include "locks.h"
#include "macro.h"
#include "proc.h"
#include "slack.h"
#include "standby.h"
#include "test-util.h"

static bool journal_exists(void) {
        char p[4096];
        snprintf(p, sizeof(p), "%s/" JOURNAL_FILE, T.state_dir);
        return access(p, F_OK) == 0;
}

static bool wait_frozen(const char *sub, bool want) {
        _cleanup_close_ int fd = test_cgroup(sub);
        return cgroup_wait_frozen(&fd, 1, want, now_usec(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC, NULL) == 0;
}

/* Enter stops every unit's progress; exit brings it back; status tells. */
START_TEST(test_enter_exit_progress) {
        static const char * const kinds[] = { "nanosleep", "poll", "epoll", "timerfd", "posix-timer", "futex", "busy" };
        int ticks[ELEMENTSOF(kinds)], clock;
        char sub[64];
        _cleanup_free_ char *out = NULL;

        if (!test_need_root_cgroup2())
                return;
        clock = test_start_clock(10);
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                snprintf(sub, sizeof(sub), "app.slice/%s.service", kinds[i]);
                test_spawn_workload(sub, kinds[i], 10, 2, &ticks[i]);
                ck_assert_int_eq(test_ticks(ticks[i], 2, 5 * USEC_PER_SEC), 2);
        }

        ck_assert_int_eq(test_manager(NULL, "enter", NULL), EXIT_OK);
        ck_assert(journal_exists());
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                snprintf(sub, sizeof(sub), "app.slice/%s.service", kinds[i]);
                ck_assert_msg(test_frozen(sub), "%s not frozen", sub);
                test_drain(ticks[i]);
        }
        /* Not one tick from any of them while a running clock of the same
         * period ticks 30 times. */
        ck_assert_msg(test_pending_after_clock(ticks[0], clock, 30) == 0, "%s ticked while frozen", kinds[0]);
        for (size_t i = 1; i < ELEMENTSOF(kinds); i++)
                ck_assert_msg(test_pending(ticks[i]) == 0, "%s ticked while frozen", kinds[i]);

        ck_assert_int_eq(test_manager_env(NULL, &out, NULL, "status", "--json", NULL), EXIT_OK);
        ck_assert_ptr_nonnull(strstr(out, "\"active\":true"));
        ck_assert_ptr_nonnull(strstr(out, "\"listener\":null")); /* none runs here */
        ck_assert_ptr_nonnull(strstr(out, "\"strategy\":\"freeze\""));
        snprintf(sub, sizeof(sub), "\"cgroup\":\"%s\",\"state\":\"frozen\",\"kernel_frozen\":true",
                 test_cgpath("app.slice/futex.service"));
        ck_assert_msg(strstr(out, sub), "status --json lacks %s: %s", sub, out);

        /* is-active says it, with LSB's status codes; status answers at
         * once while another manager holds the journal's lock (an enter
         * waiting out its FreezeTimeout, say), from the journal last saved. */
        _cleanup_free_ char *word = NULL, *busy = NULL, *lockpath = NULL;
        ck_assert_int_eq(test_manager_env(NULL, &word, NULL, "is-active", NULL), EXIT_OK);
        ck_assert_str_eq(word, "active\n");
        ck_assert_int_ge(asprintf(&lockpath, "%s/lock", T.state_dir), 0);
        _cleanup_close_ int lock = open(lockpath, O_RDWR | O_CLOEXEC);
        ck_assert_int_ge(lock, 0);
        ck_assert_int_eq(flock(lock, LOCK_EX), 0);
        ck_assert_int_eq(test_manager_env(NULL, &busy, NULL, "status", "--json", NULL), EXIT_OK);
        ck_assert_msg(strstr(busy, "\"active\":true,\"phase\":\"active\",\"journal_busy\":true"), "%s", busy);
        ck_assert_int_eq(flock(lock, LOCK_UN), 0);

        ck_assert_int_eq(test_manager(NULL, "exit", NULL), EXIT_OK);
        ck_assert(!journal_exists());
        ck_assert(!test_anything_frozen());
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++)
                ck_assert_msg(test_ticks(ticks[i], 3, 5 * USEC_PER_SEC) == 3, "%s did not resume", kinds[i]);

        free(TAKE_PTR(out));
        ck_assert_int_eq(test_manager_env(NULL, &out, NULL, "status", "--json", NULL), EXIT_STATUS_INACTIVE);
        ck_assert_ptr_nonnull(strstr(out, "\"active\":false"));
        free(TAKE_PTR(word));
        ck_assert_int_eq(test_manager_env(NULL, &word, NULL, "is-active", NULL), EXIT_STATUS_INACTIVE);
        ck_assert_str_eq(word, "inactive\n");
}
END_TEST

/* Exempt= units and the caller's own cgroup are never frozen. */
START_TEST(test_exemptions) {
        int keep, term, other;
        int status;

        if (!test_need_root_cgroup2())
                return;
        test_write_config("Exempt=keep.service\n");
        test_spawn_workload("keep.service", "nanosleep", 10, 1, &keep);
        test_spawn_workload("term.scope", "nanosleep", 10, 1, &term);
        test_spawn_workload("other.service", "nanosleep", 10, 1, &other);

        /* The manager runs from inside term.scope, like a shell in a terminal. */
        char *argv[] = { (char *) test_bin("standby-manager"), "--config", T.config, "--state-dir", T.state_dir,
                         "--quiet", "enter", NULL };
        pid_t pid = test_spawn("term.scope", argv, NULL);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        T.n_pids--; /* reaped */
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_OK);

        ck_assert(test_frozen("other.service"));
        ck_assert(!test_frozen("keep.service"));
        ck_assert(!test_frozen("term.scope"));
        test_drain(keep);
        test_drain(term);
        ck_assert_int_eq(test_ticks(keep, 3, 5 * USEC_PER_SEC), 3);
        ck_assert_int_eq(test_ticks(term, 3, 5 * USEC_PER_SEC), 3);
        ck_assert_int_eq(test_manager(NULL, "exit", NULL), EXIT_OK);
}
END_TEST

/* logind's session scopes (where `systemctl start standby.target` is typed)
 * are left running unless FreezeSessions=yes; only those names are. */
START_TEST(test_session_scopes) {
        int login, app, lookalike;

        if (!test_need_root_cgroup2())
                return;
        test_spawn_workload("user-1000.slice/session-c4.scope", "nanosleep", 10, 1, &login);
        test_spawn_workload("user-1000.slice/app.service", "nanosleep", 10, 1, &app);
        test_spawn_workload("user-1000.slice/session-c4.scope.d", "nanosleep", 10, 1, &lookalike);

        ck_assert_int_eq(test_manager(NULL, "enter", NULL), EXIT_OK);
        ck_assert(!test_frozen("user-1000.slice/session-c4.scope"));
        ck_assert(test_frozen("user-1000.slice/app.service"));
        ck_assert(test_frozen("user-1000.slice/session-c4.scope.d"));
        test_drain(login);
        ck_assert_int_eq(test_ticks(login, 3, 5 * USEC_PER_SEC), 3);
        ck_assert_int_eq(test_manager(NULL, "exit", NULL), EXIT_OK);

        test_write_config("FreezeSessions=yes\n");
        ck_assert_int_eq(test_manager(NULL, "enter", NULL), EXIT_OK);
        ck_assert(test_frozen("user-1000.slice/session-c4.scope"));
        ck_assert_int_eq(test_manager(NULL, "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
}
END_TEST

/* thaw without --for: running until exit, the only other unit still
 * frozen. (thaw --for is the listener's: tests/test-listener-window.c,
 * case window.) */
START_TEST(test_thaw_window) {
        int a;

        if (!test_need_root_cgroup2())
                return;
        test_spawn_workload("a.service", "nanosleep", 10, 1, &a);
        test_spawn_workload("b.service", "nanosleep", 10, 1, NULL);
        ck_assert_int_eq(test_manager(NULL, "enter", NULL), EXIT_OK);
        test_drain(a);

        ck_assert_int_eq(test_manager(NULL, "thaw", "a.service", NULL), EXIT_OK);
        ck_assert(!test_frozen("a.service"));
        ck_assert(test_frozen("b.service"));
        ck_assert_int_eq(test_ticks(a, 3, 5 * USEC_PER_SEC), 3);
        ck_assert_int_eq(test_manager(NULL, "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
}
END_TEST

/* A unit name means the unit below the targets: another cgroup of that name
 * outside them (another container's, another test runner's) neither makes
 * it ambiguous nor is touched; twice below the targets it is ambiguous. */
START_TEST(test_thaw_name_within_targets) {
        char extra[4096];
        _cleanup_free_ char *err = NULL;

        if (!test_need_root_cgroup2())
                return;
        snprintf(extra, sizeof(extra), "Targets=\nTargets=%s\n", test_cgpath("in.slice"));
        test_write_config(extra);
        test_spawn_workload("in.slice/a.service", "poll", 10, 1, NULL);
        test_spawn_workload("in.slice/x.slice/dup.service", "poll", 10, 1, NULL);
        test_spawn_workload("in.slice/y.slice/dup.service", "poll", 10, 1, NULL);
        test_spawn_workload("out.slice/a.service", "poll", 10, 1, NULL);
        _cleanup_close_ int out = test_cgroup("out.slice/a.service");
        ck_assert_int_ge(cgroup_set_freeze(out, true), 0);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);

        ck_assert_int_eq(test_manager(NULL, "--quiet", "thaw", "a.service", NULL), EXIT_OK);
        ck_assert(!test_frozen("in.slice/a.service"));
        ck_assert(test_frozen("out.slice/a.service"));
        ck_assert_int_eq(test_manager(&err, "thaw", "dup.service", NULL), EXIT_UNKNOWN_UNIT);
        ck_assert_msg(strstr(err, "dup.service: matches several cgroups"), "%s", err);
        ck_assert(test_frozen("in.slice/x.slice/dup.service") && test_frozen("in.slice/y.slice/dup.service"));

        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert_int_ge(cgroup_set_freeze(out, false), 0);
        ck_assert(!test_anything_frozen());
}
END_TEST

/* freeze/thaw by hand, outside standby; exit also undoes hand freezes. */
START_TEST(test_freeze_thaw_verbs) {
        if (!test_need_root_cgroup2())
                return;
        test_spawn_workload("x.slice/a.service", "poll", 10, 1, NULL);
        test_spawn_workload("x.slice/b.service", "poll", 10, 1, NULL);
        test_spawn_workload("c.service", "poll", 10, 1, NULL);

        /* A slice freezes leaf by leaf, so one unit below can be thawed later. */
        ck_assert_int_eq(test_manager(NULL, "freeze", test_cgpath("x.slice"), "c.service", NULL), EXIT_OK);
        ck_assert(test_frozen("x.slice/a.service") && test_frozen("x.slice/b.service") && test_frozen("c.service"));
        _cleanup_close_ int x = test_cgroup("x.slice");
        bool f;
        ck_assert_int_eq(cgroup_get_freeze(x, &f), 0);
        ck_assert(!f);

        ck_assert_int_eq(test_manager(NULL, "thaw", "a.service", NULL), EXIT_OK);
        ck_assert(!test_frozen("x.slice/a.service"));
        ck_assert(test_frozen("x.slice/b.service"));
        ck_assert_int_eq(test_manager(NULL, "thaw", "a.service", NULL), EXIT_NOT_ACTIVE);

        ck_assert_int_eq(test_manager(NULL, "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
        ck_assert(!journal_exists());
}
END_TEST

/* A unit the journal calls frozen but that runs (a listener thawed it and
 * has not recorded it yet): freeze believes cgroup.freeze, not the journal. */
START_TEST(test_freeze_journal_lags) {
        if (!test_need_root_cgroup2())
                return;
        test_spawn_workload("a.service", "poll", 10, 1, NULL);
        ck_assert_int_eq(test_manager(NULL, "freeze", "a.service", NULL), EXIT_OK);
        ck_assert(test_frozen("a.service"));

        /* The listener's side of the race: cgroup.freeze 0, journal untouched. */
        _cleanup_close_ int a = test_cgroup("a.service");
        ck_assert_int_eq(cgroup_set_freeze(a, false), 0);
        ck_assert(wait_frozen("a.service", false));

        ck_assert_int_eq(test_manager(NULL, "freeze", "a.service", NULL), EXIT_OK);
        ck_assert_msg(wait_frozen("a.service", true), "freeze took the journal's word and left a.service running");
        ck_assert_int_eq(test_manager(NULL, "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
}
END_TEST

typedef struct BadCase {
        const char *config;           /* NULL: the default test config */
        const char *args[6];
        int code;
        const char *message;
} BadCase;

/* Every bad input: a clear message, a distinct exit code, nothing changed. */
START_TEST(test_bad_input) {
        char escape[4096], cfg[4096];
        if (!test_need_root_cgroup2())
                return;
        snprintf(escape, sizeof(escape), "%s/../..", T.base);
        snprintf(cfg, sizeof(cfg), "[Standby]\nTargets=%s\nStrategy=deep\n", T.base);
        const BadCase table[] = {
                { NULL, { "hibernate" }, EXIT_USAGE, "Unknown verb \"hibernate\"" },
                { NULL, { NULL }, EXIT_USAGE, "No verb given" },
                { NULL, { "freeze" }, EXIT_USAGE, "freeze needs at least one unit" },
                { NULL, { "exit", "now" }, EXIT_USAGE, "exit takes no arguments" },
                { NULL, { "enter", "--strategy=nap" }, EXIT_USAGE, "--strategy=nap: expected" },
                { NULL, { "thaw", "a.service", "--for", "later" }, EXIT_USAGE, "--for=later: expected" },
                { NULL, { "status", "--for", "1s" }, EXIT_USAGE, "--for with thaw" },
                { NULL, { "exit", "--before-sleep", "5" }, EXIT_USAGE, "--before-sleep go with enter" },
                { NULL, { "enter", "--before-sleep", "soon" }, EXIT_USAGE, "--before-sleep=soon: expected" },
                { NULL, { "enter", "--before-sleep", "1" }, EXIT_FAILURE_GENERIC, "No time left" },
                { cfg, { "enter" }, EXIT_CONFIG, ":3: Strategy=deep: expected \"freeze\" or \"slack\"" },
                { NULL, { "freeze", "no-such-standby-unit.service" }, EXIT_UNKNOWN_UNIT, "no such unit or cgroup" },
                { NULL, { "freeze", escape }, EXIT_UNKNOWN_UNIT, "not a valid unit name, nor a cgroup path" },
                { NULL, { "freeze", "/etc" }, EXIT_UNKNOWN_UNIT, "not a valid unit name" },
                { NULL, { "freeze", "a.service", "bad name.service" }, EXIT_UNKNOWN_UNIT, "bad name.service" },
                { NULL, { "exit" }, EXIT_NOT_ACTIVE, "Not in standby" },
                { NULL, { "thaw", "a.service" }, EXIT_NOT_ACTIVE, "Not frozen by standby" },
        };

        test_spawn_workload("a.service", "idle", 100, 1, NULL);
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_free_ char *err = NULL;
                if (table[i].config) {
                        FILE *f = fopen(T.config, "we");
                        fputs(table[i].config, f);
                        fclose(f);
                } else
                        test_write_config(NULL);
                const char * const *a = table[i].args;
                int code = test_manager(&err, a[0], a[1], a[2], a[3], a[4], NULL);
                ck_assert_msg(code == table[i].code, "case %zu: exit %d, want %d (%s)", i, code, table[i].code, err);
                ck_assert_msg(strstr(err, table[i].message), "case %zu: \"%s\" lacks \"%s\"", i, err, table[i].message);
                ck_assert_msg(!test_anything_frozen() && !journal_exists(), "case %zu changed something", i);
        }

        /* Standby already entered. */
        test_write_config(NULL);
        ck_assert_int_eq(test_manager(NULL, "enter", NULL), EXIT_OK);
        _cleanup_free_ char *err = NULL;
        ck_assert_int_eq(test_manager(&err, "enter", NULL), EXIT_ALREADY);
        ck_assert_ptr_nonnull(strstr(err, "already entered"));
        ck_assert_int_eq(test_manager(NULL, "exit", NULL), EXIT_OK);
}
END_TEST

static int run_in_child(void (*prepare)(void), char **ret_err, const char *verb) {
        int err[2], status;
        pid_t pid;

        ck_assert_int_eq(pipe2(err, O_CLOEXEC), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                dup2(err[1], 2);
                prepare();
                execl(test_bin("standby-manager"), "standby-manager", "--config", T.config, "--state-dir",
                      T.state_dir, verb, NULL);
                _exit(127);
        }
        close(err[1]);
        char buf[4096] = {};
        size_t len = 0;
        ssize_t n;
        while ((n = read(err[0], buf + len, sizeof(buf) - 1 - len)) > 0)
                len += (size_t) n;
        close(err[0]);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        *ret_err = strdup(buf);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void become_nobody(void) {
        if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                _exit(126);
}

static void hide_cgroup2(void) {
        _cleanup_free_ char *m = NULL;
        /* A private mount namespace in which the cgroup2 mount is gone. */
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            cgroup_find_mount(&m) < 0 || umount2(m, MNT_DETACH) < 0)
                _exit(126);
}

START_TEST(test_not_root_and_no_cgroup2) {
        _cleanup_free_ char *err = NULL, *err2 = NULL;

        if (!test_need_root_cgroup2())
                return;
        chmod(T.config, 0644);
        char dir[4096];
        snprintf(dir, sizeof(dir), "%.*s", (int) (strrchr(T.config, '/') - T.config), T.config);
        chmod(dir, 0755);
        ck_assert_int_eq(run_in_child(become_nobody, &err, "enter"), EXIT_PERMISSION);
        ck_assert_ptr_nonnull(strstr(err, "Permission denied"));
        ck_assert_int_eq(run_in_child(hide_cgroup2, &err2, "enter"), EXIT_NO_CGROUP2);
        ck_assert_ptr_nonnull(strstr(err2, "No cgroup v2"));
        ck_assert(!test_anything_frozen());
        ck_assert(!journal_exists());
}
END_TEST

/* A task stuck in the kernel (a FUSE read nobody answers) with OnFreezeTimeout=skip:
 * reported with pid, comm, state and wchan, left running, the rest frozen. */
START_TEST(test_freeze_timeout_skip) {
        _cleanup_free_ char *err = NULL, *out = NULL, *cfg = NULL;
        char want[64];

        if (!test_need_root_cgroup2() || !test_have_fuse())
                return;
        ck_assert_int_ge(asprintf(&cfg, "Targets=\nTargets=%s\nFreezeTimeout=300ms\n", test_cgpath("units.slice")), 0);
        test_write_config(cfg);
        test_spawn_workload("units.slice/ok.service", "nanosleep", 10, 1, NULL);
        pid_t client = test_start_stuck_client("units.slice/stuck.service");

        ck_assert_int_eq(test_manager(&err, "enter", NULL), EXIT_OK);
        snprintf(want, sizeof(want), "pid %d (fuse-stuck) state D wchan ", (int) client);
        ck_assert_msg(strstr(err, "did not freeze within 300ms") && strstr(err, want), "stderr: %s", err);
        ck_assert(test_frozen("units.slice/ok.service"));
        ck_assert(!test_frozen("units.slice/stuck.service"));
        _cleanup_close_ int fd = test_cgroup("units.slice/stuck.service");
        bool f;
        ck_assert_int_eq(cgroup_get_freeze(fd, &f), 0);
        ck_assert_msg(!f, "a skipped unit must not stay half-frozen");

        ck_assert_int_eq(test_manager_env(NULL, &out, NULL, "status", "--json", NULL), EXIT_OK);
        ck_assert_ptr_nonnull(strstr(out, "\"state\":\"skipped\""));
        ck_assert_ptr_nonnull(strstr(out, want));
        ck_assert_int_eq(test_manager(NULL, "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
}
END_TEST

/* The same with OnFreezeTimeout=abort: everything rolled back, exit code 9. */
START_TEST(test_freeze_timeout_abort) {
        _cleanup_free_ char *err = NULL, *cfg = NULL;
        int tick;

        if (!test_need_root_cgroup2() || !test_have_fuse())
                return;
        ck_assert_int_ge(asprintf(&cfg, "Targets=\nTargets=%s\nFreezeTimeout=300ms\nOnFreezeTimeout=abort\n",
                                  test_cgpath("units.slice")), 0);
        test_write_config(cfg);
        test_spawn_workload("units.slice/ok.service", "nanosleep", 10, 1, &tick);
        test_start_stuck_client("units.slice/stuck.service");

        ck_assert_int_eq(test_manager(&err, "enter", NULL), EXIT_ROLLED_BACK);
        ck_assert_ptr_nonnull(strstr(err, "rolling back"));
        ck_assert(!test_anything_frozen());
        ck_assert(!journal_exists());
        test_drain(tick);
        ck_assert_int_eq(test_ticks(tick, 3, 5 * USEC_PER_SEC), 3);
}
END_TEST

static char lockpath[128];

typedef struct Locker {
        bool posix;
        int ready, release;     /* pipe ends */
} Locker;

static int take_lock(int fd, bool posix) {
        if (!posix)
                return flock(fd, LOCK_EX);
        struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
        return fcntl(fd, F_SETLKW, &fl);
}

static void hold_lock(void *userdata) {
        Locker *l = userdata;
        int fd = open(lockpath, O_RDWR | O_CLOEXEC);
        char c;
        if (fd < 0 || take_lock(fd, l->posix) < 0 || write(l->ready, "L", 1) != 1)
                _exit(1);
        (void) !read(l->release, &c, 1);
        _exit(0);
}

static void wait_lock(void *userdata) {
        Locker *l = userdata;
        int fd = open(lockpath, O_RDWR | O_CLOEXEC);
        if (fd < 0 || take_lock(fd, l->posix) < 0 || write(l->ready, "G", 1) != 1)
                _exit(1);
        _exit(0);
}

static pid_t waiter;

static bool waiter_blocked(void *userdata) {
        _cleanup_free_ LockWait *w = NULL;
        size_t n = 0;
        if (locks_read_waits("/proc/locks", &w, &n) < 0)
                return false;
        for (size_t i = 0; i < n; i++)
                if (w[i].waiter == waiter)
                        return true;
        return false;
}

/* The deadlock guard, with real flock and fcntl locks: a unit holding a lock
 * that a running process waits for is left running; when it lets go, the
 * waiter gets the lock. A unit whose lock nobody outside waits for freezes. */
static void deadlock_case(bool posix) {
        _cleanup_free_ char *out = NULL, *err = NULL;
        int held[2], release[2], got[2];
        char c;

        if (!test_need_root_cgroup2())
                return;
        snprintf(lockpath, sizeof(lockpath), "/tmp/standby-deadlock-%d", (int) getpid());
        close(open(lockpath, O_CREAT | O_RDWR | O_CLOEXEC, 0600));
        ck_assert_int_eq(pipe(held), 0);
        ck_assert_int_eq(pipe(release), 0);
        ck_assert_int_eq(pipe(got), 0);

        Locker holder = { .posix = posix, .ready = held[1], .release = release[0] };
        test_fork("holder.service", hold_lock, &holder);
        ck_assert_int_eq(read(held[0], &c, 1), 1);
        test_spawn_workload("bystander.service", "poll", 10, 1, NULL);

        /* The waiter runs outside the targets (in the test's own cgroup). */
        Locker w = { .posix = posix, .ready = got[1] };
        waiter = test_fork(NULL, wait_lock, &w);
        ck_assert_msg(test_wait_for(waiter_blocked, NULL, 5 * USEC_PER_SEC), "the waiter never blocked");

        ck_assert_int_eq(test_manager(&err, "enter", NULL), EXIT_OK);
        ck_assert_msg(strstr(err, posix ? "holds a POSIX lock" : "holds a FLOCK lock"), "stderr: %s", err);
        ck_assert(!test_frozen("holder.service"));
        ck_assert(test_frozen("bystander.service"));
        ck_assert_int_eq(test_manager_env(NULL, &out, NULL, "status", "--json", NULL), EXIT_OK);
        ck_assert_ptr_nonnull(strstr(out, "\"state\":\"lock-holder\""));

        /* The holder can still run: it lets go and the waiter proceeds. */
        ck_assert_int_eq(write(release[1], "x", 1), 1);
        struct pollfd p = { .fd = got[0], .events = POLLIN };
        ck_assert_int_eq(poll(&p, 1, 5000), 1);
        ck_assert_int_eq(read(got[0], &c, 1), 1);
        ck_assert_int_eq(c, 'G');

        ck_assert_int_eq(test_manager(NULL, "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
        unlink(lockpath);
}

START_TEST(test_deadlock_guard_flock) {
        deadlock_case(false);
}
END_TEST

START_TEST(test_deadlock_guard_posix) {
        deadlock_case(true);
}
END_TEST

/* Every thread of pid has slack `others`, except thread `special` (0: none). */
static void assert_threads_slack(pid_t pid, pid_t special, uint64_t special_ns, uint64_t others) {
        _cleanup_free_ pid_t *t = NULL;
        size_t n = 0;
        uint64_t v;

        ck_assert_int_eq(proc_list_tids(pid, &t, &n), 0);
        for (size_t k = 0; k < n; k++) {
                uint64_t want = t[k] == special ? special_ns : others;
                ck_assert_int_eq(slack_get(t[k], &v), 0);
                ck_assert_msg(v == want, "pid %d thread %d: slack %llu, want %llu", (int) pid, (int) t[k],
                              (unsigned long long) v, (unsigned long long) want);
        }
}

/* Slack strategy: every thread gets the slack, exit restores each thread's own
 * value, and every kind of timer fires on schedule again afterwards. */
START_TEST(test_slack_strategy_timers) {
        static const char * const kinds[] = { "nanosleep", "sleep", "poll", "select", "epoll", "timerfd", "posix-timer", "futex" };
        int ticks[ELEMENTSOF(kinds)];
        pid_t pids[ELEMENTSOF(kinds)];
        char sub[64];
        _cleanup_free_ char *out = NULL;
        uint64_t max;

        if (!test_need_root_cgroup2())
                return;
        ck_assert_int_eq(slack_probe_max(&max), 0);
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                snprintf(sub, sizeof(sub), "%s.service", kinds[i]);
                pids[i] = test_spawn_workload(sub, kinds[i], 20, 3, &ticks[i]);
                ck_assert_int_eq(test_ticks(ticks[i], 6, 5 * USEC_PER_SEC), 6);
        }
        /* One thread with a slack of its own, to see it restored exactly. */
        _cleanup_free_ pid_t *tids = NULL;
        size_t nt = 0;
        ck_assert_int_eq(proc_list_tids(pids[0], &tids, &nt), 0);
        ck_assert_uint_eq(nt, 3);
        ck_assert_int_eq(slack_set(tids[2], 777777, NULL), 0);

        ck_assert_int_eq(test_manager(NULL, "enter", "--strategy=slack", NULL), EXIT_OK);
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                assert_threads_slack(pids[i], 0, max, max);
                snprintf(sub, sizeof(sub), "%s.service", kinds[i]);
                ck_assert(!test_frozen(sub));
        }
        /* Let every sleeper re-arm under the standby slack: 10 periods, timed
         * by the timerfd workload, which slack does not delay. */
        test_drain(ticks[5]);
        ck_assert_int_eq(test_ticks(ticks[5], 30, 5 * USEC_PER_SEC), 30);
        ck_assert_int_eq(test_manager_env(NULL, &out, NULL, "status", "--json", NULL), EXIT_OK);
        ck_assert_ptr_nonnull(strstr(out, "\"strategy\":\"slack\""));
        ck_assert_ptr_nonnull(strstr(out, "\"threads_slacked\":24"));
        _cleanup_free_ char *text = NULL;
        ck_assert_int_eq(test_manager_env(NULL, &text, NULL, "status", NULL), EXIT_OK);
        ck_assert_msg(strstr(text, "Timer slack: 584y 6M (18446744073709551615 ns) on 24 threads"), "%s", text);

        ck_assert_int_eq(test_manager(NULL, "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++)
                assert_threads_slack(pids[i], tids[2], 777777, SLACK_KERNEL_DEFAULT_NS);
        /* On schedule again: 3 threads x 20 ms period give 15 ticks in ~100 ms;
         * allow 2 s, i.e. any timer still on its standby range fails this. */
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                test_drain(ticks[i]);
                ck_assert_msg(test_ticks(ticks[i], 15, 2 * USEC_PER_SEC) == 15, "%s timers not back on schedule",
                              kinds[i]);
        }
}
END_TEST

/* A strategy per unit ([Strategy]): one unit frozen, one slacked at 30 s,
 * one at the largest slack, one left alone; status names each; exit
 * restores each (cgroup.freeze 0, every thread's own slack back) and the
 * slacked units' timers are on schedule again. --strategy is one for all. */
START_TEST(test_unit_strategies_mixed) {
        static const char * const units[] = { "frozen.service", "slack30.service", "slackmax.service", "alone.service" };
        int ticks[ELEMENTSOF(units)];
        pid_t pids[ELEMENTSOF(units)];
        _cleanup_free_ pid_t *tids = NULL;
        _cleanup_free_ char *text = NULL, *json = NULL;
        size_t nt = 0;
        uint64_t max;

        if (!test_need_root_cgroup2())
                return;
        ck_assert_int_eq(slack_probe_max(&max), 0);
        test_write_config("[Strategy]\nSlack=30s slack30.service\nSlack=max slackmax.service\nNone=alone.service\n");
        for (size_t i = 0; i < ELEMENTSOF(units); i++) {
                pids[i] = test_spawn_workload(units[i], "nanosleep", 20, 3, &ticks[i]);
                ck_assert_int_eq(test_ticks(ticks[i], 6, 5 * USEC_PER_SEC), 6);
        }
        /* The unit left alone keeps a slack of its own, exactly. */
        ck_assert_int_eq(proc_list_tids(pids[3], &tids, &nt), 0);
        ck_assert_uint_eq(nt, 3);
        ck_assert_int_eq(slack_set(tids[1], 123456, NULL), 0);

        ck_assert_int_eq(test_manager(NULL, "enter", NULL), EXIT_OK);
        ck_assert(wait_frozen(units[0], true));
        for (size_t i = 1; i < ELEMENTSOF(units); i++)
                ck_assert_msg(!test_frozen(units[i]), "%s frozen", units[i]);
        assert_threads_slack(pids[1], 0, 0, UINT64_C(30000000000));
        assert_threads_slack(pids[2], 0, 0, max);
        assert_threads_slack(pids[3], tids[1], 123456, SLACK_KERNEL_DEFAULT_NS);
        /* The unit left alone runs on schedule all through. */
        test_drain(ticks[3]);
        ck_assert_int_eq(test_ticks(ticks[3], 15, 2 * USEC_PER_SEC), 15);

        ck_assert_int_eq(test_manager_env(NULL, &text, NULL, "status", NULL), EXIT_OK);
        ck_assert_msg(strstr(text, "Strategy: per unit (standby.conf's [Strategy]; freeze for the others)"), "%s", text);
        ck_assert_msg(strstr(text, "1 frozen, 0 thawed, 0 skipped, 0 lock holders, 2 slacked, 1 left alone"), "%s", text);
        ck_assert_msg(strstr(text, "slack30.service)  (slack 30s)"), "%s", text);
        ck_assert_msg(strstr(text, "slackmax.service)  (slack max)"), "%s", text);
        ck_assert_msg(strstr(text, "left         running"), "%s", text);
        ck_assert_int_eq(test_manager_env(NULL, &json, NULL, "status", "--json", NULL), EXIT_OK);
        ck_assert_msg(strstr(json, "\"per_unit\":true"), "%s", json);
        ck_assert_msg(strstr(json, "\"state\":\"slacked\",\"kernel_frozen\":false,\"backend\":\"cgroupfs\","
                                   "\"systemd_freezer_state\":null,\"slack_ns\":30000000000"), "%s", json);

        /* Let the slacked sleepers re-arm under their slack, timed by the
         * unit left alone. */
        test_drain(ticks[3]);
        ck_assert_int_eq(test_ticks(ticks[3], 30, 5 * USEC_PER_SEC), 30);
        ck_assert_int_eq(test_manager(NULL, "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
        ck_assert(!journal_exists());
        for (size_t i = 0; i < 3; i++)
                assert_threads_slack(pids[i], 0, 0, SLACK_KERNEL_DEFAULT_NS);
        assert_threads_slack(pids[3], tids[1], 123456, SLACK_KERNEL_DEFAULT_NS);
        for (size_t i = 0; i < ELEMENTSOF(units); i++) {
                test_drain(ticks[i]);
                ck_assert_msg(test_ticks(ticks[i], 15, 2 * USEC_PER_SEC) == 15, "%s not back on schedule", units[i]);
        }

        /* --strategy: every unit the same, the lines not read. */
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", "--strategy=freeze", NULL), EXIT_OK);
        for (size_t i = 0; i < ELEMENTSOF(units); i++)
                ck_assert_msg(wait_frozen(units[i], true), "%s not frozen by --strategy=freeze", units[i]);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
}
END_TEST

/* The child of test_unit_strategies_new_thread: on each byte on go[0] it
 * makes a thread that sleeps, and sends its tid on tid[1]. */
typedef struct ThreadMaker {
        int go[2], tid[2];
} ThreadMaker;

static void *sleep_forever(void *p) {
        pid_t t = gettid();
        (void) !write(*(int *) p, &t, sizeof(t));
        for (;;)
                pause();
        return NULL;
}

static void make_threads(void *userdata) {
        ThreadMaker *tm = userdata;
        char c;

        close(tm->go[1]);
        close(tm->tid[0]);
        while (read(tm->go[0], &c, 1) == 1) {
                pthread_t th;
                if (pthread_create(&th, NULL, sleep_forever, &tm->tid[1]) != 0)
                        _exit(1);
        }
        _exit(0);
}

/* A thread made during standby in a unit slacked with a bound of its own
 * starts with that bound, and exit gives it the kernel's default (its
 * unit's bound, not the journal's, tells it from a thread of its own
 * slack). */
START_TEST(test_unit_strategies_new_thread) {
        ThreadMaker tm;
        pid_t main_tid, made;
        uint64_t v;

        if (!test_need_root_cgroup2())
                return;
        test_write_config("[Strategy]\nSlack=30s maker.service\n");
        ck_assert_int_eq(pipe2(tm.go, O_CLOEXEC), 0);
        ck_assert_int_eq(pipe2(tm.tid, O_CLOEXEC), 0);
        main_tid = test_fork("maker.service", make_threads, &tm);
        close(tm.go[0]);
        close(tm.tid[1]);

        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert_int_eq(slack_get(main_tid, &v), 0);
        ck_assert_uint_eq(v, UINT64_C(30000000000));
        ck_assert_int_eq(write(tm.go[1], "t", 1), 1);
        struct pollfd pf = { .fd = tm.tid[0], .events = POLLIN };
        ck_assert_int_eq(poll(&pf, 1, 10000), 1);
        ck_assert_int_eq(read(tm.tid[0], &made, sizeof(made)), (ssize_t) sizeof(made));
        ck_assert_int_eq(slack_get(made, &v), 0);
        ck_assert_uint_eq(v, UINT64_C(30000000000));

        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert_int_eq(slack_get(main_tid, &v), 0);
        ck_assert_uint_eq(v, SLACK_KERNEL_DEFAULT_NS);
        ck_assert_int_eq(slack_get(made, &v), 0);
        ck_assert_uint_eq(v, SLACK_KERNEL_DEFAULT_NS);
        close(tm.go[1]);
        close(tm.tid[0]);
}
END_TEST

Suite *manager_suite(void) {
        Suite *s = suite_create("manager");
        TCase *tc = test_kernel_tcase(s, "cli", 120);
        tcase_add_test(tc, test_enter_exit_progress);
        tcase_add_test(tc, test_exemptions);
        tcase_add_test(tc, test_session_scopes);
        tcase_add_test(tc, test_thaw_window);
        tcase_add_test(tc, test_thaw_name_within_targets);
        tcase_add_test(tc, test_freeze_thaw_verbs);
        tcase_add_test(tc, test_freeze_journal_lags);
        tcase_add_test(tc, test_bad_input);
        tcase_add_test(tc, test_not_root_and_no_cgroup2);
        tcase_add_test(tc, test_freeze_timeout_skip);
        tcase_add_test(tc, test_freeze_timeout_abort);
        tcase_add_test(tc, test_deadlock_guard_flock);
        tcase_add_test(tc, test_deadlock_guard_posix);
        tcase_add_test(tc, test_slack_strategy_timers);
        tcase_add_test(tc, test_unit_strategies_mixed);
        tcase_add_test(tc, test_unit_strategies_new_thread);
        return s;
}
