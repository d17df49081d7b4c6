/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pidfd.h"

int pidfd_of_pid(pid_t pid) {
        int fd = (int) syscall(SYS_pidfd_open, pid, 0);
        return fd < 0 ? -errno : fd;
}

int pidfd_dup_fd(int pidfd, int fd) {
        int r = (int) syscall(SYS_pidfd_getfd, pidfd, fd, 0);
        return r < 0 ? -errno : r;
}
