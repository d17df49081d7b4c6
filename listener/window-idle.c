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
#include <string.h>

#include "cgroup.h"
#include "fileio.h"
#include "listener.h"
#include "proc.h"

static bool thread_busy(pid_t tid) {
        ProcStat st;

        /* Gone since the list was read: not work. */
        if (proc_get_stat(tid, &st) < 0)
                return false;
        return st.state == 'R' || st.state == 'D';
}

bool listener_leaf_idle(Listener *l, const char *leaf, size_t *budget) {
        _cleanup_close_ int own = -EBADF;
        _cleanup_free_ char *text = NULL;
        CachedUnit *c = listener_cached_unit(l, leaf);
        int fd = c && c->fd >= 0 ? c->fd : -EBADF;
        int r;

        /* Each unit costs one of the budget, threads or none. */
        if (*budget == 0)
                return false;
        (*budget)--;
        if (fd < 0 && cgroup_open(l->m.root_fd, leaf, &own) >= 0)
                fd = own;
        if (fd < 0)
                return true; /* gone */
        /* At most budget lines of "TID\n" (pid_max is below 2^22: 8 bytes). */
        r = read_full_fileat_max(fd, "cgroup.threads", *budget * 8, &text, NULL);
        if (r == -EFBIG) {
                *budget = 0;
                return false;
        }
        if (r < 0)
                return true;
        char *p = text;
        for (char *line; (line = strsep(&p, "\n"));) {
                int tid;
                if (!*line || parse_pid(line, &tid) < 0)
                        continue;
                if (*budget == 0)
                        return false;
                (*budget)--;
                if (thread_busy(tid))
                        return false;
        }
        return true;
}
