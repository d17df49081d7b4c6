/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* standby-listener end to end: a real dbus-daemon on a private address, the
 * real listener binary, real frozen processes woken by a real Push. */
#include <fcntl.h>
#include <grp.h>
#include <libevdev/libevdev-uinput.h>
#include <libevdev/libevdev.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/input.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <sched.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>

#include "../listener/dbus-wire.h"
#include "cgroup.h"
#include "fileio.h"
#include "journal.h"
#include "macro.h"
#include "manager.h"
#include "proc.h"
#include "standby.h"
#include "strv.h"
#include "test-util.h"

static char dir[64], bus_address[512], rules_dir[256];
static pid_t dbus_pid, listener_pid;
static char netns[64];        /* when set, the listener starts inside it */
static int notify_fd = -EBADF;

static void write_rule(const char *name, const char *text) {
        char p[512];
        snprintf(p, sizeof(p), "%s/%s", rules_dir, name);
        FILE *f = fopen(p, "we");
        ck_assert_ptr_nonnull(f);
        fputs(text, f);
        fclose(f);
}

static int unlink_rule(const char *name) {
        char p[512];
        snprintf(p, sizeof(p), "%s/%s", rules_dir, name);
        return unlink(p) < 0 ? -errno : 0;
}

/* Waits (bounded) for the listener to say text over its notify socket. */
static bool wait_notify(const char *text) {
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC;
        for (;;) {
                struct pollfd p = { .fd = notify_fd, .events = POLLIN };
                char buf[512];
                int t = deadline_poll_timeout(deadline);
                if (t == 0 || poll(&p, 1, t) <= 0)
                        return false;
                ssize_t n = recv(notify_fd, buf, sizeof(buf) - 1, 0);
                if (n <= 0)
                        return false;
                buf[n] = 0;
                if (strstr(buf, text))
                        return true;
        }
}

static void start_listener(void) {
        char notify_path[300], env[320];
        snprintf(notify_path, sizeof(notify_path), "%s/notify", dir);
        snprintf(env, sizeof(env), "NOTIFY_SOCKET=%s", notify_path);

        listener_pid = fork();
        ck_assert_int_ge(listener_pid, 0);
        if (listener_pid == 0) {
                putenv(env);
                if (netns[0]) {
                        char p[128];
                        snprintf(p, sizeof(p), "/run/netns/%s", netns);
                        int fd = open(p, O_RDONLY | O_CLOEXEC);
                        /* Only the network namespace: ip netns exec would also
                         * remount /sys, and with it the cgroup2 mount. */
                        if (fd < 0 || setns(fd, CLONE_NEWNET) < 0)
                                _exit(126);
                }
                execl(test_bin("standby-listener"), "standby-listener", "--config", T.config, "--state-dir",
                      T.state_dir, "--rules-dir", rules_dir, "--bus-address", bus_address, NULL);
                _exit(127);
        }
        ck_assert_msg(wait_notify("READY=1"), "the listener never said READY=1");
}

/* Returns the listener's wait status, or -1 if none ran. */
static int stop_listener(int sig) {
        int status = -1;
        if (listener_pid <= 0)
                return -1;
        (void) kill(listener_pid, sig);
        if (waitpid(listener_pid, &status, 0) != listener_pid)
                status = -1;
        listener_pid = 0;
        return status;
}

/* Waits (bounded, on a pidfd) for the listener to exit by itself; returns
 * its wait status, or -1 if it still runs. */
static int wait_listener_exit(usec_t timeout) {
        _cleanup_close_ int pidfd = (int) syscall(SYS_pidfd_open, listener_pid, 0);
        struct pollfd p = { .fd = pidfd, .events = POLLIN };
        int status = -1;

        if (pidfd < 0 || poll(&p, 1, (int) (timeout / USEC_PER_MSEC)) != 1 ||
            waitpid(listener_pid, &status, 0) != listener_pid)
                return -1;
        listener_pid = 0;
        return status;
}

/* Runs ip(8) with up to 8 arguments; asserts success. */
static void run_ip(const char *a, const char *b, const char *c, const char *d, const char *e, const char *f,
                   const char *g, const char *h) {
        int status;
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                execlp("ip", "ip", a, b, c, d, e, f, g, h, NULL);
                _exit(127);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "ip %s %s %s %s failed", a, b, c, d ? d : "");
}

static void setup(void) {
        test_env_setup();
        if (T.unavailable)
                return; /* the test skips */
        /* World-readable, so that an unprivileged client can reach the bus. */
        snprintf(dir, sizeof(dir), "/tmp/standby-listener-test.%s.%d", test_runner_id(), (int) getpid());
        ck_assert_int_eq(mkdir(dir, 0755) == 0 || errno == EEXIST, 1);
        chmod(dir, 0755);
        snprintf(rules_dir, sizeof(rules_dir), "%s/rules", dir);
        (void) mkdir(rules_dir, 0755);

        /* The datagram socket for sd_notify(). */
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/notify", dir);
        (void) unlink(sa.sun_path);
        notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        ck_assert_int_ge(notify_fd, 0);
        ck_assert_int_eq(bind(notify_fd, (struct sockaddr *) &sa, sizeof(sa)), 0);

        dbus_pid = test_start_dbus(dir, bus_address, sizeof(bus_address));

        write_rule("10-mail.rule", "[Match]\nEvent=push\nUnit=mail.service\n[Action]\nThaw=mail.service\nFor=1s\n");
        write_rule("20-lid.rule", "[Match]\nEvent=push\nUnit=lid.service\n[Action]\nExitStandby=yes\n");
}

static void teardown(void) {
        char cmd[300];
        /* SIGTERM ends it cleanly: status 0. Under the sanitizers a leak
         * (LeakSanitizer runs at its exit) or any other report shows here. */
        int status = stop_listener(SIGTERM);
        if (netns[0]) {
                run_ip("netns", "del", netns, NULL, NULL, NULL, NULL, NULL);
                netns[0] = 0;
        }
        test_stop_pid(dbus_pid);
        dbus_pid = 0;
        notify_fd = safe_close(notify_fd);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        (void) !system(cmd);
        test_env_teardown();
        ck_assert_msg(status == -1 || (WIFEXITED(status) && WEXITSTATUS(status) == 0),
                      "standby-listener did not exit cleanly on SIGTERM (wait status 0x%x)", (unsigned) status);
}

static sd_bus *client(void) {
        return test_bus_client(bus_address);
}

/* Push(unit, reason); returns the bus error name, or NULL and *ret_acted. */
static char *push(sd_bus *bus, const char *unit, int *ret_acted) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        char *name = NULL;
        int acted = 0;

        if (sd_bus_call_method(bus, "org.standby.Listener1", "/org/standby/Listener1", "org.standby.Listener1", "Push",
                               &error, &reply, "ss", unit, "test") < 0)
                name = strdup(error.name ? error.name : "?");
        else
                ck_assert_int_ge(sd_bus_message_read(reply, "b", &acted), 0);
        sd_bus_error_free(&error);
        sd_bus_message_unref(reply);
        if (ret_acted)
                *ret_acted = acted;
        return name;
}

static uint64_t statistic(sd_bus *bus, const char *key) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        uint64_t v = UINT64_MAX;
        const char *k;
        uint64_t x;

        ck_assert_int_ge(sd_bus_call_method(bus, "org.standby.Listener1", "/org/standby/Listener1",
                                            "org.standby.Listener1", "GetStatistics", &error, &reply, ""),
                         0);
        ck_assert_int_ge(sd_bus_message_enter_container(reply, 'a', "{st}"), 0);
        while (sd_bus_message_read(reply, "{st}", &k, &x) > 0)
                if (streq(k, key))
                        v = x;
        sd_bus_message_unref(reply);
        return v;
}

typedef struct StatisticWant {
        sd_bus *bus;
        const char *key;
        uint64_t min;
} StatisticWant;

static bool statistic_reached(void *userdata) {
        const StatisticWant *w = userdata;
        uint64_t v = statistic(w->bus, w->key);
        return v != UINT64_MAX && v >= w->min;
}

/* Whether the listener's statistic key reaches min within timeout. */
static bool wait_statistic(sd_bus *bus, const char *key, uint64_t min, usec_t timeout) {
        return test_wait_for(statistic_reached, &(StatisticWant) { bus, key, min }, timeout);
}

/* The common start: an idle mail.service, the listener, standby entered;
 * returns a client connection to the bus. */
static sd_bus *standby_with_idle_mail(void) {
        test_spawn_workload("mail.service", "idle", 100, 1, NULL);
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        return bus;
}

static bool wait_frozen(const char *sub, bool want) {
        _cleanup_close_ int fd = test_cgroup(sub);
        return cgroup_wait_frozen(&fd, 1, want, now_usec(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC, NULL) == 0;
}

/* The journal's state of a unit, or -1 when it does not list it. */
static int journal_state_of(const char *sub) {
        _cleanup_close_ int dfd = open(T.state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        Journal *j = NULL;
        int state = -1;

        if (dfd >= 0 && journal_load(dfd, &j) >= 0) {
                JournalUnit *u = journal_find_unit(j, test_cgpath(sub));
                state = u ? (int) u->state : -1;
                journal_free(j);
        }
        return state;
}

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

/* Waits (bounded) for the journal to give sub this state (-1: not listed):
 * re-read on every rename into the state directory, which is how each save
 * lands, and on its removal. */
static bool wait_journal_state(const char *sub, int want, usec_t timeout) {
        _cleanup_close_ int in = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + timeout;

        ck_assert_int_ge(in, 0);
        ck_assert_int_ge(inotify_add_watch(in, T.state_dir, IN_MOVED_TO | IN_DELETE), 0);
        for (;;) {
                char buf[4096];
                struct pollfd p = { .fd = in, .events = POLLIN };
                int t;

                if (journal_state_of(sub) == want)
                        return true;
                t = deadline_poll_timeout(deadline);
                if (t == 0 || poll(&p, 1, t) <= 0)
                        return false;
                while (read(in, buf, sizeof(buf)) > 0)
                        ;
        }
}

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


/* Inhibit(what, who, why, mode) -> fd; an error name, or NULL and the fd. */
static char *inhibit(sd_bus *bus, const char *mode, int *ret_fd) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        char *name = NULL;
        int fd;

        if (sd_bus_call_method(bus, "org.standby.Listener1", "/org/standby/Listener1", "org.standby.Listener1",
                               "Inhibit", &error, &reply, "ssss", "standby", "test-app", "saves its state", mode) < 0)
                name = strdup(error.name ? error.name : "?");
        else if (sd_bus_message_read(reply, "h", &fd) >= 0)
                *ret_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        sd_bus_error_free(&error);
        sd_bus_message_unref(reply);
        return name;
}

/* ListInhibitors: how many, each checked to be the test's root delay
 * lock once only one is left. */
static int count_inhibitors(sd_bus *bus) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        const char *what, *who, *why, *mode;
        uint32_t uid, pid;
        int n = 0;

        ck_assert_int_ge(sd_bus_call_method(bus, "org.standby.Listener1", "/org/standby/Listener1",
                                            "org.standby.Listener1", "ListInhibitors", &error, &reply, ""), 0);
        ck_assert_int_ge(sd_bus_message_enter_container(reply, 'a', "(ssssuu)"), 0);
        while (sd_bus_message_read(reply, "(ssssuu)", &what, &who, &why, &mode, &uid, &pid) > 0) {
                ck_assert_str_eq(what, "standby");
                ck_assert_str_eq(who, "test-app");
                if (uid == 0)
                        ck_assert_str_eq(mode, "delay");
                n++;
        }
        sd_bus_message_unref(reply);
        return n;
}

static int prepare_seen = -1; /* the last PrepareForStandby's argument */

static int on_prepare(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        int b;
        if (sd_bus_message_read(msg, "b", &b) >= 0)
                prepare_seen = b;
        return 0;
}

/* Processes bus until PrepareForStandby(want) came, bounded: 10 s. */
static bool wait_prepare(sd_bus *bus, int want) {
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC;
        while (prepare_seen != want) {
                usec_t now = now_usec(CLOCK_MONOTONIC);
                if (now >= deadline)
                        return false;
                if (sd_bus_process(bus, NULL) > 0)
                        continue;
                (void) sd_bus_wait(bus, deadline - now);
        }
        return true;
}

static bool child_exited(void *userdata) {
        int *st = userdata;
        return waitpid(st[0], &st[1], WNOHANG) == st[0];
}

/* Apps are told: PrepareForStandby(true) before enter freezes anything,
 * enter waits for the delay lock to close, (false) after exit; a user may
 * take delay locks (8 at most) but no block lock; the locks are listed. */
START_TEST(test_app_locks) {
        int fd = -EBADF, status, st[2] = { -1, 0 };
        char *name;

        if (!test_need_root_cgroup2())
                return;
        /* Far above the bound below: enter ends by the lock's close. */
        test_write_config("InhibitDelayMaxSec=30s\n");
        test_spawn_workload("mail.service", "idle", 100, 1, NULL);
        start_listener();
        sd_bus *bus = client(), *app = client();
        ck_assert_int_ge(sd_bus_match_signal(app, NULL, NULL, "/org/standby/Listener1", "org.standby.Listener1",
                                             "PrepareForStandby", on_prepare, NULL), 0);

        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                        _exit(2);
                sd_bus *ub = NULL;
                int ufd = -1;
                if (sd_bus_new(&ub) < 0 || sd_bus_set_address(ub, bus_address) < 0 || sd_bus_set_bus_client(ub, true) < 0 ||
                    sd_bus_start(ub) < 0)
                        _exit(3);
                char *e = inhibit(ub, "block", &ufd);
                if (!e || !streq(e, SD_BUS_ERROR_ACCESS_DENIED))
                        _exit(4);
                for (int i = 0; i < 8; i++) /* LISTENER_INHIBITORS_PER_USER_MAX */
                        if (inhibit(ub, "delay", &ufd))
                                _exit(5);
                e = inhibit(ub, "delay", &ufd);
                _exit(e && streq(e, "org.standby.Listener1.TooManyLocks") ? 0 : 6);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a user's locks: wait status 0x%x", status);

        name = inhibit(app, "delay", &fd);
        ck_assert_msg(!name, "Inhibit: %s", name);
        ck_assert_int_ge(fd, 0);
        /* The user's locks go with its connection: one is left, root's. */
        int n = -1;
        for (int tries = 0; tries < 100 && n != 1; tries++) {
                if (tries)
                        usleep(100 * 1000);
                n = count_inhibitors(bus);
        }
        ck_assert_int_eq(n, 1);

        st[0] = pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                safe_close(fd); /* the lock is the app's alone */
                _exit(test_manager(NULL, "--quiet", "--bus-address", bus_address, "enter", NULL));
        }
        ck_assert(wait_prepare(app, 1));
        /* Told, not yet frozen: enter waits for the lock. */
        ck_assert(!test_frozen("mail.service"));
        ck_assert_int_eq(waitpid(pid, &status, WNOHANG), 0);
        fd = safe_close(fd);
        ck_assert_msg(test_wait_for(child_exited, st, 10 * USEC_PER_SEC),
                      "enter still waits 10 s after the last delay lock closed");
        status = st[1];
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_OK, "enter: wait status 0x%x", status);
        ck_assert(test_frozen("mail.service"));
        /* The enter kept its connection until standby was entered: no
         * after-signal came (the answer to a call made now comes after
         * whatever the listener sent before it). */
        ck_assert_int_ge(count_inhibitors(app), 0);
        while (sd_bus_process(app, NULL) > 0)
                ;
        ck_assert_int_eq(prepare_seen, 1);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(wait_prepare(app, 0));

        /* An enter that goes without entering (its connection closes, no
         * journal written): apps hear standby is off again. */
        sd_bus *prep = client();
        ck_assert_int_ge(sd_bus_call_method(prep, "org.standby.Listener1", "/org/standby/Listener1",
                                            "org.standby.Listener1", "PrepareEntry", NULL, NULL, ""), 0);
        ck_assert(wait_prepare(app, 1));
        sd_bus_flush_close_unref(prep);
        ck_assert(wait_prepare(app, 0));
        sd_bus_flush_close_unref(app);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* listener/listener.h's LISTENER_INHIBITORS_MAX, _PER_USER_MAX, _RESERVED. */
#define LOCKS_MAX 64
#define LOCKS_PER_USER 8
#define LOCKS_RESERVED 16

/* A user (uid) that takes up to n delay locks and holds them. It reports
 * how many it got (a byte on report); "r" from the test on command makes
 * it close them all and take them anew, "q" makes it exit (its locks
 * go). */
typedef struct LockUser {
        pid_t pid;
        int report, command;
} LockUser;

static LockUser lock_user(uid_t uid, int n) {
        int rep[2], cmd[2];

        ck_assert_int_eq(pipe2(rep, O_CLOEXEC), 0);
        ck_assert_int_eq(pipe2(cmd, O_CLOEXEC), 0);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                int fds[LOCKS_MAX];
                sd_bus *ub = NULL;
                char c = 0;

                close(rep[0]);
                close(cmd[1]);
                if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
                        _exit(2);
                if (sd_bus_new(&ub) < 0 || sd_bus_set_address(ub, bus_address) < 0 || sd_bus_set_bus_client(ub, true) < 0 ||
                    sd_bus_start(ub) < 0)
                        _exit(3);
                do {
                        int got = 0;
                        for (int k = 0; k < n && k < LOCKS_MAX; k++) {
                                _cleanup_free_ char *e = inhibit(ub, "delay", &fds[got]);
                                if (!e)
                                        got++;
                        }
                        char b = (char) got;
                        if (write(rep[1], &b, 1) != 1)
                                _exit(4);
                        if (read(cmd[0], &c, 1) != 1 || c == 'q')
                                _exit(0);
                        for (int k = 0; k < got; k++)
                                close(fds[k]);
                } while (true);
        }
        close(rep[1]);
        close(cmd[0]);
        return (LockUser) { .pid = pid, .report = rep[0], .command = cmd[1] };
}

/* How many locks u reported taking (bounded wait: 10 s). */
static int lock_user_got(LockUser *u) {
        struct pollfd p = { .fd = u->report, .events = POLLIN };
        char b;

        ck_assert_int_eq(poll(&p, 1, 10000), 1);
        ck_assert_int_eq(read(u->report, &b, 1), 1);
        return b;
}

static void lock_user_end(LockUser *u) {
        int status;

        ck_assert_int_eq(write(u->command, "q", 1), 1);
        u->command = safe_close(u->command);
        ck_assert_int_eq(waitpid(u->pid, &status, 0), u->pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a lock user: wait status 0x%x", status);
        u->report = safe_close(u->report);
}

/* Users cannot use up root's locks: each user holds at most
 * LOCKS_PER_USER, users together leave LOCKS_RESERVED for root (and
 * Group=), which root then takes. */
START_TEST(test_inhibit_slots_reserved) {
        LockUser users[LOCKS_MAX / LOCKS_PER_USER];
        uid_t uids[ELEMENTSOF(users)];
        int taken = 0, fds[LOCKS_MAX], n_root = 0;
        size_t n_uids = 0;
        struct passwd *pw;

        if (!test_need_root_cgroup2())
                return;
        /* Users the bus knows (dbus-daemon refuses a uid without an
         * account): enough of them to take every slot. */
        setpwent();
        while (n_uids < ELEMENTSOF(uids) && (pw = getpwent()))
                if (pw->pw_uid != 0)
                        uids[n_uids++] = pw->pw_uid;
        endpwent();
        ck_assert_msg(n_uids == ELEMENTSOF(uids), "this test needs %zu accounts other than root", ELEMENTSOF(uids));
        start_listener();
        sd_bus *bus = client();
        for (size_t k = 0; k < ELEMENTSOF(users); k++) {
                users[k] = lock_user(uids[k], LOCKS_PER_USER + 1);
                int got = lock_user_got(&users[k]);
                ck_assert_int_le(got, LOCKS_PER_USER);
                taken += got;
        }
        ck_assert_int_eq(taken, LOCKS_MAX - LOCKS_RESERVED);
        for (;;) {
                _cleanup_free_ char *e = inhibit(bus, "delay", &fds[n_root]);
                if (e) {
                        ck_assert_str_eq(e, "org.standby.Listener1.TooManyLocks");
                        break;
                }
                ck_assert_int_lt(++n_root, LOCKS_MAX);
        }
        ck_assert_int_eq(n_root, LOCKS_RESERVED);
        for (int k = 0; k < n_root; k++)
                close(fds[k]);
        for (size_t k = 0; k < ELEMENTSOF(users); k++)
                lock_user_end(&users[k]);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* Runs enter (on the test's bus) in a child, without the test's lock
 * lock_fd; its pid. */
static pid_t enter_in_child(int lock_fd) {
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                safe_close(lock_fd); /* the lock is the app's alone */
                _exit(test_manager(NULL, "--quiet", "--bus-address", bus_address, "enter", NULL));
        }
        return pid;
}

/* A user's delay lock holds off one entry at most: held past the delay
 * (5 s) once, that user's locks, new ones included, are not waited for
 * at the next entry, while root's lock still is. */
START_TEST(test_inhibit_user_delay_once) {
        int fd = -EBADF, st[2] = { -1, 0 };

        if (!test_need_root_cgroup2())
                return;
        test_write_config("InhibitDelayMaxSec=5s\n");
        test_spawn_workload("mail.service", "idle", 100, 1, NULL);
        start_listener();
        sd_bus *app = client();
        ck_assert_int_ge(sd_bus_match_signal(app, NULL, NULL, "/org/standby/Listener1", "org.standby.Listener1",
                                             "PrepareForStandby", on_prepare, NULL), 0);
        prepare_seen = -1;
        LockUser u = lock_user(65534, 1);
        ck_assert_int_eq(lock_user_got(&u), 1);

        /* The first entry waits for it, the whole delay. */
        usec_t t0 = now_usec(CLOCK_MONOTONIC);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "--bus-address", bus_address, "enter", NULL), EXIT_OK);
        ck_assert_uint_ge(now_usec(CLOCK_MONOTONIC) - t0, 4 * USEC_PER_SEC);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(wait_prepare(app, 0));

        /* The user takes a new lock, root one too: the entry waits for
         * root's alone. */
        ck_assert_int_eq(write(u.command, "r", 1), 1);
        ck_assert_int_eq(lock_user_got(&u), 1);
        ck_assert_ptr_null(inhibit(app, "delay", &fd));
        st[0] = enter_in_child(fd);
        ck_assert(wait_prepare(app, 1));
        ck_assert(!test_frozen("mail.service"));
        ck_assert_int_eq(waitpid(st[0], &st[1], WNOHANG), 0);
        fd = safe_close(fd);
        /* Well inside the 5 s the user's lock would hold it. */
        ck_assert_msg(test_wait_for(child_exited, st, 2 * USEC_PER_SEC),
                      "enter still waits for the user's lock 2 s after root's closed");
        ck_assert(WIFEXITED(st[1]) && WEXITSTATUS(st[1]) == EXIT_OK);
        ck_assert(test_frozen("mail.service"));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        lock_user_end(&u);
        sd_bus_flush_close_unref(app);
}
END_TEST

/* A bus daemon that does not answer (stopped) does not hold enter past its
 * bound for the apps (InhibitDelayMaxSec= + 5 s): sd-bus's own 90 s for the
 * connection's authentication would outlast standby-enter.service's. */
START_TEST(test_enter_bus_stopped) {
        int st[2] = { -1, 0 };

        if (!test_need_root_cgroup2())
                return;
        test_spawn_workload("mail.service", "idle", 100, 1, NULL);
        start_listener();
        ck_assert_int_eq(kill(dbus_pid, SIGSTOP), 0);
        st[0] = fork();
        ck_assert_int_ge(st[0], 0);
        if (st[0] == 0)
                _exit(test_manager(NULL, "--quiet", "--bus-address", bus_address, "enter", NULL));
        /* InhibitDelayMaxSec= is 5 s here: 10 s, and the freeze's time. */
        bool done = test_wait_for(child_exited, st, 15 * USEC_PER_SEC);
        (void) kill(dbus_pid, SIGCONT);
        if (!done) {
                (void) kill(st[0], SIGKILL);
                (void) waitpid(st[0], NULL, 0);
        }
        ck_assert_msg(done, "enter still waits for a stopped bus after 15 s");
        ck_assert_msg(WIFEXITED(st[1]) && WEXITSTATUS(st[1]) == EXIT_OK, "enter: wait status 0x%x", st[1]);
        ck_assert(test_frozen("mail.service"));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
}
END_TEST

/* The events the listener's epoll asks for on the fd that is the other end
 * of the pipe whose end fd is (/proc/PID/fdinfo of its epoll fds), or -1
 * when it watches no such fd. */
static int listener_epoll_events_for_pipe(int fd) {
        char path[128], link[128], want[64], line[256];
        struct stat st;
        int found_fd = -1, events = -1;

        ck_assert_int_eq(fstat(fd, &st), 0);
        snprintf(want, sizeof(want), "pipe:[%lu]", (unsigned long) st.st_ino);
        for (int i = 0; i < 1024 && found_fd < 0; i++) {
                snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int) listener_pid, i);
                ssize_t n = readlink(path, link, sizeof(link) - 1);
                if (n > 0 && (link[n] = 0, streq(link, want)))
                        found_fd = i;
        }
        ck_assert_msg(found_fd >= 0, "the listener holds no end of the lock's pipe");
        for (int i = 0; i < 1024 && events < 0; i++) {
                snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int) listener_pid, i);
                ssize_t n = readlink(path, link, sizeof(link) - 1);
                if (n <= 0 || (link[n] = 0, !streq(link, "anon_inode:[eventpoll]")))
                        continue;
                snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int) listener_pid, i);
                FILE *f = fopen(path, "re");
                ck_assert_ptr_nonnull(f);
                int tfd;
                unsigned ev;
                while (fgets(line, sizeof(line), f))
                        if (sscanf(line, "tfd: %d events: %x", &tfd, &ev) == 2 && tfd == found_fd)
                                events = (int) ev;
                fclose(f);
        }
        return events;
}

/* What an app writes into its lock cannot wake the listener: the lock's
 * end in the listener's epoll asks for no input, only the hang-up that
 * epoll always reports; the lock still ends when the app closes it. */
START_TEST(test_lock_wakes_only_on_close) {
        int fd = -EBADF;

        if (!test_need_root_cgroup2())
                return;
        start_listener();
        sd_bus *bus = client();
        ck_assert_ptr_null(inhibit(bus, "delay", &fd));
        int events = listener_epoll_events_for_pipe(fd);
        ck_assert_msg(events >= 0, "the listener does not watch the lock");
        ck_assert_msg(!(events & (EPOLLIN | EPOLLPRI | EPOLLRDHUP)), "the listener reads what an app writes into its lock "
                      "(epoll events 0x%x)", (unsigned) events);
        ck_assert_int_eq(write(fd, "x", 1), 1);
        ck_assert_int_eq(count_inhibitors(bus), 1);
        fd = safe_close(fd);
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC;
        while (count_inhibitors(bus) > 0 && now_usec(CLOCK_MONOTONIC) < deadline)
                (void) poll(NULL, 0, 1);
        ck_assert_msg(count_inhibitors(bus) == 0, "the lock outlived its close");
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* An app's who and why are shown to root (status, ListInhibitors): C1
 * controls (U+009B is CSI on terminals that take them) and bidi controls
 * are refused, as C0 ones are. */
START_TEST(test_inhibit_refuses_controls) {
        static const char * const bad[] = { "x\xc2\x9b" "2J", "app\xe2\x80\xae" "txt", "a\xe2\x81\xa6" "b", "a\x1b" "b" };

        if (!test_need_root_cgroup2())
                return;
        start_listener();
        sd_bus *bus = client();
        for (size_t i = 0; i < ELEMENTSOF(bad) * 2; i++) {
                sd_bus_error error = SD_BUS_ERROR_NULL;
                const char *who = i % 2 ? "app" : bad[i / 2], *why = i % 2 ? bad[i / 2] : "why";
                ck_assert_int_lt(sd_bus_call_method(bus, "org.standby.Listener1", "/org/standby/Listener1",
                                                    "org.standby.Listener1", "Inhibit", &error, NULL, "ssss", "standby",
                                                    who, why, "delay"),
                                 0);
                ck_assert_msg(sd_bus_error_has_name(&error, SD_BUS_ERROR_INVALID_ARGS), "who \"%s\", why \"%s\": %s",
                              who, why, error.name);
                sd_bus_error_free(&error);
        }
        /* Letters beyond ASCII are names like any other. */
        sd_bus_message *reply = NULL;
        ck_assert_int_ge(sd_bus_call_method(bus, "org.standby.Listener1", "/org/standby/Listener1",
                                            "org.standby.Listener1", "Inhibit", NULL, &reply, "ssss", "standby",
                                            "caf\xc3\xa9", "why", "delay"),
                         0);
        sd_bus_message_unref(reply);
        sd_bus_flush_close_unref(bus);
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

/* An ExitStandby= event (as the lid opened) while enter waits for the apps'
 * delay locks is carried out once standby is entered, not lost. */
START_TEST(test_exit_during_apps_delay) {
        int fd = -EBADF, status;

        if (!test_need_root_cgroup2())
                return;
        test_spawn_workload("mail.service", "idle", 100, 1, NULL);
        start_listener();
        sd_bus *bus = client(), *app = client();
        ck_assert_int_ge(sd_bus_match_signal(app, NULL, NULL, "/org/standby/Listener1", "org.standby.Listener1",
                                             "PrepareForStandby", on_prepare, NULL), 0);
        prepare_seen = -1;
        ck_assert_ptr_null(inhibit(app, "delay", &fd));
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                safe_close(fd); /* the lock is the app's alone */
                _exit(test_manager(NULL, "--quiet", "--bus-address", bus_address, "enter", NULL));
        }
        ck_assert(wait_prepare(app, 1));
        ck_assert_ptr_null(push(bus, "lid.service", NULL)); /* ExitStandby=yes, during the delay */
        fd = safe_close(fd);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_OK);
        ck_assert_msg(wait_frozen("mail.service", false), "the ExitStandby= event during the delay was lost");
        ck_assert(wait_prepare(app, 0));
        (void) test_manager(NULL, "--quiet", "exit", NULL);
        sd_bus_flush_close_unref(app);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* Apps told that standby begins (PrepareEntry answered) hear that it is
 * over when no standby follows (an enter that failed before the journal). */
START_TEST(test_told_without_standby) {
        if (!test_need_root_cgroup2())
                return;
        start_listener();
        sd_bus *bus = client(), *app = client();
        ck_assert_int_ge(sd_bus_match_signal(app, NULL, NULL, "/org/standby/Listener1", "org.standby.Listener1",
                                             "PrepareForStandby", on_prepare, NULL), 0);
        prepare_seen = -1;
        ck_assert_int_ge(sd_bus_call_method(bus, "org.standby.Listener1", "/org/standby/Listener1",
                                            "org.standby.Listener1", "PrepareEntry", NULL, NULL, ""), 0);
        ck_assert(wait_prepare(app, 1));
        ck_assert_msg(wait_prepare(app, 0), "PrepareForStandby(false) never came");
        sd_bus_flush_close_unref(app);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* The enter that asked for the apps' delay is watched through the bus's
 * NameOwnerChanged: another user's forged one, sent to the listener alone,
 * does not tell apps that standby is off. */
START_TEST(test_told_not_by_forged_owner_change) {
        int status;

        if (!test_need_root_cgroup2())
                return;
        start_listener();
        sd_bus *bus = client(), *app = client();
        const char *caller = NULL, *listener = NULL;
        sd_bus_creds *creds = NULL;
        ck_assert_int_ge(sd_bus_get_unique_name(bus, &caller), 0);
        ck_assert_int_ge(sd_bus_get_name_creds(bus, "org.standby.Listener1", SD_BUS_CREDS_UNIQUE_NAME, &creds), 0);
        ck_assert_int_ge(sd_bus_creds_get_unique_name(creds, &listener), 0);
        ck_assert_int_ge(sd_bus_match_signal(app, NULL, NULL, "/org/standby/Listener1", "org.standby.Listener1",
                                             "PrepareForStandby", on_prepare, NULL), 0);
        prepare_seen = -1;
        ck_assert_int_ge(sd_bus_call_method(bus, "org.standby.Listener1", "/org/standby/Listener1",
                                            "org.standby.Listener1", "PrepareEntry", NULL, NULL, ""), 0);
        ck_assert(wait_prepare(app, 1));
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                sd_bus *ub = NULL;
                sd_bus_message *m = NULL;
                if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                        _exit(2);
                if (sd_bus_new(&ub) < 0 || sd_bus_set_address(ub, bus_address) < 0 || sd_bus_set_bus_client(ub, true) < 0 ||
                    sd_bus_start(ub) < 0)
                        _exit(3);
                if (sd_bus_message_new_signal(ub, &m, "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                              "NameOwnerChanged") < 0 ||
                    sd_bus_message_append(m, "sss", caller, caller, "") < 0 ||
                    sd_bus_message_set_destination(m, listener) < 0 || sd_bus_send(ub, m, NULL) < 0)
                        _exit(4);
                /* Answered after the signal: the listener has handled it,
                 * and sent anything it sends for it before this answer. */
                if (sd_bus_call_method(ub, "org.standby.Listener1", "/org/standby/Listener1", "org.standby.Listener1",
                                       "ListInhibitors", NULL, NULL, "") < 0)
                        _exit(5);
                _exit(0);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "forger: 0x%x", (unsigned) status);
        sd_bus_creds_unref(creds);
        while (sd_bus_process(app, NULL) > 0)
                ;
        ck_assert_msg(prepare_seen == 1, "uid 65534's forged NameOwnerChanged told apps that standby is off");
        sd_bus_flush_close_unref(app);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* ExitStandby=yes ends standby altogether (the push is answered at once;
 * the exit runs apart from the listener's loop). */
START_TEST(test_exit_standby_rule) {
        char p[512];

        if (!test_need_root_cgroup2())
                return;
        sd_bus *bus = standby_with_idle_mail();
        ck_assert_ptr_null(push(bus, "lid.service", NULL));
        ck_assert(wait_journal_state("mail.service", -1, 10 * USEC_PER_SEC));
        ck_assert(!test_anything_frozen());
        snprintf(p, sizeof(p), "%s/" JOURNAL_FILE, T.state_dir);
        ck_assert_int_ne(access(p, F_OK), 0);
        ck_assert_uint_eq(statistic(bus, "exits"), 1);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* SIGHUP: a bad rule set is refused and the old one stays; a good one is taken. */
START_TEST(test_reload) {
        int acted;

        if (!test_need_root_cgroup2())
                return;
        test_spawn_workload("mail.service", "idle", 100, 1, NULL);
        test_spawn_workload("chat.service", "idle", 100, 1, NULL);
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);

        write_rule("30-chat.rule", "[Match]\nEvent=push\nUnit=chat.service\n[Action]\nThaw=chat.service\nFor=teatime\n");
        ck_assert_int_eq(kill(listener_pid, SIGHUP), 0);
        ck_assert(wait_notify("RELOADING=1"));
        ck_assert(wait_notify("READY=1"));
        ck_assert_ptr_null(push(bus, "chat.service", &acted));
        ck_assert_int_eq(acted, 0);
        ck_assert(test_frozen("chat.service"));

        write_rule("30-chat.rule", "[Match]\nEvent=push\nUnit=chat.service\n[Action]\nThaw=chat.service\n");
        ck_assert_int_eq(kill(listener_pid, SIGHUP), 0);
        ck_assert(wait_notify("READY=1"));
        ck_assert_ptr_null(push(bus, "chat.service", &acted));
        ck_assert_int_eq(acted, 1);
        ck_assert(!test_frozen("chat.service"));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
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

static bool is_stopped(void *userdata) {
        ProcStat st;
        return proc_get_stat(*(pid_t *) userdata, &st) >= 0 && st.state == 'T';
}

static bool is_sleeping(void *userdata) {
        ProcStat st;
        return proc_get_stat(*(pid_t *) userdata, &st) >= 0 && st.state == 'S';
}

static bool thread_runs(pid_t pid, uint64_t *ret) {
        _cleanup_free_ char *line = NULL;
        unsigned long long a, b, c;
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/schedstat", (int) pid);
        if (read_one_lineat(AT_FDCWD, path, &line) < 0 || sscanf(line, "%llu %llu %llu", &a, &b, &c) != 3)
                return false;
        *ret = c;
        return true;
}

/* The listener has served everything sent to it and sleeps again: two
 * round trips over the bus (it serves one source after another without
 * sleeping in between), then its state is S: blocked in epoll_wait, which
 * it enters only with nothing left to read. Returns how often it has run. */
static uint64_t listener_settled_runs(sd_bus *bus) {
        uint64_t runs;

        (void) statistic(bus, "events");
        (void) statistic(bus, "events");
        ck_assert(test_wait_for(is_sleeping, &listener_pid, 5 * USEC_PER_SEC));
        ck_assert(thread_runs(listener_pid, &runs));
        return runs;
}

/* How often the listener ran, once a burst is over: a wakeup makes it
 * runnable (state R) at once, and it counts a run before it sleeps (S)
 * again, so waiting for S and then reading the count misses none. */
static uint64_t listener_runs_after(void) {
        uint64_t runs;

        ck_assert(test_wait_for(is_sleeping, &listener_pid, 5 * USEC_PER_SEC));
        ck_assert(thread_runs(listener_pid, &runs));
        return runs;
}

/* Idle in standby the listener does not run at all: no timer, no polling. */
START_TEST(test_idle_no_wakeups) {
        uint64_t before, after;
        int clock;

        if (!test_need_root_cgroup2())
                return;
        clock = test_start_clock(10);
        /* The same connection throughout: another one's going away would be
         * an event of its own. */
        sd_bus *bus = standby_with_idle_mail();
        /* The journal changes woke it; once it has dealt with them and
         * sleeps again, the count starts. */
        before = listener_settled_runs(bus);
        /* Signals on the bus that no rule matches, and 200 ticks of a
         * running 10 ms clock (a periodic timer of the listener's of 2 s
         * or less would fire in them): not one run. */
        for (int i = 0; i < 10; i++)
                ck_assert_int_ge(sd_bus_emit_signal(bus, "/org/example", "org.example.Push", "NewMail", ""), 0);
        ck_assert_int_ge(sd_bus_flush(bus), 0);
        test_clock_ticks(clock, 200);
        after = listener_runs_after();
        ck_assert_msg(after == before, "listener ran %llu times while idle", (unsigned long long) (after - before));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* kill -9 and restart during a window: the new listener closes it on time. */
START_TEST(test_restart_reconciles) {
        int acted;

        if (!test_need_root_cgroup2())
                return;
        sd_bus *bus = standby_with_idle_mail();
        ck_assert_ptr_null(push(bus, "mail.service", &acted));
        ck_assert(!test_frozen("mail.service"));
        sd_bus_flush_close_unref(bus);

        stop_listener(SIGKILL);
        start_listener();
        ck_assert(wait_frozen("mail.service", true));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
}
END_TEST

/* A rule names a unit, not a place: alice's and bob's mail.service (the same
 * user unit of two users) are both thawed by one push; bob's other unit, and
 * anything named mail.service that standby did not freeze, are not touched. */
START_TEST(test_same_unit_of_two_users) {
        int acted;

        if (!test_need_root_cgroup2())
                return;
        test_spawn_workload("alice.slice/mail.service", "idle", 100, 1, NULL);
        test_spawn_workload("bob.slice/mail.service", "idle", 100, 1, NULL);
        test_spawn_workload("bob.slice/other.service", "idle", 100, 1, NULL);
        test_spawn_workload("elsewhere.slice/mail.service", "idle", 100, 1, NULL);
        test_write_config("Exempt=elsewhere.slice\n");
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert(!test_frozen("elsewhere.slice/mail.service"));

        ck_assert_ptr_null(push(bus, "mail.service", &acted));
        ck_assert(acted);
        ck_assert(wait_frozen("alice.slice/mail.service", false));
        ck_assert(wait_frozen("bob.slice/mail.service", false));
        ck_assert(test_frozen("bob.slice/other.service"));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* A listener killed between a thaw and its record leaves a unit running that
 * the journal calls frozen; the next listener freezes it again. (Simulated
 * exactly: the listener is killed, the unit's cgroup.freeze written 0.) */
START_TEST(test_restart_enforces_journal) {
        _cleanup_free_ char *out = NULL;

        if (!test_need_root_cgroup2())
                return;
        sd_bus *bus = standby_with_idle_mail();
        sd_bus_flush_close_unref(bus);
        ck_assert(wait_frozen("mail.service", true));
        stop_listener(SIGKILL);
        _cleanup_close_ int cg = test_cgroup("mail.service");
        ck_assert_int_eq(cgroup_set_freeze(cg, false), 0);
        ck_assert(wait_frozen("mail.service", false));

        start_listener();
        ck_assert(wait_frozen("mail.service", true));
        ck_assert_int_eq(test_manager_env(NULL, &out, NULL, "status", "--json", NULL), EXIT_OK);
        ck_assert_ptr_nonnull(strstr(out, "\"state\":\"frozen\""));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
}
END_TEST

/* Standby being entered and held open: mail.service frozen, the manager
 * still waiting (FreezeTimeout=1s) for a unit stuck in a FUSE read. Returns
 * the manager's pid (reaped by enter_done()); false where FUSE is not. */
static bool enter_held_open(sd_bus **ret_bus, pid_t *ret_enter) {
        if (!test_need_root_cgroup2() || !test_have_fuse())
                return false;
        test_write_config("FreezeTimeout=1s\n");
        test_spawn_workload("mail.service", "idle", 100, 1, NULL);
        test_start_stuck_client("stuck.service");
        start_listener();
        *ret_bus = client();

        pid_t enter = fork();
        ck_assert_int_ge(enter, 0);
        if (enter == 0) {
                execl(test_bin("standby-manager"), "standby-manager", "--quiet", "--config", T.config, "--state-dir",
                      T.state_dir, "enter", NULL);
                _exit(127);
        }
        ck_assert(wait_frozen("mail.service", true));
        *ret_enter = enter;
        return true;
}

static void enter_done(pid_t enter) {
        int status;
        ck_assert_int_eq(waitpid(enter, &status, 0), enter);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_OK, "enter: status 0x%x", status);
}

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

/* Events during enter are kept per rule: however many events another rule
 * matches meanwhile (broadcast signals any user may send, say), a late
 * ExitStandby= is not pushed out, and standby ends once it is entered. */
START_TEST(test_late_exit_kept_per_rule) {
        sd_bus *bus;
        pid_t enter;

        if (!enter_held_open(&bus, &enter))
                return;
        /* The lid first, then more events of another rule than any ring
         * kept (it held 32). */
        ck_assert_ptr_null(push(bus, "lid.service", NULL));
        for (int i = 0; i < 100; i++)
                ck_assert_ptr_null(push(bus, "mail.service", NULL));
        enter_done(enter);

        /* Both rules are carried out once: mail thawed, then standby left. */
        ck_assert(wait_journal_state("mail.service", -1, 10 * USEC_PER_SEC));
        ck_assert(!test_anything_frozen());
        ck_assert_uint_eq(statistic(bus, "replayed"), 2);
        ck_assert_uint_eq(statistic(bus, "exits"), 1);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* Event=dbus-signal: a signal that matches the rule's Match= thaws its units;
 * another signal, which the listener does receive (another rule's match
 * takes it), thaws only that rule's units. */
START_TEST(test_dbus_signal_rule) {
        if (!test_need_root_cgroup2())
                return;
        write_rule("40-sig.rule", "[Match]\nEvent=dbus-signal\nMatch=type='signal',interface='org.example.Push',"
                                  "member='NewMail'\n[Action]\nThaw=mail.service\n");
        write_rule("41-sig.rule", "[Match]\nEvent=dbus-signal\nMatch=type='signal',interface='org.example.Push',"
                                  "member='Other'\n[Action]\nThaw=other.service\n");
        test_spawn_workload("other.service", "idle", 100, 1, NULL);
        sd_bus *bus = standby_with_idle_mail();

        ck_assert_int_ge(sd_bus_emit_signal(bus, "/org/example", "org.example.Push", "Other", ""), 0);
        ck_assert_int_ge(sd_bus_flush(bus), 0);
        /* The bus delivers the signal before this call (one sender, in
         * order): it was an event, its own rule thawed other.service, and
         * mail.service's rule did not take it. */
        ck_assert_uint_eq(statistic(bus, "events"), 1);
        ck_assert_uint_eq(statistic(bus, "matched"), 1);
        ck_assert_uint_eq(statistic(bus, "thaws"), 1);
        ck_assert(!test_frozen("other.service"));
        ck_assert(test_frozen("mail.service"));

        ck_assert_int_ge(sd_bus_emit_signal(bus, "/org/example", "org.example.Push", "NewMail", ""), 0);
        ck_assert_int_ge(sd_bus_flush(bus), 0);
        ck_assert(wait_frozen("mail.service", false));
        ck_assert_uint_eq(statistic(bus, "events"), 2);
        ck_assert_uint_eq(statistic(bus, "matched"), 2);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* A signal sent to the listener's connection alone reaches it whatever its
 * match rules say: another user's directed signal does not fire a rule
 * whose sender= names a well-known name, nor any other. */
START_TEST(test_dbus_signal_directed_ignored) {
        int status;

        if (!test_need_root_cgroup2())
                return;
        write_rule("40-sig.rule", "[Match]\nEvent=dbus-signal\nMatch=type='signal',sender='org.example.Mail',"
                                  "interface='org.example.Push',member='NewMail'\n[Action]\nThaw=mail.service\n");
        sd_bus *bus = standby_with_idle_mail();
        const char *owner = NULL;
        sd_bus_creds *creds = NULL;
        ck_assert_int_ge(sd_bus_get_name_creds(bus, "org.standby.Listener1", SD_BUS_CREDS_UNIQUE_NAME, &creds), 0);
        ck_assert_int_ge(sd_bus_creds_get_unique_name(creds, &owner), 0);
        char *dest = strdup(owner);
        sd_bus_creds_unref(creds);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                        _exit(2);
                sd_bus *ub = NULL;
                sd_bus_message *m = NULL;
                if (sd_bus_new(&ub) < 0 || sd_bus_set_address(ub, bus_address) < 0 || sd_bus_set_bus_client(ub, true) < 0 ||
                    sd_bus_start(ub) < 0)
                        _exit(3);
                if (sd_bus_message_new_signal(ub, &m, "/org/example", "org.example.Push", "NewMail") < 0 ||
                    sd_bus_message_set_destination(m, dest) < 0 || sd_bus_send(ub, m, NULL) < 0)
                        _exit(4);
                /* Answered after the signal (one sender, in order): the
                 * listener has handled it. */
                if (sd_bus_call_method(ub, "org.standby.Listener1", "/org/standby/Listener1", "org.standby.Listener1",
                                       "ListInhibitors", NULL, NULL, "") < 0)
                        _exit(5);
                _exit(0);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "forger: 0x%x", status);
        free(dest);
        ck_assert_msg(statistic(bus, "matched") == 0, "uid 65534's directed signal fired a sender= rule");
        ck_assert(test_frozen("mail.service"));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* sender= naming a well-known name: a broadcast that another rule's match
 * brings to the listener fires only the rules whose sender= its sender
 * owns. */
START_TEST(test_dbus_signal_sender_owner) {
        if (!test_need_root_cgroup2())
                return;
        write_rule("40-sig.rule", "[Match]\nEvent=dbus-signal\nMatch=type='signal',sender='org.example.Mail',"
                                  "interface='org.example.Push',member='NewMail'\n[Action]\nThaw=mail.service\n");
        write_rule("41-sig.rule", "[Match]\nEvent=dbus-signal\nMatch=type='signal',interface='org.example.Push'\n"
                                  "[Action]\nThaw=other.service\n");
        test_spawn_workload("other.service", "idle", 100, 1, NULL);
        sd_bus *bus = standby_with_idle_mail(), *mail = client();

        /* From a connection that does not own org.example.Mail. */
        ck_assert_int_ge(sd_bus_emit_signal(bus, "/org/example", "org.example.Push", "NewMail", ""), 0);
        ck_assert_int_ge(sd_bus_flush(bus), 0);
        ck_assert_uint_eq(statistic(bus, "events"), 1);
        ck_assert_msg(statistic(bus, "matched") == 1, "a signal not from org.example.Mail fired its sender= rule");
        ck_assert(!test_frozen("other.service"));
        ck_assert(test_frozen("mail.service"));

        /* From its owner: the bus tells the listener of the new owner
         * before it passes on what the owner sends next. */
        ck_assert_int_ge(sd_bus_request_name(mail, "org.example.Mail", 0), 0);
        ck_assert_int_ge(sd_bus_emit_signal(mail, "/org/example", "org.example.Push", "NewMail", ""), 0);
        ck_assert_int_ge(sd_bus_flush(mail), 0);
        ck_assert(wait_frozen("mail.service", false));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(mail);
        sd_bus_flush_close_unref(bus);
}
END_TEST

static void make_netns(void) {
        snprintf(netns, sizeof(netns), "standby-test-%s-%d", test_runner_id(), (int) getpid());
        run_ip("netns", "add", netns, NULL, NULL, NULL, NULL, NULL);
        /* A veth pair inside it (sb0 and its peer), both ends down. */
        run_ip("-n", netns, "link", "add", "sb0", "type", "veth", NULL);
}

/* Link and address events from rtnetlink, in a network namespace of the
 * test's own: a veth end going up thaws one unit, an IPv4 address on it
 * (documentation range, no traffic) thaws another. */
START_TEST(test_network_events) {
        if (!test_need_root_cgroup2())
                return;
        write_rule("50-up.rule", "[Match]\nEvent=link\nInterface=sb0\nChange=up\n[Action]\nThaw=net.service\n");
        write_rule("51-addr.rule", "[Match]\nEvent=address\nInterface=sb0\nFamily=ipv4\nChange=added\n"
                                   "[Action]\nThaw=addr.service\n");
        test_spawn_workload("net.service", "idle", 100, 1, NULL);
        test_spawn_workload("addr.service", "idle", 100, 1, NULL);
        make_netns();
        start_listener();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);

        run_ip("-n", netns, "addr", "add", "192.0.2.1/24", "dev", "sb0", NULL);
        ck_assert(wait_frozen("addr.service", false));
        ck_assert(test_frozen("net.service"));
        run_ip("-n", netns, "link", "set", "sb0", "up", NULL, NULL);
        ck_assert(wait_frozen("net.service", false));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
}
END_TEST

/* A reload asks the bus for each dbus-signal rule's match without waiting:
 * with the bus stopped (as hung), the listener, reloading, still thaws on
 * a netlink event. */
START_TEST(test_loop_reload_with_hung_bus) {
        if (!test_need_root_cgroup2())
                return;
        write_rule("50-up.rule", "[Match]\nEvent=link\nInterface=sb0\nChange=up\n[Action]\nThaw=net.service\n");
        test_spawn_workload("net.service", "idle", 100, 1, NULL);
        make_netns();
        start_listener();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        write_rule("40-sig.rule", "[Match]\nEvent=dbus-signal\nMatch=type='signal',interface='org.example.Push',"
                                  "member='NewMail'\n[Action]\nThaw=mail.service\n");
        ck_assert_int_eq(kill(dbus_pid, SIGSTOP), 0);
        ck_assert_int_eq(kill(listener_pid, SIGHUP), 0);
        bool reloading = wait_notify("RELOADING=1");
        if (reloading)
                run_ip("-n", netns, "link", "set", "sb0", "up", NULL, NULL);
        bool thawed = reloading && wait_frozen("net.service", false);
        ck_assert_int_eq(kill(dbus_pid, SIGCONT), 0);
        ck_assert_msg(reloading, "the listener did not begin the reload");
        ck_assert_msg(thawed, "a netlink event was not handled while a reload waited for a stopped bus");
        ck_assert_msg(wait_notify("READY=1"), "the reload never finished");
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
}
END_TEST

static pid_t spawn_mail_bus_service(void);

/* A reload sets the dbus-call monitor up again without waiting: with the
 * bus stopped (as hung), a netlink event still thaws while that setup is
 * pending, a second reload replaces it, and once the bus runs again the
 * monitor the last reload set up catches calls. */
START_TEST(test_loop_reload_with_hung_monitor) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;

        if (!test_need_root_cgroup2())
                return;
        write_rule("50-up.rule", "[Match]\nEvent=link\nInterface=sb0\nChange=up\n[Action]\nThaw=net.service\n");
        write_rule("80-call.rule", "[Match]\nEvent=dbus-call\nBusName=org.example.Mail\n[Action]\n"
                                   "Thaw=mail.service\nFor=1s\n");
        test_spawn_workload("net.service", "idle", 100, 1, NULL);
        spawn_mail_bus_service();
        make_netns();
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert_int_eq(kill(dbus_pid, SIGSTOP), 0);
        ck_assert_int_eq(kill(listener_pid, SIGHUP), 0);
        bool reloading = wait_notify("RELOADING=1");
        if (reloading)
                run_ip("-n", netns, "link", "set", "sb0", "up", NULL, NULL);
        bool thawed = reloading && wait_frozen("net.service", false);
        bool again = thawed && kill(listener_pid, SIGHUP) == 0 && wait_notify("RELOADING=1");
        ck_assert_int_eq(kill(dbus_pid, SIGCONT), 0);
        ck_assert_msg(reloading, "the listener did not begin the reload");
        ck_assert_msg(thawed, "a netlink event was not handled while the call monitor's setup waited for a stopped bus");
        ck_assert_msg(again, "the listener did not begin a second reload");
        ck_assert_msg(wait_notify("READY=1"), "the reload never finished");

        ck_assert(test_frozen("mail.service"));
        ck_assert_int_ge(sd_bus_call_method(bus, "org.example.Mail", "/org/standby/Bench", "org.standby.Bench", "Ping",
                                            &error, &reply, ""), 0);
        sd_bus_message_unref(reply);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* The monitor's setup is bounded: against a bus that stays stopped a reload
 * ends (READY=1) when its timer fails the setup, the listener stays up, and
 * the next reload, with the bus back, sets the monitor up again. */
START_TEST(test_loop_reload_monitor_timeout) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;

        if (!test_need_root_cgroup2())
                return;
        ck_assert_int_eq(setenv("STANDBY_LISTENER_CALL_MONITOR_TIMEOUT_USEC", "1000000", 1), 0);
        write_rule("80-call.rule", "[Match]\nEvent=dbus-call\nBusName=org.example.Mail\n[Action]\n"
                                   "Thaw=mail.service\nFor=1s\n");
        spawn_mail_bus_service();
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert_int_eq(kill(dbus_pid, SIGSTOP), 0);
        ck_assert_int_eq(kill(listener_pid, SIGHUP), 0);
        bool reloading = wait_notify("RELOADING=1");
        bool ended = reloading && wait_notify("READY=1");
        ck_assert_int_eq(kill(dbus_pid, SIGCONT), 0);
        ck_assert_msg(reloading, "the listener did not begin the reload");
        ck_assert_msg(ended, "the monitor's setup against a stopped bus did not end within its bound");
        ck_assert_int_eq(wait_listener_exit(0), -1);

        ck_assert_int_eq(kill(listener_pid, SIGHUP), 0);
        ck_assert_msg(wait_notify("READY=1"), "the second reload never finished");
        ck_assert(test_frozen("mail.service"));
        ck_assert_int_ge(sd_bus_call_method(bus, "org.example.Mail", "/org/standby/Bench", "org.standby.Bench", "Ping",
                                            &error, &reply, ""), 0);
        sd_bus_message_unref(reply);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* A netlink socket of the test's own in the namespace, joined to the link
 * and address groups: it sees every change a listener could be woken by. */
static int netns_watch(void) {
        char p[128];
        int fd, big = 4 << 20;

        snprintf(p, sizeof(p), "/run/netns/%s", netns);
        _cleanup_close_ int self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
        _cleanup_close_ int ns = open(p, O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(self, 0);
        ck_assert_int_ge(ns, 0);
        ck_assert_int_eq(setns(ns, CLONE_NEWNET), 0);
        fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
        ck_assert_int_ge(fd, 0);
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK,
                                  .nl_groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR };
        ck_assert_int_eq(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)), 0);
        ck_assert_int_eq(setns(self, CLONE_NEWNET), 0);
        return fd;
}

/* Reads what the watch has queued; returns the link and address messages
 * (an overrun would have lost some: it fails the test). */
static int netns_changes(int fd) {
        char buf[65536];
        int n = 0;

        for (;;) {
                ssize_t k = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
                if (k < 0) {
                        ck_assert_int_eq(errno, EAGAIN);
                        return n;
                }
                for (struct nlmsghdr *h = (struct nlmsghdr *) buf; NLMSG_OK(h, (size_t) k); h = NLMSG_NEXT(h, k))
                        n += h->nlmsg_type == RTM_NEWLINK || h->nlmsg_type == RTM_DELLINK ||
                             h->nlmsg_type == RTM_NEWADDR || h->nlmsg_type == RTM_DELADDR;
        }
}

/* Rounds of sb0 going up and down and an IPv4 address added and removed
 * (documentation range, no traffic): four changes each. Every ip(8) run has
 * returned, so the kernel has queued its messages, before this returns. */
static void churn_links(int rounds) {
        for (int i = 0; i < rounds; i++) {
                run_ip("-n", netns, "link", "set", "sb0", "up", NULL, NULL);
                run_ip("-n", netns, "addr", "add", "192.0.2.1/24", "dev", "sb0", NULL);
                run_ip("-n", netns, "addr", "del", "192.0.2.1/24", "dev", "sb0", NULL);
                run_ip("-n", netns, "link", "set", "sb0", "down", NULL, NULL);
        }
}

/* The listener joins only the rtnetlink groups its rules need: with no link
 * or address rule, a burst of link and address changes (seen by the test's
 * own socket in the namespace) does not wake it once; reloaded with a link
 * rule, the same burst is seen as events (so the burst was observable);
 * reloaded with an IPv4 address rule, link changes wake it no more; reloaded
 * without, nothing again. */
START_TEST(test_network_only_what_rules_need) {
        uint64_t before, after, events;
        int watch;

        if (!test_need_root_cgroup2())
                return;
        make_netns();
        watch = netns_watch();
        start_listener();
        sd_bus *bus = client();

        before = listener_settled_runs(bus);
        churn_links(5);
        after = listener_runs_after();
        ck_assert_int_ge(netns_changes(watch), 20);
        ck_assert_msg(after == before, "with no network rule, the listener ran %llu times in a burst of link changes",
                      (unsigned long long) (after - before));

        /* The positive control: a link rule sees the same burst. */
        write_rule("50-up.rule", "[Match]\nEvent=link\nInterface=sb0\n[Action]\nThaw=net.service\n");
        ck_assert_int_eq(kill(listener_pid, SIGHUP), 0);
        ck_assert(wait_notify("READY=1"));
        before = listener_settled_runs(bus);
        events = statistic(bus, "events");
        churn_links(5);
        after = listener_runs_after();
        ck_assert_int_ge(netns_changes(watch), 20);
        ck_assert_uint_gt(after, before);
        ck_assert_uint_eq(statistic(bus, "events") - events, 10); /* up, down: 5 times */

        /* An IPv4 address rule only: link changes do not wake it; an
         * address does, named by its interface. */
        ck_assert_int_eq(unlink_rule("50-up.rule"), 0);
        write_rule("51-addr.rule", "[Match]\nEvent=address\nInterface=sb0\nFamily=ipv4\nChange=added\n"
                                   "[Action]\nThaw=net.service\n");
        ck_assert_int_eq(kill(listener_pid, SIGHUP), 0);
        ck_assert(wait_notify("READY=1"));
        before = listener_settled_runs(bus);
        for (int i = 0; i < 5; i++) {
                run_ip("-n", netns, "link", "set", "sb0", "up", NULL, NULL);
                run_ip("-n", netns, "link", "set", "sb0", "down", NULL, NULL);
        }
        after = listener_runs_after();
        ck_assert_int_ge(netns_changes(watch), 10);
        ck_assert_msg(after == before, "with an address rule only, the listener ran %llu times for link changes",
                      (unsigned long long) (after - before));
        events = statistic(bus, "events");
        uint64_t matched = statistic(bus, "matched");
        run_ip("-n", netns, "addr", "add", "192.0.2.1/24", "dev", "sb0", NULL);
        (void) listener_runs_after();
        ck_assert_uint_eq(statistic(bus, "events") - events, 1);
        ck_assert_uint_eq(statistic(bus, "matched") - matched, 1);
        run_ip("-n", netns, "addr", "del", "192.0.2.1/24", "dev", "sb0", NULL);

        /* No network rule again: the groups are left. */
        ck_assert_int_eq(unlink_rule("51-addr.rule"), 0);
        ck_assert_int_eq(kill(listener_pid, SIGHUP), 0);
        ck_assert(wait_notify("READY=1"));
        before = listener_settled_runs(bus);
        churn_links(5);
        after = listener_runs_after();
        ck_assert_int_ge(netns_changes(watch), 20);
        ck_assert_msg(after == before, "after a reload without network rules, the listener ran %llu times",
                      (unsigned long long) (after - before));
        close(watch);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* Event=uevent: a network device added (in the test's own namespace, where
 * its uevents go) thaws the unit; other subsystems do not. */
START_TEST(test_uevent_rule) {
        if (!test_need_root_cgroup2())
                return;
        write_rule("55-hotplug.rule", "[Match]\nEvent=uevent\nSubsystem=net\nChange=add\n[Action]\nThaw=net.service\n");
        test_spawn_workload("net.service", "idle", 100, 1, NULL);
        make_netns();
        start_listener();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        run_ip("-n", netns, "link", "add", "hot0", "type", "veth", NULL);
        ck_assert(wait_frozen("net.service", false));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
}
END_TEST

/* An overrun of the netlink receive buffer loses events; the listener dumps
 * the state afresh and still sees that the link went up. */
START_TEST(test_network_overrun_resync) {
        if (!test_need_root_cgroup2())
                return;
        write_rule("50-up.rule", "[Match]\nEvent=link\nInterface=sb0\nChange=up\n[Action]\nThaw=net.service\n");
        test_spawn_workload("net.service", "idle", 100, 1, NULL);
        make_netns();
        setenv("STANDBY_LISTENER_NETLINK_RCVBUF", "4096", 1);
        start_listener();
        unsetenv("STANDBY_LISTENER_NETLINK_RCVBUF");
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);

        /* While it cannot read, far more than 4 KiB of events, the last being sb0 up. */
        ck_assert_int_eq(kill(listener_pid, SIGSTOP), 0);
        for (int i = 0; i < 20; i++) {
                char name[32];
                snprintf(name, sizeof(name), "flood%d", i);
                run_ip("-n", netns, "link", "add", name, "type", "veth", NULL);
        }
        run_ip("-n", netns, "link", "set", "sb0", "up", NULL, NULL);
        ck_assert_int_eq(kill(listener_pid, SIGCONT), 0);

        ck_assert(wait_frozen("net.service", false));
        sd_bus *bus = client();
        ck_assert_uint_ge(statistic(bus, "resyncs"), 1);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* A process's socket descriptors: their targets ("socket:[inode]") and,
 * with fds, their numbers. */
typedef struct SocketFd {
        char target[32];
        int fd;
} SocketFd;

static size_t socket_fds(pid_t pid, SocketFd *out, size_t max) {
        char path[64], target[32];
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        size_t n = 0;

        snprintf(path, sizeof(path), "/proc/%d/fd", (int) pid);
        if (opendir_at(AT_FDCWD, path, &d) < 0)
                return 0;
        while (n < max && (de = readdir(d))) {
                ssize_t k = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1);
                if (k > 0 && (target[k] = 0, strneq(target, "socket:", 7))) {
                        strcpy(out[n].target, target);
                        out[n++].fd = atoi(de->d_name);
                }
        }
        return n;
}

/* How many of the server's sockets the listener holds a duplicate of: the
 * same socket inode in both descriptor tables. Counting the listener's own
 * sockets instead would race with its transient ones (sd_notify's). */
static pid_t server_pid;

static int count_held(void) {
        SocketFd mine[64], theirs[64];
        size_t nm = socket_fds(listener_pid, mine, 64), nt = socket_fds(server_pid, theirs, 64);
        int n = 0;

        for (size_t i = 0; i < nm; i++)
                for (size_t j = 0; j < nt; j++)
                        if (streq(mine[i].target, theirs[j].target)) {
                                n++;
                                break;
                        }
        return n;
}

static bool holds_sockets(void *userdata) {
        return count_held() >= *(int *) userdata;
}

static bool holds_none(void *userdata) {
        return count_held() == 0;
}

static int tcp_connect(int port) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t) port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ck_assert_int_ge(fd, 0);
        /* The kernel completes the handshake even while the server is frozen. */
        ck_assert_int_eq(connect(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        return fd;
}

/* Sends a line and waits (bounded) for the server's echo. */
static bool echo(int fd, const char *line) {
        char buf[64] = {};
        struct pollfd p = { .fd = fd, .events = POLLIN };
        ck_assert_int_eq(write(fd, line, strlen(line)), (ssize_t) strlen(line));
        if (poll(&p, 1, 5000) != 1)
                return false;
        return read(fd, buf, sizeof(buf) - 1) == (ssize_t) strlen(line) && streq(buf, line);
}

/* Event=socket: an unmodified TCP server, frozen, is woken by a new client
 * and by data on a connection it already had; the listener holds its sockets
 * only while it is frozen. */
START_TEST(test_socket_wakes_server) {
        int port = 25000 + (int) (getpid() % 5000), tick, two = 2; /* below the ephemeral range */
        char portarg[16];

        if (!test_need_root_cgroup2())
                return;
        write_rule("60-srv.rule", "[Match]\nEvent=socket\nUnit=srv.service\n[Action]\nThaw=srv.service\nFor=1s\n");
        snprintf(portarg, sizeof(portarg), "%d", port);
        char *argv[] = { (char *) test_bin("standby-workload"), "echo-server", "--port", portarg, "--tick-fd", "3", NULL };
        server_pid = test_spawn("srv.service", argv, &tick);
        ck_assert_int_eq(test_ticks(tick, 1, 5 * USEC_PER_SEC), 1); /* listening */
        int a = tcp_connect(port);
        ck_assert(echo(a, "hello\n"));

        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        /* The listening socket and the connection to a. */
        ck_assert_msg(test_wait_for(holds_sockets, &two, 5 * USEC_PER_SEC), "listener holds %d sockets",
                      count_held());

        /* A new client: its handshake completes, its request wakes the server. */
        int b = tcp_connect(port);
        ck_assert(echo(b, "ping\n"));
        ck_assert(!test_frozen("srv.service"));
        /* The first event of the standby wrote cgroup.freeze before its
         * dispatch, and the listener stepped aside once, after that write,
         * not again after the dispatch's. */
        ck_assert_uint_eq(statistic(bus, "thaws"), 1);
        ck_assert_uint_eq(statistic(bus, "thawed_first"), 1);
        ck_assert_uint_eq(statistic(bus, "yields"), 1);
        ck_assert_msg(test_wait_for(holds_none, NULL, 5 * USEC_PER_SEC), "duplicates kept after the thaw");

        /* The window closes; the sockets are held again; data on the old
         * connection wakes it as well. */
        ck_assert(wait_frozen("srv.service", true));
        ck_assert(test_wait_for(holds_sockets, &two, 5 * USEC_PER_SEC));
        ck_assert(echo(a, "again\n"));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(test_wait_for(holds_none, NULL, 5 * USEC_PER_SEC));
        close(a);
        close(b);
        sd_bus_flush_close_unref(bus);
}
END_TEST

static bool saw_two_events(void *userdata) {
        return statistic(userdata, "events") >= 2;
}

static void send_input(int fd, int type, int code, int value) {
        struct input_event ev[2] = {
                { .type = (unsigned short) type, .code = (unsigned short) code, .value = value },
                { .type = EV_SYN, .code = SYN_REPORT, .value = 0 },
        };
        ck_assert_int_eq(write(fd, ev, sizeof(ev)), (ssize_t) sizeof(ev));
}

/* A lid as an evdev-format stream (a FIFO; this machine has no /dev/uinput)
 * whose opening ends standby, and standby entered with mail.service idle;
 * returns the stream's write end. */
static int lid_stream_in_standby(void) {
        char fifo[128], rule[512];

        snprintf(fifo, sizeof(fifo), "%s/lid-events", dir);
        ck_assert_int_eq(mkfifo(fifo, 0600), 0);
        snprintf(rule, sizeof(rule), "[Match]\nEvent=input\nDevice=%s\nSwitch=SW_LID\nValue=0\n[Action]\nExitStandby=yes\n",
                 fifo);
        write_rule("70-lid.rule", rule);
        sd_bus_flush_close_unref(standby_with_idle_mail());
        int fd = open(fifo, O_WRONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        return fd;
}

/* Event=input through an evdev-format stream (this machine has no
 * /dev/uinput): the lid closing does nothing, the lid opening ends standby. */
START_TEST(test_input_stream_lid) {
        if (!test_need_root_cgroup2())
                return;
        int fd = lid_stream_in_standby();
        send_input(fd, EV_SW, SW_LID, 1);  /* closed: no rule */
        send_input(fd, EV_KEY, KEY_A, 1);  /* another code: no rule */
        sd_bus *bus = client();
        /* The FIFO and the bus are separate sources: wait (bounded) until both
         * records have been read before judging what they did. */
        ck_assert(test_wait_for(saw_two_events, bus, 5 * USEC_PER_SEC));
        ck_assert_uint_eq(statistic(bus, "matched"), 0);
        ck_assert(test_frozen("mail.service"));

        send_input(fd, EV_SW, SW_LID, 0);  /* opened */
        ck_assert(wait_frozen("mail.service", false));
        ck_assert_uint_eq(statistic(bus, "exits"), 1);
        close(fd);
        sd_bus_flush_close_unref(bus);
}
END_TEST

static bool saw_resync(void *userdata) {
        return statistic(userdata, "resyncs") >= 1;
}

/* A device's buffer overran (SYN_DROPPED): the broken frame is ignored whole
 * (the lid opening in it is not taken: it may be half a frame), the overrun
 * is counted, and events after the frame are taken again. A FIFO has no
 * switch state to re-read; the re-read itself is the uinput test below. */
START_TEST(test_input_stream_dropped) {
        if (!test_need_root_cgroup2())
                return;
        int fd = lid_stream_in_standby();
        struct input_event broken[] = {
                { .type = EV_SYN, .code = SYN_DROPPED },
                { .type = EV_SW, .code = SW_LID, .value = 0 },
                { .type = EV_SYN, .code = SYN_REPORT },
        };
        ck_assert_int_eq(write(fd, broken, sizeof(broken)), (ssize_t) sizeof(broken));
        sd_bus *bus = client();
        ck_assert(test_wait_for(saw_resync, bus, 5 * USEC_PER_SEC));
        ck_assert_uint_eq(statistic(bus, "events"), 0);
        ck_assert(test_frozen("mail.service"));

        send_input(fd, EV_SW, SW_LID, 0); /* a whole frame again */
        ck_assert(wait_frozen("mail.service", false));
        ck_assert_uint_eq(statistic(bus, "exits"), 1);
        close(fd);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* A virtual input device through /dev/uinput. */
typedef struct TestDevice {
        struct libevdev *dev;
        struct libevdev_uinput *ui;
} TestDevice;

/* Creates it with the given (type, code) pairs; false, and the test says
 * skips (test_skip), where there is no /dev/uinput (or no root with cgroup v2). */
static bool uinput_open(TestDevice *d, const char *name, const unsigned (*codes)[2], size_t n) {
        *d = (TestDevice) {};
        if (access("/dev/uinput", W_OK) < 0)
                return test_skip("no /dev/uinput on this machine (the qemu recipe in shared/recipes has one)");
        if (!test_need_root_cgroup2())
                return false;
        d->dev = libevdev_new();
        ck_assert_ptr_nonnull(d->dev);
        libevdev_set_name(d->dev, name);
        for (size_t i = 0; i < n; i++)
                ck_assert_int_eq(libevdev_enable_event_code(d->dev, codes[i][0], codes[i][1], NULL), 0);
        ck_assert_int_eq(libevdev_uinput_create_from_device(d->dev, LIBEVDEV_UINPUT_OPEN_MANAGED, &d->ui), 0);
        return true;
}

static void uinput_close(TestDevice *d) {
        libevdev_uinput_destroy(d->ui);
        libevdev_free(d->dev);
}

/* The real-device overrun: the lid opens while the listener is stopped and
 * a flood of key events overruns its buffer, so the kernel drops the lid's
 * event; the listener re-reads the switch state and ends standby all the
 * same. Needs /dev/uinput. */
START_TEST(test_input_uinput_overrun_resync) {
        static const unsigned codes[][2] = { { EV_SW, SW_LID }, { EV_KEY, KEY_A } };
        TestDevice d;

        if (!uinput_open(&d, "standby-test-lid", codes, ELEMENTSOF(codes)))
                return;
        ck_assert_int_eq(libevdev_uinput_write_event(d.ui, EV_SW, SW_LID, 1), 0); /* closed */
        ck_assert_int_eq(libevdev_uinput_write_event(d.ui, EV_SYN, SYN_REPORT, 0), 0);
        write_rule("72-lid.rule",
                   "[Match]\nEvent=input\nDevice=standby-test-lid\nSwitch=SW_LID\nValue=0\n[Action]\nExitStandby=yes\n");
        sd_bus *bus = standby_with_idle_mail();

        ck_assert_int_eq(kill(listener_pid, SIGSTOP), 0);
        ck_assert_int_eq(libevdev_uinput_write_event(d.ui, EV_SW, SW_LID, 0), 0); /* opened... */
        ck_assert_int_eq(libevdev_uinput_write_event(d.ui, EV_SYN, SYN_REPORT, 0), 0);
        for (int i = 0; i < 4000; i++) { /* ...and lost in the overrun */
                ck_assert_int_eq(libevdev_uinput_write_event(d.ui, EV_KEY, KEY_A, i % 2), 0);
                ck_assert_int_eq(libevdev_uinput_write_event(d.ui, EV_SYN, SYN_REPORT, 0), 0);
        }
        ck_assert_int_eq(kill(listener_pid, SIGCONT), 0);
        ck_assert(wait_frozen("mail.service", false));
        ck_assert_uint_ge(statistic(bus, "resyncs"), 1);
        sd_bus_flush_close_unref(bus);
        uinput_close(&d);
}
END_TEST

/* The real-device path: a virtual power button through /dev/uinput. */
START_TEST(test_input_uinput_power_button) {
        static const unsigned codes[][2] = { { EV_KEY, KEY_POWER } };
        TestDevice d;

        if (!uinput_open(&d, "standby-test-power", codes, ELEMENTSOF(codes)))
                return;
        write_rule("71-power.rule",
                   "[Match]\nEvent=input\nDevice=standby-test-power\nKey=KEY_POWER\nValue=1\n[Action]\nExitStandby=yes\n");
        sd_bus_flush_close_unref(standby_with_idle_mail());
        ck_assert_int_eq(libevdev_uinput_write_event(d.ui, EV_KEY, KEY_POWER, 1), 0);
        ck_assert_int_eq(libevdev_uinput_write_event(d.ui, EV_SYN, SYN_REPORT, 0), 0);
        ck_assert(wait_frozen("mail.service", false));
        uinput_close(&d);
}
END_TEST


/* A standby-workload bus-service in mail.service, owning org.example.Mail
 * on the fixture's bus; returns its pid once it ticked (it serves). The
 * tick pipe stays open: the service still writes to it. */
static pid_t spawn_mail_bus_service(void) {
        int tick;
        char *argv[] = { (char *) test_bin("standby-workload"), "bus-service", "--bus-address", bus_address,
                         "--bus-name", "org.example.Mail", "--tick-fd", "3", NULL };
        pid_t pid = test_spawn("mail.service", argv, &tick);
        ck_assert_msg(test_ticks(tick, 1, 10 * USEC_PER_SEC) == 1, "bus-service did not start");
        return pid;
}

/* Event=dbus-call: a call to a frozen service's bus name thaws it in time for
 * it to answer; calls to other names do not. */
START_TEST(test_dbus_call_thaws_owner) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        const char *answer;

        if (!test_need_root_cgroup2())
                return;
        write_rule("80-call.rule", "[Match]\nEvent=dbus-call\nBusName=org.example.Mail\n[Action]\n"
                                   "Thaw=mail.service\nFor=1s\n");
        spawn_mail_bus_service();

        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert(test_frozen("mail.service"));

        /* The caller's timeout (5 s) is far above a thaw: the answer comes. */
        ck_assert_int_ge(sd_bus_call_method(bus, "org.example.Mail", "/org/standby/Bench", "org.standby.Bench", "Ping",
                                            &error, &reply, ""), 0);
        ck_assert_int_ge(sd_bus_message_read(reply, "s", &answer), 0);
        ck_assert_str_eq(answer, "pong");
        ck_assert_uint_eq(statistic(bus, "thaws"), 1);
        sd_bus_message_unref(reply);
        reply = NULL;
        ck_assert(wait_frozen("mail.service", true));

        /* A call larger than the listener's read buffer (its header comes
         * first, the body is skipped as it arrives): Ping takes no argument,
         * so the woken service answers with an error, but it answers. */
        _cleanup_free_ char *big = malloc(200 * 1024 + 1);
        ck_assert_ptr_nonnull(big);
        memset(big, 'x', 200 * 1024);
        big[200 * 1024] = 0;
        ck_assert_int_lt(sd_bus_call_method(bus, "org.example.Mail", "/org/standby/Bench", "org.standby.Bench", "Ping",
                                            &error, NULL, "s", big), 0);
        ck_assert_msg(sd_bus_error_has_name(&error, SD_BUS_ERROR_INVALID_ARGS), "%s", strna(error.name));
        sd_bus_error_free(&error);
        ck_assert_uint_eq(statistic(bus, "thaws"), 2);
        ck_assert(wait_frozen("mail.service", true));

        /* The monitor kept its place in the stream: the next call still
         * thaws, and after its write the listener stepped aside for the
         * service. (The first call may have come before the listener read
         * the enter's journal, and was found unread when it did: a thaw
         * outside any event's dispatch, which yields nothing.) */
        uint64_t yields = statistic(bus, "yields");
        ck_assert_int_ge(sd_bus_call_method(bus, "org.example.Mail", "/org/standby/Bench", "org.standby.Bench", "Ping",
                                            &error, &reply, ""), 0);
        ck_assert_uint_eq(statistic(bus, "thaws"), 3);
        ck_assert_uint_eq(statistic(bus, "yields"), yields + 1);
        sd_bus_message_unref(reply);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* When the bus goes away the listener does not stay up deaf to every D-Bus
 * event: it exits with a failure, for the service manager to start it again
 * (Restart=on-failure), and the new one reconnects. With call_rule the
 * dbus-call monitor may be the first to tell, else the connection with its
 * object. */
static void check_bus_loss_exits(bool call_rule) {
        if (call_rule)
                write_rule("80-call.rule", "[Match]\nEvent=dbus-call\nBusName=org.example.Mail\n[Action]\n"
                                           "Thaw=mail.service\n");
        start_listener();
        test_stop_pid(dbus_pid);
        dbus_pid = 0;
        int status = wait_listener_exit(5 * USEC_PER_SEC);
        ck_assert_msg(status != -1, "the listener still runs 5 s after the bus went away");
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_FAILURE_GENERIC,
                      "the listener ended with wait status 0x%x, not exit status %d", (unsigned) status,
                      EXIT_FAILURE_GENERIC);
}

START_TEST(test_bus_loss_exits) {
        if (test_need_root_cgroup2())
                check_bus_loss_exits(false);
}
END_TEST

START_TEST(test_bus_loss_exits_with_monitor) {
        if (test_need_root_cgroup2())
                check_bus_loss_exits(true);
}
END_TEST

/* Whether some socket of pid has bytes its owner has not read. */
static bool has_unread(void *userdata) {
        pid_t pid = *(pid_t *) userdata;
        _cleanup_close_ int pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        SocketFd sockets[64];
        size_t n = pidfd >= 0 ? socket_fds(pid, sockets, 64) : 0;

        for (size_t i = 0; i < n; i++) {
                _cleanup_close_ int fd = (int) syscall(SYS_pidfd_getfd, pidfd, sockets[i].fd, 0);
                int unread = 0;
                if (fd >= 0 && ioctl(fd, FIONREAD, &unread) == 0 && unread > 0)
                        return true;
        }
        return false;
}

static int on_pong(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        *(int *) userdata = sd_bus_message_is_method_error(m, NULL) ? -1 : 1;
        return 0;
}

/* An Event=dbus-call rule for org.example.Mail that thaws mail.service for
 * window, the service (its process in *ret_service), the listener and a
 * client of the bus: returns the client. */
static sd_bus *start_mail_call_rule(const char *window, pid_t *ret_service) {
        char rule[256];

        snprintf(rule, sizeof(rule), "[Match]\nEvent=dbus-call\nBusName=org.example.Mail\n[Action]\n"
                                     "Thaw=mail.service\nFor=%s\n", window);
        write_rule("80-call.rule", rule);
        *ret_service = spawn_mail_bus_service();
        start_listener();
        return client();
}

/* A D-Bus call that reached the service before standby began, and that it
 * had not read when it froze (it was stopped, SIGSTOP), is answered: once
 * standby is entered the listener finds the call waiting in the frozen
 * service's socket and thaws it. */
START_TEST(test_dbus_call_unread_at_enter) {
        sd_bus_slot *slot = NULL;
        int answered = 0;

        if (!test_need_root_cgroup2())
                return;
        pid_t service;
        sd_bus *bus = start_mail_call_rule("1s", &service);

        ck_assert_int_eq(kill(service, SIGSTOP), 0);
        ck_assert(test_wait_for(is_stopped, &service, 5 * USEC_PER_SEC));
        ck_assert_int_ge(sd_bus_call_method_async(bus, &slot, "org.example.Mail", "/org/standby/Bench", "org.standby.Bench",
                                                  "Ping", on_pong, &answered, ""), 0);
        ck_assert_int_ge(sd_bus_flush(bus), 0);
        ck_assert_msg(test_wait_for(has_unread, &service, 5 * USEC_PER_SEC), "the call never reached the service");

        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert_int_eq(kill(service, SIGCONT), 0); /* it stays frozen: the signal waits */

        /* answered is set by on_pong(), from within sd_bus_process(). */
        ck_assert_msg(test_bus_wait_answered(bus, &answered, 5 * USEC_PER_SEC),
                      "the call was not answered during standby");
        ck_assert_int_eq(answered, 1);
        ck_assert_uint_ge(statistic(bus, "replayed"), 1);
        sd_bus_slot_unref(slot);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* standby-manager freezes a service that an event had thawed for a window,
 * and a call reaches it, both while the listener is stopped: the call is
 * judged by the journal as it is now, delivered to a frozen unit, and
 * thaws it. Judged by the listener's view before the change (the service
 * running, its window open), it would be left unread in a frozen service. */
START_TEST(test_dbus_call_with_its_freeze_in_one_wakeup) {
        sd_bus_slot *slot = NULL;
        int answered = 0;

        if (!test_need_root_cgroup2())
                return;
        pid_t service;
        sd_bus *bus = start_mail_call_rule("60s", &service);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert_int_ge(sd_bus_call_method(bus, "org.example.Mail", "/org/standby/Bench", "org.standby.Bench", "Ping",
                                            NULL, NULL, ""), 0);
        ck_assert(wait_statistic(bus, "records", 1, 5 * USEC_PER_SEC)); /* thawed, in the journal too */
        ck_assert(!test_frozen("mail.service"));

        ck_assert_int_eq(kill(listener_pid, SIGSTOP), 0);
        ck_assert(test_wait_for(is_stopped, &listener_pid, 5 * USEC_PER_SEC));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "freeze", test_cgpath("mail.service"), NULL), EXIT_OK);
        ck_assert(test_frozen("mail.service"));
        ck_assert_int_ge(sd_bus_call_method_async(bus, &slot, "org.example.Mail", "/org/standby/Bench", "org.standby.Bench",
                                                  "Ping", on_pong, &answered, ""), 0);
        ck_assert_int_ge(sd_bus_flush(bus), 0);
        ck_assert_msg(test_wait_for(has_unread, &service, 5 * USEC_PER_SEC), "the call never reached the service");
        /* The bus handles one message whole, its monitors' copies too,
         * before the next: once this is answered, the listener's copy waits. */
        ck_assert_int_ge(sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                            "GetId", NULL, NULL, ""), 0);
        ck_assert_int_eq(kill(listener_pid, SIGCONT), 0);

        ck_assert_msg(test_bus_wait_answered(bus, &answered, 5 * USEC_PER_SEC),
                      "the call to the frozen service was not answered");
        ck_assert_int_eq(answered, 1);
        ck_assert_uint_eq(statistic(bus, "thaws"), 2);
        sd_bus_slot_unref(slot);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

static bool mail_unowned(void *userdata) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        int r = sd_bus_call_method(userdata, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                   "GetNameOwner", &error, NULL, "s", "org.example.Mail");
        bool unowned = r < 0 && sd_bus_error_has_name(&error, "org.freedesktop.DBus.Error.NameHasNoOwner");
        sd_bus_error_free(&error);
        return unowned;
}

/* The listener holds a duplicate of a frozen owner's bus connection; the
 * owner killed (SIGKILL reaches a frozen process), the duplicate goes with
 * it, and the bus sees the connection close and frees the name at once,
 * with nothing else changing: a held one would keep the name owned, and
 * a restarted service could not take it. */
START_TEST(test_dbus_call_owner_killed_frees_its_name) {
        if (!test_need_root_cgroup2())
                return;
        pid_t service;
        sd_bus *bus = start_mail_call_rule("1s", &service);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        (void) statistic(bus, "events"); /* the journal change is taken before a call: the connection held */
        ck_assert(test_frozen("mail.service"));
        ck_assert(!mail_unowned(bus));
        server_pid = service;
        ck_assert_int_eq(count_held(), 1); /* its bus connection, once */

        ck_assert_int_eq(kill(service, SIGKILL), 0);
        ck_assert_msg(test_wait_for(mail_unowned, bus, 5 * USEC_PER_SEC), "the killed owner's name stayed owned");
        server_pid = 0;
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* Who may borrow the listener: root or Group= as the bus saw the
 * caller's connection, nothing that a process sends without a connection. */

/* A child that connects to the bus as uid 65534 with the groups at_connect,
 * then (its saved uid 0 lets it) takes the groups at_call before it calls
 * method (Push, or GetStatistics); so that the caller's credentials at
 * connect and in /proc when the call is handled differ. Returns 0 when the
 * call was allowed, 1 when denied with AccessDenied, more on a failure. */
static int call_as_nobody(const char *method, const gid_t *at_connect, int n_connect, const gid_t *at_call,
                          int n_call) {
        int status;
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                sd_bus_error error = SD_BUS_ERROR_NULL;
                sd_bus *bus = NULL;
                int r;

                if (setgroups((size_t) n_connect, at_connect) < 0 || setresgid(65534, 65534, 65534) < 0 ||
                    setresuid(65534, 65534, 0) < 0)
                        _exit(2);
                if (sd_bus_new(&bus) < 0 || sd_bus_set_address(bus, bus_address) < 0 ||
                    sd_bus_set_bus_client(bus, true) < 0 || sd_bus_start(bus) < 0)
                        _exit(3);
                if (setresuid(-1, 0, -1) < 0 || setgroups((size_t) n_call, at_call) < 0 ||
                    setresuid(65534, 65534, 65534) < 0)
                        _exit(4);
                if (streq(method, "Push"))
                        r = sd_bus_call_method(bus, "org.standby.Listener1", "/org/standby/Listener1",
                                               "org.standby.Listener1", "Push", &error, NULL, "ss", "mail.service", "test");
                else
                        r = sd_bus_call_method(bus, "org.standby.Listener1", "/org/standby/Listener1",
                                               "org.standby.Listener1", method, &error, NULL, "");
                _exit(r >= 0 ? 0 : sd_bus_error_has_name(&error, SD_BUS_ERROR_ACCESS_DENIED) ? 1 : 5);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status), "the caller died (0x%x)", (unsigned) status);
        return WEXITSTATUS(status);
}

/* Group=users; standby entered with an idle mail.service; returns the gid. */
static gid_t standby_with_group(void) {
        struct group *g = getgrnam("users");
        ck_assert_msg(g, "this test needs the group \"users\"");
        test_write_config("Group=users\n");
        sd_bus_flush_close_unref(standby_with_idle_mail());
        return g->gr_gid;
}

/* In standby_with_group(): a push as nobody, in the group at_connect when
 * it connects and at_call when it calls, is refused (want 1: mail.service
 * stays frozen) or let in (want 0: it is thawed); what says which failed. */
static void push_as_nobody(gid_t at_connect, gid_t at_call, int want, const char *what) {
        int r = call_as_nobody("Push", &at_connect, 1, &at_call, 1);
        ck_assert_msg(r == want, "%s (%d)", what, r);
        ck_assert(test_frozen("mail.service") == (want == 1));
}

/* A non-root caller in Group= may push; one outside it may not. */
START_TEST(test_push_group_member) {
        if (!test_need_root_cgroup2())
                return;
        gid_t users = standby_with_group(), other = 65534;

        push_as_nobody(other, other, 1, "a caller outside the group was let in");
        push_as_nobody(users, users, 0, "a caller in the group was refused");
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
}
END_TEST

/* The verdict is the bus's credentials of the connection, not what /proc
 * says of the caller's PID when the call is handled (which may by then be
 * another process): a caller that was in the group when it connected and
 * left it since is let in; one that joined it after connecting is not. */
START_TEST(test_push_judged_by_bus_creds) {
        if (!test_need_root_cgroup2())
                return;
        gid_t users = standby_with_group(), other = 65534;

        push_as_nobody(other, users, 1, "a caller that joined the group after connecting was let in");
        push_as_nobody(users, other, 0, "a caller in the group when it connected was refused");
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
}
END_TEST

/* The statistics are for root and Group= only. */
START_TEST(test_statistics_access) {
        if (!test_need_root_cgroup2())
                return;
        gid_t users = standby_with_group(), other = 65534;

        ck_assert_int_eq(call_as_nobody("GetStatistics", &other, 1, &other, 1), 1);
        ck_assert_int_eq(call_as_nobody("GetStatistics", &users, 1, &users, 1), 0);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
}
END_TEST

static int count_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        int *counts = userdata; /* [allowed, denied, other] */
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        counts[!e ? 0 : sd_bus_error_has_name(e, SD_BUS_ERROR_ACCESS_DENIED) ? 1 : 2]++;
        return 0;
}

/* A child that connects as nobody in group and sends n pushes at once,
 * before any answer (each waits on the listener's question to the bus
 * about this new caller); returns how many were allowed (in the low byte)
 * and denied (times 16), or 255 on a failure. */
static int pipelined_pushes_as_nobody(gid_t group, int n) {
        int status;
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                int counts[3] = {};
                sd_bus *bus = NULL;

                if (setgroups(1, &group) < 0 || setresgid(65534, 65534, 65534) < 0 ||
                    setresuid(65534, 65534, 65534) < 0)
                        _exit(255);
                if (sd_bus_new(&bus) < 0 || sd_bus_set_address(bus, bus_address) < 0 ||
                    sd_bus_set_bus_client(bus, true) < 0 || sd_bus_start(bus) < 0)
                        _exit(255);
                for (int i = 0; i < n; i++)
                        if (sd_bus_call_method_async(bus, NULL, "org.standby.Listener1", "/org/standby/Listener1",
                                                     "org.standby.Listener1", "Push", count_reply, counts, "ss",
                                                     "other.service", "test") < 0)
                                _exit(255);
                for (usec_t deadline = now_usec(CLOCK_MONOTONIC) + 5 * USEC_PER_SEC;
                     counts[0] + counts[1] + counts[2] < n;) {
                        int t = deadline_poll_timeout(deadline);
                        if (t == 0 || sd_bus_process(bus, NULL) < 0)
                                _exit(255);
                        (void) sd_bus_wait(bus, (uint64_t) t * USEC_PER_MSEC);
                }
                _exit(counts[2] ? 255 : counts[0] + 16 * counts[1]);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status), "the caller died (0x%x)", (unsigned) status);
        return WEXITSTATUS(status);
}

static int on_marker(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        *(bool *) userdata = true;
        return 0;
}

static bool all_read(void *userdata) {
        return !has_unread(userdata);
}

/* The listener asks the bus for a new caller's credentials without waiting
 * for the answer: calls that come meanwhile, from that caller and others,
 * are each judged and answered once it comes, in whatever order; and while
 * the answer does not come (the bus stopped once the listener has read a
 * new caller's push), a netlink event thaws its unit. */
START_TEST(test_push_pipelined_new_callers) {
        int sync[2], status;
        bool marked = false;

        if (!test_need_root_cgroup2())
                return;
        write_rule("50-up.rule", "[Match]\nEvent=link\nInterface=sb0\nChange=up\n[Action]\nThaw=net.service\n");
        test_spawn_workload("net.service", "idle", 100, 1, NULL);
        make_netns();
        gid_t users = standby_with_group(), other = 65534;

        ck_assert_int_eq(pipelined_pushes_as_nobody(other, 8), 8 * 16);
        ck_assert_int_eq(pipelined_pushes_as_nobody(users, 8), 8);

        sd_bus *bus = client();
        ck_assert_int_ge(sd_bus_match_signal(bus, NULL, NULL, "/org/example", "org.example.Test", "Sent", on_marker,
                                             &marked), 0);
        ck_assert_int_eq(pipe2(sync, O_CLOEXEC), 0);
        ck_assert_int_eq(kill(listener_pid, SIGSTOP), 0);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                sd_bus *ub = NULL;
                char c;
                close(sync[1]);
                if (setgroups(1, &users) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                        _exit(2);
                if (sd_bus_new(&ub) < 0 || sd_bus_set_address(ub, bus_address) < 0 || sd_bus_set_bus_client(ub, true) < 0 ||
                    sd_bus_start(ub) < 0)
                        _exit(3);
                if (sd_bus_call_method_async(ub, NULL, "org.standby.Listener1", "/org/standby/Listener1",
                                             "org.standby.Listener1", "Push", NULL, NULL, "ss", "other.service", "test") < 0 ||
                    sd_bus_emit_signal(ub, "/org/example", "org.example.Test", "Sent", "") < 0 || sd_bus_flush(ub) < 0)
                        _exit(4);
                (void) !read(sync[0], &c, 1); /* connected until the test is done */
                _exit(0);
        }
        close(sync[0]);
        /* The marker is routed after the push: the push waits in the
         * listener's socket. */
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC;
        while (!marked && now_usec(CLOCK_MONOTONIC) < deadline)
                if (sd_bus_process(bus, NULL) == 0)
                        (void) sd_bus_wait(bus, 100 * USEC_PER_MSEC);
        ck_assert_msg(marked, "the caller's marker never came");
        ck_assert_int_eq(kill(dbus_pid, SIGSTOP), 0);
        ck_assert_int_eq(kill(listener_pid, SIGCONT), 0);
        /* The listener has read the push, and so asked the bus about its
         * caller, before the link goes up. */
        bool read_all = test_wait_for(all_read, &listener_pid, 10 * USEC_PER_SEC);
        if (read_all)
                run_ip("-n", netns, "link", "set", "sb0", "up", NULL, NULL);
        bool thawed = read_all && wait_frozen("net.service", false);
        ck_assert_int_eq(kill(dbus_pid, SIGCONT), 0);
        close(sync[1]);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(read_all, "the listener did not read the push");
        ck_assert_msg(thawed, "a netlink event was not handled while a caller's credentials were asked of a stopped bus");
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the caller: 0x%x", (unsigned) status);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

static int note_error(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        *(char **) userdata = strdup(e ? e->name : "");
        return 0;
}

/* Waiting for the bus's word on new callers is shared fairly: a user whose
 * one connection sends 200 calls back to back, all in the listener's queue
 * before any answer (the listener stopped meanwhile), takes one place; a
 * root caller behind them is served, not answered LimitsExceeded. */
START_TEST(test_push_creds_one_place_per_sender) {
        bool marked = false;
        char *root_error = NULL;
        int status;

        if (!test_need_root_cgroup2())
                return;
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_ge(sd_bus_match_signal(bus, NULL, NULL, "/org/example", "org.example.Test", "Sent", on_marker,
                                             &marked), 0);
        ck_assert_int_eq(kill(listener_pid, SIGSTOP), 0);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                int counts[3] = {};
                sd_bus *ub = NULL;
                if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                        _exit(2);
                if (sd_bus_new(&ub) < 0 || sd_bus_set_address(ub, bus_address) < 0 || sd_bus_set_bus_client(ub, true) < 0 ||
                    sd_bus_start(ub) < 0)
                        _exit(3);
                for (int i = 0; i < 200; i++)
                        if (sd_bus_call_method_async(ub, NULL, "org.standby.Listener1", "/org/standby/Listener1",
                                                     "org.standby.Listener1", "Push", count_reply, counts, "ss",
                                                     "mail.service", "test") < 0)
                                _exit(4);
                /* Routed after the calls (one sender, in order): when the
                 * test sees it, they wait in the listener's queue. */
                if (sd_bus_emit_signal(ub, "/org/example", "org.example.Test", "Sent", "") < 0 || sd_bus_flush(ub) < 0)
                        _exit(5);
                for (usec_t deadline = now_usec(CLOCK_MONOTONIC) + 20 * USEC_PER_SEC; counts[0] + counts[1] + counts[2] < 200;) {
                        int t = deadline_poll_timeout(deadline);
                        if (t == 0 || sd_bus_process(ub, NULL) < 0)
                                _exit(6);
                        (void) sd_bus_wait(ub, (uint64_t) t * USEC_PER_MSEC);
                }
                _exit(counts[0] ? 7 : 0); /* nobody is never allowed */
        }
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC;
        while (!marked && now_usec(CLOCK_MONOTONIC) < deadline)
                if (sd_bus_process(bus, NULL) == 0)
                        (void) sd_bus_wait(bus, 100 * USEC_PER_MSEC);
        ck_assert_msg(marked, "the flood's marker never came");
        ck_assert_int_ge(sd_bus_call_method_async(bus, NULL, "org.standby.Listener1", "/org/standby/Listener1",
                                                  "org.standby.Listener1", "GetStatistics", note_error, &root_error, ""),
                         0);
        ck_assert_int_ge(sd_bus_flush(bus), 0);
        ck_assert_int_eq(kill(listener_pid, SIGCONT), 0);
        deadline = now_usec(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC;
        while (!root_error && now_usec(CLOCK_MONOTONIC) < deadline)
                if (sd_bus_process(bus, NULL) == 0)
                        (void) sd_bus_wait(bus, 100 * USEC_PER_MSEC);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the flooding caller: 0x%x", (unsigned) status);
        ck_assert_msg(root_error, "root's call was never answered");
        ck_assert_msg(streq(root_error, ""), "root's call behind another user's flood: %s", root_error);
        free(root_error);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* Replaces the fixture's bus by one at the same address whose policy also
 * holds extra (a <policy> element or more). */
static void restart_dbus_with(const char *extra) {
        char conf[512], addr_arg[600], line[512] = {};
        int out[2];

        test_stop_pid(dbus_pid);
        dbus_pid = 0;
        (void) unlink(bus_address + strlen("unix:path="));
        snprintf(conf, sizeof(conf), "%s/dbus-policy.conf", dir);
        FILE *f = fopen(conf, "we");
        ck_assert_ptr_nonnull(f);
        fprintf(f, "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
                   " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
                   "<busconfig><type>system</type><listen>unix:tmpdir=/tmp</listen><auth>EXTERNAL</auth>\n"
                   "<policy context=\"default\"><allow user=\"*\"/><allow own=\"*\"/>"
                   "<allow send_destination=\"*\"/><allow receive_sender=\"*\"/></policy>\n%s\n</busconfig>\n",
                extra);
        fclose(f);
        snprintf(addr_arg, sizeof(addr_arg), "--address=%s", bus_address);
        ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
        dbus_pid = fork();
        ck_assert_int_ge(dbus_pid, 0);
        if (dbus_pid == 0) {
                char confarg[600];
                snprintf(confarg, sizeof(confarg), "--config-file=%s", conf);
                dup2(out[1], 1);
                execlp("dbus-daemon", "dbus-daemon", confarg, addr_arg, "--nofork", "--print-address=1", NULL);
                _exit(127);
        }
        close(out[1]);
        struct pollfd p = { .fd = out[0], .events = POLLIN };
        ck_assert_msg(poll(&p, 1, 10000) == 1 && read(out[0], line, sizeof(line) - 1) > 0, "dbus-daemon did not start");
        close(out[0]);
}

/* In a child as uid 65534: calls org.example.Mail's method; returns the
 * bus error's name (or "" when it was answered). */
static char *call_mail_as_nobody(const char *method) {
        int p[2], status;
        char name[256] = {};

        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                sd_bus_error error = SD_BUS_ERROR_NULL;
                sd_bus *bus = NULL;
                if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                        _exit(2);
                if (sd_bus_new(&bus) < 0 || sd_bus_set_address(bus, bus_address) < 0 ||
                    sd_bus_set_bus_client(bus, true) < 0 || sd_bus_start(bus) < 0)
                        _exit(3);
                if (sd_bus_call_method(bus, "org.example.Mail", "/org/standby/Bench", "org.standby.Bench", method, &error,
                                       NULL, "") < 0 && error.name)
                        (void) !write(p[1], error.name, strlen(error.name));
                _exit(0);
        }
        close(p[1]);
        ck_assert_int_ge(read(p[0], name, sizeof(name) - 1), 0);
        close(p[0]);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the caller failed (0x%x)", (unsigned) status);
        return strdup(name);
}

static bool saw_call_judged(void *userdata) {
        uint64_t undelivered = statistic(userdata, "undelivered"), thaws = statistic(userdata, "thaws");
        return (undelivered != UINT64_MAX && undelivered >= 1) || thaws >= 1;
}

/* Event=dbus-call fires only on calls the bus delivered: a call its policy
 * refuses (the monitor sees it all the same) wakes nothing; the same method
 * called by one the policy lets through does. */
START_TEST(test_dbus_call_refused_by_policy) {
        if (!test_need_root_cgroup2())
                return;
        restart_dbus_with("<policy context=\"default\"><deny send_destination=\"org.example.Mail\" "
                          "send_interface=\"org.standby.Bench\" send_member=\"Secret\"/></policy>\n"
                          "<policy user=\"root\"><allow send_destination=\"org.example.Mail\" "
                          "send_interface=\"org.standby.Bench\" send_member=\"Secret\"/></policy>");
        write_rule("80-call.rule", "[Match]\nEvent=dbus-call\nBusName=org.example.Mail\n[Action]\nThaw=mail.service\n");
        spawn_mail_bus_service();
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert(test_frozen("mail.service"));

        _cleanup_free_ char *refused = call_mail_as_nobody("Secret");
        ck_assert_str_eq(refused, SD_BUS_ERROR_ACCESS_DENIED);
        ck_assert_msg(test_wait_for(saw_call_judged, bus, 5 * USEC_PER_SEC), "the listener never judged the call");
        ck_assert_msg(statistic(bus, "thaws") == 0, "a call the bus refused thawed the unit");
        ck_assert_uint_eq(statistic(bus, "undelivered"), 1);
        ck_assert(test_frozen("mail.service"));

        /* Root may: delivered, it thaws the service, which answers (it has
         * no such method). */
        sd_bus_error error = SD_BUS_ERROR_NULL;
        ck_assert_int_lt(sd_bus_call_method(bus, "org.example.Mail", "/org/standby/Bench", "org.standby.Bench", "Secret",
                                            &error, NULL, ""), 0);
        ck_assert_msg(sd_bus_error_has_name(&error, SD_BUS_ERROR_UNKNOWN_METHOD), "%s", strna(error.name));
        sd_bus_error_free(&error);
        ck_assert_uint_eq(statistic(bus, "thaws"), 1);
        ck_assert_uint_eq(statistic(bus, "undelivered"), 1);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* A method call's header, forged: what anyone who can connect to a
 * service can write into its socket. The first 16 bytes are the fixed
 * header; then DESTINATION=org.example.Mail. Returns its size. */
static size_t forged_call(uint8_t *m) {
        static const char dest[] = "org.example.Mail";
        memset(m, 0, 64);
        m[0] = 'l', m[1] = 1, m[3] = 1;        /* little-endian method call, version 1 */
        m[8] = 1;                              /* serial 1 */
        m[12] = 4 + 4 + sizeof(dest);          /* the fields' length */
        m[16] = 6, m[17] = 1, m[18] = 's';     /* DESTINATION, signature "s" */
        m[20] = sizeof(dest) - 1;
        memcpy(m + 24, dest, sizeof(dest));
        return 48;
}

/* At enter, a frozen service's unread D-Bus calls wake it; bytes that look
 * like one, written by a client into a connection to the service's own
 * socket, are not a call the bus delivered and wake nothing. */
START_TEST(test_forged_call_at_enter) {
        int port = 30000 + (int) (getpid() % 5000), tick;
        char portarg[16];
        uint8_t m[64];

        if (!test_need_root_cgroup2())
                return;
        write_rule("80-call.rule", "[Match]\nEvent=dbus-call\nBusName=org.example.Mail\n[Action]\nThaw=mail.service\n");
        snprintf(portarg, sizeof(portarg), "%d", port);
        char *argv[] = { (char *) test_bin("standby-workload"), "echo-server", "--port", portarg, "--tick-fd", "3", NULL };
        pid_t server = test_spawn("mail.service", argv, &tick);
        ck_assert_int_eq(test_ticks(tick, 1, 5 * USEC_PER_SEC), 1); /* listening */
        int c = tcp_connect(port);
        ck_assert(echo(c, "hello\n")); /* accepted: the connection is the server's */
        start_listener();
        sd_bus *bus = client();

        ck_assert_int_eq(kill(server, SIGSTOP), 0);
        ck_assert(test_wait_for(is_stopped, &server, 5 * USEC_PER_SEC));
        size_t size = forged_call(m);
        ck_assert_int_eq(write(c, m, size), (ssize_t) size);
        ck_assert(test_wait_for(has_unread, &server, 5 * USEC_PER_SEC));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert_int_eq(kill(server, SIGCONT), 0); /* it stays frozen: the signal waits */

        /* The journal change is taken before this call is. */
        ck_assert_msg(statistic(bus, "replayed") == 0, "forged bytes in a client's connection woke the unit");
        ck_assert(test_frozen("mail.service"));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        close(c);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* A spoofed bus (hold_spoofed_bus()): the write end of the connection, in
 * the holder, and whether a forged call goes into it at once. */
typedef struct SpoofedBus {
        int ready; /* the holder writes the write end's fd number here */
        bool forge;
} SpoofedBus;

/* As uid 65534, in the mail.service cgroup: in a user and mount namespace of
 * its own (which any user may make), a tmpfs over the bus's directory and a
 * socket bound at the bus's path there; connected to it, and (with forge) a
 * forged call to org.example.Mail written into that connection, unread. The
 * connection names the bus's address as its peer, as a real one does. Then
 * it reports the write end's fd number and waits to be killed. */
static void hold_spoofed_bus(void *userdata) {
        const SpoofedBus *sb = userdata;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int l, c, s;
        uint8_t m[64];

        if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0 ||
            prctl(PR_SET_DUMPABLE, 1) < 0 || unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
                _exit(2);
        if (write_stringat(AT_FDCWD, "/proc/self/setgroups", "deny") < 0 ||
            write_stringat(AT_FDCWD, "/proc/self/uid_map", "0 65534 1") < 0 ||
            write_stringat(AT_FDCWD, "/proc/self/gid_map", "0 65534 1") < 0 || mount("none", dir, "tmpfs", 0, NULL) < 0)
                _exit(3);
        if (strlen(bus_address) - strlen("unix:path=") >= sizeof(sa.sun_path))
                _exit(4);
        memcpy(sa.sun_path, bus_address + strlen("unix:path="), strlen(bus_address) - strlen("unix:path="));
        l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (l < 0 || c < 0 || bind(l, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(l, 1) < 0 ||
            connect(c, (struct sockaddr *) &sa, sizeof(sa)) < 0 || (s = accept4(l, NULL, NULL, SOCK_CLOEXEC)) < 0)
                _exit(4);
        size_t size = forged_call(m);
        if ((sb->forge && write(s, m, size) != (ssize_t) size) || write(sb->ready, &s, sizeof(s)) != sizeof(s))
                _exit(5);
        for (;;)
                pause();
}

/* Starts hold_spoofed_bus() in mail.service; returns the write end of its
 * connection, taken from it (pidfd_getfd), as any process of its user may. */
static int spawn_spoofed_bus(bool forge) {
        int ready[2], fd = -1;

        ck_assert_int_eq(pipe2(ready, O_CLOEXEC), 0);
        pid_t pid = test_fork("mail.service", hold_spoofed_bus, &(SpoofedBus) { .ready = ready[1], .forge = forge });
        close(ready[1]);
        struct pollfd p = { .fd = ready[0], .events = POLLIN };
        ck_assert_msg(poll(&p, 1, 5000) == 1 && read(ready[0], &fd, sizeof(fd)) == sizeof(fd),
                      "uid 65534 could not bind the bus's path in a namespace of its own");
        close(ready[0]);
        int pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        ck_assert_int_ge(pidfd, 0);
        int w = (int) syscall(SYS_pidfd_getfd, pidfd, fd, 0);
        ck_assert_int_ge(w, 0);
        close(pidfd);
        return w;
}

/* A socket bound at the bus's path in another mount namespace is not the
 * bus: a forged call in a unit's connection to it wakes nothing at enter. */
START_TEST(test_spoofed_bus_at_enter) {
        if (!test_need_root_cgroup2())
                return;
        write_rule("80-call.rule", "[Match]\nEvent=dbus-call\nBusName=org.example.Mail\n[Action]\nThaw=mail.service\n");
        int w = spawn_spoofed_bus(true);
        start_listener();
        sd_bus *bus = client();

        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        /* The journal change is taken before this call is. */
        ck_assert_msg(statistic(bus, "replayed") == 0, "a connection to a spoofed bus woke the unit");
        ck_assert(test_frozen("mail.service"));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        close(w);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* A method call to org.example.Mail from sender with that serial, forged
 * (no path, member or body: the listener reads no more). Returns its size. */
static size_t forged_call_from(uint8_t *m, size_t size, const char *sender, uint32_t serial) {
        static const char dest[] = "org.example.Mail";
        const struct {
                uint8_t code;
                const char *value;
        } fields[] = { { 6, dest }, { 7, sender } };
        size_t off = 16, end = 16;

        memset(m, 0, size);
        m[0] = 'l', m[1] = 1, m[3] = 1; /* little-endian method call, version 1 */
        memcpy(m + 8, &serial, 4);      /* this host is little-endian, as the tests' buses */
        for (size_t i = 0; i < ELEMENTSOF(fields); i++) {
                uint32_t len = (uint32_t) strlen(fields[i].value);
                off = (off + 7) & ~(size_t) 7;
                ck_assert_uint_le(off + 8 + len + 1 + 7, size);
                m[off] = fields[i].code, m[off + 1] = 1, m[off + 2] = 's';
                memcpy(m + off + 4, &len, 4);
                memcpy(m + off + 8, fields[i].value, len + 1);
                end = off + 8 + len + 1;
                off = end;
        }
        uint32_t fields_len = (uint32_t) (end - 16);
        memcpy(m + 12, &fields_len, 4);
        return (end + 7) & ~(size_t) 7;
}

/* The same on a call: a call the bus refused, which a forged call in a
 * unit's connection to a spoofed bus names by sender and serial, wakes
 * nothing. The caller (uid 65534) tells its unique name before it calls;
 * the forged calls are written after enter, by another process of the
 * same user, and name the serials its next calls take. */
START_TEST(test_spoofed_bus_call) {
        int names[2], go[2], status;
        char name[256] = {}, k = 'k';

        if (!test_need_root_cgroup2())
                return;
        restart_dbus_with("<policy context=\"default\"><deny send_destination=\"org.example.Mail\" "
                          "send_interface=\"org.standby.Bench\" send_member=\"Secret\"/></policy>");
        write_rule("80-call.rule", "[Match]\nEvent=dbus-call\nBusName=org.example.Mail\n[Action]\nThaw=mail.service\n");
        spawn_mail_bus_service();
        int w = spawn_spoofed_bus(false);
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert(test_frozen("mail.service"));

        ck_assert_int_eq(pipe2(names, O_CLOEXEC), 0);
        ck_assert_int_eq(pipe2(go, O_CLOEXEC), 0);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                sd_bus_error error = SD_BUS_ERROR_NULL;
                sd_bus *b = NULL;
                const char *unique;
                if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                        _exit(2);
                if (sd_bus_new(&b) < 0 || sd_bus_set_address(b, bus_address) < 0 || sd_bus_set_bus_client(b, true) < 0 ||
                    sd_bus_start(b) < 0 || sd_bus_get_unique_name(b, &unique) < 0)
                        _exit(3);
                if (write(names[1], unique, strlen(unique)) < 0 || close(names[1]) < 0 || read(go[0], &k, 1) != 1)
                        _exit(4);
                (void) sd_bus_call_method(b, "org.example.Mail", "/org/standby/Bench", "org.standby.Bench", "Secret",
                                          &error, NULL, "");
                _exit(sd_bus_error_has_name(&error, SD_BUS_ERROR_ACCESS_DENIED) ? 0 : 5);
        }
        close(names[1]);
        close(go[0]);
        ck_assert_int_gt(read(names[0], name, sizeof(name) - 1), 0);
        close(names[0]);
        for (uint32_t serial = 1; serial <= 8; serial++) {
                uint8_t m[512];
                size_t size = forged_call_from(m, sizeof(m), name, serial);
                ck_assert_int_eq(write(w, m, size), (ssize_t) size);
        }
        ck_assert_int_eq(write(go[1], &k, 1), 1);
        close(go[1]);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the caller was not refused (0x%x)", (unsigned) status);

        ck_assert_msg(test_wait_for(saw_call_judged, bus, 5 * USEC_PER_SEC), "the listener never judged the call");
        ck_assert_msg(statistic(bus, "thaws") == 0, "a refused call named by a spoofed bus thawed the unit");
        ck_assert_uint_eq(statistic(bus, "undelivered"), 1);
        ck_assert(test_frozen("mail.service"));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        close(w);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* As uid 65534 in mail.service (a process of a Thaw= unit that a hostile
 * user runs, as in a user's own unit): a bus client subscribed to a signal
 * of its own, which sends itself that signal with forged calls to
 * org.example.Mail in its byte array, reads the header and the array's
 * length, and stops reading there: its unread bytes now start with the
 * forged calls, in a real connection to the bus. Writes one byte to
 * *(int *) userdata when it stopped, then waits to be killed. */
static void read_into_forged_body(void *userdata) {
        int ready = *(int *) userdata;
        sd_bus_message *m = NULL;
        sd_bus *bus = NULL;
        uint8_t body[2048], buf[4096];
        const char *unique;
        size_t off = 0;

        if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                _exit(2);
        if (sd_bus_new(&bus) < 0 || sd_bus_set_address(bus, bus_address) < 0 || sd_bus_set_bus_client(bus, true) < 0 ||
            sd_bus_start(bus) < 0 || sd_bus_get_unique_name(bus, &unique) < 0 ||
            sd_bus_add_match(bus, NULL, "type='signal',interface='org.example.Spam'", NULL, NULL) < 0)
                _exit(3);
        while (off + 512 <= sizeof(body))
                off += forged_call_from(body + off, 512, unique, 1);
        if (sd_bus_message_new_signal(bus, &m, "/org/example/Spam", "org.example.Spam", "Blob") < 0 ||
            sd_bus_message_append_array(m, 'y', body, off) < 0 || sd_bus_send(bus, m, NULL) < 0 || sd_bus_flush(bus) < 0)
                _exit(4);
        int fd = sd_bus_get_fd(bus);
        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                DBusHeader h;
                ssize_t n;
                if (poll(&p, 1, -1) != 1 || (n = recv(fd, buf, sizeof(buf), MSG_PEEK)) <= 0 ||
                    dbus_wire_header(buf, (size_t) n, &h) < 0)
                        _exit(5);
                if (n < (ssize_t) DBUS_FIXED_HEADER || (h.total_size <= 1024 && (uint64_t) n < h.total_size))
                        continue; /* more is on its way */
                if (h.total_size <= 1024) { /* the AddMatch reply, say */
                        if (recv(fd, buf, h.total_size, 0) != (ssize_t) h.total_size)
                                _exit(6);
                        continue;
                }
                size_t part = h.header_size + 4;
                if ((size_t) n < part || recv(fd, buf, part, 0) != (ssize_t) part || write(ready, "k", 1) != 1)
                        _exit(7);
                for (;;)
                        pause();
        }
}

/* Bytes inside a message the bus delivered are no call it delivered, even
 * where a reader stopped part-way: a forged call there, in a real bus
 * connection of a process of the Thaw= unit, wakes nothing at enter. */
START_TEST(test_call_forged_in_a_delivered_body) {
        int ready[2];
        char k;

        if (!test_need_root_cgroup2())
                return;
        write_rule("80-call.rule", "[Match]\nEvent=dbus-call\nBusName=org.example.Mail\n[Action]\nThaw=mail.service\n");
        spawn_mail_bus_service();
        ck_assert_int_eq(pipe2(ready, O_CLOEXEC), 0);
        (void) test_fork("mail.service", read_into_forged_body, &ready[1]);
        close(ready[1]);
        struct pollfd p = { .fd = ready[0], .events = POLLIN };
        ck_assert_msg(poll(&p, 1, 5000) == 1 && read(ready[0], &k, 1) == 1, "the reader did not stop in the body");
        close(ready[0]);
        start_listener();
        sd_bus *bus = client();

        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        /* The journal change is taken before this call is. */
        ck_assert_msg(statistic(bus, "replayed") == 0, "a call forged in a signal's body woke the unit");
        ck_assert(test_frozen("mail.service"));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* The port of the listener's netlink socket of protocol proto (from its
 * network namespace's /proc/net/netlink and its fds), or 0. */
static uint32_t listener_netlink_port(int proto) {
        char path[128], line[512];
        uint32_t port = 0;

        snprintf(path, sizeof(path), "/proc/%d/net/netlink", (int) listener_pid);
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        ck_assert_ptr_nonnull(f);
        while (!port && fgets(line, sizeof(line), f)) {
                unsigned long long sk, inode;
                unsigned eth, pid, groups;
                char fd_path[128], target[64], want[64];
                if (sscanf(line, "%llx %u %u %x %*d %*d %*d %*d %*d %llu", &sk, &eth, &pid, &groups, &inode) != 5 ||
                    (int) eth != proto || pid == 0)
                        continue;
                snprintf(want, sizeof(want), "socket:[%llu]", inode);
                for (int fd = 0; fd < 64 && !port; fd++) {
                        snprintf(fd_path, sizeof(fd_path), "/proc/%d/fd/%d", (int) listener_pid, fd);
                        ssize_t n = readlink(fd_path, target, sizeof(target) - 1);
                        if (n > 0 && (target[n] = 0, streq(target, want)))
                                port = pid;
                }
        }
        return port;
}

/* As uid 65534 in the test's network namespace, with CAP_NET_ADMIN kept (as
 * a network daemon under a user of its own has it; without it the kernel
 * refuses to send to another process's port), sends msg to a netlink port
 * of protocol proto; returns 0 when the kernel took it. */
static int send_as_nobody(int proto, uint32_t port, const void *msg, size_t size) {
        char p[128];
        pid_t pid = fork();

        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                snprintf(p, sizeof(p), "/run/netns/%s", netns);
                int ns = open(p, O_RDONLY | O_CLOEXEC);
                struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
                struct __user_cap_data_struct caps[2] = {
                        { .effective = 1u << CAP_NET_ADMIN, .permitted = 1u << CAP_NET_ADMIN },
                };
                if (ns < 0 || setns(ns, CLONE_NEWNET) < 0 || setgroups(0, NULL) < 0 ||
                    prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0 || setresgid(65534, 65534, 65534) < 0 ||
                    setresuid(65534, 65534, 65534) < 0 || syscall(SYS_capset, &hdr, caps) < 0)
                        _exit(2);
                int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, proto);
                struct sockaddr_nl to = { .nl_family = AF_NETLINK, .nl_pid = port };
                _exit(fd >= 0 && sendto(fd, msg, size, 0, (struct sockaddr *) &to, sizeof(to)) == (ssize_t) size ? 0 : 1);
        }
        int status;
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

typedef struct ForgedWait {
        sd_bus *bus;
        uint64_t want;
} ForgedWait;

static bool forged_reached(void *userdata) {
        ForgedWait *w = userdata;
        uint64_t n = statistic(w->bus, "forged");
        return n != UINT64_MAX && n >= w->want;
}

/* A local process sends the listener's rtnetlink and uevent sockets what
 * the kernel would: "sb0 up", a device added. Only the kernel's word
 * counts: both are dropped and counted, nothing is thawed. */
START_TEST(test_netlink_forged_dropped) {
        struct {
                struct nlmsghdr h;
                struct ifinfomsg i;
                struct rtattr a;
                char name[8];
        } link = {
                .h = { .nlmsg_len = sizeof(link), .nlmsg_type = RTM_NEWLINK },
                .i = { .ifi_family = AF_UNSPEC, .ifi_index = 4242, .ifi_flags = 1 /* IFF_UP */ },
                .a = { .rta_len = RTA_LENGTH(4), .rta_type = IFLA_IFNAME },
                .name = "sb0",
        };
        static const char uevent[] = "add@/devices/standby-test\0ACTION=add\0SUBSYSTEM=standbytest\0SEQNUM=1";

        if (!test_need_root_cgroup2())
                return;
        write_rule("50-up.rule", "[Match]\nEvent=link\nInterface=sb0\nChange=up\n[Action]\nThaw=net.service\n");
        write_rule("51-dev.rule", "[Match]\nEvent=uevent\nSubsystem=standbytest\n[Action]\nThaw=net.service\n");
        test_spawn_workload("net.service", "idle", 100, 1, NULL);
        make_netns();
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);

        uint32_t route = listener_netlink_port(NETLINK_ROUTE), dev = listener_netlink_port(NETLINK_KOBJECT_UEVENT);
        ck_assert_uint_ne(route, 0);
        ck_assert_uint_ne(dev, 0);
        ck_assert_int_eq(send_as_nobody(NETLINK_ROUTE, route, &link, sizeof(link)), 0);
        ck_assert_int_eq(send_as_nobody(NETLINK_KOBJECT_UEVENT, dev, uevent, sizeof(uevent)), 0);

        ForgedWait w = { bus, 2 };
        ck_assert_msg(test_wait_for(forged_reached, &w, 5 * USEC_PER_SEC), "the forged messages were not dropped");
        ck_assert_uint_eq(statistic(bus, "matched"), 0);
        ck_assert(test_frozen("net.service"));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* Removes a state directory the way test_env_teardown() does. */
static void remove_state_dir(const char *d) {
        static const char * const files[] = { JOURNAL_FILE, "state.tmp", "lock" };
        char p[512];
        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                snprintf(p, sizeof(p), "%s/%s", d, files[i]);
                (void) unlink(p);
        }
        (void) rmdir(d);
}

/* The state directory replaced under a running listener, renamed away or
 * removed: it finds the new one, and sees the next enter there. */
START_TEST(test_state_dir_replaced) {
        char old[512];
        int acted;

        if (!test_need_root_cgroup2())
                return;
        test_spawn_workload("mail.service", "idle", 100, 1, NULL);
        start_listener();
        sd_bus *bus = client();
        snprintf(old, sizeof(old), "%s.old", T.state_dir);

        /* Renamed: the watch would follow the old directory. enter makes
         * a new one. */
        ck_assert_int_eq(rename(T.state_dir, old), 0);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert_ptr_null(push(bus, "mail.service", &acted));
        ck_assert_msg(!test_frozen("mail.service"), "the listener did not see standby begin in the new directory");
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);

        /* Removed, and made again by the next enter. */
        remove_state_dir(T.state_dir);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert(test_frozen("mail.service"));
        ck_assert_ptr_null(push(bus, "mail.service", &acted));
        ck_assert_msg(!test_frozen("mail.service"), "the listener did not see standby begin in the remade directory");
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        remove_state_dir(old);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* Push(unit) with a bound on the answer; returns the bus error name, or
 * NULL and *ret_acted. */
static char *push_within(sd_bus *bus, const char *unit, usec_t timeout, int *ret_acted) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *m = NULL, *reply = NULL;
        char *name = NULL;
        int acted = 0;

        ck_assert_int_ge(sd_bus_message_new_method_call(bus, &m, "org.standby.Listener1", "/org/standby/Listener1",
                                                        "org.standby.Listener1", "Push"),
                         0);
        ck_assert_int_ge(sd_bus_message_append(m, "ss", unit, "test"), 0);
        if (sd_bus_call(bus, m, timeout, &error, &reply) < 0)
                name = strdup(error.name ? error.name : "?");
        else
                ck_assert_int_ge(sd_bus_message_read(reply, "b", &acted), 0);
        sd_bus_error_free(&error);
        sd_bus_message_unref(reply);
        sd_bus_message_unref(m);
        if (ret_acted)
                *ret_acted = acted;
        return name;
}

/* A unit stuck in state D (a FUSE request never answered) at its window's
 * end: its refreeze cannot finish before FreezeTimeout, and meanwhile a
 * push for another unit is answered, while the journal still says the
 * stuck one is freezing; then the timeout's policy thaws it again and
 * records it skipped, naming the task in the way. */
START_TEST(test_loop_stuck_refreeze_answers_push) {
        _cleanup_free_ char *json = NULL;
        int acted;

        if (!test_need_root_cgroup2() || !test_have_fuse())
                return;
        test_write_config("FreezeTimeout=4s\n");
        write_rule("60-stuck.rule", "[Match]\nEvent=push\nUnit=stuck.service\n[Action]\nThaw=stuck.service\nFor=2s\n");
        test_spawn_workload("stuck.service", "idle", 100, 1, NULL);
        sd_bus *bus = standby_with_idle_mail();
        ck_assert_int_eq(journal_state_of("stuck.service"), UNIT_FROZEN);
        ck_assert_ptr_null(push(bus, "stuck.service", &acted));
        ck_assert_int_eq(acted, 1);
        /* In its window, a task of the unit gets stuck in the kernel. */
        pid_t stuck = test_start_stuck_client("stuck.service");
        ck_assert_int_gt(stuck, 0);

        /* The window ends: the journal says freezing, and stays so until
         * FreezeTimeout (4 s) has passed. */
        ck_assert(wait_journal_state("stuck.service", UNIT_FREEZING, 10 * USEC_PER_SEC));
        char *error = push_within(bus, "mail.service", 2 * USEC_PER_SEC, &acted);
        ck_assert_msg(!error, "a push was not answered while a refreeze was stuck: %s", error);
        ck_assert_int_eq(acted, 1);
        ck_assert_int_eq(journal_state_of("stuck.service"), UNIT_FREEZING);
        ck_assert(wait_frozen("mail.service", false));

        /* OnFreezeTimeout=skip: thawed again, recorded with who is in the way. */
        ck_assert(wait_journal_state("stuck.service", UNIT_SKIPPED, 15 * USEC_PER_SEC));
        ck_assert(wait_frozen("stuck.service", false));
        ck_assert_int_eq(test_manager_env(NULL, &json, NULL, "status", "--json", NULL), EXIT_OK);
        ck_assert_msg(strstr(json, "did not freeze within 4s: pid"), "%s", json);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
        sd_bus_flush_close_unref(bus);
}
END_TEST

static bool journal_busy_twice(void *userdata) {
        uint64_t v = statistic(userdata, "journal_busy");
        return v != UINT64_MAX && v >= 2;
}

/* Another process holds the journal's lock (as a manager verb waiting out
 * FreezeTimeout on a stuck unit does): a thaw's record and a window's end
 * are put off, and a push is answered meanwhile; once the lock is let go,
 * the window's units freeze again and the records are written. */
START_TEST(test_loop_journal_locked_answers_push) {
        char path[512];
        int acted;

        if (!test_need_root_cgroup2())
                return;
        write_rule("50-news.rule", "[Match]\nEvent=push\nUnit=news.service\n[Action]\nThaw=news.service\n");
        test_spawn_workload("news.service", "idle", 100, 1, NULL);
        sd_bus *bus = standby_with_idle_mail();
        snprintf(path, sizeof(path), "%s/" JOURNAL_LOCK_FILE, T.state_dir);
        int lock = open(path, O_RDWR | O_CLOEXEC);
        ck_assert_int_ge(lock, 0);
        ck_assert_int_eq(flock(lock, LOCK_EX), 0);

        /* mail.service's window (1 s) ends while the lock is held: its
         * record was put off 2 ms after the thaw, its refreeze at its end. */
        ck_assert_ptr_null(push(bus, "mail.service", &acted));
        ck_assert_int_eq(acted, 1);
        ck_assert(test_wait_for(journal_busy_twice, bus, 10 * USEC_PER_SEC));
        char *error = push_within(bus, "news.service", 2 * USEC_PER_SEC, &acted);
        ck_assert_msg(!error, "a push was not answered while the journal was locked: %s", error);
        ck_assert_int_eq(acted, 1);
        ck_assert(!test_frozen("news.service"));
        ck_assert_int_eq(journal_state_of("news.service"), UNIT_FROZEN);

        close(lock);
        ck_assert(wait_frozen("mail.service", true));
        ck_assert(wait_journal_state("news.service", UNIT_THAWED, 10 * USEC_PER_SEC));
        ck_assert(wait_journal_state("mail.service", UNIT_FROZEN, 10 * USEC_PER_SEC));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* A systemd --user manager (tests/env/user-manager.sh) that froze the units. */
static char um_dir[128], um_cgrel[512];

static void setup_user_manager(void) {
        setup();
        snprintf(um_dir, sizeof(um_dir), "%s/um", dir);
        (void) mkdir(um_dir, 0700);
        snprintf(um_cgrel, sizeof(um_cgrel), "%s/um.service", T.base);
        (void) test_user_manager_start(um_dir, um_cgrel);
}

static void teardown_user_manager(void) {
        test_user_manager_stop();
        teardown();
}

/* Ends a unit the test started in the user manager, whatever it ignores. */
static void um_kill(const char *unit) {
        char cmd[1024];
        _cleanup_free_ char *out = NULL;

        snprintf(cmd, sizeof(cmd), "XDG_RUNTIME_DIR=%s/xdg systemctl --user kill --signal=SIGKILL %s", um_dir, unit);
        (void) test_run_shell(cmd, &out);
}

/* Standby left: nothing frozen; the unit ended and the client closed. */
static void leave_user_manager_standby(sd_bus *bus, const char *unit) {
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
        um_kill(unit);
        sd_bus_flush_close_unref(bus);
}

/* unit started by the user manager (systemd-run's args: properties, then
 * the command line), Backend=systemd on its app.slice, the listener up and
 * standby entered, the unit frozen; its cgroup (below base) goes to
 * ret_sub. Returns a client connection to the bus. */
static sd_bus *standby_through_user_manager(const char *unit, const char *args, char *ret_sub, size_t size) {
        char cmd[8192], extra[1024];
        _cleanup_free_ char *out = NULL;

        snprintf(cmd, sizeof(cmd), "XDG_RUNTIME_DIR=%s/xdg systemd-run --user --unit=%s %s 2>&1", um_dir, unit, args);
        ck_assert_msg(test_run_shell(cmd, &out) == 0, "systemd-run: %s", out);
        snprintf(extra, sizeof(extra), "Targets=\nTargets=%s/app.slice\nBackend=systemd\n"
                                       "SystemdAddress=unix:path=%s/xdg/systemd/private\n", um_cgrel, um_dir);
        test_write_config(extra);
        snprintf(ret_sub, size, "um.service/app.slice/%s", unit);
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert(test_frozen(ret_sub));
        return bus;
}

static bool wait_freezer_state(const char *unit, const char *want);

/* The test's user manager's PID. */
static pid_t um_pid(void) {
        char path[256];
        _cleanup_free_ char *text = NULL;
        int pid = 0;

        snprintf(path, sizeof(path), "%s/manager.pid", um_dir);
        ck_assert_int_ge(read_one_lineat(AT_FDCWD, path, &text), 0);
        ck_assert_int_eq(sscanf(text, "%d", &pid), 1);
        return (pid_t) pid;
}

/* unit, a nanosleep workload of the user manager, with rule (if not NULL)
 * as its rule file, in standby and frozen through the manager (above). */
static sd_bus *standby_sleeper(const char *unit, const char *rule, char *ret_sub, size_t size) {
        char cmd[PATH_MAX + 32], file[128];

        if (rule) {
                snprintf(file, sizeof(file), "60-%s.rule", unit);
                write_rule(file, rule);
        }
        snprintf(cmd, sizeof(cmd), "%s nanosleep", test_bin("standby-workload"));
        sd_bus *bus = standby_through_user_manager(unit, cmd, ret_sub, size);
        ck_assert(wait_freezer_state(unit, "frozen"));
        return bus;
}

/* The systemd manager that froze a unit is stopped (SIGSTOP): a push for
 * the unit is answered at once, and the unit is thawed all the same,
 * through cgroup.freeze, once ThawUnit has had its moment; the thaw is
 * recorded then. */
START_TEST(test_loop_systemd_stopped_thaws_through_cgroupfs) {
        char sub[600];
        int acted;

        if (!test_need_user_manager())
                return;
        sd_bus *bus = standby_sleeper("standby-a.service",
                                      "[Match]\nEvent=push\nUnit=standby-a.service\n[Action]\nThaw=standby-a.service\n", sub,
                                      sizeof(sub));
        pid_t pid = um_pid();
        ck_assert_int_eq(kill(pid, SIGSTOP), 0);
        char *error = push_within(bus, "standby-a.service", 2 * USEC_PER_SEC, &acted);
        ck_assert_msg(!error, "a push was not answered while systemd was stopped: %s", error);
        ck_assert_int_eq(acted, 1);
        /* ThawUnit unanswered: thawed through cgroup.freeze, systemd still stopped. */
        ck_assert(wait_frozen(sub, false));
        ck_assert_uint_eq(statistic(bus, "systemd_fallbacks"), 1);
        /* Its record waited for that: the 1 that cgroup.freeze read while
         * ThawUnit was unanswered was no freeze again, and a running unit
         * is not left recorded as frozen. */
        ck_assert(wait_journal_state(sub, UNIT_THAWED, 5 * USEC_PER_SEC));
        ck_assert_int_eq(kill(pid, SIGCONT), 0);

        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* systemd stops a unit while it is frozen (its main process killed; the
 * rest ignores SIGTERM and cannot see it anyway): ThawUnit answers
 * UnitInactive, and a push must still thaw it, through cgroup.freeze. */
START_TEST(test_loop_systemd_inactive_thaws_through_cgroupfs) {
        char cmd[8192], sub[600];
        _cleanup_free_ char *out = NULL;
        int acted;

        if (!test_need_user_manager())
                return;
        char bin[PATH_MAX];
        ck_assert_ptr_nonnull(realpath(test_bin("standby-workload"), bin));
        write_rule("60-k.rule", "[Match]\nEvent=push\nUnit=standby-k.service\n[Action]\nThaw=standby-k.service\n");
        snprintf(cmd, sizeof(cmd), "-p TimeoutStopSec=120 /bin/sh -c 'trap \"\" TERM; %s nanosleep & wait'", bin);
        sd_bus *bus = standby_through_user_manager("standby-k.service", cmd, sub, sizeof(sub));

        snprintf(cmd, sizeof(cmd), "XDG_RUNTIME_DIR=%s/xdg systemctl --user kill --signal=SIGKILL --kill-who=main "
                 "standby-k.service 2>&1", um_dir);
        free(out);
        out = NULL;
        ck_assert_msg(test_run_shell(cmd, &out) == 0, "systemctl kill: %s", out);
        char runtime_dir[PATH_MAX];
        snprintf(runtime_dir, sizeof(runtime_dir), "%s/xdg", um_dir);
        bool stopping = test_wait_unit_property(runtime_dir, "standby-k.service", "ActiveState", "deactivating",
                                                20 * USEC_PER_SEC);
        ck_assert_msg(stopping, "standby-k.service did not start stopping");
        ck_assert(test_frozen(sub));

        ck_assert_ptr_null(push(bus, "standby-k.service", &acted));
        ck_assert_int_eq(acted, 1);
        ck_assert(wait_frozen(sub, false));
        ck_assert_uint_eq(statistic(bus, "systemd_fallbacks"), 1);

        leave_user_manager_standby(bus, "standby-k.service");
}
END_TEST

/* PushEx(unit, reason) or Thaw(cgroups, usec): the cgroups thawed, and
 * those not thawed each with why ("cgroup: why", in ret_failed). Returns
 * the bus error's name, or NULL. */
static char *thaw_call(sd_bus *bus, const char *method, const char *unit, char **cgroups, uint64_t usec,
                       char ***ret_thawed, char ***ret_failed) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *call = NULL, *reply = NULL;
        char **thawed = NULL, **failed = NULL;
        const char *a, *b;
        char *name = NULL;
        int r;

        ck_assert_int_ge(sd_bus_message_new_method_call(bus, &call, "org.standby.Listener1", "/org/standby/Listener1",
                                                        "org.standby.Listener1", method),
                         0);
        if (unit)
                ck_assert_int_ge(sd_bus_message_append(call, "ss", unit, "test"), 0);
        else {
                ck_assert_int_ge(sd_bus_message_append_strv(call, cgroups), 0);
                ck_assert_int_ge(sd_bus_message_append(call, "t", usec), 0);
        }
        r = sd_bus_call(bus, call, 10 * USEC_PER_SEC, &error, &reply);
        if (r < 0)
                name = strdup(error.name ? error.name : "?");
        else {
                ck_assert_int_ge(sd_bus_message_read_strv(reply, &thawed), 0);
                ck_assert_int_ge(sd_bus_message_enter_container(reply, 'a', "(ss)"), 0);
                while (sd_bus_message_read(reply, "(ss)", &a, &b) > 0) {
                        char *x = NULL;
                        ck_assert_int_ge(asprintf(&x, "%s: %s", a, b), 0);
                        ck_assert_int_ge(strv_consume(&failed, x), 0);
                }
        }
        sd_bus_error_free(&error);
        sd_bus_message_unref(call);
        sd_bus_message_unref(reply);
        *ret_thawed = thawed;
        *ret_failed = failed;
        return name;
}

/* standby-manager thaw --for asks the listener, which owns the window: the
 * command exits at once, the unit runs, and the listener freezes it again
 * when the window ends. */
START_TEST(test_thaw_for_window_is_the_listeners) {
        _cleanup_free_ char *err = NULL;
        int mail;

        if (!test_need_root_cgroup2())
                return;
        test_spawn_workload("mail.service", "nanosleep", 10, 1, &mail);
        test_spawn_workload("other.service", "idle", 100, 1, NULL);
        /* Started in standby, and exempt: neither frozen nor held. */
        test_write_config("Exempt=late.service\n");
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        test_drain(mail);

        ck_assert_msg(test_manager(&err, "thaw", test_cgpath("mail.service"), "--for", "1s", "--bus-address", bus_address, NULL) ==
                              EXIT_OK,
                      "%s", err);
        ck_assert(!test_frozen("mail.service"));
        ck_assert(test_frozen("other.service"));
        ck_assert_int_eq(test_ticks(mail, 3, 5 * USEC_PER_SEC), 3);
        ck_assert(wait_journal_state("mail.service", UNIT_THAWED, 5 * USEC_PER_SEC));
        /* The window's end: the listener's refreeze. */
        ck_assert(wait_frozen("mail.service", true));
        ck_assert(wait_journal_state("mail.service", UNIT_FROZEN, 5 * USEC_PER_SEC));
        ck_assert_uint_eq(statistic(bus, "refreezes"), 1);

        /* A unit standby did not freeze (exempt): not thawed, and said so. */
        free(TAKE_PTR(err));
        test_spawn_workload("late.service", "idle", 100, 1, NULL);
        ck_assert_int_eq(test_manager(&err, "thaw", test_cgpath("late.service"), "--for", "1s", "--bus-address", bus_address, NULL),
                         EXIT_NOT_ACTIVE);
        ck_assert_msg(strstr(err, "/late.service: not thawed: not frozen by standby"), "%s", err);

        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
        /* Outside standby the listener opens no window. */
        free(TAKE_PTR(err));
        ck_assert_int_eq(test_manager(&err, "thaw", test_cgpath("mail.service"), "--for", "1s", "--bus-address", bus_address, NULL),
                         EXIT_NOT_ACTIVE);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* Without a listener, thaw --for refuses, and says why: nobody would
 * freeze the unit again. */
START_TEST(test_thaw_for_needs_the_listener) {
        _cleanup_free_ char *err = NULL;

        if (!test_need_root_cgroup2())
                return;
        test_spawn_workload("mail.service", "idle", 100, 1, NULL);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert_int_eq(test_manager(&err, "thaw", test_cgpath("mail.service"), "--for", "1s", "--bus-address", bus_address, NULL),
                         EXIT_FAILURE_GENERIC);
        ck_assert_msg(strstr(err, "thaw --for needs it running"), "%s", err);
        ck_assert(test_frozen("mail.service"));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
}
END_TEST

/* PushEx answers with what the push did: a unit that a frozen cgroup above
 * it keeps frozen is a failure, said, logged and counted, never a
 * coalesced event. */
START_TEST(test_push_ex_reports_failed_thaw) {
        _cleanup_strv_free_ char **thawed = NULL, **failed = NULL;
        char expect[600];

        if (!test_need_root_cgroup2())
                return;
        write_rule("30-pair.rule", "[Match]\nEvent=push\nUnit=pair.service\n[Action]\nThaw=mail.service\n"
                                   "Thaw=held.service\nFor=30s\n");
        test_spawn_workload("mail.service", "idle", 100, 1, NULL);
        test_spawn_workload("outer.slice/held.service", "idle", 100, 1, NULL);
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert(test_frozen("outer.slice/held.service"));

        /* Someone else freezes the slice above held.service. */
        _cleanup_close_ int outer = test_cgroup("outer.slice");
        ck_assert_int_ge(cgroup_set_freeze(outer, true), 0);
        (void) statistic(bus, "events"); /* the journal change is taken before a call */

        ck_assert_ptr_null(thaw_call(bus, "PushEx", "pair.service", NULL, 0, &thawed, &failed));
        ck_assert_msg(thawed && streq(thawed[0], test_cgpath("mail.service")) && !thawed[1], "thawed: %s",
                      thawed ? thawed[0] : "none");
        snprintf(expect, sizeof(expect), "%s: still frozen: a cgroup above it is frozen",
                 test_cgpath("outer.slice/held.service"));
        ck_assert_msg(failed && streq(failed[0], expect) && !failed[1], "failed: %s", failed ? failed[0] : "none");
        ck_assert(!test_frozen("mail.service"));
        ck_assert_uint_eq(statistic(bus, "thaw_failures"), 1);
        ck_assert_uint_eq(statistic(bus, "coalesced"), 0);
        _cleanup_free_ char *status = NULL;
        ck_assert_int_eq(test_manager_env(NULL, &status, NULL, "status", "--bus-address", bus_address, NULL), EXIT_OK);
        ck_assert_msg(strstr(status, ", 1 units not thawed (see its log)"), "%s", status);

        /* Thaw answers the same way; inside its window mail.service is thawed already. */
        strv_free(TAKE_PTR(thawed));
        strv_free(TAKE_PTR(failed));
        char *both[] = { (char *) test_cgpath("mail.service"), (char *) "not/standbys.service", NULL };
        ck_assert_ptr_null(thaw_call(bus, "Thaw", NULL, both, 5 * USEC_PER_SEC, &thawed, &failed));
        ck_assert(thawed && streq(thawed[0], test_cgpath("mail.service")) && !thawed[1]);
        ck_assert_msg(failed && streq(failed[0], "not/standbys.service: not frozen by standby") && !failed[1],
                      "failed: %s", failed ? failed[0] : "none");

        ck_assert_int_ge(cgroup_set_freeze(outer, false), 0);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* systemd's FreezerState of a unit of the test's user manager, waited for
 * (its PropertiesChanged, 10 s at most). */
static bool wait_freezer_state(const char *unit, const char *want) {
        char runtime_dir[PATH_MAX];

        snprintf(runtime_dir, sizeof(runtime_dir), "%s/xdg", um_dir);
        return test_wait_unit_property(runtime_dir, unit, "FreezerState", want, 10 * USEC_PER_SEC);
}

/* A thaw window through systemd: the thaws-th thaw done by ThawUnit
 * (counted, not sampled: a loaded host may read systemd's "running" only
 * after the window closed), then frozen again when it ends, in the kernel
 * and in systemd's view, with no thaw past systemd. */
static void assert_window_through_systemd(sd_bus *bus, const char *unit, const char *sub, uint64_t thaws) {
        ck_assert_msg(wait_statistic(bus, "systemd_thaws", thaws, 10 * USEC_PER_SEC), "%s was not thawed by ThawUnit",
                      unit);
        ck_assert(wait_frozen(sub, true));
        ck_assert(wait_freezer_state(unit, "frozen"));
        ck_assert_uint_eq(statistic(bus, "systemd_fallbacks"), 0);
        ck_assert_uint_eq(statistic(bus, "thaw_failures"), 0);
}

static bool saw_job_released(void *bus) {
        return statistic(bus, "jobs_released") >= 1;
}

/* Its unit ran twice: at exit, and once more by its timer. */
static bool ran_twice(void *path) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        size_t n = 0;
        int c;

        while (f && (c = fgetc(f)) != EOF)
                n += c == '\n';
        return n >= 2;
}

/* A unit held while its timer starts it: its start job is cancelled at the
 * user manager (which would otherwise report the running job twice a
 * second for all of standby), the unit stays "activating" and held, its
 * command runs at exit. A unit someone asked for keeps its job. */
START_TEST(test_hold_releases_timer_job) {
        char cmd[8192], sub[600], log[PATH_MAX];
        _cleanup_free_ char *out = NULL;

        if (!test_need_user_manager())
                return;
        snprintf(cmd, sizeof(cmd), "%s nanosleep", test_bin("standby-workload"));
        sd_bus *bus = standby_through_user_manager("standby-a.service", cmd, sub, sizeof(sub));

        /* Asked for: held with its job (systemctl would wait for it). Each
         * command here waits 0.5 s before it ends or writes: holding takes
         * a moment (docs/benchmark.md, section 7, measures it), and this
         * checks the hold, not its speed. */
        snprintf(cmd, sizeof(cmd), "XDG_RUNTIME_DIR=%s/xdg systemd-run --user --no-block --unit=held-asked "
                 "-p Type=oneshot /bin/sleep 0.5 2>&1", um_dir);
        ck_assert_msg(test_run_shell(cmd, &out) == 0, "systemd-run: %s", out);
        ck_assert(wait_frozen("um.service/app.slice/held-asked.service", true));

        /* Started by its timer: held, its job released. Unit files, not
         * systemd-run's transient units, whose cgroup systemd makes before
         * any job starts them. */
        snprintf(log, sizeof(log), "%s/held-tick.log", dir);
        char units[PATH_MAX], path[PATH_MAX + 32];
        snprintf(units, sizeof(units), "%s/xdg/systemd/user", um_dir);
        snprintf(cmd, sizeof(cmd), "%s/xdg/systemd", um_dir);
        (void) mkdir(cmd, 0755);
        ck_assert(mkdir(units, 0755) == 0 || errno == EEXIST);
        snprintf(path, sizeof(path), "%s/held-tick.service", units);
        FILE *f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        fprintf(f, "[Service]\nType=oneshot\nExecStart=/bin/sh -c 'sleep 0.5; echo ran >> %s'\n", log);
        ck_assert_int_eq(fclose(f), 0);
        snprintf(path, sizeof(path), "%s/held-tick.timer", units);
        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        fputs("[Timer]\nOnActiveSec=0.2s\nOnUnitActiveSec=1s\nAccuracySec=1ms\n", f);
        ck_assert_int_eq(fclose(f), 0);
        snprintf(cmd, sizeof(cmd), "export XDG_RUNTIME_DIR=%s/xdg; systemctl --user daemon-reload && "
                 "systemctl --user start held-tick.timer 2>&1", um_dir);
        free(out);
        out = NULL;
        ck_assert_msg(test_run_shell(cmd, &out) == 0, "the timer: %s", out);
        char runtime_dir[PATH_MAX];
        snprintf(runtime_dir, sizeof(runtime_dir), "%s/xdg", um_dir);
        /* Its job started it (its cgroup may be there before). */
        ck_assert(test_wait_unit_property(runtime_dir, "held-tick.service", "ActiveState", "activating",
                                          10 * USEC_PER_SEC));
        ck_assert(wait_frozen("um.service/app.slice/held-tick.service", true));
        ck_assert_msg(test_wait_for(saw_job_released, bus, 10 * USEC_PER_SEC), "the timer's job was not released");

        /* The one released is the timer's: the other keeps its job. */
        _cleanup_free_ char *asked_job = test_unit_show(runtime_dir, "held-asked.service", "Job"),
                            *tick_job = test_unit_show(runtime_dir, "held-tick.service", "Job"),
                            *tick_state = test_unit_show(runtime_dir, "held-tick.service", "ActiveState"),
                            *timer_state = test_unit_show(runtime_dir, "held-tick.timer", "SubState");
        ck_assert_msg(!streq(asked_job, ""), "held-asked.service lost its job");
        ck_assert_msg(streq(tick_job, ""), "held-tick.service still has job %s", tick_job);
        ck_assert_str_eq(tick_state, "activating");
        ck_assert_str_eq(timer_state, "running"); /* fired, waiting for its unit */
        ck_assert_uint_eq(statistic(bus, "jobs_released"), 1);
        ck_assert_int_eq(access(log, F_OK), -1); /* held: it has not run */

        /* At exit it runs, and its timer keeps its schedule: it runs again. */
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert_msg(test_wait_for(ran_twice, log, 10 * USEC_PER_SEC), "the timer did not run its unit again");
        ck_assert(!test_anything_frozen());
        snprintf(cmd, sizeof(cmd), "XDG_RUNTIME_DIR=%s/xdg systemctl --user stop held-tick.timer 2>&1", um_dir);
        free(out);
        out = NULL;
        (void) test_run_shell(cmd, &out);
        (void) unlink(log);
        um_kill("standby-a.service");
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* thaw --for of a unit systemd froze: thawed through systemd before the
 * command returns (the listener answers once ThawUnit is), and frozen
 * again through systemd when the listener's window ends. */
START_TEST(test_loop_systemd_thaw_window) {
        char sub[600];
        _cleanup_free_ char *out = NULL, *err = NULL;

        if (!test_need_user_manager())
                return;
        sd_bus *bus = standby_sleeper("standby-w.service", NULL, sub, sizeof(sub));

        ck_assert_msg(test_manager(&err, "thaw", test_cgpath(sub), "--for", "1s", "--bus-address", bus_address,
                                   NULL) == EXIT_OK,
                      "%s", err);
        ck_assert(!test_frozen(sub));
        assert_window_through_systemd(bus, "standby-w.service", sub, 1);

        leave_user_manager_standby(bus, "standby-w.service");
}
END_TEST

static bool no_link_authenticated(void *bus) {
        return statistic(bus, "systemd_links") == 0;
}

/* The user manager does something that sends signals (a transient unit
 * runs, outside the targets: one held there would be asked about on the
 * link), at most every 200 ms, until the listener has closed its link. */
static bool link_closed_by_noise(void *bus) {
        static usec_t last;
        static unsigned n;
        char cmd[1024];
        _cleanup_free_ char *out = NULL;

        if (no_link_authenticated(bus))
                return true;
        if (now_usec(CLOCK_MONOTONIC) - last >= 200 * USEC_PER_MSEC) {
                snprintf(cmd, sizeof(cmd),
                         "XDG_RUNTIME_DIR=%s/xdg systemd-run --user --slice=noise.slice --unit=standby-noise-%u /bin/true",
                         um_dir, n++);
                (void) test_run_shell(cmd, &out);
                last = now_usec(CLOCK_MONOTONIC);
        }
        return false;
}

/* The listener's link to the manager is authenticated only while used:
 * systemd sends every signal to each authenticated private connection, so
 * the first one that no call of the listener's caused closes it. A push
 * thaws the unit through systemd and the window's end freezes it through
 * systemd again; the link stays open while the manager is quiet, and once
 * a transient unit of someone else's runs it is closed, and the next push
 * still thaws through systemd, from the spare. */
START_TEST(test_loop_systemd_link_closed_when_idle) {
        char sub[600];
        int acted;

        if (!test_need_user_manager())
                return;
        sd_bus *bus = standby_sleeper("standby-i.service",
                                      "[Match]\nEvent=push\nUnit=standby-i.service\n[Action]\nThaw=standby-i.service\nFor=3s\n",
                                      sub, sizeof(sub));
        ck_assert_uint_eq(statistic(bus, "systemd_links"), 0); /* a spare, connected at the enter */

        for (int round = 0; round < 2; round++) {
                char *error = push_within(bus, "standby-i.service", 2 * USEC_PER_SEC, &acted);
                ck_assert_msg(!error, "a push was not answered: %s", error);
                ck_assert_int_eq(acted, 1);
                ck_assert(wait_frozen(sub, false));
                assert_window_through_systemd(bus, "standby-i.service", sub, round + 1);
                uint64_t signals = statistic(bus, "systemd_signals");
                ck_assert_msg(test_wait_for(link_closed_by_noise, bus, 10 * USEC_PER_SEC),
                              "round %d: the link is still authenticated", round);
                ck_assert_uint_gt(statistic(bus, "systemd_signals"), signals);
        }
        ck_assert_uint_eq(statistic(bus, "refreezes"), 2);

        leave_user_manager_standby(bus, "standby-i.service");
}
END_TEST

/* A window that ends while its ThawUnit is unanswered (the manager
 * stopped, SIGSTOP, for longer than the window) waits for the answer,
 * and then freezes the unit again: the journal's word that it is frozen,
 * with the thaw not yet recorded, is not taken. */
START_TEST(test_loop_systemd_window_waits_for_thaw) {
        char sub[600];
        int acted;

        if (!test_need_user_manager())
                return;
        sd_bus *bus = standby_sleeper("standby-w.service",
                                      "[Match]\nEvent=push\nUnit=standby-w.service\n[Action]\nThaw=standby-w.service\n"
                                      "For=200ms\n",
                                      sub, sizeof(sub));
        pid_t pid = um_pid();
        ck_assert_int_eq(kill(pid, SIGSTOP), 0);
        char *error = push_within(bus, "standby-w.service", 2 * USEC_PER_SEC, &acted);
        ck_assert_msg(!error, "a push was not answered while systemd was stopped: %s", error);
        ck_assert_int_eq(acted, 1);
        /* Past the window's end, before ThawUnit's 1 s fallback: a deadline
         * to pass, not an absence to show. */
        (void) poll(NULL, 0, 500);
        ck_assert_int_eq(kill(pid, SIGCONT), 0);

        /* Thawed (by systemd's answer or the fallback), recorded, and then
         * the window's refreeze, through systemd. */
        ck_assert_msg(wait_statistic(bus, "refreezes", 1, 10 * USEC_PER_SEC), "the window never froze the unit again");
        ck_assert_uint_ge(statistic(bus, "records"), 1);
        ck_assert(wait_freezer_state("standby-w.service", "frozen"));
        ck_assert(wait_frozen(sub, true));
        ck_assert(wait_journal_state(sub, UNIT_FROZEN, 5 * USEC_PER_SEC));

        leave_user_manager_standby(bus, "standby-w.service");
}
END_TEST

/* systemd drops a private connection that has not authenticated within
 * 90 s: the spare to a quiet manager is replaced before that (a minute
 * after it connected, with 10 s of timer slack; the test allows 80 s),
 * and the next thaw goes through systemd, no fallback. */
START_TEST(test_loop_systemd_spare_renewed) {
        char sub[600];
        int acted;

        if (!test_need_user_manager())
                return;
        sd_bus *bus = standby_sleeper("standby-r.service",
                                      "[Match]\nEvent=push\nUnit=standby-r.service\n[Action]\nThaw=standby-r.service\n", sub,
                                      sizeof(sub));

        ck_assert_msg(wait_statistic(bus, "systemd_renewals", 1, 80 * USEC_PER_SEC), "the spare was not renewed within 80 s");
        char *error = push_within(bus, "standby-r.service", 2 * USEC_PER_SEC, &acted);
        ck_assert_msg(!error, "a push was not answered: %s", error);
        ck_assert_int_eq(acted, 1);
        ck_assert(wait_frozen(sub, false));
        ck_assert(wait_statistic(bus, "systemd_thaws", 1, 10 * USEC_PER_SEC)); /* systemd thawed it */
        ck_assert_uint_eq(statistic(bus, "systemd_fallbacks"), 0);

        leave_user_manager_standby(bus, "standby-r.service");
}
END_TEST

/* A unit stopped while frozen: its process killed (a frozen task dies of
 * SIGKILL), its cgroup, once the kernel says it is empty, removed. The
 * listener's kept fds of it outlive it. */
static void kill_and_remove(pid_t pid, const char *sub) {
        _cleanup_close_ int cg = test_cgroup(sub);

        ck_assert_int_eq(kill(pid, SIGKILL), 0);
        ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
        ck_assert(test_wait_unpopulated(cg, 5 * USEC_PER_SEC));
        ck_assert_int_eq(unlinkat(T.root_fd, test_cgpath(sub), AT_REMOVEDIR), 0);
}

/* A unit whose cgroup was removed while frozen (its processes killed): the
 * push says its cgroup is gone; neither a failure nor a coalesced event. */
START_TEST(test_push_ex_reports_gone) {
        _cleanup_strv_free_ char **thawed = NULL, **failed = NULL;
        char expect[600];

        if (!test_need_root_cgroup2())
                return;
        pid_t pid = test_spawn_workload("mail.service", "idle", 100, 1, NULL);
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        (void) statistic(bus, "events"); /* the journal change is taken before a call */

        kill_and_remove(pid, "mail.service");

        ck_assert_ptr_null(thaw_call(bus, "PushEx", "mail.service", NULL, 0, &thawed, &failed));
        ck_assert(!thawed);
        snprintf(expect, sizeof(expect), "%s: its cgroup is gone", test_cgpath("mail.service"));
        ck_assert_msg(failed && streq(failed[0], expect) && !failed[1], "failed: %s", failed ? failed[0] : "none");
        ck_assert_uint_eq(statistic(bus, "thaw_failures"), 0);
        ck_assert_uint_eq(statistic(bus, "coalesced"), 0);

        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
        sd_bus_flush_close_unref(bus);
}
END_TEST

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

/* After a failed test (its teardown never ran): its bus and rules directory,
 * and its network namespace. */
static void sweep(void) {
        char cmd[300];
        test_env_sweep();
        snprintf(cmd, sizeof(cmd), "rm -rf /tmp/standby-listener-test.%s.*", test_runner_id());
        (void) !system(cmd);
        /* And its network namespaces (ip-netns(8) names in /run/netns). */
        snprintf(cmd, sizeof(cmd),
                 "for n in /run/netns/standby-test-%s-*; do [ -e \"$n\" ] && ip netns del \"${n##*/}\"; done; true",
                 test_runner_id());
        (void) !system(cmd);
}

/* A test case on the listener's usual fixtures (a private bus, a test
 * cgroup tree; swept after the case), added to s. */
/* A user's runtime directory of the test's making, /run/user/PS_UID, and
 * /run/user itself if it was not there: removed at the test's end, also
 * after a failed assertion (the process exits). */
#define PS_UID 4243
static bool ps_made_run_user;

static void ps_remove_runtime_dir(void) {
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf /run/user/%d", PS_UID);
        (void) !system(cmd);
        if (ps_made_run_user)
                (void) rmdir("/run/user");
}


/* A unit recorded as frozen by the user manager of PS_UID, whose socket
 * (/run/user/UID/systemd/private) is, with link, a link to a socket of the
 * test's own (as one to /run/systemd/private would be), else a socket of
 * the uid's whose queue is full (a connect to it waits): the listener's
 * connect (a child, common/private-socket.c) refuses the link, or does not
 * finish; either way the push is answered, the thaw is done through
 * cgroup.freeze, and nothing reaches the link's target, nor from exit; a
 * refused socket is not tried again at once. */
static void user_socket_case(bool link) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char rt[32], sd[48], sock[64], address[96];
        int acted, filler = -EBADF;

        if (!test_need_root_cgroup2())
                return;
        snprintf(rt, sizeof(rt), "/run/user/%d", PS_UID);
        if (access(rt, F_OK) == 0) {
                test_skip("%s exists: not the test's to use", rt);
                return;
        }
        ps_made_run_user = mkdir("/run/user", 0755) == 0;
        atexit(ps_remove_runtime_dir);
        snprintf(sd, sizeof(sd), "%s/systemd", rt);
        snprintf(sock, sizeof(sock), "%s/private", sd);
        ck_assert_int_eq(mkdir(rt, 0700), 0);
        ck_assert_int_eq(chown(rt, PS_UID, PS_UID), 0);
        ck_assert_int_eq(mkdir(sd, 0755), 0);
        ck_assert_int_eq(chown(sd, PS_UID, PS_UID), 0);
        int target = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        ck_assert_int_ge(target, 0);
        if (link)
                snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/target", dir);
        else
                snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
        ck_assert_int_eq(bind(target, (struct sockaddr *) &sa, sizeof(sa)), 0);
        ck_assert_int_eq(listen(target, link ? 16 : 0), 0);
        ck_assert_int_eq(chown(sa.sun_path, PS_UID, PS_UID), 0);
        if (link)
                ck_assert_int_eq(symlink(sa.sun_path, sock), 0);
        else {
                filler = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
                ck_assert_int_eq(connect(filler, (struct sockaddr *) &sa, sizeof(sa)), 0);
        }

        write_rule("60-a.rule", "[Match]\nEvent=push\nUnit=standby-a.service\n[Action]\nThaw=standby-a.service\n");
        test_spawn_workload("standby-a.service", "nanosleep", 10, 1, NULL);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert(test_frozen("standby-a.service"));
        snprintf(address, sizeof(address), "unix:path=%s", sock);
        test_journal_set_address("standby-a.service", address);
        start_listener();
        sd_bus *bus = client();
        char *error = push_within(bus, "standby-a.service", 3 * USEC_PER_SEC, &acted);
        ck_assert_msg(!error, "a push was not answered: %s", error);
        ck_assert_int_eq(acted, 1);
        ck_assert(wait_frozen("standby-a.service", false));
        ck_assert_uint_eq(statistic(bus, "systemd_fallbacks"), 1);
        if (link) {
                int c = accept4(target, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                ck_assert_msg(c < 0 && errno == EAGAIN, "a connection reached the link's target");
                /* Refused once (connected ahead at the start), and not tried
                 * again for the push: a user cannot make the listener fork
                 * a child at every event or journal change. */
                ck_assert_uint_eq(statistic(bus, "systemd_connects"), 1);
        }

        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
        if (link) {
                int c = accept4(target, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                ck_assert_msg(c < 0 && errno == EAGAIN, "a connection from exit reached the link's target");
        }
        safe_close(filler);
        close(target);
        sd_bus_flush_close_unref(bus);
        ps_remove_runtime_dir();
}

START_TEST(test_loop_user_socket_link_refused) {
        user_socket_case(true);
}
END_TEST

START_TEST(test_loop_user_socket_connect_waits) {
        user_socket_case(false);
}
END_TEST

static TCase *listener_tcase(Suite *s, const char *name, int timeout) {
        TCase *tc = tcase_create(name);
        tcase_set_timeout(tc, timeout);
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_unchecked_fixture(tc, NULL, sweep);
        suite_add_tcase(s, tc);
        return tc;
}

Suite *listener_suite(void) {
        Suite *s = suite_create("listener");
        TCase *tc = listener_tcase(s, "dbus", 60);
        tcase_add_test(tc, test_push_thaws_for_window);
        tcase_add_test(tc, test_push_thaws_every_name);
        tcase_add_test(tc, test_refreeze_before_record);
        tcase_add_test(tc, test_push_storm_coalesces);
        tcase_add_test(tc, test_thaw_recorded);
        tcase_add_test(tc, test_push_access_denied);
        tcase_add_test(tc, test_exit_standby_rule);
        tcase_add_test(tc, test_app_locks);
        tcase_add_test(tc, test_inhibit_refuses_controls);
        tcase_add_test(tc, test_introspect_names_arguments);
        tcase_add_test(tc, test_inhibit_slots_reserved);
        tcase_add_test(tc, test_inhibit_user_delay_once);
        tcase_add_test(tc, test_lock_wakes_only_on_close);
        tcase_add_test(tc, test_enter_bus_stopped);
        tcase_add_test(tc, test_exit_during_apps_delay);
        tcase_add_test(tc, test_told_without_standby);
        tcase_add_test(tc, test_told_not_by_forged_owner_change);
        tcase_add_test(tc, test_reload);
        tcase_add_test(tc, test_idle_no_wakeups);
        tcase_add_test(tc, test_restart_reconciles);
        tcase_add_test(tc, test_dbus_signal_rule);
        tcase_add_test(tc, test_dbus_signal_directed_ignored);
        tcase_add_test(tc, test_dbus_signal_sender_owner);
        tcase_add_test(tc, test_same_unit_of_two_users);
        tcase_add_test(tc, test_restart_enforces_journal);
        tcase_add_test(tc, test_push_during_enter_replayed);
        tcase_add_test(tc, test_late_exit_kept_per_rule);
        tcase_add_test(tc, test_network_events);
        tcase_add_test(tc, test_network_overrun_resync);
        tcase_add_test(tc, test_network_only_what_rules_need);
        tcase_add_test(tc, test_uevent_rule);
        tcase_add_test(tc, test_socket_wakes_server);
        tcase_add_test(tc, test_input_stream_lid);
        tcase_add_test(tc, test_dbus_call_thaws_owner);
        tcase_add_test(tc, test_dbus_call_with_its_freeze_in_one_wakeup);
        tcase_add_test(tc, test_dbus_call_owner_killed_frees_its_name);
        tcase_add_test(tc, test_dbus_call_unread_at_enter);
        tcase_add_test(tc, test_bus_loss_exits);
        tcase_add_test(tc, test_bus_loss_exits_with_monitor);
        tcase_add_test(tc, test_input_stream_dropped);

        /* A case of their own, so that `make check-vm` runs just these where
         * /dev/uinput exists (CK_RUN_CASE=uinput); they skip elsewhere. */
        tc = listener_tcase(s, "uinput", 120);
        tcase_add_test(tc, test_input_uinput_power_button);
        tcase_add_test(tc, test_input_uinput_overrun_resync);

        /* Who may wake what. */
        tc = listener_tcase(s, "trust", 60);
        tcase_add_test(tc, test_push_group_member);
        tcase_add_test(tc, test_push_judged_by_bus_creds);
        tcase_add_test(tc, test_statistics_access);
        tcase_add_test(tc, test_push_pipelined_new_callers);
        tcase_add_test(tc, test_push_creds_one_place_per_sender);
        tcase_add_test(tc, test_dbus_call_refused_by_policy);
        tcase_add_test(tc, test_forged_call_at_enter);
        tcase_add_test(tc, test_spoofed_bus_at_enter);
        tcase_add_test(tc, test_spoofed_bus_call);
        tcase_add_test(tc, test_call_forged_in_a_delivered_body);
        tcase_add_test(tc, test_state_dir_replaced);
        tcase_add_test(tc, test_netlink_forged_dropped);

        /* The listener's loop never waits: not for a unit stuck at its
         * window's end, nor for a stopped systemd manager. */
        tc = listener_tcase(s, "loop", 90);
        tcase_add_test(tc, test_loop_stuck_refreeze_answers_push);
        tcase_add_test(tc, test_loop_journal_locked_answers_push);
        tcase_add_test(tc, test_loop_reload_with_hung_bus);
        tcase_add_test(tc, test_loop_reload_with_hung_monitor);
        tcase_add_test(tc, test_loop_reload_monitor_timeout);
        /* Thaws asked over the bus: their windows are the listener's, their
         * replies say what they did. */
        tc = listener_tcase(s, "window", 60);
        tcase_add_test(tc, test_thaw_for_window_is_the_listeners);
        tcase_add_test(tc, test_thaw_for_needs_the_listener);
        tcase_add_test(tc, test_push_ex_reports_failed_thaw);
        tcase_add_test(tc, test_push_ex_reports_gone);

        /* New work started during standby is held. */
        tc = listener_tcase(s, "hold", 60);
        tcase_add_test(tc, test_hold_new_cgroup);
        tcase_add_test(tc, test_hold_restarted_wakes);
        tcase_add_test(tc, test_hold_spares_exempt);
        tcase_add_test(tc, test_hold_own_units_by_place);
        tcase_add_test(tc, test_hold_in_new_slice);
        tcase_add_test(tc, test_hold_with_journal_locked);
        tcase_add_test(tc, test_hold_budget_per_user);
        tc = listener_tcase(s, "user-socket", 60);
        tcase_add_test(tc, test_loop_user_socket_link_refused);
        tcase_add_test(tc, test_loop_user_socket_connect_waits);
        tc = tcase_create("loop-systemd");
        tcase_set_timeout(tc, 90);
        tcase_add_checked_fixture(tc, setup_user_manager, teardown_user_manager);
        tcase_add_unchecked_fixture(tc, NULL, sweep);
        tcase_add_test(tc, test_loop_systemd_stopped_thaws_through_cgroupfs);
        tcase_add_test(tc, test_loop_systemd_window_waits_for_thaw);
        tcase_add_test(tc, test_loop_systemd_inactive_thaws_through_cgroupfs);
        tcase_add_test(tc, test_loop_systemd_thaw_window);
        tcase_add_test(tc, test_loop_systemd_link_closed_when_idle);
        tcase_add_test(tc, test_hold_releases_timer_job);
        suite_add_tcase(s, tc);
        /* A minute and more of standby: a case of its own, for its bound. */
        tc = tcase_create("systemd-spare");
        tcase_set_timeout(tc, 150);
        tcase_add_checked_fixture(tc, setup_user_manager, teardown_user_manager);
        tcase_add_unchecked_fixture(tc, NULL, sweep);
        tcase_add_test(tc, test_loop_systemd_spare_renewed);
        suite_add_tcase(s, tc);
        return s;
}
