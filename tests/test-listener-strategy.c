/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A strategy per unit (standby.conf's [Strategy]) seen by the listener: a
 * slacked unit and one left alone run, so events and windows act only on
 * the frozen units, and new work is held only where its line says freeze. */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "journal.h"
#include "listener-harness.h"
#include "macro.h"
#include "proc.h"
#include "slack.h"
#include "standby.h"
#include "test-util.h"

/* A strategy per unit, to the listener: a slacked unit and one left alone
 * run, so a rule's event thaws only the frozen unit, the window refreezes
 * only it, and the others keep their state and their slack; a cgroup made
 * during standby is held only where its line says freeze, by the lines the
 * listener read last. */
START_TEST(test_unit_strategies_run) {
        _cleanup_close_ int alone_new = -EBADF, slack_new = -EBADF, late = -EBADF;
        _cleanup_free_ pid_t *tids = NULL;
        size_t nt = 0;
        int acted;

        if (!test_need_root_cgroup2())
                return;
        test_write_config("[Strategy]\nSlack=30s slacked*.service\nNone=alone*.service\n");
        write_rule("70-mix.rule", "[Match]\nEvent=push\nUnit=mix.service\n[Action]\n"
                                  "Thaw=frozen.service slacked.service alone.service\nFor=1s\n");
        test_spawn_workload("frozen.service", "idle", 100, 1, NULL);
        pid_t slacked = test_spawn_workload("slacked.service", "nanosleep", 20, 2, NULL);
        test_spawn_workload("alone.service", "idle", 100, 1, NULL);
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        (void) statistic(bus, "events"); /* the journal change is taken before a call */
        ck_assert(test_frozen("frozen.service"));
        ck_assert_int_eq(journal_state_of("slacked.service"), UNIT_SLACKED);
        ck_assert_int_eq(journal_state_of("alone.service"), UNIT_LEFT);

        ck_assert_ptr_null(push(bus, "mix.service", &acted));
        ck_assert_int_eq(acted, 1);
        ck_assert(!test_frozen("frozen.service"));
        ck_assert_uint_eq(statistic(bus, "thaws"), 1);
        /* The window ends: only the unit it thawed is frozen again. */
        ck_assert(wait_frozen("frozen.service", true));
        ck_assert(wait_statistic(bus, "refreezes", 1, 10 * USEC_PER_SEC));
        ck_assert(wait_journal_state("frozen.service", UNIT_FROZEN, 10 * USEC_PER_SEC));
        ck_assert(!test_frozen("slacked.service"));
        ck_assert(!test_frozen("alone.service"));
        ck_assert_int_eq(journal_state_of("slacked.service"), UNIT_SLACKED);
        ck_assert_int_eq(journal_state_of("alone.service"), UNIT_LEFT);
        ck_assert_int_eq(proc_list_tids(slacked, &tids, &nt), 0);
        for (size_t k = 0; k < nt; k++) {
                uint64_t v;
                ck_assert_int_eq(slack_get(tids[k], &v), 0);
                ck_assert_uint_eq(v, UINT64_C(30000000000));
        }

        /* New cgroups, in this order: only the last is a frozen unit's. It
         * held, the listener has handled the two before it. */
        alone_new = test_cgroup("alone-new.service");
        slack_new = test_cgroup("slacked-new.service");
        late = test_cgroup("late.service");
        ck_assert_msg(wait_frozen("late.service", true), "a unit to freeze started during standby was not held");
        ck_assert(wait_statistic(bus, "held", 1, 10 * USEC_PER_SEC));
        ck_assert_uint_eq(statistic(bus, "held"), 1);
        ck_assert(!test_frozen("alone-new.service"));
        ck_assert(!test_frozen("slacked-new.service"));
        ck_assert_int_eq(journal_state_of("alone-new.service"), -1);
        ck_assert_int_eq(journal_state_of("slacked-new.service"), -1);

        /* A reload reads [Strategy] again: late.service's kind is left
         * alone now, another frozen unit's kind still held. */
        test_write_config("[Strategy]\nSlack=30s slacked*.service\nNone=alone*.service late*.service\n");
        ck_assert_int_eq(kill(listener_pid, SIGHUP), 0);
        ck_assert(wait_notify("RELOADING=1"));
        ck_assert(wait_notify("READY=1"));
        _cleanup_close_ int late2 = test_cgroup("late-2.service"), other = test_cgroup("other.service");
        ck_assert_msg(wait_frozen("other.service", true), "a unit to freeze started after the reload was not held");
        ck_assert(wait_statistic(bus, "held", 2, 10 * USEC_PER_SEC));
        ck_assert_uint_eq(statistic(bus, "held"), 2);
        ck_assert(!test_frozen("late-2.service"));

        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
        for (size_t k = 0; k < nt; k++) {
                uint64_t v;
                ck_assert_int_eq(slack_get(tids[k], &v), 0);
                ck_assert_uint_eq(v, SLACK_KERNEL_DEFAULT_NS);
        }
        sd_bus_flush_close_unref(bus);
}
END_TEST

void listener_strategy_tests(const ListenerCases *c) {
        tcase_add_test(c->hold, test_unit_strategies_run);
}
