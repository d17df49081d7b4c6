/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "cgroup.h"
#include "fileio.h"
#include "journal.h"
#include "macro.h"
#include "strv.h"

static const char * const phase_names[_JOURNAL_PHASE_MAX] = {
        [JOURNAL_NONE] = "none",
        [JOURNAL_ENTERING] = "entering",
        [JOURNAL_ACTIVE] = "active",
        [JOURNAL_EXITING] = "exiting",
};

static const char * const unit_state_names[_UNIT_STATE_MAX] = {
        [UNIT_FREEZING] = "freezing",
        [UNIT_FROZEN] = "frozen",
        [UNIT_THAWED] = "thawed",
        [UNIT_SKIPPED] = "skipped",
        [UNIT_LOCKHOLDER] = "lock-holder",
        [UNIT_SLACKED] = "slacked",
        [UNIT_LEFT] = "left",
};

const char *journal_phase_to_string(JournalPhase p) {
        return p >= 0 && p < _JOURNAL_PHASE_MAX ? phase_names[p] : NULL;
}

const char *unit_state_to_string(UnitState s) {
        return s >= 0 && s < _UNIT_STATE_MAX ? unit_state_names[s] : NULL;
}

Journal *journal_new(void) {
        Journal *j = calloc(1, sizeof(Journal));
        if (j)
                j->strategy = STRATEGY_FREEZE;
        return j;
}

Journal *journal_free(Journal *j) {
        if (!j)
                return NULL;
        for (size_t i = 0; i < j->n_units; i++) {
                free(j->units[i].cgroup);
                free(j->units[i].reason);
                free(j->units[i].systemd);
        }
        free(j->units);
        free(j->threads);
        strv_free(j->errors);
        free(j);
        return NULL;
}

int journal_add_unit(Journal *j, const char *cgroup, UnitState state, const char *reason) {
        JournalUnit *nu;
        char *c, *r = NULL;

        c = strdup(cgroup);
        if (reason)
                r = strdup(reason);
        if (!c || (reason && !r))
                goto oom;
        nu = realloc(j->units, (j->n_units + 1) * sizeof(JournalUnit));
        if (!nu)
                goto oom;
        j->units = nu;
        j->units[j->n_units++] = (JournalUnit) { .cgroup = c, .state = state, .reason = r, .held_uid = JOURNAL_NOT_HELD };
        return 0;
oom:
        free(c);
        free(r);
        return -ENOMEM;
}

/* Whether cgroup lies at or below the account named by prefix's first len bytes. */
static bool below_account(const char *cgroup, const char *prefix, size_t len) {
        return strneq(cgroup, prefix, len) && (cgroup[len] == 0 || cgroup[len] == '/');
}

int journal_add_held_unit(Journal *j, const char *cgroup, uid_t uid, size_t account_len, UnitState state,
                          const char *reason) {
        size_t line = JOURNAL_HELD_LINE_SIZE(cgroup), all = line, users = line, own = line;
        int r;

        if (account_len > strlen(cgroup))
                return -EINVAL;
        /* Counted anew each time from the units themselves: the journal is
         * read again at every lock, and a unit gone or thawed for good
         * gives its room back. A user's share is counted by where the units
         * lie, not by the uid recorded: that uid is whatever the delegation
         * root's owner was, which its user may change (common/cgroup.h).
         * Each unit's line is measured once: a listener adds thousands in
         * one transaction. */
        for (size_t i = 0; i < j->n_units; i++) {
                JournalUnit *u = &j->units[i];
                if (u->held_uid == JOURNAL_NOT_HELD)
                        continue;
                if (u->held_size == 0)
                        u->held_size = JOURNAL_HELD_LINE_SIZE(u->cgroup);
                size_t n = u->held_size;
                all += n;
                if (u->held_uid != 0)
                        users += n;
                if (account_len > 0 && below_account(u->cgroup, cgroup, account_len))
                        own += n;
        }
        if (all > JOURNAL_HELD_BUDGET ||
            (account_len > 0 && (users > JOURNAL_HELD_USERS_BUDGET || own > JOURNAL_HELD_UID_BUDGET)))
                return -EDQUOT;
        r = journal_add_unit(j, cgroup, state, reason);
        if (r < 0)
                return r;
        j->units[j->n_units - 1].held_uid = uid;
        return 0;
}

JournalUnit *journal_find_unit(Journal *j, const char *cgroup) {
        /* Callers walk the units in the journal's order, loop after loop over
         * a hundred or more: where the last was found, and the one after,
         * come first, which makes such a walk linear instead of quadratic. */
        for (size_t i = j->find_hint; i < j->n_units && i < j->find_hint + 2; i++)
                if (streq(j->units[i].cgroup, cgroup)) {
                        j->find_hint = i;
                        return &j->units[i];
                }
        for (size_t i = 0; i < j->n_units; i++)
                if (streq(j->units[i].cgroup, cgroup)) {
                        j->find_hint = i;
                        return &j->units[i];
                }
        return NULL;
}

void journal_remove_unit(Journal *j, JournalUnit *u) {
        size_t i = (size_t) (u - j->units);

        free(u->cgroup);
        free(u->reason);
        free(u->systemd);
        memmove(j->units + i, j->units + i + 1, (j->n_units - i - 1) * sizeof(JournalUnit));
        j->n_units--;
}

int journal_unit_set_reason(JournalUnit *u, const char *reason) {
        char *r = NULL;

        if (reason) {
                r = strdup(reason);
                if (!r)
                        return -ENOMEM;
        }
        free(u->reason);
        u->reason = r;
        return 0;
}

int journal_add_thread(Journal *j, pid_t tid, uint64_t starttime, uint64_t original_ns) {
        JournalThread *nt = realloc(j->threads, (j->n_threads + 1) * sizeof(JournalThread));
        if (!nt)
                return -ENOMEM;
        j->threads = nt;
        j->threads[j->n_threads++] = (JournalThread) { tid, starttime, original_ns };
        return 0;
}

JournalThread *journal_find_thread(Journal *j, pid_t tid) {
        for (size_t i = 0; i < j->n_threads; i++)
                if (j->threads[i].tid == tid)
                        return &j->threads[i];
        return NULL;
}

bool journal_is_empty(const Journal *j) {
        return j->phase == JOURNAL_NONE && j->n_units == 0 && j->n_threads == 0;
}

int journal_dir_open(const char *dir, bool create, int *ret_fd) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        if (create && mkdir(dir, 0700) < 0 && errno != EEXIST)
                return negative_errno();
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        /* Someone else's directory, or one others may write to, could have a
         * journal planted in it (or the journal swapped under us). */
        if (st.st_uid != 0 && st.st_uid != geteuid())
                return -EPERM;
        if (st.st_mode & (S_IWGRP | S_IWOTH))
                return -EACCES;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int journal_lock(int dir_fd, int operation, int *ret_lock_fd) {
        int fd = openat(dir_fd, JOURNAL_LOCK_FILE, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return negative_errno();
        while (flock(fd, operation) < 0) {
                if (errno == EINTR)
                        continue;
                int r = negative_errno();
                safe_close(fd);
                return r;
        }
        *ret_lock_fd = fd;
        return 0;
}

/* Paths and reasons are single tokens: every byte that is not printable
 * ASCII, the space and '\' are written as \xNN, so any name the kernel
 * allows (bytes 1-255) reads back exactly; an empty or absent string is
 * "\-". */
static void fput_escaped(FILE *f, const char *s) {
        if (isempty(s)) {
                fputs("\\-", f);
                return;
        }
        /* Runs of plain characters in one fwrite: a character at a time
         * takes the stream's lock per character, once per unit per save. */
        for (const unsigned char *p = (const unsigned char *) s; *p;) {
                size_t n = 0;
                while (p[n] > 0x20 && p[n] < 0x7f && p[n] != '\\')
                        n++;
                if (n > 0) {
                        fwrite(p, 1, n, f);
                        p += n;
                        continue;
                }
                fprintf(f, "\\x%02x", *p++);
        }
}

size_t journal_escaped_size(const char *s) {
        size_t n = 0;

        if (isempty(s))
                return 2;
        for (const unsigned char *p = (const unsigned char *) s; *p; p++)
                n += *p > 0x20 && *p < 0x7f && *p != '\\' ? 1 : 4;
        return n;
}

static int hexval(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* The reverse of fput_escaped(), strict: only what it writes is taken. */
static int unescape(const char *s, size_t len, char **ret) {
        _cleanup_free_ char *out = NULL;
        char *w;

        if (len == 2 && s[0] == '\\' && s[1] == '-') {
                *ret = NULL;
                return 0;
        }
        if (len == 0)
                return -EBADMSG;
        out = w = malloc(len + 1);
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < len;) {
                unsigned char c = (unsigned char) s[i];
                if (c == '\\') {
                        int hi, lo;
                        if (len - i < 4 || s[i + 1] != 'x' || (hi = hexval(s[i + 2])) < 0 ||
                            (lo = hexval(s[i + 3])) < 0 || (hi | lo) == 0)
                                return -EBADMSG;
                        *w++ = (char) (hi << 4 | lo);
                        i += 4;
                } else if (c > 0x20 && c < 0x7f) {
                        *w++ = (char) c;
                        i++;
                } else
                        return -EBADMSG;
        }
        *w = 0;
        *ret = TAKE_PTR(out);
        return 0;
}

int journal_format(const Journal *j, char **ret, size_t *ret_size) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        fprintf(f, "standby-journal 1\n");
        fprintf(f, "phase %s\n", journal_phase_to_string(j->phase));
        fprintf(f, "strategy %s\n", strategy_to_string(j->strategy));
        fprintf(f, "since %" PRIu64 "\n", j->since);
        fprintf(f, "slack-ns %" PRIu64 "\n", j->slack_ns);
        if (j->per_unit)
                fprintf(f, "per-unit yes\n");
        for (size_t i = 0; i < j->n_units; i++) {
                const JournalUnit *u = &j->units[i];
                fprintf(f, "unit %s %" PRIu64 " ", unit_state_to_string(u->state), u->thaw_until);
                fput_escaped(f, u->cgroup);
                fputc(' ', f);
                fput_escaped(f, u->reason);
                if (u->systemd) {
                        fputs(" systemd ", f);
                        fput_escaped(f, u->systemd);
                }
                if (u->held_uid != JOURNAL_NOT_HELD)
                        fprintf(f, " held %" PRIu32, (uint32_t) u->held_uid);
                if (u->slack_ns != 0)
                        fprintf(f, " slack %" PRIu64, u->slack_ns);
                fputc('\n', f);
        }
        for (size_t i = 0; i < j->n_threads; i++)
                fprintf(f, "thread %d %" PRIu64 " %" PRIu64 "\n", (int) j->threads[i].tid,
                        j->threads[i].starttime, j->threads[i].original_ns);
        fprintf(f, "end\n");
        if (fclose(f) != 0 || !buf)
                return -ENOMEM;
        if (size > JOURNAL_SIZE_MAX)
                return -EFBIG;
        *ret = TAKE_PTR(buf);
        if (ret_size)
                *ret_size = size;
        return 0;
}

int journal_save(int dir_fd, const Journal *j) {
        _cleanup_free_ char *buf = NULL;
        _cleanup_close_ int fd = -EBADF;
        size_t size = 0;
        int r;

        if (journal_is_empty(j))
                return journal_remove(dir_fd);

        r = journal_format(j, &buf, &size);
        if (r < 0)
                return r;

        (void) unlinkat(dir_fd, JOURNAL_FILE ".tmp", 0);
        fd = openat(dir_fd, JOURNAL_FILE ".tmp", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return negative_errno();
        for (size_t done = 0; done < size;) {
                ssize_t n = write(fd, buf + done, size - done);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        r = n < 0 ? negative_errno() : -EIO;
                        goto fail;
                }
                done += (size_t) n;
        }
        /* No fsync: the journal guards against a crash of standby's processes,
         * which loses nothing in the page cache; after a kernel crash or power
         * loss no cgroup is frozen anymore, so a lost journal loses nothing.
         * rename() alone makes the switch atomic for every reader. close()
         * reports what a delayed write found (a full disk on NFS, say). */
        if (close(TAKE_FD(fd)) < 0) {
                r = negative_errno();
                goto fail;
        }
        if (renameat(dir_fd, JOURNAL_FILE ".tmp", dir_fd, JOURNAL_FILE) < 0) {
                r = negative_errno();
                goto fail;
        }
        return 0;
fail:
        (void) unlinkat(dir_fd, JOURNAL_FILE ".tmp", 0);
        return r;
}

int journal_remove(int dir_fd) {
        if (unlinkat(dir_fd, JOURNAL_FILE, 0) < 0 && errno != ENOENT)
                return negative_errno();
        return 0;
}

_printf_(3, 4) static int journal_error(Journal *j, size_t line, const char *fmt, ...) {
        _cleanup_free_ char *what = NULL, *msg = NULL;
        va_list ap;
        int k;

        j->n_errors++;
        if (strv_length(j->errors) >= JOURNAL_ERRORS_KEPT)
                return 0;
        va_start(ap, fmt);
        k = vasprintf(&what, fmt, ap);
        va_end(ap);
        if (k < 0)
                return -ENOMEM;
        if (line > 0 ? asprintf(&msg, "line %zu: %s", line, what) < 0 : !(msg = strdup(what)))
                return -ENOMEM;
        return strv_consume(&j->errors, TAKE_PTR(msg));
}

#define TOKENS_MAX 11

typedef struct Token {
        const char *p;
        size_t len;
} Token;

/* Splits a line at single spaces; -E2BIG beyond max tokens, -EBADMSG for an
 * empty token (two spaces, or one at either end). */
static int tokenize(const char *line, size_t len, Token *tok, size_t max, size_t *ret_n) {
        size_t n = 0;

        for (size_t i = 0;;) {
                const char *sp = memchr(line + i, ' ', len - i);
                size_t l = sp ? (size_t) (sp - line) - i : len - i;

                if (l == 0)
                        return -EBADMSG;
                if (n == max)
                        return -E2BIG;
                tok[n++] = (Token) { line + i, l };
                if (!sp)
                        break;
                i += l + 1;
        }
        *ret_n = n;
        return 0;
}

static bool token_is(const Token *t, const char *s) {
        return t->len == strlen(s) && memcmp(t->p, s, t->len) == 0;
}

static int token_u64(const Token *t, uint64_t *ret) {
        char buf[24];

        if (t->len == 0 || t->len >= sizeof(buf))
                return -EBADMSG;
        memcpy(buf, t->p, t->len);
        buf[t->len] = 0;
        return parse_u64(buf, ret) < 0 ? -EBADMSG : 0;
}

static int token_lookup(const Token *t, const char * const *names, int n) {
        for (int i = 0; i < n; i++)
                if (names[i] && token_is(t, names[i]))
                        return i;
        return -1;
}

/* One line after the header. Returns 0 when taken, -EBADMSG (with the reason
 * in *ret_why, static) when not, -ENOMEM. */
static int parse_line(Journal *j, const char *line, size_t len, bool *seen, const char **ret_why) {
        Token tok[TOKENS_MAX];
        size_t n;
        uint64_t x, y, z;
        int r;

        r = tokenize(line, len, tok, ELEMENTSOF(tok), &n);
        if (r < 0) {
                *ret_why = r == -E2BIG ? "too many fields" : "an empty field (a stray space)";
                return -EBADMSG;
        }
#define WHY(s)                          \
        do {                            \
                *ret_why = (s);         \
                return -EBADMSG;        \
        } while (0)

        if (token_is(&tok[0], "per-unit")) {
                if (n != 2 || !token_is(&tok[1], "yes"))
                        WHY("expected: per-unit yes");
                if (seen[4])
                        WHY("given twice");
                j->per_unit = seen[4] = true;
                return 0;
        }
        if (token_is(&tok[0], "phase") || token_is(&tok[0], "strategy") || token_is(&tok[0], "since") ||
            token_is(&tok[0], "slack-ns")) {
                int k = token_is(&tok[0], "phase") ? 0 : token_is(&tok[0], "strategy") ? 1 : token_is(&tok[0], "since") ? 2 : 3;
                if (n != 2)
                        WHY("expected one value");
                if (seen[k])
                        WHY("given twice");
                if (k == 0) {
                        if ((r = token_lookup(&tok[1], phase_names, _JOURNAL_PHASE_MAX)) < 0)
                                WHY("unknown phase");
                        j->phase = (JournalPhase) r;
                } else if (k == 1) {
                        char buf[16];
                        Strategy s = _STRATEGY_INVALID;
                        if (tok[1].len < sizeof(buf)) {
                                memcpy(buf, tok[1].p, tok[1].len);
                                buf[tok[1].len] = 0;
                                s = strategy_from_string(buf);
                        }
                        if (s == _STRATEGY_INVALID)
                                WHY("unknown strategy");
                        j->strategy = s;
                } else {
                        if (token_u64(&tok[1], &x) < 0)
                                WHY("not a number");
                        if (k == 2)
                                j->since = x;
                        else
                                j->slack_ns = x;
                }
                seen[k] = true;
                return 0;
        }
        if (token_is(&tok[0], "unit")) {
                _cleanup_free_ char *path = NULL, *reason = NULL, *systemd = NULL;
                uid_t held_uid = JOURNAL_NOT_HELD;
                uint64_t slack = 0;
                size_t k = 5;
                int state;

                /* unit STATE THAW-UNTIL PATH REASON, then optionally
                 * "systemd ADDRESS", "held UID" and "slack NS", in that
                 * order. */
                if (n >= k + 2 && token_is(&tok[k], "systemd")) {
                        if ((r = unescape(tok[k + 1].p, tok[k + 1].len, &systemd)) == -ENOMEM)
                                return r;
                        if (r < 0 || !systemd)
                                WHY("bad systemd address");
                        k += 2;
                }
                if (n >= k + 2 && token_is(&tok[k], "held")) {
                        if (token_u64(&tok[k + 1], &y) < 0 || y >= JOURNAL_NOT_HELD)
                                WHY("bad uid of a held unit");
                        held_uid = (uid_t) y;
                        k += 2;
                }
                if (n >= k + 2 && token_is(&tok[k], "slack")) {
                        if (token_u64(&tok[k + 1], &slack) < 0 || slack == 0)
                                WHY("bad slack of a unit");
                        k += 2;
                }
                if (n < 5 || n != k)
                        WHY("expected: unit STATE THAW-UNTIL PATH REASON [systemd ADDRESS] [held UID] [slack NS]");
                if ((state = token_lookup(&tok[1], unit_state_names, _UNIT_STATE_MAX)) < 0)
                        WHY("unknown unit state");
                if (token_u64(&tok[2], &x) < 0)
                        WHY("thaw deadline not a number");
                if ((r = unescape(tok[3].p, tok[3].len, &path)) == -ENOMEM)
                        return r;
                if (r < 0 || !path)
                        WHY("bad cgroup path");
                if (cgroup_path_check(path) < 0)
                        WHY("bad cgroup path (absolute, \"..\" or an empty component)");
                if ((r = unescape(tok[4].p, tok[4].len, &reason)) == -ENOMEM)
                        return r;
                if (r < 0)
                        WHY("bad reason");
                if (journal_add_unit(j, path, (UnitState) state, reason) < 0)
                        return -ENOMEM;
                j->units[j->n_units - 1].thaw_until = x;
                j->units[j->n_units - 1].systemd = TAKE_PTR(systemd);
                j->units[j->n_units - 1].held_uid = held_uid;
                j->units[j->n_units - 1].slack_ns = slack;
                return 0;
        }
        if (token_is(&tok[0], "thread")) {
                if (n != 4)
                        WHY("expected: thread TID STARTTIME ORIGINAL-NS");
                if (token_u64(&tok[1], &x) < 0 || x == 0 || x > INT_MAX)
                        WHY("bad thread id");
                if (token_u64(&tok[2], &y) < 0 || token_u64(&tok[3], &z) < 0)
                        WHY("not a number");
                return journal_add_thread(j, (pid_t) x, y, z);
        }
        WHY("unknown key");
#undef WHY
}

int journal_parse(const char *buf, size_t size, Journal **ret) {
        _cleanup_journal_ Journal *j = NULL;
        bool seen[5] = {}, end = false;
        size_t lineno = 0;
        int r;

        if (!buf && size > 0)
                return -EINVAL;
        j = journal_new();
        if (!j)
                return -ENOMEM;

        for (size_t off = 0; off < size;) {
                const char *line = buf + off, *nl = memchr(line, '\n', size - off);
                size_t len = nl ? (size_t) (nl - line) : size - off;
                const char *why = NULL;

                off += len + (nl ? 1 : 0);
                lineno++;
                if (!nl) {
                        r = journal_error(j, lineno, "cut short (no newline)");
                        if (r < 0)
                                return r;
                        break;
                }
                if (memchr(line, 0, len)) {
                        r = journal_error(j, lineno, "binary data");
                        if (r < 0)
                                return r;
                        continue;
                }
                if (lineno == 1) {
                        if (len == strlen("standby-journal 1") && memcmp(line, "standby-journal 1", len) == 0)
                                continue;
                        /* Not ours, or its header lost: what follows may still be read. */
                        r = journal_error(j, lineno, "not the header \"standby-journal 1\"");
                        if (r < 0)
                                return r;
                        if (len >= strlen("standby-journal ") && memcmp(line, "standby-journal ", 16) == 0)
                                continue;
                }
                if (end) {
                        r = journal_error(j, lineno, "after the end line");
                        if (r < 0)
                                return r;
                        continue;
                }
                if (len == 3 && memcmp(line, "end", 3) == 0) {
                        end = true;
                        continue;
                }
                r = parse_line(j, line, len, seen, &why);
                if (r == -EBADMSG)
                        r = journal_error(j, lineno, "%s, skipped", why);
                if (r < 0)
                        return r;
        }
        if (size == 0)
                r = journal_error(j, 0, "empty file");
        else if (!end)
                /* journal_save() always writes it: the file was cut short. */
                r = journal_error(j, 0, "no end line (the file was cut short)");
        else
                r = 0;
        if (r < 0)
                return r;

        *ret = TAKE_PTR(j);
        return 0;
}

int journal_load(int dir_fd, Journal **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        int r;

        r = read_full_fileat_max(dir_fd, JOURNAL_FILE, JOURNAL_SIZE_MAX, &buf, &size);
        if (r < 0)
                return r;
        return journal_parse(buf, size, ret);
}

/* Enter's units and the held ones leave a quarter of the journal for the
 * rest (see JOURNAL_UNITS_BUDGET). */
_Static_assert(JOURNAL_UNITS_BUDGET + JOURNAL_HELD_BUDGET <= JOURNAL_SIZE_MAX / 4 * 3, "journal budgets");
