/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>

#include "cgroup.h"
#include "conf-files.h"
#include "config.h"
#include "fileio.h"
#include "ini-file.h"
#include "macro.h"
#include "strv.h"
#include "unit-name.h"

static const char * const default_exempt[] = {
        /* The infrastructure that must answer while everything else sleeps. */
        "standby-listener.service", "dbus.service", "dbus-broker.service",
        "systemd-journald.service", "systemd-logind.service", "init.scope",
};

int config_new_default(Config **ret) {
        Config *c = calloc(1, sizeof(Config));
        int r;

        if (!c)
                return -ENOMEM;
        c->strategy = STRATEGY_FREEZE;
        c->freeze_timeout = 5 * USEC_PER_SEC;
        c->on_freeze_timeout = FREEZE_FAILURE_SKIP;
        c->deadlock_guard = true;
        /* Out of the box: the lid closed enters, the lid opened or the
         * power key leaves (standby.conf(5)). */
        c->enter_on = TRIGGER_LID;
        c->leave_on = TRIGGER_LID | TRIGGER_POWER_KEY;
        c->idle_enter = 5 * 60 * USEC_PER_SEC;
        c->inhibit_delay_max = 5 * USEC_PER_SEC;
        c->lateness = 15 * 60 * USEC_PER_SEC;
        c->window_max = 10 * USEC_PER_SEC;
        c->freeze_before_sleep = true;
        r = strv_split_words("user.slice", &c->targets);
        if (r >= 0)
                r = strv_split_words("", &c->exempt);
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(default_exempt); i++)
                r = strv_extend(&c->exempt, default_exempt[i]);
        if (r < 0) {
                config_free(c);
                return r;
        }
        *ret = c;
        return 0;
}

Config *config_free(Config *c) {
        if (!c)
                return NULL;
        strv_free(c->targets);
        strv_free(c->exempt);
        free(c->group);
        free(c->systemd_address);
        strv_free(c->lateness_units);
        free(c->lateness_usec);
        for (size_t i = 0; i < c->n_unit_strategies; i++)
                free(c->unit_strategies[i].pattern);
        free(c->unit_strategies);
        free(c);
        return NULL;
}

usec_t config_lateness_of(const Config *c, const char *rel) {
        /* From the leaf up: the unit's own entry before its slices'. */
        for (const char *end = rel + strlen(rel); end > rel;) {
                const char *start = end;
                while (start > rel && start[-1] != '/')
                        start--;
                for (size_t i = 0; i < c->n_lateness; i++)
                        if (strlen(c->lateness_units[i]) == (size_t) (end - start) &&
                            strneq(c->lateness_units[i], start, (size_t) (end - start)))
                                return c->lateness_usec[i];
                end = start > rel ? start - 1 : rel;
        }
        return c->lateness;
}

/* [Lateness] UNIT=TIME: a later assignment of a unit (a drop-in's) replaces
 * its earlier one. */
static int lateness_set(Config *c, const char *unit, usec_t t) {
        for (size_t i = 0; i < c->n_lateness; i++)
                if (streq(c->lateness_units[i], unit)) {
                        c->lateness_usec[i] = t;
                        return 0;
                }
        usec_t *v = reallocarray(c->lateness_usec, c->n_lateness + 1, sizeof(usec_t));
        if (!v)
                return -ENOMEM;
        c->lateness_usec = v;
        int r = strv_extend(&c->lateness_units, unit);
        if (r < 0)
                return r;
        c->lateness_usec[c->n_lateness++] = t;
        return 0;
}

typedef struct ParseState {
        IniFile ini;
        Config *config;
        bool seen_targets, seen_exempt;
        size_t n_targets, targets_allocated, n_exempt, exempt_allocated; /* appending stays linear */
        size_t unit_strategies_allocated;
} ParseState;

static int parse_bool(const char *v, bool *ret) {
        if (streq(v, "yes") || streq(v, "true") || streq(v, "on") || streq(v, "1"))
                *ret = true;
        else if (streq(v, "no") || streq(v, "false") || streq(v, "off") || streq(v, "0"))
                *ret = false;
        else
                return -EINVAL;
        return 0;
}

/* What the manager takes as a target or an exemption (unit_resolve_cgroup()):
 * a unit name, or a cgroup path relative to the cgroup2 mount. */
static bool target_is_valid(const char *w) {
        return unit_name_is_valid(w) || (*w && cgroup_path_validate(w) >= 0);
}

/* A list key: the first assignment in the file replaces the default, later
 * ones append, and an empty assignment clears the list (as in systemd).
 * Returns 0, -ENOMEM, or -EINVAL with the bad word in *ret_bad. */
static int parse_list(const char *v, char ***list, size_t *n, size_t *allocated, bool *seen, char **ret_bad) {
        if (!*seen || *v == 0) {
                char **empty = calloc(1, sizeof(char *));
                if (!empty)
                        return -ENOMEM;
                strv_free(*list);
                *list = empty;
                *n = 0;
                *allocated = 1;
                *seen = true;
        }
        for (const char *p = v + strspn(v, " \t"); *p; p += strspn(p, " \t")) {
                size_t k = strcspn(p, " \t");
                char *w = strndup(p, k);
                p += k;
                if (!w)
                        return -ENOMEM;
                if (!target_is_valid(w)) {
                        *ret_bad = w;
                        return -EINVAL;
                }
                if (!GROW_ARRAY(*list, *allocated, *n + 2)) {
                        free(w);
                        return -ENOMEM;
                }
                (*list)[(*n)++] = w;
                (*list)[*n] = NULL;
        }
        return 0;
}

/* Group=: a group name as getgrnam() will be asked for it. */
static bool group_name_is_valid(const char *g) {
        size_t n = strlen(g);
        return n > 0 && n <= 256 && g[0] != '-' && !strpbrk(g, "/:, \t");
}

/* SystemdAddress=: one unix:path= address, the path absolute and made of
 * characters that need no escaping in a D-Bus address, so that nothing in it
 * can add a key or a second address. */
static bool systemd_address_is_valid(const char *a) {
        const char *p = strneq(a, "unix:path=/", 11) ? a + 11 : NULL;
        return p && strlen(a) < 108 + 10 &&
               strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-./") == strlen(p);
}

static const struct {
        const char *name;
        PowerTrigger bit;
} trigger_names[] = {
        { "lid", TRIGGER_LID },
        { "power-key", TRIGGER_POWER_KEY },
        { "idle", TRIGGER_IDLE },
        { "input", TRIGGER_INPUT },
};

int config_triggers_to_string(unsigned triggers, char **ret) {
        char buf[64] = "";

        for (size_t i = 0; i < ELEMENTSOF(trigger_names); i++)
                if (triggers & trigger_names[i].bit) {
                        if (buf[0])
                                strcat(buf, " ");
                        strcat(buf, trigger_names[i].name);
                }
        *ret = strdup(buf[0] ? buf : "none");
        return *ret ? 0 : -ENOMEM;
}

/* EnterOn=/LeaveOn=: words from allowed; an empty value or "none" alone
 * means nothing. The whole value replaces the default (the last line
 * wins). -EINVAL with the bad word in ret_bad. */
static int parse_triggers(const char *v, unsigned allowed, unsigned *ret, char **ret_bad) {
        unsigned t = 0;

        if (streq(v, "none")) {
                *ret = 0;
                return 0;
        }
        for (const char *p = v + strspn(v, " \t"); *p; p += strspn(p, " \t")) {
                size_t k = strcspn(p, " \t");
                bool found = false;

                for (size_t i = 0; i < ELEMENTSOF(trigger_names); i++)
                        if ((allowed & trigger_names[i].bit) && strlen(trigger_names[i].name) == k &&
                            strneq(p, trigger_names[i].name, k)) {
                                t |= trigger_names[i].bit;
                                found = true;
                        }
                if (!found) {
                        *ret_bad = strndup(p, k);
                        return *ret_bad ? -EINVAL : -ENOMEM;
                }
                p += k;
        }
        *ret = t;
        return 0;
}

/* A [Strategy] pattern: what Targets= takes, or the same with the globs
 * * ? [ in it (checked as a path: no leading '/', no "." or "..", no empty
 * component). */
static bool pattern_is_valid(const char *w) {
        if (!strpbrk(w, "*?["))
                return target_is_valid(w);
        return strlen(w) <= UNIT_NAME_MAX * 4 && cgroup_path_validate(w) >= 0;
}

/* Slack=: "max", or a positive duration (its nanoseconds). */
static int parse_slack_bound(const char *w, uint64_t *ret_ns) {
        usec_t t;

        if (streq(w, "max")) {
                *ret_ns = 0;
                return 0;
        }
        if (parse_duration(w, &t) < 0 || t == 0 || t == USEC_INFINITY || t > UINT64_MAX / NSEC_PER_USEC)
                return -EINVAL;
        *ret_ns = t * NSEC_PER_USEC;
        return 0;
}

/* [Strategy]: Freeze=PATTERN..., Slack=BOUND PATTERN..., None=PATTERN...;
 * each pattern an entry, in the order read. An empty value is an error: a
 * line that names nothing is a mistake, not a reset. */
static int parse_strategy_line(ParseState *s, const char *name, const char *value) {
        Config *c = s->config;
        UnitStrategy proto = {};
        const char *p = value + strspn(value, " \t");
        size_t before = c->n_unit_strategies;

        if (streq(name, "Freeze"))
                proto.strategy = STRATEGY_FREEZE;
        else if (streq(name, "None"))
                proto.none = true;
        else if (streq(name, "Slack")) {
                _cleanup_free_ char *bound = strndup(p, strcspn(p, " \t"));
                if (!bound)
                        return -ENOMEM;
                proto.strategy = STRATEGY_SLACK;
                if (parse_slack_bound(bound, &proto.slack_ns) < 0)
                        return ini_file_fail(&s->ini, s->ini.line, "Slack=%s: expected a bound first (\"max\" or a "
                                             "duration such as \"30s\"), then unit names, cgroup paths or globs",
                                             value);
                p += strlen(bound);
                p += strspn(p, " \t");
        } else
                return ini_file_fail(&s->ini, s->ini.line, "unknown key \"%s\" in [Strategy], expected Freeze=, "
                                     "Slack= or None=", name);

        for (; *p; p += strspn(p, " \t")) {
                size_t k = strcspn(p, " \t");
                _cleanup_free_ char *w = strndup(p, k);
                p += k;
                if (!w)
                        return -ENOMEM;
                if (!pattern_is_valid(w))
                        return ini_file_fail(&s->ini, s->ini.line, "%s=: \"%s\" is neither a unit name nor a "
                                             "cgroup path relative to the cgroup2 mount (globs * ? [ allowed)",
                                             name, w);
                if (!GROW_ARRAY(c->unit_strategies, s->unit_strategies_allocated, c->n_unit_strategies + 1))
                        return -ENOMEM;
                c->unit_strategies[c->n_unit_strategies] = proto;
                c->unit_strategies[c->n_unit_strategies++].pattern = TAKE_PTR(w);
        }
        if (c->n_unit_strategies == before)
                return ini_file_fail(&s->ini, s->ini.line, "%s=%s: names no unit; expected %sunit names, cgroup "
                                     "paths or globs", name, value, proto.strategy == STRATEGY_SLACK && !proto.none
                                                                        ? "a bound, then " : "");
        return 1;
}

const UnitStrategy *config_unit_strategy(const Config *c, const char *cgroup) {
        const UnitStrategy *best = NULL;
        char path[PATH_MAX];

        if (c->n_unit_strategies == 0 || strlen(cgroup) >= sizeof(path))
                return NULL; /* a path past PATH_MAX, any user's to make: Strategy= decides */
        strcpy(path, cgroup);
        /* Component by component, top down: a deeper match, or a later
         * line at the same depth, wins. */
        for (char *comp = path;;) {
                char *slash = strchr(comp, '/');
                if (slash)
                        *slash = 0;
                for (size_t i = 0; i < c->n_unit_strategies; i++) {
                        const UnitStrategy *u = &c->unit_strategies[i];
                        if (fnmatch(u->pattern, strchr(u->pattern, '/') ? path : comp, FNM_PATHNAME) == 0)
                                best = u;
                }
                if (!slash)
                        break;
                *slash = '/';
                comp = slash + 1;
        }
        return best;
}

static int handler(void *user, const char *section, const char *name, const char *value) {
        ParseState *s = user;
        Config *c = s->config;
        int r;

        if (streq(section, "Strategy")) {
                r = parse_strategy_line(s, name, value);
                return r == -ENOMEM ? ini_file_fail(&s->ini, s->ini.line, "out of memory") : r;
        }
        if (streq(section, "Maintenance") || streq(section, "Lateness")) {
                bool max = streq(section, "Maintenance") && streq(name, "WindowMax");
                usec_t t;
                if (streq(section, "Maintenance") && !max && !streq(name, "Lateness"))
                        return ini_file_fail(&s->ini, s->ini.line, "unknown key \"%s\" in [%s]", name, section);
                if (streq(section, "Lateness") && !unit_name_is_valid(name))
                        return ini_file_fail(&s->ini, s->ini.line, "[Lateness]: \"%s\" is not a unit or slice name", name);
                if (!max && streq(value, "infinity"))
                        t = USEC_INFINITY;
                else if (parse_duration(value, &t) < 0 || t == 0 || t == USEC_INFINITY)
                        return ini_file_fail(&s->ini, s->ini.line, "%s=%s: expected a positive duration such as \"30s\" or "
                                             "\"15min\"%s", name, value, max ? "" : ", or \"infinity\"");
                if (max)
                        c->window_max = t;
                else if (streq(section, "Maintenance"))
                        c->lateness = t;
                else if (lateness_set(c, name, t) < 0)
                        return ini_file_fail(&s->ini, s->ini.line, "out of memory");
                return 1;
        }
        if (!streq(section, "Standby"))
                return ini_file_fail(&s->ini, s->ini.line, "unknown section [%s], expected [Standby], [Strategy], "
                                     "[Maintenance] or [Lateness]", section);

        if (streq(name, "Targets") || streq(name, "Exempt")) {
                _cleanup_free_ char *bad = NULL;
                r = name[0] == 'T' ? parse_list(value, &c->targets, &s->n_targets, &s->targets_allocated, &s->seen_targets, &bad)
                                   : parse_list(value, &c->exempt, &s->n_exempt, &s->exempt_allocated, &s->seen_exempt, &bad);
                if (r == -EINVAL)
                        return ini_file_fail(&s->ini, s->ini.line, "%s=: \"%s\" is neither a unit name nor a cgroup path "
                                             "relative to the cgroup2 mount", name, bad);
        } else if (streq(name, "Strategy")) {
                Strategy st = strategy_from_string(value);
                if (st == _STRATEGY_INVALID)
                        return ini_file_fail(&s->ini, s->ini.line, "Strategy=%s: expected \"freeze\" or \"slack\"", value);
                c->strategy = st;
                r = 0;
        } else if (streq(name, "FreezeTimeout")) {
                usec_t t;
                if (parse_duration(value, &t) < 0 || t == 0)
                        return ini_file_fail(&s->ini, s->ini.line, "FreezeTimeout=%s: expected a positive duration such as \"5s\" or \"500ms\"", value);
                c->freeze_timeout = t;
                r = 0;
        } else if (streq(name, "OnFreezeTimeout")) {
                if (streq(value, "skip"))
                        c->on_freeze_timeout = FREEZE_FAILURE_SKIP;
                else if (streq(value, "abort"))
                        c->on_freeze_timeout = FREEZE_FAILURE_ABORT;
                else
                        return ini_file_fail(&s->ini, s->ini.line, "OnFreezeTimeout=%s: expected \"skip\" or \"abort\"", value);
                r = 0;
        } else if (streq(name, "TimerSlackNSec")) {
                uint64_t v;
                if (streq(value, "max"))
                        c->slack_ns = 0;
                else if (parse_u64(value, &v) < 0 || v == 0)
                        return ini_file_fail(&s->ini, s->ini.line, "TimerSlackNSec=%s: expected \"max\" or a positive number of nanoseconds", value);
                else
                        c->slack_ns = v;
                r = 0;
        } else if (streq(name, "DeadlockGuard")) {
                if (parse_bool(value, &c->deadlock_guard) < 0)
                        return ini_file_fail(&s->ini, s->ini.line, "DeadlockGuard=%s: expected \"yes\" or \"no\"", value);
                r = 0;
        } else if (streq(name, "FreezeSessions")) {
                if (parse_bool(value, &c->freeze_sessions) < 0)
                        return ini_file_fail(&s->ini, s->ini.line, "FreezeSessions=%s: expected \"yes\" or \"no\"", value);
                r = 0;
        } else if (streq(name, "Backend")) {
                if (streq(value, "auto"))
                        c->backend = BACKEND_AUTO;
                else if (streq(value, "systemd"))
                        c->backend = BACKEND_SYSTEMD;
                else if (streq(value, "cgroupfs"))
                        c->backend = BACKEND_CGROUPFS;
                else
                        return ini_file_fail(&s->ini, s->ini.line, "Backend=%s: expected \"auto\", \"systemd\" or \"cgroupfs\"", value);
                r = 0;
        } else if (streq(name, "SystemdAddress")) {
                if (!systemd_address_is_valid(value))
                        return ini_file_fail(&s->ini, s->ini.line, "SystemdAddress=%s: expected a D-Bus address such as "
                                             "\"unix:path=/run/user/1000/systemd/private\" (an absolute path of letters, digits and _-./)", value);
                r = free_and_strdup(&c->systemd_address, value);
        } else if (streq(name, "EnterOn") || streq(name, "LeaveOn")) {
                bool enter = name[0] == 'E';
                _cleanup_free_ char *bad = NULL;
                r = parse_triggers(value, enter ? TRIGGER_LID | TRIGGER_POWER_KEY | TRIGGER_IDLE
                                                : TRIGGER_LID | TRIGGER_POWER_KEY | TRIGGER_INPUT,
                                   enter ? &c->enter_on : &c->leave_on, &bad);
                if (r == -EINVAL)
                        return ini_file_fail(&s->ini, s->ini.line, "%s=: \"%s\" is not one of %s, or \"none\"", name,
                                             bad, enter ? "\"lid\", \"power-key\", \"idle\"" : "\"lid\", \"power-key\", \"input\"");
        } else if (streq(name, "IdleEnterSec") || streq(name, "InhibitDelayMaxSec")) {
                usec_t t;
                if (parse_duration(value, &t) < 0 || t == 0 || t == USEC_INFINITY)
                        return ini_file_fail(&s->ini, s->ini.line, "%s=%s: expected a positive duration such as \"5s\" or \"10min\"",
                                             name, value);
                if (name[0] == 'I' && name[1] == 'd')
                        c->idle_enter = t;
                else if (t > 60 * USEC_PER_SEC)
                        return ini_file_fail(&s->ini, s->ini.line, "%s=%s: at most 1min (an app holds off standby no longer)",
                                             name, value);
                else
                        c->inhibit_delay_max = t;
                r = 0;
        } else if (streq(name, "UsersMayBlock") || streq(name, "FreezeBeforeSleep")) {
                if (parse_bool(value, name[0] == 'U' ? &c->users_may_block : &c->freeze_before_sleep) < 0)
                        return ini_file_fail(&s->ini, s->ini.line, "%s=%s: expected \"yes\" or \"no\"", name, value);
                r = 0;
        } else if (streq(name, "Group")) {
                if (*value && !group_name_is_valid(value))
                        return ini_file_fail(&s->ini, s->ini.line, "Group=%s: expected a group name", value);
                r = free_and_strdup(&c->group, isempty(value) ? NULL : value);
        }
        else
                return ini_file_fail(&s->ini, s->ini.line, "unknown key \"%s\" in [%s]", name, section);

        if (r < 0)
                return ini_file_fail(&s->ini, s->ini.line, "out of memory");
        return 1;
}

/* One file's text over what s holds: the main file first, then each
 * drop-in, so that a drop-in's list keys append to the file's (the first
 * assignment anywhere replaces the default) and its other keys win. */
static int parse_into(ParseState *s, const char *path, const char *text, size_t size, char **ret_error) {
        s->ini = (IniFile) { .path = path };
        return ini_file_parse(&s->ini, text, size, handler, s, NULL, ret_error);
}

int config_parse_buffer(const char *path, const char *text, size_t size, Config **ret, char **ret_error) {
        _cleanup_config_ Config *c = NULL;
        ParseState s = {};
        int r;

        *ret_error = NULL;
        r = config_new_default(&c);
        if (r < 0)
                return r;
        s.config = c;
        r = parse_into(&s, path, text, size, ret_error);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(c);
        return 0;
}

int config_dropin_dirs(const char *path, char ***ret) {
        _cleanup_strv_free_ char **dirs = NULL;
        _cleanup_free_ char *own = NULL;

        if (asprintf(&own, "%s.d", path) < 0)
                return -ENOMEM;
        if (strv_extend(&dirs, own) < 0)
                return -ENOMEM;
        /* The installed file's drop-ins also come from /run and /usr/lib, as
         * systemd's do; a file named with --config has its own alone. */
        if (streq(path, STANDBY_CONFIG_PATH) &&
            (strv_extend(&dirs, STANDBY_STATE_DIR "/standby.conf.d") < 0 || strv_extend(&dirs, STANDBY_CONFD_LIBDIR) < 0))
                return -ENOMEM;
        *ret = TAKE_PTR(dirs);
        return 0;
}

int config_load(const char *path, bool missing_ok, Config **ret, char **ret_error) {
        _cleanup_config_ Config *c = NULL;
        _cleanup_strv_free_ char **dirs = NULL, **dropins = NULL;
        _cleanup_free_ char *text = NULL;
        ParseState s = {};
        size_t size;
        int r;

        *ret_error = NULL;
        r = config_new_default(&c);
        if (r < 0)
                return r;
        s.config = c;
        /* Its Group= says who else may run the verbs: nobody but root may
         * have written it, nor any drop-in. */
        r = ini_file_read(path, "configuration file", true, &text, &size, ret_error);
        if (r == -ENOENT && missing_ok)
                *ret_error = mfree(*ret_error);
        else if (r < 0)
                return r;
        else if ((r = parse_into(&s, path, text, size, ret_error)) < 0)
                return r;

        r = config_dropin_dirs(path, &dirs);
        if (r < 0)
                return r;
        r = conf_files_list((const char * const *) dirs, ".conf", true, &dropins, ret_error);
        if (r < 0)
                return r;
        for (char **d = dropins; *d; d++) {
                text = mfree(text);
                r = ini_file_read(*d, "configuration drop-in", true, &text, &size, ret_error);
                if (r < 0)
                        return r;
                r = parse_into(&s, *d, text, size, ret_error);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(c);
        return 0;
}
