/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Enter and Exit over the bus: standby entered or left as the rest of the
 * listener does it, answered as soon as it is under way (as systemctl
 * --no-block); the State property and the Entered and Left signals
 * (bus-state.c) tell when it is done.
 *
 * Enter starts standby.target where logind is followed (systemd as PID 1,
 * the system bus; logind.c), so that the target, status and the journal
 * agree; Exit ends standby as an ExitStandby= rule does (exit-standby.c).
 * Elsewhere (a private bus), and for a journal left entering or exiting by
 * an engine that failed, the engine itself runs: standby-manager, the
 * program beside the listener's own, exec'd in a child with every
 * descriptor of the listener closed (its bus, the apps' locks, logind's),
 * its end a pidfd in the loop, never waited for. */
#include <fcntl.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "listener.h"
#include "log.h"
#include "strv.h"

/* One engine run at a time per verb: another Enter (or Exit) while one
 * runs joins it. */
typedef struct ManagerRun {
        const char *verb;
        pid_t pid;
        sd_event_source *source;
} ManagerRun;

static ManagerRun runs[] = { { .verb = "enter" }, { .verb = "exit" } };

void listener_forget_manager_runs(Listener *l) {
        for (size_t i = 0; i < ELEMENTSOF(runs); i++) {
                runs[i].source = sd_event_source_disable_unref(runs[i].source);
                runs[i].pid = 0; /* left to finish; init reaps it once the listener is gone */
        }
}

static int on_manager_done(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        ManagerRun *run = userdata;
        int status = 0;

        if (waitpid(run->pid, &status, WNOHANG) <= 0)
                return 0;
        if (WIFEXITED(status) && (WEXITSTATUS(status) == EXIT_OK || WEXITSTATUS(status) == EXIT_NOT_ACTIVE))
                log_info("standby-manager %s (process %d) is done.", run->verb, (int) run->pid);
        else
                log_error("standby-manager %s (process %d) failed (wait status 0x%x); the journal says what is left.",
                          run->verb, (int) run->pid, (unsigned) status);
        /* An entry it made was told already (its journal's change went
         * first); one it did not make is not an Enter's any more. */
        if (streq(run->verb, "enter"))
                listener_bus_state_asked(NULL);
        run->source = sd_event_source_disable_unref(run->source);
        run->pid = 0;
        return 0;
}

/* The engine beside the listener: installed together, built together. */
static int manager_path(char **ret) {
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        char *slash, *p;

        if (n < 0)
                return -errno;
        exe[n] = 0;
        slash = strrchr(exe, '/');
        if (!slash)
                return -ENOENT;
        *slash = 0;
        if (asprintf(&p, "%s/standby-manager", exe) < 0)
                return -ENOMEM;
        *ret = p;
        return 0;
}

/* Execs standby-manager VERB in a child, its end watched. 0: it runs (or
 * one for the same verb ran already), or a negative errno (logged). */
static int run_manager(Listener *l, ManagerRun *run) {
        _cleanup_free_ char *path = NULL;
        int pidfd, r;
        pid_t pid;

        if (run->pid > 0)
                return 0;
        r = manager_path(&path);
        if (r < 0)
                return log_error_errno(r, "Cannot find standby-manager beside the listener: %m");
        const char *argv[] = { path,           "--config", l->m.config_path, "--state-dir",
                               l->m.state_dir, "--quiet",  run->verb,        NULL };
        /* The service manager's notify socket is the listener's alone:
         * the environment is made here, not in the child, which may call
         * only what is safe after a fork (the listener may have a thread). */
        size_t n = 0, k = 0;
        while (environ[n])
                n++;
        _cleanup_free_ char **envp = calloc(n + 1, sizeof(char *));
        if (!envp)
                return log_error_errno(-ENOMEM, "Cannot start standby-manager %s: %m", run->verb);
        for (size_t i = 0; i < n; i++)
                if (!strneq(environ[i], "NOTIFY_SOCKET=", strlen("NOTIFY_SOCKET=")) &&
                    !strneq(environ[i], "WATCHDOG_", strlen("WATCHDOG_")))
                        envp[k++] = environ[i];
        pid = fork();
        if (pid < 0)
                return log_error_errno(-errno, "Cannot start standby-manager %s: %m", run->verb);
        if (pid == 0) {
                sigset_t none;
                int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

                /* The listener blocks the signals its loop reads. */
                sigemptyset(&none);
                (void) sigprocmask(SIG_SETMASK, &none, NULL);
                if (null < 0 || dup2(null, STDIN_FILENO) < 0)
                        _exit(EXIT_FAILURE_GENERIC);
                /* stdout and stderr stay: the journal's stream, the log's. */
                if (syscall(SYS_close_range, 3U, ~0U, 0U) < 0)
                        for (int fd = 3; fd < 65536; fd++)
                                (void) close(fd);
                execve(path, (char **) argv, envp);
                _exit(127);
        }
        run->pid = pid;
        pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        r = pidfd < 0 ? -errno : sd_event_add_io(l->event, &run->source, pidfd, EPOLLIN, on_manager_done, run);
        if (r < 0) {
                /* Unwatched, it still runs; the journal tells what it did. */
                log_warning_errno(r, "Cannot watch standby-manager %s (process %d): %m", run->verb, (int) pid);
                safe_close(pidfd);
                run->pid = 0;
                return 0;
        }
        (void) sd_event_source_set_io_fd_own(run->source, true);
        log_info("Running standby-manager %s (process %d).", run->verb, (int) pid);
        return 0;
}

static JournalPhase journal_phase(const Listener *l) {
        return l->m.journal ? l->m.journal->phase : JOURNAL_NONE;
}

/* Who asked, for the log and EnteredBy, Left. */
static void asked_by(sd_bus_message *msg, const char *verb, char *buf, size_t size) {
        const char *sender = sd_bus_message_get_sender(msg);
        uid_t uid;

        if (sender && listener_sender_uid(sender, &uid))
                snprintf(buf, size, "%s over the bus by uid %u", verb, (unsigned) uid);
        else
                snprintf(buf, size, "%s over the bus by %s", verb, strna(sender));
}

int listener_method_enter(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Listener *l = userdata;
        char why[128];
        int r;

        r = listener_check_access(l, msg, "org.standby.enter", "enter standby through", listener_method_enter, error);
        if (r != 0)
                return r;
        if (listener_exiting(l) || journal_phase(l) == JOURNAL_EXITING)
                return sd_bus_error_set(error, LISTENER_INTERFACE ".Busy",
                                        "Standby is being left; enter once it is (the State property tells).");
        if (journal_phase(l) != JOURNAL_NONE)
                return sd_bus_reply_method_return(msg, ""); /* entered, or being entered: nothing to add */
        asked_by(msg, "Enter", why, sizeof(why));
        r = listener_logind_enter(l, why);
        if (r == -EOPNOTSUPP) {
                log_info("Entering standby (%s).", why);
                r = run_manager(l, &runs[0]);
                if (r >= 0)
                        listener_bus_state_asked(why);
        }
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot enter standby: %m");
        return sd_bus_reply_method_return(msg, "");
}

int listener_method_exit(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Listener *l = userdata;
        char why[128];
        int r = 0;

        r = listener_check_access(l, msg, "org.standby.exit", "leave standby through", listener_method_exit, error);
        if (r != 0)
                return r;
        asked_by(msg, "Exit", why, sizeof(why));
        if (listener_standby_active(l))
                /* As an ExitStandby= rule: joins an exit under way. */
                listener_exit_standby(l, why);
        else if (journal_phase(l) != JOURNAL_NONE && !listener_exiting(l)) {
                /* Entering, or left exiting by an exit that failed: the
                 * engine's exit takes any journal (standby-manager(8)). */
                log_info("Ending standby (%s).", why);
                if (free_and_strdup(&l->leave_why, why) < 0)
                        log_warning("Out of memory: this leave's reason is not told.");
                r = run_manager(l, &runs[1]);
        }
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot leave standby: %m");
        return sd_bus_reply_method_return(msg, "");
}
