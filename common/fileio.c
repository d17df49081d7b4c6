/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include "fileio.h"
#include "macro.h"

#define READ_FULL_MAX (16U * 1024U * 1024U)

int read_full_fileat_max(int dirfd, const char *path, size_t max, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, alloc = 0;

        /* O_NONBLOCK and the type check: a FIFO (or a device) where a file
         * is expected must not hang the reader (exit, the listener). */
        fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return negative_errno();
        struct stat st;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (!S_ISREG(st.st_mode))
                return -EBADFD;

        /* procfs and kernfs report size 0, so read until EOF rather than
         * fstat. The buffer grows to max + 2 at most: max bytes, the NUL, and
         * one byte more that tells a file of exactly max bytes from a larger
         * one. */
        for (;;) {
                ssize_t n;

                if (alloc - size < 4096 && alloc < max + 2) {
                        size_t na = MIN(MAX(alloc * 2, (size_t) 4096), max + 2);
                        char *nb = realloc(buf, na);

                        if (!nb)
                                return -ENOMEM;
                        buf = nb;
                        alloc = na;
                }
                n = read(fd, buf + size, alloc - size - 1);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (n == 0)
                        break;
                size += (size_t) n;
                if (size > max)
                        return -EFBIG;
        }
        buf[size] = 0;
        if (ret_size)
                *ret_size = size;
        *ret = TAKE_PTR(buf);
        return 0;
}

int read_full_fileat(int dirfd, const char *path, char **ret, size_t *ret_size) {
        return read_full_fileat_max(dirfd, path, READ_FULL_MAX, ret, ret_size);
}

int read_one_lineat(int dirfd, const char *path, char **ret) {
        char *buf;
        int r;

        r = read_full_fileat(dirfd, path, &buf, NULL);
        if (r < 0)
                return r;
        buf[strcspn(buf, "\n")] = 0;
        *ret = buf;
        return 0;
}

int read_u64at(int dirfd, const char *path, uint64_t *ret) {
        _cleanup_free_ char *line = NULL;
        int r;

        r = read_one_lineat(dirfd, path, &line);
        if (r < 0)
                return r;
        return parse_u64(line, ret);
}

int opendir_at(int dir_fd, const char *path, DIR **ret) {
        int fd = openat(dir_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        DIR *d;

        if (fd < 0)
                return negative_errno();
        d = fdopendir(fd);
        if (!d) {
                int r = negative_errno();
                safe_close(fd);
                return r;
        }
        *ret = d;
        return 0;
}

int write_stringat(int dirfd, const char *path, const char *s) {
        _cleanup_close_ int fd = -EBADF;
        size_t len = strlen(s);
        ssize_t n;

        fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        n = write(fd, s, len);
        if (n < 0)
                return negative_errno();
        if ((size_t) n != len)
                return -EIO;
        return 0;
}

int parse_u64(const char *s, uint64_t *ret) {
        char *end;
        unsigned long long v;

        if (!s || !isdigit((unsigned char) *s))
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno == ERANGE)
                return -ERANGE;
        if (*end)
                return -EINVAL;
        *ret = v;
        return 0;
}

int parse_pid(const char *s, int *ret) {
        uint64_t v;
        int r;

        r = parse_u64(s, &v);
        if (r < 0)
                return r;
        if (v == 0 || v > INT_MAX)
                return -ERANGE;
        *ret = (int) v;
        return 0;
}
