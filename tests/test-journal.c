/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "fileio.h"
#include "journal.h"
#include "macro.h"
#include "test-util.h"

static char dir[] = "/tmp/standby-journal-XXXXXX";
static int dir_fd = -EBADF;

static void setup(void) {
        strcpy(dir, "/tmp/standby-journal-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(dir));
        ck_assert_int_eq(journal_dir_open(dir, true, &dir_fd), 0);
}

static void teardown(void) {
        (void) unlinkat(dir_fd, JOURNAL_FILE, 0);
        (void) unlinkat(dir_fd, JOURNAL_FILE ".tmp", 0);
        (void) unlinkat(dir_fd, JOURNAL_LOCK_FILE, 0);
        dir_fd = safe_close(dir_fd);
        rmdir(dir);
}

START_TEST(test_roundtrip) {
        _cleanup_journal_ Journal *j = journal_new(), *k = NULL;

        j->phase = JOURNAL_ACTIVE;
        j->strategy = STRATEGY_SLACK;
        j->since = 1234567;
        j->slack_ns = UINT64_MAX;
        ck_assert_int_eq(journal_add_unit(j, "user.slice/a b\\c.service", UNIT_FROZEN, NULL), 0);
        ck_assert_int_eq(journal_add_unit(j, "x/y.scope", UNIT_SKIPPED, "pid 5 (cat) state D wchan fuse"), 0);
        j->units[1].thaw_until = USEC_INFINITY;
        ck_assert_int_eq(journal_add_thread(j, 42, 99, 50000), 0);
        ck_assert_int_eq(journal_save(dir_fd, j), 0);

        ck_assert_int_eq(journal_load(dir_fd, &k), 0);
        ck_assert_int_eq(k->phase, JOURNAL_ACTIVE);
        ck_assert_int_eq(k->strategy, STRATEGY_SLACK);
        ck_assert_uint_eq(k->since, 1234567);
        ck_assert_uint_eq(k->slack_ns, UINT64_MAX);
        ck_assert_uint_eq(k->n_units, 2);
        ck_assert_str_eq(k->units[0].cgroup, "user.slice/a b\\c.service");
        ck_assert_ptr_null(k->units[0].reason);
        ck_assert_str_eq(k->units[1].reason, "pid 5 (cat) state D wchan fuse");
        ck_assert_uint_eq(k->units[1].thaw_until, USEC_INFINITY);
        ck_assert_int_eq(k->units[1].state, UNIT_SKIPPED);
        ck_assert_uint_eq(k->n_threads, 1);
        ck_assert_int_eq(k->threads[0].tid, 42);
        ck_assert_uint_eq(k->threads[0].original_ns, 50000);
}
END_TEST

START_TEST(test_empty_removes_file) {
        _cleanup_journal_ Journal *j = journal_new(), *k = NULL;

        ck_assert_int_eq(journal_add_unit(j, "a", UNIT_FROZEN, NULL), 0);
        ck_assert_int_eq(journal_save(dir_fd, j), 0);
        ck_assert_int_eq(faccessat(dir_fd, JOURNAL_FILE, F_OK, 0), 0);
        journal_remove_unit(j, &j->units[0]);
        ck_assert(journal_is_empty(j));
        ck_assert_int_eq(journal_save(dir_fd, j), 0);
        ck_assert_int_eq(journal_load(dir_fd, &k), -ENOENT);
}
END_TEST

/* A torn or foreign file is refused, not half-read. */
START_TEST(test_malformed) {
        static const char * const bad[] = {
                "", "standby-journal 2\nend\n", "standby-journal 1\nphase active\n",
                "standby-journal 1\nphase sleeping\nend\n", "standby-journal 1\nunit frozen 0 a\nend\n",
                "standby-journal 1\nunit frozen 0 a\\q \\-\nend\n", "standby-journal 1\nbogus\nend\n",
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                Journal *k = NULL;
                int fd = openat(dir_fd, JOURNAL_FILE, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
                ck_assert_int_ge(fd, 0);
                ck_assert_int_eq(write(fd, bad[i], strlen(bad[i])), (ssize_t) strlen(bad[i]));
                close(fd);
                ck_assert_msg(journal_load(dir_fd, &k) == -EBADMSG, "case %zu accepted", i);
                ck_assert_ptr_null(k);
        }
}
END_TEST

START_TEST(test_lock_excludes) {
        int a = -EBADF;

        ck_assert_int_eq(journal_lock(dir_fd, LOCK_EX, &a), 0);
        int b = openat(dir_fd, JOURNAL_LOCK_FILE, O_RDWR | O_CLOEXEC);
        ck_assert_int_ge(b, 0);
        ck_assert_int_eq(flock(b, LOCK_SH | LOCK_NB), -1);
        ck_assert_int_eq(errno, EWOULDBLOCK);
        safe_close(a);
        ck_assert_int_eq(flock(b, LOCK_SH | LOCK_NB), 0);
        safe_close(b);
}
END_TEST

START_TEST(test_dir_refuses_symlink) {
        char link[4096];
        int fd = -EBADF;

        snprintf(link, sizeof(link), "%s/link", dir);
        ck_assert_int_eq(symlink(dir, link), 0);
        ck_assert_int_lt(journal_dir_open(link, false, &fd), 0);
        unlink(link);
}
END_TEST

Suite *journal_suite(void) {
        Suite *s = suite_create("journal");
        TCase *tc = tcase_create("file");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_roundtrip);
        tcase_add_test(tc, test_empty_removes_file);
        tcase_add_test(tc, test_malformed);
        tcase_add_test(tc, test_lock_excludes);
        tcase_add_test(tc, test_dir_refuses_symlink);
        suite_add_tcase(s, tc);
        return s;
}
