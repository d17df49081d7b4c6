/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "time-util.h"

usec_t now_usec(clockid_t clock) {
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (usec_t) ts.tv_sec * USEC_PER_SEC + (usec_t) ts.tv_nsec / NSEC_PER_USEC;
}

int deadline_poll_timeout(usec_t deadline) {
        usec_t n;

        if (deadline == USEC_INFINITY)
                return -1;
        n = now_usec(CLOCK_MONOTONIC);
        if (n >= deadline)
                return 0;
        usec_t ms = (deadline - n + USEC_PER_MSEC - 1) / USEC_PER_MSEC;
        return ms > 1000000 ? 1000000 : (int) ms;
}

static const struct {
        const char *suffix;
        usec_t usec;
} duration_units[] = {
        /* Longest suffix first among those sharing a prefix ("ms" before "m"). */
        { "usec", 1 },
        { "us", 1 },
        { "msec", USEC_PER_MSEC },
        { "ms", USEC_PER_MSEC },
        { "seconds", USEC_PER_SEC },
        { "second", USEC_PER_SEC },
        { "sec", USEC_PER_SEC },
        { "s", USEC_PER_SEC },
        { "minutes", 60 * USEC_PER_SEC },
        { "minute", 60 * USEC_PER_SEC },
        { "min", 60 * USEC_PER_SEC },
        { "m", 60 * USEC_PER_SEC },
        { "hours", 3600 * USEC_PER_SEC },
        { "hour", 3600 * USEC_PER_SEC },
        { "h", 3600 * USEC_PER_SEC },
};

int parse_duration(const char *s, usec_t *ret) {
        usec_t total = 0;
        bool any = false;

        if (!s)
                return -EINVAL;

        for (const char *p = s;;) {
                char *end;
                unsigned long long v;
                usec_t mult = USEC_PER_SEC;
                size_t n = 0;

                p += strspn(p, " \t");
                if (!*p)
                        break;
                if (!isdigit((unsigned char) *p))
                        return -EINVAL;
                errno = 0;
                v = strtoull(p, &end, 10);
                if (errno == ERANGE)
                        return -ERANGE;
                p = end;
                p += strspn(p, " \t");
                for (size_t i = 0; i < ELEMENTSOF(duration_units); i++) {
                        size_t l = strlen(duration_units[i].suffix);
                        if (strneq(p, duration_units[i].suffix, l) && !isalpha((unsigned char) p[l])) {
                                mult = duration_units[i].usec;
                                n = l;
                                break;
                        }
                }
                if (n == 0 && isalpha((unsigned char) *p))
                        return -EINVAL;
                p += n;
                if (v > (UINT64_MAX - total) / mult)
                        return -ERANGE;
                total += v * mult;
                any = true;
        }

        if (!any)
                return -EINVAL;
        *ret = total;
        return 0;
}

const char *format_duration(char *buf, size_t size, usec_t t) {
        if (t == USEC_INFINITY)
                snprintf(buf, size, "infinity");
        else if (t != 0 && t % (3600 * USEC_PER_SEC) == 0)
                snprintf(buf, size, "%lluh", (unsigned long long) (t / (3600 * USEC_PER_SEC)));
        else if (t != 0 && t % (60 * USEC_PER_SEC) == 0)
                snprintf(buf, size, "%llumin", (unsigned long long) (t / (60 * USEC_PER_SEC)));
        else if (t % USEC_PER_SEC == 0)
                snprintf(buf, size, "%llus", (unsigned long long) (t / USEC_PER_SEC));
        else if (t % USEC_PER_MSEC == 0)
                snprintf(buf, size, "%llums", (unsigned long long) (t / USEC_PER_MSEC));
        else
                snprintf(buf, size, "%lluus", (unsigned long long) t);
        return buf;
}
