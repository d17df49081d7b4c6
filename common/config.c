/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>

#include "config.h"
#include "fileio.h"
#include "ini-file.h"
#include "macro.h"
#include "strv.h"

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
        free(c);
        return NULL;
}

typedef struct ParseState {
        IniFile ini;
        Config *config;
        bool seen_targets, seen_exempt;
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

/* A list key: the first assignment in the file replaces the default, later
 * ones append, and an empty assignment clears the list (as in systemd). */
static int parse_list(const char *v, char ***list, bool *seen) {
        _cleanup_strv_free_ char **words = NULL;
        int r;

        r = strv_split_words(v, &words);
        if (r < 0)
                return r;
        if (!*seen || words[0] == NULL) {
                strv_free(*list);
                *list = strv_split_words("", list) < 0 ? NULL : *list;
                if (!*list)
                        return -ENOMEM;
                *seen = true;
        }
        for (char **w = words; *w; w++) {
                r = strv_extend(list, *w);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int handler(void *user, const char *section, const char *name, const char *value) {
        ParseState *s = user;
        Config *c = s->config;
        int r;

        if (!streq(section, "Standby"))
                return ini_file_fail(&s->ini, s->ini.line, "unknown section [%s], expected [Standby]", section);

        if (streq(name, "Targets"))
                r = parse_list(value, &c->targets, &s->seen_targets);
        else if (streq(name, "Exempt"))
                r = parse_list(value, &c->exempt, &s->seen_exempt);
        else if (streq(name, "Strategy")) {
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
                if (!strneq(value, "unix:", 5))
                        return ini_file_fail(&s->ini, s->ini.line, "SystemdAddress=%s: expected a D-Bus address such as "
                                             "\"unix:path=/run/user/1000/systemd/private\"", value);
                r = free_and_strdup(&c->systemd_address, value);
        } else if (streq(name, "Group"))
                r = free_and_strdup(&c->group, isempty(value) ? NULL : value);
        else
                return ini_file_fail(&s->ini, s->ini.line, "unknown key \"%s\" in [%s]", name, section);

        if (r < 0)
                return ini_file_fail(&s->ini, s->ini.line, "out of memory");
        return 1;
}

int config_load(const char *path, bool missing_ok, Config **ret, char **ret_error) {
        _cleanup_config_ Config *c = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        ParseState s = { .ini.path = path };
        int r;

        *ret_error = NULL;
        r = config_new_default(&c);
        if (r < 0)
                return r;

        f = fopen(path, "re");
        if (!f) {
                if (errno == ENOENT && missing_ok) {
                        *ret = TAKE_PTR(c);
                        return 0;
                }
                r = negative_errno();
                if (asprintf(ret_error, "%s: cannot open: %s", path, strerror(-r)) < 0)
                        *ret_error = NULL;
                return r;
        }

        s.config = c;
        s.ini.file = f;
        r = ini_file_parse(&s.ini, handler, &s, NULL, ret_error);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(c);
        return 0;
}
