/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The parsers a source gives its [Match] keys (RuleKey.parse): kept apart
 * from the rule file parser (rules.c), which consults the table of every
 * source's kinds, so that a source's file and the parser each name only
 * what lies below them. */
#include <stdarg.h>
#include <stdio.h>

#include "macro.h"
#include "rules.h"
#include "strv.h"
#include "unit-name.h"

int rule_key_string(char **field, const char *value) {
        return free_and_strdup(field, value) < 0 ? -ENOMEM : 0;
}

int rule_key_fail(char **ret_why, const char *fmt, ...) {
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vasprintf(ret_why, fmt, ap);
        va_end(ap);
        if (n < 0) {
                *ret_why = NULL;
                return -ENOMEM;
        }
        return -EINVAL;
}

int rule_key_unit(char **field, const char *value, char **ret_why) {
        if (!unit_name_is_valid(value))
                return rule_key_fail(ret_why, "Unit=%s: expected a unit name such as mail-sync.service", value);
        return rule_key_string(field, value);
}

int rule_key_one_of(char **field, const char *key, const EventKind *kind, const char *words, const char *value,
                    char **ret_why) {
        _cleanup_strv_free_ char **ok = NULL;

        if (strv_split_words(words, &ok) < 0)
                return -ENOMEM;
        if (!strv_contains(ok, value))
                return rule_key_fail(ret_why, "%s=%s: Event=%s expects one of: %s", key, value, kind->name, words);
        return rule_key_string(field, value);
}
