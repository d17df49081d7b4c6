/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <fcntl.h>
#include <libevdev/libevdev.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "ini-file.h"
#include "macro.h"
#include "rules.h"
#include "strv.h"
#include "unit-name.h"

static const char * const event_names[_EVENT_KIND_MAX] = {
        [EVENT_PUSH] = "push",         [EVENT_DBUS_SIGNAL] = "dbus-signal", [EVENT_DBUS_CALL] = "dbus-call",
        [EVENT_LINK] = "link",         [EVENT_ADDRESS] = "address",         [EVENT_SOCKET] = "socket",
        [EVENT_INPUT] = "input",       [EVENT_UEVENT] = "uevent",
};

const char *event_kind_to_string(EventKind k) {
        return k >= 0 && k < _EVENT_KIND_MAX ? event_names[k] : NULL;
}

EventKind event_kind_from_string(const char *s) {
        for (int i = 0; s && i < _EVENT_KIND_MAX; i++)
                if (streq(s, event_names[i]))
                        return (EventKind) i;
        return _EVENT_KIND_INVALID;
}

static void rule_done(Rule *r) {
        free(r->path);
        free(r->unit);
        free(r->match);
        free(r->bus_name);
        free(r->interface);
        free(r->change);
        free(r->device);
        free(r->subsystem);
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

/* Which [Match] keys each event takes. */
enum {
        K_UNIT = 1 << 0, K_MATCH = 1 << 1, K_BUSNAME = 1 << 2, K_INTERFACE = 1 << 3, K_FAMILY = 1 << 4,
        K_CHANGE = 1 << 5, K_DEVICE = 1 << 6, K_KEY = 1 << 7, K_SWITCH = 1 << 8, K_VALUE = 1 << 9,
        K_SUBSYSTEM = 1 << 10,
};

static const struct {
        const char *name;
        unsigned bit;
} match_keys[] = {
        { "Unit", K_UNIT },       { "Match", K_MATCH },   { "BusName", K_BUSNAME }, { "Interface", K_INTERFACE },
        { "Family", K_FAMILY },   { "Change", K_CHANGE }, { "Device", K_DEVICE },   { "Key", K_KEY },
        { "Switch", K_SWITCH },   { "Value", K_VALUE },   { "Subsystem", K_SUBSYSTEM },
};

static const unsigned allowed[_EVENT_KIND_MAX] = {
        [EVENT_PUSH] = K_UNIT,
        [EVENT_DBUS_SIGNAL] = K_MATCH,
        [EVENT_DBUS_CALL] = K_BUSNAME,
        [EVENT_LINK] = K_INTERFACE | K_CHANGE,
        [EVENT_ADDRESS] = K_INTERFACE | K_FAMILY | K_CHANGE,
        [EVENT_SOCKET] = K_UNIT,
        [EVENT_INPUT] = K_DEVICE | K_KEY | K_SWITCH | K_VALUE,
        [EVENT_UEVENT] = K_SUBSYSTEM | K_CHANGE,
};

static const char * const changes[_EVENT_KIND_MAX] = {
        [EVENT_LINK] = "up down carrier",
        [EVENT_ADDRESS] = "added removed",
        [EVENT_UEVENT] = "add remove change",
};

typedef struct ParseState {
        IniFile ini;
        Rule rule;
        unsigned seen;            /* K_* bits set */
        int key_line[16];         /* line of each K_* key, by bit index */
        int event_line, thaw_line;
        bool seen_event, seen_thaw, seen_for;
        bool any_key;      /* a file of comments only holds no rule */
} ParseState;

static int bit_index(unsigned bit) {
        return __builtin_ctz(bit);
}

static int handle_match(ParseState *s, const char *name, const char *value) {
        Rule *r = &s->rule;

        if (streq(name, "Event")) {
                r->event = event_kind_from_string(value);
                if (r->event == _EVENT_KIND_INVALID)
                        return ini_file_fail(&s->ini, s->ini.line, "Event=%s: expected one of push, dbus-signal, dbus-call, link, "
                                       "address, socket, input, uevent", value);
                s->seen_event = true;
                s->event_line = s->ini.line;
                return 1;
        }

        unsigned bit = 0;
        for (size_t i = 0; i < ELEMENTSOF(match_keys); i++)
                if (streq(name, match_keys[i].name))
                        bit = match_keys[i].bit;
        if (!bit)
                return ini_file_fail(&s->ini, s->ini.line, "unknown key \"%s\" in [Match]", name);
        s->seen |= bit;
        s->key_line[bit_index(bit)] = s->ini.line;

        int q = 0;
        switch (bit) {
        case K_UNIT:
                if (!unit_name_is_valid(value))
                        return ini_file_fail(&s->ini, s->ini.line, "Unit=%s: expected a unit name such as mail-sync.service", value);
                q = free_and_strdup(&r->unit, value);
                break;
        case K_MATCH:
                if (!*value)
                        return ini_file_fail(&s->ini, s->ini.line, "Match=: expected a D-Bus match rule such as "
                                       "\"type='signal',interface='org.example.Push'\"");
                q = free_and_strdup(&r->match, value);
                break;
        case K_BUSNAME:
                if (!*value || strchr(value, ' '))
                        return ini_file_fail(&s->ini, s->ini.line, "BusName=%s: expected a bus name such as org.example.Mail", value);
                q = free_and_strdup(&r->bus_name, value);
                break;
        case K_INTERFACE:
                if (!*value || strlen(value) >= 16 || strchr(value, '/') || strchr(value, ' '))
                        return ini_file_fail(&s->ini, s->ini.line, "Interface=%s: expected a network interface name (at most 15 "
                                       "bytes, no '/' or space)", value);
                q = free_and_strdup(&r->interface, value);
                break;
        case K_FAMILY:
                if (streq(value, "ipv4"))
                        r->family = AF_INET;
                else if (streq(value, "ipv6"))
                        r->family = AF_INET6;
                else
                        return ini_file_fail(&s->ini, s->ini.line, "Family=%s: expected \"ipv4\" or \"ipv6\"", value);
                break;
        case K_CHANGE:
                q = free_and_strdup(&r->change, value);
                break;
        case K_DEVICE:
                if (!*value)
                        return ini_file_fail(&s->ini, s->ini.line, "Device=: expected a device name or a /dev/input path");
                q = free_and_strdup(&r->device, value);
                break;
        case K_KEY:
        case K_SWITCH: {
                int type = bit == K_KEY ? EV_KEY : EV_SW;
                int code = libevdev_event_code_from_name((unsigned) type, value);
                if (code < 0)
                        return ini_file_fail(&s->ini, s->ini.line, "%s=%s: expected an evdev %s name such as %s", name, value,
                                       bit == K_KEY ? "key" : "switch", bit == K_KEY ? "KEY_POWER" : "SW_LID");
                r->key_type = type;
                r->key_code = code;
                break;
        }
        case K_VALUE:
                if (streq(value, "0") || streq(value, "1") || streq(value, "2"))
                        r->value = value[0] - '0';
                else
                        return ini_file_fail(&s->ini, s->ini.line, "Value=%s: expected 0 (released/off), 1 (pressed/on) or 2 (repeat)",
                                       value);
                break;
        case K_SUBSYSTEM:
                q = free_and_strdup(&r->subsystem, value);
                break;
        }
        if (q < 0)
                return ini_file_fail(&s->ini, s->ini.line, "out of memory");
        return 1;
}

static int handle_action(ParseState *s, const char *name, const char *value) {
        Rule *r = &s->rule;

        if (streq(name, "Thaw")) {
                _cleanup_strv_free_ char **words = NULL;
                if (strv_split_words(value, &words) < 0)
                        return ini_file_fail(&s->ini, s->ini.line, "out of memory");
                if (!words[0]) { /* an empty assignment resets the list */
                        strv_free(r->thaw);
                        r->thaw = NULL;
                        return 1;
                }
                for (char **w = words; *w; w++) {
                        if (!unit_name_is_valid(*w))
                                return ini_file_fail(&s->ini, s->ini.line, "Thaw=: \"%s\" is not a unit name", *w);
                        if (strv_extend(&r->thaw, *w) < 0)
                                return ini_file_fail(&s->ini, s->ini.line, "out of memory");
                }
                s->seen_thaw = true;
                s->thaw_line = s->ini.line;
        } else if (streq(name, "For")) {
                usec_t t;
                if (streq(value, "standby"))
                        t = USEC_INFINITY;
                else if (parse_duration(value, &t) < 0 || t == 0)
                        return ini_file_fail(&s->ini, s->ini.line, "For=%s: expected a duration such as \"30s\", or \"standby\" "
                                       "(until standby ends)", value);
                r->duration = t;
                s->seen_for = true;
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

/* After the whole file: what the event needs, and what it does not take. */
static void validate(void *userdata) {
        ParseState *s = userdata;
        Rule *r = &s->rule;

        if (!s->any_key)
                return; /* comments only: no rule, no error */

        if (!s->seen_event) {
                ini_file_fail(&s->ini, 0, "no Event= in [Match]");
                return;
        }
        for (size_t i = 0; i < ELEMENTSOF(match_keys); i++) {
                unsigned bit = match_keys[i].bit;
                if ((s->seen & bit) && !(allowed[r->event] & bit)) {
                        ini_file_fail(&s->ini, s->key_line[bit_index(bit)], "%s= does not apply to Event=%s", match_keys[i].name,
                                event_kind_to_string(r->event));
                        return;
                }
        }
        if (r->change) {
                _cleanup_strv_free_ char **ok = NULL;
                if (strv_split_words(changes[r->event], &ok) >= 0 && !strv_contains(ok, r->change)) {
                        ini_file_fail(&s->ini, s->key_line[bit_index(K_CHANGE)], "Change=%s: Event=%s expects one of: %s",
                                r->change, event_kind_to_string(r->event), changes[r->event]);
                        return;
                }
        }
        if (r->event == EVENT_DBUS_SIGNAL && !r->match)
                ini_file_fail(&s->ini, s->event_line, "Event=dbus-signal needs Match=");
        else if (r->event == EVENT_DBUS_CALL && !r->bus_name)
                ini_file_fail(&s->ini, s->event_line, "Event=dbus-call needs BusName=");
        else if (r->event == EVENT_SOCKET && !r->unit)
                ini_file_fail(&s->ini, s->event_line, "Event=socket needs Unit= (whose sockets to watch)");
        else if (r->event == EVENT_INPUT && (s->seen & K_KEY) && (s->seen & K_SWITCH))
                ini_file_fail(&s->ini, s->key_line[bit_index(K_SWITCH)], "Event=input takes Key= or Switch=, not both");
        else if (r->event == EVENT_INPUT && r->key_type < 0)
                ini_file_fail(&s->ini, s->event_line, "Event=input needs Key= or Switch=");
        else if (!r->thaw && !r->exit_standby)
                ini_file_fail(&s->ini, 0, "[Action] needs Thaw= or ExitStandby=yes");
        else if (s->seen_for && !r->thaw)
                ini_file_fail(&s->ini, 0, "For= needs Thaw=");
}

int rules_parse_file(RuleSet *set, const char *path, bool check_owner, char **ret_error) {
        _cleanup_fclose_ FILE *f = NULL;
        ParseState s = { .ini.path = path };
        struct stat st;
        int r;

        *ret_error = NULL;
        f = fopen(path, "re");
        if (!f) {
                r = negative_errno();
                if (asprintf(ret_error, "%s: cannot open: %s", path, strerror(-r)) < 0)
                        *ret_error = NULL;
                return r;
        }
        if (fstat(fileno(f), &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode)) {
                if (asprintf(ret_error, "%s: not a regular file", path) < 0)
                        *ret_error = NULL;
                return -EINVAL;
        }
        if (check_owner && (st.st_uid != 0 || (st.st_mode & S_IWOTH))) {
                if (asprintf(ret_error, "%s: refused: rule files must be owned by root and not writable by others "
                             "(owner uid %u, mode %04o)", path, (unsigned) st.st_uid, (unsigned) (st.st_mode & 07777)) < 0)
                        *ret_error = NULL;
                return -EPERM;
        }

        s.ini.file = f;
        s.rule = (Rule) { .event = _EVENT_KIND_INVALID, .key_type = -1, .value = -1, .duration = USEC_INFINITY };
        r = ini_file_parse(&s.ini, handler, &s, validate, ret_error);
        if (r < 0) {
                rule_done(&s.rule);
                return r;
        }
        if (!s.any_key) {
                rule_done(&s.rule);
                return 0; /* an example file with everything commented out */
        }

        Rule *nr = realloc(set->rules, (set->n_rules + 1) * sizeof(Rule));
        if (!nr || !(s.rule.path = strdup(path))) {
                if (nr)
                        set->rules = nr;
                rule_done(&s.rule);
                return -ENOMEM;
        }
        set->rules = nr;
        set->rules[set->n_rules++] = s.rule;
        return 0;
}

static int cmp_basename(const void *a, const void *b) {
        const char *x = strrchr(*(char * const *) a, '/'), *y = strrchr(*(char * const *) b, '/');
        return strcmp(x ? x + 1 : *(char * const *) a, y ? y + 1 : *(char * const *) b);
}

int rules_enumerate(const char * const *dirs, char ***ret_paths) {
        _cleanup_strv_free_ char **paths = NULL, **names = NULL;
        int r;

        if (strv_split_words("", &paths) < 0 || strv_split_words("", &names) < 0)
                return -ENOMEM;
        for (const char * const *d = dirs; *d; d++) {
                _cleanup_closedir_ DIR *dir = opendir(*d);
                struct dirent *de;

                if (!dir) {
                        if (errno == ENOENT)
                                continue;
                        return negative_errno();
                }
                while ((de = readdir(dir))) {
                        size_t n = strlen(de->d_name);
                        char *p;

                        if (de->d_name[0] == '.' || n < 6 || !streq(de->d_name + n - 5, ".rule"))
                                continue;
                        if (strv_contains(names, de->d_name))
                                continue; /* overridden by a higher-priority directory */
                        r = strv_extend(&names, de->d_name);
                        if (r < 0)
                                return r;
                        if (asprintf(&p, "%s/%s", *d, de->d_name) < 0)
                                return -ENOMEM;
                        r = strv_consume(&paths, p);
                        if (r < 0)
                                return r;
                }
        }
        qsort(paths, strv_length(paths), sizeof(char *), cmp_basename);
        *ret_paths = TAKE_PTR(paths);
        return 0;
}

int rules_load(const char * const *dirs, bool check_owner, RuleSet **ret, char **ret_error) {
        _cleanup_rule_set_ RuleSet *set = calloc(1, sizeof(RuleSet));
        _cleanup_strv_free_ char **paths = NULL;
        int r;

        *ret_error = NULL;
        if (!set)
                return -ENOMEM;
        r = rules_enumerate(dirs, &paths);
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
        char *s = NULL, dur[32] = "";
        _cleanup_free_ char *what = NULL, *thaw = NULL;
        int q = 0;

        switch (r->event) {
        case EVENT_PUSH:
                q = asprintf(&what, "on a D-Bus push%s%s", r->unit ? " for " : "", r->unit ?: "");
                break;
        case EVENT_DBUS_SIGNAL:
                q = asprintf(&what, "on the D-Bus signal %s", r->match);
                break;
        case EVENT_DBUS_CALL:
                q = asprintf(&what, "on a method call to %s", r->bus_name);
                break;
        case EVENT_LINK:
        case EVENT_ADDRESS:
        case EVENT_UEVENT:
                q = asprintf(&what, "on %s %s%s%s%s%s", event_kind_to_string(r->event), r->change ?: "any change",
                             r->interface ? " of " : "", r->interface ?: "",
                             r->family ? (r->family == AF_INET ? " (ipv4)" : " (ipv6)") : "",
                             r->subsystem ? r->subsystem : "");
                break;
        case EVENT_SOCKET:
                q = asprintf(&what, "on socket activity of %s", r->unit);
                break;
        case EVENT_INPUT:
                q = asprintf(&what, "on %s%s%s%s", libevdev_event_code_get_name((unsigned) r->key_type,
                                                                                (unsigned) r->key_code) ?: "?",
                             r->value >= 0 ? (r->value == 1 ? " pressed/on" : r->value == 0 ? " released/off" : " repeat") : "",
                             r->device ? " from " : "", r->device ?: "");
                break;
        default:
                return NULL;
        }
        if (q < 0)
                return NULL;
        for (char **t = r->thaw; t && *t; t++) {
                char *n = NULL;
                if (asprintf(&n, "%s%s%s", thaw ?: "", thaw ? " " : "", *t) < 0)
                        return NULL;
                free(thaw);
                thaw = n;
        }
        if (r->thaw)
                snprintf(dur, sizeof(dur), "%s", r->duration == USEC_INFINITY ? "until standby ends" : "for ");
        char tb[32];
        if (r->thaw && r->duration != USEC_INFINITY)
                strncat(dur, format_duration(tb, sizeof(tb), r->duration), sizeof(dur) - strlen(dur) - 1);
        if (asprintf(&s, "%s: %s: %s%s%s%s%s", r->path, what, thaw ? "thaw " : "", thaw ?: "", thaw ? " " : "", dur,
                     r->exit_standby ? (thaw ? ", then end standby" : "end standby") : "") < 0)
                return NULL;
        return s;
}
