/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Re-arming nanosleep after the slack strategy.
 *
 * A nanosleep armed under a huge slack has its hard expiry at soft + slack,
 * saturated to KTIME_MAX. Restoring timerslack_ns does not touch an armed
 * timer, and an interruption does not help either: the kernel's restart block
 * for nanosleep keeps the *hard* expiry (do_nanosleep() saves
 * hrtimer_get_expires()), so the restarted sleep still ends "never". The
 * sleeper only wakes if its syscall is started afresh. So, for each thread
 * blocked in a relative nanosleep/clock_nanosleep, we attach with
 * PTRACE_SEIZE, stop it with PTRACE_INTERRUPT (the syscall returns
 * -ERESTART_RESTARTBLOCK), turn that into -ERESTARTNOINTR so the kernel
 * re-executes the call with the restored slack, and detach. An absolute sleep
 * needs none of this: the kernel restarts it afresh by itself.
 *
 * Re-executing reads the request again, and the interruption has written the
 * time left, measured to the *hard* expiry, into the caller's remainder; when
 * both are one buffer (glibc's sleep() passes &ts twice) the re-executed
 * sleep would last "never" again. So the request is read before the stop and,
 * in that case, written back as the time left to the soft expiry where it can
 * be known (remainder minus a bounded slack), else as the whole request: the
 * sleep never ends early, and at most one period late. A request in a buffer
 * of its own is left as the caller wrote it. x86_64 only: elsewhere the
 * threads are listed and left as they are. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>

#include "cgroup.h"
#include "fileio.h"
#include "log.h"
#include "manager.h"

#if defined(__x86_64__)
#include <sys/user.h>

#define KERNEL_ERESTARTNOINTR 513
#define KERNEL_ERESTART_RESTARTBLOCK 516

/* The request of a thread asleep in a relative nanosleep/clock_nanosleep, from
 * /proc/TID/syscall ("NR ARG0 ... ARG5 SP PC"). False for anything else. */
static bool relative_sleep_request(pid_t tid, uint64_t *ret_req_addr) {
        _cleanup_free_ char *line = NULL;
        unsigned long long a[6];
        char path[64];
        long nr;

        snprintf(path, sizeof(path), "/proc/%d/syscall", (int) tid);
        if (read_one_lineat(AT_FDCWD, path, &line) < 0 ||
            sscanf(line, "%ld %llx %llx %llx %llx", &nr, &a[0], &a[1], &a[2], &a[3]) != 5)
                return false;
        if (nr == SYS_nanosleep) {
                *ret_req_addr = a[0];
                return true;
        }
        if (nr == SYS_clock_nanosleep && !(a[1] & TIMER_ABSTIME)) {
                *ret_req_addr = a[2];
                return true;
        }
        return false;
}

static int peek_timespec(pid_t tid, uint64_t addr, struct timespec *ret) {
        struct iovec local = { .iov_base = ret, .iov_len = sizeof(*ret) };
        struct iovec remote = { .iov_base = (void *) (uintptr_t) addr, .iov_len = sizeof(*ret) };
        return process_vm_readv(tid, &local, 1, &remote, 1, 0) == (ssize_t) sizeof(*ret) ? 0 : -EFAULT;
}

static int poke_timespec(pid_t tid, uint64_t addr, const struct timespec *ts) {
        struct iovec local = { .iov_base = (void *) ts, .iov_len = sizeof(*ts) };
        struct iovec remote = { .iov_base = (void *) (uintptr_t) addr, .iov_len = sizeof(*ts) };
        return process_vm_writev(tid, &local, 1, &remote, 1, 0) == (ssize_t) sizeof(*ts) ? 0 : -EFAULT;
}

static uint64_t timespec_ns(const struct timespec *ts) {
        if (ts->tv_sec < 0 || ts->tv_nsec < 0)
                return 0;
        if ((uint64_t) ts->tv_sec >= UINT64_MAX / NSEC_PER_SEC)
                return UINT64_MAX;
        return (uint64_t) ts->tv_sec * NSEC_PER_SEC + (uint64_t) ts->tv_nsec;
}

/* What a re-executed sleep whose remainder overwrote its request should ask:
 * the remainder if it is no more than the request (never early, at most one
 * slack late), the time to the soft expiry if the slack is bounded, else the
 * whole request. */
static uint64_t request_after(uint64_t req, uint64_t rem, uint64_t slack) {
        if (rem <= req)
                return rem;
        if (slack < rem && rem - slack <= req)
                return rem - slack;
        return req;
}

static int rearm_thread(pid_t tid, uint64_t slack_ns) {
        struct user_regs_struct regs;
        struct timespec req, rem;
        uint64_t req_addr;
        int status, r = 0;

        if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) < 0)
                return negative_errno(); /* EPERM: already traced, say by a debugger */
        /* Read while the request is still the caller's: the stop may
         * overwrite it with the remainder. */
        if (!relative_sleep_request(tid, &req_addr) || peek_timespec(tid, req_addr, &req) < 0)
                goto detach; /* woke meanwhile, or an absolute sleep: restarts afresh by itself */
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
        /* A 32-bit task's syscall numbers and timespecs are other ones. */
        if (regs.cs != 0x33 || (long long) regs.rax != -KERNEL_ERESTART_RESTARTBLOCK)
                goto detach;
        uint64_t rem_addr;
        if (regs.orig_rax == SYS_nanosleep && regs.rdi == req_addr)
                rem_addr = regs.rsi;
        else if (regs.orig_rax == SYS_clock_nanosleep && regs.rdx == req_addr && !(regs.rsi & TIMER_ABSTIME))
                rem_addr = regs.r10;
        else
                goto detach; /* another sleep than the one read */
        if (rem_addr == req_addr) {
                /* The remainder unread, the whole request goes back. */
                bool have_rem = peek_timespec(tid, rem_addr, &rem) >= 0;
                uint64_t ns = have_rem ? request_after(timespec_ns(&req), timespec_ns(&rem), slack_ns)
                                       : timespec_ns(&req);
                struct timespec want = { .tv_sec = (time_t) (ns / NSEC_PER_SEC), .tv_nsec = (long) (ns % NSEC_PER_SEC) };
                if ((!have_rem || ns != timespec_ns(&rem)) && poke_timespec(tid, req_addr, &want) < 0) {
                        r = -EFAULT;
                        goto detach;
                }
        }
        regs.rax = (unsigned long long) -KERNEL_ERESTARTNOINTR;
        if (ptrace(PTRACE_SETREGS, tid, NULL, &regs) < 0)
                r = negative_errno();
        else
                r = 1;
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
                uint64_t addr;
                if (!relative_sleep_request(tids[k], &addr))
                        continue;
                r = rearm_thread(tids[k], m->journal->slack_ns);
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
