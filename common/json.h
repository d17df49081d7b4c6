/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

/* Just enough JSON output for status and bench results: a string with every
 * character that JSON requires escaped, control bytes as \u00XX. */
void json_print_string(FILE *f, const char *s);
