/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Re-arming nanosleep after the slack strategy.
 *
 * A nanosleep armed under a huge slack has its hard expiry at soft + slack,
 * saturated to KTIME_MAX. Restoring timerslack_ns does not touch an armed
 * timer, and an interruption does not help either: the kernel's restart block
 * for nanosleep keeps the *hard* expiry (do_nanosleep() saves
 * hrtimer_get_expires()), so the restarted sleep still ends "never". The
 * sleeper only wakes if its syscall is started afresh. So, for each thread
 * blocked in nanosleep/clock_nanosleep, we attach with PTRACE_SEIZE, stop it
 * with PTRACE_INTERRUPT (the syscall returns -ERESTART_RESTARTBLOCK), turn that
 * into -ERESTARTNOINTR so the kernel re-executes the original call with its
 * original arguments and the restored slack, and detach. A relative sleep thus
 * ends at most one period late; an absolute one on time. x86_64 only:
 * elsewhere the threads are listed and left as they are. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "cgroup.h"
#include "fileio.h"
#include "log.h"
#include "manager.h"

#if defined(__x86_64__)
#include <sys/user.h>

#define KERNEL_ERESTARTNOINTR 513
#define KERNEL_ERESTART_RESTARTBLOCK 516

static bool in_nanosleep(pid_t tid) {
        _cleanup_free_ char *line = NULL;
        char path[64];
        long nr;

        snprintf(path, sizeof(path), "/proc/%d/syscall", (int) tid);
        if (read_one_lineat(AT_FDCWD, path, &line) < 0 || sscanf(line, "%ld", &nr) != 1)
                return false;
        return nr == SYS_nanosleep || nr == SYS_clock_nanosleep;
}

static int rearm_thread(pid_t tid) {
        struct user_regs_struct regs;
        int status, r = 0;

        if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) < 0)
                return negative_errno(); /* EPERM: already traced, say by a debugger */
        if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0) {
                r = negative_errno();
                goto detach;
        }
        /* The thread sleeps interruptibly, so it stops at once. */
        if (waitpid(tid, &status, __WALL) != tid) {
                r = negative_errno();
                goto detach;
        }
        if (!WIFSTOPPED(status)) {
                return -ESRCH; /* it died meanwhile */
        }
        if (ptrace(PTRACE_GETREGS, tid, NULL, &regs) < 0) {
                r = negative_errno();
                goto detach;
        }
        if ((regs.orig_rax == SYS_nanosleep || regs.orig_rax == SYS_clock_nanosleep) &&
            (long long) regs.rax == -KERNEL_ERESTART_RESTARTBLOCK) {
                regs.rax = (unsigned long long) -KERNEL_ERESTARTNOINTR;
                if (ptrace(PTRACE_SETREGS, tid, NULL, &regs) < 0)
                        r = negative_errno();
                else
                        r = 1;
        }
detach:
        (void) ptrace(PTRACE_DETACH, tid, NULL, NULL);
        return r;
}

int rearm_nanosleepers(Manager *m, size_t *ret_rearmed) {
        _cleanup_free_ pid_t *tids = NULL;
        size_t n = 0, rearmed = 0;
        int r;

        r = slack_unit_threads(m, &tids, &n);
        if (r < 0)
                return r;
        for (size_t k = 0; k < n; k++) {
                if (!in_nanosleep(tids[k]))
                        continue;
                r = rearm_thread(tids[k]);
                if (r < 0 && r != -ESRCH)
                        log_warning_errno(r, "Cannot re-arm the nanosleep of thread %d: %m; it wakes only when its "
                                          "standby slack runs out.", (int) tids[k]);
                if (r > 0)
                        rearmed++;
        }
        *ret_rearmed = rearmed;
        return 0;
}
#else
int rearm_nanosleepers(Manager *m, size_t *ret_rearmed) {
        log_warning("Re-arming nanosleep after slack is implemented for x86_64 only: threads asleep in nanosleep "
                    "keep their standby slack until they wake.");
        *ret_rearmed = 0;
        return 0;
}
#endif
