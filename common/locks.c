/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>

#include "fileio.h"
#include "locks.h"
#include "macro.h"

int locks_read_waits(const char *path, LockWait **ret, size_t *ret_n) {
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        _cleanup_free_ LockWait *waits = NULL;
        size_t n = 0, cap = 0, lcap = 0;
        pid_t holder = 0;
        unsigned long holder_id = 0;

        f = fopen(path, "re");
        if (!f)
                return negative_errno();

        while (getline(&line, &lcap, f) > 0) {
                unsigned long id;
                char type[16];
                int pid, consumed = 0;
                bool blocked;

                if (sscanf(line, "%lu:%n", &id, &consumed) != 1)
                        continue;
                char *p = line + consumed;
                p += strspn(p, " ");
                blocked = strneq(p, "->", 2);
                if (blocked)
                        p += 2;
                /* TYPE ADVISORY|MANDATORY|... READ|WRITE|... PID dev:ino start end */
                if (sscanf(p, " %15s %*s %*s %d", type, &pid) != 2)
                        continue;

                if (!blocked) {
                        holder = pid;
                        holder_id = id;
                        continue;
                }
                if (id != holder_id)
                        continue; /* a waiter whose lock line we did not see */

                if (!GROW_ARRAY(waits, cap, n + 1))
                        return -ENOMEM;
                waits[n] = (LockWait) { .holder = holder, .waiter = pid };
                snprintf(waits[n].type, sizeof(waits[n].type), "%s", type);
                n++;
        }

        *ret = TAKE_PTR(waits);
        *ret_n = n;
        return 0;
}

/* Where the kernel parks a blocked lock request: flock() and fcntl(F_SETLKW,
 * F_OFD_SETLKW) in 5.x-6.x, under the names inlining leaves visible. The
 * deadlock-guard tests run real flock and POSIX waits, so a kernel that names
 * them otherwise fails those tests instead of going unnoticed. */
static const char * const lock_wait_channels[] = {
        "locks_lock_inode_wait", "flock_lock_inode_wait", "posix_lock_inode_wait",
        "locks_lock_file_wait", "do_lock_file_wait", "fcntl_setlk", "fcntl_setlk64",
};

static bool task_blocked_on_lock(int task_dir_fd, const char *tid) {
        _cleanup_free_ char *buf = NULL;
        char path[300];

        /* wchan, not syscall: reading /proc/TID/syscall of a running task
         * waits for it to sleep, a tick at a time. */
        snprintf(path, sizeof(path), "%s/wchan", tid);
        if (read_full_fileat(task_dir_fd, path, &buf, NULL) < 0)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(lock_wait_channels); i++)
                if (streq(buf, lock_wait_channels[i]))
                        return true;
        return false;
}

int locks_any_blocked_waiter(const pid_t *tids, size_t n, bool *ret) {
        _cleanup_closedir_ DIR *proc = opendir("/proc");
        char tid[16];

        if (!proc)
                return negative_errno();
        /* Thread by thread (cgroup.threads lists them all): /proc/TID works
         * for every thread, so no process's task list or stat is read. */
        for (size_t i = 0; i < n; i++) {
                snprintf(tid, sizeof(tid), "%d", (int) tids[i]);
                if (task_blocked_on_lock(dirfd(proc), tid)) {
                        *ret = true;
                        return 0;
                }
        }
        *ret = false;
        return 0;
}
