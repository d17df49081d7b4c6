/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>

#include "fileio.h"
#include "macro.h"
#include "slack.h"

int slack_get(pid_t tid, uint64_t *ret) {
        char path[64];

        snprintf(path, sizeof(path), "/proc/%d/timerslack_ns", (int) tid);
        return read_u64at(AT_FDCWD, path, ret);
}

int slack_set(pid_t tid, uint64_t ns, uint64_t *ret_effective) {
        char path[64], val[32];
        int r;

        snprintf(path, sizeof(path), "/proc/%d/timerslack_ns", (int) tid);
        snprintf(val, sizeof(val), "%" PRIu64, ns);
        r = write_stringat(AT_FDCWD, path, val);
        if (r < 0)
                return r;
        if (ret_effective)
                return read_u64at(AT_FDCWD, path, ret_effective);
        return 0;
}

int slack_probe_max(uint64_t *ret) {
        /* Largest first: kernels since 4.6 parse a u64 and store it as is. */
        static const uint64_t candidates[] = { UINT64_MAX, INT64_MAX, UINT32_MAX, 1000000000ULL };
        pid_t self = gettid();
        uint64_t old, got;
        int r;

        r = slack_get(self, &old);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(candidates); i++) {
                r = slack_set(self, candidates[i], &got);
                if (r >= 0 && got == candidates[i]) {
                        (void) slack_set(self, old, NULL);
                        *ret = got;
                        return 0;
                }
        }
        (void) slack_set(self, old, NULL);
        return r < 0 ? r : -ERANGE;
}
