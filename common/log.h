/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <syslog.h>
#include "macro.h"

/* Logging to stderr. When stderr is the journal (JOURNAL_STREAM set), each line
 * carries a "<N>" priority prefix so the journal files it at the right level.
 * Code in common/ logs at debug only: the caller decides what the user sees. */

void log_set_max_level(int level);
int log_get_max_level(void);
void log_set_prefix(const char *prefix);

/* Logs and returns error (a negative errno, or 0); "%m" prints strerror(-error),
 * or strerror(errno) when error is 0. */
int log_internal(int level, int error, const char *file, int line, const char *fmt, ...) _printf_(5, 6);

#define log_full_errno(level, error, ...) log_internal((level), (error), __FILE__, __LINE__, __VA_ARGS__)
#define log_full(level, ...) (void) log_full_errno((level), 0, __VA_ARGS__)

#define log_debug(...) log_full(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_full(LOG_INFO, __VA_ARGS__)
#define log_notice(...) log_full(LOG_NOTICE, __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, __VA_ARGS__)
#define log_error(...) log_full(LOG_ERR, __VA_ARGS__)

#define log_debug_errno(e, ...) log_full_errno(LOG_DEBUG, (e), __VA_ARGS__)
#define log_warning_errno(e, ...) log_full_errno(LOG_WARNING, (e), __VA_ARGS__)
#define log_error_errno(e, ...) log_full_errno(LOG_ERR, (e), __VA_ARGS__)
