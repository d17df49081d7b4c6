/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* standby-manager run as a program, for the verbs the listener asks of the
 * engine (an exit, the freeze before a sleep): a process of its own, not a
 * fork()ed copy of the listener, so that it holds none of the listener's
 * descriptors (logind's locks, apps' lock pipes, held duplicates of frozen
 * services' sockets, the bus), shares none of its threads' state, and
 * reads its configuration afresh.
 *
 * posix_spawn() (a vfork in glibc: nothing of the listener's locked memory
 * is copied) with standard input /dev/null, every descriptor from 3 up
 * closed, signals as a new process has them, and a fixed environment: PATH, JOURNAL_STREAM when
 * the listener has one, so that the child's log lines keep their
 * priorities, and STANDBY_REPORT_DIR when it has one (the tests' place
 * for the wake reports, which the exit writes). Its end is its pidfd becoming readable, a loop event; the
 * loop never waits for it. */
#include <assert.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/wait.h>

#include "listener.h"
#include "log.h"
#include "pidfd.h"
#include "standby.h"
#include "strv.h"

struct ManagerRun {
        Listener *listener;
        pid_t pid;
        sd_event_source *source; /* its pidfd */
        ManagerRunDone done;
        void *userdata;
};

const char *listener_manager_path(void) {
        /* Set by whoever starts the listener (root, or a test running the
         * binaries of a build directory). */
        const char *p = getenv("STANDBY_LISTENER_MANAGER_PATH");
        return p && p[0] == '/' ? p : STANDBY_MANAGER_PATH;
}

pid_t listener_manager_run_pid(const ManagerRun *run) {
        return run ? run->pid : 0;
}

ManagerRun *listener_manager_run_abandon(ManagerRun *run) {
        if (!run)
                return NULL;
        sd_event_source_disable_unref(run->source);
        free(run);
        return NULL;
}

static int on_run_end(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        ManagerRun *run = userdata;
        int status = 0;

        if (waitpid(run->pid, &status, WNOHANG) <= 0)
                return 0; /* not yet (a pidfd is readable only once it ended) */
        log_debug("standby-manager (pid %d) ended, wait status 0x%x.", (int) run->pid, (unsigned) status);
        /* The owner forgets run in done; freed here after. */
        run->done(run->listener, run->pid, status, run->userdata);
        (void) listener_manager_run_abandon(run);
        return 0;
}

/* The command line: standby-manager [--config C] [--state-dir D] ARGS... */
static int build_argv(Listener *l, char **args, char ***ret) {
        _cleanup_strv_free_ char **argv = NULL;
        int r;

        r = strv_extend(&argv, "standby-manager");
        if (r >= 0 && !streq(l->m.config_path, STANDBY_CONFIG_PATH)) {
                r = strv_extend(&argv, "--config");
                if (r >= 0)
                        r = strv_extend(&argv, l->m.config_path);
        }
        if (r >= 0 && !streq(l->m.state_dir, STANDBY_STATE_DIR)) {
                r = strv_extend(&argv, "--state-dir");
                if (r >= 0)
                        r = strv_extend(&argv, l->m.state_dir);
        }
        for (char **a = args; r >= 0 && a && *a; a++)
                r = strv_extend(&argv, *a);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(argv);
        return 0;
}

static int spawn(const char *path, char **argv, char **envp, pid_t *ret_pid) {
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t attr;
        sigset_t none, defaults;
        int r;

        sigemptyset(&none);
        sigemptyset(&defaults);
        /* The listener blocks these for its signalfd, and ignores SIGPIPE;
         * the program gets them as any new process does. */
        sigaddset(&defaults, SIGTERM);
        sigaddset(&defaults, SIGINT);
        sigaddset(&defaults, SIGHUP);
        sigaddset(&defaults, SIGPIPE);
        sigaddset(&defaults, SIGCHLD);
        r = posix_spawn_file_actions_init(&fa);
        if (r != 0)
                return -r;
        r = posix_spawnattr_init(&attr);
        if (r != 0) {
                posix_spawn_file_actions_destroy(&fa);
                return -r;
        }
        /* Standard input is nobody's (the listener's may be anything);
         * output and error stay: the journal's stream, the log's. */
        r = posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
        if (r == 0)
                r = posix_spawn_file_actions_addclosefrom_np(&fa, 3);
        if (r == 0)
                r = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
        if (r == 0)
                r = posix_spawnattr_setsigmask(&attr, &none);
        if (r == 0)
                r = posix_spawnattr_setsigdefault(&attr, &defaults);
        if (r == 0)
                r = posix_spawn(ret_pid, path, &fa, &attr, argv, envp);
        posix_spawnattr_destroy(&attr);
        posix_spawn_file_actions_destroy(&fa);
        return -r;
}

int listener_manager_run(Listener *l, char **args, ManagerRunDone done, void *userdata, ManagerRun **ret) {
        _cleanup_strv_free_ char **argv = NULL;
        _cleanup_free_ char *journal_stream = NULL;
        _cleanup_free_ ManagerRun *run = NULL;
        _cleanup_close_ int pidfd = -EBADF;
        _cleanup_free_ char *report_dir = NULL;
        const char *path = listener_manager_path(), *js = getenv("JOURNAL_STREAM"), *rd = getenv("STANDBY_REPORT_DIR");
        char *envp[4] = { (char *) "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL, NULL, NULL };
        size_t n_env = 1;
        pid_t pid;
        int r;

        assert(done);
        run = calloc(1, sizeof(*run));
        if (!run)
                return -ENOMEM;
        r = build_argv(l, args, &argv);
        if (r < 0)
                return r;
        if (js && asprintf(&journal_stream, "JOURNAL_STREAM=%s", js) < 0)
                return -ENOMEM;
        if (rd && asprintf(&report_dir, "STANDBY_REPORT_DIR=%s", rd) < 0)
                return -ENOMEM;
        if (journal_stream)
                envp[n_env++] = journal_stream;
        if (report_dir)
                envp[n_env++] = report_dir;
        r = spawn(path, argv, envp, &pid);
        if (r < 0)
                return log_error_errno(r, "Cannot run %s: %m", path);
        log_debug("Running %s %s (pid %d).", path, args && args[0] ? args[0] : "", (int) pid);
        /* Its own child, not yet waited for: the pid is still its. */
        pidfd = pidfd_of_pid(pid);
        r = pidfd < 0 ? pidfd : sd_event_add_io(l->event, &run->source, pidfd, EPOLLIN, on_run_end, run);
        if (r < 0) {
                /* It runs all the same, unwatched: the journal tells what it did. */
                log_warning_errno(r, "Cannot watch standby-manager (pid %d): %m", (int) pid);
                return r;
        }
        (void) sd_event_source_set_io_fd_own(run->source, true);
        TAKE_FD(pidfd);
        /* Before events are judged, but after the journal's watch
         * (standby-listener.c): what it wrote is read before its end is
         * acted on. */
        (void) sd_event_source_set_priority(run->source, SD_EVENT_PRIORITY_IMPORTANT + 1);
        run->listener = l;
        run->pid = pid;
        run->done = done;
        run->userdata = userdata;
        *ret = TAKE_PTR(run);
        return 0;
}
