/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "time-util.h"

/* Rule files (*.rule, see standby.rule(5)): which event thaws which units.
 * Read by common/ini-file.c; input codes are checked by name through libevdev. */

typedef enum EventKind {
        EVENT_PUSH,          /* Push(unit, reason) over D-Bus */
        EVENT_DBUS_SIGNAL,   /* a D-Bus signal matching Match= */
        EVENT_DBUS_CALL,     /* a method call to BusName= owned by a frozen unit */
        EVENT_LINK,          /* rtnetlink link up/down/carrier */
        EVENT_ADDRESS,       /* rtnetlink address added/removed */
        EVENT_SOCKET,        /* a held socket of Unit= becomes readable */
        EVENT_INPUT,         /* an evdev key or switch */
        EVENT_UEVENT,        /* a kernel uevent (device hotplug) */
        _EVENT_KIND_MAX,
        _EVENT_KIND_INVALID = -1,
} EventKind;

const char *event_kind_to_string(EventKind k);
EventKind event_kind_from_string(const char *s);

typedef struct Rule {
        char *path;          /* the file it came from */
        EventKind event;
        char *unit;          /* Unit=: push target, socket owner */
        char *match;         /* Match=: D-Bus match string */
        char *bus_name;      /* BusName= */
        char *interface;     /* Interface= (link, address); NULL: any */
        int family;          /* Family=: AF_INET, AF_INET6, or 0 for any */
        char *change;        /* Change=: up, down, carrier, added, removed; NULL: any */
        char *device;        /* Device=: input device name or /dev/input path */
        char *subsystem;     /* Subsystem= (uevent) */
        int key_type;        /* EV_KEY or EV_SW, with key_code, for input; -1 none */
        int key_code;
        int value;           /* Value=: -1 for any */
        char **thaw;         /* Thaw= units */
        usec_t duration;     /* For=; USEC_INFINITY: until standby ends */
        bool exit_standby;   /* ExitStandby= */
        void *userdata;      /* for the listener's sources */
} Rule;

typedef struct RuleSet {
        Rule *rules;
        size_t n_rules;
        size_t n_allocated;  /* room in rules */
} RuleSet;

RuleSet *rule_set_free(RuleSet *s);
static inline void rule_set_freep(RuleSet **s) {
        rule_set_free(*s);
}
#define _cleanup_rule_set_ __attribute__((cleanup(rule_set_freep)))

/* Parses one rule file into set (appending one rule; a file of comments
 * only appends none). The file must be a regular file, not a symbolic link;
 * when check_owner, also owned by root and writable by root alone. On error
 * returns a negative errno and "FILE:LINE: what was expected" (or "FILE:
 * why") in ret_error; set is unchanged then. */
int rules_parse_file(RuleSet *set, const char *path, bool check_owner, char **ret_error);

/* The same for a rule file's contents, text (size bytes, need not be
 * NUL-terminated), named path in messages and in the rule. */
int rules_parse_buffer(RuleSet *set, const char *path, const char *text, size_t size, char **ret_error);

/* Lists the *.rule files of dirs (highest priority first, e.g. /etc, /run,
 * /usr/lib): a name found in an earlier directory hides the same name in a
 * later one; the result is sorted by file name. Missing dirs are skipped.
 * When check_owner, each directory must be owned by root and writable by
 * root alone (-EPERM). On error, "DIR: why" in ret_error (or NULL). */
int rules_enumerate(const char * const *dirs, bool check_owner, char ***ret_paths, char **ret_error);

/* Loads every file of rules_enumerate(); all or nothing: the first error
 * fails the whole load (ret_error says where) and *ret is left untouched. */
int rules_load(const char * const *dirs, bool check_owner, RuleSet **ret, char **ret_error);

/* One line describing a rule as understood, e.g. for --check. Caller frees. */
char *rule_describe(const Rule *r);
