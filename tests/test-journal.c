/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "fileio.h"
#include "journal.h"
#include "macro.h"
#include "strv.h"
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

static void write_journal(const char *text, size_t len) {
        int fd = openat(dir_fd, JOURNAL_FILE, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, len), (ssize_t) len);
        close(fd);
}

#define GOOD_HEAD "standby-journal 1\nphase active\nstrategy freeze\nsince 5\nslack-ns 0\n"
#define UNIT_A "unit frozen 0 a.service \\-\n"
#define UNIT_B "unit frozen 0 b/c.service \\-\n"

typedef struct Damaged {
        const char *text;
        size_t n_units;          /* what still reads */
        const char *error;       /* the first error, with its line */
} Damaged;

/* A damaged file reads as far as it can: every bad line is reported with its
 * number and skipped, the good ones are kept (exit thaws what they name). */
START_TEST(test_damaged) {
        static const Damaged cases[] = {
                { "", 0, "empty file" },
                { "standby-journal 2\nend\n", 0, "line 1: not the header" },
                { "standby-journal 1\nphase active\n", 0, "no end line" },
                { GOOD_HEAD UNIT_A UNIT_B, 2, "no end line" },
                { GOOD_HEAD UNIT_A "unit frozen 0 b/c.serv", 1, "line 7: cut short" },
                { "standby-journal 1\nphase sleeping\nend\n", 0, "line 2: unknown phase" },
                { "standby-journal 1\nunit frozen 0 a\nend\n", 0, "line 2: expected: unit" },
                { "standby-journal 1\nunit frozen 0 a\\q \\-\nend\n", 0, "line 2: bad cgroup path" },
                { "standby-journal 1\nunit frozen 0 a\\x00 \\-\nend\n", 0, "line 2: bad cgroup path" },
                { "standby-journal 1\nunit frozen 0 a\\x2 \\-\nend\n", 0, "line 2: bad cgroup path" },
                { "standby-journal 1\nunit frozen 0 ../x \\-\nend\n", 0, "line 2: bad cgroup path (absolute" },
                { "standby-journal 1\nunit frozen 0 \\x2fetc \\-\nend\n", 0, "line 2: bad cgroup path (absolute" },
                { "standby-journal 1\nunit frozen 0 a//b \\-\nend\n", 0, "line 2: bad cgroup path (absolute" },
                { "standby-journal 1\nunit frozen 0 a\xc3\xa9 \\-\nend\n", 0, "line 2: bad cgroup path" },
                { "standby-journal 1\nunit frozen x a \\-\nend\n", 0, "line 2: thaw deadline" },
                { "standby-journal 1\nunit frozen 0  a \\-\nend\n", 0, "line 2: an empty field" },
                { "standby-journal 1\nbogus\nend\n", 0, "line 2: unknown key" },
                { GOOD_HEAD UNIT_A "unit gelid 0 x.service \\-\n" UNIT_B "end\n", 2, "line 7: unknown unit state" },
                { GOOD_HEAD "thread 0 1 2\nthread 5 1\nend\n", 0, "line 6: bad thread id" },
                { GOOD_HEAD "phase exiting\nend\n", 0, "line 6: given twice" },
                { GOOD_HEAD "end\n" UNIT_A, 0, "line 7: after the end line" },
                { "phase active\n" UNIT_A "end\n", 1, "line 1: not the header" },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_journal_ Journal *k = NULL;

                write_journal(cases[i].text, strlen(cases[i].text));
                ck_assert_int_eq(journal_load(dir_fd, &k), 0);
                ck_assert_msg(journal_is_damaged(k), "case %zu taken as whole", i);
                ck_assert_msg(k->n_units == cases[i].n_units, "case %zu: %zu units read, want %zu", i, k->n_units,
                              cases[i].n_units);
                ck_assert_msg(k->errors && k->errors[0] && strstr(k->errors[0], cases[i].error),
                              "case %zu: first error \"%s\", want \"%s\"", i, k->errors ? k->errors[0] : "(none)",
                              cases[i].error);
        }
}
END_TEST

/* Binary garbage, NUL bytes and huge lines: no crash, bounded reports. */
START_TEST(test_garbage) {
        _cleanup_free_ char *huge = malloc(4 * 1024 * 1024);
        _cleanup_journal_ Journal *k = NULL, *g = NULL, *n = NULL;
        size_t len = 0;

        ck_assert_ptr_nonnull(huge);
        len = (size_t) sprintf(huge, GOOD_HEAD UNIT_A "unit frozen 0 ");
        memset(huge + len, 'x', 3 * 1024 * 1024);
        len += 3 * 1024 * 1024;
        len += (size_t) sprintf(huge + len, " \\-\n" UNIT_B "end\n");
        write_journal(huge, len);
        ck_assert_int_eq(journal_load(dir_fd, &k), 0);
        ck_assert_uint_eq(k->n_units, 2);
        ck_assert_uint_eq(k->n_errors, 1);
        ck_assert_ptr_nonnull(strstr(k->errors[0], "line 7: bad cgroup path"));

        /* Every byte value, many lines of it: parsed straight from memory. */
        for (size_t i = 0; i < 1024 * 1024; i++)
                huge[i] = (char) ((i * 7919) % 256);
        ck_assert_int_eq(journal_parse(huge, 1024 * 1024, &g), 0);
        ck_assert(journal_is_damaged(g));
        ck_assert_uint_le(strv_length(g->errors), JOURNAL_ERRORS_KEPT);
        ck_assert_uint_ge(g->n_errors, JOURNAL_ERRORS_KEPT);

        /* A good journal with a NUL in a line and no terminating NUL after it. */
        static const char nul[] = GOOD_HEAD UNIT_A "unit frozen 0 x\0y \\-\n" UNIT_B "end\n";
        ck_assert_int_eq(journal_parse(nul, sizeof(nul) - 1, &n), 0);
        ck_assert_uint_eq(n->n_units, 2);
        ck_assert_uint_eq(n->n_errors, 1);
        ck_assert_ptr_nonnull(strstr(n->errors[0], "line 7: binary data"));
}
END_TEST

/* Every byte a cgroup name may hold (1-255 but '/'), UTF-8, spaces, and
 * paths far beyond PATH_MAX once escaped read back exactly as written. */
START_TEST(test_any_bytes_roundtrip) {
        _cleanup_journal_ Journal *j = journal_new(), *k = NULL;
        _cleanup_free_ char *all = NULL, *utf8 = NULL, *deep = NULL, *text = NULL, *text2 = NULL;
        size_t len = 0, len2 = 0;

        all = malloc(600);
        ck_assert_ptr_nonnull(all);
        char *w = all;
        for (int c = 1; c < 256; c++) {
                if (c == '/')
                        continue;
                *w++ = (char) c;
                if (c % 100 == 0)
                        *w++ = '/'; /* components stay within NAME_MAX */
        }
        *w = 0;
        /* 1200 two-byte UTF-8 characters: 2400 bytes, 9600 once escaped. */
        utf8 = malloc(4096);
        ck_assert_ptr_nonnull(utf8);
        w = utf8;
        for (int i = 0; i < 1200; i++) {
                memcpy(w, "\xc3\xa9", 2);
                w += 2;
                if (i % 100 == 99)
                        *w++ = '/';
        }
        *--w = 0;
        /* 100 levels of 200 spaces: 20 KB, 80 KB escaped. */
        deep = malloc(100 * 201 + 1);
        ck_assert_ptr_nonnull(deep);
        for (int i = 0; i < 100; i++) {
                memset(deep + i * 201, ' ', 200);
                deep[i * 201 + 200] = '/';
        }
        deep[100 * 201 - 1] = 0;

        ck_assert_int_eq(journal_add_unit(j, all, UNIT_FROZEN, "tab\there, newline\nthere"), 0);
        ck_assert_int_eq(journal_add_unit(j, utf8, UNIT_SKIPPED, utf8), 0);
        ck_assert_int_eq(journal_add_unit(j, deep, UNIT_FREEZING, NULL), 0);
        ck_assert_int_eq(journal_unit_set_reason(&j->units[2], NULL), 0);
        j->units[1].systemd = strdup("unix:path=/run/user/1000/systemd/private");
        j->phase = JOURNAL_ACTIVE;
        ck_assert_int_eq(journal_save(dir_fd, j), 0);
        ck_assert_int_eq(journal_load(dir_fd, &k), 0);
        ck_assert_msg(!journal_is_damaged(k), "damaged: %s", k->errors[0]);
        ck_assert_uint_eq(k->n_units, 3);
        ck_assert_str_eq(k->units[0].cgroup, all);
        ck_assert_str_eq(k->units[0].reason, "tab\there, newline\nthere");
        ck_assert_str_eq(k->units[1].cgroup, utf8);
        ck_assert_str_eq(k->units[1].reason, utf8);
        ck_assert_str_eq(k->units[1].systemd, "unix:path=/run/user/1000/systemd/private");
        ck_assert_str_eq(k->units[2].cgroup, deep);
        ck_assert_ptr_null(k->units[2].reason);

        /* Formatting what was read gives the same bytes again. */
        ck_assert_int_eq(journal_format(j, &text, &len), 0);
        ck_assert_int_eq(journal_format(k, &text2, &len2), 0);
        ck_assert_uint_eq(len, len2);
        ck_assert_int_eq(memcmp(text, text2, len), 0);
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
        tcase_add_test(tc, test_damaged);
        tcase_add_test(tc, test_garbage);
        tcase_add_test(tc, test_any_bytes_roundtrip);
        tcase_add_test(tc, test_lock_excludes);
        tcase_add_test(tc, test_dir_refuses_symlink);
        suite_add_tcase(s, tc);
        return s;
}
