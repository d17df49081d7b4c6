/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: any bytes as /run/standby/state through journal_parse(),
 * and what it read written back: journal_format() of it must parse to a
 * journal that formats to the same text (nothing read is lost or changed
 * by a save and a load). */
#include <stdint.h>

#include "journal.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_journal_ Journal *j = NULL, *again = NULL;
        _cleanup_free_ char *text = NULL, *text2 = NULL;
        size_t n = 0, n2 = 0;

        if (journal_parse((const char *) data, size, &j) < 0)
                return 0; /* -ENOMEM */
        if (journal_format(j, &text, &n) < 0)
                return 0; /* -ENOMEM, or over JOURNAL_SIZE_MAX */
        if (journal_parse(text, n, &again) < 0 || journal_format(again, &text2, &n2) < 0)
                abort();
        if (journal_is_damaged(again) || n != n2 || memcmp(text, text2, n) != 0)
                abort();
        return 0;
}
