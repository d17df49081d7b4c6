/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* NULL-terminated string arrays (strv), each element owned by the array. */

/* Replaces *field by a copy of value (NULL: none); on -ENOMEM, *field is kept. */
int free_and_strdup(char **field, const char *value);

size_t strv_length(char * const *l);
bool strv_contains(char * const *l, const char *s);
/* Appends s, taking ownership of it (freed on failure too). Returns 0 or -ENOMEM. */
int strv_consume(char ***l, char *s);
/* Appends a copy of s. */
int strv_extend(char ***l, const char *s);
/* Splits on spaces and tabs; empty words are dropped. */
int strv_split_words(const char *s, char ***ret);
void strv_sort(char **l);
