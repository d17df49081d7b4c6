/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "manager.h"
#include "wake-record.h"

/* A standby period's report (report.c): what woke the machine, and what
 * each unit cost, from the edges of the period.
 *
 * At enter (report_period_begin(), report_period_entered()), each unit's
 * cumulative counters are read and kept in the state directory's tmpfs
 * (WAKE_RECORD_DIR/period),
 * beside the wakes the listener records there; nothing runs in between,
 * no timer, no sampling. At exit (report_period_end()) the counters are
 * read again, and the period's report goes to the report directory
 * (/var/lib/standby/reports): at most REPORTS_MAX reports, at most
 * REPORTS_SIZE_MAX bytes in all, the oldest removed first. A period whose
 * end no exit recorded (the exit's process killed, the journal removed by
 * hand) is written at the next enter, marked cut. */
#define STANDBY_REPORT_DIR "/var/lib/standby/reports"
#define REPORTS_MAX 30
#define REPORTS_SIZE_MAX (4U * 1024 * 1024)
#define REPORT_SUFFIX ".report"
/* Bounds on what one edge reads: any user can make cgroups and threads. */
#define REPORT_UNITS_MAX 4096
/* Each thread is one read of /proc/TID/status (about 10-30 us), and at exit
 * the thaw waits for them: 8192 threads cost it 0.1-0.25 s at most. */
#define REPORT_THREADS_MAX 8192
/* Where the listener says which cgroup is its own, for its counters. */
#define REPORT_LISTENER_FILE "listener"

/* One unit's cumulative counters at an edge, or, in a report, over the
 * period. */
typedef struct UnitCounters {
        char *cgroup;
        uint64_t cpu_usec; /* cpu.stat usage_usec */
        uint64_t wakeups; /* voluntary context switches of its threads (those alive) */
        bool frozen; /* frozen by standby (the journal lists it) */
        bool gone; /* in a report: gone before the end (its delta unknown) */
        bool appeared; /* in a report: made during the period (counted from 0) */
} UnitCounters;

typedef struct Period {
        usec_t start, end; /* CLOCK_REALTIME */
        char *entered, *left, *strategy;
        bool cut;
        uint64_t dropped; /* wakes the ring overwrote */
        UnitCounters *units;
        size_t n_units;
        WakeRecord *wakes;
        size_t n_wakes;
        char *path; /* the report's file, when read from one */
} Period;

void period_done(Period *p);
void periods_free(Period *p, size_t n);
void period_freep(Period **p);

/* The report directory: $STANDBY_REPORT_DIR, else STANDBY_REPORT_DIR. */
const char *report_dir(void);

/* Standby is being entered: the period begins (a previous one left open
 * is written, cut). Failures are logged and cost the report only. */
void report_period_begin(Manager *m, const char *strategy);

/* Standby is entered: each unit's counters at the period's start, read
 * once the units are frozen (not on the freeze's path). */
void report_period_entered(Manager *m);
/* The enter failed: its period is dropped. */
void report_period_abandon(Manager *m);

/* The counters at the end, read before the exit thaws anything (the
 * exit's own thaw is not the period's); NULL when no period is open. */
Period *report_period_snapshot_end(Manager *m);
/* Writes the report of the period end describes, and closes it. Returns
 * the report's path (logged by the caller), or a negative errno. */
int report_period_end(Manager *m, Period *end, char **ret_path);

/* One report file's text (NUL-terminated, any bytes) into ret, which the
 * caller frees with period_done(): 0, or a negative errno. */
int report_parse(const char *text, Period *ret);

/* Every report in dir, oldest first. */
int report_read_all(const char *dir, Period **ret, size_t *ret_n);

/* The unit counters at an edge (exported for tests). */
int report_read_counters(Manager *m, UnitCounters **ret, size_t *ret_n);
