/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "wake-record.h"

static const char *const kind_names[_WAKE_KIND_MAX] = {
        [WAKE_THAW] = "thaw",
        [WAKE_END] = "end",
        [WAKE_EXIT] = "exit",
};

const char *wake_kind_to_string(WakeKind k) {
        return k >= 0 && k < _WAKE_KIND_MAX ? kind_names[k] : NULL;
}

WakeKind wake_kind_from_string(const char *s) {
        for (int k = 0; s && k < _WAKE_KIND_MAX; k++)
                if (strcmp(kind_names[k], s) == 0)
                        return k;
        return _WAKE_KIND_INVALID;
}

void wake_record_done(WakeRecord *w) {
        if (!w)
                return;
        free(w->source);
        free(w->rule);
        free(w->cause);
        free(w->units);
        *w = (WakeRecord){};
}

void wake_records_free(WakeRecord *w, size_t n) {
        for (size_t i = 0; w && i < n; i++)
                wake_record_done(&w[i]);
        free(w);
}

int wake_record_dir_open(int state_fd, bool create, int *ret_fd) {
        int fd;

        if (create && mkdirat(state_fd, WAKE_RECORD_DIR, 0700) < 0 && errno != EEXIST)
                return -errno;
        fd = openat(state_fd, WAKE_RECORD_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        *ret_fd = fd;
        return 0;
}

/* An escaped byte: 4 for \xHH, 2 for \\, else 1. */
static size_t escaped_len(unsigned char c) {
        return c < 0x20 || c == 0x7f ? 4 : c == '\\' ? 2 : 1;
}

size_t kv_append(char *buf, size_t len, size_t max, const char *key, const char *value, size_t max_value) {
        size_t used = 0;
        int n;

        if (!value || max == 0 || len + 1 >= max)
                return len;
        n = snprintf(buf + len, max - len, "%s%s=", len > 0 ? "\t" : "", key);
        if (n < 0 || (size_t) n >= max - len) {
                buf[len] = '\0';
                return len;
        }
        len += (size_t) n;
        for (const unsigned char *p = (const unsigned char *) value; *p; p++) {
                size_t e = escaped_len(*p);
                /* Room for this byte, and for the "..." that says cut. */
                bool last_fits = p[1] == '\0';
                if (used + e + (last_fits ? 0 : 3) > max_value || len + e + (last_fits ? 0 : 3) >= max) {
                        if (len + 3 < max && used + 3 <= max_value) {
                                memcpy(buf + len, "...", 3);
                                len += 3;
                        }
                        break;
                }
                if (e == 4)
                        snprintf(buf + len, 5, "\\x%02x", *p);
                else if (e == 2)
                        memcpy(buf + len, "\\\\", 2);
                else
                        buf[len] = (char) *p;
                len += e;
                used += e;
        }
        buf[len] = '\0';
        return len;
}

static int unhex(char c) {
        return c >= '0' && c <= '9'   ? c - '0'
               : c >= 'a' && c <= 'f' ? c - 'a' + 10
               : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                      : -1;
}

int kv_get(const char *line, const char *key, char **ret) {
        size_t k = strlen(key);

        for (const char *p = line; p && *p; p = strchr(p, '\t'), p = p ? p + 1 : NULL) {
                if (strncmp(p, key, k) != 0 || p[k] != '=')
                        continue;
                const char *v = p + k + 1, *end = v + strcspn(v, "\t\n");
                char *s = malloc((size_t) (end - v) + 1), *o = s;
                if (!s)
                        return -ENOMEM;
                while (v < end) {
                        if (v[0] == '\\' && v + 1 < end && v[1] == '\\') {
                                *o++ = '\\';
                                v += 2;
                        } else if (v[0] == '\\' && end - v >= 4 && v[1] == 'x' && unhex(v[2]) >= 0 &&
                                   unhex(v[3]) >= 0) {
                                *o++ = (char) (unhex(v[2]) << 4 | unhex(v[3]));
                                v += 4;
                        } else
                                *o++ = *v++;
                }
                *o = '\0';
                free(*ret); /* set by an earlier line: the last one read stands */
                *ret = s;
                return 0;
        }
        return -ENOENT;
}

int kv_get_u64(const char *line, const char *key, uint64_t *ret) {
        _cleanup_free_ char *s = NULL;
        int r = kv_get(line, key, &s);
        return r < 0 ? r : parse_u64(s, ret);
}

size_t wake_record_format(const WakeRecord *w, char *buf, size_t max) {
        char num[3][24];
        size_t len = 0;

        snprintf(num[0], sizeof(num[0]), "%" PRIu64, w->seq);
        snprintf(num[1], sizeof(num[1]), "%" PRIu64, w->realtime);
        len = kv_append(buf, len, max, "seq", num[0], 24);
        len = kv_append(buf, len, max, "t", num[1], 24);
        len = kv_append(buf, len, max, "kind", wake_kind_to_string(w->kind), 8);
        snprintf(num[0], sizeof(num[0]), "%" PRIu64, w->took);
        snprintf(num[1], sizeof(num[1]), "%" PRIu64, w->duration);
        len = kv_append(buf, len, max, "took", num[0], 24);
        len = kv_append(buf, len, max, "dur", num[1], 24);
        if (w->kind == WAKE_END) {
                snprintf(num[2], sizeof(num[2]), "%" PRIu64, w->cpu);
                len = kv_append(buf, len, max, "cpu", num[2], 24);
                snprintf(num[2], sizeof(num[2]), "%" PRIu64, w->wakeups);
                len = kv_append(buf, len, max, "wakeups", num[2], 24);
        }
        len = kv_append(buf, len, max, "source", w->source, 24);
        len = kv_append(buf, len, max, "rule", w->rule, 96);
        len = kv_append(buf, len, max, "cause", w->cause, 160);
        /* The units take what is left. */
        return kv_append(buf, len, max, "units", w->units, max);
}

int wake_record_parse(const char *line, WakeRecord *ret) {
        _cleanup_free_ char *kind = NULL;
        WakeRecord w = {};
        int r;

        if (kv_get_u64(line, "seq", &w.seq) < 0 || kv_get_u64(line, "t", &w.realtime) < 0 ||
            kv_get(line, "kind", &kind) < 0)
                return -EINVAL;
        w.kind = wake_kind_from_string(kind);
        if (w.kind < 0)
                return -EINVAL;
        (void) kv_get_u64(line, "took", &w.took);
        (void) kv_get_u64(line, "dur", &w.duration);
        (void) kv_get_u64(line, "cpu", &w.cpu);
        (void) kv_get_u64(line, "wakeups", &w.wakeups);
        /* Every field asked for, each one absent or read. */
        r = 0;
        static const char * const keys[] = { "source", "rule", "cause", "units" };
        char **fields[] = { &w.source, &w.rule, &w.cause, &w.units };
        for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                if (kv_get(line, keys[i], fields[i]) == -ENOMEM)
                        r = -ENOMEM;
        if (r < 0) {
                wake_record_done(&w);
                return r;
        }
        *ret = w;
        return 0;
}

int wake_record_append(int dir_fd, const WakeRecord *w) {
        char slot[WAKE_RECORD_SLOT];
        size_t len;
        int fd;
        ssize_t n;

        len = wake_record_format(w, slot, sizeof(slot) - 1);
        /* Padded with NULs, so that a shorter record leaves nothing of an
         * older one, and a reader stops at its end. */
        memset(slot + len, 0, sizeof(slot) - 1 - len);
        slot[sizeof(slot) - 1] = '\n';
        fd = openat(dir_fd, WAKE_RECORD_FILE, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return -errno;
        n = pwrite(fd, slot, sizeof(slot), (off_t) (w->seq % WAKE_RECORD_SLOTS) * WAKE_RECORD_SLOT);
        int r = n < 0 ? -errno : (size_t) n != sizeof(slot) ? -EIO : 0;
        close(fd);
        return r;
}

static int cmp_seq(const void *a, const void *b) {
        const WakeRecord *x = a, *y = b;
        return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int wake_record_read_all(int dir_fd, WakeRecord **ret, size_t *ret_n, uint64_t *ret_dropped) {
        _cleanup_free_ char *data = NULL;
        WakeRecord *w = NULL;
        size_t size = 0, n = 0;
        uint64_t top = 0;
        int r;

        r = read_full_fileat_max(dir_fd, WAKE_RECORD_FILE, (size_t) WAKE_RECORD_SLOT * WAKE_RECORD_SLOTS, &data, &size);
        if (r < 0)
                return r;
        w = calloc(size / WAKE_RECORD_SLOT + 1, sizeof(WakeRecord));
        if (!w)
                return -ENOMEM;
        for (size_t off = 0; off + WAKE_RECORD_SLOT <= size; off += WAKE_RECORD_SLOT) {
                data[off + WAKE_RECORD_SLOT - 1] = '\0';
                if (wake_record_parse(data + off, &w[n]) < 0)
                        continue; /* a slot never written (a hole reads as zeros) */
                top = MAX(top, w[n].seq + 1);
                n++;
        }
        qsort(w, n, sizeof(WakeRecord), cmp_seq);
        *ret = w;
        *ret_n = n;
        if (ret_dropped)
                *ret_dropped = top - n;
        return 0;
}

int wake_record_next_seq(int dir_fd, uint64_t *ret) {
        WakeRecord *w = NULL;
        size_t n = 0;
        int r = wake_record_read_all(dir_fd, &w, &n, NULL);

        if (r == -ENOENT) {
                *ret = 0;
                return 0;
        }
        if (r < 0)
                return r;
        *ret = n > 0 ? w[n - 1].seq + 1 : 0;
        wake_records_free(w, n);
        return 0;
}

int wake_record_remove(int dir_fd) {
        return unlinkat(dir_fd, WAKE_RECORD_FILE, 0) < 0 && errno != ENOENT ? -errno : 0;
}
