/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdbool.h>

#include "log.h"

static int max_level = LOG_INFO;
static const char *log_prefix;

void log_set_max_level(int level) {
        max_level = level;
}

int log_get_max_level(void) {
        return max_level;
}

void log_set_prefix(const char *prefix) {
        log_prefix = prefix;
}

int log_internal(int level, int error, const char *file, int line, const char *fmt, ...) {
        char buf[2048];
        va_list ap;
        int saved = errno;

        if (level > max_level)
                return error < 0 ? error : -error;

        /* Let "%m" print the error we were handed; without one (log_info()
         * and friends), the errno of the failed call, as in printf(3). */
        if (error != 0)
                errno = error < 0 ? -error : error;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);

        if (getenv("JOURNAL_STREAM"))
                fprintf(stderr, "<%d>", level);
        if (log_prefix)
                fprintf(stderr, "%s: ", log_prefix);
        if (level >= LOG_DEBUG && max_level >= LOG_DEBUG)
                fprintf(stderr, "(%s:%d) ", file, line);
        fprintf(stderr, "%s\n", buf);

        errno = saved;
        return error < 0 ? error : -error;
}
