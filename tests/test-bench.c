/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The harness's arithmetic, that each workload wakes the way it claims, and
 * that the bare thawer (the listener bench's floor) thaws on its event only. */
#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <systemd/sd-bus.h>

#include "../bench/bench.h"
#include "cgroup.h"
#include "fileio.h"
#include "macro.h"
#include "proc.h"
#include "test-util.h"

START_TEST(test_percentiles) {
        double v[] = { 5, 1, 4, 2, 3 };
        ck_assert_double_eq(stats_median(v, 5), 3);
        ck_assert_double_eq(stats_percentile(v, 5, 0), 1);
        ck_assert_double_eq(stats_percentile(v, 5, 100), 5);
        ck_assert_double_eq_tol(stats_percentile(v, 5, 99), 4.96, 1e-9);
        ck_assert_double_eq_tol(stats_percentile(v, 5, 25), 2, 1e-9);
        double even[] = { 10, 20, 30, 40 };
        ck_assert_double_eq(stats_median(even, 4), 25);
        double one[] = { 7 };
        ck_assert_double_eq(stats_percentile(one, 1, 99), 7);
        ck_assert(isnan(stats_median(NULL, 0)));
        ck_assert_double_eq(stats_min(even, 4), 10);
        ck_assert_double_eq(stats_max(even, 4), 40);

        /* Percentiles leave the samples in the order taken (they are pairs
         * and CSV rows); the plots sort explicitly, or their CDFs zigzag. */
        ck_assert(v[0] == 5 && v[1] == 1 && v[4] == 3);
        stats_sort(v, 5);
        for (size_t i = 0; i < 5; i++)
                ck_assert_double_eq(v[i], (double) (i + 1));
}
END_TEST

START_TEST(test_rates) {
        ck_assert_double_eq(stats_rate(100, 300, 2 * USEC_PER_SEC), 100);
        ck_assert_double_eq(stats_rate(0, 5, 500 * USEC_PER_MSEC), 10);
        ck_assert(isnan(stats_rate(5, 4, USEC_PER_SEC)));
        ck_assert(isnan(stats_rate(0, 4, 0)));
}
END_TEST

/* A 20 ms timer workload is switched in about 50 times a second (the
 * counting the bench relies on), and an idle one not at all. */
START_TEST(test_workload_wakes_as_claimed) {
        static const char * const kinds[] = { "nanosleep", "poll", "select", "epoll", "timerfd", "posix-timer", "futex" };
        int fds[ELEMENTSOF(kinds) + 1], ticks[ELEMENTSOF(kinds) + 1];
        uint64_t r0[ELEMENTSOF(kinds) + 1], r1;
        char sub[64];

        if (!test_need_root_cgroup2())
                return;
        for (size_t i = 0; i <= ELEMENTSOF(kinds); i++) {
                const char *k = i < ELEMENTSOF(kinds) ? kinds[i] : "idle";
                snprintf(sub, sizeof(sub), "%s.service", k);
                test_spawn_workload(sub, k, 20, 1, i < ELEMENTSOF(kinds) ? &ticks[i] : NULL);
                fds[i] = test_cgroup(sub);
        }
        /* Settled once every timer workload has ticked. */
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++)
                ck_assert_int_eq(test_ticks(ticks[i], 2, 5 * USEC_PER_SEC), 2);
        for (size_t i = 0; i <= ELEMENTSOF(kinds); i++)
                ck_assert_int_eq(stats_cgroup_schedstat(fds[i], &r0[i], NULL), 0);
        usec_t t0 = now_usec(CLOCK_MONOTONIC);
        /* One second, timed by the timerfd workload's own 50 ticks. */
        ck_assert_int_eq(test_ticks(ticks[4], 50, 5 * USEC_PER_SEC), 50);
        usec_t t1 = now_usec(CLOCK_MONOTONIC);
        for (size_t i = 0; i <= ELEMENTSOF(kinds); i++) {
                ck_assert_int_eq(stats_cgroup_schedstat(fds[i], &r1, NULL), 0);
                double rate = stats_rate(r0[i], r1, t1 - t0);
                if (i == ELEMENTSOF(kinds))
                        ck_assert_msg(rate < 1, "idle workload woke %.1f/s", rate);
                else
                        ck_assert_msg(rate > 35 && rate < 80, "%s: %.1f wakeups/s, expected about 50", kinds[i], rate);
                safe_close(fds[i]);
        }
}
END_TEST

/* The compare mode's event-driven services answer the events they claim
 * to: the power-key handler a KEY_POWER press (not another key, not a
 * release), the link watcher link changes in the network namespace it was
 * put in. */
START_TEST(test_event_workloads_answer) {
        char fifo[4096], nspath[64], *out = NULL;
        int tick, fd;

        if (!test_need_root_cgroup2())
                return;
        ck_assert(mkdir(T.state_dir, 0700) == 0 || errno == EEXIST);
        snprintf(fifo, sizeof(fifo), "%s/power-events", T.state_dir);
        ck_assert_int_eq(mkfifo(fifo, 0600), 0);
        fd = open(fifo, O_RDWR | O_NONBLOCK | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        char *handler[] = { (char *) test_bin("standby-workload"), "input-handler", "--input", fifo, "--tick-fd", "3", NULL };
        test_spawn("input.service", handler, &tick);
        ck_assert_int_eq(test_ticks(tick, 1, 5 * USEC_PER_SEC), 1); /* open */
        struct input_event ev[] = {
                { .type = EV_KEY, .code = KEY_VOLUMEUP, .value = 1 }, { .type = EV_SYN, .code = SYN_REPORT },
                { .type = EV_KEY, .code = KEY_POWER, .value = 0 },    { .type = EV_SYN, .code = SYN_REPORT },
                { .type = EV_KEY, .code = KEY_POWER, .value = 1 },    { .type = EV_SYN, .code = SYN_REPORT },
        };
        ck_assert_int_eq(write(fd, ev, sizeof(ev)), (ssize_t) sizeof(ev));
        ck_assert_int_eq(test_ticks(tick, 1, 5 * USEC_PER_SEC), 1);
        /* The records are handled in order: by the press's tick, the others
         * were handled too, and gave none. */
        char c;
        fcntl(tick, F_SETFL, O_NONBLOCK);
        ck_assert_int_eq(read(tick, &c, 1), -1);
        safe_close(fd);
        (void) unlink(fifo);

        /* A network namespace of this test process's own (it ends with it). */
        int self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC), ns;
        ck_assert_int_ge(self, 0);
        ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
        ns = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(ns, 0);
        ck_assert_int_eq(setns(self, CLONE_NEWNET), 0);
        snprintf(nspath, sizeof(nspath), "/proc/%d/fd/%d", (int) getpid(), ns);
        char *watcher[] = { (char *) test_bin("standby-workload"), "link-watcher", "--netns", nspath, "--tick-fd", "3", NULL };
        test_spawn("link.service", watcher, &tick);
        ck_assert_int_eq(test_ticks(tick, 1, 5 * USEC_PER_SEC), 1); /* subscribed */
        ck_assert_int_eq(setns(ns, CLONE_NEWNET), 0);
        ck_assert_int_eq(test_run_shell("ip link add sbt0 type veth 2>&1", &out), 0);
        free(out);
        ck_assert_int_ge(test_ticks(tick, 1, 5 * USEC_PER_SEC), 1);
        test_drain(tick);
        ck_assert_int_eq(test_run_shell("ip link set sbt0 up 2>&1", &out), 0);
        free(out);
        ck_assert_int_ge(test_ticks(tick, 1, 5 * USEC_PER_SEC), 1);
        ck_assert_int_eq(setns(self, CLONE_NEWNET), 0);
        safe_close(self);
        safe_close(ns);
}
END_TEST

static int on_pong(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        *(int *) userdata = sd_bus_message_is_method_error(m, NULL) ? -1 : 1;
        return 0;
}

/* A private bus for the references' tests, its directory removed by the
 * teardown whatever the test did. */
static char ref_bus_dir[128], ref_bus_address[256];
static pid_t ref_bus_pid;

static void bus_setup(void) {
        snprintf(ref_bus_dir, sizeof(ref_bus_dir), "/tmp/standby-bench-test.%s.%d", test_runner_id(), (int) getpid());
        ck_assert(mkdir(ref_bus_dir, 0700) == 0 || errno == EEXIST);
        ref_bus_pid = test_start_dbus(ref_bus_dir, ref_bus_address, sizeof(ref_bus_address));
}

static void bus_teardown(void) {
        char cmd[200];

        test_stop_pid(ref_bus_pid);
        ref_bus_pid = 0;
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", ref_bus_dir);
        (void) !system(cmd);
}

/* The bare thawer sleeps in epoll_wait (or, the push thawer, in sd-bus's
 * ppoll), its wait for an event: not yet woken by one (after one it blocks
 * reading its arm pipe). */
static bool thawer_waits_for_event(void *userdata) {
        _cleanup_free_ char *wchan = NULL;
        ProcStat st;
        pid_t pid = *(pid_t *) userdata;

        return proc_get_stat(pid, &st) >= 0 && st.state == 'S' && proc_get_wchan(pid, &wchan) >= 0 &&
               strstr(wchan, "poll");
}

/* bus-service as unit on the references' bus, owning name (and alias on a
 * second connection, if not NULL); returns once it owns them. */
static void spawn_bus_service(const char *unit, const char *name, const char *alias) {
        char *argv[] = { (char *) test_bin("standby-workload"), "bus-service", "--bus-address", ref_bus_address,
                         "--bus-name", (char *) name, "--tick-fd", "3", alias ? "--bus-alias" : NULL,
                         (char *) alias, NULL };
        int tick;

        test_spawn(unit, argv, &tick);
        ck_assert_msg(test_ticks(tick, 1, 10 * USEC_PER_SEC) == 1, "bus-service did not start");
}

/* After the case, in the runner: what a failed test left (its bus was
 * killed with its process group; a failed assertion skips the teardown). */
static void bus_sweep(void) {
        char cmd[200];
        snprintf(cmd, sizeof(cmd), "rm -rf /tmp/standby-bench-test.%s.*", test_runner_id());
        (void) !system(cmd);
}

/* The bare thawer in its D-Bus mode thaws a frozen service on a call to the
 * service's name, and only then: calls its monitor saw while disarmed are
 * not the event (a thawer that took them for it would thaw before the bench
 * had called, and the floor would read 18 us). */
START_TEST(test_bare_thawer_dbus) {
        char *address = ref_bus_address;
        BareThawer t;
        int answered = 0;

        if (!test_need_root_cgroup2())
                return;
        spawn_bus_service("ref.service", "org.example.Reference", NULL);
        int cg = test_cgroup("ref.service");
        ck_assert_int_ge(bare_thawer_start(&t, cg, &(BareTarget) { .bus_address = address,
                                                                    .bus_name = "org.example.Reference" }), 0);

        sd_bus *bus = test_bus_client(address);
        /* Two calls while the thawer is disarmed and the service runs. */
        for (int i = 0; i < 2; i++)
                ck_assert_int_ge(sd_bus_call_method(bus, "org.example.Reference", "/org/standby/Bench",
                                                    "org.standby.Bench", "Ping", NULL, NULL, ""), 0);

        ck_assert_int_eq(cgroup_set_freeze(cg, true), 0);
        ck_assert_int_eq(cgroup_wait_frozen(&cg, 1, true, now_usec(CLOCK_MONOTONIC) + 5 * USEC_PER_SEC, NULL), 0);
        ck_assert_int_eq(bare_thawer_arm(&t), 0);
        /* Armed, it does not act on them. Their copies reached its monitor
         * before the replies reached us (the bus routes a call to monitors
         * first), so an arm that kept one would return from epoll_wait at
         * once, thaw, and block reading its arm pipe; it sleeps in epoll
         * instead, and the service stays frozen. */
        ck_assert(test_wait_for(thawer_waits_for_event, &t.pid, 5 * USEC_PER_SEC));
        ck_assert(test_frozen("ref.service"));

        /* A call is the event: the service thaws and answers. */
        ck_assert_int_ge(sd_bus_call_method_async(bus, NULL, "org.example.Reference", "/org/standby/Bench",
                                                  "org.standby.Bench", "Ping", on_pong, &answered, ""), 0);
        ck_assert(test_bus_wait_answered(bus, &answered, 5 * USEC_PER_SEC));
        ck_assert_int_eq(answered, 1);
        ck_assert(!test_frozen("ref.service"));

        bare_thawer_stop(&t);
        sd_bus_flush_close_unref(bus);
        safe_close(cg);
}
END_TEST

static int on_pushed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        int b = 0;
        *(int *) userdata = sd_bus_message_is_method_error(m, NULL) || sd_bus_message_read(m, "b", &b) <= 0 ? -1 : 1 + b;
        return 0;
}

static uint32_t owner_pid(sd_bus *bus, const char *name) {
        sd_bus_message *reply = NULL;
        uint32_t pid = 0;

        ck_assert_int_ge(sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                            "GetConnectionUnixProcessID", NULL, &reply, "s", name),
                         0);
        ck_assert_int_gt(sd_bus_message_read(reply, "u", &pid), 0);
        sd_bus_message_unref(reply);
        return pid;
}

static char *name_owner(sd_bus *bus, const char *name) {
        sd_bus_message *reply = NULL;
        const char *owner;
        char *s = NULL;

        if (sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               "GetNameOwner", NULL, &reply, "s", name) >= 0 &&
            sd_bus_message_read(reply, "s", &owner) > 0)
                s = strdup(owner);
        sd_bus_message_unref(reply);
        return s;
}

/* The listener bench's same-service references. bus-service's --bus-alias
 * is a second name of the same process on a second connection (a monitor
 * of calls to the first name would see calls to any name of the first's
 * connection). The push thawer, armed, thaws the frozen service on a Push
 * to its own name and answers true, as the listener's Push does; before
 * that call it waits and the service stays frozen. */
START_TEST(test_bare_thawer_push) {
        char *address = ref_bus_address;
        BareThawer t;
        int answered = 0;

        if (!test_need_root_cgroup2())
                return;
        spawn_bus_service("push.service", "org.example.Service", "org.example.Alias");

        sd_bus *bus = test_bus_client(address);
        _cleanup_free_ char *owner = name_owner(bus, "org.example.Service"), *alias_owner = name_owner(bus, "org.example.Alias");
        ck_assert_ptr_nonnull(owner);
        ck_assert_ptr_nonnull(alias_owner);
        ck_assert_str_ne(owner, alias_owner);
        ck_assert_int_eq(owner_pid(bus, owner), owner_pid(bus, alias_owner));

        int cg = test_cgroup("push.service");
        ck_assert_int_ge(bare_thawer_start(&t, cg, &(BareTarget) { .bus_address = address,
                                                                    .push_name = "org.example.BarePush" }), 0);
        ck_assert_int_eq(cgroup_set_freeze(cg, true), 0);
        ck_assert_int_eq(cgroup_wait_frozen(&cg, 1, true, now_usec(CLOCK_MONOTONIC) + 5 * USEC_PER_SEC, NULL), 0);
        ck_assert_int_eq(bare_thawer_arm(&t), 0);
        ck_assert(test_wait_for(thawer_waits_for_event, &t.pid, 5 * USEC_PER_SEC));
        ck_assert(test_frozen("push.service"));

        ck_assert_int_ge(sd_bus_call_method_async(bus, NULL, "org.example.BarePush", "/org/standby/Listener1",
                                                  "org.standby.Listener1", "Push", on_pushed, &answered, "ss",
                                                  "push.service", "test"),
                         0);
        ck_assert(test_bus_wait_answered(bus, &answered, 5 * USEC_PER_SEC));
        ck_assert_int_eq(answered, 2); /* answered true */
        ck_assert(!test_frozen("push.service"));

        bare_thawer_stop(&t);
        sd_bus_flush_close_unref(bus);
        safe_close(cg);
}
END_TEST

static bool thawer_exited(void *userdata) {
        BareThawer *t = userdata;
        int status;

        if (waitpid(t->pid, &status, WNOHANG) != t->pid)
                return false;
        t->pid = 0; /* reaped: nothing left for bare_thawer_stop() to end */
        return WIFEXITED(status) && WEXITSTATUS(status) == 1;
}

/* The checked monitor thawer (the dbus-call same-service reference) thaws
 * on a call the bus delivered to the service's second name, on the second
 * of its bus connections, as in the bench: found unread there. A call the
 * bus's policy refused
 * (tests/data/dbus-test.conf denies the member Refused) reaches its monitor
 * all the same, but not the service: it is no event, and the thawer fails
 * loudly instead of thawing. */
START_TEST(test_bare_thawer_dbus_checked) {
        char *address = ref_bus_address;
        BareThawer t;
        int answered = 0;

        if (!test_need_root_cgroup2())
                return;
        spawn_bus_service("checked.service", "org.example.Checked", "org.example.CheckedAlias");
        sd_bus *bus = test_bus_client(address);
        int cg = test_cgroup("checked.service");
        ck_assert_int_ge(bare_thawer_start(&t, cg, &(BareTarget) { .service = (pid_t) owner_pid(bus, "org.example.Checked"),
                                                                    .bus_address = address,
                                                                    .bus_name = "org.example.CheckedAlias" }), 0);

        ck_assert_int_eq(cgroup_set_freeze(cg, true), 0);
        ck_assert_int_eq(cgroup_wait_frozen(&cg, 1, true, now_usec(CLOCK_MONOTONIC) + 5 * USEC_PER_SEC, NULL), 0);
        ck_assert_int_eq(bare_thawer_arm(&t), 0);
        ck_assert(test_wait_for(thawer_waits_for_event, &t.pid, 5 * USEC_PER_SEC));
        ck_assert_int_ge(sd_bus_call_method_async(bus, NULL, "org.example.CheckedAlias", "/org/standby/Bench",
                                                  "org.standby.Bench", "Ping", on_pong, &answered, ""), 0);
        ck_assert(test_bus_wait_answered(bus, &answered, 5 * USEC_PER_SEC));
        ck_assert_int_eq(answered, 1);
        ck_assert(!test_frozen("checked.service"));

        ck_assert_int_eq(cgroup_set_freeze(cg, true), 0);
        ck_assert_int_eq(cgroup_wait_frozen(&cg, 1, true, now_usec(CLOCK_MONOTONIC) + 5 * USEC_PER_SEC, NULL), 0);
        ck_assert_int_eq(bare_thawer_arm(&t), 0);
        ck_assert(test_wait_for(thawer_waits_for_event, &t.pid, 5 * USEC_PER_SEC));
        sd_bus_error error = SD_BUS_ERROR_NULL;
        ck_assert_int_lt(sd_bus_call_method(bus, "org.example.CheckedAlias", "/org/standby/Bench", "org.standby.Bench",
                                            "Refused", &error, NULL, ""), 0);
        ck_assert_str_eq(error.name, SD_BUS_ERROR_ACCESS_DENIED);
        sd_bus_error_free(&error);
        ck_assert_msg(test_wait_for(thawer_exited, &t, 5 * USEC_PER_SEC),
                      "the checked thawer did not fail on a call the bus refused");
        ck_assert(test_frozen("checked.service"));

        ck_assert_int_eq(cgroup_set_freeze(cg, false), 0);
        bare_thawer_stop(&t);
        sd_bus_flush_close_unref(bus);
        safe_close(cg);
}
END_TEST

/* Runs build/standby-bench (as root, its output in T.state_dir/out) with
 * env before it and args after; returns its exit status and what it wrote
 * to stderr (caller frees). */
static int run_bench(const char *env, const char *args, char **ret_err) {
        _cleanup_free_ char *cmd = NULL, *out = NULL;
        char err[4096];

        ck_assert(mkdir(T.state_dir, 0700) == 0 || errno == EEXIST);
        snprintf(err, sizeof(err), "%s/stderr", T.state_dir);
        ck_assert_int_ge(asprintf(&cmd, "%s %s --manager %s --workload %s --output %s/out %s >%s/stdout 2>%s", env,
                                  test_bin("standby-bench"), test_bin("standby-manager"), test_bin("standby-workload"),
                                  T.state_dir, args, T.state_dir, err),
                         0);
        int status = test_run_shell(cmd, &out);
        ck_assert_int_eq(read_full_fileat(AT_FDCWD, err, ret_err, NULL), 0);
        return status;
}

/* More than 64 workloads, all of one kind: each is measured in a cgroup of
 * its own (10 wakeups/s before, none frozen), and nothing overruns (the
 * ASan build checks). */
START_TEST(test_compare_many_workloads) {
        enum { N = 70 };
        _cleanup_free_ char *list = NULL, *err = NULL, *csv = NULL, *args = NULL;
        char path[4096];
        size_t len = 0;

        if (!test_need_root_cgroup2())
                return;
        FILE *m = open_memstream(&list, &len);
        for (int i = 0; i < N; i++)
                fprintf(m, "%snanosleep", i ? "," : "");
        fclose(m);
        ck_assert_int_ge(asprintf(&args, "--strategies freeze --reps 1 --duration 0.5 --period-ms 100 --events 0 "
                                         "--workloads %s", list),
                         0);
        int status = run_bench("", args, &err);
        ck_assert_msg(status == 0, "standby-bench exited with %d: %s", status, err);

        snprintf(path, sizeof(path), "%s/out/results.csv", T.state_dir);
        ck_assert_int_eq(read_full_fileat(AT_FDCWD, path, &csv, NULL), 0);
        unsigned rows[3] = {}; /* before, standby, after */
        for (char *line = csv; line && *line;) {
                char *nl = strchr(line, '\n'), phase[16];
                double rate, cpu;
                unsigned rep;
                if (nl)
                        *nl = 0;
                if (sscanf(line, "freeze,nanosleep,%u,%15[a-z],%lf,%lf", &rep, phase, &rate, &cpu) == 4) {
                        if (streq(phase, "before")) {
                                /* Its own 10/s, not the 700/s of a cgroup shared by all. */
                                ck_assert_msg(rate > 0 && rate < 40, "before: %.1f wakeups/s", rate);
                                rows[0]++;
                        } else if (streq(phase, "standby")) {
                                ck_assert_msg(rate == 0, "frozen: %.1f wakeups/s", rate);
                                rows[1]++;
                        } else
                                rows[2]++;
                }
                line = nl ? nl + 1 : NULL;
        }
        for (int i = 0; i < 3; i++)
                ck_assert_uint_eq(rows[i], N);
}
END_TEST

/* A daemon among the event workloads that is not installed (not in PATH)
 * fails the run, naming it, before anything starts; its row is not left
 * out in silence. */
START_TEST(test_compare_missing_daemon) {
        _cleanup_free_ char *err = NULL, *env = NULL;
        char dir[2048], link[4096];

        if (!test_need_root_cgroup2())
                return;
        /* A PATH with everything the run uses but redis-server. */
        ck_assert(mkdir(T.state_dir, 0700) == 0 || errno == EEXIST);
        snprintf(dir, sizeof(dir), "%s/bin", T.state_dir);
        ck_assert_int_eq(mkdir(dir, 0700), 0);
        static const char * const programs[] = { "dbus-daemon", "memcached", "gnuplot" };
        for (size_t i = 0; i < ELEMENTSOF(programs); i++) {
                char target[64];
                snprintf(target, sizeof(target), "/usr/bin/%s", programs[i]);
                snprintf(link, sizeof(link), "%s/%s", dir, programs[i]);
                if (access(target, X_OK) == 0)
                        ck_assert_int_eq(symlink(target, link), 0);
        }
        ck_assert_int_ge(asprintf(&env, "PATH=%s", dir), 0);
        int status = run_bench(env, "--strategies freeze --reps 1 --duration 0.2 --workloads nanosleep", &err);
        ck_assert_msg(status != 0, "standby-bench ran without redis-server: %s", err);
        ck_assert_msg(strstr(err, "redis-server is not installed"), "stderr: %s", err);
        ck_assert_msg(!strstr(err, "memcached is not"), "stderr: %s", err);
        free(err);
        err = NULL;

        /* A daemon the bench does not know is a usage error. */
        status = run_bench("", "--daemons redis-server,postgres --workloads nanosleep", &err);
        ck_assert_int_eq(status, 2);
        ck_assert_msg(strstr(err, "unknown daemon \"postgres\""), "stderr: %s", err);
}
END_TEST

/* --self-check that finds the two counts apart fails the run. The
 * workload here ends during the self-check's window, after its wakeups
 * were traced: the kernel's tracepoint has them, and the /proc sum (over
 * the threads there at the end) has lost them with the thread, as it would
 * any workload's that exited while measured. It is alive when the bench
 * lists the threads to trace, and ends once tracing is on (a bounded poll
 * of the tracefs instance's switch: the kernel offers no event for it). */
START_TEST(test_self_check_disagreement_fails) {
        _cleanup_free_ char *err = NULL, *args = NULL, *script = NULL;
        char path[4096];

        if (!test_need_root_cgroup2())
                return;
        ck_assert(mkdir(T.state_dir, 0700) == 0 || errno == EEXIST);
        snprintf(path, sizeof(path), "%s/ending-workload", T.state_dir);
        FILE *f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        /* The bench is its parent; the tracefs instance is named after it. */
        fputs("#!/bin/sh\n"
              "f=/sys/kernel/tracing/instances/standby-bench-$PPID/events/sched/sched_wakeup/enable\n"
              "for i in $(seq 1000); do\n"
              "  [ \"$(cat \"$f\" 2>/dev/null)\" = 1 ] && break\n"
              "  sleep 0.01\n"
              "done\n"
              "for i in $(seq 20); do sleep 0.01; done\n",
              f);
        ck_assert_int_eq(fclose(f), 0);
        ck_assert_int_eq(chmod(path, 0755), 0);
        script = strdup(path);
        ck_assert_int_ge(asprintf(&args, "--self-check --strategies freeze --reps 1 --duration 3 --events 0 "
                                         "--workloads nanosleep --workload %s", script),
                         0);
        /* run_bench's own --workload comes first; this one overrides it. */
        int status = run_bench("", args, &err);
        if (strstr(err, "No tracefs")) {
                (void) test_skip("no tracefs: %s", err);
                return;
        }
        ck_assert_msg(status != 0, "standby-bench passed a self-check that disagreed: %s", err);
        ck_assert_msg(strstr(err, "disagree"), "stderr: %s", err);
        snprintf(path, sizeof(path), "%s/stdout", T.state_dir);
        _cleanup_free_ char *out = NULL;
        ck_assert_int_eq(read_full_fileat(AT_FDCWD, path, &out, NULL), 0);
        ck_assert_msg(strstr(out, "DISAGREE"), "stdout: %s", out);
        /* It stopped there: no comparison was measured. */
        ck_assert_msg(!strstr(out, "Wakeups per second"), "stdout: %s", out);
}
END_TEST

/* Lateness on a grid of 10 s: on time, late, missed, and runs outside the
 * window or between dues left out. */
START_TEST(test_period_lateness) {
        double runs[] = { 175, 141, 100.5, 125, 110, 151.25, 99, 112 };
        double late[16];
        size_t n_late;
        unsigned missed;

        ck_assert_uint_eq(period_lateness(runs, ELEMENTSOF(runs), 10, 10, 100, 160, late, &n_late, &missed), 6);
        ck_assert_uint_eq(missed, 1); /* due at 130: nothing in [130, 140) */
        ck_assert_uint_eq(n_late, 5);
        static const double want[] = { 0.5, 0, 5, 1, 1.25 };
        for (size_t i = 0; i < ELEMENTSOF(want); i++)
                ck_assert_double_eq_tol(late[i], want[i], 1e-9);
        /* A window starting between dues: the first due is the next multiple. */
        ck_assert_uint_eq(period_lateness(runs, ELEMENTSOF(runs), 10, 10, 101, 120, late, &n_late, &missed), 1);
        ck_assert_double_eq_tol(late[0], 0, 1e-9);
        ck_assert_uint_eq(period_lateness(NULL, 0, 60, 60, 0, 120, late, &n_late, &missed), 2);
        ck_assert_uint_eq(missed, 2);
        /* A declared lateness longer than the period: one run serves every
         * due up to it (a 10 s timer run once a minute, allowed 60 s). */
        double minute[] = { 161, 221.5 };
        ck_assert_uint_eq(period_lateness(minute, 2, 10, 60, 100, 220, late, &n_late, &missed), 12);
        ck_assert_uint_eq(missed, 1); /* due at 100: the first run came 61 s after it */
        ck_assert_uint_eq(n_late, 11);
        ck_assert_double_eq_tol(late[0], 51, 1e-9);  /* due at 110, run at 161 */
        ck_assert_double_eq_tol(late[10], 11.5, 1e-9); /* due at 210, run at 221.5 */
        /* One shorter than the period: a run later than it misses. */
        ck_assert_uint_eq(period_lateness(runs, ELEMENTSOF(runs), 10, 2, 100, 160, late, &n_late, &missed), 6);
        ck_assert_uint_eq(missed, 2); /* due at 120 (run at 125) and 130 (141) */

        ck_assert_double_eq(redis_save_due(1000.7, 60), 1061);
        ck_assert_double_eq(pg_checkpoint_parse("pg_control version number:            1300\n"
                                                "Time of latest checkpoint:            Sat Dec  5 06:40:00 2026\n"),
                            1796452800);
        ck_assert_double_eq(pg_checkpoint_parse("no such line\n"), 0);
}
END_TEST

static double wall_s(void) {
        return (double) now_usec(CLOCK_REALTIME) / USEC_PER_SEC;
}

/* Reads c's keepalives until n more came (5 s bound), their times into runs. */
static void read_keepalives(int fd, unsigned n, double *runs, size_t *n_runs) {
        for (unsigned got = 0; got < n;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                char buf[16];
                ck_assert_int_eq(poll(&p, 1, 5000), 1);
                ssize_t k = read(fd, buf, sizeof(buf));
                ck_assert_int_gt(k, 0);
                for (ssize_t i = 0; i < k; i++)
                        if (buf[i] == 'k') {
                                runs[(*n_runs)++] = wall_s();
                                got++;
                        }
        }
}

/* A job of known period (the client workload's keepalive, every 200 ms of
 * the wall clock) frozen for 0.7 s: its runs before read on time, the dues
 * while frozen missed, the one whose period holds the thaw late by exactly
 * as long as the thaw came after it, and the ones after on time again. */
START_TEST(test_period_job_lateness) {
        const double P = 0.2;
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof(sa);
        double runs[64], late[64];
        size_t n_runs = 0, n_late;
        unsigned missed;
        char port[16];

        if (!test_need_root_cgroup2())
                return;
        _cleanup_close_ int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ck_assert_int_ge(l, 0);
        ck_assert_int_eq(bind(l, (struct sockaddr *) &sa, sizeof(sa)), 0);
        ck_assert_int_eq(listen(l, 1), 0);
        ck_assert_int_eq(getsockname(l, (struct sockaddr *) &sa, &len), 0);
        snprintf(port, sizeof(port), "%d", ntohs(sa.sin_port));
        char *argv[] = { (char *) test_bin("standby-workload"), "client", "--port", port, "--period-ms", "200", NULL };
        test_spawn("job.service", argv, NULL);
        struct pollfd p = { .fd = l, .events = POLLIN };
        ck_assert_int_eq(poll(&p, 1, 5000), 1);
        _cleanup_close_ int c = accept4(l, NULL, NULL, SOCK_CLOEXEC);
        ck_assert_int_ge(c, 0);
        _cleanup_close_ int cg = test_cgroup("job.service");

        read_keepalives(c, 1, runs, &n_runs);
        double t0 = runs[0] - 0.01; /* from just before the first run seen: its due is in */
        read_keepalives(c, 3, runs, &n_runs);
        double t_freeze = wall_s();
        ck_assert_int_eq(cgroup_set_freeze(cg, true), 0);
        bool done = false;
        ck_assert_int_ge(cgroup_wait_frozen(&cg, 1, true, now_usec(CLOCK_MONOTONIC) + 5 * USEC_PER_SEC, &done), 0);
        ck_assert(done);
        usleep(700000);
        double t_thaw = wall_s();
        ck_assert_int_eq(cgroup_set_freeze(cg, false), 0);
        read_keepalives(c, 4, runs, &n_runs);
        double t_end = wall_s();

        /* The four runs read (the last just before the freeze). */
        ck_assert_uint_ge(period_lateness(runs, n_runs, P, P, t0, t_freeze, late, &n_late, &missed), 4);
        ck_assert_uint_eq(missed, 0);
        ck_assert_msg(stats_max(late, n_late) < 0.1, "on time before the freeze, read late by %.3f s",
                      stats_max(late, n_late));
        double g = floor(t_thaw / P) * P; /* the due whose period holds the thaw */
        if (g > t_freeze + 0.05) {
                size_t due = period_lateness(runs, n_runs, P, P, t_freeze + 0.05, g - 1e-6, late, &n_late, &missed);
                ck_assert_uint_ge(due, 2);
                ck_assert_uint_eq(missed, due);
        }
        ck_assert_uint_eq(period_lateness(runs, n_runs, P, P, g - 1e-6, g + 1e-3, late, &n_late, &missed), 1);
        ck_assert_uint_eq(n_late, 1);
        ck_assert_msg(fabs(late[0] - (t_thaw - g)) < 0.1, "late %.3f s, thawed %.3f s after its due", late[0], t_thaw - g);
        ck_assert_uint_ge(period_lateness(runs, n_runs, P, P, g + P, t_end, late, &n_late, &missed), 1);
        ck_assert_uint_eq(missed, 0);
        ck_assert_msg(stats_max(late, n_late) < 0.1, "back on time after the thaw, read late by %.3f s",
                      stats_max(late, n_late));
}
END_TEST

/* Per-unit attribution: a 20 ms waker's wakeups in its unit, none in an
 * idle unit's, those of a waker born after the start counted from its
 * birth, a spinning unit's CPU time in its own, and the kernel's threads
 * apart. */
START_TEST(test_unit_tracker_attributes) {
        UnitTracker t;
        int tick, late_tick;

        if (!test_need_root_cgroup2())
                return;
        test_spawn_workload("waker.service", "timerfd", 20, 1, &tick);
        test_spawn_workload("idle.service", "idle", 20, 1, NULL);
        test_spawn_workload("busy.service", "busy", 20, 1, NULL);
        ck_assert_int_eq(test_ticks(tick, 2, 5 * USEC_PER_SEC), 2);
        ck_assert_int_eq(unit_tracker_start(&t, T.root_fd, T.base, true), 0);
        test_spawn_workload("late.service", "timerfd", 20, 1, &late_tick);
        /* A second, timed by the waker's own 50 ticks. */
        ck_assert_int_eq(test_ticks(tick, 50, 5 * USEC_PER_SEC), 50);
        ck_assert_int_eq(unit_tracker_sample(&t), 0);
        /* Sampling again in between changes nothing of the sums. */
        ck_assert_int_eq(test_ticks(tick, 25, 5 * USEC_PER_SEC), 25);
        ck_assert_int_eq(unit_tracker_sample(&t), 0);

        const UnitCount *waker = unit_tracker_find(&t, "waker.service"), *idle = unit_tracker_find(&t, "idle.service"),
                        *busy = unit_tracker_find(&t, "busy.service"), *born = unit_tracker_find(&t, "late.service"),
                        *kernel = unit_tracker_find(&t, UNIT_TRACKER_KERNEL);
        ck_assert(waker && idle && busy && born && kernel);
        double rate = unit_tracker_rate(&t, waker);
        ck_assert_msg(rate > 40 && rate < 60, "a 20 ms waker read %.1f wakeups/s", rate);
        ck_assert_msg(unit_tracker_rate(&t, idle) < 1, "an idle unit read %.1f/s", unit_tracker_rate(&t, idle));
        /* Born after the start: about 1.5 s of 50/s. */
        ck_assert_msg(born->wakeups > 40 && born->wakeups < 90, "the unit born later read %" PRIu64, born->wakeups);
        double busy_cpu = unit_tracker_cpu_ms_per_s(&t, busy), waker_cpu = unit_tracker_cpu_ms_per_s(&t, waker);
        ck_assert_msg(busy_cpu > 200 && busy_cpu < 1100, "a spinning unit read %.0f ms CPU/s", busy_cpu);
        ck_assert_msg(waker_cpu < 50, "the waker read %.0f ms CPU/s", waker_cpu);
        ck_assert_msg(kernel->wakeups > 0, "no wakeups of the kernel's threads");
        unit_tracker_done(&t);
}
END_TEST

/* A daemon's timed duty seen done by its result: redis-server with "save 1
 * 1" writes its dump within a second of when redis_save_due() says, once a
 * change is made after a save. */
START_TEST(test_redis_duty_seen) {
        char dir[2048], port[16], path[4200], reply[64];
        struct stat st;

        if (!test_need_root_cgroup2())
                return;
        if (access("/usr/bin/redis-server", X_OK) < 0) {
                (void) test_skip("redis-server is not installed (scripts/install-deps.sh installs it)");
                return;
        }
        ck_assert(mkdir(T.state_dir, 0700) == 0 || errno == EEXIST);
        snprintf(dir, sizeof(dir), "%s/redis", T.state_dir);
        ck_assert_int_eq(mkdir(dir, 0700), 0);
        int p = 20000 + (int) (getpid() % 20000);
        snprintf(port, sizeof(port), "%d", p);
        char *argv[] = { "/usr/bin/redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "1 1", "--dir", dir,
                         "--daemonize", "no", "--appendonly", "no", NULL };
        test_spawn("redis.service", argv, NULL);
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t) p),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int fd = -1;
        for (unsigned i = 0; i < 100 && fd < 0; i++) {
                fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (fd >= 0 && connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                        close(fd);
                        fd = -1;
                        usleep(50000);
                }
        }
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, "SAVE\r\n", 6), 6);
        ck_assert_int_gt(read(fd, reply, sizeof(reply)), 0);
        double saved = wall_s();
        snprintf(path, sizeof(path), "%s/dump.rdb", dir);
        ck_assert_int_eq(stat(path, &st), 0);
        double dump0 = (double) st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
        ck_assert_int_eq(write(fd, "SET a b\r\n", 9), 9);
        ck_assert_int_gt(read(fd, reply, sizeof(reply)), 0);
        double done = 0;
        for (unsigned i = 0; i < 100 && !done; i++) {
                usleep(50000);
                if (stat(path, &st) == 0 && (double) st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9 > dump0 + 0.5)
                        done = (double) st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
        }
        ck_assert_msg(done > 0, "redis never saved");
        double late = done - redis_save_due(saved, 1);
        ck_assert_msg(late > -0.05 && late < 1, "the save came %.3f s after its due", late);
        close(fd);
}
END_TEST

Suite *bench_suite(void) {
        Suite *s = suite_create("bench");
        TCase *tc = tcase_create("stats");
        tcase_add_test(tc, test_percentiles);
        tcase_add_test(tc, test_rates);
        tcase_add_test(tc, test_period_lateness);
        suite_add_tcase(s, tc);

        tc = test_kernel_tcase(s, "period", 60);
        tcase_add_test(tc, test_period_job_lateness);
        tcase_add_test(tc, test_unit_tracker_attributes);
        tcase_add_test(tc, test_redis_duty_seen);

        tc = test_kernel_tcase(s, "workloads", 60);
        tcase_add_test(tc, test_workload_wakes_as_claimed);
        tcase_add_test(tc, test_event_workloads_answer);

        tc = test_kernel_tcase(s, "runs", 120);
        tcase_add_test(tc, test_compare_many_workloads);
        tcase_add_test(tc, test_compare_missing_daemon);
        tcase_add_test(tc, test_self_check_disagreement_fails);

        tc = test_kernel_tcase(s, "references", 60);
        tcase_add_checked_fixture(tc, bus_setup, bus_teardown);
        tcase_add_unchecked_fixture(tc, NULL, bus_sweep);
        tcase_add_test(tc, test_bare_thawer_dbus);
        tcase_add_test(tc, test_bare_thawer_push);
        tcase_add_test(tc, test_bare_thawer_dbus_checked);
        return s;
}
