/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include <sys/types.h>

/* What /proc says of a process or thread. A tid works wherever a pid does:
 * /proc/TID/ is reachable for every thread although not listed. */

typedef struct ProcStat {
        char state;          /* R, S, D, T, t, Z, ... */
        pid_t ppid;
        uint64_t starttime;  /* clock ticks after boot: tells a reused pid apart */
} ProcStat;

/* -ENOENT (or -ESRCH) once the process is gone. */
int proc_get_stat(pid_t pid, ProcStat *ret);
int proc_get_comm(pid_t pid, char **ret);
/* The kernel function the task sleeps in ("0" or "" when running). */
int proc_get_wchan(pid_t pid, char **ret);
/* The thread ids of a process, from /proc/PID/task. */
int proc_list_tids(pid_t pid, pid_t **ret, size_t *ret_n);
