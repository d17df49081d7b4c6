/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include <stddef.h>
#include <time.h>

typedef uint64_t usec_t;
typedef uint64_t nsec_t;

#define USEC_INFINITY ((usec_t) UINT64_MAX)
#define NSEC_PER_SEC ((nsec_t) 1000000000ULL)
#define USEC_PER_SEC ((usec_t) 1000000ULL)
#define USEC_PER_MSEC ((usec_t) 1000ULL)
#define NSEC_PER_USEC ((nsec_t) 1000ULL)

/* Microseconds on the given clock (CLOCK_MONOTONIC for every deadline here). */
usec_t now_usec(clockid_t clock);

/* Milliseconds left until deadline (a CLOCK_MONOTONIC usec_t), rounded up, for
 * poll(); 0 when it has passed; -1 for USEC_INFINITY. */
int deadline_poll_timeout(usec_t deadline);

/* Parses "30s", "500ms", "2min", "1h", "250us", or a bare number of seconds,
 * also sums like "1min 30s". Returns 0, or -EINVAL (nothing written then),
 * -ERANGE on overflow. */
int parse_duration(const char *s, usec_t *ret);

/* Formats a duration as the shortest exact unit ("30s", "1500ms"). */
const char *format_duration(char *buf, size_t size, usec_t t);

/* For people, not parsers: t in its two largest units, as systemd's
 * format_timespan() writes it ("50s", "1h 30min", "584y 6M"), dropping
 * what is smaller; "infinity" for USEC_INFINITY. Returns buf. */
const char *format_timespan(char *buf, size_t size, usec_t t);
