/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <linux/input-event-codes.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "macro.h"
#include "rules.h"
#include "strv.h"
#include "test-util.h"

static char dir[64];

static void setup(void) {
        snprintf(dir, sizeof(dir), "/tmp/standby-rules-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void) {
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        ck_assert_int_eq(system(cmd), 0);
}

static char *put(const char *sub, const char *name, const char *text) {
        char *p = NULL;
        char d[256];
        snprintf(d, sizeof(d), "%s%s%s", dir, sub ? "/" : "", sub ? sub : "");
        (void) mkdir(d, 0755);
        ck_assert_int_ge(asprintf(&p, "%s/%s", d, name), 0);
        FILE *f = fopen(p, "we");
        ck_assert_ptr_nonnull(f);
        fputs(text, f);
        fclose(f);
        return p;
}

START_TEST(test_parse_each_event) {
        _cleanup_rule_set_ RuleSet *set = calloc(1, sizeof(RuleSet));
        static const char * const good[] = {
                "[Match]\nEvent=push\nUnit=mail.service\n[Action]\nThaw=mail.service\nFor=30s\n",
                "[Match]\nEvent=dbus-signal\nMatch=type='signal',interface='org.example.Push'\n[Action]\nThaw=a.service\n",
                "[Match]\nEvent=dbus-call\nBusName=org.example.Mail\n[Action]\nThaw=mail.service\nFor=standby\n",
                "[Match]\nEvent=link\nInterface=wlan0\nChange=carrier\n[Action]\nThaw=nm-applet.service\n",
                "[Match]\nEvent=address\nFamily=ipv6\nChange=added\n[Action]\nThaw=sync.service\nFor=1min\n",
                "[Match]\nEvent=socket\nUnit=redis.service\n[Action]\nThaw=redis.service\nFor=10s\n",
                "[Match]\nEvent=input\nKey=KEY_POWER\nValue=1\n[Action]\nExitStandby=yes\n",
                "[Match]\nEvent=uevent\nSubsystem=usb\nChange=add\n[Action]\nThaw=udisks.service\n",
        };
        for (size_t i = 0; i < ELEMENTSOF(good); i++) {
                char name[32];
                _cleanup_free_ char *err = NULL;
                snprintf(name, sizeof(name), "%zu.rule", i);
                _cleanup_free_ char *p = put(NULL, name, good[i]);
                ck_assert_msg(rules_parse_file(set, p, false, &err) == 0, "case %zu: %s", i, err);
        }
        ck_assert_uint_eq(set->n_rules, ELEMENTSOF(good));
        ck_assert_int_eq(set->rules[0].event, EVENT_PUSH);
        ck_assert_uint_eq(set->rules[0].duration, 30 * USEC_PER_SEC);
        ck_assert_uint_eq(set->rules[2].duration, USEC_INFINITY);
        ck_assert_int_eq(set->rules[4].family, AF_INET6);
        ck_assert_int_eq(set->rules[6].key_type, EV_KEY);
        ck_assert_int_eq(set->rules[6].key_code, KEY_POWER);
        ck_assert(set->rules[6].exit_standby);
        _cleanup_free_ char *d = rule_describe(&set->rules[5]);
        ck_assert_ptr_nonnull(strstr(d, "on socket activity of redis.service: thaw redis.service for 10s"));
}
END_TEST

/* Every kind of mistake: one message naming file:line and what was expected. */
START_TEST(test_errors_table) {
        static const struct {
                const char *text;
                int line;           /* 0: the message names the file only */
                const char *expect;
        } table[] = {
                { "[Match]\nEvent=teleport\n[Action]\nThaw=a.service\n", 2, "Event=teleport: expected one of push" },
                { "[Match]\nEvent=input\nKey=KEY_NOPE\n[Action]\nExitStandby=yes\n", 3, "Key=KEY_NOPE: expected an evdev key name" },
                { "[Match]\nEvent=input\nSwitch=KEY_POWER\n[Action]\nExitStandby=yes\n", 3, "Switch=KEY_POWER: expected an evdev switch" },
                { "[Match]\nEvent=link\nKey=KEY_POWER\n[Action]\nThaw=a.service\n", 3, "Key= does not apply to Event=link" },
                { "[Match]\nEvent=link\nChange=added\n[Action]\nThaw=a.service\n", 3, "Change=added: Event=link expects one of: up down carrier" },
                { "[Match]\nEvent=socket\n[Action]\nThaw=a.service\n", 2, "Event=socket needs Unit=" },
                { "[Match]\nEvent=dbus-signal\n[Action]\nThaw=a.service\n", 2, "Event=dbus-signal needs Match=" },
                { "[Match]\nEvent=push\nUnit=../../etc\n[Action]\nThaw=a.service\n", 3, "Unit=../../etc: expected a unit name" },
                { "[Match]\nEvent=push\n[Action]\nThaw=a.service bad/name\n", 4, "Thaw=: \"bad/name\" is not a unit name" },
                { "[Match]\nEvent=push\n[Action]\nThaw=a.service\nFor=soon\n", 5, "For=soon: expected a duration" },
                { "[Match]\nEvent=push\n[Action]\nFor=5s\n", 0, "[Action] needs Thaw= or ExitStandby=yes" },
                { "[Match]\nUnit=a.service\n[Action]\nThaw=a.service\n", 0, "no Event= in [Match]" },
                { "[Match]\nEvent=push\n[Whatever]\nX=1\n", 4, "unknown section [Whatever]" },
                { "[Match]\nEvent=push\nColour=red\n", 3, "unknown key \"Colour\" in [Match]" },
                { "[Match]\nEvent=push\nthis is not ini\n", 3, "syntax error" },
                { "[Match]\nEvent=input\nKey=KEY_A\nSwitch=SW_LID\n[Action]\nExitStandby=yes\n", 4, "Key= or Switch=, not both" },
                { "[Match]\nEvent=input\nKey=KEY_A\nValue=7\n[Action]\nExitStandby=yes\n", 4, "Value=7: expected 0" },
                { "[Match]\nEvent=address\nFamily=ipx\n[Action]\nThaw=a.service\n", 3, "Family=ipx: expected \"ipv4\" or \"ipv6\"" },
        };
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_rule_set_ RuleSet *set = calloc(1, sizeof(RuleSet));
                _cleanup_free_ char *p = put(NULL, "x.rule", table[i].text), *err = NULL, *want = NULL;

                ck_assert_msg(rules_parse_file(set, p, false, &err) == -EINVAL, "case %zu accepted", i);
                ck_assert_uint_eq(set->n_rules, 0);
                if (table[i].line)
                        ck_assert_int_ge(asprintf(&want, "%s:%d: ", p, table[i].line), 0);
                else
                        ck_assert_int_ge(asprintf(&want, "%s: ", p), 0);
                ck_assert_msg(strneq(err, want, strlen(want)), "case %zu: \"%s\" should start \"%s\"", i, err, want);
                ck_assert_msg(strstr(err, table[i].expect), "case %zu: \"%s\" lacks \"%s\"", i, err, table[i].expect);
        }
}
END_TEST

/* /etc overrides /usr/lib by name; files are read in lexical order. */
START_TEST(test_override_and_order) {
        char etc[128], lib[128];
        _cleanup_strv_free_ char **paths = NULL;
        static const char rule[] = "[Match]\nEvent=push\n[Action]\nThaw=a.service\n";

        free(put("etc", "20-b.rule", rule));
        free(put("lib", "20-b.rule", "garbage that would not parse\n"));
        free(put("lib", "10-a.rule", rule));
        free(put("lib", "30-c.conf", "not a rule file\n"));
        snprintf(etc, sizeof(etc), "%s/etc", dir);
        snprintf(lib, sizeof(lib), "%s/lib", dir);
        const char *dirs[] = { etc, "/nonexistent/standby/rules.d", lib, NULL };
        ck_assert_int_eq(rules_enumerate(dirs, &paths), 0);
        ck_assert_uint_eq(strv_length(paths), 2);
        ck_assert_ptr_nonnull(strstr(paths[0], "/lib/10-a.rule"));
        ck_assert_ptr_nonnull(strstr(paths[1], "/etc/20-b.rule"));

        _cleanup_rule_set_ RuleSet *set = NULL;
        _cleanup_free_ char *err = NULL;
        ck_assert_int_eq(rules_load(dirs, false, &set, &err), 0);
        ck_assert_uint_eq(set->n_rules, 2);

        /* All or nothing: one bad file and nothing loads. */
        free(put("etc", "40-bad.rule", "[Match]\nEvent=nope\n"));
        RuleSet *none = NULL;
        char *e2 = NULL;
        ck_assert_int_eq(rules_load(dirs, false, &none, &e2), -EINVAL);
        ck_assert_ptr_null(none);
        ck_assert_ptr_nonnull(strstr(e2, "40-bad.rule:2: Event=nope"));
        free(e2);
}
END_TEST

/* Only root-owned files that others cannot write are taken. */
START_TEST(test_ownership) {
        _cleanup_free_ char *p = put(NULL, "o.rule", "[Match]\nEvent=push\n[Action]\nThaw=a.service\n");
        _cleanup_rule_set_ RuleSet *set = calloc(1, sizeof(RuleSet));
        char *err = NULL;

        if (geteuid() != 0) {
                fprintf(stderr, "SKIP: ownership checks need root\n");
                return;
        }
        ck_assert_int_eq(chmod(p, 0646), 0);
        ck_assert_int_eq(rules_parse_file(set, p, true, &err), -EPERM);
        ck_assert_ptr_nonnull(strstr(err, "must be owned by root and not writable by others"));
        free(TAKE_PTR(err));
        ck_assert_int_eq(chmod(p, 0644), 0);
        ck_assert_int_eq(chown(p, 65534, 0), 0);
        ck_assert_int_eq(rules_parse_file(set, p, true, &err), -EPERM);
        ck_assert_ptr_nonnull(strstr(err, "owner uid 65534"));
        free(TAKE_PTR(err));
        ck_assert_int_eq(chown(p, 0, 0), 0);
        ck_assert_int_eq(rules_parse_file(set, p, true, &err), 0);
        ck_assert_uint_eq(set->n_rules, 1);
}
END_TEST

static int run_check(const char *rules_dir, char **ret_out) {
        char cmd[1024];
        snprintf(cmd, sizeof(cmd), "%s --check --rules-dir '%s' 2>&1", test_bin("standby-listener"), rules_dir);
        return test_run_shell(cmd, ret_out);
}

/* standby-listener --check: prints what it understood; exit 5 names the bad file:line. */
START_TEST(test_listener_check_cli) {
        _cleanup_free_ char *out = NULL, *out2 = NULL;

        free(put("d", "50-lid.rule", "[Match]\nEvent=input\nSwitch=SW_LID\nValue=0\n[Action]\nExitStandby=yes\n"));
        char d[128];
        snprintf(d, sizeof(d), "%s/d", dir);
        ck_assert_int_eq(run_check(d, &out), 0);
        ck_assert_msg(strstr(out, "50-lid.rule: on SW_LID released/off: end standby"), "%s", out);

        free(put("d", "60-bad.rule", "[Match]\nEvent=link\nKey=KEY_POWER\n[Action]\nThaw=a.service\n"));
        ck_assert_int_eq(run_check(d, &out2), 5);
        ck_assert_msg(strstr(out2, "60-bad.rule:3: Key= does not apply to Event=link"), "%s", out2);
}
END_TEST

Suite *rules_suite(void) {
        Suite *s = suite_create("rules");
        TCase *tc = tcase_create("files");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_parse_each_event);
        tcase_add_test(tc, test_errors_table);
        tcase_add_test(tc, test_override_and_order);
        tcase_add_test(tc, test_ownership);
        tcase_add_test(tc, test_listener_check_cli);
        suite_add_tcase(s, tc);
        return s;
}
