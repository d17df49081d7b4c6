/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "time-util.h"

/* The record of a standby period's wakes, kept by the listener while
 * standby lasts and read by the engine when it ends (freezer/report.c).
 *
 * It lives in WAKE_RECORD_DIR below the state directory (tmpfs: RAM, no
 * disk write; it outlives a listener's restart or crash, not a reboot),
 * apart from the journal, whose directory the listener watches. The file
 * is a ring of WAKE_RECORD_SLOTS slots of WAKE_RECORD_SLOT bytes: record
 * seq goes to slot seq % WAKE_RECORD_SLOTS, one pwrite() each, so that it
 * never grows past 512 KiB; the oldest are overwritten, and a reader counts
 * them from the gaps in seq. Each slot is one line of tab-separated
 * key=value fields, values escaped (kv_append()), padded with NULs to its
 * newline. */
#define WAKE_RECORD_DIR "report"
#define WAKE_RECORD_FILE "wakes"
#define WAKE_RECORD_SLOT 512
#define WAKE_RECORD_SLOTS 1024

typedef enum WakeKind {
        WAKE_THAW, /* units thawed: by an event's rule, or a Thaw call */
        WAKE_END, /* a window ended: its units freeze again */
        WAKE_EXIT, /* a rule's ExitStandby= ended standby */
        _WAKE_KIND_MAX,
        _WAKE_KIND_INVALID = -1,
} WakeKind;

const char *wake_kind_to_string(WakeKind k);
WakeKind wake_kind_from_string(const char *s);

typedef struct WakeRecord {
        uint64_t seq;
        usec_t realtime; /* CLOCK_REALTIME, when it happened */
        WakeKind kind;
        char *source; /* the event's kind ("push", "socket", ...), "call" for Thaw */
        char *rule; /* the rule's file, NULL for a Thaw call or a window's end */
        char *cause; /* what the event carried: "reason=...; caller=..." */
        char *units; /* the cgroups, comma-separated (cut short: "...") */
        usec_t took; /* WAKE_THAW: event received -> units thawed */
        usec_t duration; /* WAKE_THAW: the window asked (0: none); WAKE_END: how long it ran */
        usec_t cpu; /* WAKE_END: the CPU time its units used in the window (cpu.stat) */
        uint64_t wakeups; /* WAKE_END: their threads' voluntary context switches in it */
} WakeRecord;

void wake_record_done(WakeRecord *w);
void wake_records_free(WakeRecord *w, size_t n);

/* Opens (creating it if create) WAKE_RECORD_DIR below state_fd. */
int wake_record_dir_open(int state_fd, bool create, int *ret_fd);

/* The seq the next record takes: one past the highest in the file, 0 for
 * none (a listener started during standby goes on where the last left). */
int wake_record_next_seq(int dir_fd, uint64_t *ret);

/* Writes w into its slot. */
int wake_record_append(int dir_fd, const WakeRecord *w);

/* Every record in the file, oldest first, and how many were overwritten
 * (seq counts them). -ENOENT when there is no file. */
int wake_record_read_all(int dir_fd, WakeRecord **ret, size_t *ret_n, uint64_t *ret_dropped);

/* Removes the file (a period ended). */
int wake_record_remove(int dir_fd);

/* One record as a line (no newline), at most max - 1 bytes: fields cut to
 * fit, units first. Returns its length. */
size_t wake_record_format(const WakeRecord *w, char *buf, size_t max);
/* Parses a line of wake_record_format(); -EINVAL if it is not one. */
int wake_record_parse(const char *line, WakeRecord *ret);

/* Tab-separated key=value lines, shared with the period's files: appends
 * "\tkey=value" with value escaped (backslash, and every byte below 0x20
 * and 0x7f as \xHH), cut to max_value bytes of escaped text (a "..." says
 * so), never past the buffer. Returns the new length. */
size_t kv_append(char *buf, size_t len, size_t max, const char *key, const char *value, size_t max_value);
/* The unescaped value of key in line into *ret (which is NULL or is freed
 * and replaced), or -ENOENT. */
int kv_get(const char *line, const char *key, char **ret);
int kv_get_u64(const char *line, const char *key, uint64_t *ret);
