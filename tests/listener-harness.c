/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The fixtures of the listener's end-to-end tests (listener-harness.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "fileio.h"
#include "listener-harness.h"
#include "manager.h"
#include "pidfd.h"
#include "proc.h"
#include "test-util.h"

/* The test's directory (its bus, rules, notify socket), what the listener is
 * started with, and its pid (0: none runs). */
char harness_dir[64], bus_address[512], rules_dir[256];
pid_t dbus_pid, listener_pid;
char listener_netns[64];
bool listener_userns;
static int notify_fd = -EBADF;

void write_rule(const char *name, const char *text) {
        char p[512];
        snprintf(p, sizeof(p), "%s/%s", rules_dir, name);
        FILE *f = fopen(p, "we");
        ck_assert_ptr_nonnull(f);
        fputs(text, f);
        fclose(f);
}

int unlink_rule(const char *name) {
        char p[512];
        snprintf(p, sizeof(p), "%s/%s", rules_dir, name);
        return unlink(p) < 0 ? -errno : 0;
}

bool wait_notify(const char *text) {
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

void start_listener(void) {
        char notify_path[300], env[320];
        snprintf(notify_path, sizeof(notify_path), "%s/notify", harness_dir);
        snprintf(env, sizeof(env), "NOTIFY_SOCKET=%s", notify_path);

        listener_pid = fork();
        ck_assert_int_ge(listener_pid, 0);
        if (listener_pid == 0) {
                char manager[PATH_MAX];
                putenv(env);
                /* The standby-manager it runs (an exit) is the build's, also
                 * where the runner (tests/run-tests.sh) did not say so. */
                if (realpath(test_bin("standby-manager"), manager))
                        (void) setenv("STANDBY_LISTENER_MANAGER_PATH", manager, 0);
                if (listener_netns[0]) {
                        char p[128];
                        snprintf(p, sizeof(p), "/run/netns/%s", listener_netns);
                        int fd = open(p, O_RDONLY | O_CLOEXEC);
                        /* Only the network namespace: ip netns exec would also
                         * remount /sys, and with it the cgroup2 mount. */
                        if (fd < 0 || setns(fd, CLONE_NEWNET) < 0)
                                _exit(126);
                }
                if (listener_userns && (unshare(CLONE_NEWUSER) < 0 ||
                                        write_stringat(AT_FDCWD, "/proc/self/uid_map", "0 0 1") < 0 ||
                                        write_stringat(AT_FDCWD, "/proc/self/setgroups", "deny") < 0 ||
                                        write_stringat(AT_FDCWD, "/proc/self/gid_map", "0 0 1") < 0))
                        _exit(125);
                execl(test_bin("standby-listener"), "standby-listener", "--config", T.config, "--state-dir",
                      T.state_dir, "--rules-dir", rules_dir, "--bus-address", bus_address, NULL);
                _exit(127);
        }
        ck_assert_msg(wait_notify("READY=1"), "the listener never said READY=1");
}

int stop_listener(int sig) {
        int status = -1;
        if (listener_pid <= 0)
                return -1;
        (void) kill(listener_pid, sig);
        if (waitpid(listener_pid, &status, 0) != listener_pid)
                status = -1;
        listener_pid = 0;
        return status;
}

int wait_listener_exit(usec_t timeout) {
        _cleanup_close_ int pidfd = pidfd_of_pid(listener_pid);
        struct pollfd p = { .fd = pidfd, .events = POLLIN };
        int status = -1;

        if (pidfd < 0 || poll(&p, 1, (int) (timeout / USEC_PER_MSEC)) != 1 ||
            waitpid(listener_pid, &status, 0) != listener_pid)
                return -1;
        listener_pid = 0;
        return status;
}

void run_ip(const char *a, const char *b, const char *c, const char *d, const char *e, const char *f,
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

void listener_setup(void) {
        test_env_setup();
        if (T.unavailable)
                return; /* the test skips */
        /* World-readable, so that an unprivileged client can reach the bus. */
        snprintf(harness_dir, sizeof(harness_dir), "/tmp/standby-listener-test.%s.%d", test_runner_id(),
                 (int) getpid());
        ck_assert_int_eq(mkdir(harness_dir, 0755) == 0 || errno == EEXIST, 1);
        chmod(harness_dir, 0755);
        snprintf(rules_dir, sizeof(rules_dir), "%s/rules", harness_dir);
        (void) mkdir(rules_dir, 0755);

        /* The datagram socket for sd_notify(). */
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/notify", harness_dir);
        (void) unlink(sa.sun_path);
        notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        ck_assert_int_ge(notify_fd, 0);
        ck_assert_int_eq(bind(notify_fd, (struct sockaddr *) &sa, sizeof(sa)), 0);

        dbus_pid = test_start_dbus(harness_dir, bus_address, sizeof(bus_address));

        write_rule("10-mail.rule", "[Match]\nEvent=push\nUnit=mail.service\n[Action]\nThaw=mail.service\nFor=1s\n");
        write_rule("20-lid.rule", "[Match]\nEvent=push\nUnit=lid.service\n[Action]\nExitStandby=yes\n");
}

void listener_teardown(void) {
        char cmd[300];
        /* SIGTERM ends it cleanly: status 0. Under the sanitizers a leak
         * (LeakSanitizer runs at its exit) or any other report shows here. */
        int status = stop_listener(SIGTERM);
        listener_userns = false;
        if (listener_netns[0]) {
                run_ip("netns", "del", listener_netns, NULL, NULL, NULL, NULL, NULL);
                listener_netns[0] = 0;
        }
        test_stop_pid(dbus_pid);
        dbus_pid = 0;
        notify_fd = safe_close(notify_fd);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", harness_dir);
        (void) !system(cmd);
        test_env_teardown();
        ck_assert_msg(status == -1 || (WIFEXITED(status) && WEXITSTATUS(status) == 0),
                      "standby-listener did not exit cleanly on SIGTERM (wait status 0x%x)", (unsigned) status);
}

sd_bus *client(void) {
        return test_bus_client(bus_address);
}

char *push(sd_bus *bus, const char *unit, int *ret_acted) {
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

uint64_t statistic(sd_bus *bus, const char *key) {
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

bool wait_statistic(sd_bus *bus, const char *key, uint64_t min, usec_t timeout) {
        return test_wait_for(statistic_reached, &(StatisticWant) { bus, key, min }, timeout);
}

sd_bus *standby_with_idle_mail(void) {
        test_spawn_workload("mail.service", "idle", 100, 1, NULL);
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        return bus;
}

bool wait_frozen(const char *sub, bool want) {
        _cleanup_close_ int fd = test_cgroup(sub);
        return cgroup_wait_frozen(&fd, 1, want, now_usec(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC, NULL) == 0;
}

int journal_state_of(const char *sub) {
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

bool wait_journal_state(const char *sub, int want, usec_t timeout) {
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

bool is_stopped(void *userdata) {
        ProcStat st;
        return proc_get_stat(*(pid_t *) userdata, &st) >= 0 && st.state == 'T';
}

bool is_sleeping(void *userdata) {
        ProcStat st;
        return proc_get_stat(*(pid_t *) userdata, &st) >= 0 && st.state == 'S';
}

bool thread_runs(pid_t pid, uint64_t *ret) {
        _cleanup_free_ char *line = NULL;
        unsigned long long a, b, c;
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/schedstat", (int) pid);
        if (read_one_lineat(AT_FDCWD, path, &line) < 0 || sscanf(line, "%llu %llu %llu", &a, &b, &c) != 3)
                return false;
        *ret = c;
        return true;
}

uint64_t listener_settled_runs(sd_bus *bus) {
        uint64_t runs;

        (void) statistic(bus, "events");
        (void) statistic(bus, "events");
        ck_assert(test_wait_for(is_sleeping, &listener_pid, 5 * USEC_PER_SEC));
        ck_assert(thread_runs(listener_pid, &runs));
        return runs;
}

uint64_t listener_runs_after(void) {
        uint64_t runs;

        ck_assert(test_wait_for(is_sleeping, &listener_pid, 5 * USEC_PER_SEC));
        ck_assert(thread_runs(listener_pid, &runs));
        return runs;
}

bool enter_held_open(sd_bus **ret_bus, pid_t *ret_enter) {
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

void enter_done(pid_t enter) {
        int status;
        ck_assert_int_eq(waitpid(enter, &status, 0), enter);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_OK, "enter: status 0x%x", status);
}

void make_netns(void) {
        snprintf(listener_netns, sizeof(listener_netns), "standby-test-%s-%d", test_runner_id(), (int) getpid());
        run_ip("netns", "add", listener_netns, NULL, NULL, NULL, NULL, NULL);
        /* A veth pair inside it (sb0 and its peer), both ends down. */
        run_ip("-n", listener_netns, "link", "add", "sb0", "type", "veth", NULL);
}

size_t socket_fds(pid_t pid, SocketFd *out, size_t max) {
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

pid_t server_pid;

int count_held(void) {
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

int tcp_connect(int port) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t) port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ck_assert_int_ge(fd, 0);
        /* The kernel completes the handshake even while the server is frozen. */
        ck_assert_int_eq(connect(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        return fd;
}

bool echo(int fd, const char *line) {
        char buf[64] = {};
        struct pollfd p = { .fd = fd, .events = POLLIN };
        ck_assert_int_eq(write(fd, line, strlen(line)), (ssize_t) strlen(line));
        if (poll(&p, 1, 5000) != 1)
                return false;
        return read(fd, buf, sizeof(buf) - 1) == (ssize_t) strlen(line) && streq(buf, line);
}

pid_t spawn_mail_bus_service(void) {
        int tick;
        char *argv[] = { (char *) test_bin("standby-workload"), "bus-service", "--bus-address", bus_address,
                         "--bus-name", "org.example.Mail", "--tick-fd", "3", NULL };
        pid_t pid = test_spawn("mail.service", argv, &tick);
        ck_assert_msg(test_ticks(tick, 1, 10 * USEC_PER_SEC) == 1, "bus-service did not start");
        return pid;
}

bool has_unread(void *userdata) {
        pid_t pid = *(pid_t *) userdata;
        _cleanup_close_ int pidfd = pidfd_of_pid(pid);
        SocketFd sockets[64];
        size_t n = pidfd >= 0 ? socket_fds(pid, sockets, 64) : 0;

        for (size_t i = 0; i < n; i++) {
                _cleanup_close_ int fd = pidfd_dup_fd(pidfd, sockets[i].fd);
                int unread = 0;
                if (fd >= 0 && ioctl(fd, FIONREAD, &unread) == 0 && unread > 0)
                        return true;
        }
        return false;
}

void restart_dbus_with(const char *extra) {
        char conf[512], addr_arg[600], line[512] = {};
        int out[2];

        test_stop_pid(dbus_pid);
        dbus_pid = 0;
        (void) unlink(bus_address + strlen("unix:path="));
        snprintf(conf, sizeof(conf), "%s/dbus-policy.conf", harness_dir);
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

bool saw_call_judged(void *userdata) {
        uint64_t undelivered = statistic(userdata, "undelivered"), thaws = statistic(userdata, "thaws");
        return (undelivered != UINT64_MAX && undelivered >= 1) || thaws >= 1;
}

char *push_within(sd_bus *bus, const char *unit, usec_t timeout, int *ret_acted) {
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

void kill_and_remove(pid_t pid, const char *sub) {
        _cleanup_close_ int cg = test_cgroup(sub);

        ck_assert_int_eq(kill(pid, SIGKILL), 0);
        ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
        ck_assert(test_wait_unpopulated(cg, 5 * USEC_PER_SEC));
        ck_assert_int_eq(unlinkat(T.root_fd, test_cgpath(sub), AT_REMOVEDIR), 0);
}
