/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: standby.conf's bytes through the configuration parser. */
#include <stdint.h>

#include "config.h"
#include "macro.h"
#include "strv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_config_ Config *c = NULL;
        _cleanup_free_ char *error = NULL;

        if (config_parse_buffer("fuzz.conf", (const char *) data, size, &c, &error) < 0) {
                if (c || (error && !strneq(error, "fuzz.conf:", 10)))
                        abort();
                return 0;
        }
        /* What the manager walks: NULL-terminated lists. */
        (void) strv_length(c->targets);
        (void) strv_length(c->exempt);
        return 0;
}
