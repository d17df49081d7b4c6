/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The listener's interface as a desktop client sees it: the properties
 * (anyone's to read, under the shipped bus policy), PropertiesChanged and
 * Entered, Left and Thawed through a standby, Enter and Exit over the bus,
 * and who may call them: root, and whom polkit allows (no polkit: nobody). */
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "listener-harness.h"
#include "standby.h"
#include "test-util.h"

#define PATH "/org/standby/Listener1"
#define IFACE "org.standby.Listener1"

/* What a client heard from the listener: the last State a
 * PropertiesChanged carried, and the signals by name. */
typedef struct Heard {
        char state[32];
        char inhibitor_who[64]; /* the first lock's who in the last Inhibitors change; "-" for none */
        unsigned state_changes, entered, left, thawed;
        char entered_how[256], left_why[256], thawed_unit[256], thawed_cause[PATH_MAX];
} Heard;

static int on_properties_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Heard *h = userdata;
        const char *iface, *name;

        if (sd_bus_message_read(m, "s", &iface) < 0 || !streq(iface, IFACE) ||
            sd_bus_message_enter_container(m, 'a', "{sv}") < 0)
                return 0;
        while (sd_bus_message_enter_container(m, 'e', "sv") > 0) {
                if (sd_bus_message_read(m, "s", &name) < 0)
                        return 0;
                if (streq(name, "State")) {
                        const char *s;
                        if (sd_bus_message_read(m, "v", "s", &s) < 0)
                                return 0;
                        snprintf(h->state, sizeof(h->state), "%s", s);
                        h->state_changes++;
                } else if (streq(name, "Inhibitors")) {
                        const char *what, *who, *why, *mode;
                        uint32_t uid, pid;
                        if (sd_bus_message_enter_container(m, 'v', "a(ssssuu)") < 0 ||
                            sd_bus_message_enter_container(m, 'a', "(ssssuu)") < 0)
                                return 0;
                        if (sd_bus_message_read(m, "(ssssuu)", &what, &who, &why, &mode, &uid, &pid) > 0)
                                snprintf(h->inhibitor_who, sizeof(h->inhibitor_who), "%s", who);
                        else
                                snprintf(h->inhibitor_who, sizeof(h->inhibitor_who), "-");
                        return 0; /* the rest of the message is not looked at */
                } else if (sd_bus_message_skip(m, "v") < 0)
                        return 0;
                if (sd_bus_message_exit_container(m) < 0)
                        return 0;
        }
        return 0;
}

static int on_signal(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Heard *h = userdata;
        const char *a, *b, *c;

        if (sd_bus_message_is_signal(m, IFACE, "Entered") && sd_bus_message_read(m, "s", &a) >= 0) {
                h->entered++;
                snprintf(h->entered_how, sizeof(h->entered_how), "%s", a);
        } else if (sd_bus_message_is_signal(m, IFACE, "Left") && sd_bus_message_read(m, "s", &a) >= 0) {
                h->left++;
                snprintf(h->left_why, sizeof(h->left_why), "%s", a);
        } else if (sd_bus_message_is_signal(m, IFACE, "Thawed") && sd_bus_message_read(m, "sss", &a, &b, &c) >= 0) {
                h->thawed++;
                snprintf(h->thawed_unit, sizeof(h->thawed_unit), "%s", a);
                snprintf(h->thawed_cause, sizeof(h->thawed_cause), "%s", c);
        }
        return 0;
}

/* Subscribes bus to the listener's PropertiesChanged and its own signals. */
static void listen_to(sd_bus *bus, Heard *h) {
        ck_assert_int_ge(sd_bus_match_signal(bus, NULL, NULL, PATH, "org.freedesktop.DBus.Properties",
                                             "PropertiesChanged", on_properties_changed, h),
                         0);
        ck_assert_int_ge(sd_bus_match_signal(bus, NULL, NULL, PATH, IFACE, NULL, on_signal, h), 0);
}

/* Processes bus until *count reaches want, within 10 s. */
static bool hear(sd_bus *bus, const unsigned *count, unsigned want) {
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC;

        while (*count < want && now_usec(CLOCK_MONOTONIC) < deadline) {
                if (sd_bus_process(bus, NULL) > 0)
                        continue;
                (void) sd_bus_wait(bus, deadline - MIN(deadline, now_usec(CLOCK_MONOTONIC)));
        }
        return *count >= want;
}

static char *get_string(sd_bus *bus, const char *property) {
        char *s = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        ck_assert_msg(sd_bus_get_property_string(bus, IFACE, PATH, IFACE, property, &error, &s) >= 0, "%s: %s",
                      property, strna(error.message));
        return s;
}

static uint64_t get_u64(sd_bus *bus, const char *property) {
        uint64_t v = 0;
        ck_assert_int_ge(sd_bus_get_property_trivial(bus, IFACE, PATH, IFACE, property, NULL, 't', &v), 0);
        return v;
}

/* A call of method with no arguments; returns the error's name, or NULL. */
static char *call(sd_bus *bus, const char *method) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        char *name = NULL;
        if (sd_bus_call_method(bus, IFACE, PATH, IFACE, method, &error, NULL, "") < 0)
                name = strdup(error.name ?: "?");
        sd_bus_error_free(&error);
        return name;
}

/* A client follows one standby by its signals, polling nothing: State
 * through PropertiesChanged, Entered and Left with how and why, Thawed
 * for a push's unit with its rule; and the properties say the same. */
START_TEST(test_properties_follow_standby) {
        if (!test_need_root_cgroup2())
                return;
        Heard h = {};
        test_spawn_workload("mail.service", "idle", 100, 1, NULL);
        start_listener();
        sd_bus *bus = client();
        listen_to(bus, &h);
        _cleanup_free_ char *state0 = get_string(bus, "State");
        ck_assert_str_eq(state0, "inactive");
        ck_assert_uint_eq(get_u64(bus, "Since"), 0);

        usec_t before = now_usec(CLOCK_REALTIME);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert_msg(hear(bus, &h.entered, 1), "no Entered signal");
        ck_assert_str_eq(h.state, "active");
        ck_assert_msg(strstr(h.entered_how, "by hand"), "Entered(%s)", h.entered_how);
        _cleanup_free_ char *state = get_string(bus, "State"), *strategy = get_string(bus, "Strategy"),
                            *by = get_string(bus, "EnteredBy");
        ck_assert_str_eq(state, "active");
        ck_assert_str_eq(strategy, "freeze");
        ck_assert_str_eq(by, h.entered_how);
        uint64_t since = get_u64(bus, "Since");
        ck_assert_msg(since >= before - USEC_PER_SEC && since <= now_usec(CLOCK_REALTIME), "Since=%" PRIu64, since);

        /* A thaw is told with the unit and what asked for it. */
        ck_assert_ptr_null(push(bus, "mail.service", NULL));
        ck_assert_msg(hear(bus, &h.thawed, 1), "no Thawed signal");
        ck_assert_str_eq(h.thawed_unit, "mail.service");
        ck_assert_msg(strstr(h.thawed_cause, "10-mail.rule"), "Thawed(cause %s)", h.thawed_cause);
        ck_assert_uint_ge(get_u64(bus, "Thaws"), 1);
        ck_assert_uint_ge(get_u64(bus, "Events"), 1);

        /* An app's lock is told as it comes and goes. */
        sd_bus_message *reply = NULL;
        int fd;
        ck_assert_int_ge(sd_bus_call_method(bus, IFACE, PATH, IFACE, "Inhibit", NULL, &reply, "ssss", "standby",
                                            "bus-api-test", "a test", "delay"),
                         0);
        ck_assert_int_ge(sd_bus_message_read(reply, "h", &fd), 0);
        fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        sd_bus_message_unref(reply);
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC;
        while (!streq(h.inhibitor_who, "bus-api-test") && now_usec(CLOCK_MONOTONIC) < deadline)
                if (sd_bus_process(bus, NULL) == 0)
                        (void) sd_bus_wait(bus, 100 * USEC_PER_MSEC);
        ck_assert_str_eq(h.inhibitor_who, "bus-api-test");
        safe_close(fd);
        deadline = now_usec(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC;
        while (!streq(h.inhibitor_who, "-") && now_usec(CLOCK_MONOTONIC) < deadline)
                if (sd_bus_process(bus, NULL) == 0)
                        (void) sd_bus_wait(bus, 100 * USEC_PER_MSEC);
        ck_assert_str_eq(h.inhibitor_who, "-");

        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert_msg(hear(bus, &h.left, 1), "no Left signal");
        ck_assert_str_eq(h.state, "inactive");
        ck_assert_msg(strstr(h.left_why, "by hand"), "Left(%s)", h.left_why);
        _cleanup_free_ char *state2 = get_string(bus, "State"), *by2 = get_string(bus, "EnteredBy");
        ck_assert_str_eq(state2, "inactive");
        ck_assert_str_eq(by2, "");
        ck_assert_uint_ge(get_u64(bus, "Since"), since);
        ck_assert_uint_eq(h.entered, 1);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* Enter and Exit over the bus run the engine (here, with no logind,
 * standby-manager beside the listener), answered at once; the signals
 * tell when each is done, and say who asked. */
START_TEST(test_enter_exit_methods) {
        if (!test_need_root_cgroup2())
                return;
        Heard h = {};
        test_spawn_workload("mail.service", "idle", 100, 1, NULL);
        start_listener();
        sd_bus *bus = client();
        listen_to(bus, &h);

        _cleanup_free_ char *e1 = call(bus, "Enter");
        ck_assert_msg(!e1, "Enter: %s", e1);
        ck_assert_msg(hear(bus, &h.entered, 1), "no Entered signal after Enter");
        ck_assert_str_eq(h.entered_how, "Enter over the bus by uid 0");
        ck_assert(test_frozen("mail.service"));
        /* Entered already: nothing to add. */
        _cleanup_free_ char *e2 = call(bus, "Enter");
        ck_assert_msg(!e2, "a second Enter: %s", e2);

        _cleanup_free_ char *x1 = call(bus, "Exit");
        ck_assert_msg(!x1, "Exit: %s", x1);
        ck_assert_msg(hear(bus, &h.left, 1), "no Left signal after Exit");
        ck_assert_str_eq(h.left_why, "Exit over the bus by uid 0");
        ck_assert(!test_frozen("mail.service"));
        ck_assert_uint_eq(h.entered, 1);
        /* Left already: nothing to do. */
        _cleanup_free_ char *x2 = call(bus, "Exit");
        ck_assert_msg(!x2, "a second Exit: %s", x2);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* A bus as strict as Debian's system bus (method calls denied unless a
 * policy allows them) with the listener's shipped policy. */
static void restart_dbus_shipped_policy(void) {
        char policy[PATH_MAX], extra[PATH_MAX + 512];
        ck_assert_ptr_nonnull(realpath(getenv("STANDBY_UNITS_DIR") ?: "units", policy));
        snprintf(extra, sizeof(extra),
                 "<policy context=\"default\"><deny send_type=\"method_call\"/>"
                 "<allow send_destination=\"org.freedesktop.DBus\" send_interface=\"org.freedesktop.DBus\"/></policy>\n"
                 "<include>%s/org.standby.Listener1.conf</include>",
                 policy);
        restart_dbus_with(extra);
}

/* In a child as nobody (uid and gid 65534, no groups), on the fixture's
 * bus: reads the properties, is refused Enter and Exit (no polkit on this
 * bus: refused all the same), and hears Left but never Thawed, which the
 * policy keeps for root. Says "ready" on ready_fd once subscribed. */
_noreturn_ static void nobody_client(int ready_fd) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus *bus = NULL;
        char *s = NULL;
        gid_t none = 65534;
        Heard h = {};

        if (setgroups(1, &none) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                _exit(10);
        if (sd_bus_new(&bus) < 0 || sd_bus_set_address(bus, bus_address) < 0 || sd_bus_set_bus_client(bus, true) < 0 ||
            sd_bus_start(bus) < 0)
                _exit(11);
        if (sd_bus_get_property_string(bus, IFACE, PATH, IFACE, "State", &error, &s) < 0 || !streq(s, "active"))
                _exit(12);
        free(s);
        if (sd_bus_get_property_string(bus, IFACE, PATH, IFACE, "EnteredBy", &error, &s) < 0 || !strstr(s, "by hand"))
                _exit(13);
        free(s);
        if (sd_bus_call_method(bus, IFACE, PATH, "org.freedesktop.DBus.Properties", "GetAll", &error, NULL, "s",
                               IFACE) < 0)
                _exit(14);
        /* Refused, saying polkit was asked and could not answer. */
        if (sd_bus_call_method(bus, IFACE, PATH, IFACE, "Enter", &error, NULL, "") >= 0 ||
            !sd_bus_error_has_name(&error, SD_BUS_ERROR_ACCESS_DENIED) || !strstr(strna(error.message), "polkit"))
                _exit(15);
        sd_bus_error_free(&error);
        if (sd_bus_call_method(bus, IFACE, PATH, IFACE, "Exit", &error, NULL, "") >= 0 ||
            !sd_bus_error_has_name(&error, SD_BUS_ERROR_ACCESS_DENIED))
                _exit(16);
        sd_bus_error_free(&error);
        if (sd_bus_call_method(bus, IFACE, PATH, IFACE, "ThawUnit", &error, NULL, "st", "mail.service",
                               (uint64_t) USEC_PER_SEC) >= 0 ||
            !sd_bus_error_has_name(&error, SD_BUS_ERROR_ACCESS_DENIED))
                _exit(17);
        sd_bus_error_free(&error);
        if (sd_bus_match_signal(bus, NULL, NULL, PATH, IFACE, NULL, on_signal, &h) < 0)
                _exit(18);
        if (write(ready_fd, "ready", 5) != 5)
                _exit(19);
        /* One sender's messages arrive in order: the Thawed the root's push
         * caused comes before the Left of the exit after it. */
        if (!hear(bus, &h.left, 1))
                _exit(20);
        _exit(h.thawed == 0 ? 0 : 21);
}

/* Under the shipped policy, anyone reads the state; nobody (not root, not
 * in Group=, no polkit to ask) may change it; Thawed is root's to hear. */
START_TEST(test_nobody_reads_but_may_not_enter) {
        if (!test_need_root_cgroup2())
                return;
        Heard h = {};
        int p[2], status;
        char buf[8] = {};

        restart_dbus_shipped_policy();
        sd_bus *bus = standby_with_idle_mail();
        listen_to(bus, &h);
        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0)
                nobody_client(p[1]);
        close(p[1]);
        struct pollfd pf = { .fd = p[0], .events = POLLIN };
        ck_assert_msg(poll(&pf, 1, 10000) == 1 && read(p[0], buf, sizeof(buf) - 1) == 5,
                      "the client as nobody never got ready");
        close(p[0]);
        ck_assert(test_frozen("mail.service")); /* its Enter, Exit and ThawUnit did nothing */

        ck_assert_ptr_null(push(bus, "mail.service", NULL));
        ck_assert_msg(hear(bus, &h.thawed, 1), "root heard no Thawed");
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the client as nobody: wait status 0x%x",
                      (unsigned) status);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* Drops to nobody (uid and gid 65534, no groups), or exits with code. */
static void become_nobody(int code) {
        gid_t none = 65534;
        if (setgroups(1, &none) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                _exit(code);
}

/* A call as nobody that must be refused, polkit (absent here) asked for
 * action: whether the error says so. */
static bool refused_asking(sd_bus *bus, const char *action, const char *method, const char *types, ...) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *m = NULL;
        char want[128];
        bool ok;
        va_list ap;

        if (sd_bus_message_new_method_call(bus, &m, IFACE, PATH, IFACE, method) < 0)
                return false;
        va_start(ap, types);
        int r = sd_bus_message_appendv(m, types, ap);
        va_end(ap);
        if (r < 0)
                return false;
        snprintf(want, sizeof(want), "polkit authorizes for %s may", action);
        r = sd_bus_call(bus, m, 0, &error, NULL);
        ok = r < 0 && sd_bus_error_has_name(&error, SD_BUS_ERROR_ACCESS_DENIED) && strstr(strna(error.message), want);
        if (!ok)
                fprintf(stderr, "%s as nobody: %s: %s (wanted polkit asked for %s)\n", method, strna(error.name),
                        strna(error.message), action);
        sd_bus_error_free(&error);
        sd_bus_message_unref(m);
        return ok;
}

/* nobody's units (below user-65534.slice/user@65534.service, hers) and
 * others'; which polkit action each thaw asks for: thaw-own for hers,
 * thaw (an administrator's) for a system unit, for one below her manager
 * that is not hers, for her cgroup named like another user's manager
 * below his, and for a path that is not canonical. A block lock asks
 * inhibit-block. No polkit on this bus: every one is refused. */
#define NOBODY_MANAGER "user.slice/user-65534.slice/user@65534.service"
START_TEST(test_nobody_thaw_own_or_other) {
        if (!test_need_root_cgroup2())
                return;
        int status;

        test_write_config("Backend=cgroupfs\n");
        test_spawn_workload("mail.service", "idle", 100, 1, NULL);
        test_spawn_workload(NOBODY_MANAGER "/app.slice/sync.service", "idle", 100, 1, NULL);
        test_spawn_workload(NOBODY_MANAGER "/app.slice/roots.service", "idle", 100, 1, NULL);
        test_spawn_workload("user.slice/user-1000.slice/user@1000.service/app.slice/" NOBODY_MANAGER "/fake.service",
                            "idle", 100, 1, NULL);
        ck_assert_int_eq(fchownat(T.root_fd, test_cgpath(NOBODY_MANAGER "/app.slice/sync.service"), 65534, 65534, 0),
                         0);
        ck_assert_int_eq(fchownat(T.root_fd,
                                  test_cgpath("user.slice/user-1000.slice/user@1000.service/app.slice/" NOBODY_MANAGER
                                              "/fake.service"),
                                  65534, 65534, 0),
                         0);
        start_listener();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert(test_frozen(NOBODY_MANAGER "/app.slice/sync.service"));

        char own[PATH_MAX], dotdot[PATH_MAX + 64];
        snprintf(own, sizeof(own), "%s", test_cgpath(NOBODY_MANAGER "/app.slice/sync.service"));
        snprintf(dotdot, sizeof(dotdot), "%s/../../../../../mail.service", own);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                sd_bus *bus = NULL;
                become_nobody(10);
                if (sd_bus_new(&bus) < 0 || sd_bus_set_address(bus, bus_address) < 0 ||
                    sd_bus_set_bus_client(bus, true) < 0 || sd_bus_start(bus) < 0)
                        _exit(11);
                if (!refused_asking(bus, "org.standby.thaw-own", "ThawUnit", "st", "sync.service", USEC_PER_SEC))
                        _exit(12);
                if (!refused_asking(bus, "org.standby.thaw", "ThawUnit", "st", "mail.service", USEC_PER_SEC))
                        _exit(13);
                if (!refused_asking(bus, "org.standby.thaw", "ThawUnit", "st", "roots.service", USEC_PER_SEC))
                        _exit(14);
                if (!refused_asking(bus, "org.standby.thaw", "ThawUnit", "st", "fake.service", USEC_PER_SEC))
                        _exit(15);
                /* Frozen by nobody's name? Not hers to learn: an
                 * administrator's question, as another user's unit. */
                if (!refused_asking(bus, "org.standby.thaw", "ThawUnit", "st", "nosuch.service", USEC_PER_SEC))
                        _exit(16);
                if (!refused_asking(bus, "org.standby.thaw-own", "Thaw", "ast", 1, own, USEC_PER_SEC))
                        _exit(17);
                if (!refused_asking(bus, "org.standby.thaw", "Thaw", "ast", 1, dotdot, USEC_PER_SEC))
                        _exit(18);
                if (!refused_asking(bus, "org.standby.inhibit-block", "Inhibit", "ssss", "standby", "test", "a test",
                                    "block"))
                        _exit(19);
                _exit(0);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "nobody's thaws: wait status 0x%x",
                      (unsigned) status);
        ck_assert(test_frozen(NOBODY_MANAGER "/app.slice/sync.service"));
        ck_assert(test_frozen("mail.service"));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
}
END_TEST

/* standby-manager VERB as nobody, who cannot read the journal (its
 * directory is root's, 0700), against the fixture's bus: its stdout into
 * out, its exit status returned. */
static int manager_as_nobody(const char *config, const char *verb, char *out, size_t size) {
        int p[2], status;
        size_t n = 0;
        ssize_t k;

        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                if (dup2(p[1], STDOUT_FILENO) < 0)
                        _exit(120);
                become_nobody(121);
                execl(test_bin("standby-manager"), "standby-manager", "--config", config, "--state-dir", T.state_dir,
                      "--bus-address", bus_address, verb, NULL);
                _exit(122);
        }
        close(p[1]);
        /* Bounded by the manager's own: 2 s for the bus. */
        while (n + 1 < size && (k = read(p[0], out + n, size - n - 1)) > 0)
                n += (size_t) k;
        out[n] = 0;
        close(p[0]);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status), "standby-manager %s as nobody: wait status 0x%x", verb, (unsigned) status);
        return WEXITSTATUS(status);
}

/* status and is-active are anyone's, as systemctl status is: nobody
 * reads the state, the strategy, how it was entered, the counters and the
 * locks from the listener's properties; units are root's. */
START_TEST(test_nobody_status_from_properties) {
        if (!test_need_root_cgroup2())
                return;
        char out[4096];
        int lock;

        restart_dbus_shipped_policy();
        sd_bus *bus = standby_with_idle_mail();
        /* The journal and the configuration are in a directory of root's,
         * 0700, as /run/standby (and its standby.conf.d) is: nobody reads
         * neither, and needs neither. */
        const char *config = T.config;
        ck_assert_int_ne(access(T.state_dir, F_OK), -1);

        sd_bus_message *reply = NULL;
        ck_assert_int_ge(sd_bus_call_method(bus, IFACE, PATH, IFACE, "Inhibit", NULL, &reply, "ssss", "standby",
                                            "status-test", "a lock to list", "delay"),
                         0);
        ck_assert_int_ge(sd_bus_message_read(reply, "h", &lock), 0);
        lock = fcntl(lock, F_DUPFD_CLOEXEC, 3);
        sd_bus_message_unref(reply);

        ck_assert_int_eq(manager_as_nobody(config, "status", out, sizeof(out)), EXIT_OK);
        ck_assert_msg(strstr(out, "Standby: active\n"), "status as nobody: %s", out);
        ck_assert_msg(strstr(out, "Strategy: freeze, since "), "status as nobody: %s", out);
        ck_assert_msg(strstr(out, "Entered: by hand"), "status as nobody: %s", out);
        ck_assert_msg(strstr(out, "Listener: "), "status as nobody: %s", out);
        ck_assert_msg(strstr(out, "Lock on standby: delay lock: status-test (uid 0"), "status as nobody: %s", out);
        ck_assert_msg(strstr(out, "Units: shown to root only"), "status as nobody: %s", out);
        ck_assert_msg(!strstr(out, "mail.service"), "status as nobody names a unit: %s", out);
        ck_assert_int_eq(manager_as_nobody(config, "is-active", out, sizeof(out)), EXIT_OK);
        ck_assert_str_eq(out, "active\n");

        safe_close(lock);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert_int_eq(manager_as_nobody(config, "is-active", out, sizeof(out)), EXIT_STATUS_INACTIVE);
        ck_assert_str_eq(out, "inactive\n");
        ck_assert_int_eq(manager_as_nobody(config, "status", out, sizeof(out)), EXIT_STATUS_INACTIVE);
        ck_assert_msg(strstr(out, "Standby: inactive\n"), "status as nobody: %s", out);

        /* No listener to ask: unknown (4), saying why. */
        ck_assert_int_eq(stop_listener(SIGTERM) >= 0, 1);
        ck_assert_int_eq(manager_as_nobody(config, "status", out, sizeof(out)), EXIT_STATUS_UNKNOWN);
        sd_bus_flush_close_unref(bus);
}
END_TEST

void listener_bus_api_tests(const ListenerCases *c) {
        tcase_add_test(c->bus_api, test_properties_follow_standby);
        tcase_add_test(c->bus_api, test_enter_exit_methods);
        tcase_add_test(c->bus_api, test_nobody_reads_but_may_not_enter);
        tcase_add_test(c->bus_api, test_nobody_thaw_own_or_other);
        tcase_add_test(c->bus_api, test_nobody_status_from_properties);
}
