/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#define DBUS_MATCH_MAX 1024

/* A bus name (well-known, or unique such as :1.42) as the D-Bus
 * specification defines it. */
bool dbus_bus_name_is_valid(const char *s);

/* Whether match is a D-Bus match rule for signals that both sd-bus and the
 * bus take as it is and that means what it says (see dbus-names.c): NULL,
 * or why not (static). */
const char *dbus_match_check(const char *match);

/* The value of key in match, a rule dbus_match_check() took: a new string,
 * or NULL when match has no such key (or out of memory). */
char *dbus_match_value(const char *match, const char *key);
