/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>

#include "conf-files.h"
#include "ini-file.h"
#include "macro.h"
#include "rules.h"
#include "strv.h"
#include "unit-name.h"

static void rule_done(Rule *r) {
        free(r->path);
        if (r->event && r->match && r->event->done)
                r->event->done(r->match);
        free(r->match);
        strv_free(r->thaw);
}

RuleSet *rule_set_free(RuleSet *s) {
        if (!s)
                return NULL;
        for (size_t i = 0; i < s->n_rules; i++)
                rule_done(&s->rules[i]);
        free(s->rules);
        free(s);
        return NULL;
}

/* A [Match] key that came before Event=: parsed once the kind is known. */
typedef struct HeldKey {
        char *name, *value;
        int line;
} HeldKey;

typedef struct ParseState {
        IniFile ini;
        Rule rule;
        int event_line;
        HeldKey *held;
        size_t n_held, held_allocated;
        bool seen_for;
        bool any_key;      /* a file of comments only holds no rule */
        size_t n_thaw, thaw_allocated; /* rule.thaw's length and room: appending stays linear */
} ParseState;

static const RuleKey *kind_key(const EventKind *kind, const char *name) {
        for (const RuleKey *k = kind->keys; k && k->name; k++)
                if (streq(k->name, name))
                        return k;
        return NULL;
}

/* One [Match] key, with the rule's kind known, at line. */
static int parse_match_key(ParseState *s, const char *name, const char *value, int line) {
        const RuleKey *key = kind_key(s->rule.event, name);
        _cleanup_free_ char *why = NULL;
        int r;

        if (!key) {
                for (const EventKind * const *k = event_kinds(); *k; k++)
                        if (kind_key(*k, name))
                                return ini_file_fail(&s->ini, line, "%s= does not apply to Event=%s", name,
                                                     s->rule.event->name);
                return ini_file_fail(&s->ini, line, "unknown key \"%s\" in [Match]", name);
        }
        r = key->parse(&s->rule, value, &why);
        if (r == -ENOMEM || (r < 0 && !why))
                return ini_file_fail(&s->ini, line, "out of memory");
        if (r < 0)
                return ini_file_fail(&s->ini, line, "%s", why);
        return 1;
}

static int set_event(ParseState *s, const char *value) {
        const EventKind *kind = event_kind_from_string(value);
        Rule *r = &s->rule;

        if (!kind) {
                _cleanup_free_ char *names = NULL;
                size_t len = 1;
                for (const EventKind * const *k = event_kinds(); *k; k++)
                        len += strlen((*k)->name) + 2;
                names = malloc(len);
                if (!names)
                        return ini_file_fail(&s->ini, s->ini.line, "out of memory");
                char *p = names;
                *p = 0;
                for (const EventKind * const *k = event_kinds(); *k; k++)
                        p = stpcpy(stpcpy(p, k == event_kinds() ? "" : ", "), (*k)->name);
                return ini_file_fail(&s->ini, s->ini.line, "Event=%s: expected one of %s", value, names);
        }
        if (r->event) {
                if (r->event == kind)
                        return 1;
                return ini_file_fail(&s->ini, s->ini.line, "Event=%s: this rule's Event= is %s already (one event "
                                     "per rule file)", value, r->event->name);
        }
        r->event = kind;
        s->event_line = s->ini.line;
        r->match = calloc(1, kind->match_size ?: 1);
        if (!r->match)
                return ini_file_fail(&s->ini, s->ini.line, "out of memory");
        if (kind->init)
                kind->init(r->match);
        /* The keys that came before it, in their order. */
        for (size_t i = 0; i < s->n_held; i++)
                if (parse_match_key(s, s->held[i].name, s->held[i].value, s->held[i].line) == 0)
                        return 0;
        return 1;
}

static int handle_match(ParseState *s, const char *name, const char *value) {
        if (streq(name, "Event"))
                return set_event(s, value);
        if (s->rule.event)
                return parse_match_key(s, name, value, s->ini.line);

        HeldKey *h;
        if (!GROW_ARRAY(s->held, s->held_allocated, s->n_held + 1))
                return ini_file_fail(&s->ini, s->ini.line, "out of memory");
        h = &s->held[s->n_held];
        *h = (HeldKey) { .name = strdup(name), .value = strdup(value), .line = s->ini.line };
        if (!h->name || !h->value) {
                free(h->name);
                free(h->value);
                return ini_file_fail(&s->ini, s->ini.line, "out of memory");
        }
        s->n_held++;
        return 1;
}

static int handle_action(ParseState *s, const char *name, const char *value) {
        Rule *r = &s->rule;

        if (streq(name, "Thaw")) {
                if (!*value) { /* an empty assignment resets the list */
                        r->thaw = strv_free(r->thaw);
                        s->n_thaw = s->thaw_allocated = 0;
                        return 1;
                }
                for (const char *p = value + strspn(value, " \t"); *p; p += strspn(p, " \t")) {
                        size_t n = strcspn(p, " \t");
                        char *w = strndup(p, n);
                        p += n;
                        if (!w || !GROW_ARRAY(r->thaw, s->thaw_allocated, s->n_thaw + 2)) {
                                free(w);
                                return ini_file_fail(&s->ini, s->ini.line, "out of memory");
                        }
                        r->thaw[s->n_thaw++] = w;
                        r->thaw[s->n_thaw] = NULL;
                        if (!unit_name_is_valid(w))
                                return ini_file_fail(&s->ini, s->ini.line, "Thaw=: \"%s\" is not a unit name", w);
                }
        } else if (streq(name, "For")) {
                usec_t t;
                if (streq(value, "standby"))
                        t = USEC_INFINITY;
                else if (parse_duration(value, &t) < 0 || t == 0)
                        return ini_file_fail(&s->ini, s->ini.line, "For=%s: expected a duration such as \"30s\", or \"standby\" "
                                       "(until standby ends)", value);
                r->duration = t;
                s->seen_for = true;
        } else if (streq(name, "EndWhenIdle")) {
                if (streq(value, "yes") || streq(value, "true"))
                        r->end_when_idle = true;
                else if (streq(value, "no") || streq(value, "false"))
                        r->end_when_idle = false;
                else
                        return ini_file_fail(&s->ini, s->ini.line, "EndWhenIdle=%s: expected \"yes\" or \"no\"", value);
        } else if (streq(name, "ExitStandby")) {
                if (streq(value, "yes") || streq(value, "true"))
                        r->exit_standby = true;
                else if (streq(value, "no") || streq(value, "false"))
                        r->exit_standby = false;
                else
                        return ini_file_fail(&s->ini, s->ini.line, "ExitStandby=%s: expected \"yes\" or \"no\"", value);
        } else
                return ini_file_fail(&s->ini, s->ini.line, "unknown key \"%s\" in [Action]", name);
        return 1;
}

static int handler(void *user, const char *section, const char *name, const char *value) {
        ParseState *s = user;

        s->any_key = true;
        if (streq(section, "Match"))
                return handle_match(s, name, value);
        if (streq(section, "Action"))
                return handle_action(s, name, value);
        return ini_file_fail(&s->ini, s->ini.line, "unknown section [%s], expected [Match] or [Action]", section);
}

/* After the whole file: what the event needs. */
static void validate(void *userdata) {
        ParseState *s = userdata;
        Rule *r = &s->rule;

        if (!s->any_key)
                return; /* comments only: no rule, no error */

        if (!r->event) {
                ini_file_fail(&s->ini, 0, "no Event= in [Match]");
                return;
        }
        if (r->event->check) {
                _cleanup_free_ char *why = NULL;
                if (r->event->check(r, &why) < 0) {
                        ini_file_fail(&s->ini, s->event_line, "%s", why ?: "out of memory");
                        return;
                }
        }
        if (!r->thaw && !r->exit_standby)
                ini_file_fail(&s->ini, 0, "[Action] needs Thaw= or ExitStandby=yes");
        else if (s->seen_for && !r->thaw)
                ini_file_fail(&s->ini, 0, "For= needs Thaw=");
        else if (r->end_when_idle && r->duration == USEC_INFINITY)
                /* A window until standby ends has no timer and no looks. */
                ini_file_fail(&s->ini, 0, "EndWhenIdle=yes needs For= a time span, its bound");
}

int rules_parse_buffer(RuleSet *set, const char *path, const char *text, size_t size, char **ret_error) {
        ParseState s = { .ini.path = path, .ini.sections_once = true };
        int r;

        *ret_error = NULL;
        s.rule = (Rule) { .duration = USEC_INFINITY };
        r = ini_file_parse(&s.ini, text, size, handler, &s, validate, ret_error);
        for (size_t i = 0; i < s.n_held; i++) {
                free(s.held[i].name);
                free(s.held[i].value);
        }
        free(s.held);
        if (r < 0 || !s.any_key) { /* !any_key: an example file with everything commented out */
                rule_done(&s.rule);
                return r < 0 ? r : 0;
        }

        if (!GROW_ARRAY(set->rules, set->n_allocated, set->n_rules + 1) || !(s.rule.path = strdup(path))) {
                rule_done(&s.rule);
                return -ENOMEM;
        }
        set->rules[set->n_rules++] = s.rule;
        return 0;
}

int rules_parse_file(RuleSet *set, const char *path, bool check_owner, char **ret_error) {
        _cleanup_free_ char *text = NULL;
        size_t size;
        int r;

        r = ini_file_read(path, "rule file", check_owner, &text, &size, ret_error);
        if (r < 0)
                return r;
        return rules_parse_buffer(set, path, text, size, ret_error);
}

const char *rule_thaws_processless(const Rule *r) {
        for (char **t = r->thaw; t && *t; t++)
                if (!unit_name_runs_processes(*t))
                        return *t;
        return NULL;
}

int rules_enumerate(const char * const *dirs, bool check_owner, char ***ret_paths, char **ret_error) {
        return conf_files_list(dirs, ".rule", check_owner, ret_paths, ret_error);
}

int rules_load(const char * const *dirs, bool check_owner, RuleSet **ret, char **ret_error) {
        _cleanup_rule_set_ RuleSet *set = calloc(1, sizeof(RuleSet));
        _cleanup_strv_free_ char **paths = NULL;
        int r;

        *ret_error = NULL;
        if (!set)
                return -ENOMEM;
        r = rules_enumerate(dirs, check_owner, &paths, ret_error);
        if (r < 0)
                return r;
        for (char **p = paths; *p; p++) {
                r = rules_parse_file(set, *p, check_owner, ret_error);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(set);
        return 0;
}

char *rule_describe(const Rule *r) {
        char *s = NULL, dur[64] = ""; /* "until idle, at most " and the longest duration */
        _cleanup_free_ char *what = NULL, *thaw = NULL;

        if (!r->event || !r->event->describe)
                return NULL;
        what = r->event->describe(r);
        if (!what)
                return NULL;
        if (r->thaw) { /* in one pass: a long list costs its length, not its square */
                size_t len = 1;
                for (char **t = r->thaw; *t; t++)
                        len += strlen(*t) + 1;
                thaw = malloc(len);
                if (!thaw)
                        return NULL;
                char *p = thaw;
                for (char **t = r->thaw; *t; t++)
                        p = stpcpy(stpcpy(p, t == r->thaw ? "" : " "), *t);
                *p = 0;
                if (!r->thaw[0])
                        thaw = mfree(thaw);
        }
        if (r->thaw)
                snprintf(dur, sizeof(dur), "%s%s", r->end_when_idle ? "until idle, " : "",
                         r->duration == USEC_INFINITY ? "until standby ends"
                         : r->end_when_idle       ? "at most "
                                                  : "for ");
        char tb[32];
        if (r->thaw && r->duration != USEC_INFINITY)
                strncat(dur, format_duration(tb, sizeof(tb), r->duration), sizeof(dur) - strlen(dur) - 1);
        if (asprintf(&s, "%s: %s: %s%s%s%s%s", r->path, what, thaw ? "thaw " : "", thaw ?: "", thaw ? " " : "", dur,
                     r->exit_standby ? (thaw ? ", then end standby" : "end standby") : "") < 0)
                return NULL;
        return s;
}
