/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The wake report: the listener's wake record (a bounded ring in the state
 * directory), and standby periods end to end on the listener's fixtures (a
 * real bus, the real listener and manager, real frozen processes), read back
 * with `standby-manager report`. */
#include <fcntl.h>
#include <inttypes.h>
#include <errno.h>
#include <sched.h>
#include <sys/mount.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/fanotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "listener-harness.h"
#include "cgroup.h"
#include "fileio.h"
#include "journal.h"
#include "standby.h"
#include "test-util.h"
#include "wake-record.h"

static char *temp_dir(void) {
        char *d = strdup("/tmp/standby-report-test.XXXXXX");
        ck_assert_ptr_nonnull(d);
        ck_assert_ptr_nonnull(mkdtemp(d));
        return d;
}

static void remove_dir(char *d) {
        char cmd[300];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
        (void) !system(cmd);
        free(d);
}

/* The ring keeps the newest WAKE_RECORD_SLOTS records, counts the ones it
 * overwrote, and never grows past its slots. */
START_TEST(test_record_ring_bounded) {
        char *d = temp_dir();
        int fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC), dir_fd = -EBADF;
        WakeRecord *w = NULL;
        size_t n = 0;
        uint64_t dropped = 0, next = 0;
        struct stat st;

        ck_assert_int_ge(wake_record_dir_open(fd, true, &dir_fd), 0);
        ck_assert_int_eq(wake_record_next_seq(dir_fd, &next), 0);
        ck_assert_uint_eq(next, 0);
        for (uint64_t i = 0; i < WAKE_RECORD_SLOTS + 10; i++) {
                char units[64];
                snprintf(units, sizeof(units), "u/%" PRIu64 ".service", i);
                WakeRecord r = { .seq = i,
                                 .realtime = 1000 + i,
                                 .kind = WAKE_THAW,
                                 .source = (char *) "push",
                                 .rule = (char *) "/r.rule",
                                 .cause = (char *) "reason=x",
                                 .units = units };
                ck_assert_int_eq(wake_record_append(dir_fd, &r), 0);
        }
        ck_assert_int_eq(fstatat(dir_fd, WAKE_RECORD_FILE, &st, 0), 0);
        ck_assert_int_eq(st.st_size, (off_t) WAKE_RECORD_SLOTS * WAKE_RECORD_SLOT);
        ck_assert_int_eq(wake_record_read_all(dir_fd, &w, &n, &dropped), 0);
        ck_assert_uint_eq(n, WAKE_RECORD_SLOTS);
        ck_assert_uint_eq(dropped, 10);
        ck_assert_uint_eq(w[0].seq, 10);
        ck_assert_str_eq(w[0].units, "u/10.service");
        ck_assert_uint_eq(w[n - 1].seq, WAKE_RECORD_SLOTS + 9);
        ck_assert_int_eq(wake_record_next_seq(dir_fd, &next), 0);
        ck_assert_uint_eq(next, WAKE_RECORD_SLOTS + 10);
        wake_records_free(w, n);
        close(dir_fd);
        close(fd);
        remove_dir(d);
}
END_TEST

/* A caller's reason is any bytes: a tab or newline in it cannot make a
 * field or a record of its own, and a long one is cut within its slot. */
START_TEST(test_record_hostile_fields) {
        char reason[2048], line[WAKE_RECORD_SLOT];
        WakeRecord back = {};

        memset(reason, 'a', sizeof(reason) - 1);
        reason[sizeof(reason) - 1] = '\0';
        memcpy(reason, "x\tkind=exit\nwake\\", 17);
        WakeRecord r = { .seq = 7,
                         .realtime = 42,
                         .kind = WAKE_THAW,
                         .source = (char *) "push",
                         .cause = reason,
                         .units = (char *) "a.service,b.service" };
        size_t len = wake_record_format(&r, line, sizeof(line));
        ck_assert_uint_lt(len, sizeof(line));
        ck_assert_ptr_null(strchr(line, '\n'));
        ck_assert_int_eq(wake_record_parse(line, &back), 0);
        ck_assert_int_eq(back.kind, WAKE_THAW);
        ck_assert_uint_eq(back.seq, 7);
        ck_assert_str_eq(back.source, "push");
        /* The cause keeps its bytes, cut short and said so. */
        ck_assert_int_eq(strncmp(back.cause, "x\tkind=exit\nwake\\aaa", 20), 0);
        ck_assert_str_eq(back.cause + strlen(back.cause) - 3, "...");
        ck_assert_str_eq(back.units, "a.service,b.service");
        wake_record_done(&back);
}
END_TEST

/* The end-to-end cases: the reports go to the test's directory. */
static char report_dir_path[300];

static void report_setup(void) {
        listener_setup();
        snprintf(report_dir_path, sizeof(report_dir_path), "%s/reports", harness_dir);
        setenv("STANDBY_REPORT_DIR", report_dir_path, 1);
}

static void report_teardown(void) {
        unsetenv("STANDBY_REPORT_DIR");
        listener_teardown();
}

static const char *const mail_reason = "new mail from alice";

/* Push(unit, reason), answered. */
static void push_reason(sd_bus *bus, const char *unit, const char *reason) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        int acted = 0;

        ck_assert_msg(sd_bus_call_method(bus, "org.standby.Listener1", "/org/standby/Listener1",
                                         "org.standby.Listener1", "Push", &error, &reply, "ss", unit, reason) >= 0,
                      "Push: %s", error.message ?: "?");
        ck_assert_int_ge(sd_bus_message_read(reply, "b", &acted), 0);
        ck_assert_int_eq(acted, 1);
        sd_bus_error_free(&error);
        sd_bus_message_unref(reply);
}

static size_t count(const char *haystack, const char *needle) {
        size_t n = 0;
        for (const char *p = haystack; (p = strstr(p, needle)); p++)
                n++;
        return n;
}

static bool holds_sockets(void *userdata) {
        return count_held() >= *(int *) userdata;
}

/* srv.service, an echo server frozen at enter, woken by a connection
 * (60-srv.rule); returns its port. */
static int start_echo_server(void) {
        int port = 25000 + (int) (getpid() % 5000), tick;
        char portarg[16];

        write_rule("60-srv.rule", "[Match]\nEvent=socket\nUnit=srv.service\n[Action]\nThaw=srv.service\nFor=1s\n");
        snprintf(portarg, sizeof(portarg), "%d", port);
        char *argv[] = {
                (char *) test_bin("standby-workload"), "echo-server", "--port", portarg, "--tick-fd", "3", NULL
        };
        server_pid = test_spawn("srv.service", argv, &tick);
        ck_assert_int_eq(test_ticks(tick, 1, 5 * USEC_PER_SEC), 1); /* listening */
        return port;
}

/* A client of srv.service, its request answered: the server was woken. */
static void wake_echo_server(int port) {
        int one = 1;
        ck_assert_msg(test_wait_for(holds_sockets, &one, 5 * USEC_PER_SEC), "the listener holds no socket of srv");
        int c = tcp_connect(port);
        ck_assert(echo(c, "ping\n"));
        close(c);
}

/* Asserts that text parses as JSON (python3 is a test dependency). */
static void assert_valid_json(const char *text) {
        char path[320], cmd[400];
        snprintf(path, sizeof(path), "%s/report.json", harness_dir);
        FILE *f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        fputs(text, f);
        fclose(f);
        _cleanup_free_ char *out = NULL;
        snprintf(cmd, sizeof(cmd), "python3 -m json.tool '%s' 2>&1 > /dev/null", path);
        ck_assert_msg(test_run_shell(cmd, &out) == 0, "not JSON (%s): %s", out, text);
}

/* `standby-manager report` with args; asserts success. */
static char *report(const char *arg) {
        char *out = NULL;
        ck_assert_int_eq(test_manager_env(NULL, &out, NULL, "report", arg, NULL), EXIT_OK);
        ck_assert_ptr_nonnull(out);
        return out;
}

/* A push with its reason, a socket event, a rule's exit: the report lists
 * exactly those wakes, in order, with their causes; with kill_between, the
 * listener is killed (-9) and started again between the push and the
 * socket event. */
static void period_with_three_wakes(bool kill_between) {
        _cleanup_free_ char *json = NULL, *text = NULL;
        char want[512];

        if (!test_need_root_cgroup2())
                return;
        int port = start_echo_server();
        sd_bus *bus = standby_with_idle_mail();

        push_reason(bus, "mail.service", mail_reason);
        ck_assert(wait_statistic(bus, "refreezes", 1, 10 * USEC_PER_SEC));
        if (kill_between) {
                sd_bus_flush_close_unref(bus);
                stop_listener(SIGKILL);
                start_listener();
                bus = client();
        }
        wake_echo_server(port);
        ck_assert(wait_frozen("srv.service", true));
        push_reason(bus, "lid.service", "lid opened");
        ck_assert(wait_journal_state("mail.service", -1, 10 * USEC_PER_SEC));
        ck_assert(!test_anything_frozen());

        json = report("--json");
        ck_assert_msg(count(json, "\"start_usec\":") == 1, "%s", json);
        assert_valid_json(json);
        ck_assert_msg(count(json, "\"kind\":\"thaw\"") == 2 && count(json, "\"kind\":\"exit\"") == 1, "%s", json);
        ck_assert_msg(strstr(json, "\"cut\":false,\"wakes_dropped\":0,"), "%s", json);
        /* In order: the push with its reason and caller, the socket, the exit. */
        const char *push_wake = strstr(json, "\"event\":\"push\",\"rule\":");
        snprintf(want, sizeof(want), "\"cause\":\"reason=%s; caller=:", mail_reason);
        const char *reason = strstr(json, want);
        const char *socket_wake = strstr(json, "\"event\":\"socket\"");
        const char *exit_wake = strstr(json, "\"kind\":\"exit\",\"event\":\"push\"");
        ck_assert_msg(push_wake && reason && socket_wake && exit_wake, "%s", json);
        ck_assert_msg(push_wake < reason && reason < socket_wake && socket_wake < exit_wake, "%s", json);
        snprintf(want, sizeof(want), "\"units\":[\"%s\"]", test_cgpath("mail.service"));
        ck_assert_msg(strstr(push_wake, want) && strstr(push_wake, want) < socket_wake, "%s", json);
        snprintf(want, sizeof(want), "\"units\":[\"%s\"]", test_cgpath("srv.service"));
        ck_assert_msg(strstr(socket_wake, want) && strstr(socket_wake, want) < exit_wake, "%s", json);
        ck_assert_msg(strstr(socket_wake, "10-mail.rule") == NULL || strstr(socket_wake, "10-mail.rule") > exit_wake,
                      "%s", json);
        ck_assert_msg(strstr(socket_wake, "60-srv.rule"), "%s", json);
        ck_assert_msg(strstr(exit_wake, "20-lid.rule") && strstr(exit_wake, "reason=lid opened"), "%s", json);
        ck_assert_msg(strstr(json, "20-lid.rule (push event)\",\"strategy\":\"freeze\""), "%s", json);
        /* Both windows ended before the exit: each ran its 1 s. */
        ck_assert_msg(count(json, "\"thawed_until_exit\":false") == 3, "%s", json);

        text = report(NULL);
        snprintf(want, sizeof(want), "reason=%s; caller=:", mail_reason);
        ck_assert_msg(strstr(text, want) && strstr(text, "-> push -> ") && strstr(text, "-> socket -> ") &&
                              strstr(text, "-> standby ended") && strstr(text, "Wakes: 2\n"),
                      "%s", text);
        sd_bus_flush_close_unref(bus);
}

START_TEST(test_report_lists_wakes) {
        period_with_three_wakes(false);
}
END_TEST

START_TEST(test_report_survives_listener_kill) {
        period_with_three_wakes(true);
}
END_TEST

/* A unit that spins through its window is the period's top offender. */
START_TEST(test_report_flags_spinner) {
        _cleanup_free_ char *json = NULL, *text = NULL;

        if (!test_need_root_cgroup2())
                return;
        write_rule("30-spin.rule", "[Match]\nEvent=push\nUnit=spin.service\n[Action]\nThaw=spin.service\nFor=1s\n");
        test_spawn_workload("spin.service", "busy", 100, 1, NULL);
        sd_bus *bus = standby_with_idle_mail();
        push_reason(bus, "spin.service", "spin");
        ck_assert(wait_statistic(bus, "refreezes", 1, 10 * USEC_PER_SEC));

        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);

        json = report("--json");
        /* Top first: spin.service leads the units, flagged. */
        const char *units = strstr(json, "\"units\":[{\"cgroup\":");
        ck_assert_msg(units, "%s", json);
        char want[512];
        snprintf(want, sizeof(want), "\"units\":[{\"cgroup\":\"%s\"", test_cgpath("spin.service"));
        ck_assert_msg(strstr(json, want), "%s", json);
        const char *spin = strstr(json, want), *end = strchr(spin, '}');
        ck_assert_msg(end && strstr(spin, "\"offender\":true") && strstr(spin, "\"offender\":true") < end, "%s", json);
        ck_assert_msg(strstr(json, "\"offender_threshold_percent\":10"), "%s", json);
        snprintf(want, sizeof(want), "%s", test_cgpath("mail.service"));
        const char *mail = strstr(units, want);
        ck_assert_msg(mail && strstr(mail, "\"offender\":false"), "%s", json);
        ck_assert_msg(strstr(json, "\"left\":\"standby-manager exit"), "%s", json);
        /* Its wake: the window's CPU time, spent spinning (a second's window;
         * the host's other work may take some of it). */
        const char *c = strstr(json, "\"cpu_usec\":");
        unsigned long long cpu = 0;
        ck_assert_msg(c && sscanf(c, "\"cpu_usec\":%llu", &cpu) == 1 && cpu >= 100000, "%s", json);

        text = report(NULL);
        snprintf(want, sizeof(want), "%s  OFFENDER", test_cgpath("spin.service"));
        ck_assert_msg(strstr(text, want) && strstr(text, "more than 10% of all wakeups or CPU time"), "%s", text);
        ck_assert_msg(strstr(text, ", CPU "), "%s", text);

        /* The timeline: a script gnuplot (a test dependency) draws. */
        char plot[320], png[330], cmd[700], magic[8] = "";
        snprintf(plot, sizeof(plot), "%s/period.gp", harness_dir);
        snprintf(png, sizeof(png), "%s.png", plot);
        ck_assert_int_eq(test_manager_env(NULL, NULL, NULL, "report", "--plot", plot, NULL), EXIT_OK);
        _cleanup_free_ char *out = NULL;
        snprintf(cmd, sizeof(cmd), "gnuplot '%s' 2>&1", plot);
        ck_assert_msg(test_run_shell(cmd, &out) == 0, "gnuplot: %s", out);
        FILE *f = fopen(png, "re");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fread(magic, 1, 4, f), 4);
        fclose(f);
        ck_assert_int_eq(memcmp(magic, "\x89PNG", 4), 0);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* A unit that ticks through its window: the wake counts its wakeups there
 * (the voluntary context switches of its threads). */
START_TEST(test_report_window_wakeups) {
        char want[512];
        unsigned long long wakeups = 0;

        if (!test_need_root_cgroup2())
                return;
        write_rule("40-tick.rule", "[Match]\nEvent=push\nUnit=tick.service\n[Action]\nThaw=tick.service\nFor=1s\n");
        test_spawn_workload("tick.service", "nanosleep", 10, 1, NULL);
        sd_bus *bus = standby_with_idle_mail();
        push_reason(bus, "tick.service", "tick");
        ck_assert(wait_statistic(bus, "refreezes", 1, 10 * USEC_PER_SEC));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);

        _cleanup_free_ char *json = report("--json");
        /* One each 10 ms for a second; the host's load may take some. */
        snprintf(want, sizeof(want), "\"units\":[\"%s\"]", test_cgpath("tick.service"));
        const char *tick = strstr(json, want), *c = tick ? strstr(tick, "\"wakeups\":") : NULL;
        ck_assert_msg(c && sscanf(c, "\"wakeups\":%llu", &wakeups) == 1 && wakeups >= 20, "%s", json);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* Reads the queued events: how many in all, how many the listener's. */
static void count_writes(int fan, size_t *ret_all, size_t *ret_listener) {
        char buf[8192] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));
        ssize_t n;

        while ((n = read(fan, buf, sizeof(buf))) > 0) {
                struct fanotify_event_metadata *m = (struct fanotify_event_metadata *) buf;
                for (; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) {
                        ck_assert_msg(!(m->mask & FAN_Q_OVERFLOW), "fanotify overflowed");
                        (*ret_all)++;
                        if (m->pid == listener_pid)
                                (*ret_listener)++;
                        if (m->fd >= 0)
                                close(m->fd);
                }
        }
        ck_assert_int_eq(errno, EAGAIN);
}

/* While standby lasts the listener writes nothing on the report
 * directory's file system (a tmpfs of the test's, standing for
 * /var/lib): fanotify sees every write there, of any process. The
 * report is its one write, at the exit. */
START_TEST(test_report_no_listener_write_during_standby) {
        size_t all = 0, by_listener = 0;
        struct stat a, st;

        if (!test_need_root_cgroup2())
                return;
        /* A mount namespace of the test's own (the listener and the manager
         * started from here share it): the tmpfs goes with it. */
        ck_assert_int_eq(unshare(CLONE_NEWNS), 0);
        ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
        ck_assert_int_eq(mkdir(report_dir_path, 0700), 0);
        ck_assert_int_eq(mount("tmpfs", report_dir_path, "tmpfs", MS_NOSUID | MS_NODEV, "size=4m,mode=0700"), 0);
        int fan = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK, O_RDONLY | O_CLOEXEC);
        if (fan < 0) {
                test_skip("no fanotify: %m");
                return;
        }
        ck_assert_int_eq(fanotify_mark(fan, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, FAN_MODIFY | FAN_CLOSE_WRITE, AT_FDCWD,
                                       report_dir_path),
                         0);
        ck_assert_int_eq(stat(report_dir_path, &a), 0);

        sd_bus *bus = standby_with_idle_mail();
        push_reason(bus, "mail.service", mail_reason);
        ck_assert(wait_statistic(bus, "refreezes", 1, 10 * USEC_PER_SEC));
        count_writes(fan, &all, &by_listener);
        ck_assert_uint_eq(all, 0);
        ck_assert_int_eq(stat(report_dir_path, &st), 0);
        ck_assert(st.st_mtim.tv_sec == a.st_mtim.tv_sec && st.st_mtim.tv_nsec == a.st_mtim.tv_nsec);

        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        count_writes(fan, &all, &by_listener);
        ck_assert_uint_ge(all, 1); /* the report, by the manager */
        ck_assert_uint_eq(by_listener, 0);
        close(fan);
        _cleanup_free_ char *json = report("--json");
        ck_assert_msg(count(json, "\"start_usec\":") == 1 && count(json, "\"kind\":\"thaw\"") == 1, "%s", json);
        sd_bus_flush_close_unref(bus);
        /* The listener's teardown runs in this namespace; the tmpfs is the test's alone. */
        (void) umount2(report_dir_path, MNT_DETACH);
}
END_TEST

/* A period that no exit closed (its journal lost, its units thawed by
 * hand: no exit finds anything to do) is written at the next enter,
 * marked cut; the next period is whole. */
START_TEST(test_report_cut_period) {
        char journal[512];

        if (!test_need_root_cgroup2())
                return;
        test_spawn_workload("mail.service", "idle", 100, 1, NULL);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        snprintf(journal, sizeof(journal), "%s/" JOURNAL_FILE, T.state_dir);
        ck_assert_int_eq(unlink(journal), 0);
        _cleanup_close_ int cg = test_cgroup("mail.service");
        ck_assert_int_eq(cgroup_set_freeze(cg, false), 0);
        ck_assert(wait_frozen("mail.service", false));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_NOT_ACTIVE);
        _cleanup_free_ char *none = report("--json");
        ck_assert_msg(count(none, "\"start_usec\":") == 0, "%s", none);

        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        _cleanup_free_ char *json = report("--json"), *text = report(NULL);
        ck_assert_msg(count(json, "\"start_usec\":") == 2, "%s", json);
        const char *cut = strstr(json, "\"cut\":true"), *whole = strstr(json, "\"cut\":false");
        ck_assert_msg(cut && whole && cut < whole, "%s", json);
        ck_assert_msg(strstr(json, "\"left\":\"cut: no exit recorded its end\""), "%s", json);
        ck_assert_msg(count(text, "CUT: its end was not recorded") == 1, "%s", text);
}
END_TEST

/* A push while standby is being entered is carried out once it is: its
 * wake is the new period's, though the period's record began before. */
START_TEST(test_report_keeps_wake_during_enter) {
        sd_bus *bus;
        pid_t enter;

        if (!enter_held_open(&bus, &enter))
                return;
        push_reason(bus, "mail.service", mail_reason);
        enter_done(enter);
        ck_assert(wait_frozen("mail.service", false));
        ck_assert_uint_eq(statistic(bus, "replayed"), 1);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        _cleanup_free_ char *json = report("--json");
        ck_assert_msg(count(json, "\"start_usec\":") == 1 && count(json, "\"kind\":\"thaw\"") == 1, "%s", json);
        ck_assert_msg(strstr(json, "\"event\":\"late\",\"rule\":\"") && strstr(json, "10-mail.rule"), "%s", json);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* Every datagram waiting on fd, one after the other (journal entries:
 * FIELD=value lines). */
static char *read_datagrams(int fd) {
        char *all = NULL, buf[16384];
        size_t size = 0;
        FILE *f = open_memstream(&all, &size);
        ssize_t n;

        ck_assert_ptr_nonnull(f);
        while ((n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT)) > 0) {
                buf[n] = '\0';
                fprintf(f, "%s\n--\n", buf);
        }
        ck_assert_int_eq(fclose(f), 0);
        return all;
}

/* The entry among entries (separated by "--" lines) that holds both a and b. */
static bool entry_has(const char *entries, const char *a, const char *b) {
        for (const char *e = entries; e && *e;) {
                const char *end = strstr(e, "\n--\n");
                size_t len = end ? (size_t) (end - e) : strlen(e);
                _cleanup_free_ char *one = strndup(e, len);
                if (one && strstr(one, a) && strstr(one, b))
                        return true;
                e = end ? end + 4 : NULL;
        }
        return false;
}

/* With stderr the journal's stream (JOURNAL_STREAM names it), each wake is
 * a structured entry with its MESSAGE_ID and fields, sent to the journal's
 * socket: here one of the test's, in a mount namespace of its own. */
START_TEST(test_wake_journal_entries) {
        char err_path[320], stream[64], want[512];
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct stat st;

        if (!test_need_root_cgroup2())
                return;
        ck_assert_int_eq(unshare(CLONE_NEWNS), 0);
        ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
        ck_assert_int_eq(mount("tmpfs", "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m"), 0);
        ck_assert_int_eq(mkdir("/run/systemd", 0755), 0);
        ck_assert_int_eq(mkdir("/run/systemd/journal", 0755), 0);
        strcpy(sa.sun_path, "/run/systemd/journal/socket");
        _cleanup_close_ int journal = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        ck_assert_int_ge(journal, 0);
        ck_assert_int_eq(bind(journal, (struct sockaddr *) &sa, sizeof(sa)), 0);
        int rcvbuf = 4 * 1024 * 1024;
        (void) setsockopt(journal, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));

        /* The listener's stderr: a file the stream names. */
        snprintf(err_path, sizeof(err_path), "%s/listener.err", harness_dir);
        int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), saved = dup(STDERR_FILENO);
        ck_assert_int_ge(err, 0);
        ck_assert_int_ge(saved, 0);
        ck_assert_int_eq(fstat(err, &st), 0);
        snprintf(stream, sizeof(stream), "%llu:%llu", (unsigned long long) st.st_dev, (unsigned long long) st.st_ino);
        ck_assert_int_eq(dup2(err, STDERR_FILENO), STDERR_FILENO);
        setenv("JOURNAL_STREAM", stream, 1);
        sd_bus *bus = standby_with_idle_mail();
        unsetenv("JOURNAL_STREAM");
        ck_assert_int_eq(dup2(saved, STDERR_FILENO), STDERR_FILENO);
        close(saved);
        close(err);

        push_reason(bus, "mail.service", mail_reason);
        ck_assert(wait_statistic(bus, "refreezes", 1, 10 * USEC_PER_SEC));
        push_reason(bus, "lid.service", "lid opened");
        bool left = wait_journal_state("mail.service", -1, 10 * USEC_PER_SEC);
        if (!left) {
                _cleanup_free_ char *log = NULL;
                (void) read_full_fileat(AT_FDCWD, err_path, &log, NULL);
                ck_assert_msg(left, "standby not left; the listener's stderr: %s", log ?: "?");
        }

        _cleanup_free_ char *entries = read_datagrams(journal);
        snprintf(want, sizeof(want), "\nSTANDBY_PUSH_REASON=%s\n", mail_reason);
        ck_assert_msg(entry_has(entries, "MESSAGE_ID=4c4065f2aee2493c8ff59e2596e94716\n", want), "%s", entries);
        ck_assert_msg(entry_has(entries, "MESSAGE_ID=4c4065f2aee2493c8ff59e2596e94716\n", "\nSTANDBY_EVENT=push\n") &&
                              entry_has(entries, "MESSAGE_ID=4c4065f2aee2493c8ff59e2596e94716\n", "10-mail.rule\n") &&
                              entry_has(entries, "MESSAGE_ID=4c4065f2aee2493c8ff59e2596e94716\n", "\nPRIORITY=6\n"),
                      "%s", entries);
        snprintf(want, sizeof(want), "\nSTANDBY_UNIT=%s\n", test_cgpath("mail.service"));
        ck_assert_msg(entry_has(entries, "MESSAGE_ID=4c4065f2aee2493c8ff59e2596e94716\n", want), "%s", entries);
        ck_assert_msg(entry_has(entries, "MESSAGE_ID=793ecc6437ce434aa5022019186e5f74\n", want) &&
                              entry_has(entries, "MESSAGE_ID=793ecc6437ce434aa5022019186e5f74\n", "\nSTANDBY_RAN_USEC="),
                      "%s", entries);
        ck_assert_msg(entry_has(entries, "MESSAGE_ID=c9f3bd71ce264f0893071ee595b49916\n", "20-lid.rule\n") &&
                              entry_has(entries, "MESSAGE_ID=c9f3bd71ce264f0893071ee595b49916\n",
                                        "\nSTANDBY_PUSH_REASON=lid opened\n"),
                      "%s", entries);
        sd_bus_flush_close_unref(bus);
}
END_TEST

Suite *report_suite(void) {
        Suite *s = suite_create("report");
        TCase *tc = tcase_create("record");
        tcase_add_test(tc, test_record_ring_bounded);
        tcase_add_test(tc, test_record_hostile_fields);
        suite_add_tcase(s, tc);

        tc = tcase_create("period");
        tcase_set_timeout(tc, 90);
        tcase_add_checked_fixture(tc, report_setup, report_teardown);
        tcase_add_unchecked_fixture(tc, NULL, test_env_sweep);
        tcase_add_test(tc, test_report_lists_wakes);
        tcase_add_test(tc, test_report_survives_listener_kill);
        tcase_add_test(tc, test_report_flags_spinner);
        tcase_add_test(tc, test_report_window_wakeups);
        tcase_add_test(tc, test_report_no_listener_write_during_standby);
        tcase_add_test(tc, test_report_cut_period);
        tcase_add_test(tc, test_report_keeps_wake_during_enter);
        tcase_add_test(tc, test_wake_journal_entries);
        suite_add_tcase(s, tc);
        return s;
}
