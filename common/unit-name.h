/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

/* systemd unit names and how they map to cgroups. */

#define UNIT_NAME_MAX 255

/* True for "prefix.type" and "prefix@instance.type" as systemd accepts them:
 * at most 255 bytes, prefix of [A-Za-z0-9:_.\-\\], a known unit type. */
bool unit_name_is_valid(const char *name);

/* False for the unit types that never hold processes of their own (a timer,
 * a path, a socket, a target, a device, an automount): thawing one thaws
 * nothing; the service it starts is what runs. */
bool unit_name_runs_processes(const char *name);

/* For a slice, the cgroup path systemd gives it: "a-b.slice" ->
 * "a.slice/a-b.slice"; "-.slice" -> "". -EINVAL for a malformed slice name. */
int unit_slice_path(const char *slice, char **ret);

/* Resolves a unit name or a cgroup path (anything with a '/', relative to the
 * cgroup2 mount; also a top-level name that is no unit name) to an existing
 * cgroup rel path. A unit name other than a slice is looked up as a cgroup of
 * that name in the subtrees of scopes (cgroup rel paths, may be NULL) first,
 * and only when none holds it anywhere in the tree.
 * -EINVAL: neither a valid unit name nor a safe path; -ENOENT: no such cgroup;
 * -ENOTUNIQ: the name matches several cgroups in the scopes, or (none there)
 * in the tree (give the path instead). */
int unit_resolve_cgroup(int root_fd, char **scopes, const char *name_or_path, char **ret);

/* The last component of a cgroup path: the unit name, where systemd made it. */
const char *unit_name_of_cgroup(const char *rel);
