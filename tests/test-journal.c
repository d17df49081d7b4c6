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

/* The one limit for writing and reading: a journal of exactly
 * JOURNAL_SIZE_MAX bytes is saved and read back whole; a byte more is not
 * written, and a file of that size (written by someone else) is not read. */
START_TEST(test_size_limit) {
        _cleanup_journal_ Journal *j = journal_new(), *k = NULL;
        _cleanup_free_ char *path = malloc(64 * 1024), *text = NULL, *reason = NULL;
        size_t size = 0;
        int fd;

        ck_assert_ptr_nonnull(path);
        /* Units of 64 KiB paths, up to near the limit. */
        for (size_t i = 0; i < 64 * 1024 - 1; i++)
                path[i] = i % 200 == 199 ? '/' : 'a';
        path[64 * 1024 - 1] = 0;
        j->phase = JOURNAL_ACTIVE;
        for (int i = 0; i < 250; i++) {
                path[0] = (char) ('A' + i % 26);
                path[1] = (char) ('A' + i / 26);
                ck_assert_int_eq(journal_add_unit(j, path, UNIT_FROZEN, NULL), 0);
        }
        ck_assert_int_eq(journal_format(j, &text, &size), 0);
        ck_assert_uint_lt(size, JOURNAL_SIZE_MAX);
        /* The last unit's reason ("\-", two bytes) makes up the rest. */
        size_t n = JOURNAL_SIZE_MAX - size + 2;
        reason = malloc(n + 2);
        ck_assert_ptr_nonnull(reason);
        memset(reason, 'r', n + 1);
        reason[n] = 0;
        ck_assert_int_eq(journal_unit_set_reason(&j->units[j->n_units - 1], reason), 0);
        text = mfree(text);
        ck_assert_int_eq(journal_format(j, &text, &size), 0);
        ck_assert_uint_eq(size, JOURNAL_SIZE_MAX);
        ck_assert_int_eq(journal_save(dir_fd, j), 0);
        ck_assert_int_eq(journal_load(dir_fd, &k), 0);
        ck_assert(!journal_is_damaged(k));
        ck_assert_uint_eq(k->n_units, 250);
        ck_assert_str_eq(k->units[249].reason, reason);

        /* One byte more. */
        reason[n] = 'r';
        reason[n + 1] = 0;
        ck_assert_int_eq(journal_unit_set_reason(&j->units[j->n_units - 1], reason), 0);
        ck_assert_int_eq(journal_save(dir_fd, j), -EFBIG);
        fd = openat(dir_fd, JOURNAL_FILE, O_WRONLY | O_APPEND | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, "\n", 1), 1);
        close(fd);
        k = journal_free(k);
        ck_assert_int_eq(journal_load(dir_fd, &k), -EFBIG);
}
END_TEST

/* A path of length bytes (components of 200) starting with tag. */
static char *held_path(const char *tag, size_t length) {
        char *p = malloc(length + 1);

        ck_assert_ptr_nonnull(p);
        for (size_t i = 0; i < length; i++)
                p[i] = i % 200 == 199 ? '/' : 'a';
        memcpy(p, tag, strlen(tag));
        p[length] = 0;
        return p;
}

/* A held unit's path below the delegation root of uid (user@UID.service),
 * of about length bytes: its account's length in ret_account_len. */
static char *held_user_path(uid_t uid, const char *tag, size_t length, size_t *ret_account_len) {
        _cleanup_free_ char *tail = held_path(tag, length);
        char *p;

        ck_assert_int_ge(asprintf(&p, "user.slice/user-%u.slice/user@%u.service/%s", (unsigned) uid, (unsigned) uid,
                                  tail), 0);
        *ret_account_len = strcspn(p + strlen("user.slice/user-"), "/") + strlen("user.slice/user-");
        *ret_account_len += 1 + strcspn(p + *ret_account_len + 1, "/");
        return p;
}

/* Units held during standby take their account's share of the journal,
 * users' together theirs, and all of them the budget: past any, one more
 * is refused (nothing added), while others still fit. An account is where
 * the units lie, whatever uid they show (a user with subordinate uids
 * chowns his own cgroups to any of them). A held unit's owner reads back. */
START_TEST(test_held_budget) {
        _cleanup_journal_ Journal *j = journal_new(), *k = NULL;
        size_t line = 0, held = 0, alen = 0;
        char tag[32];
        uid_t uid = 1000;
        int r;

        j->phase = JOURNAL_ACTIVE;
        ck_assert_int_eq(journal_add_unit(j, "enter.service", UNIT_FROZEN, NULL), 0);
        /* One user: lines of 40 KiB until the share is used. */
        for (int i = 0;; i++) {
                _cleanup_free_ char *p = NULL;
                snprintf(tag, sizeof(tag), "u%d-%d", (int) uid, i);
                p = held_user_path(uid, tag, 40 * 1024, &alen);
                line = JOURNAL_HELD_LINE_SIZE(p);
                r = journal_add_held_unit(j, p, uid, alen, UNIT_FREEZING, "started during standby");
                if (r == -EDQUOT)
                        break;
                ck_assert_int_eq(r, 0);
                held++;
                ck_assert_uint_le(held * line, JOURNAL_HELD_UID_BUDGET);
        }
        ck_assert_uint_gt((held + 1) * line, JOURNAL_HELD_UID_BUDGET);
        ck_assert_uint_eq(j->n_units, held + 1);
        /* The same account under the uids of its own subtree: no more room. */
        for (uid_t sub = 100000; sub < 100100; sub++) {
                _cleanup_free_ char *p = NULL;
                snprintf(tag, sizeof(tag), "sub%u", (unsigned) sub);
                p = held_user_path(1000, tag, 40 * 1024, &alen);
                ck_assert_int_eq(journal_add_held_unit(j, p, sub, alen, UNIT_FREEZING, NULL), -EDQUOT);
        }
        /* Root's units are not kept out by the user's. */
        ck_assert_int_eq(journal_add_held_unit(j, "system.slice/late.service", 0, 0, UNIT_FREEZING, NULL), 0);
        /* Other users, until users' units take their budget. */
        for (uid = 1001;; uid++) {
                _cleanup_free_ char *p = NULL;
                snprintf(tag, sizeof(tag), "u%d", (int) uid);
                p = held_user_path(uid, tag, 40 * 1024, &alen);
                r = journal_add_held_unit(j, p, uid, alen, UNIT_FREEZING, NULL);
                if (r == -EDQUOT)
                        break;
                ck_assert_int_eq(r, 0);
                ck_assert_uint_lt(uid, 1000 + 1000);
        }
        size_t users = 0;
        for (size_t i = 0; i < j->n_units; i++)
                if (j->units[i].held_uid != JOURNAL_NOT_HELD && j->units[i].held_uid != 0)
                        users += JOURNAL_HELD_LINE_SIZE(j->units[i].cgroup);
        ck_assert_uint_le(users, JOURNAL_HELD_USERS_BUDGET);
        ck_assert_uint_gt(users + line, JOURNAL_HELD_USERS_BUDGET);
        /* What is left is root's, until all held units take the budget. */
        for (int i = 0;; i++) {
                _cleanup_free_ char *p = NULL;
                snprintf(tag, sizeof(tag), "system.slice/r%d", i);
                p = held_path(tag, 40 * 1024);
                r = journal_add_held_unit(j, p, 0, 0, UNIT_FREEZING, NULL);
                if (r == -EDQUOT)
                        break;
                ck_assert_int_eq(r, 0);
                ck_assert_int_lt(i, 1000);
        }
        size_t all = 0;
        for (size_t i = 0; i < j->n_units; i++)
                if (j->units[i].held_uid != JOURNAL_NOT_HELD)
                        all += JOURNAL_HELD_LINE_SIZE(j->units[i].cgroup);
        ck_assert_uint_le(all, JOURNAL_HELD_BUDGET);
        ck_assert_uint_gt(all + line, JOURNAL_HELD_BUDGET);
        /* Enter's units are not held units. */
        ck_assert_int_eq(journal_add_unit(j, "another.service", UNIT_FROZEN, NULL), 0);

        /* The owner reads back; a unit gone gives its room back. */
        ck_assert_int_eq(journal_save(dir_fd, j), 0);
        ck_assert_int_eq(journal_load(dir_fd, &k), 0);
        ck_assert(!journal_is_damaged(k));
        ck_assert_uint_eq(k->n_units, j->n_units);
        for (size_t i = 0; i < j->n_units; i++)
                ck_assert_uint_eq(k->units[i].held_uid, j->units[i].held_uid);
        ck_assert_uint_eq(k->units[0].held_uid, JOURNAL_NOT_HELD);
        ck_assert_uint_eq(k->units[1].held_uid, 1000);
        journal_remove_unit(k, &k->units[1]);
        _cleanup_free_ char *p = held_user_path(1000, "u1000-again", 40 * 1024, &alen);
        ck_assert_int_eq(journal_add_held_unit(k, p, 1000, alen, UNIT_FREEZING, NULL), 0);
}
END_TEST

/* "held UID" after the optional systemd address, nowhere else. */
START_TEST(test_held_field) {
        static const char good[] = "standby-journal 1\nphase active\n"
                                   "unit frozen 0 a.service \\- held 1000\n"
                                   "unit frozen 0 b.service \\- systemd unix:path=/x held 0\n"
                                   "unit frozen 0 c.service \\- systemd unix:path=/x\nend\n";
        static const char * const bad[] = { "unit frozen 0 a.service \\- held\n", "unit frozen 0 a.service \\- held x\n",
                                            "unit frozen 0 a.service \\- held 4294967295\n",
                                            "unit frozen 0 a.service \\- held 1 systemd unix:path=/x\n",
                                            "unit frozen 0 a.service \\- held 1 held 2\n" };
        _cleanup_journal_ Journal *j = NULL;

        ck_assert_int_eq(journal_parse(good, strlen(good), &j), 0);
        ck_assert(!journal_is_damaged(j));
        ck_assert_uint_eq(j->n_units, 3);
        ck_assert_uint_eq(j->units[0].held_uid, 1000);
        ck_assert_uint_eq(j->units[1].held_uid, 0);
        ck_assert_str_eq(j->units[1].systemd, "unix:path=/x");
        ck_assert_uint_eq(j->units[2].held_uid, JOURNAL_NOT_HELD);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_free_ char *text = NULL;
                _cleanup_journal_ Journal *k = NULL;
                ck_assert_int_ge(asprintf(&text, "standby-journal 1\nphase active\n%send\n", bad[i]), 0);
                ck_assert_int_eq(journal_parse(text, strlen(text), &k), 0);
                ck_assert_msg(journal_is_damaged(k) && k->n_units == 0, "taken: %s", bad[i]);
        }
}
END_TEST

/* A strategy per unit: "per-unit yes" in the header, a slacked unit's own
 * bound after its other fields, and units left alone. */
START_TEST(test_per_unit_fields) {
        static const char * const bad[] = { "unit slacked 0 a.service \\- slack\n", "unit slacked 0 a.service \\- slack 0\n",
                                            "unit slacked 0 a.service \\- slack 5 held 1\n",
                                            "unit slacked 0 a.service \\- slack 5 slack 6\n", "per-unit no\n",
                                            "per-unit yes\nper-unit yes\n" };
        _cleanup_journal_ Journal *j = journal_new(), *k = NULL;

        j->phase = JOURNAL_ACTIVE;
        j->per_unit = true;
        j->slack_ns = 1000;
        ck_assert_int_eq(journal_add_unit(j, "a.service", UNIT_SLACKED, NULL), 0);
        j->units[0].slack_ns = UINT64_C(30000000000);
        ck_assert_int_eq(journal_add_held_unit(j, "b.service", 1000, 0, UNIT_SLACKED, NULL), 0);
        j->units[1].slack_ns = UINT64_MAX;
        ck_assert_int_eq(journal_add_unit(j, "c.service", UNIT_LEFT, "Strategy: None="), 0);
        ck_assert_int_eq(journal_add_unit(j, "d.service", UNIT_SLACKED, NULL), 0);
        ck_assert_int_eq(journal_save(dir_fd, j), 0);

        ck_assert_int_eq(journal_load(dir_fd, &k), 0);
        ck_assert(!journal_is_damaged(k));
        ck_assert(k->per_unit);
        ck_assert_uint_eq(k->n_units, 4);
        ck_assert_uint_eq(k->units[0].slack_ns, UINT64_C(30000000000));
        ck_assert_uint_eq(k->units[1].slack_ns, UINT64_MAX);
        ck_assert_uint_eq(k->units[1].held_uid, 1000);
        ck_assert_int_eq(k->units[2].state, UNIT_LEFT);
        ck_assert_uint_eq(k->units[3].slack_ns, 0);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_free_ char *text = NULL;
                _cleanup_journal_ Journal *m = NULL;
                ck_assert_int_ge(asprintf(&text, "standby-journal 1\nphase active\n%send\n", bad[i]), 0);
                ck_assert_int_eq(journal_parse(text, strlen(text), &m), 0);
                ck_assert_msg(journal_is_damaged(m), "taken: %s", bad[i]);
        }
        /* Without the header line, a journal is one strategy for all. */
        const char one[] = "standby-journal 1\nphase active\nend\n";
        _cleanup_journal_ Journal *o = NULL;
        ck_assert_int_eq(journal_parse(one, strlen(one), &o), 0);
        ck_assert(!o->per_unit);
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
        tcase_add_test(tc, test_size_limit);
        tcase_add_test(tc, test_held_budget);
        tcase_add_test(tc, test_held_field);
        tcase_add_test(tc, test_per_unit_fields);
        suite_add_tcase(s, tc);
        return s;
}
