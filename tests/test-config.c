/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "macro.h"
#include "standby.h"
#include "strv.h"
#include "test-util.h"

START_TEST(test_defaults) {
        _cleanup_config_ Config *c = NULL;
        _cleanup_free_ char *err = NULL;

        ck_assert_int_eq(config_load("/nonexistent/standby.conf", true, &c, &err), 0);
        ck_assert_str_eq(c->targets[0], "user.slice");
        ck_assert_ptr_null(c->targets[1]);
        ck_assert(strv_contains(c->exempt, "standby-listener.service"));
        ck_assert_int_eq(c->strategy, STRATEGY_FREEZE);
        ck_assert_uint_eq(c->freeze_timeout, 5 * USEC_PER_SEC);
        ck_assert_int_eq(c->on_freeze_timeout, FREEZE_FAILURE_SKIP);
        ck_assert_uint_eq(c->slack_ns, 0);
        ck_assert(c->deadlock_guard);
        ck_assert(!c->freeze_sessions);
        /* Standby out of the box: the lid enters, the lid or the power key leaves. */
        ck_assert_uint_eq(c->enter_on, TRIGGER_LID);
        ck_assert_uint_eq(c->leave_on, TRIGGER_LID | TRIGGER_POWER_KEY);
        ck_assert_uint_eq(c->idle_enter, 300 * USEC_PER_SEC);
        ck_assert_uint_eq(c->inhibit_delay_max, 5 * USEC_PER_SEC);
        ck_assert(!c->users_may_block);
        ck_assert(c->freeze_before_sleep);
        /* A frozen unit's periodic work runs at least every 15 min. */
        ck_assert_uint_eq(c->lateness, 15 * 60 * USEC_PER_SEC);
        ck_assert_uint_eq(c->window_max, 10 * USEC_PER_SEC);
        ck_assert_uint_eq(config_lateness_of(c, "user.slice/user-1000.slice/user@1000.service/app.slice/x.service"),
                          15 * 60 * USEC_PER_SEC);
}
END_TEST

/* Lateness: the unit's own, else its nearest slice's, else Lateness=; a
 * drop-in's assignment replaces the file's. */
START_TEST(test_lateness) {
        _cleanup_config_ Config *c = NULL;
        _cleanup_free_ char *err = NULL;
        _cleanup_free_ char *p = test_write_tmp("[Maintenance]\nLateness=infinity\nWindowMax=3s\n"
                                                "[Lateness]\nchat.service=30s\napp.slice=1min\nchat.service=20s\n");

        ck_assert_msg(config_load(p, false, &c, &err) == 0, "%s", err);
        ck_assert_uint_eq(c->lateness, USEC_INFINITY);
        ck_assert_uint_eq(c->window_max, 3 * USEC_PER_SEC);
        ck_assert_uint_eq(c->n_lateness, 2);
        ck_assert_uint_eq(config_lateness_of(c, "user.slice/user@1000.service/app.slice/chat.service"), 20 * USEC_PER_SEC);
        ck_assert_uint_eq(config_lateness_of(c, "user.slice/user@1000.service/app.slice/mail.service"), 60 * USEC_PER_SEC);
        ck_assert_uint_eq(config_lateness_of(c, "system.slice/redis.service"), USEC_INFINITY);
        /* A name inside a component is no match. */
        ck_assert_uint_eq(config_lateness_of(c, "system.slice/xchat.service"), USEC_INFINITY);
        unlink(p);
}
END_TEST

/* The entry and leave policy: word lists, "none" and an empty value. */
START_TEST(test_policy) {
        _cleanup_config_ Config *c = NULL, *d = NULL;
        _cleanup_free_ char *err = NULL, *err2 = NULL, *words = NULL;
        _cleanup_free_ char *p = test_write_tmp("[Standby]\nEnterOn=idle  power-key\nLeaveOn=input\nLeaveOn=lid input\n"
                                                "IdleEnterSec=90s\nInhibitDelayMaxSec=2s\nUsersMayBlock=yes\n"
                                                "FreezeBeforeSleep=no\n");
        _cleanup_free_ char *q = test_write_tmp("[Standby]\nEnterOn=none\nLeaveOn=\n");

        ck_assert_msg(config_load(p, false, &c, &err) == 0, "%s", err);
        ck_assert_uint_eq(c->enter_on, TRIGGER_IDLE | TRIGGER_POWER_KEY);
        ck_assert_uint_eq(c->leave_on, TRIGGER_LID | TRIGGER_INPUT);
        ck_assert_uint_eq(c->idle_enter, 90 * USEC_PER_SEC);
        ck_assert_uint_eq(c->inhibit_delay_max, 2 * USEC_PER_SEC);
        ck_assert(c->users_may_block);
        ck_assert(!c->freeze_before_sleep);
        ck_assert_int_eq(config_triggers_to_string(c->enter_on, &words), 0);
        ck_assert_str_eq(words, "power-key idle");
        ck_assert_msg(config_load(q, false, &d, &err2) == 0, "%s", err2);
        ck_assert_uint_eq(d->enter_on, 0);
        ck_assert_uint_eq(d->leave_on, 0);
        unlink(p);
        unlink(q);
}
END_TEST

START_TEST(test_full_file) {
        _cleanup_config_ Config *c = NULL;
        _cleanup_free_ char *err = NULL;
        _cleanup_free_ char *p = test_write_tmp("# comment\n[Standby]\nTargets=user.slice apps.slice\nTargets=x/y\n"
                                           "Exempt=\nExempt=foo.service\nStrategy=slack\nFreezeTimeout=1min 30s\n"
                                           "OnFreezeTimeout=abort\nTimerSlackNSec=1000000\nDeadlockGuard=no\n"
                                           "FreezeSessions=yes\nGroup=standby\n");

        ck_assert_int_eq(config_load(p, false, &c, &err), 0);
        ck_assert_uint_eq(strv_length(c->targets), 3);
        ck_assert_str_eq(c->targets[2], "x/y");
        ck_assert_uint_eq(strv_length(c->exempt), 1);
        ck_assert_str_eq(c->exempt[0], "foo.service");
        ck_assert_int_eq(c->strategy, STRATEGY_SLACK);
        ck_assert_uint_eq(c->freeze_timeout, 90 * USEC_PER_SEC);
        ck_assert_int_eq(c->on_freeze_timeout, FREEZE_FAILURE_ABORT);
        ck_assert_uint_eq(c->slack_ns, 1000000);
        ck_assert(!c->deadlock_guard);
        ck_assert(c->freeze_sessions);
        ck_assert_str_eq(c->group, "standby");
        unlink(p);
}
END_TEST

/* A later assignment replaces an earlier one; an empty Group= resets it. */
START_TEST(test_reassigned_strings) {
        _cleanup_config_ Config *c = NULL;
        _cleanup_free_ char *err = NULL;
        _cleanup_free_ char *p = test_write_tmp("[Standby]\nGroup=standby\nGroup=\n"
                                           "SystemdAddress=unix:path=/a\nSystemdAddress=unix:path=/b\n");

        ck_assert_int_eq(config_load(p, false, &c, &err), 0);
        ck_assert_ptr_null(c->group);
        ck_assert_str_eq(c->systemd_address, "unix:path=/b");
        unlink(p);
}
END_TEST

/* [Strategy]: each pattern an entry; the deepest path component matched
 * decides, and at the same depth the last line read (a drop-in's). */
START_TEST(test_unit_strategies) {
        _cleanup_config_ Config *c = NULL;
        _cleanup_free_ char *err = NULL;
        _cleanup_free_ char *p = test_write_tmp("[Standby]\nStrategy=freeze\n[Strategy]\n"
                                                "Slack=30s chat.service mail-*.service\n"
                                                "Slack=max  db.slice\n"
                                                "None=backup.service db.slice/keep-*.service\n"
                                                "Freeze=db.slice/db-hot.service\n"
                                                "Freeze=mail-spam.service\n");
        const UnitStrategy *u;

        ck_assert_msg(config_load(p, false, &c, &err) == 0, "%s", err);
        ck_assert_uint_eq(c->n_unit_strategies, 7);
        ck_assert_str_eq(c->unit_strategies[1].pattern, "mail-*.service");
        ck_assert_int_eq(c->unit_strategies[1].strategy, STRATEGY_SLACK);
        ck_assert_uint_eq(c->unit_strategies[1].slack_ns, UINT64_C(30000000000));
        ck_assert_uint_eq(c->unit_strategies[2].slack_ns, 0);

        ck_assert_ptr_null(config_unit_strategy(c, "user.slice/user-1000.slice/app.service"));
        u = config_unit_strategy(c, "user.slice/user-1000.slice/user@1000.service/app.slice/chat.service");
        ck_assert(u && !u->none && u->slack_ns == UINT64_C(30000000000));
        u = config_unit_strategy(c, "user.slice/mail-imap.service");
        ck_assert(u && u->strategy == STRATEGY_SLACK);
        /* Same component, a later line: it wins. */
        u = config_unit_strategy(c, "user.slice/mail-spam.service");
        ck_assert(u && u->strategy == STRATEGY_FREEZE && !u->none);
        /* A slice's line covers its units; a deeper line beats it. */
        u = config_unit_strategy(c, "db.slice/db-cold.service");
        ck_assert(u && u->strategy == STRATEGY_SLACK && u->slack_ns == 0);
        u = config_unit_strategy(c, "db.slice/db-hot.service");
        ck_assert(u && u->strategy == STRATEGY_FREEZE && !u->none);
        u = config_unit_strategy(c, "db.slice/keep-1.service");
        ck_assert(u && u->none);
        u = config_unit_strategy(c, "x.slice/backup.service/worker");
        ck_assert(u && u->none);
        /* A path pattern matches that path, not a name anywhere. */
        ck_assert_ptr_null(config_unit_strategy(c, "other/db-hot.service"));
        unlink(p);
}
END_TEST

/* Each bad file yields one message naming file:line and what was expected. */
START_TEST(test_errors_table) {
        static const struct {
                const char *text;
                int line;
                const char *expect;
        } table[] = {
                { "[Standby]\nStrategy=hibernate\n", 2, "Strategy=hibernate: expected \"freeze\" or \"slack\"" },
                { "[Standby]\nFreezeTimeout=soon\n", 2, "FreezeTimeout=soon: expected a positive duration" },
                { "[Standby]\nFreezeTimeout=0\n", 2, "FreezeTimeout=0: expected a positive duration" },
                { "[Standby]\n\nOnFreezeTimeout=retry\n", 3, "OnFreezeTimeout=retry: expected \"skip\" or \"abort\"" },
                { "[Standby]\nTimerSlackNSec=-5\n", 2, "TimerSlackNSec=-5: expected \"max\"" },
                { "[Standby]\nDeadlockGuard=maybe\n", 2, "DeadlockGuard=maybe: expected \"yes\" or \"no\"" },
                { "[Standby]\nFreezeSessions=some\n", 2, "FreezeSessions=some: expected \"yes\" or \"no\"" },
                { "[Standby]\nEnterOn=lid input\n", 2, "EnterOn=: \"input\" is not one of \"lid\", \"power-key\", \"idle\"" },
                { "[Standby]\nLeaveOn=idle\n", 2, "LeaveOn=: \"idle\" is not one of \"lid\", \"power-key\", \"input\"" },
                { "[Standby]\nEnterOn=lid,power-key\n", 2, "EnterOn=: \"lid,power-key\" is not one of" },
                { "[Standby]\nEnterOn=lid none\n", 2, "EnterOn=: \"none\" is not one of" },
                { "[Standby]\nIdleEnterSec=0\n", 2, "IdleEnterSec=0: expected a positive duration" },
                { "[Standby]\nInhibitDelayMaxSec=2min\n", 2, "InhibitDelayMaxSec=2min: at most 1min" },
                { "[Standby]\nUsersMayBlock=perhaps\n", 2, "UsersMayBlock=perhaps: expected \"yes\" or \"no\"" },
                { "[Standby]\nFreezeBeforeSleep=1s\n", 2, "FreezeBeforeSleep=1s: expected \"yes\" or \"no\"" },
                { "[Standby]\nTarget=user.slice\n", 2, "unknown key \"Target\" in [Standby]" },
                { "[Maintenance]\nLateness=soon\n", 2, "Lateness=soon: expected a positive duration" },
                { "[Maintenance]\nWindowMax=infinity\n", 2, "WindowMax=infinity: expected a positive duration" },
                { "[Maintenance]\nEvery=1min\n", 2, "unknown key \"Every\" in [Maintenance]" },
                { "[Lateness]\n../x=1min\n", 2, "[Lateness]: \"../x\" is not a unit or slice name" },
                { "[Lateness]\nchat.service=0\n", 2, "chat.service=0: expected a positive duration" },
                { "[Standbye]\nTargets=a\n", 2, "unknown section [Standbye]" },
                { "[Standby]\nthis is no assignment\n", 2, "syntax error" },
                { "[Standby\nTargets=a\n", 1, "syntax error" },
                { "[Standby]\nStrategy=freeze\nbad line\nStrategy=nope\n", 3, "syntax error" },
                /* Values as strictly as the manager will use them. */
                { "[Standby]\nTargets=user.slice ../../etc\n", 2, "Targets=: \"../../etc\" is neither a unit name" },
                { "[Standby]\nExempt=/abs/path\n", 2, "Exempt=: \"/abs/path\" is neither" },
                { "[Standby]\nGroup=wheel staff\n", 2, "Group=wheel staff: expected a group name" },
                { "[Standby]\nSystemdAddress=unix:path=/run/x,guid=00\n", 2, "SystemdAddress=unix:path=/run/x,guid=00: expected" },
                { "[Standby]\nSystemdAddress=unix:path=/a;tcp:host=b\n", 2, "SystemdAddress=" },
                { "[Standby]\nSystemdAddress=unix:abstract=x\n", 2, "SystemdAddress=" },
                /* No continuation lines, no inline comments. */
                { "[Standby]\nTargets=a.slice\n  b.slice\n", 3, "syntax error" },
                { "[Standby]\nStrategy=freeze ; the default\n", 2, "Strategy=freeze ; the default: expected" },
                /* [Strategy]: a bound first for Slack=, names that Targets= would take. */
                { "[Strategy]\nSlack=chat.service\n", 2, "Slack=chat.service: expected a bound first" },
                { "[Strategy]\nSlack=0 chat.service\n", 2, "Slack=0 chat.service: expected a bound first" },
                { "[Strategy]\nSlack=30s\n", 2, "Slack=30s: names no unit; expected a bound, then unit names" },
                { "[Strategy]\nFreeze=\n", 2, "Freeze=: names no unit" },
                { "[Strategy]\n\nNone=a.service ../x\n", 3, "None=: \"../x\" is neither a unit name" },
                { "[Strategy]\nNone=/user.slice/*\n", 2, "None=: \"/user.slice/*\" is neither" },
                { "[Strategy]\nThaw=a.service\n", 2, "unknown key \"Thaw\" in [Strategy], expected Freeze=, Slack= or None=" },
                { "[Strategies]\nFreeze=a.service\n", 2, "unknown section [Strategies], expected [Standby], [Strategy], [Maintenance] or [Lateness]" },
        };
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_free_ char *p = test_write_tmp(table[i].text), *err = NULL, *want = NULL;
                Config *c = NULL;

                ck_assert_int_eq(config_load(p, false, &c, &err), -EINVAL);
                ck_assert_ptr_null(c);
                ck_assert_ptr_nonnull(err);
                ck_assert_int_ge(asprintf(&want, "%s:%d: ", p, table[i].line), 0);
                ck_assert_msg(strneq(err, want, strlen(want)), "case %zu: got \"%s\", want prefix \"%s\"", i, err, want);
                ck_assert_msg(strstr(err, table[i].expect), "case %zu: got \"%s\", want \"%s\"", i, err, table[i].expect);
                unlink(p);
        }
}
END_TEST

/* A line of any length is read whole (inih cut it at 199 bytes). */
START_TEST(test_long_line) {
        _cleanup_config_ Config *c = NULL;
        _cleanup_free_ char *err = NULL, *text = NULL, *p = NULL;
        char list[2048] = "";

        for (int i = 0; i < 60; i++) {
                char w[32];
                snprintf(w, sizeof(w), "app-%02d.slice ", i);
                strcat(list, w);
        }
        ck_assert_int_ge(asprintf(&text, "[Standby]\nTargets=%s\nExempt=x.service\n", list), 0);
        p = test_write_tmp(text);
        ck_assert_msg(config_load(p, false, &c, &err) == 0, "%s", err);
        ck_assert_uint_eq(strv_length(c->targets), 60);
        ck_assert_str_eq(c->targets[59], "app-59.slice");
        ck_assert_str_eq(c->exempt[0], "x.service");
        unlink(p);
}
END_TEST

/* The file's Group= says who may run the verbs: only a regular file that
 * root owns and root alone may write is taken, and a FIFO is refused
 * rather than waited on. */
START_TEST(test_ownership) {
        _cleanup_free_ char *p = test_write_tmp("[Standby]\nGroup=users\n"), *err = NULL;
        char link[64], fifo[64];
        Config *c = NULL;

        if (geteuid() != 0) {
                test_skip("ownership checks need root");
                return;
        }
        static const struct {
                mode_t mode;
                uid_t uid;
        } bad[] = { { 0620, 0 }, { 0602, 0 }, { 0600, 65534 } };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                ck_assert_int_eq(chmod(p, bad[i].mode), 0);
                ck_assert_int_eq(chown(p, bad[i].uid, 0), 0);
                ck_assert_int_eq(config_load(p, false, &c, &err), -EPERM);
                ck_assert_ptr_null(c);
                ck_assert_msg(strstr(err, "refused: a configuration file must be owned by root and writable by root alone"),
                              "%s", err);
                free(TAKE_PTR(err));
        }
        /* standby-manager refuses it (exit 5) before it looks at Group=. */
        _cleanup_free_ char *cmd = NULL, *out = NULL;
        ck_assert_int_ge(asprintf(&cmd, "%s --config '%s' --state-dir /nonexistent status 2>&1", test_bin("standby-manager"), p),
                         0);
        ck_assert_int_eq(test_run_shell(cmd, &out), 5);
        ck_assert_msg(strstr(out, "owner uid 65534"), "%s", out);
        ck_assert_int_eq(chmod(p, 0644), 0);
        ck_assert_int_eq(chown(p, 0, 0), 0);
        ck_assert_int_eq(config_load(p, false, &c, &err), 0);
        ck_assert_str_eq(c->group, "users");
        c = config_free(c);

        snprintf(link, sizeof(link), "%s.link", p);
        ck_assert_int_eq(symlink(p, link), 0);
        ck_assert_int_eq(config_load(link, false, &c, &err), -ELOOP);
        ck_assert_msg(strstr(err, "refused: a symbolic link"), "%s", err);
        free(TAKE_PTR(err));
        unlink(link);

        snprintf(fifo, sizeof(fifo), "%s.fifo", p);
        ck_assert_int_eq(mkfifo(fifo, 0600), 0);
        ck_assert_int_eq(config_load(fifo, false, &c, &err), -EINVAL);
        ck_assert_msg(strstr(err, "refused: not a regular file"), "%s", err);
        unlink(fifo);
        unlink(p);
}
END_TEST

START_TEST(test_missing_explicit_file) {
        _cleanup_free_ char *err = NULL;
        Config *c = NULL;

        ck_assert_int_eq(config_load("/nonexistent/x.conf", false, &c, &err), -ENOENT);
        ck_assert_ptr_nonnull(strstr(err, "/nonexistent/x.conf: cannot open"));
}
END_TEST

START_TEST(test_durations) {
        static const struct {
                const char *s;
                usec_t v;
        } ok[] = { { "5", 5 * USEC_PER_SEC }, { "500ms", 500 * USEC_PER_MSEC }, { "2min", 120 * USEC_PER_SEC },
                   { "1h 1s", 3601 * USEC_PER_SEC }, { "250us", 250 }, { "30 s", 30 * USEC_PER_SEC },
                   /* systemd.time(7)'s units and fractions */
                   { "2d", 2 * 86400 * USEC_PER_SEC }, { "1w", 7 * 86400 * USEC_PER_SEC },
                   { "1 day 2hr", 93600 * USEC_PER_SEC }, { "3 weeks", 21 * 86400 * USEC_PER_SEC },
                   { "1M", 2629800 * USEC_PER_SEC }, { "2 months", 2 * 2629800 * USEC_PER_SEC },
                   { "1y", 31557600 * USEC_PER_SEC }, { "1 year", 31557600 * USEC_PER_SEC },
                   { "1.5h", 5400 * USEC_PER_SEC }, { "0.25s", 250 * USEC_PER_MSEC }, { "2.5", 2500 * USEC_PER_MSEC },
                   { "1.0000000009s", USEC_PER_SEC }, { "7\xce\xbcs", 7 }, { "1m", 60 * USEC_PER_SEC },
                   { "1min 30s", 90 * USEC_PER_SEC } };
        static const char * const bad[] = { "", "x", "5parsecs", "-1s", "1s x", "1.s", ".5s", "2 fortnights", "1\xce\xbc",
                                            "1\xc3\xa9" };
        usec_t v;
        char buf[32];

        for (size_t i = 0; i < ELEMENTSOF(ok); i++) {
                ck_assert_int_eq(parse_duration(ok[i].s, &v), 0);
                ck_assert_uint_eq(v, ok[i].v);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_msg(parse_duration(bad[i], &v) < 0, "\"%s\" should not parse", bad[i]);
        ck_assert_int_eq(parse_duration("99999999999999999999h", &v), -ERANGE);
        ck_assert_int_eq(parse_duration("600000y", &v), -ERANGE);
        ck_assert_int_eq(parse_duration("584553y 1.5y", &v), -ERANGE);
        ck_assert_str_eq(format_duration(buf, sizeof(buf), 30 * USEC_PER_SEC), "30s");
        ck_assert_str_eq(format_duration(buf, sizeof(buf), 1500 * USEC_PER_MSEC), "1500ms");
        ck_assert_str_eq(format_duration(buf, sizeof(buf), 120 * USEC_PER_SEC), "2min");
        /* For people: the two largest units, as systemd writes a timespan. */
        ck_assert_str_eq(format_timespan(buf, sizeof(buf), 50 * USEC_PER_SEC), "50s");
        ck_assert_str_eq(format_timespan(buf, sizeof(buf), 5400 * USEC_PER_SEC + 7), "1h 30min");
        ck_assert_str_eq(format_timespan(buf, sizeof(buf), 3605 * USEC_PER_SEC), "1h");
        ck_assert_str_eq(format_timespan(buf, sizeof(buf), 1500), "1ms 500us");
        ck_assert_str_eq(format_timespan(buf, sizeof(buf), 0), "0");
        ck_assert_str_eq(format_timespan(buf, sizeof(buf), UINT64_MAX / 1000), "584y 6M");
        ck_assert_str_eq(format_timespan(buf, sizeof(buf), USEC_INFINITY), "infinity");
}
END_TEST

static void put_file(const char *path, const char *text) {
        FILE *f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        fputs(text, f);
        ck_assert_int_eq(fclose(f), 0);
}

/* standby.conf.d: each drop-in is read after the file, in file-name order;
 * list keys append, other keys win; a link to /dev/null hides nothing but
 * is read as no file; a drop-in directory others may write is refused. */
START_TEST(test_dropins) {
        char d[] = "/tmp/standby-dropins-XXXXXX", conf[128], dropins[160], p[256];
        _cleanup_config_ Config *c = NULL, *only = NULL;
        _cleanup_free_ char *err = NULL, *err2 = NULL, *err3 = NULL;
        Config *none = NULL;

        ck_assert_ptr_nonnull(mkdtemp(d));
        snprintf(conf, sizeof(conf), "%s/standby.conf", d);
        snprintf(dropins, sizeof(dropins), "%s.d", conf);
        ck_assert_int_eq(mkdir(dropins, 0755), 0);

        /* No file, drop-ins only: they are read all the same. */
        snprintf(p, sizeof(p), "%s/20-timeout.conf", dropins);
        put_file(p, "[Standby]\nFreezeTimeout=1.5s\nExempt=b.service\n");
        ck_assert_msg(config_load(conf, true, &only, &err) == 0, "%s", err);
        ck_assert_uint_eq(only->freeze_timeout, 1500 * USEC_PER_MSEC);
        ck_assert_str_eq(only->exempt[0], "b.service"); /* the first assignment replaced the default */

        put_file(conf, "[Standby]\nExempt=a.service\nStrategy=slack\nFreezeTimeout=9s\n");
        snprintf(p, sizeof(p), "%s/10-freeze.conf", dropins);
        put_file(p, "[Standby]\nStrategy=freeze\n");
        snprintf(p, sizeof(p), "%s/ignored.txt", dropins);
        put_file(p, "not a drop-in\n");
        ck_assert_msg(config_load(conf, false, &c, &err) == 0, "%s", err);
        ck_assert_int_eq(c->strategy, STRATEGY_FREEZE);
        ck_assert_uint_eq(c->freeze_timeout, 1500 * USEC_PER_MSEC);
        ck_assert_str_eq(c->exempt[0], "a.service");
        ck_assert_str_eq(c->exempt[1], "b.service");
        ck_assert_ptr_null(c->exempt[2]);

        /* A bad drop-in fails the whole load with its own FILE:LINE. */
        snprintf(p, sizeof(p), "%s/30-bad.conf", dropins);
        put_file(p, "[Standby]\n# comment\nBackend=zfs\n");
        ck_assert_int_eq(config_load(conf, false, &none, &err2), -EINVAL);
        ck_assert_ptr_null(none);
        ck_assert_msg(strstr(err2, "standby.conf.d/30-bad.conf:3: Backend=zfs"), "%s", err2);
        ck_assert_int_eq(unlink(p), 0);

        if (geteuid() == 0) {
                ck_assert_int_eq(chmod(dropins, 0775), 0);
                ck_assert_int_eq(config_load(conf, false, &none, &err3), -EPERM);
                ck_assert_ptr_null(none);
                ck_assert_msg(strstr(err3, "standby.conf.d"), "%s", err3);
        }

        /* The installed file's drop-ins come from /etc, /run and /usr/lib. */
        _cleanup_strv_free_ char **dirs = NULL;
        ck_assert_int_eq(config_dropin_dirs(STANDBY_CONFIG_PATH, &dirs), 0);
        ck_assert_uint_eq(strv_length(dirs), 3);
        ck_assert_str_eq(dirs[0], STANDBY_CONFIG_PATH ".d");
        ck_assert_str_eq(dirs[1], "/run/standby/standby.conf.d");
        ck_assert_str_eq(dirs[2], STANDBY_CONFD_LIBDIR);

        char cmd[160];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
        ck_assert_int_eq(system(cmd), 0);
}
END_TEST

Suite *config_suite(void) {
        Suite *s = suite_create("config");
        TCase *tc = tcase_create("parse");
        tcase_add_test(tc, test_defaults);
        tcase_add_test(tc, test_lateness);
        tcase_add_test(tc, test_policy);
        tcase_add_test(tc, test_full_file);
        tcase_add_test(tc, test_reassigned_strings);
        tcase_add_test(tc, test_unit_strategies);
        tcase_add_test(tc, test_errors_table);
        tcase_add_test(tc, test_missing_explicit_file);
        tcase_add_test(tc, test_durations);
        tcase_add_test(tc, test_dropins);
        tcase_add_test(tc, test_long_line);
        tcase_add_test(tc, test_ownership);
        suite_add_tcase(s, tc);
        return s;
}
