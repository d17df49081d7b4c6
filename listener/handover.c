/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Handing the CPU to the service a thaw wakes.
 *
 * The kernel wakes a thawed task on the CPU of the task that thawed it, and
 * with EEVDF the listener, which runs rarely, keeps that CPU through the
 * bookkeeping after the write (the record timer, dropping socket
 * duplicates, reading on): traced, a woken D-Bus service waited 30-50 us
 * behind it before it could read the call. So the listener switches itself
 * to SCHED_IDLE just before the write: the kernel preempts an idle-class
 * task for any normal one it wakes (check_preempt_wakeup_fair), so the
 * service runs first and the bookkeeping after it. A one-shot defer source
 * switches back in the loop's next iteration, before the listener sleeps:
 * the next event finds it in its own class again.
 *
 * The price: until then the bookkeeping, and an event that comes
 * meanwhile, wait for the CPU. On a CPU with an idle sibling the balancer
 * moves the listener at the busy CPU's next tick; with every CPU busy, an
 * idle-class task can wait a scheduling period. Switching back needs
 * CAP_SYS_NICE (the unit grants it) or an RLIMIT_NICE that allows the
 * current nice value: without either, the listener would stay idle class
 * for good, so it does not switch at all. */
#include <linux/capability.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "listener.h"
#include "log.h"

static bool has_cap_sys_nice(void) {
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
        struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {};

        if (syscall(SYS_capget, &h, d) < 0)
                return false;
        return d[CAP_TO_INDEX(CAP_SYS_NICE)].effective & CAP_TO_MASK(CAP_SYS_NICE);
}

/* Whether the kernel would let an idle-class task return to its nice value
 * (can_nice()): a nice value n needs RLIMIT_NICE >= 20 - n. */
static bool may_leave_idle_class(void) {
        struct rlimit rl;

        errno = 0;
        int nice_now = getpriority(PRIO_PROCESS, 0);
        if (errno != 0)
                return false;
        if (has_cap_sys_nice())
                return true;
        return getrlimit(RLIMIT_NICE, &rl) == 0 && (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= (rlim_t) (20 - nice_now));
}

static int on_handover_end(sd_event_source *s, void *userdata) {
        Listener *l = userdata;

        if (sched_setscheduler(0, l->own_policy, &(struct sched_param) { 0 }) < 0) {
                /* Not expected (checked at start); stop switching. */
                log_error_errno(-errno, "Cannot leave SCHED_IDLE after a thaw: %m");
                l->handover = false;
        }
        return 0;
}

void listener_setup_handover(Listener *l) {
        int policy = sched_getscheduler(0);

        l->handover = false;
        /* Only from the normal classes: a listener its unit made real-time
         * keeps that, and the service cannot preempt it anyway. */
        if (policy != SCHED_OTHER && policy != SCHED_BATCH) {
                log_info("Scheduling policy %d: the listener keeps the CPU across a thaw.", policy);
                return;
        }
        if (!may_leave_idle_class()) {
                log_notice("Neither CAP_SYS_NICE nor an RLIMIT_NICE for this nice value: the listener keeps the CPU "
                           "across a thaw, and woken services wait for its bookkeeping.");
                return;
        }
        if (sd_event_add_defer(l->event, &l->handover_source, on_handover_end, l) < 0 ||
            sd_event_source_set_enabled(l->handover_source, SD_EVENT_OFF) < 0) {
                l->handover_source = sd_event_source_disable_unref(l->handover_source);
                return;
        }
        l->own_policy = policy;
        l->handover = true;
}

void listener_handover_begin(Listener *l) {
        int enabled = SD_EVENT_OFF;

        /* Not when the event's sender waits for the listener's own answer
         * (Push): stepping aside would put that answer, and so the sender's
         * next step, behind the woken service (measured: push's added p50
         * went from about 0 to 30-80 us). */
        if (!l->handover || l->keep_cpu ||
            (sd_event_source_get_enabled(l->handover_source, &enabled) >= 0 && enabled != SD_EVENT_OFF))
                return; /* off, or already handed over in this iteration */
        if (sched_setscheduler(0, SCHED_IDLE, &(struct sched_param) { 0 }) < 0)
                return;
        if (sd_event_source_set_enabled(l->handover_source, SD_EVENT_ONESHOT) < 0) {
                (void) sched_setscheduler(0, l->own_policy, &(struct sched_param) { 0 });
                return;
        }
        l->stats.handovers++;
}
