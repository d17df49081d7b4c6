/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/stat.h>

#include "ini-file.h"
#include "strv.h"

#define INI_FILE_MAX (4U << 20)

int ini_file_fail(IniFile *ini, int line, const char *fmt, ...) {
        if (!ini->error) {
                va_list ap;
                va_start(ap, fmt);
                if (vasprintf(&ini->error, fmt, ap) < 0)
                        ini->error = NULL;
                va_end(ap);
                ini->error_line = line;
        }
        return 0;
}

static bool is_blank(char c) {
        return c == ' ' || c == '\t' || c == '\r';
}

static char *strip(char *s) {
        size_t n;

        while (is_blank(*s))
                s++;
        n = strlen(s);
        while (n > 0 && is_blank(s[n - 1]))
                s[--n] = 0;
        return s;
}

/* One line, NUL-terminated in place: 1 to go on, 0 on an error. */
static int parse_line(IniFile *ini, char *line, size_t len, char **section, char ***seen, IniHandler handler,
                      void *user) {
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char) line[i];
                /* '\r' before the newline is taken as a blank (CRLF files). */
                if ((c < 0x20 && c != '\t' && !(c == '\r' && i == len - 1)) || c == 0x7f)
                        return ini_file_fail(ini, ini->line, "%s (byte 0x%02x) where text was expected",
                                             c == 0 ? "a NUL byte" : "a control character", c);
        }

        char *s = strip(line);
        if (*s == 0 || *s == '#' || *s == ';')
                return 1;
        if (*s == '[') {
                size_t n = strlen(s);
                if (n < 3 || s[n - 1] != ']')
                        return ini_file_fail(ini, ini->line, "syntax error: expected \"[Section]\"");
                s[n - 1] = 0;
                *section = strip(s + 1);
                if (**section == 0 || strpbrk(*section, "[]"))
                        return ini_file_fail(ini, ini->line, "syntax error: expected \"[Section]\"");
                if (ini->sections_once) {
                        if (strv_contains(*seen, *section))
                                return ini_file_fail(ini, ini->line, "[%s] a second time: each section appears once in a file",
                                                     *section);
                        if (strv_extend(seen, *section) < 0)
                                return ini_file_fail(ini, ini->line, "out of memory");
                }
                return 1;
        }
        char *eq = strchr(s, '=');
        if (!eq || eq == s)
                return ini_file_fail(ini, ini->line, "syntax error: expected \"[Section]\" or \"Key=Value\"");
        *eq = 0;
        char *name = strip(s), *value = strip(eq + 1);
        if (handler(user, *section, name, value) != 0)
                return 1;
        if (!ini->error) /* a handler that forgot to say why */
                ini_file_fail(ini, ini->line, "%s=%s: invalid value", name, value);
        return 0;
}

int ini_file_parse(IniFile *ini, const char *text, size_t size, IniHandler handler, void *user,
                   void (*finish)(void *user), char **ret_error) {
        _cleanup_free_ char *copy = NULL;
        _cleanup_strv_free_ char **seen = NULL;
        char *section = (char *) "";
        int q;

        *ret_error = NULL;
        ini->line = 0;
        copy = malloc(size + 1);
        if (!copy)
                return -ENOMEM;
        if (size > 0)
                memcpy(copy, text, size);
        copy[size] = 0;

        size_t pos = 0;
        if (size >= 3 && memcmp(copy, "\xef\xbb\xbf", 3) == 0)
                pos = 3; /* a UTF-8 byte order mark */
        while (pos < size) {
                char *line = copy + pos, *nl = memchr(line, '\n', size - pos);
                size_t len = nl ? (size_t) (nl - line) : size - pos;

                line[len] = 0;
                pos += len + 1;
                ini->line++;
                if (!parse_line(ini, line, len, &section, &seen, handler, user))
                        break;
        }
        if (!ini->error && finish)
                finish(user);
        if (!ini->error)
                return 0;

        if (ini->error_line == 0)
                q = asprintf(ret_error, "%s: %s", ini->path, ini->error);
        else
                q = asprintf(ret_error, "%s:%d: %s", ini->path, ini->error_line, ini->error);
        if (q < 0)
                *ret_error = NULL;
        ini->error = mfree(ini->error);
        return -EINVAL;
}

static int fail_path(char **ret_error, int r, const char *fmt, ...) _printf_(3, 4);
static int fail_path(char **ret_error, int r, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(ret_error, fmt, ap) < 0)
                *ret_error = NULL;
        va_end(ap);
        return r;
}

static int check_owner_mode(const struct stat *st, const char *path, const char *what, char **ret_error) {
        if (st->st_uid == 0 && !(st->st_mode & (S_IWGRP | S_IWOTH)))
                return 0;
        return fail_path(ret_error, -EPERM,
                         "%s: refused: a %s must be owned by root and writable by root alone (owner uid %u, mode %04o)",
                         path, what, (unsigned) st->st_uid, (unsigned) (st->st_mode & 07777));
}

int ini_file_check_dir(int fd, const char *path, char **ret_error) {
        struct stat st;

        *ret_error = NULL;
        if (fstat(fd, &st) < 0) {
                int r = negative_errno();
                return fail_path(ret_error, r, "%s: %s", path, strerror(-r));
        }
        return check_owner_mode(&st, path, "directory of rule files", ret_error);
}

int ini_file_read(const char *path, const char *what, bool check_owner, char **ret_text, size_t *ret_size,
                  char **ret_error) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        size_t size = 0;
        int r;

        *ret_error = NULL;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
        if (fd < 0) {
                r = negative_errno();
                if (r == -ELOOP)
                        return fail_path(ret_error, r, "%s: refused: a symbolic link (name the file itself)", path);
                return fail_path(ret_error, r, "%s: cannot open: %s", path, strerror(-r));
        }
        if (fstat(fd, &st) < 0) {
                r = negative_errno();
                return fail_path(ret_error, r, "%s: %s", path, strerror(-r));
        }
        if (!S_ISREG(st.st_mode))
                return fail_path(ret_error, -EINVAL, "%s: refused: not a regular file", path);
        if (check_owner) {
                r = check_owner_mode(&st, path, what, ret_error);
                if (r < 0)
                        return r;
        }
        if ((uint64_t) st.st_size > INI_FILE_MAX)
                return fail_path(ret_error, -EFBIG, "%s: refused: larger than %u bytes", path, INI_FILE_MAX);

        buf = malloc((size_t) st.st_size + 1);
        if (!buf)
                return -ENOMEM;
        /* Up to the size fstat gave: a file that grows meanwhile is read
         * as it was, one that shrinks as it is. */
        while (size < (size_t) st.st_size) {
                ssize_t n = read(fd, buf + size, (size_t) st.st_size - size);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        r = negative_errno();
                        return fail_path(ret_error, r, "%s: cannot read: %s", path, strerror(-r));
                }
                if (n == 0)
                        break;
                size += (size_t) n;
        }
        buf[size] = 0;
        *ret_text = TAKE_PTR(buf);
        *ret_size = size;
        return 0;
}
