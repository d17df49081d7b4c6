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

/* systemd's time span units (systemd.time(7)): the same words mean the same
 * spans in standby.conf, rule files and on the command line. A month and a
 * year are systemd's averages (30.44 and 365.25 days). */
#define USEC_PER_MINUTE (60 * USEC_PER_SEC)
#define USEC_PER_HOUR (60 * USEC_PER_MINUTE)
#define USEC_PER_DAY (24 * USEC_PER_HOUR)
#define USEC_PER_WEEK (7 * USEC_PER_DAY)
#define USEC_PER_MONTH (2629800 * USEC_PER_SEC)
#define USEC_PER_YEAR (31557600 * USEC_PER_SEC)

static const struct {
        const char *suffix;
        usec_t usec;
} duration_units[] = {
        /* A suffix matches only whole ("m" never takes "ms" or "months"), and
         * the longest one sharing a prefix comes first. Case matters: "M" is
         * a month, "m" a minute, as in systemd. */
        { "usec", 1 },
        { "us", 1 },
        { "\xce\xbcs", 1 }, /* μs */
        { "msec", USEC_PER_MSEC },
        { "ms", USEC_PER_MSEC },
        { "seconds", USEC_PER_SEC },
        { "second", USEC_PER_SEC },
        { "sec", USEC_PER_SEC },
        { "s", USEC_PER_SEC },
        { "minutes", USEC_PER_MINUTE },
        { "minute", USEC_PER_MINUTE },
        { "min", USEC_PER_MINUTE },
        { "months", USEC_PER_MONTH },
        { "month", USEC_PER_MONTH },
        { "M", USEC_PER_MONTH },
        { "m", USEC_PER_MINUTE },
        { "hours", USEC_PER_HOUR },
        { "hour", USEC_PER_HOUR },
        { "hr", USEC_PER_HOUR },
        { "h", USEC_PER_HOUR },
        { "days", USEC_PER_DAY },
        { "day", USEC_PER_DAY },
        { "d", USEC_PER_DAY },
        { "weeks", USEC_PER_WEEK },
        { "week", USEC_PER_WEEK },
        { "w", USEC_PER_WEEK },
        { "years", USEC_PER_YEAR },
        { "year", USEC_PER_YEAR },
        { "y", USEC_PER_YEAR },
};

int parse_duration(const char *s, usec_t *ret) {
        usec_t total = 0;
        bool any = false;

        if (!s)
                return -EINVAL;

        for (const char *p = s;;) {
                char *end;
                unsigned long long v;
                usec_t mult = USEC_PER_SEC, frac = 0, frac_div = 1;
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
                /* "1.5h", as systemd reads it; digits past the 9th are read
                 * but not counted (at most 32 ms of a year). */
                if (*p == '.') {
                        p++;
                        if (!isdigit((unsigned char) *p))
                                return -EINVAL;
                        for (; isdigit((unsigned char) *p); p++)
                                if (frac_div < 1000000000) {
                                        frac = frac * 10 + (usec_t) (*p - '0');
                                        frac_div *= 10;
                                }
                }
                p += strspn(p, " \t");
                for (size_t i = 0; i < ELEMENTSOF(duration_units); i++) {
                        size_t l = strlen(duration_units[i].suffix);
                        if (strneq(p, duration_units[i].suffix, l) && !isalpha((unsigned char) p[l])) {
                                mult = duration_units[i].usec;
                                n = l;
                                break;
                        }
                }
                if (n == 0 && (isalpha((unsigned char) *p) || (unsigned char) *p >= 0x80))
                        return -EINVAL;
                p += n;
                if (v > (UINT64_MAX - total) / mult)
                        return -ERANGE;
                total += v * mult;
                /* frac < frac_div <= 1e9 and mult <= a year (3.2e13 us):
                 * frac * mult could overflow, its two halves cannot. */
                usec_t part = frac * (mult / frac_div) + frac * (mult % frac_div) / frac_div;
                if (part > UINT64_MAX - total)
                        return -ERANGE;
                total += part;
                any = true;
        }

        if (!any)
                return -EINVAL;
        *ret = total;
        return 0;
}

const char *format_timespan(char *buf, size_t size, usec_t t) {
        static const struct {
                const char *suffix;
                usec_t usec;
        } units[] = {
                { "y", USEC_PER_YEAR }, { "M", USEC_PER_MONTH }, { "w", USEC_PER_WEEK }, { "d", USEC_PER_DAY },
                { "h", USEC_PER_HOUR }, { "min", USEC_PER_MINUTE }, { "s", USEC_PER_SEC }, { "ms", USEC_PER_MSEC },
                { "us", 1 },
        };
        size_t n = 0;
        int parts = 0;

        if (t == USEC_INFINITY) {
                snprintf(buf, size, "infinity");
                return buf;
        }
        buf[0] = 0;
        for (size_t i = 0; i < ELEMENTSOF(units) && parts < 2 && n < size; i++) {
                if (t < units[i].usec) {
                        if (parts > 0)
                                break; /* "1h 5s" would skip a unit: "1h" */
                        continue;
                }
                int k = snprintf(buf + n, size - n, "%s%llu%s", parts ? " " : "",
                                 (unsigned long long) (t / units[i].usec), units[i].suffix);
                if (k < 0)
                        break;
                n += (size_t) k;
                t %= units[i].usec;
                parts++;
        }
        if (parts == 0)
                snprintf(buf, size, "0");
        return buf;
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
