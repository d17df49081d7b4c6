/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The listener's queue of work (listener/queue.c), in process on a real
 * sd-event loop and no bus: what handlers queue reaches the dispatcher
 * once, right after the handler and before any other source; nothing is
 * pending while nothing is queued. */
#include "../listener/listener.h"
#include "test-util.h"

typedef struct Turns {
        Listener *listener;
        char order[16];           /* 'A', 'B': the test's sources; 'D': the dispatcher */
        size_t n;
        ListenerWork work[4];     /* what each dispatch took */
        size_t n_dispatched;
        bool queue_again;         /* the dispatcher queues work once more */
} Turns;

static Turns turns;

static void note(char c) {
        ck_assert_uint_lt(turns.n, sizeof(turns.order) - 1);
        turns.order[turns.n++] = c;
}

static int on_dispatch(sd_event_source *s, void *userdata) {
        Listener *l = userdata;

        note('D');
        ck_assert_uint_lt(turns.n_dispatched, ELEMENTSOF(turns.work));
        turns.work[turns.n_dispatched++] = listener_queue_take(l);
        if (turns.queue_again) {
                turns.queue_again = false;
                listener_enqueue(l, LISTENER_WORK_WINDOWS_DUE);
        }
        return 0;
}

/* An event's handler: reports twice, as two changes of one turn would. */
static int on_a(sd_event_source *s, void *userdata) {
        note('A');
        listener_enqueue(turns.listener, LISTENER_WORK_RECORDS);
        listener_enqueue(turns.listener, LISTENER_WORK_JOURNAL_CHANGED);
        return sd_event_source_set_enabled(s, SD_EVENT_OFF);
}

/* Another event, pending beside it. */
static int on_b(sd_event_source *s, void *userdata) {
        note('B');
        return sd_event_source_set_enabled(s, SD_EVENT_OFF);
}

static void run_until_idle(sd_event *e) {
        int r;

        for (int i = 0; i < 16; i++) {
                r = sd_event_run(e, 0);
                ck_assert_int_ge(r, 0);
                if (r == 0)
                        return;
        }
        ck_abort_msg("the loop did not go idle");
}

static void setup_loop(Listener *l, sd_event_source **a, sd_event_source **b) {
        turns = (Turns) { .listener = l };
        ck_assert_int_ge(sd_event_new(&l->event), 0);
        ck_assert_int_ge(listener_queue_init(l, on_dispatch), 0);
        /* A at the journal watch's priority, B at an event source's. */
        ck_assert_int_ge(sd_event_add_defer(l->event, a, on_a, NULL), 0);
        ck_assert_int_ge(sd_event_source_set_priority(*a, SD_EVENT_PRIORITY_IMPORTANT), 0);
        ck_assert_int_ge(sd_event_add_defer(l->event, b, on_b, NULL), 0);
}

static void teardown_loop(Listener *l, sd_event_source *a, sd_event_source *b) {
        sd_event_source_disable_unref(a);
        sd_event_source_disable_unref(b);
        listener_queue_free(l);
        sd_event_unref(l->event);
}

START_TEST(test_dispatch_once_after_the_handler) {
        Listener l = {};
        sd_event_source *a = NULL, *b = NULL;
        int enabled = -1;

        setup_loop(&l, &a, &b);
        /* Nothing queued: the dispatcher is not pending. */
        ck_assert_int_ge(sd_event_source_get_enabled(l.queue_source, &enabled), 0);
        ck_assert_int_eq(enabled, SD_EVENT_OFF);
        run_until_idle(l.event);
        /* Both reports of A in one dispatch, before B is handled. */
        ck_assert_str_eq(turns.order, "ADB");
        ck_assert_uint_eq(turns.n_dispatched, 1);
        ck_assert_int_eq(turns.work[0], LISTENER_WORK_RECORDS | LISTENER_WORK_JOURNAL_CHANGED);
        ck_assert_int_eq(l.queued, 0);
        ck_assert_int_ge(sd_event_source_get_enabled(l.queue_source, &enabled), 0);
        ck_assert_int_eq(enabled, SD_EVENT_OFF);
        teardown_loop(&l, a, b);
}
END_TEST

START_TEST(test_dispatch_work_it_queues_runs_next) {
        Listener l = {};
        sd_event_source *a = NULL, *b = NULL;

        setup_loop(&l, &a, &b);
        turns.queue_again = true;
        run_until_idle(l.event);
        /* Queued by the dispatcher itself: one more turn of it, still
         * before the other event. */
        ck_assert_str_eq(turns.order, "ADDB");
        ck_assert_uint_eq(turns.n_dispatched, 2);
        ck_assert_int_eq(turns.work[1], LISTENER_WORK_WINDOWS_DUE);
        teardown_loop(&l, a, b);
}
END_TEST

START_TEST(test_dispatch_queued_before_the_loop) {
        Listener l = {};
        int enabled = -1;

        turns = (Turns) { .listener = &l };
        ck_assert_int_ge(sd_event_new(&l.event), 0);
        /* Queued before there is a dispatcher (at start): kept for it. */
        listener_enqueue(&l, LISTENER_WORK_LOCK_FREE);
        ck_assert_int_ge(listener_queue_init(&l, on_dispatch), 0);
        ck_assert_int_ge(sd_event_source_get_enabled(l.queue_source, &enabled), 0);
        ck_assert_int_eq(enabled, SD_EVENT_ONESHOT);
        run_until_idle(l.event);
        ck_assert_str_eq(turns.order, "D");
        ck_assert_int_eq(turns.work[0], LISTENER_WORK_LOCK_FREE);
        listener_queue_free(&l);
        sd_event_unref(l.event);
}
END_TEST

/* The standby phase (listener/phase.c): its names, its table, and how it
 * follows the journal. */
START_TEST(test_phase_names_distinct) {
        Listener l = {};

        ck_assert_str_eq(listener_phase_name(&l), "inactive");
        for (ListenerPhase a = 0; a < _LISTENER_PHASE_MAX; a++) {
                ck_assert_ptr_nonnull(listener_phase_to_string(a));
                for (ListenerPhase b = a + 1; b < _LISTENER_PHASE_MAX; b++)
                        ck_assert_str_ne(listener_phase_to_string(a), listener_phase_to_string(b));
        }
        ck_assert_ptr_null(listener_phase_to_string(_LISTENER_PHASE_MAX));
        ck_assert_ptr_null(listener_phase_to_string(_LISTENER_PHASE_INVALID));
}
END_TEST

START_TEST(test_phase_paths_in_table) {
        /* The policy's entry and an ExitStandby= exit run here. */
        static const ListenerPhase path[] = {
                LISTENER_PHASE_INACTIVE, LISTENER_PHASE_STARTING,    LISTENER_PHASE_ANNOUNCING,
                LISTENER_PHASE_TOLD,     LISTENER_PHASE_ACTIVE,      LISTENER_PHASE_LEAVE_ASKED,
                LISTENER_PHASE_EXITING,  LISTENER_PHASE_ACTIVE,      LISTENER_PHASE_EXITING,
                LISTENER_PHASE_INACTIVE,
        };
        Listener l = {};

        for (size_t i = 1; i < ELEMENTSOF(path); i++) {
                ck_assert_msg(listener_phase_transition_allowed(path[i - 1], path[i]), "%s -> %s",
                              listener_phase_to_string(path[i - 1]), listener_phase_to_string(path[i]));
                listener_set_phase(&l, path[i], "test");
                ck_assert_int_eq(l.phase, path[i]);
        }
        /* Never: an exit without standby, apps' delay dropped untold, a
         * leave asked of what is not active. */
        ck_assert(!listener_phase_transition_allowed(LISTENER_PHASE_INACTIVE, LISTENER_PHASE_EXITING));
        ck_assert(!listener_phase_transition_allowed(LISTENER_PHASE_ANNOUNCING, LISTENER_PHASE_INACTIVE));
        ck_assert(!listener_phase_transition_allowed(LISTENER_PHASE_TOLD, LISTENER_PHASE_LEAVE_ASKED));
        ck_assert(!listener_phase_transition_allowed(LISTENER_PHASE_EXITING, LISTENER_PHASE_LEAVE_ASKED));
}
END_TEST

START_TEST(test_phase_follows_journal) {
        Listener l = {};

        ck_assert(!listener_phase_follow_journal(&l, false));
        ck_assert_int_eq(l.phase, LISTENER_PHASE_INACTIVE);
        /* Entered while apps were still given their delay. */
        l.phase = LISTENER_PHASE_ANNOUNCING;
        ck_assert(listener_phase_follow_journal(&l, true));
        ck_assert_int_eq(l.phase, LISTENER_PHASE_ACTIVE);
        ck_assert(listener_standby_active(&l));
        ck_assert(!listener_exiting(&l));
        /* An exit under way is still standby, until the journal leaves. */
        listener_set_phase(&l, LISTENER_PHASE_EXITING, "test");
        ck_assert(listener_exiting(&l));
        ck_assert(!listener_phase_follow_journal(&l, true));
        ck_assert_int_eq(l.phase, LISTENER_PHASE_EXITING);
        ck_assert(listener_phase_follow_journal(&l, false));
        ck_assert_int_eq(l.phase, LISTENER_PHASE_INACTIVE);
        ck_assert(!listener_standby_active(&l) && !listener_exiting(&l));
        /* The policy's start asked: not standby until the journal says so. */
        listener_set_phase(&l, LISTENER_PHASE_STARTING, "test");
        ck_assert(!listener_phase_follow_journal(&l, false));
        ck_assert_int_eq(l.phase, LISTENER_PHASE_STARTING);
}
END_TEST

Suite *dispatch_suite(void) {
        Suite *s = suite_create("dispatch");
        TCase *tc = tcase_create("queue");

        tcase_add_test(tc, test_dispatch_once_after_the_handler);
        tcase_add_test(tc, test_dispatch_work_it_queues_runs_next);
        tcase_add_test(tc, test_dispatch_queued_before_the_loop);
        suite_add_tcase(s, tc);
        tc = tcase_create("phase");
        tcase_add_test(tc, test_phase_names_distinct);
        tcase_add_test(tc, test_phase_paths_in_table);
        tcase_add_test(tc, test_phase_follows_journal);
        suite_add_tcase(s, tc);
        return s;
}
