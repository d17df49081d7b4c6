/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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

static bool task_blocked_on_lock(int proc_fd, pid_t tid) {
        _cleanup_close_ int fd = -EBADF;
        char path[32], buf[128];
        ssize_t n;

        /* wchan, not syscall: reading /proc/TID/syscall of a running task
         * waits for it to sleep, a tick at a time. One read into the stack:
         * a symbol name fits, and this runs for every thread outside. */
        snprintf(path, sizeof(path), "%d/wchan", (int) tid);
        fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return false;
        n = read(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return false;
        buf[n] = 0;
        for (size_t i = 0; i < ELEMENTSOF(lock_wait_channels); i++)
                if (streq(buf, lock_wait_channels[i]))
                        return true;
        return false;
}

static int cmp_pid(const void *a, const void *b) {
        pid_t x = *(const pid_t *) a, y = *(const pid_t *) b;
        return (x > y) - (x < y);
}

/* PF_KTHREAD in /proc/PID/stat's flags (include/linux/sched.h). */
#define PF_KTHREAD_FLAG 0x00200000UL

int locks_kernel_threads(pid_t **ret, size_t *ret_n) {
        _cleanup_free_ char *stat = NULL, *children = NULL;
        _cleanup_free_ pid_t *pids = NULL;
        unsigned long flags;
        size_t n = 0, cap = 0;
        const char *p;

        *ret = NULL;
        *ret_n = 0;
        /* kthreadd is PID 2 only outside PID namespaces: ask its flags, so
         * that in a container an ordinary PID 2 is not taken for it. */
        if (read_full_fileat(AT_FDCWD, "/proc/2/stat", &stat, NULL) < 0)
                return 0;
        p = strrchr(stat, ')');
        if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1 || !(flags & PF_KTHREAD_FLAG))
                return 0;
        if (read_full_fileat(AT_FDCWD, "/proc/2/task/2/children", &children, NULL) < 0)
                return 0;
        if (!GROW_ARRAY(pids, cap, 1))
                return -ENOMEM;
        pids[n++] = 2;
        for (p = children; *p;) {
                char *end;
                long v = strtol(p, &end, 10);
                if (end == p)
                        break;
                if (!GROW_ARRAY(pids, cap, n + 1))
                        return -ENOMEM;
                pids[n++] = (pid_t) v;
                p = end;
        }
        qsort(pids, n, sizeof(pid_t), cmp_pid);
        *ret = TAKE_PTR(pids);
        *ret_n = n;
        return 0;
}

int locks_any_blocked_waiter(const pid_t *tids, size_t n, bool *ret) {
        _cleanup_close_ int proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_free_ pid_t *kthreads = NULL;
        size_t n_kthreads = 0;
        int r;

        if (proc_fd < 0)
                return negative_errno();
        /* Kernel threads (most of what the root cgroup holds) never sleep in
         * flock() or fcntl(): lockd and nfsd queue their lock requests
         * without blocking. One read of kthreadd's children spares a wait
         * channel read for each of them. */
        r = locks_kernel_threads(&kthreads, &n_kthreads);
        if (r < 0)
                return r;
        /* Thread by thread (cgroup.threads lists them all): /proc/TID works
         * for every thread, so no process's task list or stat is read. */
        for (size_t i = 0; i < n; i++) {
                if (n_kthreads > 0 && bsearch(&tids[i], kthreads, n_kthreads, sizeof(pid_t), cmp_pid))
                        continue;
                if (task_blocked_on_lock(proc_fd, tids[i])) {
                        *ret = true;
                        return 0;
                }
        }
        *ret = false;
        return 0;
}
