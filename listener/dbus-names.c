/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* D-Bus names and match rules as rule files give them, checked before
 * sd-bus or the bus sees them. */
#include <stdint.h>
#include <stdlib.h>

#include "dbus-names.h"
#include "macro.h"

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

bool dbus_bus_name_is_valid(const char *s) {
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
const char *dbus_match_check(const char *match) {
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


char *dbus_match_value(const char *match, const char *key) {
        size_t n = strlen(key);

        for (const char *p = match;;) {
                p += strspn(p, " ");
                const char *v = strchr(p, '=');
                if (!v || v[1] != '\'')
                        return NULL;
                const char *end = strchr(v + 2, '\'');
                if (!end)
                        return NULL;
                if ((size_t) (v - p) == n && strneq(p, key, n))
                        return strndup(v + 2, (size_t) (end - v - 2));
                if (end[1] != ',')
                        return NULL;
                p = end + 2;
        }
}
