/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Inhibitor locks and the standby phase: apps' locks delay the freeze,
 * slots are bounded per user, PrepareForStandby is told only when standby
 * comes, and a lock wakes the listener only when it closes. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "listener-harness.h"
#include "standby.h"
#include "test-util.h"

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

static bool one_inhibitor(void *bus) {
        return count_inhibitors(bus) == 1;
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
        ck_assert_msg(test_wait_for(one_inhibitor, bus, 10 * USEC_PER_SEC), "%d locks, not root's alone",
                      count_inhibitors(bus));

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
        usec_t t1 = now_usec(CLOCK_MONOTONIC);
        st[0] = enter_in_child(fd);
        ck_assert(wait_prepare(app, 1));
        ck_assert(!test_frozen("mail.service"));
        ck_assert_int_eq(waitpid(st[0], &st[1], WNOHANG), 0);
        fd = safe_close(fd);
        /* Before the 5 s the user's lock would hold it (counted from the
         * entry's start, not from root's close: a loaded host under ASan
         * may take seconds between the two). */
        usec_t now = now_usec(CLOCK_MONOTONIC), by = t1 + 4500 * USEC_PER_MSEC;
        ck_assert_msg(now < by, "root's lock closed only %.1f s into the entry", (double) (now - t1) / USEC_PER_SEC);
        ck_assert_msg(test_wait_for(child_exited, st, by - now),
                      "enter still waited for the user's lock 4.5 s into the entry");
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

void listener_inhibit_tests(const ListenerCases *c) {
        tcase_add_test(c->dbus, test_app_locks);
        tcase_add_test(c->dbus, test_inhibit_refuses_controls);
        tcase_add_test(c->dbus, test_inhibit_slots_reserved);
        tcase_add_test(c->dbus, test_inhibit_user_delay_once);
        tcase_add_test(c->dbus, test_lock_wakes_only_on_close);
        tcase_add_test(c->dbus, test_enter_bus_stopped);
        tcase_add_test(c->dbus, test_exit_during_apps_delay);
        tcase_add_test(c->dbus, test_told_without_standby);
        tcase_add_test(c->dbus, test_told_not_by_forged_owner_change);
}
