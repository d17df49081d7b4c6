/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a bounded timer slack does to each kind of wakeup, on this kernel.
 *
 * Each sample is a child process that arms one kind of timer due in a fixed
 * time and reports when it woke. The bench sets the child's slack from
 * outside, through /proc/TID/timerslack_ns as standby does, either before the
 * child arms (the timer is armed during standby) or after (the timer was
 * armed before standby began). Two figures per timer:
 *  - its range, read from /proc/timer_list (hard minus soft expiry): the
 *    slack the kernel gave that timer, exact and independent of load;
 *  - its lateness, which is at most the range: a CPU's timers are run in
 *    order of hard expiry, each only once its soft expiry has passed, so a
 *    slacked timer runs early only when every timer ahead of it may run too;
 *    most fire near their hard expiry. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/futex.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "fileio.h"
#include "log.h"
#include "macro.h"
#include "proc.h"
#include "slack.h"

static const char * const slack_kind_names[_SLACK_KIND_MAX] = {
        [SLACK_KIND_NANOSLEEP] = "nanosleep",
        [SLACK_KIND_NANOSLEEP_ABS] = "clock_nanosleep-abs",
        [SLACK_KIND_POLL] = "poll",
        [SLACK_KIND_PPOLL] = "ppoll",
        [SLACK_KIND_SELECT] = "select",
        [SLACK_KIND_EPOLL] = "epoll_wait",
        [SLACK_KIND_FUTEX] = "futex-wait",
        [SLACK_KIND_FUTEX_BITSET_ABS] = "futex-wait-bitset-abs",
        [SLACK_KIND_TIMERFD] = "timerfd",
        [SLACK_KIND_TIMERFD_PERIODIC] = "timerfd-periodic",
        [SLACK_KIND_POSIX_SIGNAL] = "timer_create-signal",
        [SLACK_KIND_POSIX_THREAD] = "timer_create-thread",
        [SLACK_KIND_ITIMER] = "setitimer-real",
        [SLACK_KIND_RT_FIFO_NANOSLEEP] = "rt-fifo-nanosleep",
        [SLACK_KIND_RT_FIFO_FUTEX] = "rt-fifo-futex",
        [SLACK_KIND_RT_RR_POLL] = "rt-rr-poll",
        [SLACK_KIND_NEW_THREAD] = "pthread_create-nanosleep",
        [SLACK_KIND_NEW_PROCESS] = "fork-nanosleep",
};

const char *slack_kind_to_string(SlackKind k) {
        return k >= 0 && k < _SLACK_KIND_MAX ? slack_kind_names[k] : NULL;
}

static uint64_t mono_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * UINT64_C(1000000000) + (uint64_t) ts.tv_nsec;
}

static struct timespec ns_to_timespec(uint64_t ns) {
        return (struct timespec) { .tv_sec = (time_t) (ns / 1000000000), .tv_nsec = (long) (ns % 1000000000) };
}

/* What the child tells the bench, in order, over its report pipe. */
typedef struct ProbeMessage {
        int error;              /* negative errno; then nothing follows */
        pid_t tid;              /* the thread that arms */
        uint64_t target_ns;     /* CLOCK_MONOTONIC: the (first) expiry asked for */
        uint64_t own_slack_ns;  /* the arming thread's own slack, read just before it arms */
} ProbeMessage;

typedef struct ProbeResult {
        int error;
        int64_t late_ns;        /* woke this long after the expiry it measures against */
} ProbeResult;

static int child_rep_fd = -EBADF;
static uint64_t thread_woke_ns;
static int thread_woke_fd = -EBADF;

static void write_all(int fd, const void *p, size_t n) {
        while (n > 0) {
                ssize_t k = write(fd, p, n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        _exit(3);
                p = (const char *) p + k;
                n -= (size_t) k;
        }
}

static void on_posix_thread(union sigval v) {
        (void) v;
        thread_woke_ns = mono_ns();
        uint64_t one = 1;
        (void) !write(thread_woke_fd, &one, sizeof(one));
}

/* Arms one timer of kind k due in due_ns and waits for it; in the child.
 * Sends the ProbeMessage first, then returns the lateness. */
static int64_t probe_arm_and_wait(SlackKind k, uint64_t due_ns) {
        ProbeMessage m = {};
        uint64_t start, woke, target;
        uint32_t word = 0;
        int r = 0;

        m.tid = gettid();
        (void) slack_get(m.tid, &m.own_slack_ns);
        start = mono_ns();
        target = start + due_ns;
        m.target_ns = target;
        struct timespec rel = ns_to_timespec(due_ns), abs = ns_to_timespec(target);

        /* Kinds that arm with a call that returns report once armed; the
         * others report just before the call that arms and waits. */
        switch (k) {
        case SLACK_KIND_NANOSLEEP:
        case SLACK_KIND_RT_FIFO_NANOSLEEP:
        case SLACK_KIND_NEW_THREAD:
        case SLACK_KIND_NEW_PROCESS:
                write_all(child_rep_fd, &m, sizeof(m));
                r = clock_nanosleep(CLOCK_MONOTONIC, 0, &rel, NULL);
                break;
        case SLACK_KIND_NANOSLEEP_ABS:
                write_all(child_rep_fd, &m, sizeof(m));
                r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, NULL);
                break;
        case SLACK_KIND_POLL:
        case SLACK_KIND_RT_RR_POLL:
                write_all(child_rep_fd, &m, sizeof(m));
                r = poll(NULL, 0, (int) (due_ns / 1000000)) < 0 ? errno : 0;
                break;
        case SLACK_KIND_PPOLL:
                write_all(child_rep_fd, &m, sizeof(m));
                r = ppoll(NULL, 0, &rel, NULL) < 0 ? errno : 0;
                break;
        case SLACK_KIND_SELECT: {
                struct timeval tv = { .tv_sec = (time_t) (due_ns / 1000000000),
                                      .tv_usec = (suseconds_t) (due_ns % 1000000000 / 1000) };
                write_all(child_rep_fd, &m, sizeof(m));
                r = select(0, NULL, NULL, NULL, &tv) < 0 ? errno : 0;
                break;
        }
        case SLACK_KIND_EPOLL: {
                struct epoll_event ev;
                int ep = epoll_create1(EPOLL_CLOEXEC);
                if (ep < 0)
                        _exit(4);
                write_all(child_rep_fd, &m, sizeof(m));
                r = epoll_wait(ep, &ev, 1, (int) (due_ns / 1000000)) < 0 ? errno : 0;
                break;
        }
        case SLACK_KIND_FUTEX:
        case SLACK_KIND_RT_FIFO_FUTEX:
                write_all(child_rep_fd, &m, sizeof(m));
                r = syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &rel, NULL, 0) < 0 ? errno : 0;
                r = r == ETIMEDOUT ? 0 : r ? r : EIO;
                break;
        case SLACK_KIND_FUTEX_BITSET_ABS:
                write_all(child_rep_fd, &m, sizeof(m));
                r = syscall(SYS_futex, &word, FUTEX_WAIT_BITSET_PRIVATE, 0, &abs, NULL, FUTEX_BITSET_MATCH_ANY) < 0
                            ? errno : 0;
                r = r == ETIMEDOUT ? 0 : r ? r : EIO;
                break;
        case SLACK_KIND_TIMERFD:
        case SLACK_KIND_TIMERFD_PERIODIC: {
                bool periodic = k == SLACK_KIND_TIMERFD_PERIODIC;
                struct itimerspec its = { .it_value = rel, .it_interval = periodic ? rel : (struct timespec) {} };
                uint64_t ticks = 0, n;
                int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
                if (fd < 0 || timerfd_settime(fd, 0, &its, NULL) < 0)
                        _exit(4);
                write_all(child_rep_fd, &m, sizeof(m));
                /* Periodic: the second expiry, re-armed by the kernel itself. */
                while (ticks < (periodic ? 2u : 1u)) {
                        if (read(fd, &n, sizeof(n)) != sizeof(n))
                                _exit(5);
                        ticks += n;
                }
                if (periodic)
                        target += due_ns;
                break;
        }
        case SLACK_KIND_POSIX_SIGNAL:
        case SLACK_KIND_ITIMER: {
                sigset_t set;
                int sig = k == SLACK_KIND_ITIMER ? SIGALRM : SIGRTMIN;
                sigemptyset(&set);
                sigaddset(&set, sig);
                sigprocmask(SIG_BLOCK, &set, NULL);
                if (k == SLACK_KIND_ITIMER) {
                        struct itimerval itv = { .it_value = { .tv_sec = rel.tv_sec, .tv_usec = rel.tv_nsec / 1000 } };
                        if (setitimer(ITIMER_REAL, &itv, NULL) < 0)
                                _exit(4);
                } else {
                        struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = sig };
                        struct itimerspec its = { .it_value = rel };
                        timer_t t;
                        if (timer_create(CLOCK_MONOTONIC, &sev, &t) < 0 || timer_settime(t, 0, &its, NULL) < 0)
                                _exit(4);
                }
                write_all(child_rep_fd, &m, sizeof(m));
                while (sigwaitinfo(&set, NULL) < 0)
                        if (errno != EINTR)
                                _exit(5);
                break;
        }
        case SLACK_KIND_POSIX_THREAD: {
                struct sigevent sev = { .sigev_notify = SIGEV_THREAD, .sigev_notify_function = on_posix_thread };
                struct itimerspec its = { .it_value = rel };
                timer_t t;
                uint64_t one;
                thread_woke_fd = eventfd(0, EFD_CLOEXEC);
                if (thread_woke_fd < 0 || timer_create(CLOCK_MONOTONIC, &sev, &t) < 0 ||
                    timer_settime(t, 0, &its, NULL) < 0)
                        _exit(4);
                write_all(child_rep_fd, &m, sizeof(m));
                if (read(thread_woke_fd, &one, sizeof(one)) != sizeof(one))
                        _exit(5);
                woke = thread_woke_ns;
                return (int64_t) (woke - target);
        }
        default:
                _exit(6);
        }
        woke = mono_ns();
        if (r != 0)
                _exit(5);
        return (int64_t) (woke - target);
}

typedef struct ChildArgs {
        SlackKind kind;
        uint64_t due_ns;
        int ctl_fd;
} ChildArgs;

static void *new_thread_main(void *p) {
        ChildArgs *a = p;
        ProbeResult res = { .late_ns = probe_arm_and_wait(a->kind, a->due_ns) };
        write_all(child_rep_fd, &res, sizeof(res));
        return NULL;
}

/* The child: says it is ready (its pid), waits for "go", then arms. */
_noreturn_ static void probe_child(const ChildArgs *a) {
        ProbeResult res = {};
        pid_t pid = getpid();
        char go;

        if (a->kind == SLACK_KIND_RT_FIFO_NANOSLEEP || a->kind == SLACK_KIND_RT_FIFO_FUTEX ||
            a->kind == SLACK_KIND_RT_RR_POLL) {
                struct sched_param sp = { .sched_priority = 1 };
                int policy = a->kind == SLACK_KIND_RT_RR_POLL ? SCHED_RR : SCHED_FIFO;
                if (sched_setscheduler(0, policy, &sp) < 0) {
                        ProbeMessage m = { .error = -errno };
                        write_all(child_rep_fd, &pid, sizeof(pid));
                        write_all(child_rep_fd, &m, sizeof(m));
                        _exit(0);
                }
        }
        write_all(child_rep_fd, &pid, sizeof(pid));
        if (read(a->ctl_fd, &go, 1) != 1)
                _exit(2);
        if (a->kind == SLACK_KIND_NEW_THREAD) {
                pthread_t t;
                if (pthread_create(&t, NULL, new_thread_main, (void *) a) != 0)
                        _exit(4);
                pthread_join(t, NULL);
                _exit(0);
        }
        if (a->kind == SLACK_KIND_NEW_PROCESS) {
                pid_t c = fork();
                if (c < 0)
                        _exit(4);
                if (c == 0)
                        new_thread_main((void *) a), _exit(0);
                (void) waitpid(c, NULL, 0);
                _exit(0);
        }
        res.late_ns = probe_arm_and_wait(a->kind, a->due_ns);
        write_all(child_rep_fd, &res, sizeof(res));
        _exit(0);
}

static int read_bounded(int fd, void *p, size_t n, usec_t bound) {
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + bound;
        size_t got = 0;

        while (got < n) {
                struct pollfd pfd = { .fd = fd, .events = POLLIN };
                int r = poll(&pfd, 1, deadline_poll_timeout(deadline));
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return negative_errno();
                if (r == 0)
                        return -ETIMEDOUT;
                ssize_t k = read(fd, (char *) p + got, n - got);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return negative_errno();
                if (k == 0)
                        return -EPIPE;
                got += (size_t) k;
        }
        return 0;
}

void slack_probe_stop(SlackProbe *p) {
        if (p->pid > 0) {
                /* Its own process group: a forked sleeper goes with it. */
                (void) kill(-p->pid, SIGKILL);
                (void) waitpid(p->pid, NULL, 0);
        }
        p->pid = 0;
        p->ctl_fd = safe_close(p->ctl_fd);
        p->rep_fd = safe_close(p->rep_fd);
}

int slack_probe_start(SlackKind kind, uint64_t due_ns, SlackProbe *ret) {
        int ctl[2], rep[2];

        if (kind < 0 || kind >= _SLACK_KIND_MAX)
                return -EINVAL;
        if (pipe2(ctl, O_CLOEXEC) < 0)
                return negative_errno();
        if (pipe2(rep, O_CLOEXEC) < 0) {
                int r = negative_errno();
                safe_close(ctl[0]);
                safe_close(ctl[1]);
                return r;
        }
        pid_t pid = fork();
        if (pid < 0) {
                int r = negative_errno();
                safe_close(ctl[0]);
                safe_close(ctl[1]);
                safe_close(rep[0]);
                safe_close(rep[1]);
                return r;
        }
        if (pid == 0) {
                (void) setpgid(0, 0);
                close(ctl[1]);
                close(rep[0]);
                child_rep_fd = rep[1];
                ChildArgs a = { .kind = kind, .due_ns = due_ns, .ctl_fd = ctl[0] };
                probe_child(&a);
        }
        (void) setpgid(pid, pid);
        safe_close(ctl[0]);
        safe_close(rep[1]);
        SlackProbe p = { .kind = kind, .pid = pid, .ctl_fd = ctl[1], .rep_fd = rep[0] };
        pid_t said;
        int r = read_bounded(p.rep_fd, &said, sizeof(said), 5 * USEC_PER_SEC);
        if (r < 0) {
                slack_probe_stop(&p);
                return r;
        }
        *ret = p;
        return 0;
}

int slack_probe_set(SlackProbe *p, uint64_t ns, uint64_t *ret_effective) {
        _cleanup_free_ pid_t *tids = NULL;
        uint64_t eff = 0;
        size_t n = 0;
        int r;

        /* Every thread, as the slack strategy does. */
        r = proc_list_tids(p->pid, &tids, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                r = slack_set(tids[i], ns, i == 0 ? &eff : NULL);
                if (r < 0 && r != -ESRCH && r != -ENOENT)
                        return r;
        }
        if (ret_effective)
                *ret_effective = eff;
        return 0;
}

int slack_probe_go(SlackProbe *p, uint64_t *ret_target_ns, uint64_t *ret_own_slack_ns, pid_t *ret_tid) {
        ProbeMessage m;
        int r;

        if (write(p->ctl_fd, "g", 1) != 1)
                return negative_errno();
        r = read_bounded(p->rep_fd, &m, sizeof(m), 5 * USEC_PER_SEC);
        if (r < 0)
                return r;
        if (m.error < 0)
                return m.error;
        if (ret_target_ns)
                *ret_target_ns = m.target_ns;
        if (ret_own_slack_ns)
                *ret_own_slack_ns = m.own_slack_ns;
        if (ret_tid)
                *ret_tid = m.tid;
        return 0;
}

int slack_probe_wait(SlackProbe *p, usec_t bound, int64_t *ret_late_ns) {
        ProbeResult res;
        int r = read_bounded(p->rep_fd, &res, sizeof(res), bound);
        if (r < 0)
                return r;
        *ret_late_ns = res.late_ns;
        return 0;
}

/* One pass over /proc/timer_list: the timer whose soft expiry, on the
 * CLOCK_MONOTONIC scale, is nearest at or after target within window. */
static int timer_list_find(uint64_t target, uint64_t window, uint64_t *ret_soft, uint64_t *ret_hard) {
        _cleanup_free_ char *text = NULL;
        uint64_t best_soft = 0, best_hard = 0;
        int64_t offset = 0;
        bool found = false;
        int r;

        r = read_full_fileat(AT_FDCWD, "/proc/timer_list", &text, NULL);
        if (r < 0)
                return r;
        for (char *line = text, *next; line && *line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                long long off;
                unsigned long long soft, hard;
                if (sscanf(line, " .offset: %lld nsecs", &off) == 1)
                        offset = off;
                else if (sscanf(line, " # expires at %llu-%llu nsecs", &soft, &hard) == 2) {
                        /* A base's times are its clock's: bring them to CLOCK_MONOTONIC.
                         * The hard expiry may be saturated at KTIME_MAX: keep it. */
                        uint64_t s = (uint64_t) ((int64_t) soft - offset);
                        uint64_t h = hard >= (unsigned long long) INT64_MAX ? (uint64_t) INT64_MAX
                                                                            : (uint64_t) ((int64_t) hard - offset);
                        if (s >= target && s - target <= window && (!found || s < best_soft)) {
                                best_soft = s;
                                best_hard = h;
                                found = true;
                        }
                }
        }
        if (!found)
                return -ENOENT;
        *ret_soft = best_soft;
        *ret_hard = best_hard;
        return 0;
}

int slack_probe_range(pid_t tid, uint64_t target_ns, usec_t bound, uint64_t *ret_range_ns) {
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + bound;
        uint64_t soft, hard;
        ProcStat st;
        int r;

        /* The child reports just before the call that arms: until its thread
         * sleeps, a timer of another task could be taken for its own. */
        for (;;) {
                r = proc_get_stat(tid, &st);
                if (r < 0)
                        return r;
                if (st.state == 'S')
                        break;
                if (now_usec(CLOCK_MONOTONIC) >= deadline)
                        return -ETIMEDOUT;
                (void) poll(NULL, 0, 1);
        }

        /* A relative timer's soft expiry is the kernel's "now" plus the
         * timeout, a little after the child's; 20 ms covers a preemption
         * between the two. */
        r = timer_list_find(target_ns, 20 * 1000000, &soft, &hard);
        if (r < 0)
                return r;
        *ret_range_ns = hard == (uint64_t) INT64_MAX ? UINT64_MAX : hard - soft;
        return 0;
}

/* The bench mode. */

typedef struct KindRow {
        int error;
        uint64_t reads_back, own;      /* after the set: what /proc says, and the arming thread's own */
        uint64_t range_after, range_before, range_max;
        uint64_t range_restored;       /* armed under S, then slack 0 (the default) written */
        double late_ms, late_before_ms, late_max_ms; /* NAN: none in the bound */
} KindRow;

static const char *fmt_ns(char *buf, size_t n, uint64_t ns) {
        if (ns == UINT64_MAX)
                snprintf(buf, n, "KTIME_MAX");
        else if (ns >= 1000000000 && ns % 1000000 == 0)
                snprintf(buf, n, "%.3g s", (double) ns / 1e9);
        else if (ns >= 1000000)
                snprintf(buf, n, "%.3g ms", (double) ns / 1e6);
        else
                snprintf(buf, n, "%" PRIu64 " us", ns / 1000);
        return buf;
}

/* One sample. before: arm first, then set the slack. ret_restored (may be
 * NULL): armed under the slack, the range once 0 was written after. */
static int run_sample(SlackKind k, uint64_t due_ns, uint64_t slack_ns, bool before, usec_t wait_bound, KindRow *row,
                      uint64_t *ret_range, double *ret_late_ms, uint64_t *ret_restored) {
        SlackProbe p = { .ctl_fd = -EBADF, .rep_fd = -EBADF };
        uint64_t target, own, range, eff;
        pid_t tid;
        int64_t late;
        int r;

        r = slack_probe_start(k, due_ns, &p);
        if (r < 0)
                return r;
        if (!before) {
                r = slack_probe_set(&p, slack_ns, &eff);
                if (r < 0)
                        goto out;
                row->reads_back = eff;
        }
        r = slack_probe_go(&p, &target, &own, &tid);
        if (r < 0)
                goto out;
        if (!before)
                row->own = own;
        r = slack_probe_range(tid, target, 500 * USEC_PER_MSEC, &range);
        if (r < 0)
                goto out;
        if (before) {
                r = slack_probe_set(&p, slack_ns, NULL);
                if (r < 0)
                        goto out;
                r = slack_probe_range(tid, target, 500 * USEC_PER_MSEC, &range);
                if (r < 0)
                        goto out;
        }
        *ret_range = range;
        if (ret_restored) {
                r = slack_probe_set(&p, 0, NULL);
                if (r >= 0)
                        r = slack_probe_range(tid, target, 500 * USEC_PER_MSEC, ret_restored);
                if (r < 0)
                        goto out;
        }
        r = slack_probe_wait(&p, wait_bound, &late);
        if (r == -ETIMEDOUT) {
                *ret_late_ms = NAN;
                r = 0;
        } else if (r >= 0)
                *ret_late_ms = (double) late / 1e6;
out:
        slack_probe_stop(&p);
        return r;
}

int bench_slack_kinds(unsigned samples, usec_t slack, const volatile sig_atomic_t *stop) {
        const uint64_t due_ns = 200 * 1000000ULL, slack_ns = slack * 1000;
        uint64_t max;
        char b1[32], b2[32], b3[32], b4[32], b5[32];
        int r;

        r = slack_probe_max(&max);
        if (r < 0)
                return log_error_errno(r, "Failed to find the largest timer slack: %m");
        if (access("/proc/timer_list", R_OK) < 0)
                return log_error_errno(negative_errno(), "Cannot read /proc/timer_list: %m");

        printf("Timer slack per wakeup kind: a timer due in %s, slack S = %s set from outside (/proc/TID/timerslack_ns),"
               " %u samples\n",
               fmt_ns(b1, sizeof(b1), due_ns), fmt_ns(b2, sizeof(b2), slack_ns), samples);
        printf("range = hard - soft expiry in /proc/timer_list; late = woke after the due time (median); max = %s\n\n",
               max == UINT64_MAX ? "u64 max" : fmt_ns(b1, sizeof(b1), max));
        printf("%-26s %9s %9s %9s %9s %9s %9s %9s %9s\n", "kind", "reads S", "own", "range", "late", "restored",
               "armed 1st", "at max", "late max");
        for (SlackKind k = 0; k < _SLACK_KIND_MAX; k++) {
                KindRow row = {};
                double late[MAX_SLACK_SAMPLES];
                uint64_t range = 0;
                unsigned n = 0;

                if (*stop)
                        return log_error_errno(-EINTR, "Interrupted.");
                for (unsigned i = 0; i < samples && r >= 0; i++) {
                        r = run_sample(k, due_ns, slack_ns, false, due_ns / 1000 + slack + USEC_PER_SEC, &row,
                                       &range, &late[n], i == 0 ? &row.range_restored : NULL);
                        if (r >= 0 && !isnan(late[n]))
                                n++;
                }
                row.range_after = range;
                row.late_ms = n > 0 ? stats_median(late, n) : NAN;
                bool new_task = k == SLACK_KIND_NEW_THREAD || k == SLACK_KIND_NEW_PROCESS;
                if (r >= 0 && !new_task)
                        r = run_sample(k, due_ns, slack_ns, true, due_ns / 1000 + slack + USEC_PER_SEC, &row,
                                       &row.range_before, &row.late_before_ms, NULL);
                /* At the largest slack a timer may never fire on an idle CPU:
                 * wait one second past its due time. */
                KindRow spare = {};
                if (r >= 0)
                        r = run_sample(k, due_ns, max, false, due_ns / 1000 + USEC_PER_SEC, &spare, &row.range_max,
                                       &row.late_max_ms, NULL);
                if (r < 0) {
                        printf("%-26s n/a: %s\n", slack_kind_to_string(k), strerror(-r));
                        r = 0;
                        continue;
                }
                char late_s[32], late_max_s[32], b6[32];
                snprintf(late_s, sizeof(late_s), isnan(row.late_ms) ? ">bound" : "%.1f ms", row.late_ms);
                snprintf(late_max_s, sizeof(late_max_s), isnan(row.late_max_ms) ? ">1 s" : "%.1f ms", row.late_max_ms);
                printf("%-26s %9s %9s %9s %9s %9s %9s %9s %9s\n", slack_kind_to_string(k),
                       fmt_ns(b1, sizeof(b1), row.reads_back), fmt_ns(b2, sizeof(b2), row.own),
                       fmt_ns(b3, sizeof(b3), row.range_after), late_s, fmt_ns(b6, sizeof(b6), row.range_restored),
                       new_task ? "-" : fmt_ns(b4, sizeof(b4), row.range_before), fmt_ns(b5, sizeof(b5), row.range_max),
                       late_max_s);
                fflush(stdout);
        }
        printf("\nreads S: the thread's timerslack_ns after S was written; own: what the arming thread read\n"
               "itself (a new thread or process: inherited); restored: the range of a timer armed under S once 0\n"
               "(the default) was written; armed 1st: the range of a timer armed before S was written.\n");
        return 0;
}
