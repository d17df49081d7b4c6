/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>

/* All small-file I/O on procfs, cgroupfs and the state directory goes through
 * here: one seam, O_CLOEXEC|O_NOFOLLOW always. dirfd may be AT_FDCWD. */

/* Reads the whole file (at most 16 MiB) into a NUL-terminated buffer the caller
 * frees. Returns 0, or a negative errno (-EFBIG when larger, -EISDIR for a
 * directory, -EBADFD for anything else that is not a regular file: a FIFO is
 * never waited on). */
int read_full_fileat(int dirfd, const char *path, char **ret, size_t *ret_size);
/* The same, at most max bytes: a file of exactly max bytes is read, one
 * byte more is -EFBIG. */
int read_full_fileat_max(int dirfd, const char *path, size_t max, char **ret, size_t *ret_size);

/* Reads the first line, without its newline. */
int read_one_lineat(int dirfd, const char *path, char **ret);

/* Reads the first line as an unsigned decimal number. -EINVAL if it is not one. */
int read_u64at(int dirfd, const char *path, uint64_t *ret);

/* Writes s in a single write(2) to an existing file, as kernfs and procfs want
 * it. Returns 0 or a negative errno (the kernel's verdict on the value). */
int write_stringat(int dirfd, const char *path, const char *s);

/* Opens path below dir_fd ("." for dir_fd itself) as a directory stream of its
 * own: a new open file description, so that its read offset is not shared
 * with dir_fd (a dup would share it, and a second walk would see nothing).
 * Does not follow a final symlink. */
int opendir_at(int dir_fd, const char *path, DIR **ret);

/* Parses an unsigned decimal number, the whole string. -EINVAL, -ERANGE. */
int parse_u64(const char *s, uint64_t *ret);
int parse_pid(const char *s, int *ret);
