/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The systemd backend against a real systemd --user manager (systemd 252),
 * started and stopped by the test: units it manages are frozen and thawed
 * through FreezeUnit/ThawUnit, so that systemd's FreezerState agrees with the
 * kernel; nothing is left frozen. */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <poll.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-id128.h>
#include <sys/wait.h>

#include "cgroup.h"
#include "fileio.h"
#include "macro.h"
#include "private-socket.h"
#include "standby.h"
#include "test-util.h"

static char dir[128], cgrel[512];

static void setup(void) {
        char extra[1024];

        test_env_setup();
        if (T.unavailable)
                return; /* the test skips */
        snprintf(dir, sizeof(dir), "/tmp/standby-sd.%d", (int) getpid());
        (void) mkdir(dir, 0700);
        snprintf(cgrel, sizeof(cgrel), "%s/um.service", T.base);
        if (!test_user_manager_start(dir, cgrel))
                return;
        snprintf(extra, sizeof(extra), "Targets=\nTargets=%s/app.slice\nBackend=systemd\n"
                                       "SystemdAddress=unix:path=%s/xdg/systemd/private\n", cgrel, dir);
        test_write_config(extra);
}

static void teardown(void) {
        test_user_manager_stop();
        (void) rmdir(dir);
        test_env_teardown();
}

static void run_unit(const char *unit) {
        char cmd[8192], bin[PATH_MAX];
        _cleanup_free_ char *out = NULL;

        ck_assert_ptr_nonnull(realpath(test_bin("standby-workload"), bin));
        snprintf(cmd, sizeof(cmd), "XDG_RUNTIME_DIR=%s/xdg systemd-run --user --unit=%s %s nanosleep 2>&1", dir, unit,
                 bin);
        ck_assert_msg(test_run_shell(cmd, &out) == 0, "systemd-run: %s", out);
}

static char *unit_show(const char *unit, const char *property) {
        char runtime_dir[PATH_MAX];
        snprintf(runtime_dir, sizeof(runtime_dir), "%s/xdg", dir);
        return test_unit_show(runtime_dir, unit, property);
}

static char *freezer_state(const char *unit) {
        return unit_show(unit, "FreezerState");
}

static const char *unit_sub(const char *unit) {
        static char buf[1024];
        snprintf(buf, sizeof(buf), "um.service/app.slice/%s", unit);
        return buf;
}

/* standby-a.service and standby-b.service run, and enter froze both. */
static void standby_with_a_and_b(void) {
        run_unit("standby-a.service");
        run_unit("standby-b.service");
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert(test_frozen(unit_sub("standby-a.service")));
        ck_assert(test_frozen(unit_sub("standby-b.service")));
}

START_TEST(test_systemd_backend) {
        _cleanup_free_ char *json = NULL;

        if (!test_need_user_manager())
                return;
        standby_with_a_and_b();
        /* systemd knows: it did the freezing. */
        _cleanup_free_ char *sa = freezer_state("standby-a.service"), *sb = freezer_state("standby-b.service");
        ck_assert_str_eq(sa, "frozen");
        ck_assert_str_eq(sb, "frozen");
        ck_assert_int_eq(test_manager_env(NULL, &json, NULL, "status", "--json", NULL), EXIT_OK);
        ck_assert_msg(strstr(json, "\"backend\":\"systemd\",\"systemd_freezer_state\":\"frozen\""), "%s", json);

        /* One unit thawed, through systemd too. */
        ck_assert_int_eq(test_manager(NULL, "--quiet", "thaw", "standby-a.service", NULL), EXIT_OK);
        _cleanup_free_ char *sa2 = freezer_state("standby-a.service");
        ck_assert_str_eq(sa2, "running");
        ck_assert(!test_frozen(unit_sub("standby-a.service")));
        ck_assert(test_frozen(unit_sub("standby-b.service")));

        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        _cleanup_free_ char *sb2 = freezer_state("standby-b.service");
        ck_assert_str_eq(sb2, "running");
        ck_assert(!test_anything_frozen());
}
END_TEST

/* The cgroups systemd does not manage stay on cgroupfs under Backend=auto,
 * and Backend=systemd refuses them rather than write behind systemd's back. */
START_TEST(test_backend_choice) {
        char extra[2048];
        _cleanup_free_ char *json = NULL, *err = NULL;

        if (!test_need_user_manager())
                return;
        run_unit("standby-a.service");
        /* A cgroup of our own below the targets, unknown to systemd. */
        test_spawn_workload("other.slice/plain.service", "idle", 100, 1, NULL);
        snprintf(extra, sizeof(extra), "Targets=\nTargets=%s/app.slice %s/other.slice\nBackend=auto\n"
                                       "SystemdAddress=unix:path=%s/xdg/systemd/private\n", cgrel, T.base, dir);
        test_write_config(extra);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert_int_eq(test_manager_env(NULL, &json, NULL, "status", "--json", NULL), EXIT_OK);
        ck_assert_msg(strstr(json, "standby-a.service\",\"state\":\"frozen\",\"kernel_frozen\":true,\"backend\":\"systemd\""),
                      "%s", json);
        ck_assert_msg(strstr(json, "plain.service\",\"state\":\"frozen\",\"kernel_frozen\":true,\"backend\":\"cgroupfs\""),
                      "%s", json);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());

        snprintf(extra, sizeof(extra), "Targets=\nTargets=%s/other.slice\nBackend=systemd\n"
                                       "SystemdAddress=unix:path=%s/xdg/systemd/private\n", T.base, dir);
        test_write_config(extra);
        ck_assert_int_eq(test_manager(&err, "enter", NULL), EXIT_FAILURE_GENERIC);
        ck_assert_msg(strstr(err, "Backend=systemd, but no systemd manager takes it"), "%s", err);
        ck_assert(!test_anything_frozen());
        (void) test_manager(NULL, "--quiet", "exit", NULL);
}
END_TEST

/* kill -9 part-way through an enter through systemd, then exit: the journal
 * says which manager froze what, and exit thaws it through that manager. */
START_TEST(test_systemd_crash_recovery) {
        if (!test_need_user_manager())
                return;
        run_unit("standby-a.service");
        run_unit("standby-b.service");
        /* Steps: the journal save, then one FreezeUnit per unit: die after the first. */
        ck_assert_int_eq(test_manager_env("STANDBY_TEST_CRASH_AFTER=2", NULL, NULL, "--quiet", "enter", NULL), 128 + SIGKILL);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        _cleanup_free_ char *sa = freezer_state("standby-a.service"), *sb = freezer_state("standby-b.service");
        ck_assert_str_eq(sa, "running");
        ck_assert_str_eq(sb, "running");
        ck_assert(!test_anything_frozen());
}
END_TEST

static void continue_pid(void *userdata) {
        (void) kill(*(pid_t *) userdata, SIGCONT);
}

static void user_systemctl(const char *args) {
        char cmd[1024];
        _cleanup_free_ char *out = NULL;
        snprintf(cmd, sizeof(cmd), "XDG_RUNTIME_DIR=%s/xdg systemctl --user %s 2>&1", dir, args);
        ck_assert_msg(test_run_shell(cmd, &out) == 0, "systemctl --user %s: %s", args, out);
}

/* Until systemd is stopping the unit (its PropertiesChanged), 20 s at most. */
static void wait_deactivating(const char *unit) {
        char runtime_dir[PATH_MAX];

        snprintf(runtime_dir, sizeof(runtime_dir), "%s/xdg", dir);
        if (test_wait_unit_property(runtime_dir, unit, "ActiveState", "deactivating", 20 * USEC_PER_SEC))
                return;
        _cleanup_free_ char *st = unit_show(unit, "ActiveState"), *sub = unit_show(unit, "SubState");
        ck_abort_msg("%s did not start stopping: %s (%s)", unit, st, sub);
}

/* Feeds a service's watchdog every 0.1 s (perl: no program of ours speaks
 * sd_notify, and systemd-notify(1) exits before systemd can tell whose
 * message it was). */
#define WATCHDOG_FEEDER                                                                                   \
        "socket(my $s, PF_UNIX, SOCK_DGRAM, 0) or die; my $a = $ENV{NOTIFY_SOCKET}; $a =~ s/^@/\\0/; " \
        "my $to = pack_sockaddr_un($a); "                                                                 \
        "while (1) { send($s, \"WATCHDOG=1\", 0, $to); select(undef, undef, undef, 0.1); }"

/* systemd stops a unit while it is frozen: its watchdog fires, its
 * RuntimeMaxSec= elapses, its main process is killed. The processes left
 * cannot see the stop (frozen; SIGTERM ignored or SIGABRT pending), so the
 * unit stays "deactivating" with its cgroup frozen, and ThawUnit answers
 * UnitInactive. Exit must thaw them through cgroup.freeze all the same, and
 * say that systemd still calls them frozen. */
START_TEST(test_stopped_while_frozen) {
        char cmd[16384], bin[PATH_MAX];
        _cleanup_free_ char *out = NULL, *err = NULL;

        if (!test_need_user_manager())
                return;
        ck_assert_ptr_nonnull(realpath(test_bin("standby-workload"), bin));
        /* SIGTERM ignored (as by a daemon busy in its handler): the stop waits
         * for TimeoutStopSec=, long enough for the test. The watchdog is fed
         * every 0.1 s until the freeze stops it (so that it fires only then);
         * its SIGABRT stays pending in the frozen process. RuntimeMaxSec=
         * leaves enter 3 s. */
        snprintf(cmd, sizeof(cmd),
                 "export XDG_RUNTIME_DIR=%s/xdg; "
                 "systemd-run --user --unit=standby-rt.service -p RuntimeMaxSec=3 -p TimeoutStopSec=120 "
                 "/bin/sh -c 'trap \"\" TERM; exec %s nanosleep' && "
                 "systemd-run --user --unit=standby-wd.service -p WatchdogSec=1 -p NotifyAccess=main "
                 "-p TimeoutAbortSec=120 perl -MSocket -e '" WATCHDOG_FEEDER "' && "
                 "systemd-run --user --unit=standby-km.service -p TimeoutStopSec=120 "
                 "/bin/sh -c 'trap \"\" TERM; %s nanosleep & wait' 2>&1",
                 dir, bin, bin);
        ck_assert_msg(test_run_shell(cmd, &out) == 0, "systemd-run: %s", out);
        run_unit("standby-ok.service");

        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert(test_frozen(unit_sub("standby-rt.service")));
        ck_assert(test_frozen(unit_sub("standby-wd.service")));
        ck_assert(test_frozen(unit_sub("standby-km.service")));
        user_systemctl("kill --signal=SIGKILL --kill-who=main standby-km.service");
        wait_deactivating("standby-rt.service");
        wait_deactivating("standby-wd.service");
        wait_deactivating("standby-km.service");
        /* Still frozen in the kernel: systemd's stop did not reach them. */
        ck_assert(test_frozen(unit_sub("standby-rt.service")));
        ck_assert(test_frozen(unit_sub("standby-wd.service")));
        ck_assert(test_frozen(unit_sub("standby-km.service")));

        ck_assert_int_eq(test_manager(&err, "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
        ck_assert_msg(strstr(err, "systemd says standby-rt.service is not active, but its cgroup is frozen"), "%s", err);
        ck_assert_msg(strstr(err, "systemd says standby-wd.service is not active"), "%s", err);
        ck_assert_msg(strstr(err, "systemd says standby-km.service is not active"), "%s", err);
        ck_assert_msg(strstr(err, "systemd still reports FreezerState=frozen for standby-rt.service"), "%s", err);
        _cleanup_free_ char *ok = freezer_state("standby-ok.service");
        ck_assert_str_eq(ok, "running");
        /* Nothing is left to a second exit. */
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_NOT_ACTIVE);
        user_systemctl("kill --signal=SIGKILL standby-rt.service standby-wd.service standby-km.service");
}
END_TEST

/* A unit stuck in the kernel (a FUSE read nobody answers) among systemd's:
 * systemd answers its FreezeUnit only once it is frozen, that is never.
 * The enter as a whole keeps FreezeTimeout=, the stuck unit is thawed again
 * and named, the units before and after it are frozen through systemd (a
 * slow answer is no sign of a manager gone), and OnFreezeTimeout=abort
 * rolls all of them back within the same bound. */
START_TEST(test_freeze_timeout_stuck_unit) {
        char extra[2048], want[64];
        _cleanup_free_ char *err = NULL, *err2 = NULL;

        if (!test_need_user_manager() || !test_have_fuse())
                return;
        run_unit("standby-a.service");
        run_unit("standby-b.service");
        run_unit("standby-c.service");
        pid_t client = test_start_stuck_client(unit_sub("standby-b.service"));
        snprintf(extra, sizeof(extra), "Targets=\nTargets=%s/app.slice\nBackend=systemd\nFreezeTimeout=2s\n"
                                       "SystemdAddress=unix:path=%s/xdg/systemd/private\n", cgrel, dir);
        test_write_config(extra);

        usec_t t0 = now_usec(CLOCK_MONOTONIC);
        ck_assert_int_eq(test_manager(&err, "enter", NULL), EXIT_OK);
        usec_t took = now_usec(CLOCK_MONOTONIC) - t0;
        /* 2 s, and the thaws and journal after it; systemd's own 30 s bound
         * per FreezeUnit is far beyond. */
        ck_assert_msg(took < 10 * USEC_PER_SEC, "enter took %.1f s: %s", (double) took / USEC_PER_SEC, err);
        snprintf(want, sizeof(want), "pid %d (fuse-stuck) state D wchan ", (int) client);
        ck_assert_msg(strstr(err, "did not freeze within 2s") && strstr(err, want), "stderr: %s", err);
        ck_assert(test_frozen(unit_sub("standby-a.service")));
        ck_assert(test_frozen(unit_sub("standby-c.service")));
        _cleanup_free_ char *sa = freezer_state("standby-a.service"), *sc = freezer_state("standby-c.service");
        ck_assert_str_eq(sa, "frozen");
        ck_assert_str_eq(sc, "frozen");
        _cleanup_close_ int fd = test_cgroup(unit_sub("standby-b.service"));
        bool f;
        ck_assert_int_eq(cgroup_get_freeze(fd, &f), 0);
        ck_assert_msg(!f, "a skipped unit must not stay half-frozen");
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());

        snprintf(extra, sizeof(extra), "Targets=\nTargets=%s/app.slice\nBackend=systemd\nFreezeTimeout=2s\n"
                                       "OnFreezeTimeout=abort\nSystemdAddress=unix:path=%s/xdg/systemd/private\n",
                 cgrel, dir);
        test_write_config(extra);
        t0 = now_usec(CLOCK_MONOTONIC);
        ck_assert_int_eq(test_manager(&err2, "enter", NULL), EXIT_ROLLED_BACK);
        took = now_usec(CLOCK_MONOTONIC) - t0;
        ck_assert_msg(took < 10 * USEC_PER_SEC, "enter took %.1f s: %s", (double) took / USEC_PER_SEC, err2);
        ck_assert_msg(strstr(err2, "rolling back"), "%s", err2);
        ck_assert(!test_anything_frozen());
        _cleanup_free_ char *sa2 = freezer_state("standby-a.service"), *sc2 = freezer_state("standby-c.service");
        ck_assert_str_eq(sa2, "running");
        ck_assert_str_eq(sc2, "running");
}
END_TEST

/* The slack strategy's exit passes each unit through a freeze and thaw
 * (through systemd for its units): a unit stuck on FUSE among them costs
 * that exit FreezeTimeout= once, not systemd's 30 s, and every unit ends
 * running. */
START_TEST(test_slack_exit_stuck_unit) {
        char extra[2048];
        _cleanup_free_ char *err = NULL;

        if (!test_need_user_manager() || !test_have_fuse())
                return;
        run_unit("standby-a.service");
        run_unit("standby-b.service");
        run_unit("standby-c.service");
        test_start_stuck_client(unit_sub("standby-b.service"));
        snprintf(extra, sizeof(extra), "Targets=\nTargets=%s/app.slice\nBackend=systemd\nStrategy=slack\n"
                                       "FreezeTimeout=2s\nSystemdAddress=unix:path=%s/xdg/systemd/private\n",
                 cgrel, dir);
        test_write_config(extra);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);

        usec_t t0 = now_usec(CLOCK_MONOTONIC);
        int code = test_manager(&err, "exit", NULL);
        usec_t took = now_usec(CLOCK_MONOTONIC) - t0;
        ck_assert_msg(took < 10 * USEC_PER_SEC, "exit took %.1f s: %s", (double) took / USEC_PER_SEC, err);
        ck_assert_msg(code == EXIT_OK, "exit: %d: %s", code, err);
        ck_assert(!test_anything_frozen());
        _cleanup_free_ char *sa = freezer_state("standby-a.service"), *sc = freezer_state("standby-c.service");
        ck_assert_str_eq(sa, "running");
        ck_assert_str_eq(sc, "running");
}
END_TEST

/* The state letter of /proc/PID/stat ('T' for a process stopped by a signal). */
static char proc_state(pid_t pid) {
        char path[64], buf[512];
        FILE *f;
        char st = 0;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        f = fopen(path, "re");
        if (!f)
                return 0;
        if (fgets(buf, sizeof(buf), f)) {
                char *p = strrchr(buf, ')');
                if (p && p[1] == ' ')
                        st = p[2];
        }
        fclose(f);
        return st;
}

static bool is_stopped(void *userdata) {
        return proc_state(*(pid_t *) userdata) == 'T';
}

/* A user stops his own systemd --user (SIGSTOP: it is his process) while
 * standby's units are frozen through it; any process of his that standby
 * does not freeze can (a cgroup named dbus.service, exempt by name, say).
 * The manager's socket still takes connections (the kernel queues them), but
 * nobody answers: exit must not wait for it, and must thaw his units (and
 * everyone else's after them) through cgroup.freeze. The manager is
 * continued after a bound (20 s), so that exit on a standby that waits for
 * it ends too: it must have ended while the manager was still stopped. */
START_TEST(test_exit_with_manager_stopped) {
        _cleanup_free_ char *pidtext = NULL, *err = NULL;
        char path[PATH_MAX];
        pid_t pid, cont;

        if (!test_need_user_manager())
                return;
        standby_with_a_and_b();

        snprintf(path, sizeof(path), "%s/manager.pid", dir);
        ck_assert_int_eq(read_one_lineat(AT_FDCWD, path, &pidtext), 0);
        ck_assert_int_eq(parse_pid(pidtext, &pid), 0);
        ck_assert_int_eq(kill(pid, SIGSTOP), 0);
        ck_assert(test_wait_for(is_stopped, &pid, 5 * USEC_PER_SEC));
        /* Should exit wait for the manager, it is continued after 20 s, so
         * that the test fails instead of hanging. */
        int release;
        cont = test_fork_until_released(20 * USEC_PER_SEC, continue_pid, &pid, &release);

        int code = test_manager(&err, "exit", NULL);
        char st = proc_state(pid);
        close(release);
        (void) waitpid(cont, NULL, 0);
        (void) kill(pid, SIGCONT);
        ck_assert_msg(st == 'T', "exit waited until the stopped manager was continued: %s", err);
        ck_assert_int_eq(code, EXIT_OK);
        ck_assert(!test_anything_frozen());
}
END_TEST


/* The journal's manager address is connected to as root on exit: only the
 * forms standby writes itself are taken. Any other (a "unixexec:" that would
 * run a command, tcp:, a second key, the user form of no user or with a
 * padded UID, or a runtime directory not its UID's own) is an error for that entry, thawed through cgroupfs. */
START_TEST(test_recorded_address_refused) {
        char pwned[PATH_MAX], address[PATH_MAX + 128], other_dir[64], other[128];
        const char *bad[] = {
                address,
                other,
                "tcp:host=127.0.0.1,port=1",
                "unix:path=/run/systemd/private,guid=00000000000000000000000000000000",
                "unix:path=/run/systemd/private;unix:path=/tmp/x",
                "unix:abstract=standby",
                "unix:path=/run/user/4000000000/systemd/private",
                "unix:path=/run/user/00/systemd/private",
                "unix:path=/run/user/0/systemd/private/../../../../tmp/x",
        };

        if (!test_need_root_cgroup2())
                return;
        snprintf(pwned, sizeof(pwned), "%s.pwned", T.state_dir);
        (void) unlink(pwned);
        snprintf(address, sizeof(address), "unixexec:path=/usr/bin/touch,argv0=touch,argv1=%s", pwned);
        /* A runtime directory that is not its UID's own (root's here) is no
         * user's: its manager socket is not taken either. */
        unsigned other_uid = 3000000000u + (unsigned) getpid() % 1000000u;
        bool made_run_user = mkdir("/run/user", 0755) == 0;
        snprintf(other_dir, sizeof(other_dir), "/run/user/%u", other_uid);
        ck_assert_int_eq(mkdir(other_dir, 0700), 0);
        snprintf(other, sizeof(other), "unix:path=%s/systemd/private", other_dir);
        test_write_config("Backend=cgroupfs\n");
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_free_ char *err = NULL;

                test_spawn_workload("a.service", "idle", 100, 1, NULL);
                ck_assert_int_eq(test_manager(NULL, "--quiet", "freeze", test_cgpath("a.service"), NULL), EXIT_OK);
                ck_assert(test_frozen("a.service"));
                test_journal_set_address("a.service", bad[i]);

                int code = test_manager(&err, "exit", NULL);
                bool ran = access(pwned, F_OK) >= 0;
                (void) unlink(pwned);
                ck_assert_msg(!ran, "%s: the command ran", bad[i]);
                ck_assert_int_eq(code, EXIT_OK);
                ck_assert_msg(strstr(err, "refusing the recorded systemd manager address"), "%s: %s", bad[i], err);
                ck_assert_msg(!test_frozen("a.service"), "%s: left frozen", bad[i]);
        }
        (void) rmdir(other_dir);
        if (made_run_user)
                (void) rmdir("/run/user");
}
END_TEST

/* The private socket of a user, reached as root (common/private-socket.c):
 * a runtime root of the test's own, RT/UID/systemd/private, UID a test uid. */
#define PS_UID 4242
static char ps_dir[128], ps_rt[160], ps_uid_dir[192], ps_sd[224], ps_sock[256];

static void ps_teardown(void);

static void ps_setup(void) {
        snprintf(ps_dir, sizeof(ps_dir), "/tmp/standby-ps.%d", (int) getpid());
        snprintf(ps_rt, sizeof(ps_rt), "%s/rt", ps_dir);
        snprintf(ps_uid_dir, sizeof(ps_uid_dir), "%s/%d", ps_rt, PS_UID);
        snprintf(ps_sd, sizeof(ps_sd), "%s/systemd", ps_uid_dir);
        snprintf(ps_sock, sizeof(ps_sock), "%s/private", ps_sd);
        ck_assert_int_eq(mkdir(ps_dir, 0700), 0);
        atexit(ps_teardown); /* also after a failed assertion (the process exits) */
        ck_assert_int_eq(mkdir(ps_rt, 0755), 0);
        ck_assert_int_eq(mkdir(ps_uid_dir, 0700), 0);
        ck_assert_int_eq(chown(ps_uid_dir, PS_UID, PS_UID), 0);
        ck_assert_int_eq(mkdir(ps_sd, 0755), 0);
        ck_assert_int_eq(chown(ps_sd, PS_UID, PS_UID), 0);
}

static void ps_teardown(void) {
        char cmd[512];
        if (!ps_dir[0])
                return;
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", ps_dir);
        (void) !system(cmd);
        ps_dir[0] = 0;
}

/* A listening socket at path (non-blocking: accept() tells, never waits),
 * owned by uid, with the given backlog. */
static int ps_listen(const char *path, uid_t uid, int backlog) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

        ck_assert_int_ge(fd, 0);
        ck_assert_uint_lt(strlen(path), sizeof(sa.sun_path));
        memcpy(sa.sun_path, path, strlen(path) + 1);
        ck_assert_int_eq(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        ck_assert_int_eq(listen(fd, backlog), 0);
        ck_assert_int_eq(chown(path, uid, uid), 0);
        return fd;
}

/* No connection came to listener: the connect already answered, so one
 * made would be queued by now. */
static void ps_assert_no_connection(int listener) {
        int c = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        ck_assert_msg(c < 0 && errno == EAGAIN, "a connection reached the socket behind the refused path");
}

START_TEST(test_private_socket_refuses_links) {
        char target_dir[192], target[256], other_sd[256];
        int fd = -EBADF;

        if (!test_need_root_cgroup2())
                return;
        ps_setup();
        /* The socket path a link to a socket of the test's own (as one to
         * /run/systemd/private would be). */
        snprintf(target_dir, sizeof(target_dir), "%s/target", ps_dir);
        ck_assert_int_eq(mkdir(target_dir, 0755), 0);
        snprintf(target, sizeof(target), "%s/private", target_dir);
        int l = ps_listen(target, PS_UID, 16);
        ck_assert_int_eq(symlink(target, ps_sock), 0);
        ck_assert_int_eq(private_socket_connect(ps_rt, PS_UID, 5 * USEC_PER_SEC, &fd), -ELOOP);
        ps_assert_no_connection(l);
        /* The systemd directory a link. */
        ck_assert_int_eq(unlink(ps_sock), 0);
        ck_assert_int_eq(rmdir(ps_sd), 0);
        ck_assert_int_eq(symlink(target_dir, ps_sd), 0);
        ck_assert_int_eq(private_socket_connect(ps_rt, PS_UID, 5 * USEC_PER_SEC, &fd), -ELOOP);
        ps_assert_no_connection(l);
        /* The runtime directory itself a link (to a directory of the uid's). */
        snprintf(other_sd, sizeof(other_sd), "%s/other", ps_dir);
        ck_assert_int_eq(rename(ps_uid_dir, other_sd), 0);
        ck_assert_int_eq(symlink(other_sd, ps_uid_dir), 0);
        ck_assert_int_eq(private_socket_connect(ps_rt, PS_UID, 5 * USEC_PER_SEC, &fd), -ELOOP);
        ps_assert_no_connection(l);
        ck_assert_int_eq(fd, -EBADF);
        close(l);
        ps_teardown();
}
END_TEST

START_TEST(test_private_socket_owner) {
        int fd = -EBADF;

        if (!test_need_root_cgroup2())
                return;
        ps_setup();
        /* Another uid's socket (root's, here): refused, nothing reaches it. */
        int l = ps_listen(ps_sock, 0, 16);
        ck_assert_int_eq(private_socket_connect(ps_rt, PS_UID, 5 * USEC_PER_SEC, &fd), -EPERM);
        ps_assert_no_connection(l);
        /* The uid's own: connected, and the listener has it. */
        ck_assert_int_eq(chown(ps_sock, PS_UID, PS_UID), 0);
        ck_assert_int_eq(private_socket_connect(ps_rt, PS_UID, 5 * USEC_PER_SEC, &fd), 0);
        int c = accept4(l, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        ck_assert_int_ge(c, 0);
        ck_assert_int_eq(write(fd, "x", 1), 1);
        char ch = 0;
        ck_assert_int_eq(read(c, &ch, 1), 1);
        ck_assert_int_eq(ch, 'x');
        close(c);
        fd = safe_close(fd);
        close(l);
        /* Not a socket: a regular file of the uid's. */
        ck_assert_int_eq(unlink(ps_sock), 0);
        int f = open(ps_sock, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        ck_assert_int_ge(f, 0);
        close(f);
        ck_assert_int_eq(chown(ps_sock, PS_UID, PS_UID), 0);
        ck_assert_int_eq(private_socket_connect(ps_rt, PS_UID, 5 * USEC_PER_SEC, &fd), -EPERM);
        /* The runtime directory another uid's. */
        ck_assert_int_eq(chown(ps_uid_dir, PS_UID + 1, PS_UID + 1), 0);
        ck_assert_int_eq(private_socket_connect(ps_rt, PS_UID, 5 * USEC_PER_SEC, &fd), -EPERM);
        ps_teardown();
}
END_TEST

/* A socket whose backlog is full: the child's connect waits (as it would on
 * anything else that does not answer); the caller's bound ends it, and the
 * child is killed and reaped. */
START_TEST(test_private_socket_timeout) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = -EBADF, pfd;
        pid_t pid;

        if (!test_need_root_cgroup2())
                return;
        ps_setup();
        int l = ps_listen(ps_sock, PS_UID, 0);
        int filler = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        ck_assert_uint_lt(strlen(ps_sock), sizeof(sa.sun_path));
        memcpy(sa.sun_path, ps_sock, strlen(ps_sock) + 1);
        ck_assert_int_eq(connect(filler, (struct sockaddr *) &sa, sizeof(sa)), 0);
        /* The queue is full now: a second connect would wait. */
        int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        ck_assert_int_eq(connect(probe, (struct sockaddr *) &sa, sizeof(sa)), -1);
        ck_assert_int_eq(errno, EAGAIN);
        close(probe);

        usec_t start = now_usec(CLOCK_MONOTONIC);
        ck_assert_int_eq(private_socket_connect(ps_rt, PS_UID, 300 * USEC_PER_MSEC, &fd), -ETIMEDOUT);
        usec_t took = now_usec(CLOCK_MONOTONIC) - start;
        ck_assert_msg(took >= 300 * USEC_PER_MSEC && took < 3 * USEC_PER_SEC, "took %llu us",
                      (unsigned long long) took);

        /* The parts: the child is there until aborted, then reaped. */
        ck_assert_int_eq(private_socket_connect_start(ps_rt, PS_UID, &pid, &pfd), 0);
        struct pollfd p = { .fd = pfd, .events = POLLIN };
        ck_assert_int_eq(poll(&p, 1, 300), 0);
        ck_assert_int_eq(kill(pid, 0), 0);
        private_socket_connect_abort(pfd, pid);
        ck_assert_int_eq(waitpid(pid, NULL, WNOHANG), -1);
        ck_assert_int_eq(errno, ECHILD);
        close(filler);
        close(l);
        ps_teardown();
}
END_TEST

/* A FUSE mount whose server never answers, where the user could make one:
 * on the runtime directory and on its systemd directory. Refused at once
 * (-EXDEV), asking the server nothing: its requests are never even read. */
START_TEST(test_private_socket_fuse) {
        char opts[128];
        int fd = -EBADF;

        if (!test_need_root_cgroup2() || !test_have_fuse())
                return;
        ps_setup();
        /* This test's process only: the mounts go with it. */
        ck_assert_int_eq(unshare(CLONE_NEWNS), 0);
        ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
        int fuse = open("/dev/fuse", O_RDWR | O_CLOEXEC);
        ck_assert_int_ge(fuse, 0);
        snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=%d,group_id=%d", fuse, PS_UID, PS_UID);
        ck_assert_int_eq(mount("standby-test", ps_sd, "fuse.standby-test", MS_NOSUID | MS_NODEV, opts), 0);
        usec_t start = now_usec(CLOCK_MONOTONIC);
        ck_assert_int_eq(private_socket_connect(ps_rt, PS_UID, 5 * USEC_PER_SEC, &fd), -EXDEV);
        ck_assert_int_eq(umount2(ps_sd, MNT_DETACH), 0);
        close(fuse); /* one mount per connection */
        fuse = open("/dev/fuse", O_RDWR | O_CLOEXEC);
        ck_assert_int_ge(fuse, 0);
        snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=%d,group_id=%d", fuse, PS_UID, PS_UID);
        ck_assert_int_eq(mount("standby-test", ps_uid_dir, "fuse.standby-test", MS_NOSUID | MS_NODEV, opts), 0);
        ck_assert_int_eq(private_socket_connect(ps_rt, PS_UID, 5 * USEC_PER_SEC, &fd), -EXDEV);
        int dfd = -EBADF;
        ck_assert_int_eq(private_socket_runtime_dir(ps_rt, PS_UID, &dfd), -EXDEV);
        usec_t took = now_usec(CLOCK_MONOTONIC) - start;
        ck_assert_msg(took < 2 * USEC_PER_SEC, "took %llu us", (unsigned long long) took);
        ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1); /* every child reaped */
        ck_assert_int_eq(errno, ECHILD);
        ck_assert_int_eq(umount2(ps_uid_dir, MNT_DETACH), 0);
        close(fuse);
        ps_teardown();
}
END_TEST

/* The user manager's socket at RT/0/systemd/private (a hard link: the same
 * socket): connected through the child and given to sd-bus by fd, it
 * answers. */
START_TEST(test_private_socket_user_manager) {
        char rt[256], d0[300], sd[320], sock[352], src[300];
        _cleanup_free_ char *version = NULL;
        sd_bus *bus = NULL;
        int fd = -EBADF;

        if (!test_need_user_manager())
                return;
        snprintf(rt, sizeof(rt), "%s/rt", dir);
        snprintf(d0, sizeof(d0), "%s/0", rt);
        snprintf(sd, sizeof(sd), "%s/systemd", d0);
        snprintf(sock, sizeof(sock), "%s/private", sd);
        snprintf(src, sizeof(src), "%s/xdg/systemd/private", dir);
        ck_assert_int_eq(mkdir(rt, 0755), 0);
        ck_assert_int_eq(mkdir(d0, 0700), 0);
        ck_assert_int_eq(mkdir(sd, 0755), 0);
        ck_assert_int_eq(link(src, sock), 0);
        ck_assert_int_eq(private_socket_connect(rt, 0, 5 * USEC_PER_SEC, &fd), 0);
        ck_assert_int_eq(sd_bus_new(&bus), 0);
        ck_assert_int_eq(sd_bus_set_fd(bus, fd, fd), 0);
        ck_assert_int_ge(sd_bus_start(bus), 0);
        ck_assert_int_ge(sd_bus_get_property_string(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                                    "org.freedesktop.systemd1.Manager", "Version", NULL, &version),
                         0);
        ck_assert_msg(version && version[0], "no Version from the user manager");
        sd_bus_flush_close_unref(bus);
        ck_assert_int_eq(unlink(sock), 0);
        ck_assert_int_eq(rmdir(sd), 0);
        ck_assert_int_eq(rmdir(d0), 0);
        ck_assert_int_eq(rmdir(rt), 0);
}
END_TEST

/* A user's own server on their private socket (/run/user/UID/systemd/
 * private is theirs), in a child of the test: it answers ControlGroup
 * truthfully for its units, freezes them itself on FreezeUnit, and answers
 * each ThawUnit (and, if asked, each ControlGroup) only after a delay
 * inside the 5 s bound a call has, one after the other. */
#define SLOW_UNITS 3
typedef struct FakeManager {
        unsigned uid;
        char dir[64];           /* /run/user/UID */
        const char *subs[SLOW_UNITS];
        usec_t get_delay, thaw_delay;
        bool lies;              /* answers ThawUnit at once, and thaws nothing */
        pid_t pid;
} FakeManager;

/* The fake's own program (tests/helpers/fake-user-manager.c, which the
 * booted system's test runs as a real user too), on the socket l. */
_noreturn_ static void fake_exec(const FakeManager *f, int l) {
        char get[32], thaw[32];
        const char *argv[16 + SLOW_UNITS] = { "fake-user-manager", "--get-delay-ms", get, "--thaw-delay-ms", thaw,
                                              "--fd", "3" };
        size_t n = 7;

        snprintf(get, sizeof(get), "%llu", (unsigned long long) (f->get_delay / USEC_PER_MSEC));
        snprintf(thaw, sizeof(thaw), "%llu", (unsigned long long) (f->thaw_delay / USEC_PER_MSEC));
        if (f->lies)
                argv[n++] = "--lies";
        for (size_t i = 0; i < SLOW_UNITS; i++)
                argv[n++] = test_cgpath(f->subs[i]);
        int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (dup2(l, 3) < 0 || null < 0 || dup2(null, STDOUT_FILENO) < 0)
                _exit(1);
        execv(test_bin("helpers/fake-user-manager"), (char **) argv);
        _exit(127);
}

/* Removes RT/UID/systemd/private, RT/UID/systemd and RT/UID. */
static void fake_remove_dir(const char *runtime_dir) {
        char path[128];

        snprintf(path, sizeof(path), "%s/systemd/private", runtime_dir);
        (void) unlink(path);
        snprintf(path, sizeof(path), "%s/systemd", runtime_dir);
        (void) rmdir(path);
        (void) rmdir(runtime_dir);
}

#define FAKE_UID_BASE 3100000000u
#define FAKE_UID_END (FAKE_UID_BASE + 2u * 4194304u + 2u) /* 2 per pid, pid_max at most 2^22 */

/* Check ends a failed test with _exit(): what the test made in /run/user
 * is removed by the runner after the case (and before each fake starts),
 * for every fake UID whose test process (the UID says which) is gone. */
static void fake_sweep(void) {
        _cleanup_closedir_ DIR *d = opendir("/run/user");
        struct dirent *de;

        while (d && (de = readdir(d))) {
                char *end, rt[64];
                unsigned long uid = strtoul(de->d_name, &end, 10);
                struct stat st;

                if (*end || uid < FAKE_UID_BASE || uid >= FAKE_UID_END)
                        continue;
                snprintf(rt, sizeof(rt), "/run/user/%lu", uid);
                if (lstat(rt, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != uid)
                        continue;
                if (kill((pid_t) ((uid - FAKE_UID_BASE) / 2), 0) == 0)
                        continue; /* its test may still run */
                fake_remove_dir(rt);
        }
}

static void fake_cleanup(void);
static FakeManager fakes[2];

/* Starts fakes[k]: /run/user/UID/systemd/private of a UID of the test's
 * own, owned by it, its units' cgroups with a waiting process in each. */
static void fake_start(size_t k, usec_t get_delay, usec_t thaw_delay) {
        static char subs[ELEMENTSOF(fakes)][SLOW_UNITS][128];
        char sd[96], sock[128];
        FakeManager *f = &fakes[k];

        fake_sweep();
        f->uid = FAKE_UID_BASE + (unsigned) getpid() * 2 + (unsigned) k;
        f->get_delay = get_delay;
        f->thaw_delay = thaw_delay;
        for (size_t i = 0; i < SLOW_UNITS; i++) {
                snprintf(subs[k][i], sizeof(subs[k][i]), "user@%u.service/app.slice/slow-%zu.service", f->uid, i);
                f->subs[i] = subs[k][i];
                test_spawn_workload(subs[k][i], "idle", 100, 1, NULL);
        }
        (void) mkdir("/run/user", 0755);
        snprintf(f->dir, sizeof(f->dir), "/run/user/%u", f->uid);
        snprintf(sd, sizeof(sd), "%s/systemd", f->dir);
        snprintf(sock, sizeof(sock), "%s/private", sd);
        atexit(fake_cleanup);
        ck_assert_int_eq(mkdir(f->dir, 0700), 0);
        ck_assert_int_eq(chown(f->dir, f->uid, f->uid), 0);
        ck_assert_int_eq(mkdir(sd, 0755), 0);
        ck_assert_int_eq(chown(sd, f->uid, f->uid), 0);
        int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        ck_assert_int_ge(l, 0);
        memcpy(sa.sun_path, sock, strlen(sock) + 1);
        ck_assert_int_eq(bind(l, (struct sockaddr *) &sa, sizeof(sa)), 0);
        ck_assert_int_eq(listen(l, 16), 0);
        ck_assert_int_eq(chown(sock, f->uid, f->uid), 0);
        f->pid = fork();
        ck_assert_int_ge(f->pid, 0);
        if (f->pid == 0)
                fake_exec(f, l);
        close(l);
        ck_assert_int_lt(T.n_pids, TEST_MAX_PIDS);
        T.pids[T.n_pids++] = f->pid;
}

/* At the test's end, or its exit: no child of its own, three calls. */
static void fake_cleanup(void) {
        for (size_t k = 0; k < ELEMENTSOF(fakes); k++) {
                if (!fakes[k].dir[0])
                        continue;
                if (fakes[k].pid > 0)
                        (void) kill(fakes[k].pid, SIGKILL);
                fake_remove_dir(fakes[k].dir);
                fakes[k].dir[0] = 0;
        }
}

static bool exit_running(void *userdata) {
        return waitpid(*(pid_t *) userdata, NULL, WNOHANG) == 0;
}

/* Two users' managers answer every ThawUnit after 4.9 s, one after the
 * other, so that no call of theirs ever times out. exit thaws everything
 * within one bound (5 s), not one per unit of theirs (6 x 4.9 s): a unit
 * that needs no manager at once, while they are still being waited for;
 * theirs through cgroup.freeze once their time is up. */
START_TEST(test_exit_slow_managers) {
        _cleanup_free_ char *err = NULL;
        int tick = -EBADF;

        if (!test_need_root_cgroup2())
                return;
        test_write_config("Backend=auto\n");
        fake_start(0, 0, 4900 * USEC_PER_MSEC);
        fake_start(1, 0, 4900 * USEC_PER_MSEC);
        test_spawn_workload("plain.service", "nanosleep", 20, 1, &tick);
        ck_assert_int_eq(test_manager(&err, "enter", NULL), EXIT_OK);
        for (size_t k = 0; k < ELEMENTSOF(fakes); k++)
                for (size_t i = 0; i < SLOW_UNITS; i++)
                        ck_assert_msg(test_frozen(fakes[k].subs[i]), "%s not frozen: %s", fakes[k].subs[i], err);
        ck_assert(test_frozen("plain.service"));
        /* Recorded as theirs: exit asks them. */
        _cleanup_free_ char *json = NULL;
        ck_assert_int_eq(test_manager_env(NULL, &json, NULL, "status", "--json", NULL), EXIT_OK);
        ck_assert_msg(strstr(json, "slow-2.service\",\"state\":\"frozen\",\"kernel_frozen\":true,\"backend\":\"systemd\""),
                      "%s", json);
        test_drain(tick);

        /* Nothing of the test's own allocated in the child that exits. */
        err = mfree(err);
        json = mfree(json);
        int out[2];
        ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
        usec_t t0 = now_usec(CLOCK_MONOTONIC);
        pid_t ex = fork();
        ck_assert_int_ge(ex, 0);
        if (ex == 0) {
                char *e = NULL;
                int code = test_manager(&e, "exit", NULL);
                (void) !write(out[1], e ? e : "", e ? strlen(e) : 0);
                free(e);
                _exit(code);
        }
        close(out[1]);
        /* The unit no manager stands for runs again while the managers are
         * still waited for. */
        ck_assert_int_ge(test_ticks(tick, 1, 3 * USEC_PER_SEC), 1);
        ck_assert_msg(exit_running(&ex), "exit ended before plain.service ran again");
        int status = 0;
        ck_assert_int_eq(waitpid(ex, &status, 0), ex);
        usec_t took = now_usec(CLOCK_MONOTONIC) - t0;
        ck_assert_msg(took < 9 * USEC_PER_SEC, "exit took %.1f s", (double) took / USEC_PER_SEC);
        ck_assert(WIFEXITED(status));
        ck_assert_int_eq(WEXITSTATUS(status), EXIT_OK);
        FILE *f = fdopen(out[0], "re");
        size_t size = 0;
        ck_assert_ptr_nonnull(f);
        ck_assert_int_gt(getdelim(&err, &size, 0, f), 0);
        fclose(f);
        for (size_t k = 0; k < ELEMENTSOF(fakes); k++) {
                char want[256];
                for (size_t i = 0; i < SLOW_UNITS; i++)
                        ck_assert_msg(!test_frozen(fakes[k].subs[i]), "%s still frozen", fakes[k].subs[i]);
                /* Their last unit waited behind the others: thawed by standby. */
                snprintf(want, sizeof(want), "%s: systemd did not thaw it (no answer in time); thawing it through "
                         "cgroup.freeze", test_cgpath(fakes[k].subs[SLOW_UNITS - 1]));
                ck_assert_msg(err && strstr(err, want), "%s", err);
        }
        ck_assert(!test_anything_frozen());
        close(tick);
        fake_cleanup();
}
END_TEST

/* A manager that says it thawed its units and did not: exit believes
 * the kernel, and thaws them through cgroup.freeze. */
START_TEST(test_exit_lying_manager) {
        _cleanup_free_ char *err = NULL;

        if (!test_need_root_cgroup2())
                return;
        test_write_config("Backend=auto\n");
        fakes[0].lies = true;
        fake_start(0, 0, 0);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        for (size_t i = 0; i < SLOW_UNITS; i++)
                ck_assert(test_frozen(fakes[0].subs[i]));
        ck_assert_int_eq(test_manager(&err, "exit", NULL), EXIT_OK);
        for (size_t i = 0; i < SLOW_UNITS; i++) {
                char want[256];
                snprintf(want, sizeof(want), "%s: systemd answered the thaw, but its cgroup.freeze still says 1",
                         test_cgpath(fakes[0].subs[i]));
                ck_assert_msg(strstr(err, want), "%s", err);
        }
        ck_assert(!test_anything_frozen());
        fake_cleanup();
}
END_TEST

/* The managers answer each ControlGroup question after 4.9 s: enter asks
 * them all at once and waits one bound, not one per unit; the units they
 * did not answer for in time are frozen through cgroup.freeze. */
START_TEST(test_enter_slow_managers) {
        _cleanup_free_ char *err = NULL;

        if (!test_need_root_cgroup2())
                return;
        test_write_config("Backend=auto\n");
        fake_start(0, 4900 * USEC_PER_MSEC, 0);
        fake_start(1, 4900 * USEC_PER_MSEC, 0);
        test_spawn_workload("plain.service", "idle", 100, 1, NULL);
        usec_t t0 = now_usec(CLOCK_MONOTONIC);
        ck_assert_int_eq(test_manager(&err, "enter", NULL), EXIT_OK);
        usec_t took = now_usec(CLOCK_MONOTONIC) - t0;
        ck_assert_msg(took < 9 * USEC_PER_SEC, "enter took %.1f s: %s", (double) took / USEC_PER_SEC, err);
        ck_assert(test_frozen("plain.service"));
        ck_assert(test_frozen(fakes[0].subs[SLOW_UNITS - 1]));
        ck_assert(test_frozen(fakes[1].subs[SLOW_UNITS - 1]));
        ck_assert_int_eq(test_manager(NULL, "exit", NULL), EXIT_OK);
        ck_assert(!test_anything_frozen());
        fake_cleanup();
}
END_TEST

Suite *systemd_suite(void) {
        Suite *s = suite_create("systemd");
        TCase *tc = tcase_create("user-manager");
        tcase_set_timeout(tc, 60);
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_unchecked_fixture(tc, NULL, test_env_sweep);
        tcase_add_test(tc, test_systemd_backend);
        tcase_add_test(tc, test_backend_choice);
        tcase_add_test(tc, test_systemd_crash_recovery);
        tcase_add_test(tc, test_stopped_while_frozen);
        tcase_add_test(tc, test_exit_with_manager_stopped);
        tcase_add_test(tc, test_freeze_timeout_stuck_unit);
        tcase_add_test(tc, test_slack_exit_stuck_unit);
        tcase_add_test(tc, test_private_socket_user_manager);
        suite_add_tcase(s, tc);
        tc = test_kernel_tcase(s, "private-socket", 30);
        tcase_add_test(tc, test_private_socket_refuses_links);
        tcase_add_test(tc, test_private_socket_owner);
        tcase_add_test(tc, test_private_socket_timeout);
        tcase_add_test(tc, test_private_socket_fuse);
        tc = test_kernel_tcase(s, "slow-manager", 60);
        tcase_add_unchecked_fixture(tc, NULL, fake_sweep);
        tcase_add_test(tc, test_exit_slow_managers);
        tcase_add_test(tc, test_enter_slow_managers);
        tcase_add_test(tc, test_exit_lying_manager);
        tc = test_kernel_tcase(s, "address", 0);
        tcase_add_test(tc, test_recorded_address_refused);
        return s;
}
