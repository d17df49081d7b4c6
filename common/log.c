/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdbool.h>

#include "json.h"
#include "log.h"

/* Messages carry names others chose (a cgroup's name may hold any bytes): a
 * control byte, a C1 control or a byte that is not UTF-8 is written as \xNN,
 * so that no message can move the cursor, retitle the terminal or forge a
 * line of its own. */
static void fput_message(const char *s) {
        for (const unsigned char *p = (const unsigned char *) s; *p;) {
                size_t n = utf8_char_len((const char *) p);
                bool c1 = n == 2 && p[0] == 0xc2 && p[1] < 0xa0;

                if (n == 0 || c1 || (n == 1 && (*p < 0x20 || *p == 0x7f))) {
                        fprintf(stderr, "\\x%02x", *p);
                        p++;
                        continue;
                }
                fwrite(p, 1, n, stderr);
                p += n;
        }
}

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
        fput_message(buf);
        fputc('\n', stderr);

        errno = saved;
        return error < 0 ? error : -error;
}
