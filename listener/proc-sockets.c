/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The sockets of a cgroup's processes, duplicated into the listener
 * (pidfd_open + pidfd_getfd): what Event=socket watches (sockets.c) and
 * where a frozen process's bus connections are found (bus-peek.c). */
#include <dirent.h>
#include <fcntl.h>

#include "cgroup.h"
#include "fileio.h"
#include "listener.h"
#include "pidfd.h"

int listener_for_each_socket(Listener *l, const char *cgroup, int (*fn)(const SocketRef *s, void *userdata),
                             void *userdata) {
        _cleanup_close_ int cg = -EBADF;
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;
        int r;

        r = cgroup_open(l->m.root_fd, cgroup, &cg);
        if (r >= 0)
                r = cgroup_list_pids(cg, false, &pids, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                _cleanup_closedir_ DIR *d = NULL;
                _cleanup_close_ int pidfd = pidfd_of_pid(pids[i]);
                char path[64];
                struct dirent *de;

                if (pidfd < 0)
                        continue; /* gone */
                snprintf(path, sizeof(path), "/proc/%d/fd", (int) pids[i]);
                if (opendir_at(AT_FDCWD, path, &d) < 0)
                        continue;
                while ((de = readdir(d))) {
                        char target[64];
                        int fd;
                        ssize_t k;

                        if (de->d_name[0] < '0' || de->d_name[0] > '9')
                                continue;
                        if (streq(de->d_name, "1") || streq(de->d_name, "2"))
                                continue;
                        k = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1);
                        if (k <= 0)
                                continue;
                        target[k] = 0;
                        if (!strneq(target, "socket:", 7))
                                continue;
                        fd = pidfd_dup_fd(pidfd, atoi(de->d_name));
                        if (fd < 0)
                                continue;
                        r = fn(&(SocketRef) { .pid = pids[i], .pidfd = pidfd, .fd = atoi(de->d_name), .dup = fd },
                               userdata);
                        if (r <= 0)
                                safe_close(fd);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}
