/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "report.h"

/* An offender costs more than this share of the period's wakeups or CPU
 * time, as Windows' sleep study flags its top offenders. */
#define REPORT_OFFENDER_PERCENT 10U

bool report_is_offender(const UnitCounters *u, uint64_t total_wakeups, uint64_t total_cpu);

/* Prints every report in dir (text, or JSON), and with plot, writes the
 * last period's gnuplot script there. 0, or the error (logged). */
int report_show(const char *dir, bool json, const char *plot);
