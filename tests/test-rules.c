/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <linux/input-event-codes.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"
#include "../listener/rules.h"
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
                "[Match]\nEvent=socket\nUnit=memcached.service\n[Action]\nThaw=memcached.service\nFor=5s\n"
                "EndWhenIdle=yes\n",
                "[Match]\nEvent=push\n[Action]\nThaw=a.service\nFor=12345678901ms\nEndWhenIdle=yes\n",
        };
        for (size_t i = 0; i < ELEMENTSOF(good); i++) {
                char name[32];
                _cleanup_free_ char *err = NULL;
                snprintf(name, sizeof(name), "%zu.rule", i);
                _cleanup_free_ char *p = put(NULL, name, good[i]);
                ck_assert_msg(rules_parse_file(set, p, false, &err) == 0, "case %zu: %s", i, err);
        }
        ck_assert_uint_eq(set->n_rules, ELEMENTSOF(good));
        ck_assert_str_eq(set->rules[0].event->name, "push");
        ck_assert_uint_eq(set->rules[0].duration, 30 * USEC_PER_SEC);
        ck_assert_uint_eq(set->rules[2].duration, USEC_INFINITY);
        ck_assert(set->rules[6].exit_standby);
        ck_assert(!set->rules[5].end_when_idle);
        ck_assert(set->rules[8].end_when_idle);
        /* Each kind's keys as its source understood them. */
        static const char * const described[] = {
                "on a D-Bus push for mail.service: thaw mail.service for 30s",
                "on the D-Bus signal type='signal',interface='org.example.Push': thaw a.service until standby ends",
                "on a method call to org.example.Mail: thaw mail.service until standby ends",
                "on link carrier of wlan0: thaw nm-applet.service until standby ends",
                "on address added (ipv6): thaw sync.service for 1min",
                "on socket activity of redis.service: thaw redis.service for 10s",
                "on KEY_POWER pressed/on: end standby",
                "on uevent add of usb: thaw udisks.service until standby ends",
                "on socket activity of memcached.service: thaw memcached.service until idle, at most 5s",
                /* The longest bound, whole. */
                ": thaw a.service until idle, at most 12345678901ms",
        };
        for (size_t i = 0; i < ELEMENTSOF(described); i++) {
                _cleanup_free_ char *d = rule_describe(&set->rules[i]);
                ck_assert_msg(d && strstr(d, described[i]), "case %zu: %s", i, strna(d));
        }
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
                /* One rule a file: a second [Match] is refused, not merged. */
                { "[Match]\nEvent=push\n[Action]\nThaw=a.service\n[Match]\nUnit=b.service\n", 5,
                  "[Match] a second time: each section appears once in a file" },
                { "[Match]\nEvent=push\n[Action]\nThaw=a.service\n[Action]\nFor=5s\n", 5, "[Action] a second time" },
                { "[Match]\nEvent=link\nChange=added\n[Action]\nThaw=a.service\n", 3, "Change=added: Event=link expects one of: up down carrier" },
                { "[Match]\nEvent=socket\n[Action]\nThaw=a.service\n", 2, "Event=socket needs Unit=" },
                { "[Match]\nEvent=dbus-signal\n[Action]\nThaw=a.service\n", 2, "Event=dbus-signal needs Match=" },
                { "[Match]\nEvent=push\nUnit=../../etc\n[Action]\nThaw=a.service\n", 3, "Unit=../../etc: expected a unit name" },
                { "[Match]\nEvent=push\n[Action]\nThaw=a.service bad/name\n", 4, "Thaw=: \"bad/name\" is not a unit name" },
                { "[Match]\nEvent=push\n[Action]\nThaw=a.service\nFor=soon\n", 5, "For=soon: expected a duration" },
                { "[Match]\nEvent=push\n[Action]\nThaw=a.service\nEndWhenIdle=soon\n", 5,
                  "EndWhenIdle=soon: expected \"yes\" or \"no\"" },
                { "[Match]\nEvent=push\n[Action]\nThaw=a.service\nEndWhenIdle=yes\n", 0,
                  "EndWhenIdle=yes needs For= a time span" },
                { "[Match]\nEvent=push\n[Action]\nThaw=a.service\nEndWhenIdle=yes\nFor=standby\n", 0,
                  "EndWhenIdle=yes needs For= a time span" },
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
        _cleanup_free_ char *enum_err = NULL;
        ck_assert_int_eq(rules_enumerate(dirs, false, &paths, &enum_err), 0);
        ck_assert_uint_eq(strv_length(paths), 2);
        ck_assert_ptr_nonnull(strstr(paths[0], "/lib/10-a.rule"));
        ck_assert_ptr_nonnull(strstr(paths[1], "/etc/20-b.rule"));

        _cleanup_rule_set_ RuleSet *set = NULL;
        _cleanup_free_ char *err = NULL;
        ck_assert_int_eq(rules_load(dirs, false, &set, &err), 0);
        ck_assert_uint_eq(set->n_rules, 2);

        /* A symbolic link to /dev/null masks the name in every directory
         * after it; a link to anything else is no mask (and no file is ever
         * read through a link). */
        char mask[256];
        snprintf(mask, sizeof(mask), "%s/10-a.rule", etc);
        static const struct {
                const char *target;
                size_t n;
                const char *first;
        } links[] = { { "/dev/null", 1, "/etc/20-b.rule" }, { "/dev/zero", 2, "/etc/10-a.rule" } };
        for (size_t i = 0; i < ELEMENTSOF(links); i++) {
                (void) unlink(mask);
                ck_assert_int_eq(symlink(links[i].target, mask), 0);
                strv_free(TAKE_PTR(paths));
                ck_assert_int_eq(rules_enumerate(dirs, false, &paths, &enum_err), 0);
                ck_assert_uint_eq(strv_length(paths), links[i].n);
                ck_assert_msg(strstr(paths[0], links[i].first), "%s: %s", links[i].target, paths[0]);
        }
        RuleSet *linked = NULL;
        char *le = NULL;
        ck_assert_int_eq(rules_load(dirs, false, &linked, &le), -ELOOP);
        ck_assert_ptr_null(linked);
        free(le);
        ck_assert_int_eq(unlink(mask), 0);

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
                test_skip("ownership checks need root");
                return;
        }
        ck_assert_int_eq(chmod(p, 0646), 0);
        ck_assert_int_eq(rules_parse_file(set, p, true, &err), -EPERM);
        ck_assert_ptr_nonnull(strstr(err, "must be owned by root and writable by root alone"));
        free(TAKE_PTR(err));
        /* Group-writable is refused as world-writable is. */
        ck_assert_int_eq(chmod(p, 0664), 0);
        ck_assert_int_eq(rules_parse_file(set, p, true, &err), -EPERM);
        ck_assert_ptr_nonnull(strstr(err, "mode 0664"));
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

static int parse_text(RuleSet *set, const char *text, char **ret_err) {
        _cleanup_free_ char *p = put(NULL, "t.rule", text);
        return rules_parse_file(set, p, false, ret_err);
}

/* A line of any length is read whole: a long Match= is kept entire (inih's
 * 200-byte buffer kept only its head, and read its tail as another line). */
START_TEST(test_long_lines) {
        _cleanup_rule_set_ RuleSet *set = calloc(1, sizeof(RuleSet));
        _cleanup_free_ char *text = NULL, *match = NULL, *thaw = NULL, *err = NULL;
        char seg[400] = "";

        for (int i = 0; i < 40; i++)
                strcat(seg, "/Segment");
        ck_assert_int_ge(asprintf(&match, "type='signal',interface='org.example.Push',path='%s'", seg), 0);
        ck_assert_int_gt(strlen(match), 300);
        for (int i = 0; i < 100; i++) {
                char *t = NULL;
                ck_assert_int_ge(asprintf(&t, "%s%sunit-%d.service", thaw ?: "", thaw ? " " : "", i), 0);
                free(thaw);
                thaw = t;
        }
        ck_assert_int_ge(asprintf(&text, "[Match]\nEvent=dbus-signal\nMatch=%s\n[Action]\nThaw=%s\n", match, thaw), 0);
        ck_assert_msg(parse_text(set, text, &err) == 0, "%s", err);
        ck_assert_uint_eq(set->n_rules, 1);
        _cleanup_free_ char *d = rule_describe(&set->rules[0]), *want = NULL;
        ck_assert_int_ge(asprintf(&want, "on the D-Bus signal %s: thaw unit-0.service ", match), 0);
        ck_assert_msg(d && strstr(d, want), "%s", strna(d));
        ck_assert_uint_eq(strv_length(set->rules[0].thaw), 100);
        ck_assert_str_eq(set->rules[0].thaw[99], "unit-99.service");

        /* The tail of a long line is no line of its own. */
        free(TAKE_PTR(text));
        char pad[300];
        memset(pad, 'x', sizeof(pad) - 1);
        pad[sizeof(pad) - 1] = 0;
        ck_assert_int_ge(asprintf(&text, "[Match]\nEvent=dbus-signal\nMatch=type='signal',arg0='%.*s' Match=type='signal'\n"
                                         "[Action]\nThaw=a.service\n", 190, pad), 0);
        ck_assert_int_eq(parse_text(set, text, &err), -EINVAL);
        ck_assert_msg(strstr(err, ":3: Match="), "%s", err);
        ck_assert_uint_eq(set->n_rules, 1);
}
END_TEST

/* What inih took silently: a continuation line, an inline comment, a NUL. */
START_TEST(test_syntax_strict) {
        static const struct {
                const char *text;
                size_t len;
                int line;
                const char *expect;
        } table[] = {
                { "[Match]\nEvent=push\n[Action]\nThaw=a.service\n  b.service\n", 0, 5, "syntax error" },
                { "[Match]\nEvent=push\n[Action]\nThaw=a.service ; b.service\n", 0, 4, "\";\" is not a unit name" },
                { "[Match]\nEvent=push\n[Action]\nThaw=a.service\0b.service\n", 44, 4, "a NUL byte" },
                { "[Match]\nEvent=push\n[Action]\nThaw=a.service\033[2J\n", 0, 4, "a control character (byte 0x1b)" },
                { "[Match\nEvent=push\n", 0, 1, "expected \"[Section]\"" },
                { "Event=push\n", 0, 1, "unknown section []" },
                { "[Match]\n=push\n", 0, 2, "syntax error" },
        };
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_rule_set_ RuleSet *set = calloc(1, sizeof(RuleSet));
                _cleanup_free_ char *err = NULL, *want = NULL;
                size_t len = table[i].len ?: strlen(table[i].text);

                ck_assert_msg(rules_parse_buffer(set, "b.rule", table[i].text, len, &err) == -EINVAL, "case %zu accepted", i);
                ck_assert_int_ge(asprintf(&want, "b.rule:%d: ", table[i].line), 0);
                ck_assert_msg(strneq(err, want, strlen(want)), "case %zu: \"%s\" should start \"%s\"", i, err, want);
                ck_assert_msg(strstr(err, table[i].expect), "case %zu: \"%s\" lacks \"%s\"", i, err, table[i].expect);
        }
        /* CRLF line ends and a byte order mark are fine. */
        _cleanup_rule_set_ RuleSet *set = calloc(1, sizeof(RuleSet));
        _cleanup_free_ char *err = NULL;
        const char crlf[] = "\xef\xbb\xbf[Match]\r\nEvent=push\r\n[Action]\r\nThaw=a.service\r\n";
        ck_assert_msg(rules_parse_buffer(set, "c.rule", crlf, strlen(crlf), &err) == 0, "%s", err);
        ck_assert_str_eq(set->rules[0].thaw[0], "a.service");
}
END_TEST

/* Every value as strictly as the listener will use it: what the bus or the
 * kernel would refuse, or what could break out of a match string, is an
 * error with FILE:LINE. */
START_TEST(test_values_strict) {
        static const struct {
                const char *match;   /* the [Match] section after its first line */
                bool ok;
        } table[] = {
                { "Event=dbus-call\nBusName=org.example.Mail\n", true },
                { "Event=dbus-call\nBusName=org.example-1.Mail_2\n", true },
                { "Event=dbus-call\nBusName=:1.42\n", true },
                { "Event=dbus-call\nBusName=org.example.Mail'\n", false },
                { "Event=dbus-call\nBusName=org.example.Mail',type='signal\n", false },
                { "Event=dbus-call\nBusName=org\n", false },
                { "Event=dbus-call\nBusName=.org.example\n", false },
                { "Event=dbus-call\nBusName=org..example\n", false },
                { "Event=dbus-call\nBusName=org.1example\n", false },
                { "Event=dbus-call\nBusName=org.example.\n", false },
                { "Event=dbus-call\nBusName=org.ex\\ample\n", false },
                { "Event=dbus-signal\nMatch=type='signal',interface='org.example.Push',member='Ring'\n", true },
                { "Event=dbus-signal\nMatch=type='signal', sender='org.example.Mail', path='/org/example/Mail'\n", true },
                { "Event=dbus-signal\nMatch=interface='org.example.Push',path_namespace='/org/example'\n", true },
                { "Event=dbus-signal\nMatch=interface='org.example.Push',arg0='a ;b',arg1path='/x/',arg63='y'\n", true },
                { "Event=dbus-signal\nMatch=arg0namespace='org.example'\n", true },
                { "Event=dbus-signal\nMatch=arg0namespace='org.example',\n", false },
                { "Event=dbus-signal\nMatch=arg0namespace='org.example',eavesdrop='false'\n", false },
                { "Event=dbus-signal\nMatch=interface='org.example.Push' ,member='Ring'\n", false },
                { "Event=dbus-signal\nMatch=interface='org.example.Push',\tmember='Ring'\n", false },
                { "Event=dbus-signal\nMatch=interface='org.example.Push''\n", false },
                { "Event=dbus-signal\nMatch=interface='org.example.Push',arg0='it''s'\n", false },
                { "Event=dbus-signal\nMatch=arg0='a\\'b'\n", false },
                { "Event=dbus-signal\nMatch=interface=org.example.Push\n", false },
                { "Event=dbus-signal\nMatch=interface='nodots'\n", false },
                { "Event=dbus-signal\nMatch=member='a.b'\n", false },
                { "Event=dbus-signal\nMatch=member='1a'\n", false },
                { "Event=dbus-signal\nMatch=path='relative/path'\n", false },
                { "Event=dbus-signal\nMatch=path='/trailing/'\n", false },
                { "Event=dbus-signal\nMatch=path='/a',path_namespace='/b'\n", false },
                { "Event=dbus-signal\nMatch=sender='org..x'\n", false },
                { "Event=dbus-signal\nMatch=type='method_call'\n", false },
                { "Event=dbus-signal\nMatch=colour='red'\n", false },
                { "Event=dbus-signal\nMatch=interface='a.b',interface='a.c'\n", false },
                { "Event=dbus-signal\nMatch=arg64='x'\n", false },
                { "Event=dbus-signal\nMatch=arg1='x',arg1path='/x'\n", false },
                { "Event=dbus-signal\nMatch=arg1namespace='a.b'\n", false },
                { "Event=dbus-signal\nMatch=interface='a.b' member='c'\n", false },
                { "Event=dbus-signal\nMatch=,\n", false },
                { "Event=dbus-signal\nMatch=interface='a.b',destination='org.standby.Listener1'\n", false },
                { "Event=dbus-signal\nMatch=destination=':1.5'\n", false },
                { "Event=link\nInterface=wlan0\n", true },
                { "Event=link\nInterface=..\n", false },
                { "Event=link\nInterface=eth0:1\n", false },
                { "Event=input\nKey=KEY_POWER\nDevice=/dev/input/event3\n", true },
                { "Event=input\nKey=KEY_POWER\nDevice=Power Button\n", true },
                { "Event=input\nKey=KEY_POWER\nDevice=/dev/input/../../etc/shadow\n", false },
                { "Event=input\nKey=KEY_POWER\nDevice=/dev//input/event3\n", false },
                { "Event=input\nKey=KEY_POWER\nDevice=/dev/input/\n", false },
                /* Paths that exist but can never be watched. */
                { "Event=input\nKey=KEY_POWER\nDevice=/dev/null\n", false },
                { "Event=input\nKey=KEY_POWER\nDevice=/etc/hostname\n", false },
                { "Event=input\nKey=KEY_POWER\nDevice=/dev\n", false },
                { "Event=input\nKey=KEY_POWER\nDevice=/dev/input/event-standby-test-none\n", true },
                { "Event=uevent\nSubsystem=power_supply\n", true },
                { "Event=uevent\nSubsystem=usb/../x\n", false },
                { "Event=uevent\nSubsystem=\n", false },
        };
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_rule_set_ RuleSet *set = calloc(1, sizeof(RuleSet));
                _cleanup_free_ char *text = NULL, *err = NULL;

                ck_assert_int_ge(asprintf(&text, "[Match]\n%s[Action]\nThaw=a.service\n", table[i].match), 0);
                int r = rules_parse_buffer(set, "v.rule", text, strlen(text), &err);
                if (table[i].ok) {
                        ck_assert_msg(r == 0, "case %zu refused: %s", i, err);
                        continue;
                }
                ck_assert_msg(r == -EINVAL, "case %zu accepted: %s", i, table[i].match);
                /* The bad key is the section's last line. */
                int line = 1;
                for (const char *c = table[i].match; *c; c++)
                        line += *c == '\n';
                char want[32];
                snprintf(want, sizeof(want), "v.rule:%d: ", line);
                ck_assert_msg(strneq(err, want, strlen(want)), "case %zu: %s", i, err);
        }
}
END_TEST

/* A FIFO named *.rule is refused at once (opening it would wait for a
 * writer forever, in the listener and in --check), so is a symbolic link. */
START_TEST(test_not_regular) {
        _cleanup_rule_set_ RuleSet *set = calloc(1, sizeof(RuleSet));
        _cleanup_free_ char *target = put("d", "real.conf", "[Match]\nEvent=push\n[Action]\nThaw=a.service\n");
        char p[256], d[128];
        char *err = NULL;

        snprintf(d, sizeof(d), "%s/d", dir);
        snprintf(p, sizeof(p), "%s/fifo.rule", d);
        ck_assert_int_eq(mkfifo(p, 0600), 0);
        ck_assert_int_eq(rules_parse_file(set, p, false, &err), -EINVAL);
        ck_assert_msg(strstr(err, "fifo.rule: refused: not a regular file"), "%s", err);
        free(TAKE_PTR(err));

        _cleanup_free_ char *out = NULL;
        ck_assert_int_eq(run_check(d, &out), 5);
        ck_assert_msg(strstr(out, "fifo.rule: refused: not a regular file"), "%s", out);
        ck_assert_int_eq(unlink(p), 0);

        snprintf(p, sizeof(p), "%s/link.rule", d);
        ck_assert_int_eq(symlink(target, p), 0);
        ck_assert_int_eq(rules_parse_file(set, p, false, &err), -ELOOP);
        ck_assert_msg(strstr(err, "link.rule: refused: a symbolic link"), "%s", err);
        free(err);
        ck_assert_uint_eq(set->n_rules, 0);
}
END_TEST

/* The directories too: whoever may write one could drop in a file that fails
 * every reload, or take a rule away. */
START_TEST(test_dir_ownership) {
        char d[128];
        const char *dirs[] = { d, NULL };
        RuleSet *set = NULL;
        char *err = NULL;

        if (geteuid() != 0) {
                test_skip("ownership checks need root");
                return;
        }
        free(put("d", "a.rule", "[Match]\nEvent=push\n[Action]\nThaw=a.service\n"));
        snprintf(d, sizeof(d), "%s/d", dir);
        ck_assert_int_eq(chmod(d, 0775), 0);
        ck_assert_int_eq(rules_load(dirs, true, &set, &err), -EPERM);
        ck_assert_ptr_null(set);
        ck_assert_msg(strstr(err, "/d: refused: a directory of rule files must be owned by root and writable by root alone"),
                      "%s", err);
        free(TAKE_PTR(err));
        ck_assert_int_eq(chmod(d, 0755), 0);
        ck_assert_int_eq(chown(d, 65534, 0), 0);
        ck_assert_int_eq(rules_load(dirs, true, &set, &err), -EPERM);
        ck_assert_msg(strstr(err, "owner uid 65534"), "%s", err);
        free(TAKE_PTR(err));
        ck_assert_int_eq(chown(d, 0, 0), 0);
        ck_assert_int_eq(rules_load(dirs, true, &set, &err), 0);
        ck_assert_uint_eq(set->n_rules, 1);
        set = rule_set_free(set);

        /* No file at all: an empty set (nothing to sort). */
        snprintf(d, sizeof(d), "%s/empty", dir);
        ck_assert_int_eq(mkdir(d, 0755), 0);
        ck_assert_int_eq(rules_load(dirs, true, &set, &err), 0);
        ck_assert_uint_eq(set->n_rules, 0);
        rule_set_free(set);
}
END_TEST

/* 10,000 rule files, and one Thaw= list of 10,000 units, all load (the time
 * this takes is in docs/benchmark.md). */
START_TEST(test_many_rules) {
        char d[128];
        const char *dirs[] = { d, NULL };
        _cleanup_rule_set_ RuleSet *set = NULL;
        _cleanup_free_ char *err = NULL, *big = NULL;
        size_t n = 0;

        snprintf(d, sizeof(d), "%s/many", dir);
        ck_assert_int_eq(mkdir(d, 0755), 0);
        for (int i = 0; i < 10000; i++) {
                char name[32], text[160];
                snprintf(name, sizeof(name), "%05d.rule", i);
                snprintf(text, sizeof(text), "[Match]\nEvent=push\nUnit=u%d.service\n[Action]\nThaw=u%d.service\nThaw=v%d.service\n",
                         i, i, i);
                free(put("many", name, text));
        }
        big = malloc(10000 * 24 + 64);
        ck_assert_ptr_nonnull(big);
        n = (size_t) sprintf(big, "[Match]\nEvent=push\n[Action]\nThaw=");
        for (int i = 0; i < 10000; i++)
                n += (size_t) sprintf(big + n, "big-%d.service ", i);
        strcpy(big + n, "\n");
        free(put("many", "99999-big.rule", big));

        ck_assert_msg(rules_load(dirs, true, &set, &err) == 0, "%s", err);
        ck_assert_uint_eq(set->n_rules, 10001);
        ck_assert_str_eq(set->rules[9999].thaw[1], "v9999.service");
        ck_assert_uint_eq(strv_length(set->rules[10000].thaw), 10000);
        _cleanup_free_ char *desc = rule_describe(&set->rules[10000]);
        ck_assert_ptr_nonnull(strstr(desc, "big-0.service big-1.service"));
        ck_assert_ptr_nonnull(strstr(desc, "big-9999.service until standby ends"));
}
END_TEST

/* standby-listener --check: prints what it understood; exit 5 names the bad file:line. */
START_TEST(test_listener_check_cli) {
        _cleanup_free_ char *out = NULL, *out2 = NULL;

        free(put("d", "50-lid.rule", "[Match]\nEvent=input\nSwitch=SW_LID\nValue=0\n[Action]\nExitStandby=yes\n"));
        char d[128];
        snprintf(d, sizeof(d), "%s/d", dir);
        ck_assert_int_eq(run_check(d, &out), 0);
        ck_assert_msg(strstr(out, "50-lid.rule: on SW_LID released/off: end standby"), "%s", out);

        /* A rule that thaws a timer thaws nothing: warned, not refused. */
        _cleanup_free_ char *out3 = NULL;
        free(put("d", "55-timer.rule", "[Match]\nEvent=push\n[Action]\nThaw=backup.timer a.service\n"));
        ck_assert_int_eq(run_check(d, &out3), 0);
        ck_assert_msg(strstr(out3, "55-timer.rule: Thaw=backup.timer: a timer unit runs no processes"), "%s", out3);

        free(put("d", "60-bad.rule", "[Match]\nEvent=link\nKey=KEY_POWER\n[Action]\nThaw=a.service\n"));
        ck_assert_int_eq(run_check(d, &out2), 5);
        ck_assert_msg(strstr(out2, "60-bad.rule:3: Key= does not apply to Event=link"), "%s", out2);
}
END_TEST

static int run_check_config(const char *rules_dir, const char *config, char **ret_out) {
        char cmd[1024];
        snprintf(cmd, sizeof(cmd), "%s --check --config '%s' --rules-dir '%s' 2>&1", test_bin("standby-listener"), config,
                 rules_dir);
        return test_run_shell(cmd, ret_out);
}

/* --check reads the configuration and its drop-ins as the daemon does at
 * start: what would keep the service from starting fails the check with the
 * same exit status (5) and FILE:LINE. */
START_TEST(test_listener_check_config) {
        _cleanup_free_ char *ok = NULL, *bad = NULL, *dropin = NULL, *perm = NULL;
        char rules[128], conf[128];

        free(put("r", "50-lid.rule", "[Match]\nEvent=input\nSwitch=SW_LID\nValue=0\n[Action]\nExitStandby=yes\n"));
        snprintf(rules, sizeof(rules), "%s/r", dir);
        free(put(NULL, "standby.conf", "[Standby]\nEnterOn=lid idle\n"));
        snprintf(conf, sizeof(conf), "%s/standby.conf", dir);
        ck_assert_int_eq(run_check_config(rules, conf, &ok), 0);

        free(put(NULL, "standby.conf", "[Standby]\nEnterOn=lid\nEnterOn=lid-closed\n"));
        ck_assert_int_eq(run_check_config(rules, conf, &bad), 5);
        ck_assert_msg(strstr(bad, "standby.conf:3: EnterOn=: \"lid-closed\" is not one of"), "%s", bad);
        ck_assert_msg(strstr(bad, "50-lid.rule"), "the rules are still listed: %s", bad);

        /* A strategy per unit: a good line passes, a bad one names its line. */
        _cleanup_free_ char *good_strategy = NULL, *bad_strategy = NULL;
        free(put(NULL, "standby.conf", "[Standby]\nEnterOn=lid\n[Strategy]\nSlack=30s chat.service mail-*.service\n"
                                       "None=backup.service\n"));
        ck_assert_int_eq(run_check_config(rules, conf, &good_strategy), 0);
        ck_assert_msg(strstr(good_strategy, "[Strategy] mail-*.service: slacked, timers at most 30s late\n"
                                            "[Strategy] backup.service: left alone\n"), "%s", good_strategy);
        free(put(NULL, "standby.conf", "[Standby]\nEnterOn=lid\n[Strategy]\nSlack=chat.service\n"));
        ck_assert_int_eq(run_check_config(rules, conf, &bad_strategy), 5);
        ck_assert_msg(strstr(bad_strategy, "standby.conf:4: Slack=chat.service: expected a bound first"), "%s",
                      bad_strategy);

        free(put(NULL, "standby.conf", "[Standby]\nEnterOn=lid\n"));
        _cleanup_free_ char *d = put("standby.conf.d", "20-idle.conf", "[Standby]\n\nIdleEnterSec=soon\n");
        ck_assert_int_eq(run_check_config(rules, conf, &dropin), 5);
        ck_assert_msg(strstr(dropin, "standby.conf.d/20-idle.conf:3: IdleEnterSec=soon"), "%s", dropin);

        ck_assert_int_eq(chmod(d, 0664), 0);
        free(put("standby.conf.d", "20-idle.conf", "[Standby]\nIdleEnterSec=2d\n"));
        ck_assert_int_eq(chmod(d, 0664), 0);
        ck_assert_int_eq(run_check_config(rules, conf, &perm), 5);
        ck_assert_msg(strstr(perm, "20-idle.conf"), "%s", perm);
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
        tcase_add_test(tc, test_listener_check_config);
        tcase_add_test(tc, test_long_lines);
        tcase_add_test(tc, test_syntax_strict);
        tcase_add_test(tc, test_values_strict);
        tcase_add_test(tc, test_not_regular);
        tcase_add_test(tc, test_dir_ownership);
        suite_add_tcase(s, tc);
        /* 10,000 files written and removed: more than Check's 4 s default
         * on a loaded machine, though it takes ~0.3 s alone. */
        TCase *many = tcase_create("many");
        tcase_add_checked_fixture(many, setup, teardown);
        tcase_set_timeout(many, 60);
        tcase_add_test(many, test_many_rules);
        suite_add_tcase(s, many);
        return s;
}
