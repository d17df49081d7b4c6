/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

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
