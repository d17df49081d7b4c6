/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include <sys/types.h>

/* Timer slack per thread. The kernel keeps timer_slack_ns per task (thread);
 * /proc/PID/task/TID/ has no timerslack_ns file, but /proc/TID/timerslack_ns
 * reaches the thread itself, so every call here takes a tid.
 * Writing 0 makes the kernel use the thread's default slack; real-time threads
 * always get 0. Setting another process's slack needs CAP_SYS_NICE. */

#define SLACK_KERNEL_DEFAULT_NS UINT64_C(50000)

int slack_get(pid_t tid, uint64_t *ret);
/* Writes ns; ret_effective (may be NULL) is what the kernel then reports. */
int slack_set(pid_t tid, uint64_t ns, uint64_t *ret_effective);
/* The largest value the kernel takes, found by writing candidates to this
 * thread's own slack and reading back; this thread's slack is restored. */
int slack_probe_max(uint64_t *ret);
