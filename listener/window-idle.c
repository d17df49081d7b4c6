/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Whether a window's work is done (EndWhenIdle=): every thread of its
 * units asleep. A woken server reads its request, answers and goes back to
 * sleep in poll or epoll_wait within a millisecond or two; a thread still
 * running, runnable or in an uninterruptible wait (a write to disk, a
 * fault) is work under way. A thread asleep waiting for a reply from the
 * network looks done: the rule's socket or D-Bus events thaw its unit when
 * the reply comes, as they thaw any frozen unit. The kernel has no event
 * for "a cgroup went idle" (its PSI triggers fire on pressure, not on its
 * absence), so the look is one read of cgroup.threads and of each
 * thread's /proc/TID/stat, at times windows.c sets. */
#include <fcntl.h>

#include "cgroup.h"
#include "listener.h"
#include "proc.h"

static bool thread_busy(pid_t tid) {
        ProcStat st;

        /* Gone since the list was read: not work. */
        if (proc_get_stat(tid, &st) < 0)
                return false;
        return st.state == 'R' || st.state == 'D';
}

bool listener_leaves_idle(Listener *l, char **leaves) {
        for (char **x = leaves; x && *x; x++) {
                _cleanup_close_ int fd = -EBADF;
                _cleanup_free_ pid_t *tids = NULL;
                size_t n = 0;

                if (cgroup_open(l->m.root_fd, *x, &fd) < 0 || cgroup_list_pids(fd, true, &tids, &n) < 0)
                        continue;
                for (size_t i = 0; i < n; i++)
                        if (thread_busy(tids[i]))
                                return false;
        }
        return true;
}
