/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <sys/types.h>

/* The pidfd system calls, wrapped once (glibc before 2.36 has none). Both
 * return a new descriptor, close-on-exec as the kernel makes every pidfd,
 * or a negative errno. */

/* pidfd_open(2): a descriptor of process pid; -ESRCH if there is none. */
int pidfd_of_pid(pid_t pid);
/* pidfd_getfd(2): a duplicate of descriptor fd of the process behind
 * pidfd (ptrace access to it needed: -EPERM otherwise). */
int pidfd_dup_fd(int pidfd, int fd);
