/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

/* Configuration files in systemd's layout: *SUFFIX files in a list of
 * directories, highest priority first (/etc, /run, /usr/lib). A name found
 * in several directories is taken from the first only; a file of that name
 * that is a symbolic link to /dev/null masks it (no file of that name is
 * taken). The result is sorted by file name, whatever directory each came
 * from. A directory that does not exist is skipped; one that cannot be
 * opened is an error; when check_owner, each directory must be owned by
 * root and writable by nobody else (anyone who could write it could add,
 * remove or mask a file).
 *
 * Returns 0 with a NULL-terminated list of paths in *ret_paths (caller
 * frees, strv_free()), or a negative errno with "DIR: why" in *ret_error
 * (caller frees; may be NULL for -ENOMEM). */
int conf_files_list(const char * const *dirs, const char *suffix, bool check_owner, char ***ret_paths,
                    char **ret_error);
