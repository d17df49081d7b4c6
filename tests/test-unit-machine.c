/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The listener's unit state machine (listener/unit-machine.c), in process:
 * the table itself, move by move, against the moves the listener is meant
 * to make; the decision an event's thaw takes from it; the table printed
 * in docs/design.md; and unit-state.c's copy of a unit moved through it
 * by real thaws of a real cgroup, with no bus and no loop. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

#include "../listener/listener.h"
#include "cgroup.h"
#include "fileio.h"
#include "strv.h"
#include "test-util.h"

static const UnitState states[] = { UNIT_NONE,    UNIT_FREEZING,   UNIT_FROZEN, UNIT_THAWED,
                                    UNIT_SKIPPED, UNIT_LOCKHOLDER, UNIT_SLACKED };

/* Every move the listener makes, and no other. */
static const struct {
        UnitState from;
        UnitEvent event;
        UnitState to;
} expected[] = {
        { UNIT_FROZEN, UNIT_EVENT_THAW, UNIT_THAWED },
        { UNIT_THAWED, UNIT_EVENT_THAW, UNIT_THAWED },
        { UNIT_FREEZING, UNIT_EVENT_TAKE_BACK, UNIT_THAWED },
        { UNIT_THAWED, UNIT_EVENT_WINDOW_END, UNIT_FREEZING },
        { UNIT_NONE, UNIT_EVENT_HOLD, UNIT_FREEZING },
        { UNIT_FREEZING, UNIT_EVENT_HOLD, UNIT_FREEZING },
        { UNIT_FROZEN, UNIT_EVENT_HOLD, UNIT_FREEZING },
        { UNIT_FREEZING, UNIT_EVENT_FROZEN, UNIT_FROZEN },
        { UNIT_FREEZING, UNIT_EVENT_FREEZE_TIMEOUT, UNIT_SKIPPED },
        { UNIT_FROZEN, UNIT_EVENT_ABORT, UNIT_SKIPPED },
        { UNIT_FREEZING, UNIT_EVENT_GONE, UNIT_NONE },
        { UNIT_FROZEN, UNIT_EVENT_LOCK_HOLDER, UNIT_LOCKHOLDER },
        { UNIT_FREEZING, UNIT_EVENT_RELEASE, UNIT_NONE },
        { UNIT_FROZEN, UNIT_EVENT_RELEASE, UNIT_NONE },
};

static bool is_expected(UnitState from, UnitEvent event, UnitState *ret_to) {
        for (size_t i = 0; i < ELEMENTSOF(expected); i++)
                if (expected[i].from == from && expected[i].event == event) {
                        *ret_to = expected[i].to;
                        return true;
                }
        return false;
}

/* Each (state, event): the table's move is the one expected, and any
 * other is refused, leaving the output as it was. */
START_TEST(test_machine_moves) {
        size_t allowed = 0;

        for (UnitEvent e = 0; e < _UNIT_EVENT_MAX; e++)
                for (size_t i = 0; i < ELEMENTSOF(states); i++) {
                        UnitState want, to = (UnitState) 99;
                        int r = unit_machine_next(states[i], e, &to);

                        if (is_expected(states[i], e, &want)) {
                                ck_assert_msg(r == 0, "%s refused from %s", unit_event_to_string(e),
                                              unit_machine_state_to_string(states[i]));
                                ck_assert_int_eq(to, want);
                                ck_assert(unit_machine_allows(states[i], e));
                                allowed++;
                        } else {
                                ck_assert_msg(r == -EINVAL, "%s taken from %s", unit_event_to_string(e),
                                              unit_machine_state_to_string(states[i]));
                                ck_assert_int_eq(to, 99);
                                ck_assert(!unit_machine_allows(states[i], e));
                        }
                }
        ck_assert_uint_eq(allowed, ELEMENTSOF(expected));
}
END_TEST

/* What is not a state or not an event moves nothing. */
START_TEST(test_machine_refuses_nonsense) {
        UnitState to = UNIT_FROZEN;

        ck_assert_int_eq(unit_machine_next(_UNIT_STATE_MAX, UNIT_EVENT_THAW, &to), -EINVAL);
        ck_assert_int_eq(unit_machine_next((UnitState) -2, UNIT_EVENT_THAW, &to), -EINVAL);
        ck_assert_int_eq(unit_machine_next(UNIT_FROZEN, _UNIT_EVENT_MAX, &to), -EINVAL);
        ck_assert_int_eq(unit_machine_next(UNIT_FROZEN, _UNIT_EVENT_INVALID, &to), -EINVAL);
        ck_assert_int_eq(to, UNIT_FROZEN);
        ck_assert_uint_eq(unit_machine_journal_mask(_UNIT_EVENT_MAX), 0);
        ck_assert_int_eq(unit_machine_target(_UNIT_EVENT_INVALID), _UNIT_STATE_INVALID);
        ck_assert_ptr_null(unit_event_to_string(_UNIT_EVENT_MAX));
        ck_assert_ptr_null(unit_event_who(_UNIT_EVENT_INVALID));
}
END_TEST

/* The masks the listener's records expect (freeze_record()): the journal's
 * states of each move, "none" left out; every event has one target. */
START_TEST(test_machine_journal_masks) {
        ck_assert_uint_eq(unit_machine_journal_mask(UNIT_EVENT_THAW) | unit_machine_journal_mask(UNIT_EVENT_TAKE_BACK),
                          UNIT_STATE_MASK(UNIT_FROZEN) | UNIT_STATE_MASK(UNIT_THAWED) | UNIT_STATE_MASK(UNIT_FREEZING));
        ck_assert_uint_eq(unit_machine_journal_mask(UNIT_EVENT_FROZEN), UNIT_STATE_MASK(UNIT_FREEZING));
        ck_assert_uint_eq(unit_machine_journal_mask(UNIT_EVENT_LOCK_HOLDER), UNIT_STATE_MASK(UNIT_FROZEN));
        ck_assert_uint_eq(unit_machine_journal_mask(UNIT_EVENT_HOLD),
                          UNIT_STATE_MASK(UNIT_FREEZING) | UNIT_STATE_MASK(UNIT_FROZEN));
        ck_assert_int_eq(unit_machine_target(UNIT_EVENT_WINDOW_END), UNIT_FREEZING);
        ck_assert_int_eq(unit_machine_target(UNIT_EVENT_GONE), UNIT_NONE);
        for (UnitEvent e = 0; e < _UNIT_EVENT_MAX; e++) {
                unsigned mask = unit_machine_journal_mask(e);
                ck_assert_ptr_nonnull(unit_event_to_string(e));
                ck_assert_ptr_nonnull(unit_event_who(e));
                for (UnitState s = 0; s < _UNIT_STATE_MAX; s++)
                        ck_assert_int_eq(!!(mask & UNIT_STATE_MASK(s)), unit_machine_allows(s, e));
                for (UnitEvent o = 0; o < e; o++)
                        ck_assert_str_ne(unit_event_to_string(o), unit_event_to_string(e));
        }
}
END_TEST

/* What an event does to a unit, by its state. */
START_TEST(test_machine_event_thaws) {
        for (int open = 0; open <= 1; open++)
                for (int refreezing = 0; refreezing <= 1; refreezing++) {
                        ck_assert_int_eq(unit_machine_event_thaws(UNIT_FROZEN, open, refreezing), UNIT_EVENT_THAW);
                        /* An open window coalesces; an ended one, not yet closed, thaws again. */
                        ck_assert_int_eq(unit_machine_event_thaws(UNIT_THAWED, open, refreezing),
                                         open ? _UNIT_EVENT_INVALID : UNIT_EVENT_THAW);
                        /* Freezing: only the listener's own refreeze lets go. */
                        ck_assert_int_eq(unit_machine_event_thaws(UNIT_FREEZING, open, refreezing),
                                         refreezing ? UNIT_EVENT_TAKE_BACK : _UNIT_EVENT_INVALID);
                        /* Left running, or not frozen: never an event's. */
                        ck_assert_int_eq(unit_machine_event_thaws(UNIT_SKIPPED, open, refreezing), _UNIT_EVENT_INVALID);
                        ck_assert_int_eq(unit_machine_event_thaws(UNIT_LOCKHOLDER, open, refreezing),
                                         _UNIT_EVENT_INVALID);
                        ck_assert_int_eq(unit_machine_event_thaws(UNIT_SLACKED, open, refreezing), _UNIT_EVENT_INVALID);
                        ck_assert_int_eq(unit_machine_event_thaws(UNIT_NONE, open, refreezing), _UNIT_EVENT_INVALID);
                }
}
END_TEST

/* A window's life, move by move: frozen, thawed, freezing again, then
 * each way a refreeze ends; nothing the listener does leaves slacked. */
START_TEST(test_machine_window_paths) {
        UnitState s = UNIT_FROZEN;

        ck_assert_int_eq(unit_machine_next(s, UNIT_EVENT_THAW, &s), 0);
        ck_assert_int_eq(unit_machine_next(s, UNIT_EVENT_WINDOW_END, &s), 0);
        ck_assert_int_eq(s, UNIT_FREEZING);
        ck_assert_int_eq(unit_machine_next(s, UNIT_EVENT_TAKE_BACK, &s), 0);
        ck_assert_int_eq(s, UNIT_THAWED);
        ck_assert_int_eq(unit_machine_next(s, UNIT_EVENT_WINDOW_END, &s), 0);
        ck_assert_int_eq(unit_machine_next(s, UNIT_EVENT_FROZEN, &s), 0);
        ck_assert_int_eq(unit_machine_next(s, UNIT_EVENT_LOCK_HOLDER, &s), 0);
        ck_assert_int_eq(s, UNIT_LOCKHOLDER);
        /* A lock holder stays running until exit: no event takes it. */
        ck_assert_int_eq(unit_machine_next(s, UNIT_EVENT_THAW, &s), -EINVAL);
        ck_assert_int_eq(unit_machine_next(s, UNIT_EVENT_WINDOW_END, &s), -EINVAL);
        for (UnitEvent e = 0; e < _UNIT_EVENT_MAX; e++)
                ck_assert(!unit_machine_allows(UNIT_SLACKED, e));
        /* Only frozen and freezing keep its tasks from running. */
        for (size_t i = 0; i < ELEMENTSOF(states); i++)
                ck_assert_int_eq(unit_machine_stopped(states[i]),
                                 states[i] == UNIT_FROZEN || states[i] == UNIT_FREEZING);
}
END_TEST

/* docs/design.md prints the code's table, as the code prints it. */
START_TEST(test_machine_in_design_doc) {
        _cleanup_free_ char *doc = NULL, *table = NULL;

        /* The tests run from the top of the source tree (tests/run-tests.sh). */
        ck_assert_int_eq(read_full_fileat(AT_FDCWD, "docs/design.md", &doc, NULL), 0);
        ck_assert_int_eq(unit_machine_format(&table), 0);
        ck_assert_msg(strstr(doc, table), "docs/design.md does not show the table of listener/unit-machine.c:\n%s",
                      table);
}
END_TEST

/* A manager over a journal in phase active (and the directory state_fd,
 * where saves go) with one unit in state, or none for UNIT_NONE. */
static void manager_with_unit(Manager *m, int state_fd, const char *cgroup, UnitState state, usec_t thaw_until) {
        *m = (Manager) { .root_fd = -EBADF, .state_fd = state_fd, .lock_fd = -EBADF, .journal = journal_new() };
        ck_assert_ptr_nonnull(m->journal);
        m->journal->phase = JOURNAL_ACTIVE;
        if (state == UNIT_NONE)
                return;
        ck_assert_int_ge(journal_add_unit(m->journal, cgroup, state, NULL), 0);
        journal_find_unit(m->journal, cgroup)->thaw_until = thaw_until;
}

/* The state of cgroup in m's journal, UNIT_NONE if it lists none. */
static UnitState state_in(Manager *m, const char *cgroup) {
        JournalUnit *u = journal_find_unit(m->journal, cgroup);
        return u ? u->state : UNIT_NONE;
}

/* window-end is the engine's move (freeze_refreeze_begin()): it moves a
 * unit from exactly the states the table says, to the state it says. */
START_TEST(test_machine_engine_window_end) {
        char dir[] = "/tmp/standby-unit-machine.XXXXXX";
        const usec_t deadline = 12345;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(dfd, 0);
        for (size_t i = 0; i < ELEMENTSOF(states); i++) {
                char *leaves[] = { (char *) "a.slice/x.service", NULL };
                _cleanup_strv_free_ char **due = NULL;
                Manager m;

                manager_with_unit(&m, dfd, leaves[0], states[i], deadline);
                int r = freeze_refreeze_begin(&m, leaves, deadline, &due);
                ck_assert_int_ge(r, 0);
                ck_assert_msg((r == 1) == unit_machine_allows(states[i], UNIT_EVENT_WINDOW_END),
                              "freeze_refreeze_begin() and the table disagree on %s",
                              unit_machine_state_to_string(states[i]));
                ck_assert_int_eq(state_in(&m, leaves[0]),
                                 r == 1 ? unit_machine_target(UNIT_EVENT_WINDOW_END) : states[i]);
                journal_free(m.journal);
        }
        (void) unlinkat(dfd, JOURNAL_FILE, 0);
        ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* hold is the engine's too (freeze_hold()): it holds a cgroup in exactly
 * the states the table says, recorded freezing (or frozen at once, the
 * kernel's word); any other unit of that name is left as it is. */
START_TEST(test_machine_engine_hold) {
        _cleanup_close_ int dfd = -EBADF;
        const char *cg = test_cgpath("held.service");

        if (!test_need_root_cgroup2())
                return;
        ck_assert_int_ge(journal_dir_open(T.state_dir, true, &dfd), 0);
        for (size_t i = 0; i < ELEMENTSOF(states); i++) {
                _cleanup_close_ int fd = test_cgroup("held.service");
                UnitState frozen;
                Manager m;

                manager_with_unit(&m, dfd, cg, states[i], 0);
                m.root_fd = T.root_fd;
                int r = freeze_hold(&m, cg, fd);
                ck_assert_int_ge(r, 0);
                ck_assert_msg((r == 1) == unit_machine_allows(states[i], UNIT_EVENT_HOLD),
                              "freeze_hold() and the table disagree on %s", unit_machine_state_to_string(states[i]));
                if (r == 1) {
                        ck_assert_int_eq(unit_machine_next(unit_machine_target(UNIT_EVENT_HOLD), UNIT_EVENT_FROZEN,
                                                           &frozen),
                                         0);
                        ck_assert(state_in(&m, cg) == unit_machine_target(UNIT_EVENT_HOLD) ||
                                  state_in(&m, cg) == frozen);
                } else
                        ck_assert_int_eq(state_in(&m, cg), states[i]);
                ck_assert_int_ge(cgroup_set_freeze(fd, false), 0);
                journal_free(m.journal);
        }
}
END_TEST

static unsigned n_released;

static void on_released(void *userdata, const char *cgroup) {
        ck_assert_ptr_eq(userdata, &n_released);
        n_released++;
}

/* The listener's copy of one unit, standing for what the journal says. */
static CachedUnit *cache_one(Listener *l, const char *sub, UnitState state) {
        listener_cache_refresh(l); /* no journal: empties the cache */
        free(l->cache);
        l->cache = calloc(1, sizeof(CachedUnit));
        ck_assert_ptr_nonnull(l->cache);
        l->cache[0] =
                (CachedUnit){ .cgroup = strdup(test_cgpath(sub)), .state = state, .fd = -EBADF, .freeze_fd = -EBADF };
        l->n_cache = 1;
        return &l->cache[0];
}

static void freeze(const char *sub) {
        _cleanup_close_ int fd = test_cgroup(sub);
        ck_assert_int_ge(cgroup_set_freeze(fd, true), 0);
        ck_assert_int_eq(cgroup_wait_frozen(&fd, 1, true, now_usec(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC, NULL), 0);
}

static bool thawed(const char *sub) {
        _cleanup_close_ int fd = test_cgroup(sub);
        return cgroup_wait_frozen(&fd, 1, false, now_usec(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC, NULL) == 0;
}

/* unit-state.c moves its copy of a unit as the table says, and writes the
 * kernel's cgroup.freeze only for a move: a frozen unit is thawed for its
 * window, an event inside it coalesces, one after it thaws again; a unit
 * left running by its refreeze is no event's; one freezing again under the
 * listener's own refreeze is taken back from it, the refreeze told once. */
START_TEST(test_unit_thaw_moves_through_table) {
        Listener l = { .m.root_fd = -EBADF };
        const char *cg = test_cgpath("mail.service");
        usec_t now = now_usec(CLOCK_MONOTONIC);
        CachedUnit *c;

        if (!test_need_root_cgroup2())
                return;
        l.m.root_fd = T.root_fd;
        test_spawn_workload("mail.service", "idle", 100, 1, NULL);

        freeze("mail.service");
        c = cache_one(&l, "mail.service", UNIT_FROZEN);
        ck_assert_int_eq(listener_unit_thaw(&l, cg, now, now + USEC_PER_SEC), 1);
        ck_assert_int_eq(c->state, UNIT_THAWED);
        ck_assert_uint_eq(c->thaw_until, now + USEC_PER_SEC);
        ck_assert(thawed("mail.service"));

        /* Inside its window: coalesced, nothing written (frozen meanwhile, it stays so). */
        freeze("mail.service");
        ck_assert_int_eq(listener_unit_thaw(&l, cg, now + 1, now + 2 * USEC_PER_SEC), 0);
        ck_assert(test_frozen("mail.service"));
        ck_assert_uint_eq(c->thaw_until, now + USEC_PER_SEC);
        /* After it: thawed again, for the new window. */
        ck_assert_int_eq(listener_unit_thaw(&l, cg, now + USEC_PER_SEC, now + 3 * USEC_PER_SEC), 1);
        ck_assert_int_eq(c->state, UNIT_THAWED);
        ck_assert(thawed("mail.service"));

        /* Skipped (left running by a refreeze): no event's to thaw. */
        freeze("mail.service");
        c->state = UNIT_SKIPPED;
        ck_assert_int_eq(listener_unit_thaw(&l, cg, now, now + USEC_PER_SEC), 0);
        ck_assert_int_eq(c->state, UNIT_SKIPPED);
        ck_assert(test_frozen("mail.service"));

        /* Freezing by an enter or a hold: not the listener's either. */
        c->state = UNIT_FREEZING;
        ck_assert_int_eq(listener_unit_thaw(&l, cg, now, now + USEC_PER_SEC), 0);
        ck_assert_int_eq(c->state, UNIT_FREEZING);
        ck_assert(test_frozen("mail.service"));

        /* Freezing under the listener's refreeze: taken back, the refreeze told once. */
        n_released = 0;
        ck_assert_int_ge(listener_unit_refreezing(&l, cg, on_released, &n_released), 0);
        ck_assert_int_eq(listener_unit_thaw(&l, cg, now, now + USEC_PER_SEC), 1);
        ck_assert_uint_eq(n_released, 1);
        ck_assert_uint_eq(l.n_refreezing, 0);
        ck_assert_int_eq(c->state, UNIT_THAWED);
        ck_assert(thawed("mail.service"));

        listener_unit_states_free(&l);
        ck_assert_ptr_null(l.cache);
}
END_TEST

Suite *unit_machine_suite(void) {
        Suite *s = suite_create("unit-machine");
        TCase *tc = tcase_create("table");

        tcase_add_test(tc, test_machine_moves);
        tcase_add_test(tc, test_machine_refuses_nonsense);
        tcase_add_test(tc, test_machine_journal_masks);
        tcase_add_test(tc, test_machine_event_thaws);
        tcase_add_test(tc, test_machine_window_paths);
        tcase_add_test(tc, test_machine_in_design_doc);
        tcase_add_test(tc, test_machine_engine_window_end);
        suite_add_tcase(s, tc);
        tc = test_kernel_tcase(s, "unit-state", 30);
        tcase_add_test(tc, test_machine_engine_hold);
        tcase_add_test(tc, test_unit_thaw_moves_through_table);
        return s;
}
