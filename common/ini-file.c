/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>

#include "ini-file.h"

int ini_file_fail(IniFile *ini, int line, const char *fmt, ...) {
        if (!ini->error) {
                va_list ap;
                va_start(ap, fmt);
                if (vasprintf(&ini->error, fmt, ap) < 0)
                        ini->error = NULL;
                va_end(ap);
                ini->error_line = line;
        }
        return 0;
}

static char *read_line(char *buf, int size, void *stream) {
        IniFile *ini = stream;
        char *r = fgets(buf, size, ini->file);
        if (r)
                ini->line++;
        return r;
}

int ini_file_parse(IniFile *ini, ini_handler handler, void *user, void (*finish)(void *user), char **ret_error) {
        int line, q;

        *ret_error = NULL;
        line = ini_parse_stream(read_line, ini, handler, user);
        if (line < 0) {
                free(ini->error);
                ini->error = NULL;
                return -EIO;
        }
        if (line == 0 && !ini->error && finish)
                finish(user);
        if (line == 0 && !ini->error)
                return 0;

        /* inih reports the first bad line; the message is ours if the handler
         * failed there (or no later than that), else it is a syntax error. */
        bool ours = ini->error && (line == 0 || ini->error_line <= line);
        if (ours && ini->error_line == 0)
                q = asprintf(ret_error, "%s: %s", ini->path, ini->error);
        else
                q = asprintf(ret_error, "%s:%d: %s", ini->path, ours ? ini->error_line : line,
                             ours ? ini->error : "syntax error: expected \"[Section]\" or \"Key=Value\"");
        if (q < 0)
                *ret_error = NULL;
        free(ini->error);
        ini->error = NULL;
        return -EINVAL;
}
