/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* New work started during standby is held: a new cgroup, a restarted
 * unit, a new slice, with the journal locked, within a budget per user;
 * exempt and the listener's own units are spared. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "fileio.h"
#include "listener-harness.h"
#include "manager.h"
#include "test-util.h"

/* A child that joins cg (frozen there if cg is) and then writes a byte on
 * the pipe it returns, once and exits, or every 10 ms until killed. */
static pid_t fork_writer(int cg, bool ticking, int *ret_fd) {
        int p[2];

        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                close(p[0]);
                if (cgroup_attach(cg, getpid()) < 0)
                        _exit(127);
                do {
                        (void) !write(p[1], "t", 1);
                        (void) poll(NULL, 0, 10);
                } while (ticking);
                _exit(0);
        }
        close(p[1]);
        *ret_fd = p[0];
        return pid;
}

static bool cgroup_populated(void *userdata) {
        bool frozen = false, populated = false;
        return cgroup_get_frozen(*(int *) userdata, &frozen, &populated) >= 0 && populated;
}

/* Work started during standby is held: a cgroup made below the target is
 * frozen while still empty, a process moved into it then never returns to
 * user space (its first write never comes) until exit thaws it; the
 * journal names it. */
START_TEST(test_hold_new_cgroup) {
        _cleanup_close_ int cg = -EBADF;
        int p[2], status;
        char c;
        pid_t pid;
        sd_bus *bus;

        if (!test_need_root_cgroup2())
                return;
        bus = standby_with_idle_mail();
        /* Answered after the journal change: the watch is up. */
        ck_assert_uint_eq(statistic(bus, "held"), 0);
        cg = test_cgroup("timer-job.service");
        ck_assert_msg(wait_frozen("timer-job.service", true), "a unit started during standby was not held");
        ck_assert_msg(wait_journal_state("timer-job.service", UNIT_FROZEN, 10 * USEC_PER_SEC),
                      "a held unit is not in the journal as frozen");
        ck_assert_uint_eq(statistic(bus, "held"), 1);

        pid = fork_writer(cg, false, &p[0]);
        ck_assert(test_wait_for(cgroup_populated, &cg, 10 * USEC_PER_SEC));
        /* Attached, and frozen before its write: nothing came. The kernel
         * calls the cgroup frozen again only once the new task has stopped
         * in the freezer, which under load takes a while. */
        ck_assert(wait_frozen("timer-job.service", true));
        ck_assert_int_eq(test_pending(p[0]), 0);

        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        struct pollfd pf = { .fd = p[0], .events = POLLIN };
        ck_assert_int_eq(poll(&pf, 1, 10000), 1);
        ck_assert_int_eq(read(p[0], &c, 1), 1);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        close(p[0]);
        ck_assert(!test_anything_frozen());
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* A unit restarted during standby (its cgroup removed, one of the same
 * name made again, and held) is the same unit: its rule's event thaws the
 * new instance, not the cgroup the listener had open. */
START_TEST(test_hold_restarted_wakes) {
        int acted, tick;

        if (!test_need_root_cgroup2())
                return;
        write_rule("50-news.rule", "[Match]\nEvent=push\nUnit=news.service\n[Action]\nThaw=news.service\n");
        pid_t pid = test_spawn_workload("news.service", "idle", 100, 1, NULL);
        sd_bus *bus = standby_with_idle_mail();
        ck_assert_int_eq(journal_state_of("news.service"), UNIT_FROZEN);
        (void) statistic(bus, "events"); /* the journal change is taken before a call */

        kill_and_remove(pid, "news.service"); /* stopped while frozen */

        /* Started again: its cgroup held as new work (recorded frozen), and
         * its process, which ticks every 10 ms, frozen as it joins. */
        _cleanup_close_ int cg = test_cgroup("news.service");
        ck_assert_msg(wait_frozen("news.service", true), "the restarted unit was not held");
        ck_assert_msg(wait_journal_state("news.service", UNIT_FROZEN, 10 * USEC_PER_SEC),
                      "the restarted unit is not in the journal as frozen");
        (void) statistic(bus, "events");
        pid = fork_writer(cg, true, &tick);
        ck_assert(test_wait_for(cgroup_populated, &cg, 10 * USEC_PER_SEC));
        ck_assert(wait_frozen("news.service", true));
        test_drain(tick);

        ck_assert_ptr_null(push(bus, "news.service", &acted));
        ck_assert_int_eq(acted, 1);
        ck_assert_msg(!test_frozen("news.service"), "the push left the restarted unit frozen");
        ck_assert_int_eq(test_ticks(tick, 3, 5 * USEC_PER_SEC), 3);
        ck_assert_uint_eq(statistic(bus, "thaw_failures"), 0);

        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
        ck_assert_int_eq(kill(pid, SIGKILL), 0);
        ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
        close(tick);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* A slice made during standby is where units go: watched, not held; the
 * unit made in it right after is held (even when made before the slice's
 * watch was added). */
START_TEST(test_hold_in_new_slice) {
        _cleanup_close_ int slice = -EBADF, job = -EBADF;
        sd_bus *bus;

        if (!test_need_root_cgroup2())
                return;
        bus = standby_with_idle_mail();
        ck_assert_uint_eq(statistic(bus, "held"), 0);
        slice = test_cgroup("late.slice");
        job = test_cgroup("late.slice/job.service");
        ck_assert_msg(wait_frozen("late.slice/job.service", true), "a unit made in a new slice was not held");
        /* Counted in the same turn of the listener's loop as the freeze,
         * which wait_frozen() saw land. */
        ck_assert_msg(statistic(bus, "held") >= 1, "the listener did not count it held");
        ck_assert_msg(!test_frozen("late.slice"), "the new slice itself was frozen");
        ck_assert_int_eq(journal_state_of("late.slice"), -1);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* While a manager verb holds the journal's lock, the listener does not
 * wait for it: a new unit is frozen at once, and recorded once the lock is
 * free. */
START_TEST(test_hold_with_journal_locked) {
        _cleanup_close_ int cg = -EBADF, lock = -EBADF;
        char path[512];
        sd_bus *bus;

        if (!test_need_root_cgroup2())
                return;
        bus = standby_with_idle_mail();
        ck_assert_uint_eq(statistic(bus, "held"), 0);
        snprintf(path, sizeof(path), "%s/" JOURNAL_LOCK_FILE, T.state_dir);
        lock = open(path, O_RDWR | O_CLOEXEC);
        ck_assert_int_ge(lock, 0);
        ck_assert_int_eq(flock(lock, LOCK_EX), 0);
        cg = test_cgroup("locked-out.service");
        ck_assert_msg(wait_frozen("locked-out.service", true), "not held while the journal was locked");
        ck_assert_int_eq(journal_state_of("locked-out.service"), -1);
        /* The listener answers meanwhile; then the lock goes. */
        ck_assert_uint_ge(statistic(bus, "journal_busy"), 1);
        lock = safe_close(lock);
        ck_assert_msg(wait_journal_state("locked-out.service", UNIT_FROZEN, 10 * USEC_PER_SEC),
                      "not recorded once the lock was free");
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* The user of the hold-budget test: a chain of HOLD_DEPTH slices of
 * 255-byte names and HOLD_LEAVES units at its bottom, 1 KiB each once
 * escaped (spaces take four bytes in the journal), made as uid 65534 in
 * the slice fd, delegated to it. */
#define HOLD_DEPTH 60
#define HOLD_LEAVES 24

static void hold_name(char *buf, bool slice, int i) {
        if (slice) {
                memset(buf, ' ', NAME_MAX - 6);
                strcpy(buf + NAME_MAX - 6, ".slice");
        } else {
                memset(buf, ' ', NAME_MAX - 11);
                snprintf(buf + NAME_MAX - 11, 12, "%03d.service", i);
        }
}

/* The chain's bottom below fd, opened (a path longer than PATH_MAX). */
static int hold_bottom(int fd) {
        char name[NAME_MAX + 1];
        int d = fcntl(fd, F_DUPFD_CLOEXEC, 3);

        hold_name(name, true, 0);
        for (int k = 0; k < HOLD_DEPTH && d >= 0; k++) {
                int n = openat(d, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                close(d);
                d = n;
        }
        return d;
}

typedef struct HoldSeen {
        sd_bus *bus;
        uint64_t want;
} HoldSeen;

static bool hold_seen(void *userdata) {
        HoldSeen *h = userdata;
        return statistic(h->bus, "held") + statistic(h->bus, "not_held") >= h->want;
}

/* A user's cgroups made during standby cannot fill the journal: they are
 * held up to their owner's share of it (JOURNAL_HELD_UID_BUDGET), the rest
 * left running and counted; root's new unit is held all the same, the
 * journal stays readable (status), a rule still thaws, exit thaws all. */
START_TEST(test_hold_budget_per_user) {
        _cleanup_close_ int slice = -EBADF, bottom = -EBADF;
        _cleanup_free_ char *path = NULL, *err = NULL;
        char name[NAME_MAX + 1];
        size_t len = 0;
        int status, acted = 0;
        sd_bus *bus;

        if (!test_need_root_cgroup2())
                return;
        bus = standby_with_idle_mail();
        slice = test_cgroup("user-65534.slice");
        ck_assert_int_eq(fchown(slice, 65534, 65534), 0);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                        _exit(2);
                int d = fcntl(slice, F_DUPFD_CLOEXEC, 3);
                hold_name(name, true, 0);
                for (int k = 0; k < HOLD_DEPTH; k++) {
                        if (mkdirat(d, name, 0755) < 0)
                                _exit(3);
                        int n = openat(d, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                        close(d);
                        if ((d = n) < 0)
                                _exit(4);
                }
                for (int i = 0; i < HOLD_LEAVES; i++) {
                        hold_name(name, false, i);
                        if (mkdirat(d, name, 0755) < 0)
                                _exit(5);
                }
                _exit(0);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the user's mkdirs: wait status 0x%x", status);
        /* The mkdirs are done: their events are pending in the listener
         * before these calls are, and taken first (the watch's priority). */
        ck_assert_msg(test_wait_for(hold_seen, &(HoldSeen) { bus, HOLD_LEAVES }, 20 * USEC_PER_SEC),
                      "the listener did not see the user's %d units", HOLD_LEAVES);

        /* Every leaf's journal line is as long: so many fit the share. */
        path = malloc(strlen(T.base) + (HOLD_DEPTH + 2) * (NAME_MAX + 1) + 32);
        ck_assert_ptr_nonnull(path);
        len = (size_t) sprintf(path, "%s/user-65534.slice", T.base);
        hold_name(name, true, 0);
        for (int k = 0; k < HOLD_DEPTH; k++)
                len += (size_t) sprintf(path + len, "/%s", name);
        hold_name(name, false, 0);
        sprintf(path + len, "/%s", name);
        size_t line = JOURNAL_HELD_LINE_SIZE(path), fit = JOURNAL_HELD_UID_BUDGET / line;
        ck_assert_uint_lt(fit, HOLD_LEAVES);
        ck_assert_uint_gt(fit, 0);

        bottom = hold_bottom(slice);
        ck_assert_int_ge(bottom, 0);
        size_t frozen = 0;
        for (int i = 0; i < HOLD_LEAVES; i++) {
                _cleanup_close_ int leaf = -EBADF;
                uint64_t f = 0;
                hold_name(name, false, i);
                leaf = openat(bottom, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                ck_assert_int_ge(leaf, 0);
                ck_assert_int_eq(read_u64at(leaf, "cgroup.freeze", &f), 0);
                frozen += f == 1;
        }
        ck_assert_msg(frozen == fit, "%zu of the user's %d units held, %zu fit its share", frozen, HOLD_LEAVES, fit);
        /* Counted each time a walk meets one again. */
        ck_assert_uint_ge(statistic(bus, "not_held"), HOLD_LEAVES - fit);

        /* Root's new unit is not kept out by the user's. */
        _cleanup_close_ int late = test_cgroup("late.service");
        ck_assert_msg(wait_frozen("late.service", true), "root's unit was not held after the user's share ran out");
        ck_assert(wait_journal_state("late.service", UNIT_FROZEN, 10 * USEC_PER_SEC));

        ck_assert_msg(test_manager(&err, "--quiet", "status", NULL) == EXIT_OK, "status: %s", err);
        ck_assert_ptr_null(push(bus, "mail.service", &acted));
        ck_assert(acted);
        ck_assert(wait_frozen("mail.service", false));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* Not held: an exempt unit, and units made below one the journal names (a
 * frozen unit's child is frozen by the kernel, a thawed one's is its
 * window's); shown by the listener's count of what it left running. A
 * user's unit named as one of standby's own, in a tree of its own, is
 * held. */
START_TEST(test_hold_spares_exempt) {
        int tick;
        sd_bus *bus;

        if (!test_need_root_cgroup2())
                return;
        test_write_config("Exempt=free.service\n");
        bus = standby_with_idle_mail();
        ck_assert_uint_eq(statistic(bus, "not_held"), 0);
        test_spawn_workload("free.service", "nanosleep", 5, 1, &tick);
        /* The cgroup's creation is pending in the listener before this
         * call is, and taken first (its watch's priority). */
        ck_assert_msg(statistic(bus, "not_held") >= 1, "the listener never saw the exempt unit");
        ck_assert_int_eq(test_ticks(tick, 3, 10 * USEC_PER_SEC), 3);
        ck_assert(!test_frozen("free.service"));
        ck_assert_uint_eq(statistic(bus, "held"), 0);
        _cleanup_close_ int own = test_cgroup("user-1000.slice/app.slice/standby-enter.service");
        ck_assert_msg(wait_frozen("user-1000.slice/app.slice/standby-enter.service", true),
                      "a user's unit named standby-enter.service was not held");
        ck_assert_uint_ge(statistic(bus, "held"), 1);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* standby's own units are spared by where the system manager puts them
 * (its exit runs in standby-enter.service's cgroup made anew in standby),
 * not by their name: a user names units of their own anything. */
START_TEST(test_hold_own_units_by_place) {
        _cleanup_(config_freep) Config *c = NULL;
        Manager m = {};

        ck_assert_int_eq(config_new_default(&c), 0);
        m.config = c;
        ck_assert(!select_may_hold(&m, NULL, "system.slice/standby-enter.service"));
        ck_assert(!select_may_hold(&m, NULL, "system.slice/standby-leave.service"));
        ck_assert(!select_may_hold(&m, NULL, "system.slice/standby-listener.service/sub"));
        ck_assert(select_may_hold(&m, NULL, "user.slice/user-1000.slice/user@1000.service/app.slice/standby-enter.service"));
        ck_assert(select_may_hold(&m, NULL, "user.slice/user-1000.slice/user@1000.service/system.slice/standby-leave.service"));
        ck_assert(select_may_hold(&m, NULL, "system.slice/standby-enter.service-x"));
}
END_TEST

void listener_hold_tests(const ListenerCases *c) {
        tcase_add_test(c->hold, test_hold_new_cgroup);
        tcase_add_test(c->hold, test_hold_restarted_wakes);
        tcase_add_test(c->hold, test_hold_spares_exempt);
        tcase_add_test(c->hold, test_hold_own_units_by_place);
        tcase_add_test(c->hold, test_hold_in_new_slice);
        tcase_add_test(c->hold, test_hold_with_journal_locked);
        tcase_add_test(c->hold, test_hold_budget_per_user);
}
