/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdio.h>

/* Just enough JSON output for status and bench results: a string with every
 * character that JSON requires escaped, control bytes as \u00XX, and each
 * byte that is not part of valid UTF-8 as \udcXX (a lone low surrogate, as
 * Python's "surrogateescape"), so that any bytes give valid JSON. */
void json_print_string(FILE *f, const char *s);

/* For a terminal: valid UTF-8 as it is, control bytes and bytes that are
 * not UTF-8 as \xXX, '\' as "\\" (a cgroup name of any bytes cannot move
 * the cursor or retitle the terminal). */
void text_print_string(FILE *f, const char *s);

/* The length of the valid UTF-8 character at s (1-4), 0 if there is none
 * (the terminating NUL included). */
size_t utf8_char_len(const char *s);
