/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: a rule file's bytes through the rule parser, then every
 * rule it took through rule_describe() (what --check prints). */
#include <stdint.h>

#include "macro.h"
#include "../../listener/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_rule_set_ RuleSet *set = calloc(1, sizeof(RuleSet));
        _cleanup_free_ char *error = NULL;

        if (!set)
                return 0;
        if (rules_parse_buffer(set, "fuzz.rule", (const char *) data, size, &error) < 0) {
                /* Refused whole: nothing was added, and the reason names the file. */
                if (set->n_rules != 0 || (error && !strneq(error, "fuzz.rule:", 10)))
                        abort();
                return 0;
        }
        if (set->n_rules > 1)
                abort();
        for (size_t i = 0; i < set->n_rules; i++)
                free(rule_describe(&set->rules[i]));
        return 0;
}
