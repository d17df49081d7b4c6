/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* File-lock waits from /proc/locks, for the deadlock guard: a frozen process
 * must not hold a lock that a running process is blocked on. In /proc/locks a
 * blocked request is listed as "N: -> TYPE ..." under the lock it waits for. */

typedef struct LockWait {
        pid_t holder;   /* -1 for OFD locks: owned by an open file, not a pid */
        pid_t waiter;
        char type[16];  /* FLOCK, POSIX, OFDLCK, LEASE, ... */
} LockWait;

/* Parses a /proc/locks-format file. Returns 0 and an array (caller frees). */
int locks_read_waits(const char *path, LockWait **ret, size_t *ret_n);

/* Whether any of the given threads (TIDs, as cgroup.threads lists them) is
 * blocked in a lock request: flock() or fcntl(F_SETLKW / F_OFD_SETLKW), by
 * its wait channel. Reading /proc/locks costs an RCU grace period (the kernel
 * takes file_rwsem for writing); this check lets the deadlock guard skip it
 * when nobody waits. Threads that vanish count as not waiting, and kernel
 * threads are not asked (see locks_kernel_threads()). */
int locks_any_blocked_waiter(const pid_t *tids, size_t n, bool *ret);

/* The kernel threads: kthreadd (PID 2, checked by its PF_KTHREAD flag, so
 * none inside a PID namespace) and its children, sorted. Empty, not an
 * error, where they cannot be read. */
int locks_kernel_threads(pid_t **ret, size_t *ret_n);
