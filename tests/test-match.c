/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which rules an event matches, in process and without a bus: rules built
 * from text by the rule parser (listener/rules.c, each kind's keys in its
 * source's file, listener/rule-keys.c), events judged by the predicate the
 * dispatcher uses (listener_source_matches()) and by the dispatcher itself
 * (listener_dispatch(), listener/match.c), before standby, where a match
 * only remembers its rule for later. */
#include <linux/input-event-codes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "../listener/listener.h"
#include "test-util.h"

/* Parses one rule file's contents into set (asserted); returns the rule. */
static const Rule *add_rule(RuleSet *set, const char *match) {
        _cleanup_free_ char *text = NULL, *error = NULL;

        ck_assert_int_ge(asprintf(&text, "[Match]\n%s[Action]\nThaw=a.service\n", match), 0);
        ck_assert_msg(rules_parse_buffer(set, "m.rule", text, strlen(text), &error) == 0, "refused: %s: %s", match,
                      error);
        return &set->rules[set->n_rules - 1];
}

/* What a rule's [Match] refuses: -EINVAL, and no rule. */
static void assert_refused(const char *match) {
        _cleanup_rule_set_ RuleSet *set = calloc(1, sizeof(RuleSet));
        _cleanup_free_ char *text = NULL, *error = NULL;

        ck_assert_ptr_nonnull(set);
        ck_assert_int_ge(asprintf(&text, "[Match]\n%s[Action]\nThaw=a.service\n", match), 0);
        ck_assert_msg(rules_parse_buffer(set, "m.rule", text, strlen(text), &error) == -EINVAL, "accepted: %s", match);
        ck_assert_uint_eq(set->n_rules, 0);
}

/* One case: a rule's [Match] (after "[Match]\n"), an event of kind (its
 * Event= name; NULL: the rule's own kind), and whether they match. */
typedef struct MatchCase {
        const char *match;
        const char *kind;
        Event event;
        bool want;
} MatchCase;

/* Events of address and input, and rules used more than once. */
#define ADDRESS(i, f, c) \
        { .interface = (i), .family = (f), .change = (c) }
#define INPUT(t, c, v) \
        { .key_type = (t), .key_code = (c), .value = (v) }
#define DEVICE(name, path, t, c, v) \
        { .device = (name), .device_path = (path), .key_type = (t), .key_code = (c), .value = (v) }
#define IPV4_ADDED "Event=address\nFamily=ipv4\nChange=added\n"
#define POWER_PRESSED "Event=input\nKey=KEY_POWER\nValue=1\n"
#define POWER_BUTTON "Event=input\nKey=KEY_POWER\nDevice=Power Button\n"
/* A path that passes Device='s checks: it does not exist (yet). */
#define NO_DEVICE "/dev/input/event-standby-test-none"
#define POWER_AT_PATH "Event=input\nKey=KEY_POWER\nDevice=" NO_DEVICE "\n"

static const MatchCase cases[] = {
        /* push: Unit= is the pushed unit's name, exactly. */
        { "Event=push\nUnit=mail.service\n", NULL, { .unit = "mail.service" }, true },
        { "Event=push\nUnit=mail.service\n", NULL, { .unit = "news.service" }, false },
        { "Event=push\nUnit=mail.service\n", NULL, { .unit = "Mail.service" }, false },
        { "Event=push\nUnit=mail.service\n", NULL, { .unit = "mail.service.d" }, false },
        { "Event=push\nUnit=mail.service\n", NULL, { .unit = "mail" }, false },
        { "Event=push\nUnit=mail.service\n", NULL, { .unit = NULL }, false },
        { "Event=push\nUnit=mail.service\n", "socket", { .unit = "mail.service" }, false },
        /* Without Unit=, any push. */
        { "Event=push\n", NULL, { .unit = "anything.service" }, true },
        { "Event=push\n", NULL, { .unit = NULL }, true },
        { "Event=push\n", "socket", { .unit = "anything.service" }, false },

        /* socket: the unit whose socket saw activity. */
        { "Event=socket\nUnit=redis.service\n", NULL, { .unit = "redis.service" }, true },
        { "Event=socket\nUnit=redis.service\n", NULL, { .unit = "mail.service" }, false },
        { "Event=socket\nUnit=redis.service\n", NULL, { .unit = "Redis.service" }, false },
        { "Event=socket\nUnit=redis.service\n", "push", { .unit = "redis.service" }, false },

        /* link: Interface= and Change=, each left out matching anything. */
        { "Event=link\nInterface=sb0\nChange=up\n", NULL, { .interface = "sb0", .change = "up" }, true },
        { "Event=link\nInterface=sb0\nChange=up\n", NULL, { .interface = "sb0", .change = "down" }, false },
        { "Event=link\nInterface=sb0\nChange=up\n", NULL, { .interface = "sb1", .change = "up" }, false },
        { "Event=link\nInterface=sb0\nChange=up\n", NULL, { .interface = "sb", .change = "up" }, false },
        { "Event=link\nInterface=sb0\nChange=up\n", NULL, { .interface = "SB0", .change = "up" }, false },
        { "Event=link\nInterface=sb0\nChange=up\n", NULL, { .interface = NULL, .change = "up" }, false },
        { "Event=link\nInterface=sb0\nChange=up\n", "address", { .interface = "sb0", .change = "up" }, false },
        { "Event=link\nChange=carrier\n", NULL, { .interface = "eth0", .change = "carrier" }, true },
        { "Event=link\nChange=carrier\n", NULL, { .interface = "eth0", .change = "up" }, false },
        { "Event=link\nInterface=wlan0\n", NULL, { .interface = "wlan0", .change = "down" }, true },
        { "Event=link\nInterface=wlan0\n", NULL, { .interface = "eth0", .change = "down" }, false },
        { "Event=link\n", NULL, { .interface = "eth0", .change = "up" }, true },
        /* No globs: a '*' is part of the name. */
        { "Event=link\nInterface=wl*\n", NULL, { .interface = "wlan0", .change = "up" }, false },
        { "Event=link\nInterface=wl*\n", NULL, { .interface = "wl*", .change = "up" }, true },

        /* address: Interface=, Family= and Change=. */
        { IPV4_ADDED, NULL, ADDRESS("eth0", AF_INET, "added"), true },
        { IPV4_ADDED, NULL, ADDRESS("eth0", AF_INET6, "added"), false },
        { IPV4_ADDED, NULL, ADDRESS("eth0", AF_INET, "removed"), false },
        { IPV4_ADDED, "link", ADDRESS("eth0", AF_INET, "added"), false },
        { "Event=address\nFamily=ipv6\n", NULL, ADDRESS("eth0", AF_INET6, "removed"), true },
        { "Event=address\nFamily=ipv6\n", NULL, ADDRESS("eth0", AF_INET, "removed"), false },
        { "Event=address\nInterface=wlan0\n", NULL, ADDRESS("wlan0", AF_INET6, "added"), true },
        { "Event=address\nInterface=wlan0\n", NULL, ADDRESS("eth0", AF_INET6, "added"), false },
        { "Event=address\n", NULL, ADDRESS("lo", AF_INET, "removed"), true },

        /* uevent: Subsystem= and Change=. */
        { "Event=uevent\nSubsystem=usb\nChange=add\n", NULL, { .subsystem = "usb", .change = "add" }, true },
        { "Event=uevent\nSubsystem=usb\nChange=add\n", NULL, { .subsystem = "usb", .change = "remove" }, false },
        { "Event=uevent\nSubsystem=usb\nChange=add\n", NULL, { .subsystem = "power_supply", .change = "add" }, false },
        { "Event=uevent\nSubsystem=usb\nChange=add\n", NULL, { .subsystem = "USB", .change = "add" }, false },
        { "Event=uevent\nSubsystem=usb\nChange=add\n", NULL, { .subsystem = NULL, .change = "add" }, false },
        { "Event=uevent\nSubsystem=usb\nChange=add\n", "link", { .subsystem = "usb", .change = "add" }, false },
        { "Event=uevent\nSubsystem=power_supply\n", NULL, { .subsystem = "power_supply", .change = "change" }, true },
        { "Event=uevent\nChange=remove\n", NULL, { .subsystem = "block", .change = "remove" }, true },
        { "Event=uevent\nChange=remove\n", NULL, { .subsystem = "block", .change = "add" }, false },

        /* input: Key= or Switch= (type and code), Value=, Device= (a name
         * or a path). */
        { POWER_PRESSED, NULL, INPUT(EV_KEY, KEY_POWER, 1), true },
        { POWER_PRESSED, NULL, INPUT(EV_KEY, KEY_POWER, 0), false },
        { POWER_PRESSED, NULL, INPUT(EV_KEY, KEY_POWER, 2), false },
        { POWER_PRESSED, NULL, INPUT(EV_KEY, KEY_SLEEP, 1), false },
        { POWER_PRESSED, NULL, INPUT(EV_SW, KEY_POWER, 1), false },
        { POWER_PRESSED, "push", INPUT(EV_KEY, KEY_POWER, 1), false },
        /* Without Value=, any value. */
        { "Event=input\nSwitch=SW_LID\n", NULL, INPUT(EV_SW, SW_LID, 0), true },
        { "Event=input\nSwitch=SW_LID\n", NULL, INPUT(EV_SW, SW_LID, 1), true },
        { "Event=input\nSwitch=SW_LID\n", NULL, INPUT(EV_SW, SW_TABLET_MODE, 1), false },
        /* SW_LID and KEY_RESERVED share code 0: the type tells them apart. */
        { "Event=input\nSwitch=SW_LID\n", NULL, INPUT(EV_KEY, SW_LID, 1), false },
        /* Device= as a name: the device's, exactly. */
        { POWER_BUTTON, NULL, DEVICE("Power Button", "/dev/input/event2", EV_KEY, KEY_POWER, 1), true },
        { POWER_BUTTON, NULL, DEVICE("power button", "/dev/input/event2", EV_KEY, KEY_POWER, 1), false },
        { POWER_BUTTON, NULL, DEVICE("Sleep Button", "/dev/input/event2", EV_KEY, KEY_POWER, 1), false },
        { POWER_BUTTON, NULL, INPUT(EV_KEY, KEY_POWER, 1), false },
        { "Event=input\nKey=KEY_POWER\nDevice=*Button\n", NULL, DEVICE("Power Button", NULL, EV_KEY, KEY_POWER, 1),
          false },
        /* Device= as a path: the device's path. */
        { POWER_AT_PATH, NULL, DEVICE("Power Button", NO_DEVICE, EV_KEY, KEY_POWER, 1), true },
        { POWER_AT_PATH, NULL, DEVICE("Power Button", "/dev/input/event2", EV_KEY, KEY_POWER, 1), false },
        { "Event=input\nKey=KEY_POWER\n", NULL, DEVICE("Any Keyboard", "/dev/input/event9", EV_KEY, KEY_POWER, 2),
          true },
};

/* Each case as the dispatcher judges it; every kind has a case that
 * matches and one that does not (a new kind needs both here). */
START_TEST(test_each_kind_keys) {
        const EventKind *const *kinds = event_kinds();
        bool yes[32] = {}, no[32] = {};
        size_t n_kinds = 0;

        for (; kinds[n_kinds]; n_kinds++)
                ;
        ck_assert_uint_le(n_kinds, ELEMENTSOF(yes));

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_rule_set_ RuleSet *set = calloc(1, sizeof(RuleSet));
                ck_assert_ptr_nonnull(set);
                const Rule *rule = add_rule(set, cases[i].match);
                Event ev = cases[i].event;

                ev.kind = cases[i].kind ? event_kind_from_string(cases[i].kind) : rule->event;
                ck_assert_ptr_nonnull(ev.kind);
                ck_assert_msg(listener_source_matches(rule, &ev) == cases[i].want, "case %zu (%s, event %s): %s", i,
                              cases[i].match, ev.kind->name, cases[i].want ? "no match" : "a match");
                for (size_t k = 0; k < n_kinds; k++)
                        if (kinds[k] == rule->event) {
                                yes[k] |= cases[i].want;
                                no[k] |= !cases[i].want;
                        }
        }
        /* dbus-signal and dbus-call are judged by their rule: test_own_rule. */
        for (size_t k = 0; k < n_kinds; k++) {
                if (streq(kinds[k]->name, "dbus-signal") || streq(kinds[k]->name, "dbus-call"))
                        continue;
                ck_assert_msg(yes[k] && no[k], "Event=%s lacks a case that %s", kinds[k]->name,
                              yes[k] ? "does not match" : "matches");
        }
}
END_TEST

/* A D-Bus signal or call reaches the listener through the bus match or
 * name watch of one rule, and matches that rule alone: not a rule of the
 * same text, not one of the other kind. */
START_TEST(test_own_rule) {
        static const char *const matches[] = {
                "Event=dbus-signal\nMatch=type='signal',interface='org.example.Push',member='Ring'\n",
                "Event=dbus-call\nBusName=org.example.Mail\n",
        };
        _cleanup_rule_set_ RuleSet *set = calloc(1, sizeof(RuleSet));

        ck_assert_ptr_nonnull(set);
        for (size_t i = 0; i < ELEMENTSOF(matches); i++) {
                add_rule(set, matches[i]);
                add_rule(set, matches[i]);
        }
        for (size_t i = 0; i < set->n_rules; i++) {
                const Rule *r = &set->rules[i];
                for (size_t j = 0; j < set->n_rules; j++) {
                        Event ev = { .kind = r->event, .rule = &set->rules[j] };
                        ck_assert_msg(listener_source_matches(r, &ev) == (i == j), "rule %zu, event of rule %zu", i, j);
                }
                ck_assert(!listener_source_matches(r, &(Event){ .kind = r->event }));
        }
        /* A rule's own event, delivered as the other kind, is not its. */
        ck_assert(!listener_source_matches(&set->rules[0],
                                           &(Event){ .kind = set->rules[2].event, .rule = &set->rules[0] }));
        ck_assert(!listener_source_matches(&set->rules[2],
                                           &(Event){ .kind = set->rules[0].event, .rule = &set->rules[2] }));
}
END_TEST

/* Values the keys refuse, so that no rule can mean more than it says: no
 * globs, no empty values, names in their case. */
START_TEST(test_values_literal) {
        static const char *const refused[] = {
                "Event=push\nUnit=mail*.service\n",
                "Event=push\nUnit=*\n",
                "Event=push\nUnit=\n",
                "Event=socket\nUnit=redis?.service\n",
                "Event=socket\nUnit=\n",
                "Event=link\nInterface=\n",
                "Event=link\nChange=UP\n",
                "Event=link\nChange=\n",
                "Event=link\nChange=up down\n",
                "Event=address\nChange=Added\n",
                "Event=address\nFamily=IPv4\n",
                "Event=address\nFamily=\n",
                "Event=uevent\nSubsystem=us*\n",
                "Event=uevent\nChange=ADD\n",
                "Event=input\nKey=key_power\n",
                "Event=input\nKey=KEY_POW*\n",
                "Event=input\nSwitch=sw_lid\n",
                "Event=input\nKey=KEY_POWER\nValue=\n",
                "Event=input\nKey=KEY_POWER\nDevice=\n",
                "Event=input\nValue=1\n",
                "Event=dbus-call\nBusName=org.example.*\n",
                "Event=dbus-call\nBusName=\n",
                "Event=dbus-signal\nMatch=\n",
                "Event=Push\nUnit=mail.service\n",
                "Event=\n",
        };
        for (size_t i = 0; i < ELEMENTSOF(refused); i++)
                assert_refused(refused[i]);
}
END_TEST

/* The dispatcher before standby: every rule an event matches is counted
 * and remembered (to be carried out once standby begins), and no other. */
START_TEST(test_dispatch_counts_each_match) {
        static const char *const rules[] = {
                "Event=push\nUnit=mail.service\n", /* 0 */
                "Event=push\n", /* 1: any push */
                "Event=push\nUnit=news.service\n", /* 2 */
                "Event=link\nInterface=sb0\n", /* 3 */
                "Event=socket\nUnit=mail.service\n", /* 4 */
                "Event=uevent\nSubsystem=usb\n", /* 5 */
        };
        static const struct {
                const char *kind;
                Event event;
                const char *want; /* the rules it matches, as '0'..'5' */
        } events[] = {
                { "push", { .unit = "mail.service" }, "01" },
                { "push", { .unit = "news.service" }, "12" },
                { "push", { .unit = "other.service" }, "1" },
                { "link", { .interface = "sb0", .change = "up" }, "3" },
                { "link", { .interface = "eth0", .change = "up" }, "" },
                { "socket", { .unit = "mail.service" }, "4" },
                { "uevent", { .subsystem = "usb", .change = "add" }, "5" },
                { "address", ADDRESS("sb0", AF_INET, "added"), "" },
        };
        _cleanup_rule_set_ RuleSet *set = calloc(1, sizeof(RuleSet));
        Listener *l = calloc(1, sizeof(Listener));

        ck_assert_ptr_nonnull(set);
        ck_assert_ptr_nonnull(l);
        for (size_t i = 0; i < ELEMENTSOF(rules); i++)
                add_rule(set, rules[i]);
        l->rules = set;
        for (size_t e = 0; e < ELEMENTSOF(events); e++) {
                Event ev = events[e].event;
                uint64_t matched = l->stats.matched;

                ev.kind = event_kind_from_string(events[e].kind);
                ck_assert_ptr_nonnull(ev.kind);
                listener_forget_late(l);
                ck_assert_int_eq(listener_dispatch(l, &ev, now_usec(CLOCK_MONOTONIC)), (int) strlen(events[e].want));
                ck_assert_uint_eq(l->stats.events, e + 1);
                ck_assert_uint_eq(l->stats.matched - matched, strlen(events[e].want));
                for (size_t r = 0; r < set->n_rules; r++) {
                        bool want = strchr(events[e].want, (char) ('0' + r));
                        bool late = l->late && l->late[r] > 0;
                        ck_assert_msg(late == want, "event %zu, rule %zu: %s", e, r,
                                      want ? "not remembered" : "remembered");
                }
        }
        ck_assert(!l->step_aside);
        listener_forget_late(l);
        free(l);
}
END_TEST

/* No rules: a file of comments only holds none, and with none (or no rule
 * set at all) an event matches nothing. */
START_TEST(test_dispatch_without_rules) {
        static const char comments[] = "# [Match]\n# Event=push\n\n; [Action]\n";
        _cleanup_rule_set_ RuleSet *set = calloc(1, sizeof(RuleSet));
        _cleanup_free_ char *error = NULL;
        Listener *l = calloc(1, sizeof(Listener));
        Event ev = { .kind = event_kind_from_string("push"), .unit = "mail.service" };

        ck_assert_ptr_nonnull(set);
        ck_assert_ptr_nonnull(l);
        ck_assert_int_eq(rules_parse_buffer(set, "c.rule", comments, strlen(comments), &error), 0);
        ck_assert_int_eq(rules_parse_buffer(set, "e.rule", "", 0, &error), 0);
        ck_assert_uint_eq(set->n_rules, 0);
        ck_assert_int_eq(listener_dispatch(l, &ev, now_usec(CLOCK_MONOTONIC)), 0);
        l->rules = set;
        ck_assert_int_eq(listener_dispatch(l, &ev, now_usec(CLOCK_MONOTONIC)), 0);
        ck_assert_uint_eq(l->stats.events, 2);
        ck_assert_uint_eq(l->stats.matched, 0);
        ck_assert_ptr_null(l->late);
        free(l);
}
END_TEST

Suite *match_suite(void) {
        Suite *s = suite_create("match");
        TCase *tc = tcase_create("keys");
        tcase_add_test(tc, test_each_kind_keys);
        tcase_add_test(tc, test_own_rule);
        tcase_add_test(tc, test_values_literal);
        suite_add_tcase(s, tc);
        tc = tcase_create("dispatch");
        tcase_add_test(tc, test_dispatch_counts_each_match);
        tcase_add_test(tc, test_dispatch_without_rules);
        suite_add_tcase(s, tc);
        return s;
}
