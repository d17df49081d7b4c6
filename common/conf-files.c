/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf-files.h"
#include "ini-file.h"
#include "macro.h"
#include "strv.h"

typedef struct ConfFile {
        char *name;
        size_t dir;  /* index in dirs: lower is higher priority */
        bool masked; /* a symbolic link to /dev/null */
} ConfFile;

static int conf_file_cmp(const void *a, const void *b) {
        const ConfFile *x = a, *y = b;
        int c = strcmp(x->name, y->name);
        return c != 0 ? c : x->dir < y->dir ? -1 : x->dir > y->dir;
}

/* Only a link whose target is exactly /dev/null masks, as in systemd; any
 * other link is taken as a file, and the reader refuses it (it opens
 * without following links), so a link cannot point a root daemon at a
 * file somewhere else. */
static bool is_mask(int dir_fd, const char *name) {
        char target[sizeof("/dev/null")];
        struct stat st;

        if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(st.st_mode))
                return false;
        ssize_t n = readlinkat(dir_fd, name, target, sizeof(target));
        return n == (ssize_t) strlen("/dev/null") && memcmp(target, "/dev/null", (size_t) n) == 0;
}

static void conf_files_free(ConfFile *files, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(files[i].name);
        free(files);
}

int conf_files_list(const char * const *dirs, const char *suffix, bool check_owner, char ***ret_paths,
                    char **ret_error) {
        ConfFile *files = NULL;
        size_t n_files = 0, n_allocated = 0, suffix_len = strlen(suffix);
        _cleanup_strv_free_ char **paths = NULL;
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
                if (check_owner && (r = ini_file_check_dir(fd, dirs[d], ret_error)) < 0)
                        break;
                dir = fdopendir(fd);
                if (!dir) {
                        r = negative_errno();
                        break;
                }
                int dir_fd = TAKE_FD(fd); /* dir owns it now */
                while ((de = readdir(dir))) {
                        size_t n = strlen(de->d_name);

                        if (de->d_name[0] == '.' || n <= suffix_len || !streq(de->d_name + n - suffix_len, suffix))
                                continue;
                        if (!GROW_ARRAY(files, n_allocated, n_files + 1) || !(files[n_files].name = strdup(de->d_name))) {
                                r = -ENOMEM;
                                break;
                        }
                        files[n_files].dir = d;
                        files[n_files].masked = is_mask(dir_fd, de->d_name);
                        n_files++;
                }
        }
        /* Sorted by name, then priority: the first of each name decides. */
        if (r >= 0) {
                if (n_files > 0) /* qsort() takes no NULL, even for nothing */
                        qsort(files, n_files, sizeof(ConfFile), conf_file_cmp);
                paths = calloc(n_files + 1, sizeof(char *));
                if (!paths)
                        r = -ENOMEM;
        }
        for (size_t i = 0; r >= 0 && i < n_files; i++) {
                if (i > 0 && streq(files[i].name, files[i - 1].name))
                        continue; /* overridden by a higher-priority directory */
                if (files[i].masked)
                        continue;
                if (asprintf(&paths[n_paths], "%s/%s", dirs[files[i].dir], files[i].name) < 0) {
                        paths[n_paths] = NULL;
                        r = -ENOMEM;
                } else
                        n_paths++;
        }
        conf_files_free(files, n_files);
        if (r < 0)
                return r;
        *ret_paths = TAKE_PTR(paths);
        return 0;
}
