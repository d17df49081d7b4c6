/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Hostile input on real cgroups: the first promise is that whatever happens
 * (a cgroup name of any bytes, any depth or length, a full state directory,
 * a corrupt journal, a mount below the tree) `standby-manager exit` gives the
 * machine back. Every case ends with exit and a check, by a walk of its own
 * (not standby's), that nothing below the test's subtree is frozen. */
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <linux/input.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>

#include "cgroup.h"
#include "fileio.h"
#include "journal.h"
#include "json.h"
#include "macro.h"
#include "standby.h"
#include "strv.h"
#include "test-util.h"

/* The test's own walk: by fd, any name, any depth, counting cgroups whose
 * cgroup.freeze or cgroup.events says frozen. */
static void count_frozen_rec(int fd, unsigned depth, size_t *frozen, size_t *seen) {
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_free_ char *ev = NULL, *fr = NULL;
        struct dirent *de;

        ck_assert_uint_lt(depth, 2000);
        (*seen)++;
        if (read_full_fileat(fd, "cgroup.freeze", &fr, NULL) >= 0 && fr[0] == '1')
                (*frozen)++;
        else if (read_full_fileat(fd, "cgroup.events", &ev, NULL) >= 0 && strstr(ev, "frozen 1"))
                (*frozen)++;
        ck_assert_int_eq(opendir_at(fd, ".", &d), 0);
        while ((de = readdir(d)))
                if (de->d_type == DT_DIR && !streq(de->d_name, ".") && !streq(de->d_name, "..")) {
                        int c = openat(fd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                        struct stat a, b;
                        if (c < 0)
                                continue;
                        /* Not across a mount point (the bind mount test). */
                        if (fstat(fd, &a) == 0 && fstat(c, &b) == 0 && a.st_dev == b.st_dev &&
                            faccessat(c, "cgroup.events", F_OK, 0) == 0)
                                count_frozen_rec(c, depth + 1, frozen, seen);
                        close(c);
                }
}

static size_t count_frozen(size_t *ret_seen) {
        _cleanup_close_ int fd = test_cgroup(NULL);
        size_t frozen = 0, seen = 0;

        count_frozen_rec(fd, 0, &frozen, &seen);
        if (ret_seen)
                *ret_seen = seen;
        return frozen;
}

static void assert_nothing_frozen(const char *when) {
        size_t seen = 0, n = count_frozen(&seen);
        ck_assert_msg(n == 0, "%s: %zu of %zu cgroups below the test's target still frozen", when, n, seen);
}

/* Path of the journal in T's state directory (a static buffer). */
static const char *journal_path(void) {
        static char p[4096];
        snprintf(p, sizeof(p), "%s/" JOURNAL_FILE, T.state_dir);
        return p;
}

static bool journal_exists(void) {
        return access(journal_path(), F_OK) == 0;
}

/* Creates base/<path>, component by component below fds (so that neither a
 * name nor the path has any limit but the kernel's); returns the last fd or
 * a negative errno of the kernel's. */
static int mk_path(const char *path) {
        _cleanup_free_ char *copy = strdup(path);
        int dir = test_cgroup(NULL);
        char *p = copy;

        ck_assert_ptr_nonnull(copy);
        for (char *c; (c = strsep(&p, "/"));) {
                if (mkdirat(dir, c, 0755) < 0 && errno != EEXIST) {
                        int r = -errno;
                        close(dir);
                        return r;
                }
                int n = openat(dir, c, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                ck_assert_int_ge(n, 0);
                close(dir);
                dir = n;
        }
        return dir;
}

/* A process that only waits, in the cgroup cg_fd (closed here). */
static pid_t park_in(int cg_fd) {
        int sync[2];
        char c;

        ck_assert_int_eq(pipe2(sync, O_CLOEXEC), 0);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                if (cgroup_attach(cg_fd, getpid()) < 0)
                        _exit(127);
                (void) !write(sync[1], "k", 1);
                for (;;)
                        pause();
        }
        close(sync[1]);
        ck_assert_int_eq(read(sync[0], &c, 1), 1);
        close(sync[0]);
        close(cg_fd);
        ck_assert_int_lt(T.n_pids, TEST_MAX_PIDS);
        T.pids[T.n_pids++] = pid;
        return pid;
}

static bool frozen_fd(int fd) {
        bool f = false;
        ck_assert_int_eq(cgroup_get_frozen(fd, &f, NULL), 0);
        return f;
}

/* Whether s is valid UTF-8 (what JSON must be). */
static bool valid_utf8(const char *s) {
        for (const unsigned char *p = (const unsigned char *) s; *p;) {
                size_t n = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3 : (*p & 0xf8) == 0xf0 ? 4 : 0;
                if (n == 0 || (n == 2 && *p < 0xc2))
                        return false;
                for (size_t i = 1; i < n; i++)
                        if ((p[i] & 0xc0) != 0x80)
                                return false;
                p += n;
        }
        return true;
}

/* Names with every byte from 1 to 255 (but '/'), names of NAME_MAX bytes
 * of ASCII, spaces and UTF-8: enter freezes each, status --json stays
 * valid UTF-8, exit thaws each. */
START_TEST(test_any_byte_names) {
        _cleanup_free_ char *out = NULL, *err = NULL;
        int fds[300];
        size_t n = 0;
        char name[NAME_MAX + 8];

        if (!test_need_root_cgroup2())
                return;
        for (int c = 1; c < 256; c++) {
                if (c == '/')
                        continue;
                snprintf(name, sizeof(name), "b/a%cz", c);
                int fd = mk_path(name);
                if (c == '\n') {
                        /* The kernel's own rule: /proc/PID/cgroup must stay parsable. */
                        ck_assert_int_eq(fd, -EINVAL);
                        continue;
                }
                ck_assert_msg(fd >= 0, "byte %d refused: %s", c, strerror(-fd));
                if (c % 8 == 1 || c == '\t' || c == ' ' || c == '\\' || c == 0x7f || c == 0xff)
                        fds[n++] = fcntl(fd, F_DUPFD_CLOEXEC, 3), park_in(fd);
                else
                        close(fd);
        }
        static const char * const longs[] = { "x", " ", "\xc3\xa9", "\t" };
        for (size_t k = 0; k < ELEMENTSOF(longs); k++) {
                size_t len = 0, l = strlen(longs[k]);
                memcpy(name, "l/", 2);
                while (len + l <= NAME_MAX) {
                        memcpy(name + 2 + len, longs[k], l);
                        len += l;
                }
                name[2 + len] = 0;
                int fd = mk_path(name);
                ck_assert_int_ge(fd, 0);
                fds[n++] = fcntl(fd, F_DUPFD_CLOEXEC, 3);
                park_in(fd);
        }

        ck_assert_int_eq(test_manager(&err, "enter", NULL), EXIT_OK);
        for (size_t i = 0; i < n; i++)
                ck_assert_msg(frozen_fd(fds[i]), "unit %zu not frozen (%s)", i, err);
        ck_assert_int_eq(test_manager_env(NULL, &out, NULL, "status", "--json", NULL), EXIT_OK);
        ck_assert_msg(valid_utf8(out), "status --json is not UTF-8");
        ck_assert_int_eq(test_manager(NULL, "exit", NULL), EXIT_OK);
        assert_nothing_frozen("after exit");
        ck_assert(!journal_exists());
        for (size_t i = 0; i < n; i++)
                close(fds[i]);
}
END_TEST

/* Depth 100, and a path far beyond PATH_MAX (20 names of NAME_MAX bytes). */
START_TEST(test_deep_and_long) {
        _cleanup_free_ char *deep = NULL, *longp = NULL, *err = NULL;
        size_t len = 0;

        if (!test_need_root_cgroup2())
                return;
        deep = calloc(1, 100 * 2 + 8);
        longp = calloc(1, 20 * (NAME_MAX + 1) + 8);
        ck_assert(deep && longp);
        for (int i = 0; i < 100; i++)
                len += (size_t) sprintf(deep + len, "%sd", i ? "/" : "");
        len = 0;
        for (int i = 0; i < 20; i++) {
                if (i)
                        longp[len++] = '/';
                memset(longp + len, 'a' + i, NAME_MAX);
                len += NAME_MAX;
        }
        ck_assert_uint_gt(strlen(longp), 4096);
        int d = mk_path(deep), l = mk_path(longp);
        ck_assert_int_ge(d, 0);
        ck_assert_int_ge(l, 0);
        int dd = fcntl(d, F_DUPFD_CLOEXEC, 3), ll = fcntl(l, F_DUPFD_CLOEXEC, 3);
        park_in(d);
        park_in(l);
        int w = mk_path("plain.service");
        int ww = fcntl(w, F_DUPFD_CLOEXEC, 3);
        park_in(w);

        ck_assert_int_eq(test_manager(&err, "enter", NULL), EXIT_OK);
        ck_assert_msg(frozen_fd(dd) && frozen_fd(ll) && frozen_fd(ww), "not all frozen: %s", err);
        ck_assert_int_eq(test_manager(NULL, "exit", NULL), EXIT_OK);
        assert_nothing_frozen("after exit");
        ck_assert(!journal_exists());
        close(dd);
        close(ll);
        close(ww);
}
END_TEST

/* Paths long enough that their journal lines would not fit (twelve leaves
 * 900 levels down, names of 255 spaces: 0.9 MB each once escaped): the
 * longest are left running and said so, the rest is frozen, and a unit of
 * an ordinary name is not kept out by them. */
START_TEST(test_journal_budget) {
        _cleanup_free_ char *prefix = NULL, *err = NULL;
        size_t len = 0;
        char leaf[64];

        if (!test_need_root_cgroup2())
                return;
        prefix = malloc(900 * (NAME_MAX + 1) + 64);
        ck_assert_ptr_nonnull(prefix);
        for (int i = 0; i < 900; i++) {
                if (i)
                        prefix[len++] = '/';
                memset(prefix + len, ' ', NAME_MAX);
                len += NAME_MAX;
        }
        prefix[len] = 0;
        for (int i = 0; i < 12; i++) {
                _cleanup_free_ char *p = NULL;
                snprintf(leaf, sizeof(leaf), "/leaf%02d", i);
                ck_assert_int_ge(asprintf(&p, "%s%s", prefix, leaf), 0);
                int fd = mk_path(p);
                ck_assert_int_ge(fd, 0);
                close(fd);
        }
        int w = mk_path("plain.service"), ww = fcntl(w, F_DUPFD_CLOEXEC, 3);
        park_in(w);

        ck_assert_int_eq(test_manager(&err, "enter", NULL), EXIT_OK);
        ck_assert_msg(strstr(err, "is too long to record with the others"), "stderr: %.300s", err);
        ck_assert(frozen_fd(ww));
        size_t seen = 0, n = count_frozen(&seen);
        ck_assert_msg(n >= 9 + 1 && n < 12 + 1, "%zu frozen", n);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        assert_nothing_frozen("after exit");
        close(ww);
}
END_TEST

static void spawn_units(int n) {
        char sub[64];
        for (int i = 0; i < n; i++) {
                snprintf(sub, sizeof(sub), "u%02d.service", i);
                test_spawn_workload(sub, "idle", 100, 1, NULL);
        }
}

static void write_state(const char *text, size_t len) {
        int fd = open(journal_path(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, len), (ssize_t) len);
        close(fd);
}

static char *read_state(size_t *ret_len) {
        char *buf = NULL;
        ck_assert_int_eq(read_full_fileat(AT_FDCWD, journal_path(), &buf, ret_len), 0);
        return buf;
}

/* Corrupt journals of every kind, each left by a real enter: exit thaws
 * what the journal still names and the walk finds the rest; exit 0, no
 * journal left, nothing frozen. Then enter works again. */
START_TEST(test_corrupt_journals) {
        static const char * const kinds[] = { "truncated", "no end line", "bad header", "a bad unit line",
                                              "binary garbage", "a huge line", "empty", "every unit line lost" };

        if (!test_need_root_cgroup2())
                return;
        spawn_units(6);
        for (size_t k = 0; k < ELEMENTSOF(kinds); k++) {
                _cleanup_free_ char *good = NULL, *bad = NULL, *err = NULL;
                size_t len = 0, blen = 0;

                ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
                ck_assert_uint_eq(count_frozen(NULL), 6);
                good = read_state(&len);
                bad = malloc(len + 3 * 1024 * 1024);
                ck_assert_ptr_nonnull(bad);
                switch (k) {
                case 0:
                        blen = len / 2;
                        memcpy(bad, good, blen);
                        break;
                case 1:
                        blen = len - strlen("end\n");
                        memcpy(bad, good, blen);
                        break;
                case 2:
                        memcpy(bad, good, len);
                        memcpy(bad, "standby-journal 9", strlen("standby-journal 9"));
                        blen = len;
                        break;
                case 3: {
                        char *u = strstr(good, "\nunit frozen ");
                        ck_assert_ptr_nonnull(u);
                        blen = (size_t) (u - good) + 1;
                        memcpy(bad, good, blen);
                        blen += (size_t) sprintf(bad + blen, "unit frozen 0 \\x2fetc \\-\nunit molten 0 x \\-\n");
                        memcpy(bad + blen, u + 1, len - (size_t) (u - good) - 1);
                        blen += len - (size_t) (u - good) - 1;
                        break;
                }
                case 4:
                        for (blen = 0; blen < 64 * 1024; blen++)
                                bad[blen] = (char) ((blen * 2654435761u) >> 13);
                        break;
                case 5: {
                        char *e = strstr(good, "\nend\n");
                        ck_assert_ptr_nonnull(e);
                        blen = (size_t) (e - good) + 1;
                        memcpy(bad, good, blen);
                        memcpy(bad + blen, "unit frozen 0 ", 14);
                        blen += 14;
                        memset(bad + blen, 'y', 2 * 1024 * 1024);
                        blen += 2 * 1024 * 1024;
                        memcpy(bad + blen, " \\-\nend\n", 8);
                        blen += 8;
                        break;
                }
                case 6:
                        blen = 0;
                        break;
                case 7: {
                        char *u = strstr(good, "\nunit ");
                        ck_assert_ptr_nonnull(u);
                        blen = (size_t) (u - good) + 1;
                        memcpy(bad, good, blen);
                        blen += (size_t) sprintf(bad + blen, "end\n");
                        break;
                }
                }
                write_state(bad, blen);
                int code = test_manager(&err, "exit", NULL);
                ck_assert_msg(code == EXIT_OK, "%s: exit %d: %s", kinds[k], code, err);
                size_t seen = 0, n = count_frozen(&seen);
                ck_assert_msg(n == 0, "%s: %zu cgroups still frozen: %s", kinds[k], n, err);
                ck_assert_msg(!journal_exists(), "%s: the journal was not repaired", kinds[k]);
                if (k == 3)
                        ck_assert_msg(strstr(err, "unknown unit state"), "the bad line is not reported: %s", err);
        }
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        assert_nothing_frozen("at the end");
}
END_TEST

/* A chain of empty cgroups deeper than the walks go (CGROUP_DEPTH_MAX),
 * which any user can make in his delegated subtree: enter never freezes
 * there, and exit can only say it could not check it. That must not wedge
 * standby: exit left a journal naming nothing in phase "exiting", and
 * every later enter refused to run ("already entered", status 6). */
START_TEST(test_deeper_than_walks) {
        _cleanup_free_ char *err = NULL;
        enum { LEVELS = CGROUP_DEPTH_MAX + 10 };
        _cleanup_free_ int *fds = calloc(LEVELS + 1, sizeof(int));

        if (!test_need_root_cgroup2())
                return;
        ck_assert_ptr_nonnull(fds);
        fds[0] = test_cgroup(NULL);
        for (int i = 1; i <= LEVELS; i++) {
                ck_assert_int_eq(mkdirat(fds[i - 1], "d", 0755), 0);
                fds[i] = openat(fds[i - 1], "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                ck_assert_int_ge(fds[i], 0);
        }
        spawn_units(1);

        int entered = test_manager(NULL, "--quiet", "enter", NULL);
        bool frozen = test_frozen("u00.service");
        int left = test_manager(&err, "exit", NULL);
        bool thawed = !test_frozen("u00.service"), journal = journal_exists();
        int again = test_manager(NULL, "--quiet", "enter", NULL);
        (void) test_manager(NULL, "--quiet", "exit", NULL);

        /* The fixture's teardown walks no deeper than the walks do: the
         * chain goes first, whatever the outcome. */
        for (int i = LEVELS; i >= 1; i--) {
                close(fds[i]);
                ck_assert_int_eq(unlinkat(fds[i - 1], "d", AT_REMOVEDIR), 0);
        }
        close(fds[0]);
        ck_assert_int_eq(entered, EXIT_OK);
        ck_assert(frozen);
        ck_assert(thawed);
        /* Nothing is frozen down there: exit says standby was left. */
        ck_assert_msg(left == EXIT_OK, "exit: %d: %s", left, err);
        ck_assert_msg(!journal, "exit kept a journal that names nothing: %s", err);
        ck_assert_int_eq(again, EXIT_OK);
        assert_nothing_frozen("at the end");
}
END_TEST

/* Frozen deeper than the walks go: a user freezes a cgroup of his own
 * chain past CGROUP_DEPTH_MAX (he owns its cgroup.freeze), with a process
 * below it, and another in a cgroup that froze itself further down. exit
 * (no journal: only its walk can find them) thaws each where its
 * cgroup.freeze reads 1, and says standby was left. */
START_TEST(test_frozen_deeper_than_walks) {
        _cleanup_free_ char *err = NULL;
        enum { LEVELS = CGROUP_DEPTH_MAX + 20, HIGH = CGROUP_DEPTH_MAX + 5, LOW = CGROUP_DEPTH_MAX + 15 };
        _cleanup_free_ int *fds = calloc(LEVELS + 1, sizeof(int));

        if (!test_need_root_cgroup2())
                return;
        ck_assert_ptr_nonnull(fds);
        fds[0] = test_cgroup(NULL);
        for (int i = 1; i <= LEVELS; i++) {
                ck_assert_int_eq(mkdirat(fds[i - 1], "d", 0755), 0);
                fds[i] = openat(fds[i - 1], "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                ck_assert_int_ge(fds[i], 0);
        }
        /* A side branch at HIGH, with a process, frozen by its ancestor. */
        ck_assert_int_eq(mkdirat(fds[HIGH], "side", 0755), 0);
        int side = openat(fds[HIGH], "side", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        ck_assert_int_ge(side, 0);
        pid_t p_side = park_in(fcntl(side, F_DUPFD_CLOEXEC, 3));
        pid_t p_low = park_in(fcntl(fds[LEVELS], F_DUPFD_CLOEXEC, 3));
        ck_assert_int_eq(cgroup_set_freeze(fds[LOW], true), 0);
        ck_assert_int_eq(cgroup_set_freeze(fds[HIGH], true), 0);
        ck_assert_int_eq(cgroup_wait_frozen(&fds[LEVELS], 1, true, now_usec(CLOCK_MONOTONIC) + 5 * USEC_PER_SEC, NULL), 0);
        ck_assert_int_eq(cgroup_wait_frozen(&side, 1, true, now_usec(CLOCK_MONOTONIC) + 5 * USEC_PER_SEC, NULL), 0);
        /* No journal names them: only the walk can find them. */
        int left = test_manager(&err, "exit", NULL);
        bool high_frozen = true, low_frozen = true, side_frozen = true;
        (void) cgroup_get_freeze(fds[HIGH], &high_frozen);
        (void) cgroup_get_freeze(fds[LOW], &low_frozen);
        bool bottom_frozen = frozen_fd(fds[LEVELS]);
        side_frozen = frozen_fd(side);

        /* The fixture's teardown walks no deeper than the walks do: the
         * processes and the chain go first, whatever the outcome. */
        (void) cgroup_set_freeze(fds[HIGH], false);
        (void) cgroup_set_freeze(fds[LOW], false);
        ck_assert_int_eq(kill(p_side, SIGKILL), 0);
        ck_assert_int_eq(kill(p_low, SIGKILL), 0);
        ck_assert_int_eq(waitpid(p_side, NULL, 0), p_side);
        ck_assert_int_eq(waitpid(p_low, NULL, 0), p_low);
        ck_assert(test_wait_unpopulated(fds[HIGH], 5 * USEC_PER_SEC));
        close(side);
        ck_assert_int_eq(unlinkat(fds[HIGH], "side", AT_REMOVEDIR), 0);
        for (int i = LEVELS; i >= 1; i--) {
                close(fds[i]);
                ck_assert_int_eq(unlinkat(fds[i - 1], "d", AT_REMOVEDIR), 0);
        }
        close(fds[0]);
        ck_assert_msg(left == EXIT_OK, "exit: %d: %s", left, err);
        ck_assert_msg(!high_frozen && !low_frozen, "cgroup.freeze still 1 (%d, %d): %s", high_frozen, low_frozen, err);
        ck_assert_msg(!bottom_frozen && !side_frozen, "still frozen: %s", err);
        ck_assert_msg(strstr(err, "levels below"), "%s", err);
        assert_nothing_frozen("at the end");
}
END_TEST

/* An exit that cannot thaw everything (the target frozen from above it,
 * outside standby's reach) fails, and its journal names what stayed
 * frozen, in phase "exiting". The next enter (the lid closed again) must
 * enter all the same, not answer "already entered": else standby could not
 * be entered again until root ran exit by hand. */
START_TEST(test_enter_after_failed_exit) {
        _cleanup_free_ char *err = NULL, *err2 = NULL;
        char extra[512];
        _cleanup_close_ int base = test_cgroup(NULL);

        if (!test_need_root_cgroup2())
                return;
        snprintf(extra, sizeof(extra), "Targets=\nTargets=%s\n", test_cgpath("t.slice"));
        test_write_config(extra);
        test_spawn_workload("t.slice/a.service", "idle", 100, 1, NULL);
        test_spawn_workload("t.slice/b.service", "idle", 100, 1, NULL);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert_int_eq(cgroup_set_freeze(base, true), 0);
        int left = test_manager(&err, "exit", NULL);
        ck_assert_int_eq(cgroup_set_freeze(base, false), 0);
        ck_assert_msg(left == EXIT_FAILURE_GENERIC, "exit: %d: %s", left, err);
        ck_assert(journal_exists());

        int entered = test_manager(&err2, "enter", NULL);
        ck_assert_msg(entered == EXIT_OK, "enter: %d: %s", entered, err2);
        ck_assert_msg(strstr(err2, "entering all the same"), "%s", err2);
        ck_assert(test_frozen("t.slice/a.service"));
        ck_assert(test_frozen("t.slice/b.service"));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(!journal_exists());
        assert_nothing_frozen("at the end");
}
END_TEST

/* A user who freezes a cgroup of theirs above one of their own frozen units
 * keeps that unit's thaw from showing until the walk thaws the parent: the
 * unit is then running, and exit succeeds (counted as stuck, it would keep
 * the journal in "exiting" and fail every exit). */
START_TEST(test_exit_over_users_own_parent_freeze) {
        _cleanup_free_ char *err = NULL;

        if (!test_need_root_cgroup2())
                return;
        test_spawn_workload("own.slice/app.service", "idle", 100, 1, NULL);
        test_spawn_workload("other.service", "idle", 100, 1, NULL);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        _cleanup_close_ int parent = test_cgroup("own.slice");
        ck_assert_int_eq(cgroup_set_freeze(parent, true), 0);
        int left = test_manager(&err, "exit", NULL);
        ck_assert_msg(left == EXIT_OK, "exit: %d: %s", left, err);
        ck_assert(!journal_exists());
        assert_nothing_frozen("after exit");
}
END_TEST

/* Each run of enter and exit under a descriptor limit (hard and soft,
 * inherited by the manager): cgroup fds for every unit plus a cgroup.events
 * fd for each one waited on would need twice as many. */
static int manager_with_nofile(rlim_t limit, char **ret_err, const char *verb) {
        int pipefd[2];
        ck_assert_int_eq(pipe2(pipefd, O_CLOEXEC), 0);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                struct rlimit rl = { limit, limit };
                dup2(pipefd[1], STDERR_FILENO);
                /* Only the standard three: what the limit leaves is the
                 * manager's alone, as when a service starts it. */
                if (close_range(3, ~0U, 0) < 0 || setrlimit(RLIMIT_NOFILE, &rl) < 0)
                        _exit(126);
                execl(test_bin("standby-manager"), "standby-manager", "--config", T.config, "--state-dir", T.state_dir,
                      verb, NULL);
                _exit(127);
        }
        close(pipefd[1]);
        FILE *f = fdopen(pipefd[0], "re");
        ck_assert_ptr_nonnull(f);
        size_t size = 0;
        FILE *out = open_memstream(ret_err, &size);
        ck_assert_ptr_nonnull(out);
        int c;
        while ((c = fgetc(f)) != EOF)
                fputc(c, out);
        fclose(out);
        fclose(f);
        int status;
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static void make_empty_units(int base, int n) {
        char name[32];
        for (int i = 0; i < n; i++) {
                snprintf(name, sizeof(name), "e%03d.service", i);
                ck_assert_int_eq(mkdirat(base, name, 0755), 0);
        }
}

/* Any user can make empty cgroups by the thousand: enter and exit must not
 * need a second descriptor for each one they wait on. */
START_TEST(test_enter_exit_few_descriptors) {
        _cleanup_free_ char *err = NULL, *err2 = NULL;
        _cleanup_close_ int base = test_cgroup(NULL);

        if (!test_need_root_cgroup2())
                return;
        make_empty_units(base, 150);
        int entered = manager_with_nofile(200, &err, "enter");
        ck_assert_msg(entered == EXIT_OK, "enter: %d: %s", entered, err);
        ck_assert(test_frozen("e000.service"));
        ck_assert(test_frozen("e149.service"));
        int left = manager_with_nofile(200, &err2, "exit");
        ck_assert_msg(left == EXIT_OK, "exit: %d: %s", left, err2);
        ck_assert(!journal_exists());
        assert_nothing_frozen("after exit");
}
END_TEST

/* Frozen cgroups no journal names, more than descriptors allow, one level
 * down: exit's walk thaws and waits for them a window at a time. With a
 * descriptor kept for each, they ran out after 190: the walk went on with
 * the one left, and the rest were thawed but neither waited for (one
 * still frozen under a frozen parent would not have been reported) nor
 * counted. */
START_TEST(test_exit_walk_few_descriptors) {
        _cleanup_free_ char *err = NULL;
        char name[64];

        if (!test_need_root_cgroup2())
                return;
        for (int i = 0; i < 300; i++) {
                snprintf(name, sizeof(name), "s%03d.slice/x.service", i);
                int fd = mk_path(name);
                ck_assert_int_ge(fd, 0);
                ck_assert_int_eq(cgroup_set_freeze(fd, true), 0);
                close(fd);
        }
        ck_assert(test_frozen("s299.slice/x.service"));
        int left = manager_with_nofile(200, &err, "exit");
        size_t len = strlen(err);
        const char *tail = err + (len > 1000 ? len - 1000 : 0);
        ck_assert_msg(left == EXIT_OK, "exit: %d: ...%s", left, tail);
        ck_assert_msg(strstr(err, "No journal, but 300 cgroups"), "stderr: ...%s", tail);
        assert_nothing_frozen("after exit");
}
END_TEST

/* A journal that is no regular file (a FIFO, made by an unlucky admin or a
 * script gone wrong) is a journal lost, not a wait: exit thaws through the
 * walk at once. A helper holds the FIFO's only write end open until the
 * test releases it (20 s at most): an exit that reads the FIFO waits for it
 * to go. */
START_TEST(test_journal_fifo) {
        _cleanup_free_ char *err = NULL;
        const char *p = journal_path();

        if (!test_need_root_cgroup2())
                return;
        spawn_units(2);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert_uint_eq(count_frozen(NULL), 2);
        ck_assert_int_eq(unlink(p), 0);
        ck_assert_int_eq(mkfifo(p, 0600), 0);
        int fd = open(p, O_RDWR | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        int release;
        pid_t helper = test_fork_until_released(20 * USEC_PER_SEC, NULL, NULL, &release);
        close(fd);

        int code = test_manager(&err, "exit", NULL);
        bool waited = waitpid(helper, NULL, WNOHANG) != 0;
        close(release);
        (void) waitpid(helper, NULL, 0);
        ck_assert_msg(!waited, "exit waited for the FIFO's writer: %s", err);
        ck_assert_msg(code == EXIT_OK, "exit %d: %s", code, err);
        assert_nothing_frozen("after exit");
        (void) unlink(p);
}
END_TEST

/* Whether sub is thawed (for test_wait_for). */
static bool is_thawed(void *userdata) {
        return !test_frozen(userdata);
}

/* A standby-listener on the test's config and state directory, with a bus
 * of its own and one push rule for u00.service, as a real setup has. */
typedef struct HostileListener {
        char dir[32], address[512], rules[64], rule[96], notify[64], env[96];
        pid_t dbus, pid;
        int notify_fd;
        bool nofile_hard;          /* the limit of open files is the hard one too: not raised */
        const char *more_rules[4]; /* [name, text, ...]: more rule files */
} HostileListener;

/* Starts l (under a soft limit of open files of nofile when not 0, as
 * systemd starts a service) and waits, bounded (10 s), for its READY=1;
 * returns whether it came. */
static bool listener_start(HostileListener *l, rlim_t nofile) {
        char buf[512];

        snprintf(l->dir, sizeof(l->dir), "/tmp/standby-hostile-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(l->dir));
        ck_assert_int_eq(chmod(l->dir, 0755), 0);
        l->dbus = test_start_dbus(l->dir, l->address, sizeof(l->address));
        snprintf(l->rules, sizeof(l->rules), "%s/rules", l->dir);
        ck_assert_int_eq(mkdir(l->rules, 0755), 0);
        snprintf(l->rule, sizeof(l->rule), "%s/push.rule", l->rules);
        FILE *rf = fopen(l->rule, "we");
        ck_assert_ptr_nonnull(rf);
        fputs("[Match]\nEvent=push\nUnit=u00.service\n\n[Action]\nThaw=u00.service\n", rf);
        fclose(rf);
        for (size_t i = 0; i + 1 < ELEMENTSOF(l->more_rules) && l->more_rules[i]; i += 2) {
                snprintf(buf, sizeof(buf), "%s/%s", l->rules, l->more_rules[i]);
                rf = fopen(buf, "we");
                ck_assert_ptr_nonnull(rf);
                fputs(l->more_rules[i + 1], rf);
                fclose(rf);
        }
        snprintf(l->notify, sizeof(l->notify), "%s/notify", l->dir);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", l->notify);
        l->notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        ck_assert_int_ge(l->notify_fd, 0);
        ck_assert_int_eq(bind(l->notify_fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        snprintf(l->env, sizeof(l->env), "NOTIFY_SOCKET=%s", l->notify);

        l->pid = fork();
        ck_assert_int_ge(l->pid, 0);
        if (l->pid == 0) {
                if (nofile > 0) {
                        struct rlimit rl;
                        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                                _exit(127);
                        rl.rlim_cur = MIN(rl.rlim_max, nofile);
                        if (l->nofile_hard)
                                rl.rlim_max = rl.rlim_cur;
                        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                                _exit(127);
                }
                putenv(l->env);
                execl(test_bin("standby-listener"), "standby-listener", "--config", T.config, "--state-dir",
                      T.state_dir, "--rules-dir", l->rules, "--bus-address", l->address, NULL);
                _exit(127);
        }
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC;
        for (;;) {
                struct pollfd p = { .fd = l->notify_fd, .events = POLLIN };
                int t = deadline_poll_timeout(deadline);
                if (t == 0 || poll(&p, 1, t) <= 0)
                        return false;
                ssize_t n = recv(l->notify_fd, buf, sizeof(buf) - 1, 0);
                if (n <= 0)
                        return false;
                buf[n] = 0;
                if (strstr(buf, "READY=1"))
                        return true;
        }
}

/* SIGTERM to l's listener, its bus stopped, what listener_start() made
 * removed. Returns what waitpid() returned, the wait status in
 * ret_status. */
static pid_t listener_stop(HostileListener *l, int *ret_status) {
        (void) kill(l->pid, SIGTERM);
        pid_t r = waitpid(l->pid, ret_status, 0);
        test_stop_pid(l->dbus);
        unlink(l->notify);
        safe_close(l->notify_fd);
        unlink(l->rule);
        for (size_t i = 0; i + 1 < ELEMENTSOF(l->more_rules) && l->more_rules[i]; i += 2) {
                char p[128];
                snprintf(p, sizeof(p), "%s/%s", l->rules, l->more_rules[i]);
                unlink(p);
        }
        rmdir(l->rules);
        rmdir(l->dir);
        return r;
}

/* Empty cgroups cost a user nothing, and enter freezes and records every
 * leaf: 1500 of them are 1500 journal units, and the listener keeps two fds
 * open per unit. Under systemd's default soft limit of open files (1024)
 * it ran out of them: it could no longer read the journal, so after the
 * next enter a push for a unit it should thaw left it frozen (and no
 * ExitStandby= rule could end standby). The listener is started with that
 * soft limit, as systemd starts a service. */
START_TEST(test_listener_many_units) {
        HostileListener l = {};
        char buf[512], cmd[1024];
        _cleanup_close_ int many = -EBADF;

        if (!test_need_root_cgroup2())
                return;
        spawn_units(1);
        _cleanup_close_ int base = test_cgroup(NULL);
        ck_assert_int_eq(mkdirat(base, "many", 0755), 0);
        many = openat(base, "many", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(many, 0);
        for (int i = 0; i < 1500; i++) {
                snprintf(buf, sizeof(buf), "e%d", i);
                ck_assert_int_eq(mkdirat(many, buf, 0755), 0);
        }

        bool ready = listener_start(&l, 1024), thawed = false;
        if (ready) {
                /* Two journals in a row: the second one is read with the
                 * first one's units held. */
                ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
                ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
                ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
                ck_assert(test_frozen("u00.service"));
                /* The listener's reply to a later call comes after it took
                 * the journal change (its journal watch goes first). */
                snprintf(cmd, sizeof(cmd),
                         "busctl --address=%s call org.standby.Listener1 /org/standby/Listener1 "
                         "org.standby.Listener1 Push ss u00.service test 2>&1",
                         l.address);
                _cleanup_free_ char *out = NULL;
                ck_assert_msg(test_run_shell(cmd, &out) == 0, "push: %s", out);
                thawed = test_wait_for(is_thawed, (void *) "u00.service", 5 * USEC_PER_SEC);
        }
        (void) listener_stop(&l, NULL);
        ck_assert_msg(ready, "the listener did not start");
        ck_assert_msg(thawed, "a push did not thaw u00.service with 1500 other units in the journal");
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        assert_nothing_frozen("after exit");
}
END_TEST

/* The value of statistic key of l's listener, or -1. */
static int64_t listener_statistic(HostileListener *l, const char *key) {
        _cleanup_free_ char *out = NULL;
        char cmd[1024], want[64];

        snprintf(cmd, sizeof(cmd),
                 "busctl --address=%s call org.standby.Listener1 /org/standby/Listener1 org.standby.Listener1 "
                 "GetStatistics 2>&1",
                 l->address);
        if (test_run_shell(cmd, &out) != 0)
                return -1;
        snprintf(want, sizeof(want), "\"%s\" ", key);
        const char *at = strstr(out, want);
        return at ? (int64_t) strtoull(at + strlen(want), NULL, 10) : -1;
}

/* A process in cgroup sub (made, owned by uid if uid != 0) that holds n
 * connected stream sockets (socketpairs), then waits; peer (if not NULL)
 * gets the other end of the first one. It runs as uid. */
static void park_with_sockets(const char *sub, uid_t uid, int n, int *ret_peer) {
        int cg = mk_path(sub), sync[2], first[2];

        ck_assert_int_ge(cg, 0);
        if (uid != 0)
                ck_assert_int_eq(fchown(cg, uid, uid), 0);
        ck_assert_int_eq(pipe2(sync, O_CLOEXEC), 0);
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, first), 0);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                struct rlimit rl = { (rlim_t) 2 * n + 64, (rlim_t) 2 * n + 64 };
                int sv[2];
                /* Without a peer of the test's, both ends are its own: a
                 * closed peer would make the socket readable (EOF). */
                if (ret_peer)
                        close(first[1]);
                if (cgroup_attach(cg, getpid()) < 0 || setrlimit(RLIMIT_NOFILE, &rl) < 0)
                        _exit(127);
                for (int i = 1; i < n; i++)
                        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
                                _exit(126);
                if (uid != 0 && (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0))
                        _exit(125);
                (void) !write(sync[1], "k", 1);
                for (;;)
                        pause();
        }
        close(sync[1]);
        close(first[0]);
        char c;
        ck_assert_int_eq(read(sync[0], &c, 1), 1);
        close(sync[0]);
        close(cg);
        ck_assert_int_lt(T.n_pids, TEST_MAX_PIDS);
        T.pids[T.n_pids++] = pid;
        if (ret_peer)
                *ret_peer = first[1];
        else
                close(first[1]);
}

/* One user's process holding thousands of sockets in a unit of the name
 * an Event=socket rule of root's watches (a rule's unit name matches any
 * user's cgroup of that name) took the listener's every descriptor: root's
 * unit of that name, and another user's unit of another rule, were not
 * watched any more, and their sockets woke nothing. The listener's limit
 * is 1024 here, hard too (as systemd's default DefaultLimitNOFILE=): the
 * user's share of it is an eighth of what its reserve leaves. */
START_TEST(test_user_sockets_bounded) {
        HostileListener l = {
                .nofile_hard = true,
                .more_rules = { "a-sock.rule", "[Match]\nEvent=socket\nUnit=sock.service\n\n[Action]\nThaw=sock.service\n",
                                "b-other.rule", "[Match]\nEvent=socket\nUnit=other.service\n\n[Action]\nThaw=other.service\n" },
        };
        int root_peer = -EBADF, other_peer = -EBADF;

        if (!test_need_root_cgroup2())
                return;
        /* Sorted first: enter records, and the rules meet, the user's unit first. */
        _cleanup_close_ int a = mk_path("a-user.slice");
        ck_assert_int_ge(a, 0);
        ck_assert_int_eq(fchown(a, 65534, 65534), 0);
        park_with_sockets("a-user.slice/sock.service", 65534, 1500, NULL);
        _cleanup_close_ int b = mk_path("b-user.slice");
        ck_assert_int_ge(b, 0);
        ck_assert_int_eq(fchown(b, 65533, 65533), 0);
        park_with_sockets("b-user.slice/other.service", 65533, 1, &other_peer);
        park_with_sockets("z.slice/sock.service", 0, 1, &root_peer);

        bool ready = listener_start(&l, 1024), root_woke = false, other_woke = false;
        int64_t refused = -1;
        if (ready) {
                ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
                ck_assert(test_frozen("z.slice/sock.service"));
                ck_assert(test_frozen("b-user.slice/other.service"));
                /* Readable before or after its watch is armed: either wakes it. */
                ck_assert_int_eq(write(other_peer, "x", 1), 1);
                other_woke = test_wait_for(is_thawed, (void *) "b-user.slice/other.service", 5 * USEC_PER_SEC);
                ck_assert_int_eq(write(root_peer, "x", 1), 1);
                root_woke = test_wait_for(is_thawed, (void *) "z.slice/sock.service", 5 * USEC_PER_SEC);
                refused = listener_statistic(&l, "fds_refused");
        }
        int status = 0;
        (void) listener_stop(&l, &status);
        safe_close(root_peer);
        safe_close(other_peer);
        ck_assert_msg(ready, "the listener did not start");
        ck_assert_msg(other_woke, "another user's socket woke nothing next to one user's thousands");
        ck_assert_msg(root_woke, "root's socket woke nothing next to one user's thousands");
        ck_assert_msg(refused >= 1, "fds_refused: %" PRId64, refused);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        assert_nothing_frozen("after exit");
}
END_TEST

/* Empty cgroups cost a user nothing, enter records each as a unit, and the
 * listener keeps two descriptors open per unit: a thousand of one user's
 * took every descriptor of a listener whose limit is 1024 (hard too), and
 * then root's push thawed nothing and root's new unit was not held. The
 * user's units keep their share; the rest are opened at each thaw. */
START_TEST(test_user_units_bounded) {
        HostileListener l = { .nofile_hard = true };
        char name[32], cmd[1024];
        bool thawed = false, held = false;

        if (!test_need_root_cgroup2())
                return;
        _cleanup_close_ int a = mk_path("a-user.slice");
        ck_assert_int_ge(a, 0);
        ck_assert_int_eq(fchown(a, 65534, 65534), 0);
        for (int i = 0; i < 1000; i++) {
                snprintf(name, sizeof(name), "e%03d.service", i);
                ck_assert_int_eq(mkdirat(a, name, 0755), 0);
        }
        spawn_units(1);
        bool ready = listener_start(&l, 1024);
        if (ready) {
                ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
                ck_assert(test_frozen("u00.service"));
                snprintf(cmd, sizeof(cmd),
                         "busctl --address=%s call org.standby.Listener1 /org/standby/Listener1 "
                         "org.standby.Listener1 Push ss u00.service test 2>&1",
                         l.address);
                _cleanup_free_ char *out = NULL;
                ck_assert_msg(test_run_shell(cmd, &out) == 0, "push: %s", out);
                thawed = test_wait_for(is_thawed, (void *) "u00.service", 5 * USEC_PER_SEC);
                /* Thawed by the push: the listener has taken standby's
                 * start (a cgroup made before that is enter's to leave). */
                _cleanup_close_ int late = test_cgroup("late.service");
                held = thawed && cgroup_wait_frozen(&late, 1, true, now_usec(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC,
                                                    NULL) == 0;
        }
        (void) listener_stop(&l, NULL);
        ck_assert_msg(ready, "the listener did not start");
        ck_assert_msg(thawed, "a push did not thaw root's unit next to one user's thousand units");
        ck_assert_msg(held, "root's new unit was not held next to one user's thousand units");
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        assert_nothing_frozen("after exit");
}
END_TEST

/* A name of NAME_MAX bytes, nearly all spaces (four bytes each in the
 * journal): a chain's slice, or its unit i. */
static void wide_name(char *buf, bool slice, int i) {
        if (slice) {
                memset(buf, ' ', NAME_MAX - 6);
                strcpy(buf + NAME_MAX - 6, ".slice");
        } else {
                memset(buf, ' ', NAME_MAX - 11);
                snprintf(buf + NAME_MAX - 11, 12, "%03d.service", i);
        }
}

#define WIDE_DEPTH 60

/* As uid, in a child: below fd, the chain of WIDE_DEPTH wide slices (made
 * if make_chain) and units first..first+n-1 at its bottom, each a journal
 * line of some 60 KiB. Returns the child's exit status. */
static int wide_units_as(uid_t uid, int fd, bool make_chain, int first, int n) {
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                char name[NAME_MAX + 1];
                if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
                        _exit(2);
                int d = fcntl(fd, F_DUPFD_CLOEXEC, 3);
                umask(0); /* the chain open to his subordinate uids */
                wide_name(name, true, 0);
                for (int k = 0; k < WIDE_DEPTH; k++) {
                        if (make_chain && mkdirat(d, name, 0777) < 0)
                                _exit(3);
                        int c = openat(d, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                        close(d);
                        if ((d = c) < 0)
                                _exit(4);
                }
                for (int i = first; i < first + n; i++) {
                        wide_name(name, false, i);
                        if (mkdirat(d, name, 0755) < 0)
                                _exit(5);
                }
                _exit(0);
        }
        int status;
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* Whether unit i at the bottom of fd's wide chain is frozen. */
static bool wide_unit_frozen(int fd, int i) {
        char name[NAME_MAX + 1];
        int d = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        uint64_t f = 0;

        wide_name(name, true, 0);
        for (int k = 0; k < WIDE_DEPTH && d >= 0; k++) {
                int c = openat(d, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                close(d);
                d = c;
        }
        ck_assert_int_ge(d, 0);
        wide_name(name, false, i);
        int u = openat(d, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        close(d);
        ck_assert_int_ge(u, 0);
        ck_assert_int_eq(read_u64at(u, "cgroup.freeze", &f), 0);
        close(u);
        return f == 1;
}

/* A user's share of the held units' journal budget is his account's, the
 * delegated subtree his cgroups lie in: cgroups he makes as his
 * subordinate uids (here chown'd ones: uids 100000 and up, as
 * newuidmap(1) gives him) take from the same share, not one share each. */
#define WIDE_OWN 12
#define WIDE_SUBUIDS 4
START_TEST(test_hold_budget_per_account) {
        HostileListener l = {};
        int held = 0;

        if (!test_need_root_cgroup2())
                return;
        spawn_units(1);
        bool ready = listener_start(&l, 0);
        if (ready) {
                ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
                /* The listener has taken standby's start once it holds a
                 * new unit: cgroups made before that are enter's to leave
                 * as they are. */
                _cleanup_close_ int probe = test_cgroup("probe.service");
                ck_assert_int_eq(cgroup_wait_frozen(&probe, 1, true, now_usec(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC,
                                                    NULL), 0);
                /* Made during standby, as his user manager's: a slice is
                 * never held, and his own. */
                _cleanup_close_ int slice = mk_path("a-user.slice");
                ck_assert_int_ge(slice, 0);
                ck_assert_int_eq(fchown(slice, 65534, 65534), 0);
                ck_assert_int_eq(wide_units_as(65534, slice, true, 0, WIDE_OWN), 0);
                /* The mkdirs are done: their events are pending in the
                 * listener before the call is, and taken first (the
                 * watch's priority). A walk that meets a unit again
                 * counts it again: the units are counted frozen. */
                ck_assert_int_ge(listener_statistic(&l, "not_held"), 1);
                for (int i = 0; i < WIDE_OWN; i++)
                        held += wide_unit_frozen(slice, i);
                ck_assert_msg(held > 0 && held < WIDE_OWN, "%d of %d held: not the share", held, WIDE_OWN);
                for (int k = 0; k < WIDE_SUBUIDS; k++)
                        ck_assert_int_eq(wide_units_as(100000 + k, slice, false, WIDE_OWN + k, 1), 0);
                ck_assert_int_ge(listener_statistic(&l, "not_held"), 1);
                for (int k = 0; k < WIDE_SUBUIDS; k++)
                        ck_assert_msg(!wide_unit_frozen(slice, WIDE_OWN + k),
                                      "a unit of subordinate uid %d was held past its user's share", 100000 + k);
        }
        (void) listener_stop(&l, NULL);
        ck_assert_msg(ready, "the listener did not start");
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        assert_nothing_frozen("after exit");
}
END_TEST

/* The listener's statistic key (UINT64_MAX if it has none). */
static uint64_t hostile_statistic(sd_bus *bus, const char *key) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        uint64_t v = UINT64_MAX, x;
        const char *k;

        ck_assert_int_ge(sd_bus_call_method(bus, "org.standby.Listener1", "/org/standby/Listener1",
                                            "org.standby.Listener1", "GetStatistics", &error, &reply, ""),
                         0);
        ck_assert_int_ge(sd_bus_message_enter_container(reply, 'a', "{st}"), 0);
        while (sd_bus_message_read(reply, "{st}", &k, &x) > 0)
                if (streq(k, key))
                        v = x;
        sd_bus_message_unref(reply);
        return v;
}

typedef struct StatisticAtLeast {
        sd_bus *bus;
        const char *keys[2]; /* summed */
        uint64_t min;
} StatisticAtLeast;

static bool statistic_at_least(void *userdata) {
        StatisticAtLeast *w = userdata;
        uint64_t sum = 0;

        for (size_t i = 0; i < ELEMENTSOF(w->keys) && w->keys[i]; i++) {
                uint64_t v = hostile_statistic(w->bus, w->keys[i]);
                if (v == UINT64_MAX)
                        return false;
                sum += v;
        }
        return sum >= w->min;
}

/* A user's own part of the tree: base/user-65534.slice, theirs (as a
 * delegated subtree is), made by root in standby (made before, it would be
 * an empty leaf, which enter freezes). Returns its fd. */
static int user_subtree(void) {
        _cleanup_close_ int base = test_cgroup(NULL);
        int fd;

        ck_assert_int_eq(mkdirat(base, "user-65534.slice", 0755), 0);
        fd = openat(base, "user-65534.slice", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(fchown(fd, 65534, 65534), 0);
        return fd;
}

/* Forks a process of uid 65534 that runs fn(dir_fd); returns its pid. */
static pid_t as_user(int dir_fd, int (*fn)(int dir_fd, const void *arg), const void *arg) {
        pid_t pid = fork();

        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                        _exit(2);
                _exit(fn(dir_fd, arg) < 0 ? 3 : 0);
        }
        return pid;
}

static void wait_user(pid_t pid) {
        int status;

        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the user's process: wait status 0x%x", status);
}

static int user_mkdir(int dir_fd, const void *arg) {
        return mkdirat(dir_fd, arg, 0755);
}

static bool freeze_set(int dir_fd, const char *sub) {
        _cleanup_close_ int fd = openat(dir_fd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        uint64_t f = 0;

        return fd >= 0 && read_u64at(fd, "cgroup.freeze", &f) >= 0 && f == 1;
}

typedef struct FreezeWant {
        int dir_fd;
        const char *sub;
        bool want;
} FreezeWant;

static bool freeze_is(void *userdata) {
        FreezeWant *w = userdata;
        return freeze_set(w->dir_fd, w->sub) == w->want;
}

static bool wait_freeze(int dir_fd, const char *sub, bool want) {
        return test_wait_for(freeze_is, &(FreezeWant) { dir_fd, sub, want }, 10 * USEC_PER_SEC);
}

/* A container is known by what it is, not by its name: a user's cgroups
 * named as systemd names containers (x.slice, user@1234.service), made in
 * their own subtree during standby, are held like any other; a cgroup of
 * theirs in which a child cgroup then appears (and no process of its own)
 * is a container: the child is held, the container thawed and no longer
 * in the journal. */
START_TEST(test_hold_container_names) {
        HostileListener l = {};
        _cleanup_close_ int user = -EBADF;
        bool ready, slice = false, manager = false, app = false, unit = false, app_thawed = false;

        if (!test_need_root_cgroup2())
                return;
        spawn_units(1);
        ready = listener_start(&l, 0);
        if (ready) {
                sd_bus *bus = test_bus_client(l.address);

                ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
                user = user_subtree();
                /* Answered after the journal change: the watches are up. */
                ck_assert_uint_eq(hostile_statistic(bus, "held"), 0);
                wait_user(as_user(user, user_mkdir, "x.slice"));
                wait_user(as_user(user, user_mkdir, "user@1234.service"));
                slice = wait_freeze(user, "x.slice", true);
                manager = wait_freeze(user, "user@1234.service", true);
                wait_user(as_user(user, user_mkdir, "app.scope"));
                app = wait_freeze(user, "app.scope", true);
                wait_user(as_user(user, user_mkdir, "app.scope/unit.service"));
                unit = wait_freeze(user, "app.scope/unit.service", true);
                app_thawed = wait_freeze(user, "app.scope", false);
                sd_bus_flush_close_unref(bus);
        }
        (void) listener_stop(&l, NULL);
        ck_assert_msg(ready, "the listener did not start");
        ck_assert_msg(slice, "a user's new x.slice was not held");
        ck_assert_msg(manager, "a user's new user@1234.service was not held");
        ck_assert_msg(app, "a user's new cgroup was not held");
        ck_assert_msg(unit, "a cgroup made in a held one with no process was not held");
        ck_assert_msg(app_thawed, "a held cgroup that turned out a container stayed frozen");
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        assert_nothing_frozen("after exit");
}
END_TEST


#define DEEP_DEPTH 900 /* with its parent, within what cgroup_remove_tree() goes */

static int user_deep_chain(int dir_fd, const void *arg) {
        char name[NAME_MAX + 1];
        int d = fcntl(dir_fd, F_DUPFD_CLOEXEC, 3);

        /* 255 bytes: the longest name, the most a whole path would cost. */
        memset(name, 'd', NAME_MAX - 6);
        strcpy(name + NAME_MAX - 6, ".slice");
        for (int k = 0; k < DEEP_DEPTH; k++) {
                if (mkdirat(d, name, 0755) < 0)
                        return -1;
                int n = openat(d, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                close(d);
                if ((d = n) < 0)
                        return -1;
        }
        close(d);
        return 0;
}

/* The listener's memory per watched cgroup is bounded, whatever the depth
 * and the names: a user's chain of 900 cgroups of 255-byte names made
 * during standby takes at most their share of watches
 * (CGROUP_WATCH_UID_MAX, 128), past which a cgroup is held unwatched (what
 * is made below is frozen with it); the listener grows by a few MB at
 * most, and exit thaws it all. */
START_TEST(test_deep_chain_bounded) {
        HostileListener l = {};
        _cleanup_close_ int user = -EBADF;
        uint64_t before = 0, after = 0, watched = 0;
        bool ready, bounded = false;

        if (!test_need_root_cgroup2())
                return;
        spawn_units(1);
        ready = listener_start(&l, 0);
        if (ready) {
                sd_bus *bus = test_bus_client(l.address);

                ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
                user = user_subtree();
                ck_assert_uint_eq(hostile_statistic(bus, "held"), 0);
                before = test_rss_kib(l.pid);
                wait_user(as_user(user, user_deep_chain, NULL));
                bounded = test_wait_for(statistic_at_least, &(StatisticAtLeast) { bus, { "unwatched" }, 1 },
                                        30 * USEC_PER_SEC);
                after = test_rss_kib(l.pid);
                watched = hostile_statistic(bus, "watched");
                sd_bus_flush_close_unref(bus);
        }
        (void) listener_stop(&l, NULL);
        ck_assert_msg(ready, "the listener did not start");
        ck_assert_msg(bounded, "the user's chain was not held past their share of watches");
        if (getenv("STANDBY_TEST_VERBOSE"))
                fprintf(stderr, "deep chain: %" PRIu64 " watched, RSS %" PRIu64 " -> %" PRIu64 " KiB\n", watched, before, after);
        ck_assert_msg(watched <= 128 + 8, "%" PRIu64 " cgroups watched", watched);
        ck_assert_msg(after < before + 16 * 1024, "the listener grew from %" PRIu64 " to %" PRIu64 " KiB", before,
                      after);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        assert_nothing_frozen("after exit");
        _cleanup_close_ int base = test_cgroup(NULL);
        ck_assert_int_eq(cgroup_remove_tree(base, "user-65534.slice"), 0);
}
END_TEST

/* The share of watches is the account's (the delegated subtree), not a
 * uid's: a user with subordinate uids can give each of their cgroups to
 * another uid. Here root does for them what newuidmap would let them do:
 * each cgroup of a 300-deep chain in their subtree is given to a uid of
 * its own as soon as it is made. */
START_TEST(test_watch_share_per_account) {
        HostileListener l = {};
        _cleanup_close_ int user = -EBADF;
        uint64_t watched = 0;
        bool ready, bounded = false;

        if (!test_need_root_cgroup2())
                return;
        spawn_units(1);
        ready = listener_start(&l, 0);
        if (ready) {
                sd_bus *bus = test_bus_client(l.address);
                char name[32];
                int d;

                ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
                user = user_subtree();
                ck_assert_uint_eq(hostile_statistic(bus, "held"), 0);
                d = fcntl(user, F_DUPFD_CLOEXEC, 3);
                for (int k = 0; k < 300 && d >= 0; k++) {
                        snprintf(name, sizeof(name), "s%d.slice", k);
                        ck_assert_int_eq(mkdirat(d, name, 0755), 0);
                        int n = openat(d, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                        ck_assert_int_ge(n, 0);
                        ck_assert_int_eq(fchown(n, 100000 + k, 100000 + k), 0);
                        close(d);
                        d = n;
                }
                safe_close(d);
                bounded = test_wait_for(statistic_at_least, &(StatisticAtLeast) { bus, { "unwatched" }, 1 },
                                        30 * USEC_PER_SEC);
                watched = hostile_statistic(bus, "watched");
                sd_bus_flush_close_unref(bus);
        }
        (void) listener_stop(&l, NULL);
        ck_assert_msg(ready, "the listener did not start");
        ck_assert_msg(bounded, "a chain of cgroups of 300 uids in one account was watched past its share");
        ck_assert_msg(watched <= 128 + 8, "%" PRIu64 " cgroups watched", watched);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        assert_nothing_frozen("after exit");
        _cleanup_close_ int base = test_cgroup(NULL);
        ck_assert_int_eq(cgroup_remove_tree(base, "user-65534.slice"), 0);
}
END_TEST

/* A press of the power key through fifo (evdev records); how long until
 * unit was thawed (30 s at most), USEC_INFINITY if it was not. */
static usec_t press_power_key(int fifo, const char *unit) {
        static const struct input_event press[4] = {
                { .type = EV_KEY, .code = KEY_POWER, .value = 1 }, { .type = EV_SYN, .code = SYN_REPORT },
                { .type = EV_KEY, .code = KEY_POWER, .value = 0 }, { .type = EV_SYN, .code = SYN_REPORT },
        };
        usec_t t0 = now_usec(CLOCK_MONOTONIC);

        ck_assert(test_frozen(unit));
        ck_assert_int_eq(write(fifo, press, sizeof(press)), (ssize_t) sizeof(press));
        if (!test_wait_for(is_thawed, (void *) unit, 30 * USEC_PER_SEC))
                return USEC_INFINITY;
        return now_usec(CLOCK_MONOTONIC) - t0;
}

#define STORM_CGROUPS 5000

static int user_storm(int dir_fd, const void *arg) {
        char name[32];

        for (int i = 0; i < STORM_CGROUPS; i++) {
                snprintf(name, sizeof(name), "c%d.service", i);
                if (mkdirat(dir_fd, name, 0755) < 0)
                        return -1;
        }
        return 0;
}

/* A push and the power key are answered within a bound while a user makes
 * cgroups as fast as they can: each new cgroup costs the listener a fixed
 * amount of work when seen and a share of one journal transaction per turn
 * of its loop, and the bus and the key are taken between reads of the
 * inotify queue. */
START_TEST(test_push_during_mkdir_storm) {
        HostileListener l = {};
        _cleanup_close_ int user = -EBADF;
        char key_dir[] = "/tmp/standby-hostile-key-XXXXXX", key_fifo[64], key_rule[256];
        usec_t worst = 0, key = USEC_INFINITY;
        unsigned pushes = 0;
        bool ready, seen = false;

        if (!test_need_root_cgroup2())
                return;
        spawn_units(2);
        /* The power key's input device: a FIFO of evdev records. */
        ck_assert_ptr_nonnull(mkdtemp(key_dir));
        snprintf(key_fifo, sizeof(key_fifo), "%s/power-key", key_dir);
        ck_assert_int_eq(mkfifo(key_fifo, 0600), 0);
        snprintf(key_rule, sizeof(key_rule),
                 "[Match]\nEvent=input\nDevice=%s\nKey=KEY_POWER\nValue=1\n\n[Action]\nThaw=u01.service\n", key_fifo);
        l.more_rules[0] = "key.rule";
        l.more_rules[1] = key_rule;
        ready = listener_start(&l, 0);
        if (ready) {
                sd_bus *bus = test_bus_client(l.address);
                int fifo = open(key_fifo, O_WRONLY | O_CLOEXEC);
                ck_assert_int_ge(fifo, 0);
                StatisticAtLeast all = { bus, { "held", "not_held" }, STORM_CGROUPS };
                usec_t deadline;

                ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
                user = user_subtree();
                ck_assert_uint_eq(hostile_statistic(bus, "held"), 0);
                pid_t pid = as_user(user, user_storm, NULL);
                deadline = now_usec(CLOCK_MONOTONIC) + 60 * USEC_PER_SEC;
                /* A push, then the statistics, each timed, until every
                 * cgroup is judged: the first come while the user still
                 * makes them. */
                while (!seen && now_usec(CLOCK_MONOTONIC) < deadline) {
                        sd_bus_error error = SD_BUS_ERROR_NULL;
                        usec_t t0 = now_usec(CLOCK_MONOTONIC), t1;
                        ck_assert_int_ge(sd_bus_call_method(bus, "org.standby.Listener1", "/org/standby/Listener1",
                                                            "org.standby.Listener1", "Push", &error, NULL, "ss",
                                                            "u00.service", "test"),
                                         0);
                        t1 = now_usec(CLOCK_MONOTONIC);
                        seen = statistic_at_least(&all);
                        worst = MAX(worst, MAX(t1 - t0, now_usec(CLOCK_MONOTONIC) - t1));
                        /* The power key, once, while the user is at it. */
                        if (pushes++ == 0)
                                key = press_power_key(fifo, "u01.service");
                }
                safe_close(fifo);
                wait_user(pid);
                sd_bus_flush_close_unref(bus);
        }
        (void) listener_stop(&l, NULL);
        (void) unlink(key_fifo);
        (void) rmdir(key_dir);
        ck_assert_msg(ready, "the listener did not start");
        ck_assert_msg(seen, "the listener did not judge the user's %d cgroups within 60 s", STORM_CGROUPS);
        ck_assert_uint_gt(pushes, 0);
        ck_assert_msg(key != USEC_INFINITY, "the power key did not thaw its unit within 30 s");
        if (getenv("STANDBY_TEST_VERBOSE"))
                fprintf(stderr, "storm: %u pushes, worst %" PRIu64 " us, key %" PRIu64 " us\n", pushes, worst, key);
        /* A turn or two of the listener's loop: 0.1-0.3 s at most on a
         * quiet host (docs/benchmark.md section 11), up to 2 s seen with
         * other sessions' builds on the test host's two CPUs. */
        ck_assert_msg(worst < 3 * USEC_PER_SEC, "a push waited %" PRIu64 " ms while a user made cgroups",
                      worst / USEC_PER_MSEC);
        ck_assert_msg(key < 3 * USEC_PER_SEC, "the power key waited %" PRIu64 " ms while a user made cgroups",
                      key / USEC_PER_MSEC);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        assert_nothing_frozen("after exit");
}
END_TEST

/* A journal of exactly JOURNAL_SIZE_MAX bytes (the most journal_save()
 * writes; here a unit's reason makes it up): status reads it, a listener
 * started on it takes standby as active and a push rule thaws its unit,
 * and exit thaws everything. */
START_TEST(test_journal_at_limit) {
        _cleanup_free_ char *text = NULL, *big = NULL, *out = NULL, *err = NULL, *tmp = NULL;
        HostileListener l = {};
        char cmd[1024];
        size_t len = 0;

        if (!test_need_root_cgroup2())
                return;
        spawn_units(2);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        text = read_state(&len);
        char *at = strstr(text, "/u00.service \\-\n");
        ck_assert_ptr_nonnull(at);
        size_t head = (size_t) (at - text) + strlen("/u00.service "), k = JOURNAL_SIZE_MAX - (len - 2);
        big = malloc(JOURNAL_SIZE_MAX + 1);
        ck_assert_ptr_nonnull(big);
        memcpy(big, text, head);
        memset(big + head, 'r', k);
        memcpy(big + head + k, text + head + 2, len - head - 2);
        /* Put in place as journal_save() does: a reader never sees it half written. */
        ck_assert_int_ge(asprintf(&tmp, "%s.test", journal_path()), 0);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        ck_assert_int_ge(fd, 0);
        for (size_t done = 0; done < JOURNAL_SIZE_MAX;) {
                ssize_t n = write(fd, big + done, JOURNAL_SIZE_MAX - done);
                ck_assert_int_gt(n, 0);
                done += (size_t) n;
        }
        close(fd);
        ck_assert_int_eq(rename(tmp, journal_path()), 0);

        int code = test_manager_env(NULL, &out, &err, "status", NULL);
        ck_assert_msg(code == EXIT_OK, "status %d: %.300s", code, err);
        ck_assert_msg(strstr(out, "Units: 2 frozen"), "status: %.300s", out);

        bool ready = listener_start(&l, 0), thawed = false;
        if (ready) {
                snprintf(cmd, sizeof(cmd),
                         "busctl --address=%s call org.standby.Listener1 /org/standby/Listener1 "
                         "org.standby.Listener1 Push ss u00.service test 2>&1",
                         l.address);
                _cleanup_free_ char *pushed = NULL;
                ck_assert_msg(test_run_shell(cmd, &pushed) == 0, "push: %s", pushed);
                thawed = test_wait_for(is_thawed, (void *) "u00.service", 5 * USEC_PER_SEC);
        }
        (void) listener_stop(&l, NULL);
        ck_assert_msg(ready, "the listener did not start");
        ck_assert_msg(thawed, "a push did not thaw u00.service with the journal at its limit");
        ck_assert(test_frozen("u01.service"));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        assert_nothing_frozen("after exit");
        ck_assert(!journal_exists());
}
END_TEST

/* A damaged journal is never taken for a good one by the verbs that would
 * write over it: enter refuses it, naming exit as the way out. */
START_TEST(test_damaged_journal_blocks_enter) {
        _cleanup_free_ char *err = NULL;

        if (!test_need_root_cgroup2())
                return;
        spawn_units(2);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        write_state("standby-journal 1\nphase active\n", 31);
        ck_assert_int_ne(test_manager(&err, "enter", NULL), EXIT_OK);
        ck_assert_msg(strstr(err, "damaged") && strstr(err, "standby-manager exit"), "stderr: %s", err);
        ck_assert_uint_eq(count_frozen(NULL), 2);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        assert_nothing_frozen("after exit");
}
END_TEST

/* Frozen cgroups no journal names (the journal removed, or frozen by
 * someone else below the targets): exit's walk thaws them. */
START_TEST(test_exit_without_journal) {
        _cleanup_free_ char *err = NULL;

        if (!test_need_root_cgroup2())
                return;
        spawn_units(3);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert_int_eq(unlink(journal_path()), 0);
        ck_assert_uint_eq(count_frozen(NULL), 3);
        ck_assert_int_eq(test_manager(&err, "exit", NULL), EXIT_OK);
        ck_assert_msg(strstr(err, "No journal, but 3 cgroups"), "stderr: %s", err);
        assert_nothing_frozen("after exit");
        /* Nothing frozen, no journal: not in standby. */
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_NOT_ACTIVE);
}
END_TEST

static void enter_private_mounts(void) {
        ck_assert_int_eq(unshare(CLONE_NEWNS), 0);
        ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
}

/* T's state directory on a tmpfs of the given mount options, in a mount
 * namespace of the test's own (gone with it). */
static void state_dir_on_tmpfs(const char *options) {
        enter_private_mounts();
        ck_assert_int_eq(mkdir(T.state_dir, 0700), 0);
        ck_assert_int_eq(mount("tmpfs", T.state_dir, "tmpfs", MS_NOSUID | MS_NODEV, options), 0);
}

/* Writes zeros to fd until a write fails (errno says why). */
static void fill_up(int fd) {
        char buf[4096] = {};
        while (write(fd, buf, sizeof(buf)) > 0)
                ;
}

/* A new file filler (a path in T's state directory) written until the file
 * system is full; returns its fd. */
static int fill_state_dir(const char *filler) {
        int fd = open(filler, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        ck_assert_int_ge(fd, 0);
        fill_up(fd);
        ck_assert_int_eq(errno, ENOSPC);
        return fd;
}

/* enter fails (EXIT_FAILURE_GENERIC) and says so with message on stderr;
 * nothing is frozen (when says at which point of the test), no journal is
 * left, and exit finds standby not entered. */
static void assert_enter_fails(const char *message, const char *when) {
        _cleanup_free_ char *err = NULL;

        ck_assert_int_eq(test_manager(&err, "enter", NULL), EXIT_FAILURE_GENERIC);
        ck_assert_msg(strstr(err, message), "stderr: %s", err);
        assert_nothing_frozen(when);
        ck_assert(!journal_exists());
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_NOT_ACTIVE);
}

/* A full state file system (a small tmpfs, in a mount namespace of the
 * test's own, gone with it): enter changes nothing, and exit after an enter
 * that saved its journal still thaws everything and removes the journal. */
START_TEST(test_full_state_dir) {
        _cleanup_free_ char *err = NULL;
        char filler[4096];

        if (!test_need_root_cgroup2())
                return;
        state_dir_on_tmpfs("size=64k,mode=0700");
        spawn_units(4);
        snprintf(filler, sizeof(filler), "%s/filler", T.state_dir);

        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert_uint_eq(count_frozen(NULL), 4);
        int fd = fill_state_dir(filler);
        close(fd);

        ck_assert_int_eq(test_manager(&err, "exit", NULL), EXIT_OK);
        assert_nothing_frozen("exit on a full state file system");
        ck_assert_msg(strstr(err, "No space left"), "no word of the full disk: %s", err);
        ck_assert(!journal_exists());

        /* Enter on the full file system: a clear error, nothing frozen. */
        fd = open(filler, O_WRONLY | O_APPEND | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        fill_up(fd);
        close(fd);
        assert_enter_fails("No space left", "failed enter");

        unlink(filler);
        ck_assert_int_eq(umount2(T.state_dir, MNT_DETACH), 0);
}
END_TEST

/* Room for enter's first journal (every unit, before any freeze) but not
 * for its last: enter thaws everything again, removes the journal and
 * fails; nothing stays frozen, and the state directory is as before. */
START_TEST(test_enter_rolls_back_when_full) {
        char filler[4096], name[300];
        struct stat st;

        if (!test_need_root_cgroup2())
                return;
        state_dir_on_tmpfs("size=64k,mode=0700");
        /* 20 units of 200-byte names: a journal of two pages (4.5-5 KB). */
        for (int i = 0; i < 20; i++) {
                memset(name, 'n', 200);
                snprintf(name + 200, sizeof(name) - 200, "%02d.service", i);
                int fd = mk_path(name);
                ck_assert_int_ge(fd, 0);
                park_in(fd);
        }
        snprintf(filler, sizeof(filler), "%s/filler", T.state_dir);
        int fd = fill_state_dir(filler);
        /* Three pages free: the first save takes two, the second finds one. */
        ck_assert_int_eq(fstat(fd, &st), 0);
        ck_assert_int_eq(ftruncate(fd, st.st_size - 3 * 4096), 0);
        close(fd);

        assert_enter_fails("No space left on device; thawing everything again", "enter rolled back");
        unlink(filler);
        ck_assert_int_eq(umount2(T.state_dir, MNT_DETACH), 0);
}
END_TEST

/* No lock to be had (the lock file gone and no inode left on the state
 * file system): exit reads the journal without it and still gives the
 * machine back. */
START_TEST(test_exit_without_lock) {
        _cleanup_free_ char *err = NULL;
        char p[4096];

        if (!test_need_root_cgroup2())
                return;
        state_dir_on_tmpfs("size=1m,nr_inodes=8,mode=0700");
        spawn_units(3);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        snprintf(p, sizeof(p), "%s/" JOURNAL_LOCK_FILE, T.state_dir);
        ck_assert_int_eq(unlink(p), 0);
        for (int i = 0;; i++) {
                snprintf(p, sizeof(p), "%s/inode%d", T.state_dir, i);
                int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
                if (fd < 0) {
                        ck_assert_int_eq(errno, ENOSPC);
                        break;
                }
                close(fd);
        }
        ck_assert_int_eq(test_manager(&err, "exit", NULL), EXIT_OK);
        ck_assert_msg(strstr(err, "Failed to lock the journal") && strstr(err, "without the journal") == NULL,
                      "stderr: %s", err);
        assert_nothing_frozen("exit without the lock");
        ck_assert(!journal_exists());
        ck_assert_int_eq(umount2(T.state_dir, MNT_DETACH), 0);
}
END_TEST

/* Another file system mounted below the targets (a tmpfs dressed as a
 * cgroup) and the cgroup tree bind-mounted into itself: the walks stay on
 * the cgroup2 file system, so nothing there is written or recorded, and
 * the loop does not make enter or exit fail. */
START_TEST(test_mounts_below_targets) {
        _cleanup_free_ char *err = NULL, *freeze = NULL, *state = NULL;
        char path[8192], src[4096];

        if (!test_need_root_cgroup2())
                return;
        enter_private_mounts();
        int a = mk_path("a.service"), aa = fcntl(a, F_DUPFD_CLOEXEC, 3);
        park_in(a);
        safe_close(mk_path("fake.slice/m"));
        safe_close(mk_path("loop.slice/m"));

        snprintf(path, sizeof(path), "%s/%s", T.mount, test_cgpath("fake.slice/m"));
        ck_assert_int_eq(mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k"), 0);
        _cleanup_close_ int fake = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(fake, 0);
        ck_assert_int_eq(mkdirat(fake, "x.service", 0755), 0);
        static const char * const files[] = { "x.service/cgroup.stat", "x.service/cgroup.freeze",
                                              "x.service/cgroup.events", "cgroup.stat", "cgroup.freeze" };
        static const char * const texts[] = { "nr_descendants 0\n", "0\n", "populated 1\nfrozen 0\n",
                                              "nr_descendants 1\n", "0\n" };
        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                int fd = openat(fake, files[i], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                ck_assert_int_ge(fd, 0);
                ck_assert_int_eq(write(fd, texts[i], strlen(texts[i])), (ssize_t) strlen(texts[i]));
                close(fd);
        }
        snprintf(src, sizeof(src), "%s/%s", T.mount, T.base);
        snprintf(path, sizeof(path), "%s/%s", T.mount, test_cgpath("loop.slice/m"));
        ck_assert_int_eq(mount(src, path, NULL, MS_BIND, NULL), 0);

        ck_assert_int_eq(test_manager(&err, "enter", NULL), EXIT_OK);
        ck_assert(frozen_fd(aa));
        ck_assert_int_eq(read_full_fileat(fake, "x.service/cgroup.freeze", &freeze, NULL), 0);
        ck_assert_msg(streq(freeze, "0\n"), "enter wrote into the tmpfs mounted below the targets");
        size_t len = 0;
        state = read_state(&len);
        /* Listed without a descent (their parents hold leaves only), the
         * mount points are recorded as skipped, never frozen; nothing below
         * them is listed. */
        _cleanup_journal_ Journal *j = NULL;
        ck_assert_int_eq(journal_parse(state, len, &j), 0);
        for (size_t i = 0; i < j->n_units; i++) {
                const JournalUnit *u = &j->units[i];
                bool mounted = strstr(u->cgroup, "fake.slice") || strstr(u->cgroup, "loop.slice");
                ck_assert_msg(!mounted || (u->state == UNIT_SKIPPED && !strstr(u->cgroup, "/m/")), "journal: %s", state);
        }
        ck_assert_msg(strstr(err, "another file system is mounted there"), "not reported: %s", err);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        assert_nothing_frozen("after exit");
        close(aa);
        ck_assert_int_eq(umount2(path, MNT_DETACH), 0);
        snprintf(path, sizeof(path), "%s/%s", T.mount, test_cgpath("fake.slice/m"));
        ck_assert_int_eq(umount2(path, MNT_DETACH), 0);
}
END_TEST

/* A state directory someone else owns, or that others may write to, could
 * hold a planted journal: refused with exit status 3, nothing changed. */
START_TEST(test_state_dir_refused) {
        _cleanup_free_ char *err = NULL, *err2 = NULL;

        if (!test_need_root_cgroup2())
                return;
        spawn_units(1);
        ck_assert_int_eq(mkdir(T.state_dir, 0700), 0);
        ck_assert_int_eq(chmod(T.state_dir, 0777), 0);
        ck_assert_int_eq(test_manager(&err, "enter", NULL), EXIT_PERMISSION);
        ck_assert_msg(strstr(err, T.state_dir) && strstr(err, "group or others may write to it"), "stderr: %s", err);
        ck_assert_int_eq(chmod(T.state_dir, 0700), 0);
        ck_assert_int_eq(chown(T.state_dir, 65534, 65534), 0);
        ck_assert_int_eq(test_manager(&err2, "enter", NULL), EXIT_PERMISSION);
        ck_assert_msg(strstr(err2, "owned by neither root nor the caller"), "stderr: %s", err2);
        assert_nothing_frozen("refused enter");
        ck_assert_int_eq(chown(T.state_dir, 0, 0), 0);
}
END_TEST

/* status counts what the kernel says is frozen, not what the journal says:
 * a unit thawed behind standby's back is not counted frozen. */
START_TEST(test_status_counts_kernel) {
        _cleanup_free_ char *out = NULL;

        if (!test_need_root_cgroup2())
                return;
        spawn_units(3);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        _cleanup_close_ int fd = test_cgroup("u01.service");
        ck_assert_int_eq(cgroup_set_freeze(fd, false), 0);
        ck_assert_int_eq(cgroup_wait_frozen(&fd, 1, false, now_usec(CLOCK_MONOTONIC) + 5 * USEC_PER_SEC, NULL), 0);
        ck_assert_int_eq(test_manager_env(NULL, &out, NULL, "status", NULL), EXIT_OK);
        ck_assert_msg(strstr(out, "Units: 2 frozen"), "status: %s", out);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        assert_nothing_frozen("after exit");
}
END_TEST

/* The listener starts with a corrupt journal (it says so, takes standby as
 * inactive and freezes nothing again); exit then repairs the journal. */
START_TEST(test_listener_starts_on_corrupt_journal) {
        HostileListener l = {};

        if (!test_need_root_cgroup2())
                return;
        spawn_units(2);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        static const char corrupt[] = "standby-journal 1\nphase active\nunit frozen 0 x\\q \\-\n";
        write_state(corrupt, strlen(corrupt));

        bool ready = listener_start(&l, 0);
        int status = -1;
        ck_assert_int_eq(listener_stop(&l, &status), l.pid);
        ck_assert_msg(ready, "the listener did not start on a corrupt journal (status %d)", status);
        ck_assert_uint_eq(count_frozen(NULL), 2); /* the listener thawed nothing, froze nothing */

        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        assert_nothing_frozen("after exit");
        ck_assert(!journal_exists());
}
END_TEST

/* A cgroup above the targets frozen by someone else: exit thaws what it
 * can, says what stays frozen and why, exits 1; once that cgroup is thawed,
 * the next exit completes (no journal left stuck). */
START_TEST(test_frozen_above_targets) {
        _cleanup_free_ char *cfg = NULL, *err = NULL, *err2 = NULL;

        if (!test_need_root_cgroup2())
                return;
        ck_assert_int_ge(asprintf(&cfg, "Targets=\nTargets=%s\nFreezeTimeout=300ms\n", test_cgpath("t.slice")), 0);
        test_write_config(cfg);
        test_spawn_workload("t.slice/u.service", "idle", 100, 1, NULL);
        test_spawn_workload("t.slice/v.service", "idle", 100, 1, NULL);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        _cleanup_close_ int base = test_cgroup(NULL);
        ck_assert_int_eq(cgroup_set_freeze(base, true), 0);

        ck_assert_int_eq(test_manager(&err, "exit", NULL), EXIT_FAILURE_GENERIC);
        ck_assert_msg(strstr(err, "is frozen by a cgroup above it") && strstr(err, "did not thaw"), "stderr: %s", err);
        ck_assert(journal_exists());

        ck_assert_int_eq(cgroup_set_freeze(base, false), 0);
        ck_assert_int_eq(test_manager(&err2, "exit", NULL), EXIT_OK);
        assert_nothing_frozen("after the second exit");
        ck_assert(!journal_exists());
}
END_TEST

/* A target given by unit name that a user then makes ambiguous (a cgroup
 * of the same name in his own subtree): exit still thaws everything and
 * checks the other targets, instead of failing from then on. */
START_TEST(test_ambiguous_target) {
        _cleanup_free_ char *cfg = NULL, *name = NULL, *sub = NULL, *other = NULL, *err = NULL;

        if (!test_need_root_cgroup2())
                return;
        ck_assert_int_ge(asprintf(&name, "dup-%s-%d.service", test_runner_id(), (int) getpid()), 0);
        ck_assert_int_ge(asprintf(&sub, "t/%s/u.service", name), 0);
        ck_assert_int_ge(asprintf(&other, "hers.slice/%s", name), 0);
        ck_assert_int_ge(asprintf(&cfg, "Targets=\nTargets=%s\nTargets=%s\n", name, test_cgpath("plain.slice")), 0);
        test_write_config(cfg);
        test_spawn_workload(sub, "idle", 100, 1, NULL);
        test_spawn_workload("plain.slice/p.service", "idle", 100, 1, NULL);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert_uint_eq(count_frozen(NULL), 2);
        safe_close(test_cgroup(other));

        ck_assert_int_eq(test_manager(&err, "exit", NULL), EXIT_OK);
        ck_assert_msg(strstr(err, "cannot resolve it"), "stderr: %s", err);
        assert_nothing_frozen("after exit");
        ck_assert(!journal_exists());
}
END_TEST

/* A name with terminal controls reaches stderr escaped: an escape
 * sequence, a C1 control, a byte that is not UTF-8, a newline that would
 * forge a line. */
START_TEST(test_messages_escaped) {
        _cleanup_free_ char *err = NULL, *err2 = NULL;

        if (!test_need_root_cgroup2())
                return;
        ck_assert_int_eq(test_manager(&err, "freeze", "\x1b]2;owned\x07\xc2\x9b" "2J\xff.service", NULL),
                         EXIT_UNKNOWN_UNIT);
        ck_assert_msg(!strchr(err, 0x1b) && !strchr(err, 0x07) && !strstr(err, "\xc2\x9b") && !strchr(err, 0xff),
                      "raw control bytes on stderr");
        ck_assert_msg(strstr(err, "\\x1b]2;owned\\x07\\xc2\\x9b2J\\xff.service"), "stderr: %s", err);
        ck_assert_int_eq(test_manager(&err2, "freeze", "x\nstandby-manager: forged.service", NULL), EXIT_UNKNOWN_UNIT);
        ck_assert_msg(strstr(err2, "x\\x0astandby-manager: forged"), "stderr: %s", err2);
}
END_TEST

/* What a user names (a cgroup, an app's lock) is printed for root: C1
 * controls (U+009B is CSI on terminals that take them) and bidi controls
 * (U+202E reverses what follows) come out escaped, as text and as JSON. */
START_TEST(test_unicode_controls_escaped) {
        static const char name[] = "x\xc2\x9b" "2J\xe2\x80\xae" "ppa\xe2\x81\xa6\xc3\xa9";
        char *text = NULL, *json = NULL;
        size_t n;
        FILE *f;

        ck_assert_ptr_nonnull(f = open_memstream(&text, &n));
        text_print_string(f, name);
        ck_assert_int_eq(fclose(f), 0);
        ck_assert_str_eq(text, "x\\u009b2J\\u202eppa\\u2066\xc3\xa9");
        ck_assert_ptr_nonnull(f = open_memstream(&json, &n));
        json_print_string(f, name);
        ck_assert_int_eq(fclose(f), 0);
        ck_assert_str_eq(json, "\"x\\u009b2J\\u202eppa\\u2066\xc3\xa9\"");
        free(text);
        free(json);
}
END_TEST

Suite *hostile_suite(void) {
        Suite *s = suite_create("hostile");
        TCase *tc = test_kernel_tcase(s, "hostile", 120);
        tcase_add_test(tc, test_any_byte_names);
        tcase_add_test(tc, test_deep_and_long);
        tcase_add_test(tc, test_deeper_than_walks);
        tcase_add_test(tc, test_frozen_deeper_than_walks);
        tcase_add_test(tc, test_enter_after_failed_exit);
        tcase_add_test(tc, test_exit_over_users_own_parent_freeze);
        tcase_add_test(tc, test_enter_exit_few_descriptors);
        tcase_add_test(tc, test_corrupt_journals);
        tcase_add_test(tc, test_journal_fifo);
        tcase_add_test(tc, test_listener_many_units);
        tcase_add_test(tc, test_damaged_journal_blocks_enter);
        tcase_add_test(tc, test_exit_without_journal);
        tcase_add_test(tc, test_full_state_dir);
        tcase_add_test(tc, test_exit_without_lock);
        tcase_add_test(tc, test_enter_rolls_back_when_full);
        tcase_add_test(tc, test_mounts_below_targets);
        tcase_add_test(tc, test_state_dir_refused);
        tcase_add_test(tc, test_status_counts_kernel);
        tcase_add_test(tc, test_listener_starts_on_corrupt_journal);
        tcase_add_test(tc, test_messages_escaped);
        tcase_add_test(tc, test_frozen_above_targets);
        tcase_add_test(tc, test_journal_budget);
        tcase_add_test(tc, test_journal_at_limit);
        tcase_add_test(tc, test_ambiguous_target);
        /* What one user's sockets and cgroups cost others: bounds per account. */
        tc = test_kernel_tcase(s, "hostile-accounts", 120);
        tcase_add_test(tc, test_user_sockets_bounded);
        tcase_add_test(tc, test_user_units_bounded);
        tcase_add_test(tc, test_hold_budget_per_account);
        tcase_add_test(tc, test_exit_walk_few_descriptors);
        /* What one user's cgroups made during standby cost the listener. */
        tc = test_kernel_tcase(s, "hostile-cgroups", 120);
        tcase_add_test(tc, test_hold_container_names);
        tcase_add_test(tc, test_deep_chain_bounded);
        tcase_add_test(tc, test_watch_share_per_account);
        tcase_add_test(tc, test_push_during_mkdir_storm);
        tc = tcase_create("hostile-text");
        tcase_add_test(tc, test_unicode_controls_escaped);
        suite_add_tcase(s, tc);
        return s;
}
