/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Ownership helpers in the style of systemd's: a variable marked _cleanup_xxx_
 * is released when it goes out of scope; TAKE_PTR/TAKE_FD hand ownership on. */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _noreturn_ __attribute__((noreturn))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* Makes room in *p, an array of *cap elements of size bytes, for need
 * elements; doubles so that appending n elements costs O(n). */
static inline bool grow_array(void **p, size_t *cap, size_t need, size_t size) {
        if (need <= *cap)
                return true;
        size_t nc = MAX(need, *cap ? *cap * 2 : 8);
        void *np = reallocarray(*p, nc, size);
        if (!np)
                return false;
        *p = np;
        *cap = nc;
        return true;
}
#define GROW_ARRAY(p, cap, need) grow_array((void **) &(p), &(cap), (need), sizeof(*(p)))

#define TAKE_PTR(p)                          \
        ({                                   \
                __typeof__(p) _p_ = (p);     \
                (p) = NULL;                  \
                _p_;                         \
        })

#define TAKE_FD(fd)                          \
        ({                                   \
                int _fd_ = (fd);             \
                (fd) = -EBADF;               \
                _fd_;                        \
        })

static inline void *mfree(void *p) {
        free(p);
        return NULL;
}

static inline void freep(void *p) {
        free(*(void **) p);
}

static inline int safe_close(int fd) {
        if (fd >= 0) {
                int saved = errno;
                close(fd);
                errno = saved;
        }
        return -EBADF;
}

static inline void closep(int *fd) {
        safe_close(*fd);
}

static inline void fclosep(FILE **f) {
        if (*f)
                fclose(*f);
}

static inline void closedirp(DIR **d) {
        if (*d)
                closedir(*d);
}

/* A NULL-terminated array of strings, owned with each element. */
static inline char **strv_free(char **l) {
        if (l)
                for (char **i = l; *i; i++)
                        free(*i);
        free(l);
        return NULL;
}

static inline void strv_freep(char ***l) {
        strv_free(*l);
}

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)
#define _cleanup_closedir_ _cleanup_(closedirp)
#define _cleanup_strv_free_ _cleanup_(strv_freep)

#define streq(a, b) (strcmp((a), (b)) == 0)
#define strneq(a, b, n) (strncmp((a), (b), (n)) == 0)
#define isempty(s) (!(s) || !*(s))
#define strna(s) ((s) ? (s) : "n/a")

/* errno as a negative return value, never 0 (a failed call that forgot errno). */
static inline int negative_errno(void) {
        return errno > 0 ? -errno : -EIO;
}
