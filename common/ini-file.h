/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "macro.h"

/* The INI dialect of standby.conf(5) and standby.rule(5), read by our own
 * small reader (not libinih: its fixed line buffer cuts long lines silently,
 * see docs/design.md). A line is read whole, whatever its length:
 *   blank, or "#..." / ";..." (after leading blanks): nothing;
 *   "[Section]";
 *   "Key=Value", Key and Value stripped of surrounding blanks.
 * Anything else, a NUL byte or another control character than a tab is a
 * syntax error. There are no inline comments and no continuation lines: a
 * ';' inside a value is part of it. The handler is called once per
 * Key=Value with the current section ("" before the first one); it returns
 * 1 to go on, 0 after ini_file_fail(). The first error ends the parse.
 * Embed IniFile first in a parser's state. */
typedef int (*IniHandler)(void *user, const char *section, const char *name, const char *value);

typedef struct IniFile {
        const char *path;
        int line;          /* the line being handled now */
        char *error;       /* the first error, without FILE:LINE */
        int error_line;    /* its line; 0 for an error about the whole file */
        bool sections_once; /* a section header seen twice is an error (a rule
                             * file's two [Match] would merge silently) */
} IniFile;

/* Records the first error, at line (ini->line for the current one, 0 for the
 * whole file). Returns 0, which the handler returns to stop the parse. */
int ini_file_fail(IniFile *ini, int line, const char *fmt, ...) _printf_(3, 4);

/* Parses text (size bytes, not necessarily NUL-terminated) with handler
 * (user is passed to it). After a clean parse, finish(user) (may be NULL) may
 * record whole-file errors with ini_file_fail(). Returns 0, -ENOMEM, or
 * -EINVAL with "FILE:LINE: what was expected" (or "FILE: why") in
 * *ret_error (caller frees). */
int ini_file_parse(IniFile *ini, const char *text, size_t size, IniHandler handler, void *user,
                   void (*finish)(void *user), char **ret_error);

/* Reads path whole for parsing. It is opened without following a symbolic
 * link and without blocking (a FIFO is refused, not waited on), and must be
 * a regular file; when check_owner, also owned by root and writable by
 * nobody else (neither group nor others). what ("rule file", ...) names it
 * in the message. Returns 0 with the contents in *ret_text (NUL-terminated,
 * caller frees) and their length in *ret_size; or -ENOENT, -ELOOP, -EINVAL
 * (not a regular file), -EPERM (owner or mode), -EFBIG (over 4 MiB) or
 * another read error, with "FILE: why" in *ret_error. */
int ini_file_read(const char *path, const char *what, bool check_owner, char **ret_text, size_t *ret_size,
                  char **ret_error);

/* The same owner and mode rule for a directory holding such files, open as
 * fd: owned by root, writable by nobody else. Returns 0, or -EPERM with
 * "PATH: why" in *ret_error. */
int ini_file_check_dir(int fd, const char *path, char **ret_error);
