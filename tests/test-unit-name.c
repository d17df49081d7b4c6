/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cgroup.h"
#include "macro.h"
#include "test-util.h"
#include "unit-name.h"

START_TEST(test_valid_names) {
        static const char * const good[] = {
                "foo.service", "user@1000.service", "a-b_c:d.scope", "user-1000.slice", "-.slice",
                "getty@tty1.service", "x\\x2dy.mount", "app@.service", "sys-devices-a.device",
        };
        static const char * const bad[] = {
                "", "foo", ".service", "foo.bogus", "foo bar.service", "@x.service", "a/b.service",
                "foo.service\n", "..", "föö.service",
        };
        for (size_t i = 0; i < ELEMENTSOF(good); i++)
                ck_assert_msg(unit_name_is_valid(good[i]), "%s should be valid", good[i]);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_msg(!unit_name_is_valid(bad[i]), "%s should be invalid", bad[i]);

        char longname[300];
        memset(longname, 'a', 250);
        strcpy(longname + 250, ".service");
        ck_assert(!unit_name_is_valid(longname));
}
END_TEST

START_TEST(test_slice_path) {
        static const struct {
                const char *slice, *path;
        } table[] = {
                { "-.slice", "" },
                { "user.slice", "user.slice" },
                { "user-1000.slice", "user.slice/user-1000.slice" },
                { "a-b-c.slice", "a.slice/a-b.slice/a-b-c.slice" },
        };
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_free_ char *p = NULL;
                ck_assert_int_eq(unit_slice_path(table[i].slice, &p), 0);
                ck_assert_str_eq(p, table[i].path);
        }
        char *p = NULL;
        ck_assert_int_eq(unit_slice_path("a--b.slice", &p), -EINVAL);
        ck_assert_int_eq(unit_slice_path("-a.slice", &p), -EINVAL);
        ck_assert_int_eq(unit_slice_path("a.service", &p), -EINVAL);
        ck_assert_ptr_null(p);
}
END_TEST

START_TEST(test_path_validate) {
        static const char * const good[] = { "", "a", "a/b.service", "user.slice/user-1000.slice", "a b" };
        static const char * const bad[] = { "/a", "..", "a/..", "a/../b", ".", "a/./b", "a//b", "a/", "a\nb", "\x01" };
        for (size_t i = 0; i < ELEMENTSOF(good); i++)
                ck_assert_msg(cgroup_path_validate(good[i]) == 0, "%s should pass", good[i]);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_msg(cgroup_path_validate(bad[i]) == -EINVAL, "%s should be refused", bad[i]);
}
END_TEST

/* On the real tree: names resolve by search, within the scopes (the
 * targets) first, then in the whole tree; paths by opening beneath the
 * mount, and nothing reaches outside it. */
START_TEST(test_resolve_real_tree) {
        _cleanup_free_ char *rel = NULL, *only = NULL, *only_rel = NULL;
        char *apps[] = { (char *) test_cgpath("apps.slice"), NULL }, *base[] = { (char *) test_cgpath(NULL), NULL };
        char sym[4096];

        if (!test_need_root_cgroup2())
                return;
        /* A name no other runner's tree has: found outside the scopes. */
        ck_assert_int_ge(asprintf(&only, "only-%s-%d.service", test_runner_id(), (int) getpid()), 0);
        ck_assert_int_ge(asprintf(&only_rel, "other.slice/%s", only), 0);
        safe_close(test_cgroup("apps.slice/mail-sync.service"));
        safe_close(test_cgroup("other.slice/dup.service"));
        safe_close(test_cgroup("apps.slice/dup.service"));
        safe_close(test_cgroup(only_rel));

        ck_assert_int_eq(unit_resolve_cgroup(T.root_fd, base, "mail-sync.service", &rel), 0);
        ck_assert_str_eq(rel, test_cgpath("apps.slice/mail-sync.service"));
        free(TAKE_PTR(rel));
        ck_assert_int_eq(unit_resolve_cgroup(T.root_fd, apps, "dup.service", &rel), 0);
        ck_assert_str_eq(rel, test_cgpath("apps.slice/dup.service"));
        free(TAKE_PTR(rel));
        ck_assert_int_eq(unit_resolve_cgroup(T.root_fd, base, "dup.service", &rel), -ENOTUNIQ);
        ck_assert_int_eq(unit_resolve_cgroup(T.root_fd, NULL, "dup.service", &rel), -ENOTUNIQ);
        ck_assert_int_eq(unit_resolve_cgroup(T.root_fd, apps, only, &rel), 0);
        ck_assert_str_eq(rel, test_cgpath(only_rel));
        free(TAKE_PTR(rel));
        ck_assert_int_eq(unit_resolve_cgroup(T.root_fd, NULL, test_cgpath("apps.slice"), &rel), 0);
        free(TAKE_PTR(rel));
        ck_assert_int_eq(unit_resolve_cgroup(T.root_fd, base, "nonexistent-standby-unit.service", &rel), -ENOENT);
        ck_assert_int_eq(unit_resolve_cgroup(T.root_fd, NULL, "../etc", &rel), -EINVAL);
        ck_assert_int_eq(unit_resolve_cgroup(T.root_fd, NULL, "/etc", &rel), -EINVAL);
        snprintf(sym, sizeof(sym), "%s/../../..", test_cgpath(NULL));
        ck_assert_int_eq(unit_resolve_cgroup(T.root_fd, NULL, sym, &rel), -EINVAL);
        ck_assert_ptr_null(rel);
}
END_TEST

Suite *unit_name_suite(void) {
        Suite *s = suite_create("unit-name");
        TCase *tc = tcase_create("grammar");
        tcase_add_test(tc, test_valid_names);
        tcase_add_test(tc, test_slice_path);
        tcase_add_test(tc, test_path_validate);
        suite_add_tcase(s, tc);

        tc = test_kernel_tcase(s, "resolve", 0);
        tcase_add_test(tc, test_resolve_real_tree);
        return s;
}
