/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "cgroup.h"
#include "fileio.h"
#include "macro.h"
#include "test-util.h"

TestEnv T = { .root_fd = -EBADF };

const char *test_runner_id(void) {
        const char *r = getenv("STANDBY_TEST_RUNNER");
        return r ? r : "0";
}

char *test_write_tmp(const char *text) {
        char *path = strdup("/tmp/standby-test-XXXXXX");
        int fd;

        ck_assert_ptr_nonnull(path);
        fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        close(fd);
        return path;
}

int test_run_shell(const char *cmd, char **ret_out) {
        FILE *f = popen(cmd, "re");
        ck_assert_ptr_nonnull(f);
        char *buf = calloc(1, 16384);
        ck_assert_ptr_nonnull(buf);
        size_t n = fread(buf, 1, 16383, f);
        buf[n] = 0;
        int status = pclose(f);
        *ret_out = buf;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

const char *test_bin(const char *name) {
        static char buf[4][4096];
        static unsigned k;
        const char *dir = getenv("STANDBY_BUILD_DIR");
        char *b = buf[k++ % 4];

        snprintf(b, sizeof(buf[0]), "%s/%s", dir ? dir : "build", name);
        return b;
}

bool test_skip(const char *fmt, ...) {
        _cleanup_free_ char *reason = NULL;
        const char *path = getenv("STANDBY_TEST_SKIP_FILE"), *test = tcase_name() ?: "?";
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&reason, fmt, ap) < 0)
                reason = NULL;
        va_end(ap);
        /* A tab or newline would break the record's fields. */
        for (char *p = reason; p && *p; p++)
                if (*p == '\t' || *p == '\n')
                        *p = ' ';
        fprintf(stderr, "SKIP: %s: %s\n", test, strna(reason));
        if (path) {
                /* One write() of one line with O_APPEND: records of tests
                 * that run at once do not mix. */
                _cleanup_close_ int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
                _cleanup_free_ char *line = NULL;
                int n = asprintf(&line, "%s\t%s\n", test, strna(reason));
                ck_assert_msg(fd >= 0 && n > 0 && write(fd, line, (size_t) n) == n, "cannot record the skip in %s: %s",
                              path, strerror(errno));
        }
        return false;
}

bool test_need_root_cgroup2(void) {
        _cleanup_free_ char *m = NULL;

        if (T.unavailable)
                return test_skip("%s", T.unavailable);
        if (geteuid() != 0)
                return test_skip("needs root");
        if (cgroup_find_mount(&m) < 0)
                return test_skip("no cgroup2 mount");
        return true;
}

const char *test_cgpath(const char *sub) {
        static char buf[8][4096];
        static unsigned k;
        char *b = buf[k++ % 8];

        if (isempty(sub))
                snprintf(b, sizeof(buf[0]), "%s", T.base);
        else
                snprintf(b, sizeof(buf[0]), "%s/%s", T.base, sub);
        return b;
}

int test_cgroup(const char *sub) {
        char path[4096];
        int fd;

        snprintf(path, sizeof(path), "%s", test_cgpath(sub));
        for (char *p = path + strlen(T.base) + 1; sub && *sub; p++) {
                if (*p == '/' || *p == 0) {
                        char c = *p;
                        *p = 0;
                        if (mkdirat(T.root_fd, path, 0755) < 0 && errno != EEXIST)
                                ck_abort_msg("mkdir %s: %s", path, strerror(errno));
                        *p = c;
                        if (!c)
                                break;
                }
        }
        ck_assert_int_ge(cgroup_open(T.root_fd, path, &fd), 0);
        return fd;
}

uint64_t test_rss_kib(pid_t pid) {
        _cleanup_free_ char *text = NULL;
        char path[64];
        const char *p;

        snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        ck_assert_int_ge(read_full_fileat(AT_FDCWD, path, &text, NULL), 0);
        p = strstr(text, "VmRSS:");
        ck_assert_ptr_nonnull(p);
        return strtoull(p + 6, NULL, 10);
}

void test_write_config(const char *extra) {
        FILE *f = fopen(T.config, "we");
        ck_assert_ptr_nonnull(f);
        fprintf(f, "[Standby]\nTargets=%s\nFreezeTimeout=2s\n%s", T.base, extra ? extra : "");
        fclose(f);
}

static void cleanup_at_exit(void) {
        /* A failed assertion exits the test's process: clean up there and then,
         * so that nothing stays frozen and later tests see no leftovers. */
        if (T.base)
                test_env_teardown();
}

void test_env_setup(void) {
        static unsigned counter;
        static bool registered;
        char buf[256];

        if (!registered) {
                atexit(cleanup_at_exit);
                /* Orphans of our helpers (a FUSE client whose server died) come
                 * to us, so teardown reaps them rather than leaving zombies. */
                (void) prctl(PR_SET_CHILD_SUBREAPER, 1);
                registered = true;
        }

        /* What the tests need and a machine may lack: they skip, and say so. */
        T.unavailable = NULL;
        if (geteuid() != 0) {
                T.unavailable = "needs root";
                return;
        }
        if (cgroup_find_mount(&T.mount) < 0) {
                T.unavailable = "no cgroup2 mount";
                return;
        }
        ck_assert_int_ge(cgroup_open_root(T.mount, &T.root_fd), 0);
        ck_assert_int_ge(asprintf(&T.base, "standby-test.%s.%d.%u", test_runner_id(), (int) getpid(), counter++), 0);
        ck_assert_int_eq(cgroup_create(T.root_fd, T.base), 0);
        snprintf(buf, sizeof(buf), "/tmp/standby-test.%s.%d", test_runner_id(), (int) getpid());
        ck_assert_int_ge(mkdir(buf, 0700) >= 0 || errno == EEXIST, 1);
        ck_assert_int_ge(asprintf(&T.state_dir, "%s/state", buf), 0);
        ck_assert_int_ge(asprintf(&T.config, "%s/standby.conf", buf), 0);
        test_write_config(NULL);
        T.n_pids = 0;
}

static int thaw_one(int fd, const char *rel, void *userdata) {
        (void) cgroup_set_freeze(fd, false);
        return CGROUP_WALK_CONTINUE;
}

static int kill_procs(int fd, const char *rel, void *userdata) {
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;

        /* Processes in our own test cgroup: ours, ended by their pid. */
        if (cgroup_list_pids(fd, false, &pids, &n) >= 0)
                for (size_t i = 0; i < n; i++)
                        (void) kill(pids[i], SIGKILL);
        return CGROUP_WALK_CONTINUE;
}

bool test_wait_unpopulated(int dir_fd, usec_t timeout) {
        _cleanup_close_ int ev = openat(dir_fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + timeout;

        while (ev >= 0) {
                char buf[256] = {};
                struct pollfd p = { .fd = ev, .events = POLLPRI };

                if (lseek(ev, 0, SEEK_SET) < 0 || read(ev, buf, sizeof(buf) - 1) < 0)
                        return false;
                if (strstr(buf, "populated 0"))
                        return true;
                int t = deadline_poll_timeout(deadline);
                if (t == 0)
                        return false;
                (void) poll(&p, 1, t); /* the kernel's notice of a change */
        }
        return false;
}

static void clean_base(int root_fd, const char *base) {
        _cleanup_close_ int fd = openat(root_fd, base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0)
                return;
        (void) cgroup_walk(root_fd, base, thaw_one, NULL);
        (void) cgroup_walk(root_fd, base, kill_procs, NULL);
        (void) test_wait_unpopulated(fd, 10 * USEC_PER_SEC);
        (void) cgroup_remove_tree(root_fd, base);
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        (void) (type == FTW_DP ? rmdir(path) : unlink(path));
        return 0;
}

/* The state directory and whatever a test put in it (the journal, its lock,
 * a daemon's files): the test made it, so all of it goes; links are removed,
 * never followed. */
static void remove_state(const char *dir) {
        (void) nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

TCase *test_kernel_tcase(Suite *s, const char *name, double timeout) {
        TCase *tc = tcase_create(name);
        if (timeout > 0)
                tcase_set_timeout(tc, timeout);
        tcase_add_checked_fixture(tc, test_env_setup, test_env_teardown);
        tcase_add_unchecked_fixture(tc, NULL, test_env_sweep);
        suite_add_tcase(s, tc);
        return tc;
}

void test_env_teardown(void) {
        for (size_t i = 0; i < T.n_pids; i++)
                (void) kill(T.pids[i], SIGKILL);
        if (T.root_fd >= 0 && T.base)
                clean_base(T.root_fd, T.base);
        for (size_t i = 0; i < T.n_pids; i++)
                (void) waitpid(T.pids[i], NULL, 0);
        T.n_pids = 0;
        while (waitpid(-1, NULL, WNOHANG) > 0)
                ;
        if (T.state_dir)
                remove_state(T.state_dir);
        if (T.config)
                (void) unlink(T.config);
        free(T.base);
        free(T.state_dir);
        free(T.config);
        free(T.mount);
        T.base = T.state_dir = T.config = T.mount = NULL;
        T.root_fd = safe_close(T.root_fd);
}

void test_env_sweep(void) {
        _cleanup_free_ char *mount = NULL, *prefix = NULL;
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;

        if (geteuid() != 0 || cgroup_find_mount(&mount) < 0 || !(d = opendir(mount)))
                return;
        if (asprintf(&prefix, "standby-test.%s.", test_runner_id()) < 0)
                return;
        while ((de = readdir(d)))
                if (strneq(de->d_name, prefix, strlen(prefix)))
                        clean_base(dirfd(d), de->d_name);

        _cleanup_closedir_ DIR *t = opendir("/tmp");
        if (!t)
                return;
        prefix[strlen(prefix) - 1] = 0;
        while ((de = readdir(t)))
                if (strneq(de->d_name, prefix, strlen(prefix))) {
                        char p[4096];
                        snprintf(p, sizeof(p), "/tmp/%s/standby.conf", de->d_name);
                        (void) unlink(p);
                        snprintf(p, sizeof(p), "/tmp/%s/state", de->d_name);
                        remove_state(p);
                        snprintf(p, sizeof(p), "/tmp/%s", de->d_name);
                        (void) rmdir(p);
                }
}

static void track(pid_t pid) {
        ck_assert_int_lt(T.n_pids, TEST_MAX_PIDS);
        T.pids[T.n_pids++] = pid;
}

bool test_have_fuse(void) {
        if (access("/dev/fuse", R_OK | W_OK) < 0)
                return test_skip("no /dev/fuse: cannot make a task stuck in the kernel here");
        return true;
}

pid_t test_start_stuck_client(const char *sub) {
        char abs[4096], line[64] = {};
        int out[2], client = 0;

        safe_close(test_cgroup(sub));
        snprintf(abs, sizeof(abs), "%s/%s", T.mount, test_cgpath(sub));
        ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
        /* fuse-stuck says "ready PID" on stdout: the pipe is its stdout. */
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                dup2(out[1], 1);
                execl(test_bin("helpers/fuse-stuck"), "fuse-stuck", abs, NULL);
                _exit(127);
        }
        track(pid);
        close(out[1]);
        struct pollfd p = { .fd = out[0], .events = POLLIN };
        ck_assert_msg(poll(&p, 1, 10000) == 1, "fuse-stuck did not get ready");
        ck_assert_int_gt(read(out[0], line, sizeof(line) - 1), 0);
        close(out[0]);
        ck_assert_msg(sscanf(line, "ready %d", &client) == 1, "fuse-stuck said: %s", line);
        return client;
}

/* The child closes (exec, or after joining its cgroup) or writes to the sync
 * pipe: so when test_fork/test_spawn return, the child is in its cgroup. */
static void wait_sync(int fd) {
        char c;
        ssize_t n = read(fd, &c, 1);
        close(fd);
        ck_assert_msg(n == 0 || c == 'k', "child failed to join its cgroup or to exec");
}

pid_t test_fork(const char *sub, void (*fn)(void *userdata), void *userdata) {
        int cg = sub ? test_cgroup(sub) : -EBADF, sync[2];
        pid_t pid;

        ck_assert_int_eq(pipe2(sync, O_CLOEXEC), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                close(sync[0]);
                if (cg >= 0 && cgroup_attach(cg, getpid()) < 0)
                        _exit(127);
                if (write(sync[1], "k", 1) != 1)
                        _exit(127);
                close(sync[1]);
                fn(userdata);
                _exit(0);
        }
        close(sync[1]);
        safe_close(cg);
        track(pid);
        wait_sync(sync[0]);
        return pid;
}

pid_t test_spawn(const char *sub, char *const argv[], int *ret_tick_fd) {
        int cg = test_cgroup(sub), p[2] = { -1, -1 }, sync[2];
        pid_t pid;

        if (ret_tick_fd)
                ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        ck_assert_int_eq(pipe2(sync, O_CLOEXEC), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                close(sync[0]);
                /* Join the cgroup before exec, so no instruction runs outside it. */
                if (cgroup_attach(cg, getpid()) < 0)
                        _exit(127);
                if (ret_tick_fd && dup2(p[1], 3) != 3)
                        _exit(127);
                execv(argv[0], argv);
                (void) !write(sync[1], "e", 1);
                _exit(127);
        }
        close(sync[1]);
        safe_close(cg);
        track(pid);
        wait_sync(sync[0]);
        if (ret_tick_fd) {
                close(p[1]);
                *ret_tick_fd = p[0];
        }
        return pid;
}

pid_t test_spawn_workload(const char *sub, const char *kind, int period_ms, int threads, int *ret_tick_fd) {
        char period[16], nthreads[16];

        snprintf(period, sizeof(period), "%d", period_ms);
        snprintf(nthreads, sizeof(nthreads), "%d", threads);
        char *argv[] = { (char *) test_bin("standby-workload"), (char *) kind, "--period-ms", period,
                         "--threads", nthreads, ret_tick_fd ? "--tick-fd" : NULL, "3", NULL };
        return test_spawn(sub, argv, ret_tick_fd);
}

static char *read_all(int fd) {
        char *buf = NULL;
        size_t size = 0;
        FILE *m = open_memstream(&buf, &size);
        char chunk[4096];
        ssize_t n;

        while ((n = read(fd, chunk, sizeof(chunk))) > 0)
                fwrite(chunk, 1, (size_t) n, m);
        fclose(m);
        return buf;
}

static int run_manager(const char *env, char **ret_out, char **ret_err, const char *first, va_list ap) {
        const char *argv[64];
        size_t n = 0;
        int out[2], err[2], status;
        pid_t pid;

        argv[n++] = test_bin("standby-manager");
        argv[n++] = "--config";
        argv[n++] = T.config;
        argv[n++] = "--state-dir";
        argv[n++] = T.state_dir;
        for (const char *a = first; a && n < ELEMENTSOF(argv) - 1; a = va_arg(ap, const char *))
                argv[n++] = a;
        argv[n] = NULL;

        ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
        ck_assert_int_eq(pipe2(err, O_CLOEXEC), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                dup2(out[1], 1);
                dup2(err[1], 2);
                if (env)
                        putenv((char *) env);
                execv(argv[0], (char **) argv);
                _exit(127);
        }
        close(out[1]);
        close(err[1]);
        /* Both pipes are read to EOF before waiting: a full pipe must not block it. */
        char *o = read_all(out[0]);
        char *e = read_all(err[0]);
        close(out[0]);
        close(err[0]);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        if (ret_out)
                *ret_out = o;
        else
                free(o);
        if (ret_err)
                *ret_err = e;
        else {
                if (e && *e)
                        fprintf(stderr, "%s", e);
                free(e);
        }
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int test_manager(char **ret_err, const char *arg, ...) {
        va_list ap;
        va_start(ap, arg);
        int r = run_manager(NULL, NULL, ret_err, arg, ap);
        va_end(ap);
        return r;
}

int test_manager_env(const char *env, char **ret_out, char **ret_err, const char *arg, ...) {
        va_list ap;
        va_start(ap, arg);
        int r = run_manager(env, ret_out, ret_err, arg, ap);
        va_end(ap);
        return r;
}

int test_ticks(int fd, int n, usec_t timeout) {
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + timeout;
        int got = 0;

        while (got < n) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                int t = deadline_poll_timeout(deadline);
                char buf[256];

                if (t == 0 || poll(&p, 1, t) <= 0)
                        break;
                ssize_t k = read(fd, buf, (size_t) MIN(n - got, (int) sizeof(buf)));
                if (k <= 0)
                        break;
                got += (int) k;
        }
        return got;
}

void test_drain(int fd) {
        char buf[4096];
        int fl = fcntl(fd, F_GETFL);

        fcntl(fd, F_SETFL, fl | O_NONBLOCK);
        while (read(fd, buf, sizeof(buf)) > 0)
                ;
        fcntl(fd, F_SETFL, fl);
}

int test_pending(int fd) {
        int n = 0;

        ck_assert_int_eq(ioctl(fd, FIONREAD, &n), 0);
        return n;
}

int test_start_clock(int period_ms) {
        char period[16];
        int p[2];

        snprintf(period, sizeof(period), "%d", period_ms);
        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                if (dup2(p[1], 3) != 3)
                        _exit(127);
                execl(test_bin("standby-workload"), "standby-workload", "nanosleep", "--period-ms", period, "--tick-fd",
                      "3", NULL);
                _exit(127);
        }
        track(pid);
        close(p[1]);
        return p[0];
}

void test_clock_ticks(int clock, int n) {
        test_drain(clock);
        ck_assert_msg(test_ticks(clock, n, 30 * USEC_PER_SEC) == n, "the clock did not tick %d times", n);
}

int test_pending_after_clock(int fd, int clock, int n) {
        test_clock_ticks(clock, n);
        return test_pending(fd);
}

bool test_frozen(const char *sub) {
        _cleanup_close_ int fd = -EBADF;
        bool frozen = false;

        ck_assert_int_ge(cgroup_open(T.root_fd, test_cgpath(sub), &fd), 0);
        ck_assert_int_ge(cgroup_get_frozen(fd, &frozen, NULL), 0);
        return frozen;
}

static int note_frozen(int fd, const char *rel, void *userdata) {
        bool f;
        if (cgroup_get_freeze(fd, &f) >= 0 && f)
                *(bool *) userdata = true;
        return CGROUP_WALK_CONTINUE;
}

bool test_anything_frozen(void) {
        bool any = false;

        ck_assert_int_eq(cgroup_walk(T.root_fd, T.base, note_frozen, &any), 0);
        return any;
}

bool test_wait_for(bool (*cond)(void *), void *userdata, usec_t timeout) {
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + timeout;

        for (;;) {
                if (cond(userdata))
                        return true;
                if (now_usec(CLOCK_MONOTONIC) >= deadline)
                        return false;
                (void) poll(NULL, 0, 1);
        }
}

pid_t test_start_dbus(const char *dir, char *ret_address, size_t size) {
        char conf[512], addr_arg[600], line[512] = {};
        const char *data = getenv("STANDBY_TEST_DATA");
        int out[2];

        snprintf(ret_address, size, "unix:path=%s/bus", dir);
        snprintf(conf, sizeof(conf), "--config-file=%s/dbus-test.conf", data ? data : "tests/data");
        snprintf(addr_arg, sizeof(addr_arg), "--address=%s", ret_address);
        ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                dup2(out[1], 1);
                int null = open("/dev/null", O_WRONLY);
                dup2(null, 2);
                execlp("dbus-daemon", "dbus-daemon", conf, addr_arg, "--nofork", "--print-address=1", NULL);
                _exit(127);
        }
        close(out[1]);
        /* dbus-daemon prints its address once it listens: wait for that line. */
        struct pollfd p = { .fd = out[0], .events = POLLIN };
        ck_assert_msg(poll(&p, 1, 10000) == 1 && read(out[0], line, sizeof(line) - 1) > 0, "dbus-daemon did not start");
        close(out[0]);
        ck_assert_ptr_nonnull(strstr(line, ret_address + strlen("unix:path=")));
        return pid;
}

sd_bus *test_bus_client(const char *address) {
        sd_bus *bus = NULL;
        ck_assert_int_ge(sd_bus_new(&bus), 0);
        ck_assert_int_ge(sd_bus_set_address(bus, address), 0);
        ck_assert_int_ge(sd_bus_set_bus_client(bus, true), 0);
        ck_assert_int_ge(sd_bus_start(bus), 0);
        return bus;
}

bool test_bus_wait_answered(sd_bus *bus, const int *answered, usec_t timeout) {
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + timeout;

        while (*answered == 0 && now_usec(CLOCK_MONOTONIC) < deadline) {
                ck_assert_int_ge(sd_bus_process(bus, NULL), 0);
                if (*answered == 0)
                        (void) sd_bus_wait(bus, deadline - MIN(deadline, now_usec(CLOCK_MONOTONIC)));
        }
        return *answered != 0;
}

void test_stop_pid(pid_t pid) {
        if (pid <= 0)
                return;
        (void) kill(pid, SIGTERM);
        (void) waitpid(pid, NULL, 0);
}

static char um_dir[128], um_cgrel[512], um_script[PATH_MAX];
static bool um_started;

bool test_user_manager_start(const char *dir, const char *cgrel) {
        char cmd[8192];
        _cleanup_free_ char *out = NULL;

        um_started = false;
        snprintf(um_dir, sizeof(um_dir), "%s", dir);
        snprintf(um_cgrel, sizeof(um_cgrel), "%s", cgrel);
        ck_assert_ptr_nonnull(realpath("tests/env/user-manager.sh", um_script));
        if (access("/lib/systemd/systemd", X_OK) < 0)
                return false;
        snprintf(cmd, sizeof(cmd), "%s start %s %s 2>&1", um_script, um_dir, um_cgrel);
        ck_assert_msg(test_run_shell(cmd, &out) == 0, "user manager: %s", out);
        um_started = true;
        /* A failed assertion exits the test's process: stop the manager there too. */
        atexit(test_user_manager_stop);
        return true;
}

bool test_need_user_manager(void) {
        if (!test_need_root_cgroup2())
                return false;
        if (!um_started)
                return test_skip("no /lib/systemd/systemd here");
        return true;
}

void test_user_manager_stop(void) {
        char cmd[8192];
        _cleanup_free_ char *out = NULL, *pidtext = NULL;
        int pid;

        if (!um_started)
                return;
        um_started = false;
        /* It may have been left stopped by a failed test. */
        snprintf(cmd, sizeof(cmd), "%s/manager.pid", um_dir);
        if (read_one_lineat(AT_FDCWD, cmd, &pidtext) >= 0 && sscanf(pidtext, "%d", &pid) == 1 && pid > 0)
                (void) kill(pid, SIGCONT);
        snprintf(cmd, sizeof(cmd), "%s stop %s %s 2>&1", um_script, um_dir, um_cgrel);
        int code = test_run_shell(cmd, &out);
        if (code != 0)
                fprintf(stderr, "user manager stop: %d %s\n", code, out);
}

char *test_unit_show(const char *runtime_dir, const char *unit, const char *property) {
        char cmd[PATH_MAX + 512];
        char *out = NULL;

        snprintf(cmd, sizeof(cmd), "XDG_RUNTIME_DIR=%s systemctl --user show -p %s --value %s", runtime_dir, property,
                 unit);
        ck_assert_int_eq(test_run_shell(cmd, &out), 0);
        out[strcspn(out, "\n")] = 0;
        return out;
}

bool test_wait_unit_property(const char *runtime_dir, const char *unit, const char *property, const char *want,
                             usec_t timeout) {
        _cleanup_free_ char *address = NULL, *match = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        const char *path = NULL;
        sd_bus *bus = NULL;
        bool found = false;
        int r;

        if (asprintf(&address, "unix:path=%s/systemd/private", runtime_dir) < 0)
                return false;
        r = sd_bus_new(&bus);
        if (r >= 0)
                r = sd_bus_set_address(bus, address);
        if (r >= 0)
                r = sd_bus_start(bus);
        /* The manager's private socket is a direct connection: it sends every
         * unit's PropertiesChanged there, subscribed or not. */
        if (r >= 0)
                r = sd_bus_call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                       "org.freedesktop.systemd1.Manager", "GetUnit", &error, &reply, "s", unit);
        if (r >= 0)
                r = sd_bus_message_read(reply, "o", &path);
        if (r >= 0 && asprintf(&match, "type='signal',path='%s',interface='org.freedesktop.DBus.Properties',"
                                       "member='PropertiesChanged'", path) < 0)
                r = -ENOMEM;
        if (r >= 0)
                r = sd_bus_add_match(bus, NULL, match, NULL, NULL);
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + timeout;
        while (r >= 0) {
                _cleanup_free_ char *value = NULL;
                usec_t now = now_usec(CLOCK_MONOTONIC);

                sd_bus_error_free(&error);
                r = sd_bus_get_property_string(bus, "org.freedesktop.systemd1", path, "org.freedesktop.systemd1.Unit",
                                               property, &error, &value);
                if (r >= 0 && streq(value, want)) {
                        found = true;
                        break;
                }
                if (r < 0 || now >= deadline)
                        break;
                /* Any change of the unit sends PropertiesChanged once it is
                 * made (FreezerState too: systemd queues the unit's signal
                 * when it changes); signals that came during the call above
                 * are queued already, so none is missed between the read and
                 * the wait. */
                r = sd_bus_wait(bus, deadline - now);
                while (r >= 0 && (r = sd_bus_process(bus, NULL)) > 0)
                        ;
        }
        sd_bus_error_free(&error);
        sd_bus_message_unref(reply);
        sd_bus_flush_close_unref(bus);
        return found;
}

pid_t test_fork_until_released(usec_t timeout, void (*at_end)(void *), void *userdata, int *ret_release) {
        int p[2];

        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                struct pollfd pf = { .fd = p[0], .events = POLLIN };

                close(p[1]);
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                /* POLLHUP once the test closes its end, or dies. */
                (void) poll(&pf, 1, (int) (timeout / USEC_PER_MSEC));
                if (at_end)
                        at_end(userdata);
                _exit(0);
        }
        close(p[0]);
        *ret_release = p[1];
        return pid;
}

/* Appends " systemd ADDRESS" to the journal's line of the unit sub (the
 * address as the journal escapes it: only plain characters here). */
void test_journal_set_address(const char *sub, const char *address) {
        char path[PATH_MAX], tmp[PATH_MAX], line[8192], want[4096];
        FILE *in, *out;
        bool found = false;

        snprintf(path, sizeof(path), "%s/state", T.state_dir);
        snprintf(tmp, sizeof(tmp), "%s/state.edit", T.state_dir);
        snprintf(want, sizeof(want), " %s \\-\n", test_cgpath(sub));
        in = fopen(path, "re");
        ck_assert_ptr_nonnull(in);
        out = fopen(tmp, "we");
        ck_assert_ptr_nonnull(out);
        while (fgets(line, sizeof(line), in)) {
                size_t n = strlen(line), w = strlen(want);
                if (n > w && streq(line + n - w, want)) {
                        line[n - 1] = 0;
                        fprintf(out, "%s systemd %s\n", line, address);
                        found = true;
                } else
                        fputs(line, out);
        }
        fclose(in);
        ck_assert_int_eq(fclose(out), 0);
        ck_assert_msg(found, "no journal line for %s", sub);
        ck_assert_int_eq(rename(tmp, path), 0);
}
