/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "fileio.h"
#include "journal.h"
#include "macro.h"

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
};

const char *journal_phase_to_string(JournalPhase p) {
        return p >= 0 && p < _JOURNAL_PHASE_MAX ? phase_names[p] : NULL;
}

const char *unit_state_to_string(UnitState s) {
        return s >= 0 && s < _UNIT_STATE_MAX ? unit_state_names[s] : NULL;
}

static int lookup(const char * const *names, int n, const char *s) {
        for (int i = 0; i < n; i++)
                if (names[i] && streq(names[i], s))
                        return i;
        return -1;
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
        j->units[j->n_units++] = (JournalUnit) { .cgroup = c, .state = state, .reason = r };
        return 0;
oom:
        free(c);
        free(r);
        return -ENOMEM;
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
        struct stat st;
        int fd;

        if (create && mkdir(dir, 0700) < 0 && errno != EEXIST)
                return negative_errno();
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0 || st.st_uid != geteuid()) {
                /* Someone else's directory could have a journal planted in it. */
                safe_close(fd);
                return -EPERM;
        }
        *ret_fd = fd;
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

/* Paths and reasons are single tokens: escape space, control bytes and '\'. */
static void fput_escaped(FILE *f, const char *s) {
        if (isempty(s)) {
                fputs("\\-", f);
                return;
        }
        /* Runs of plain characters in one fwrite: a character at a time
         * took the stream's lock per character, once per unit per save. */
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

static int unescape(const char *s, char **ret) {
        char *out, *w;

        if (streq(s, "\\-")) {
                *ret = NULL;
                return 0;
        }
        out = w = malloc(strlen(s) + 1);
        if (!out)
                return -ENOMEM;
        for (const char *p = s; *p;) {
                unsigned v;
                if (p[0] == '\\') {
                        if (p[1] != 'x' || sscanf(p + 2, "%2x", &v) != 1 || !p[2] || !p[3] || v == 0) {
                                free(out);
                                return -EBADMSG;
                        }
                        *w++ = (char) v;
                        p += 4;
                } else
                        *w++ = *p++;
        }
        *w = 0;
        *ret = out;
        return 0;
}

int journal_save(int dir_fd, const Journal *j) {
        _cleanup_fclose_ FILE *f = NULL;
        int fd, r;

        if (journal_is_empty(j)) {
                if (unlinkat(dir_fd, JOURNAL_FILE, 0) < 0 && errno != ENOENT)
                        return negative_errno();
                return 0;
        }

        (void) unlinkat(dir_fd, JOURNAL_FILE ".tmp", 0);
        fd = openat(dir_fd, JOURNAL_FILE ".tmp", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return negative_errno();
        f = fdopen(fd, "w");
        if (!f) {
                safe_close(fd);
                return -ENOMEM;
        }

        fprintf(f, "standby-journal 1\n");
        fprintf(f, "phase %s\n", journal_phase_to_string(j->phase));
        fprintf(f, "strategy %s\n", strategy_to_string(j->strategy));
        fprintf(f, "since %" PRIu64 "\n", j->since);
        fprintf(f, "slack-ns %" PRIu64 "\n", j->slack_ns);
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
                fputc('\n', f);
        }
        for (size_t i = 0; i < j->n_threads; i++)
                fprintf(f, "thread %d %" PRIu64 " %" PRIu64 "\n", (int) j->threads[i].tid,
                        j->threads[i].starttime, j->threads[i].original_ns);
        fprintf(f, "end\n");

        /* No fsync: the journal guards against a crash of standby's processes,
         * which loses nothing in the page cache; after a kernel crash or power
         * loss no cgroup is frozen anymore, so a lost journal loses nothing.
         * rename() alone makes the switch atomic for every reader. */
        if (fflush(f) != 0 || ferror(f)) {
                r = -EIO;
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

int journal_load(int dir_fd, Journal **ret) {
        _cleanup_journal_ Journal *j = NULL;
        _cleanup_free_ char *buf = NULL;
        bool header = false, end = false;
        int r;

        r = read_full_fileat(dir_fd, JOURNAL_FILE, &buf, NULL);
        if (r < 0)
                return r;
        j = journal_new();
        if (!j)
                return -ENOMEM;

        for (char *save = NULL, *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char key[32], a[64], b[4096], c[4096];
                unsigned long long x, y, z;
                int pid;

                if (!header) {
                        if (!streq(line, "standby-journal 1"))
                                return -EBADMSG;
                        header = true;
                        continue;
                }
                if (sscanf(line, "%31s", key) != 1)
                        return -EBADMSG;
                if (streq(key, "phase")) {
                        if (sscanf(line, "phase %63s", a) != 1 ||
                            (r = lookup(phase_names, _JOURNAL_PHASE_MAX, a)) < 0)
                                return -EBADMSG;
                        j->phase = (JournalPhase) r;
                } else if (streq(key, "strategy")) {
                        if (sscanf(line, "strategy %63s", a) != 1 ||
                            (j->strategy = strategy_from_string(a)) == _STRATEGY_INVALID)
                                return -EBADMSG;
                } else if (streq(key, "since")) {
                        if (sscanf(line, "since %llu", &x) != 1)
                                return -EBADMSG;
                        j->since = x;
                } else if (streq(key, "slack-ns")) {
                        if (sscanf(line, "slack-ns %llu", &x) != 1)
                                return -EBADMSG;
                        j->slack_ns = x;
                } else if (streq(key, "unit")) {
                        _cleanup_free_ char *path = NULL, *reason = NULL, *systemd = NULL;
                        char d[16] = "", e[4096] = "";
                        int k = sscanf(line, "unit %63s %llu %4095s %4095s %15s %4095s", a, &x, b, c, d, e);
                        if (k != 4 && !(k == 6 && streq(d, "systemd")))
                                return -EBADMSG;
                        if (k == 6 && (unescape(e, &systemd) < 0 || !systemd))
                                return -EBADMSG;
                        if ((r = lookup(unit_state_names, _UNIT_STATE_MAX, a)) < 0)
                                return -EBADMSG;
                        if (unescape(b, &path) < 0 || !path || unescape(c, &reason) < 0)
                                return -EBADMSG;
                        if (journal_add_unit(j, path, (UnitState) r, reason) < 0)
                                return -ENOMEM;
                        j->units[j->n_units - 1].thaw_until = x;
                        j->units[j->n_units - 1].systemd = TAKE_PTR(systemd);
                } else if (streq(key, "thread")) {
                        if (sscanf(line, "thread %d %llu %llu", &pid, &y, &z) != 3)
                                return -EBADMSG;
                        if (journal_add_thread(j, pid, y, z) < 0)
                                return -ENOMEM;
                } else if (streq(key, "end"))
                        end = true;
                else
                        return -EBADMSG;
        }
        /* A journal without its end line was not written by journal_save(). */
        if (!header || !end)
                return -EBADMSG;

        *ret = TAKE_PTR(j);
        return 0;
}
