/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <ini.h>
#include <stdio.h>

#include "macro.h"

/* One INI file parsed by libinih, with what inih does not give its handlers:
 * the line being handled (our reader counts them) and a single message
 * "FILE:LINE: what was expected" for the first error, whether the handler or
 * inih's own syntax check found it. Embed it first in a parser's state. */
typedef struct IniFile {
        FILE *file;
        const char *path;
        int line;          /* the line inih is handling now */
        char *error;       /* the first error, without FILE:LINE */
        int error_line;    /* its line; 0 for an error about the whole file */
} IniFile;

/* Records the first error, at line (ini->line for the current one, 0 for the
 * whole file). Returns 0, which tells inih "error on this line". */
int ini_file_fail(IniFile *ini, int line, const char *fmt, ...) _printf_(3, 4);

/* Parses ini->file with handler (user is passed to it). After a clean parse,
 * finish(user) (may be NULL) may record whole-file errors with
 * ini_file_fail(). Returns 0, or -EINVAL with the message in *ret_error. */
int ini_file_parse(IniFile *ini, ini_handler handler, void *user, void (*finish)(void *user), char **ret_error);
