/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The files `make install` puts in place for systemd and D-Bus are valid. */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "fileio.h"
#include "macro.h"
#include "test-util.h"

static const char *units_dir(void) {
        const char *d = getenv("STANDBY_UNITS_DIR");
        return d ? d : "units";
}

/* systemd's own checker finds nothing to say about the units. */
START_TEST(test_units_verify) {
        char dir[] = "/tmp/standby-units-XXXXXX", cmd[8192], sbindir[PATH_MAX];
        _cleanup_free_ char *out = NULL;

        if (access("/usr/bin/systemd-analyze", X_OK) < 0) {
                test_skip("no systemd-analyze here");
                return;
        }
        ck_assert_ptr_nonnull(mkdtemp(dir));
        ck_assert_ptr_nonnull(realpath(getenv("STANDBY_BUILD_DIR") ?: "build", sbindir));
        snprintf(cmd, sizeof(cmd),
                 "for u in %s/*.service.in; do "
                 "sed 's|@SBINDIR@|%s|g' $u > %s/$(basename $u .in); done; cp %s/standby.target %s/ && "
                 "SYSTEMD_LOG_LEVEL=notice systemd-analyze verify --man=no %s/*.service %s/standby.target 2>&1",
                 units_dir(), sbindir, dir, units_dir(), dir, dir, dir);
        int code = test_run_shell(cmd, &out);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        (void) !system(cmd);
        ck_assert_msg(code == 0 && out[0] == 0, "systemd-analyze verify said (%d): %s", code, out);
}
END_TEST

/* dbus-daemon loads the listener's policy. */
START_TEST(test_dbus_policy_loads) {
        char dir[] = "/tmp/standby-policy-XXXXXX", conf[256], cmd[512], policy[PATH_MAX];
        _cleanup_free_ char *out = NULL;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        ck_assert_ptr_nonnull(realpath(units_dir(), policy));
        snprintf(conf, sizeof(conf), "%s/bus.conf", dir);
        FILE *f = fopen(conf, "we");
        ck_assert_ptr_nonnull(f);
        fprintf(f, "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
                   " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
                   "<busconfig><type>system</type><listen>unix:path=%s/bus</listen><auth>EXTERNAL</auth>\n"
                   "<include>%s/org.standby.Listener1.conf</include></busconfig>\n",
                   dir, policy);
        fclose(f);
        /* It prints its address only once the configuration has loaded. */
        int p[2];
        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                dup2(p[1], 1);
                dup2(p[1], 2);
                char arg[300];
                snprintf(arg, sizeof(arg), "--config-file=%s", conf);
                execlp("dbus-daemon", "dbus-daemon", arg, "--nofork", "--print-address=1", NULL);
                _exit(127);
        }
        close(p[1]);
        struct pollfd pf = { .fd = p[0], .events = POLLIN };
        char line[512] = {};
        ck_assert_int_eq(poll(&pf, 1, 10000), 1);
        ck_assert_int_gt(read(p[0], line, sizeof(line) - 1), 0);
        close(p[0]);
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        (void) !system(cmd);
        ck_assert_msg(strneq(line, "unix:path=", 10), "dbus-daemon refused the policy: %s", line);
}
END_TEST

/* The example rules are all comments: they load, as no rule. */
START_TEST(test_example_rules) {
        char cmd[1024];
        _cleanup_free_ char *out = NULL;

        snprintf(cmd, sizeof(cmd), "%s --check --rules-dir %s/rules.d 2>&1", test_bin("standby-listener"), units_dir());
        ck_assert_int_eq(test_run_shell(cmd, &out), 0);
        ck_assert_msg(strstr(out, "No rules."), "%s", out);
}
END_TEST

/* `make install` puts the D-Bus policy and the tmpfiles.d entry where the
 * system bus and systemd-tmpfiles read them, whatever PREFIX is, and `make
 * uninstall` removes every file it put, except the administrator's
 * /etc/standby. */
START_TEST(test_install_uninstall) {
        char dir[] = "/tmp/standby-install-XXXXXX", cmd[1024];
        const char *build = getenv("STANDBY_BUILD_DIR") ?: "build";
        _cleanup_free_ char *out = NULL, *left = NULL;

        if (access("Makefile", R_OK) < 0) {
                test_skip("not run from the source tree");
                return;
        }
        ck_assert_ptr_nonnull(mkdtemp(dir));
        /* The same build directory and flags as this runner's, so that make
         * finds everything up to date and only copies. */
        snprintf(cmd, sizeof(cmd), "make -s B=%s %s install DESTDIR=%s PREFIX=/usr/local 2>&1", build,
                 strstr(build, "san") ? "SAN=1" : "", dir);
        if (test_run_shell(cmd, &out) != 0) {
                snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
                (void) !system(cmd);
                ck_abort_msg("make install: %s", out);
        }
        char policy[256], tmpfiles[256], sbin[256], actions[256];
        snprintf(policy, sizeof(policy), "%s/usr/share/dbus-1/system.d/org.standby.Listener1.conf", dir);
        snprintf(actions, sizeof(actions), "%s/usr/share/polkit-1/actions/org.standby.policy", dir);
        snprintf(tmpfiles, sizeof(tmpfiles), "%s/usr/lib/tmpfiles.d/standby.conf", dir);
        snprintf(sbin, sizeof(sbin), "%s/usr/local/sbin/standby-listener", dir);
        bool have_policy = access(policy, R_OK) == 0, have_tmpfiles = access(tmpfiles, R_OK) == 0,
             have_sbin = access(sbin, X_OK) == 0, have_actions = access(actions, R_OK) == 0;

        free(out);
        out = NULL;
        snprintf(cmd, sizeof(cmd), "make -s B=%s %s uninstall DESTDIR=%s PREFIX=/usr/local 2>&1", build,
                 strstr(build, "san") ? "SAN=1" : "", dir);
        ck_assert_msg(test_run_shell(cmd, &out) == 0, "make uninstall: %s", out);
        snprintf(cmd, sizeof(cmd), "cd %s && find . -type f ! -path './etc/standby/*'", dir);
        ck_assert_int_eq(test_run_shell(cmd, &left), 0);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        (void) !system(cmd);
        ck_assert_msg(have_policy, "no policy at %s", policy);
        ck_assert_msg(have_tmpfiles, "no tmpfiles.d entry at %s", tmpfiles);
        ck_assert_msg(have_sbin, "no listener at %s", sbin);
        ck_assert_msg(have_actions, "no polkit actions at %s", actions);
        ck_assert_msg(left[0] == 0, "make uninstall left: %s", left);
}
END_TEST

static const char *man_dir(void) {
        const char *d = getenv("STANDBY_MAN_SRC_DIR");
        return d ? d : "docs/man";
}

static bool is_option_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

/* text holds opt as a whole word: not a prefix of a longer option. */
static bool mentions(const char *text, const char *opt) {
        size_t n = strlen(opt);
        for (const char *p = strstr(text, opt); p; p = strstr(p + 1, opt))
                if ((p == text || !is_option_char(p[-1])) && !is_option_char(p[n]))
                        return true;
        return false;
}

/* Every option a program's --help lists is in its man page: the page is
 * the reference, and an option it lacks is one nobody can look up. */
START_TEST(test_man_pages_cover_help) {
        static const struct {
                const char *program, *page;
        } pages[] = {
                { "standby-manager", "standby-manager.8.scd" },
                { "standby-listener", "standby-listener.8.scd" },
                { "standby-bench", "standby-bench.1.scd" },
        };

        for (size_t i = 0; i < ELEMENTSOF(pages); i++) {
                _cleanup_free_ char *help = NULL, *page = NULL, *cmd = NULL, *path = NULL;
                size_t n_options = 0;

                ck_assert_int_ge(asprintf(&cmd, "%s --help", test_bin(pages[i].program)), 0);
                ck_assert_int_eq(test_run_shell(cmd, &help), 0);
                ck_assert_int_ge(asprintf(&path, "%s/%s", man_dir(), pages[i].page), 0);
                ck_assert_msg(read_full_fileat(AT_FDCWD, path, &page, NULL) >= 0, "cannot read %s", path);
                /* An option is a word that starts with one or two dashes
                 * after a blank, a comma or a bracket. */
                for (const char *p = help; *p; p++) {
                        if (*p != '-' || (p > help && !strchr(" \t,[", p[-1])))
                                continue;
                        const char *e = p + (p[1] == '-' ? 2 : 1);
                        if (!((*e >= 'a' && *e <= 'z') || (*e >= 'A' && *e <= 'Z')))
                                continue;
                        while (is_option_char(*e))
                                e++;
                        _cleanup_free_ char *opt = strndup(p, (size_t) (e - p));
                        ck_assert_ptr_nonnull(opt);
                        ck_assert_msg(mentions(page, opt), "%s --help lists %s, which %s does not", pages[i].program, opt,
                                      path);
                        n_options++;
                        p = e - 1;
                }
                ck_assert_msg(n_options >= 3, "%s --help: only %zu options found", pages[i].program, n_options);
        }
}
END_TEST

Suite *units_suite(void) {
        Suite *s = suite_create("units");
        TCase *tc = tcase_create("files");
        tcase_add_test(tc, test_units_verify);
        tcase_add_test(tc, test_dbus_policy_loads);
        tcase_add_test(tc, test_example_rules);
        tcase_add_test(tc, test_install_uninstall);
        tcase_add_test(tc, test_man_pages_cover_help);
        suite_add_tcase(s, tc);
        return s;
}
