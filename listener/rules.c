/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <fcntl.h>
#include <libevdev/libevdev.h>
#include <linux/major.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

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


/* D-Bus names, as the D-Bus specification defines them: elements of
 * [A-Za-z0-9_] (bus names: also '-'), separated by '.', at most 255 bytes. */
#define DBUS_NAME_MAX 255

static bool dbus_element_char(char c, bool dash) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
               (dash && c == '-');
}

/* At least min_elements elements, none empty; digits may begin one only when
 * digit_first (unique names). */
static bool dbus_dotted_is_valid(const char *s, bool dash, bool digit_first, unsigned min_elements) {
        unsigned n = 0;
        size_t len = strlen(s);

        if (len == 0 || len > DBUS_NAME_MAX)
                return false;
        for (const char *p = s;;) {
                size_t k = 0;
                while (dbus_element_char(p[k], dash)) {
                        if (k == 0 && !digit_first && p[k] >= '0' && p[k] <= '9')
                                return false;
                        k++;
                }
                if (k == 0)
                        return false;
                n++;
                p += k;
                if (*p == 0)
                        break;
                if (*p != '.')
                        return false;
                p++;
        }
        return n >= min_elements;
}

static bool dbus_bus_name_is_valid(const char *s) {
        if (s[0] == ':')
                return strlen(s) <= DBUS_NAME_MAX && dbus_dotted_is_valid(s + 1, true, true, 2);
        return dbus_dotted_is_valid(s, true, false, 2);
}

static bool dbus_interface_is_valid(const char *s) {
        return dbus_dotted_is_valid(s, false, false, 2);
}

static bool dbus_member_is_valid(const char *s) {
        return dbus_dotted_is_valid(s, false, false, 1) && !strchr(s, '.');
}

static bool dbus_object_path_is_valid(const char *s) {
        if (s[0] != '/')
                return false;
        if (s[1] == 0)
                return true;
        for (const char *p = s + 1;;) {
                size_t k = 0;
                while (dbus_element_char(p[k], false))
                        k++;
                if (k == 0)
                        return false;
                p += k;
                if (*p == 0)
                        return true;
                if (*p != '/')
                        return false;
                p++;
        }
}

/* A D-Bus match rule (the specification's "Match Rules") that both sd-bus
 * (which parses it first, in sd_bus_add_match()) and the bus will take as it
 * is, and that means what it says: every value quoted, keys from the
 * specification that sd-bus knows (not eavesdrop), each at most once, each
 * value valid for its key; spaces only before a key (sd-bus takes no blank
 * between a closing quote and the comma). No escapes: an apostrophe or a
 * backslash in a value is refused, so that no value can end its quotes
 * early. Returns NULL, or why not (static). */
#define DBUS_MATCH_MAX 1024
static const char *dbus_match_check(const char *match) {
        bool seen_type = false, seen_sender = false, seen_interface = false, seen_member = false,
             seen_path = false, seen_destination = false;
        uint64_t args = 0;
        unsigned n = 0;

        if (strlen(match) > DBUS_MATCH_MAX)
                return "longer than the bus takes (1024 bytes)";
        for (const char *p = match;;) {
                p += strspn(p, " ");
                if (*p == 0)
                        return n == 0 ? "expected at least one key='value'" : "a comma at the end";
                size_t klen = strcspn(p, "=");
                if (p[klen] != '=' || p[klen + 1] != '\'')
                        return "expected key='value'";
                const char *v = p + klen + 2, *end = strpbrk(v, "'\\");
                if (!end || *end == '\\')
                        return "a value holds a backslash or lacks its closing quote (values may not hold quotes)";
                char key[32], value[DBUS_MATCH_MAX + 1];
                if (klen == 0 || klen >= sizeof(key))
                        return "expected key='value'";
                memcpy(key, p, klen);
                key[klen] = 0;
                memcpy(value, v, (size_t) (end - v));
                value[end - v] = 0;
                p = end + 1;
                n++;
                bool more = *p == ',';
                if (more)
                        p++;
                else if (*p != 0)
                        return "expected ',' right after each closing quote";

                bool *seen = NULL, ok = true;
                if (streq(key, "type")) {
                        seen = &seen_type;
                        if (!streq(value, "signal"))
                                return "type= must be 'signal' for Event=dbus-signal";
                } else if (streq(key, "sender") || streq(key, "destination")) {
                        seen = key[0] == 's' ? &seen_sender : &seen_destination;
                        ok = dbus_bus_name_is_valid(value);
                } else if (streq(key, "interface")) {
                        seen = &seen_interface;
                        ok = dbus_interface_is_valid(value);
                } else if (streq(key, "member")) {
                        seen = &seen_member;
                        ok = dbus_member_is_valid(value);
                } else if (streq(key, "path") || streq(key, "path_namespace")) {
                        seen = &seen_path; /* the bus refuses both together */
                        ok = dbus_object_path_is_valid(value);
                } else if (strneq(key, "arg", 3) && key[3] >= '0' && key[3] <= '9') {
                        char *e;
                        unsigned long i = strtoul(key + 3, &e, 10);
                        if (i > 63 || (key[3] == '0' && key[4] >= '0' && key[4] <= '9'))
                                return "argN: N must be 0 to 63";
                        if (streq(e, "namespace")) {
                                if (i != 0)
                                        return "only arg0 takes \"namespace\"";
                                ok = dbus_dotted_is_valid(value, true, false, 1);
                        } else if (!streq(e, "") && !streq(e, "path"))
                                return "unknown key (expected type, sender, interface, member, path, path_namespace, "
                                       "destination, argN, argNpath, arg0namespace)";
                        if (args & (UINT64_C(1) << i))
                                return "a key, or two argN keys of the same N, given twice";
                        args |= UINT64_C(1) << i;
                } else
                        return "unknown key (expected type, sender, interface, member, path, path_namespace, "
                               "destination, argN, argNpath, arg0namespace)";
                if (seen) {
                        if (*seen)
                                return "a key, or two argN keys of the same N, given twice";
                        *seen = true;
                }
                if (!ok)
                        return "a value is not valid for its key (a bus, interface or member name, or an object path, "
                               "as the D-Bus specification defines them)";
                if (!more)
                        return NULL;
        }
}

/* A network interface name as the kernel takes it (dev_valid_name()). */
static bool ifname_is_valid(const char *s) {
        size_t n = strlen(s);
        return n > 0 && n < 16 && !streq(s, ".") && !streq(s, "..") && !strpbrk(s, "/: \t");
}

/* Device=: an absolute path in normal form, or an evdev device name. */
static bool device_is_valid(const char *s) {
        if (*s == 0 || strlen(s) > 4096)
                return false;
        if (s[0] != '/')
                return true;
        for (const char *p = s; *p; p++)
                if (p[0] == '/' && (p[1] == '/' || p[1] == 0 || (p[1] == '.' && (p[2] == '/' || p[2] == 0)) ||
                                    (p[1] == '.' && p[2] == '.' && (p[3] == '/' || p[3] == 0))))
                        return false;
        return true;
}

/* Device= as a path: what the listener can watch. A path that does not
 * exist (yet: devices come and go) is left to the listener; one that exists
 * and is neither a FIFO nor a device of the kernel's input major (13:
 * evdev's /dev/input/event*, whatever a udev rule names them) can never be
 * watched, and would fail the listener's start. Judged by stat alone: opening
 * a character device can have effects (a watchdog starts counting). */
static bool device_is_watchable(const char *path) {
        struct stat st;

        if (path[0] != '/' || stat(path, &st) < 0)
                return true;
        return S_ISFIFO(st.st_mode) || (S_ISCHR(st.st_mode) && major(st.st_rdev) == INPUT_MAJOR);
}

/* Subsystem=: a kernel subsystem name (usb, power_supply, ...). */
static bool subsystem_is_valid(const char *s) {
        size_t n = strlen(s);
        return n > 0 && n <= 64 && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.:") == n;
}

typedef struct ParseState {
        IniFile ini;
        Rule rule;
        unsigned seen;            /* K_* bits set */
        int key_line[16];         /* line of each K_* key, by bit index */
        int event_line, thaw_line;
        bool seen_event, seen_thaw, seen_for;
        bool any_key;      /* a file of comments only holds no rule */
        size_t n_thaw, thaw_allocated; /* rule.thaw's length and room: appending stays linear */
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
        case K_MATCH: {
                const char *why = dbus_match_check(value);
                if (why)
                        return ini_file_fail(&s->ini, s->ini.line, "Match=%s: %s; expected a D-Bus match rule such as "
                                       "\"type='signal',interface='org.example.Push'\"", value, why);
                q = free_and_strdup(&r->match, value);
                break;
        }
        case K_BUSNAME:
                if (!dbus_bus_name_is_valid(value))
                        return ini_file_fail(&s->ini, s->ini.line, "BusName=%s: expected a D-Bus bus name such as "
                                             "org.example.Mail (or a unique name such as :1.42)", value);
                q = free_and_strdup(&r->bus_name, value);
                break;
        case K_INTERFACE:
                if (!ifname_is_valid(value))
                        return ini_file_fail(&s->ini, s->ini.line, "Interface=%s: expected a network interface name (at most 15 "
                                       "bytes, no '/', ':' or space, not \".\" or \"..\")", value);
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
                if (!device_is_valid(value))
                        return ini_file_fail(&s->ini, s->ini.line, "Device=%s: expected a device name or an absolute path "
                                             "such as /dev/input/event3 (no \".\", \"..\" or empty components)", value);
                if (!device_is_watchable(value))
                        return ini_file_fail(&s->ini, s->ini.line, "Device=%s: neither an input event device nor a "
                                             "FIFO, so it cannot be watched", value);
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
                if (!subsystem_is_valid(value))
                        return ini_file_fail(&s->ini, s->ini.line, "Subsystem=%s: expected a kernel subsystem name such as "
                                             "usb or power_supply", value);
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

int rules_parse_buffer(RuleSet *set, const char *path, const char *text, size_t size, char **ret_error) {
        ParseState s = { .ini.path = path };
        int r;

        *ret_error = NULL;
        s.rule = (Rule) { .event = _EVENT_KIND_INVALID, .key_type = -1, .value = -1, .duration = USEC_INFINITY };
        r = ini_file_parse(&s.ini, text, size, handler, &s, validate, ret_error);
        if (r < 0) {
                rule_done(&s.rule);
                return r;
        }
        if (!s.any_key) {
                rule_done(&s.rule);
                return 0; /* an example file with everything commented out */
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

typedef struct RuleFile {
        char *name;
        size_t dir;          /* index in dirs: lower is higher priority */
} RuleFile;

static int rule_file_cmp(const void *a, const void *b) {
        const RuleFile *x = a, *y = b;
        int c = strcmp(x->name, y->name);
        return c != 0 ? c : x->dir < y->dir ? -1 : x->dir > y->dir;
}

int rules_enumerate(const char * const *dirs, bool check_owner, char ***ret_paths, char **ret_error) {
        RuleFile *files = NULL;
        size_t n_files = 0, n_allocated = 0;
        char **paths = NULL;
        size_t n_paths = 0;
        int r = 0;

        *ret_error = NULL;
        for (size_t d = 0; dirs[d] && r >= 0; d++) {
                _cleanup_closedir_ DIR *dir = NULL;
                _cleanup_close_ int fd = open(dirs[d], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                struct dirent *de;

                if (fd < 0) {
                        if (errno == ENOENT)
                                continue;
                        r = negative_errno();
                        if (asprintf(ret_error, "%s: cannot open: %s", dirs[d], strerror(-r)) < 0)
                                *ret_error = NULL;
                        break;
                }
                /* Anyone who may write the directory could drop a file into it
                 * that fails the whole set, or remove a rule. */
                if (check_owner && (r = ini_file_check_dir(fd, dirs[d], ret_error)) < 0)
                        break;
                dir = fdopendir(fd);
                if (!dir) {
                        r = negative_errno();
                        break;
                }
                fd = -EBADF; /* dir owns it now */
                while ((de = readdir(dir))) {
                        size_t n = strlen(de->d_name);

                        if (de->d_name[0] == '.' || n < 6 || !streq(de->d_name + n - 5, ".rule"))
                                continue;
                        if (!GROW_ARRAY(files, n_allocated, n_files + 1) || !(files[n_files].name = strdup(de->d_name))) {
                                r = -ENOMEM;
                                break;
                        }
                        files[n_files++].dir = d;
                }
        }
        /* Sorted by name, then priority: the first of each name wins. */
        if (r >= 0) {
                if (n_files > 0) /* qsort() takes no NULL, even for nothing */
                        qsort(files, n_files, sizeof(RuleFile), rule_file_cmp);
                paths = calloc(n_files + 1, sizeof(char *));
                if (!paths)
                        r = -ENOMEM;
        }
        for (size_t i = 0; r >= 0 && i < n_files; i++) {
                if (i > 0 && streq(files[i].name, files[i - 1].name))
                        continue; /* overridden by a higher-priority directory */
                if (asprintf(&paths[n_paths], "%s/%s", dirs[files[i].dir], files[i].name) < 0) {
                        paths[n_paths] = NULL;
                        r = -ENOMEM;
                } else
                        n_paths++;
        }
        for (size_t i = 0; i < n_files; i++)
                free(files[i].name);
        free(files);
        if (r < 0) {
                strv_free(paths);
                return r;
        }
        *ret_paths = paths;
        return 0;
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
                snprintf(dur, sizeof(dur), "%s", r->duration == USEC_INFINITY ? "until standby ends" : "for ");
        char tb[32];
        if (r->thaw && r->duration != USEC_INFINITY)
                strncat(dur, format_duration(tb, sizeof(tb), r->duration), sizeof(dur) - strlen(dur) - 1);
        if (asprintf(&s, "%s: %s: %s%s%s%s%s", r->path, what, thaw ? "thaw " : "", thaw ?: "", thaw ? " " : "", dur,
                     r->exit_standby ? (thaw ? ", then end standby" : "end standby") : "") < 0)
                return NULL;
        return s;
}
