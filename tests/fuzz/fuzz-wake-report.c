/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: any bytes as one line of the wake record
 * (/run/standby/report/wakes, wake_record_parse()) and as a report file
 * (/var/lib/standby/reports, report_parse()): an error or a record, never a
 * crash, a leak or a read past the text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "wake-record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *text = malloc(size + 1);
        WakeRecord w = {};
        Period p = {};

        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = 0;
        if (wake_record_parse(text, &w) >= 0)
                wake_record_done(&w);
        if (report_parse(text, &p) >= 0)
                period_done(&p);
        free(text);
        return 0;
}
