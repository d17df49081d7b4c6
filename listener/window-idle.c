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

/* The threads one look reads at most, over all of a window's units: a
 * unit of more (a user's, say, that a rule's name matches) is taken as
 * busy, its window lasting For=, so that no unit makes a look cost the
 * loop more than this many small reads. */
#define LOOK_MAX_THREADS 4096

static bool thread_busy(pid_t tid) {
        ProcStat st;

        /* Gone since the list was read: not work. */
        if (proc_get_stat(tid, &st) < 0)
                return false;
        return st.state == 'R' || st.state == 'D';
}

bool listener_leaves_idle(Listener *l, char **leaves) {
        size_t budget = LOOK_MAX_THREADS;

        for (char **x = leaves; x && *x; x++) {
                _cleanup_close_ int fd = -EBADF;
                _cleanup_free_ char *text = NULL;
                int r;

                if (cgroup_open(l->m.root_fd, *x, &fd) < 0)
                        continue; /* gone */
                /* At most budget lines of "TID\n" (pid_max is below 2^22: 8 bytes). */
                r = read_full_fileat_max(fd, "cgroup.threads", budget * 8, &text, NULL);
                if (r == -EFBIG)
                        return false;
                if (r < 0)
                        continue;
                char *p = text;
                for (char *line; (line = strsep(&p, "\n"));) {
                        int tid;
                        if (!*line || parse_pid(line, &tid) < 0)
                                continue;
                        if (budget-- == 0 || thread_busy(tid))
                                return false;
                }
        }
        return true;
}
