/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>

#include "cgroup.h"
#include "fileio.h"
#include "macro.h"
#include "strv.h"
#include "unit-name.h"

#define UNIT_VALID_CHARS "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ:-_.\\"

static const char * const unit_types[] = {
        "service", "socket", "target", "device", "mount", "automount",
        "swap", "timer", "path", "slice", "scope",
};

bool unit_name_runs_processes(const char *name) {
        static const char * const processless[] = { ".timer", ".path", ".socket", ".target", ".device", ".automount" };
        const char *dot = strrchr(name, '.');

        for (size_t i = 0; dot && i < ELEMENTSOF(processless); i++)
                if (streq(dot, processless[i]))
                        return false;
        return true;
}

bool unit_name_is_valid(const char *name) {
        const char *dot, *at;
        size_t len;

        if (isempty(name))
                return false;
        len = strlen(name);
        if (len > UNIT_NAME_MAX)
                return false;

        dot = strrchr(name, '.');
        if (!dot || dot == name)
                return false;

        bool known = false;
        for (size_t i = 0; i < ELEMENTSOF(unit_types); i++)
                if (streq(dot + 1, unit_types[i]))
                        known = true;
        if (!known)
                return false;

        at = strchr(name, '@');
        if (at && at == name)
                return false;

        size_t prefix_len = (size_t) ((at ? at : dot) - name);
        if (strspn(name, UNIT_VALID_CHARS) < prefix_len)
                return false;
        if (at) {
                /* The instance may itself contain '@' and '.'; empty means a template. */
                size_t inst_len = (size_t) (dot - at - 1);
                if (strspn(at + 1, UNIT_VALID_CHARS "@") < inst_len)
                        return false;
        }
        return true;
}

int unit_slice_path(const char *slice, char **ret) {
        _cleanup_free_ char *path = NULL;
        size_t len;

        if (!unit_name_is_valid(slice) || strchr(slice, '@'))
                return -EINVAL;
        len = strlen(slice);
        if (len < 6 || !streq(slice + len - 6, ".slice"))
                return -EINVAL;
        if (streq(slice, "-.slice")) {
                path = strdup("");
                if (!path)
                        return -ENOMEM;
                *ret = TAKE_PTR(path);
                return 0;
        }
        size_t plen = len - 6;
        if (slice[0] == '-' || slice[plen - 1] == '-' || strstr(slice, "--"))
                return -EINVAL;

        /* Every dash-separated prefix is a parent slice. */
        for (size_t i = 0; i <= plen; i++) {
                if (i == plen || slice[i] == '-') {
                        char *np = NULL;
                        if (asprintf(&np, "%s%s%.*s.slice", path ? path : "", path ? "/" : "", (int) i, slice) < 0)
                                return -ENOMEM;
                        free(path);
                        path = np;
                }
        }
        *ret = TAKE_PTR(path);
        return 0;
}

static int find_named(int dir_fd, const char *rel, const char *name, unsigned depth, char ***found) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        int r;

        if (depth > 64)
                return 0;
        r = opendir_at(dir_fd, ".", &d);
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                _cleanup_close_ int child = -EBADF;
                _cleanup_free_ char *crel = NULL;

                if (de->d_type != DT_DIR || streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (asprintf(&crel, "%s%s%s", rel, *rel ? "/" : "", de->d_name) < 0)
                        return -ENOMEM;
                if (streq(de->d_name, name)) {
                        r = strv_extend(found, crel);
                        if (r < 0)
                                return r;
                        continue; /* a unit does not nest in itself */
                }
                child = openat(dir_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                if (child < 0)
                        continue;
                r = find_named(child, crel, name, depth + 1, found);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The cgroups named name in the subtree of scope (scope itself included). */
static int find_named_in(int root_fd, const char *scope, const char *name, char ***found) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (streq(unit_name_of_cgroup(scope), name))
                return strv_contains(*found, scope) ? 0 : strv_extend(found, scope);
        r = cgroup_open(root_fd, scope, &fd);
        if (r < 0)
                return r == -ENOENT || r == -ENOTDIR ? 0 : r;
        _cleanup_strv_free_ char **here = calloc(1, sizeof(char *));
        if (!here)
                return -ENOMEM;
        r = find_named(fd, scope, name, 0, &here);
        if (r < 0)
                return r;
        for (char **h = here; *h; h++)
                if (!strv_contains(*found, *h) && (r = strv_extend(found, *h)) < 0)
                        return r;
        return 0;
}

int unit_resolve_cgroup(int root_fd, char **scopes, const char *arg, char **ret) {
        _cleanup_strv_free_ char **found = NULL;
        _cleanup_close_ int fd = -EBADF;
        char *p;
        int r;

        if (!arg)
                return -EINVAL;

        /* A path, or a top-level cgroup name that is no unit name. */
        if (strchr(arg, '/') || (!unit_name_is_valid(arg) && cgroup_path_validate(arg) >= 0 && *arg)) {
                r = cgroup_open(root_fd, arg, &fd);
                if (r < 0)
                        return r;
                p = strdup(arg);
                if (!p)
                        return -ENOMEM;
                *ret = p;
                return 0;
        }

        if (!unit_name_is_valid(arg))
                return -EINVAL;

        if (strlen(arg) > 6 && streq(arg + strlen(arg) - 6, ".slice") && !strchr(arg, '@')) {
                _cleanup_free_ char *path = NULL;
                r = unit_slice_path(arg, &path);
                if (r < 0)
                        return r;
                r = cgroup_open(root_fd, path, &fd);
                if (r < 0)
                        return r;
                *ret = TAKE_PTR(path);
                return 0;
        }

        found = calloc(1, sizeof(char *));
        if (!found)
                return -ENOMEM;
        /* The scopes first: another user's or another container's unit of
         * the same name elsewhere in the tree does not make the name
         * ambiguous, nor is it what was meant. */
        for (char **s = scopes; s && *s; s++) {
                r = find_named_in(root_fd, *s, arg, &found);
                if (r < 0)
                        return r;
        }
        if (strv_length(found) == 0) {
                r = find_named(root_fd, "", arg, 0, &found);
                if (r < 0)
                        return r;
        }
        if (strv_length(found) == 0)
                return -ENOENT;
        if (strv_length(found) > 1)
                return -ENOTUNIQ;
        p = strdup(found[0]);
        if (!p)
                return -ENOMEM;
        *ret = p;
        return 0;
}

const char *unit_name_of_cgroup(const char *rel) {
        const char *s = strrchr(rel, '/');
        return s ? s + 1 : rel;
}
