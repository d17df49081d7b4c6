/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Push method and the interface it is on: a push thaws its unit for the
 * window and only it, is recorded, coalesces, is refused to strangers,
 * and is replayed when it comes during enter. */
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "listener-harness.h"
#include "manager.h"
#include "test-util.h"

/* A push thaws its unit for the window (and only it), which then freezes again. */
START_TEST(test_push_thaws_for_window) {
        int mail, other, acted;

        if (!test_need_root_cgroup2())
                return;
        test_spawn_workload("mail.service", "nanosleep", 10, 1, &mail);
        test_spawn_workload("other.service", "nanosleep", 10, 1, &other);
        start_listener();
        sd_bus *bus = client();

        /* Outside standby a push is answered, matches its rule, and does
         * nothing: no thaw, no journal; standby entered afterwards does not
         * carry it out (it came before standby began). */
        ck_assert_ptr_null(push(bus, "mail.service", &acted));
        ck_assert_int_eq(acted, 1);
        ck_assert_uint_eq(statistic(bus, "matched"), 1);
        ck_assert_uint_eq(statistic(bus, "thaws"), 0);
        ck_assert_int_eq(journal_state_of("mail.service"), -1);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        (void) statistic(bus, "events"); /* the journal change is taken before a call */
        ck_assert_uint_eq(statistic(bus, "replayed"), 0);
        ck_assert_uint_eq(statistic(bus, "thaws"), 0);
        ck_assert(test_frozen("mail.service"));
        ck_assert_int_eq(journal_state_of("mail.service"), UNIT_FROZEN);
        test_drain(mail);
        test_drain(other);
        ck_assert_ptr_null(push(bus, "mail.service", &acted));
        ck_assert_int_eq(acted, 1);
        ck_assert(!test_frozen("mail.service"));
        ck_assert_int_eq(test_ticks(mail, 3, 5 * USEC_PER_SEC), 3);
        /* While mail.service ticked three times, other.service not once. */
        ck_assert(test_frozen("other.service"));
        ck_assert_int_eq(test_pending(other), 0);

        /* The pusher waits for the listener's answer: it comes before
         * the listener steps aside for the service it thawed. */
        ck_assert_uint_eq(statistic(bus, "yields"), 0);

        /* The window (1 s) closes by itself. */
        ck_assert(wait_frozen("mail.service", true));
        ck_assert_uint_eq(statistic(bus, "thaws"), 1);
        ck_assert_uint_eq(statistic(bus, "refreezes"), 1);
        ck_assert_uint_eq(statistic(bus, "matched"), 2);

        /* standby-manager status shows them. */
        _cleanup_free_ char *out = NULL, *json = NULL;
        ck_assert_int_eq(test_manager_env(NULL, &out, NULL, "status", "--bus-address", bus_address, NULL), EXIT_OK);
        ck_assert_msg(strstr(out, "Listener: 2 events, 2 matched, 1 thaws (event to thaw: mean"), "%s", out);
        ck_assert_int_eq(test_manager_env(NULL, &json, NULL, "status", "--json", "--bus-address", bus_address, NULL),
                         EXIT_OK);
        ck_assert_msg(strstr(json, "\"listener\":{\"events\":2,\"matched\":2,\"thaws\":1,"), "%s", json);

        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* A rule with two Thaw= names thaws both for one event, each unit for the
 * window, and both freeze again at its end. */
START_TEST(test_push_thaws_every_name) {
        int mail, other, acted;

        if (!test_need_root_cgroup2())
                return;
        write_rule("70-pair.rule", "[Match]\nEvent=push\nUnit=pair.service\n[Action]\n"
                                   "Thaw=mail.service other.service\nFor=1s\n");
        test_spawn_workload("mail.service", "nanosleep", 10, 1, &mail);
        test_spawn_workload("other.service", "nanosleep", 10, 1, &other);
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        (void) statistic(bus, "events"); /* the journal change is taken before a call */
        ck_assert(test_frozen("mail.service"));
        ck_assert(test_frozen("other.service"));

        ck_assert_ptr_null(push(bus, "pair.service", &acted));
        ck_assert_int_eq(acted, 1);
        ck_assert(!test_frozen("mail.service"));
        ck_assert(!test_frozen("other.service"));
        ck_assert_uint_eq(statistic(bus, "thaws"), 2);
        ck_assert(wait_frozen("mail.service", true));
        ck_assert(wait_frozen("other.service", true));

        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* The thaw comes first, its record in the journal shortly after: the
 * journal says thawed (so exit and status know), and a unit frozen again
 * before the record came is not recorded as thawed. */
START_TEST(test_thaw_recorded) {
        int acted;

        if (!test_need_root_cgroup2())
                return;
        write_rule("50-forever.rule", "[Match]\nEvent=push\nUnit=news.service\n[Action]\nThaw=news.service\n");
        test_spawn_workload("news.service", "idle", 100, 1, NULL);
        sd_bus *bus = standby_with_idle_mail();
        ck_assert_int_eq(journal_state_of("news.service"), UNIT_FROZEN);

        ck_assert_ptr_null(push(bus, "news.service", &acted));
        ck_assert_int_eq(acted, 1);
        ck_assert(!test_frozen("news.service"));
        ck_assert_msg(wait_journal_state("news.service", UNIT_THAWED, 10 * USEC_PER_SEC), "the thaw never reached the journal");
        ck_assert_uint_eq(statistic(bus, "records"), 1);

        /* Frozen again by hand, then pushed and frozen at once, before the
         * record can come: the journal must end up saying frozen. (By path:
         * `freeze NAME` searches the whole cgroup tree, where a concurrent
         * runner's test may have a unit of the same name.) */
        ck_assert_int_eq(test_manager(NULL, "--quiet", "freeze", test_cgpath("news.service"), NULL), EXIT_OK);
        ck_assert_int_eq(journal_state_of("news.service"), UNIT_FROZEN);
        ck_assert_ptr_null(push(bus, "news.service", &acted));
        ck_assert_int_eq(acted, 1);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "freeze", test_cgpath("news.service"), NULL), EXIT_OK);
        ck_assert(test_frozen("news.service"));
        /* Pending records are written together, by one timer due 2-3 ms
         * after the first: once a later thaw (mail's) is in the journal,
         * any record of news's thaw would be too. */
        ck_assert_ptr_null(push(bus, "mail.service", &acted));
        ck_assert_int_eq(acted, 1);
        ck_assert_msg(wait_journal_state("mail.service", UNIT_THAWED, 10 * USEC_PER_SEC), "mail's thaw never reached the journal");
        ck_assert_msg(journal_state_of("news.service") == UNIT_FROZEN, "a thaw overtaken by a freeze was recorded");
        ck_assert(test_frozen("news.service"));

        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* A storm of pushes inside one window: one thaw, the rest coalesce. */
START_TEST(test_push_storm_coalesces) {
        int acted;

        if (!test_need_root_cgroup2())
                return;
        sd_bus *bus = standby_with_idle_mail();
        for (int i = 0; i < 200; i++)
                ck_assert_ptr_null(push(bus, "mail.service", &acted));
        ck_assert_uint_eq(statistic(bus, "thaws"), 1);
        ck_assert_uint_eq(statistic(bus, "coalesced"), 199);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* Only root (or Group=) may push: others get AccessDenied and change nothing. */
START_TEST(test_push_access_denied) {
        int status;

        if (!test_need_root_cgroup2())
                return;
        sd_bus_flush_close_unref(standby_with_idle_mail());

        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                        _exit(2);
                sd_bus *bus = NULL;
                if (sd_bus_new(&bus) < 0 || sd_bus_set_address(bus, bus_address) < 0 ||
                    sd_bus_set_bus_client(bus, true) < 0 || sd_bus_start(bus) < 0)
                        _exit(3);
                char *name = push(bus, "mail.service", NULL);
                _exit(name && streq(name, SD_BUS_ERROR_ACCESS_DENIED) ? 0 : 1);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "unprivileged push was not denied (%d)", status);
        ck_assert(test_frozen("mail.service"));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
}
END_TEST

/* Whether the element that opens with head in an introspection names each
 * of names (NULL-terminated) among its arguments. */
static void assert_args_named(const char *xml, const char *head, const char * const *names) {
        const char *start = strstr(xml, head), *end;

        ck_assert_msg(start, "%s not in the introspection:\n%s", head, xml);
        end = strstr(start, strstr(head, "<signal") ? "</signal>" : "</method>");
        ck_assert_ptr_nonnull(end);
        for (; *names; names++) {
                char arg[64];
                snprintf(arg, sizeof(arg), "name=\"%s\"", *names);
                const char *at = strstr(start, arg);
                ck_assert_msg(at && at < end, "%s has no argument %s:\n%.*s", head, arg, (int) (end - start), start);
        }
}

/* The interface is one object with every method and the signal, each
 * argument named: what busctl introspect and D-Bus bindings show. */
START_TEST(test_introspect_names_arguments) {
        sd_bus_message *reply = NULL;
        const char *xml;

        if (!test_need_root_cgroup2())
                return;
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_ge(sd_bus_call_method(bus, "org.standby.Listener1", "/org/standby/Listener1",
                                            "org.freedesktop.DBus.Introspectable", "Introspect", NULL, &reply, ""),
                         0);
        ck_assert_int_ge(sd_bus_message_read(reply, "s", &xml), 0);
        assert_args_named(xml, "<method name=\"Push\">", (const char * const[]) { "unit", "reason", "matched", NULL });
        assert_args_named(xml, "<method name=\"Inhibit\">",
                          (const char * const[]) { "what", "who", "why", "mode", "fd", NULL });
        assert_args_named(xml, "<method name=\"GetPowerState\">", (const char * const[]) { "state", NULL });
        assert_args_named(xml, "<signal name=\"PrepareForStandby\">", (const char * const[]) { "start", NULL });
        /* One interface, registered once. */
        const char *first = strstr(xml, "<interface name=\"org.standby.Listener1\">");
        ck_assert_ptr_nonnull(first);
        ck_assert_ptr_null(strstr(first + 1, "<interface name=\"org.standby.Listener1\">"));
        sd_bus_message_unref(reply);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* A unit frozen again by standby-manager before the listener has recorded
 * its last thaw: the journal's FROZEN is the newer word, and the next event
 * thaws it again (taken as still thawed, the event would be lost). */
START_TEST(test_refreeze_before_record) {
        int mail, acted;

        if (!test_need_root_cgroup2())
                return;
        /* The record held back 3 s: the refreeze surely comes first. */
        ck_assert_int_eq(setenv("STANDBY_LISTENER_RECORD_DELAY_USEC", "3000000", 1), 0);
        test_spawn_workload("mail.service", "nanosleep", 10, 1, &mail);
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert_ptr_null(push(bus, "mail.service", &acted));
        ck_assert(!test_frozen("mail.service"));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "freeze", test_cgpath("mail.service"), NULL), EXIT_OK);
        ck_assert(test_frozen("mail.service"));
        test_drain(mail);
        (void) statistic(bus, "events"); /* the journal change is taken before a call */
        ck_assert_ptr_null(push(bus, "mail.service", &acted));
        ck_assert_uint_eq(statistic(bus, "thaws"), 2);
        ck_assert(!test_frozen("mail.service"));
        ck_assert_int_eq(test_ticks(mail, 3, 5 * USEC_PER_SEC), 3);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* A push that comes while the manager is still entering standby (it waits
 * for a unit stuck in a FUSE read) is not lost: once standby is entered, the
 * listener thaws the unit the push named. */
START_TEST(test_push_during_enter_replayed) {
        sd_bus *bus;
        pid_t enter;
        int acted;

        if (!enter_held_open(&bus, &enter))
                return;
        ck_assert_ptr_null(push(bus, "mail.service", &acted));
        enter_done(enter);

        ck_assert(wait_frozen("mail.service", false));
        ck_assert_uint_eq(statistic(bus, "replayed"), 1);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

void listener_push_tests(const ListenerCases *c) {
        tcase_add_test(c->dbus, test_push_thaws_for_window);
        tcase_add_test(c->dbus, test_push_thaws_every_name);
        tcase_add_test(c->dbus, test_refreeze_before_record);
        tcase_add_test(c->dbus, test_push_storm_coalesces);
        tcase_add_test(c->dbus, test_thaw_recorded);
        tcase_add_test(c->dbus, test_push_access_denied);
        tcase_add_test(c->dbus, test_introspect_names_arguments);
        tcase_add_test(c->dbus, test_push_during_enter_replayed);
}
