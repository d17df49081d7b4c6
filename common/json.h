/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Just enough JSON output for status and bench results: a string with every
 * character that JSON requires escaped, control bytes, C1 and bidi controls
 * as \uXXXX, and each
 * byte that is not part of valid UTF-8 as \udcXX (a lone low surrogate, as
 * Python's "surrogateescape"), so that any bytes give valid JSON. */
void json_print_string(FILE *f, const char *s);

/* For a terminal: valid UTF-8 as it is, control bytes and bytes that are
 * not UTF-8 as \xXX, C1 and bidi controls as \uXXXX, '\' as "\\" (a
 * cgroup name of any bytes cannot move the cursor, retitle the terminal or
 * reorder what follows it). */
void text_print_string(FILE *f, const char *s);

/* The length of the valid UTF-8 character at s (1-4), 0 if there is none
 * (the terminating NUL included). */
size_t utf8_char_len(const char *s);

/* Whether the valid UTF-8 character at s, n bytes long (utf8_char_len()),
 * is a control: C0, DEL, C1 (U+0080-U+009F, which some terminals take as
 * escapes), or a bidi mark, embedding, override or isolate. */
bool utf8_is_control(const char *s, size_t n);
