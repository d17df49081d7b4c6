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

                if (n == cap) {
                        size_t nc = cap ? cap * 2 : 8;
                        LockWait *nw = realloc(waits, nc * sizeof(LockWait));
                        if (!nw)
                                return -ENOMEM;
                        waits = nw;
                        cap = nc;
                }
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
        char path[300], buf[128];
        ssize_t n;
        int fd;

        /* wchan, not syscall: reading /proc/TID/syscall of a running task
         * waits for it to sleep, a tick at a time. */
        snprintf(path, sizeof(path), "%s/wchan", tid);
        fd = openat(task_dir_fd, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
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
        return x < y ? -1 : x > y;
}

int locks_any_blocked_waiter(const pid_t *skip, size_t n_skip, bool *ret) {
        _cleanup_closedir_ DIR *proc = opendir("/proc");
        struct dirent *de;

        if (!proc)
                return negative_errno();
        while ((de = readdir(proc))) {
                _cleanup_closedir_ DIR *tasks = NULL;
                struct dirent *te;
                char path[300];

                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                        continue;
                pid_t pid = (pid_t) atoi(de->d_name);
                if (skip && bsearch(&pid, skip, n_skip, sizeof(pid_t), cmp_pid))
                        continue;
                snprintf(path, sizeof(path), "%s/task", de->d_name);
                if (opendir_at(dirfd(proc), path, &tasks) < 0)
                        continue; /* gone */
                while ((te = readdir(tasks)))
                        if (te->d_name[0] >= '1' && te->d_name[0] <= '9' &&
                            task_blocked_on_lock(dirfd(tasks), te->d_name)) {
                                *ret = true;
                                return 0;
                        }
        }
        *ret = false;
        return 0;
}
