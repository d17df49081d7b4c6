/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "macro.h"
#include "time-util.h"

/* Rule files (*.rule, see standby.rule(5)): which event thaws which units.
 * Read by common/ini-file.c. The [Match] keys of each Event= kind, their
 * parsing, checks and matching are the event source's, in its own file
 * (listener/sources.c lists the sources); what is common to every rule is
 * here. */

typedef struct Rule Rule;
typedef struct Event Event;

/* One [Match] key of an event kind. parse() takes value into the rule's
 * match data (rule->match): 0; -ENOMEM; or -EINVAL with what was expected
 * in *ret_why (allocated; the parser adds FILE:LINE). */
typedef struct RuleKey {
        const char *name;
        int (*parse)(Rule *rule, const char *value, char **ret_why);
} RuleKey;

/* An Event= kind, defined by the source that delivers it. */
typedef struct EventKind {
        const char *name;                 /* its Event= value */
        size_t match_size;                /* its match data, allocated zeroed for each rule */
        void (*init)(void *match);        /* its defaults (may be NULL) */
        void (*done)(void *match);        /* frees what it holds (may be NULL) */
        const RuleKey *keys;              /* the [Match] keys it takes, ending with { NULL } */
        /* After the whole file, what the kind needs: 0, or -EINVAL with why
         * (allocated; named at the Event= line). May be NULL. */
        int (*check)(const Rule *rule, char **ret_why);
        /* "on a D-Bus push for mail.service": what --check prints. */
        char *(*describe)(const Rule *rule);
        /* Whether ev (of this kind) matches rule; a key left out matches anything. */
        bool (*matches)(const Rule *rule, const Event *ev);
        /* Its events are calls whose caller waits for the listener's answer,
         * which comes before the listener yields its CPU (thaw.c). */
        bool answers_caller;
} EventKind;

/* listener/sources.c: the kind of an Event= value, or NULL; and every kind
 * (NULL-terminated), in the sources' order. */
const EventKind *event_kind_from_string(const char *name);
const EventKind * const *event_kinds(void);

struct Rule {
        char *path;          /* the file it came from */
        const EventKind *event;
        void *match;         /* the [Match] values, the event kind's own */
        char **thaw;         /* Thaw= units */
        usec_t duration;     /* For=; USEC_INFINITY: until standby ends */
        bool end_when_idle;  /* EndWhenIdle=: the window ends once its units' threads sleep (For=, its bound) */
        bool exit_standby;   /* ExitStandby= */
        void *userdata;      /* for the listener's sources */
};

/* rule-keys.c, for the keys' parsers: a string key's value, replacing the last. */
int rule_key_string(char **field, const char *value);
/* What was expected, formatted into *ret_why; returns -EINVAL (-ENOMEM). */
int rule_key_fail(char **ret_why, const char *fmt, ...) _printf_(2, 3);
/* Unit=: a unit name. */
int rule_key_unit(char **field, const char *value, char **ret_why);
/* A key (Change=) whose value is one of words (space-separated) for kind. */
int rule_key_one_of(char **field, const char *key, const EventKind *kind, const char *words, const char *value,
                    char **ret_why);

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
 * later one, and a symbolic link to /dev/null there masks it (common/
 * conf-files.c); the result is sorted by file name. Missing dirs are skipped.
 * When check_owner, each directory must be owned by root and writable by
 * root alone (-EPERM). On error, "DIR: why" in ret_error (or NULL). */
int rules_enumerate(const char * const *dirs, bool check_owner, char ***ret_paths, char **ret_error);

/* The first Thaw= unit of r that never holds processes (a timer, a path
 * unit: unit_name_runs_processes()), or NULL: such a rule thaws nothing,
 * and is warned about, not refused (the name may be a cgroup's). */
const char *rule_thaws_processless(const Rule *r);

/* Loads every file of rules_enumerate(); all or nothing: the first error
 * fails the whole load (ret_error says where) and *ret is left untouched. */
int rules_load(const char * const *dirs, bool check_owner, RuleSet **ret, char **ret_error);

/* One line describing a rule as understood, e.g. for --check. Caller frees. */
char *rule_describe(const Rule *r);
