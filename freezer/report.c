/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A standby period's report: its edges' counters, its wakes, its file (see
 * report.h). Report files are lines of tab-separated key=value fields
 * (common/wake-record.h): one "period" line, a "unit" line per unit, a
 * "wake" line per wake. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "fileio.h"
#include "log.h"
#include "report.h"
#include "strv.h"

#define PERIOD_FILE "period"

void period_done(Period *p) {
        if (!p)
                return;
        free(p->entered);
        free(p->left);
        free(p->strategy);
        for (size_t i = 0; i < p->n_units; i++)
                free(p->units[i].cgroup);
        free(p->units);
        wake_records_free(p->wakes, p->n_wakes);
        free(p->path);
        *p = (Period){};
}

void periods_free(Period *p, size_t n) {
        for (size_t i = 0; p && i < n; i++)
                period_done(&p[i]);
        free(p);
}

void period_freep(Period **p) {
        if (*p) {
                period_done(*p);
                free(*p);
        }
}

const char *report_dir(void) {
        const char *e = getenv("STANDBY_REPORT_DIR");
        return e && *e ? e : STANDBY_REPORT_DIR;
}

/* "usage_usec N" of cpu.stat. */
static int read_cpu_usec(int cg_fd, uint64_t *ret) {
        _cleanup_free_ char *s = NULL;
        const char *p;
        int r = read_full_fileat(cg_fd, "cpu.stat", &s, NULL);

        if (r < 0)
                return r;
        p = strstr(s, "usage_usec ");
        if (!p || (p != s && p[-1] != '\n'))
                return -ENODATA;
        *ret = strtoull(p + strlen("usage_usec "), NULL, 10);
        return 0;
}

/* The voluntary context switches of one thread, from /proc/TID/status. */
static uint64_t thread_wakeups(pid_t tid) {
        _cleanup_free_ char *s = NULL;
        char path[64];
        const char *p;

        snprintf(path, sizeof(path), "/proc/%d/status", (int) tid);
        if (read_full_fileat(AT_FDCWD, path, &s, NULL) < 0)
                return 0; /* exited meanwhile: its switches are lost */
        p = strstr(s, "\nvoluntary_ctxt_switches:");
        return p ? strtoull(p + strlen("\nvoluntary_ctxt_switches:"), NULL, 10) : 0;
}

static int unit_counters(Manager *m, const char *cgroup, size_t *threads_left, UnitCounters *ret) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ pid_t *tids = NULL;
        size_t n = 0;
        UnitCounters u = {};
        int r;

        r = cgroup_open(m->root_fd, cgroup, &fd);
        if (r < 0)
                return r;
        (void) read_cpu_usec(fd, &u.cpu_usec);
        if (cgroup_list_pids(fd, true, &tids, &n) >= 0)
                for (size_t i = 0; i<n && * threads_left> 0; i++, (*threads_left)--)
                        u.wakeups += thread_wakeups(tids[i]);
        JournalUnit *j = m->journal ? journal_find_unit(m->journal, cgroup) : NULL;
        u.frozen = j && (j->state == UNIT_FROZEN || j->state == UNIT_FREEZING || j->state == UNIT_THAWED);
        u.cgroup = strdup(cgroup);
        if (!u.cgroup)
                return -ENOMEM;
        *ret = u;
        return 0;
}

/* The cgroups an edge reads: every leaf below the targets and every inner
 * cgroup with processes of its own, the listener's, and this process's
 * (the manager's). */
static int edge_cgroups(Manager *m, char ***ret) {
        _cleanup_strv_free_ char **targets = NULL, **all = NULL;
        _cleanup_free_ char *own = NULL, *listener = NULL;
        _cleanup_close_ int state_fd = -EBADF, dir_fd = -EBADF;
        int r;

        r = select_targets(m, &targets);
        if (r < 0)
                return r;
        for (char **t = targets; t && *t; t++) {
                _cleanup_strv_free_ char **leaves = NULL, **inner = NULL;
                if (cgroup_list_leaves(m->root_fd, *t, &leaves, &inner, NULL) < 0)
                        continue;
                for (char **x = leaves; x && *x; x++)
                        if (strv_extend(&all, *x) < 0)
                                return -ENOMEM;
                for (char **x = inner; x && *x; x++)
                        if (strv_extend(&all, *x) < 0)
                                return -ENOMEM;
        }
        state_fd = open(m->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (state_fd >= 0 && wake_record_dir_open(state_fd, false, &dir_fd) >= 0 &&
            read_one_lineat(dir_fd, REPORT_LISTENER_FILE, &listener) >= 0 && *listener &&
            cgroup_path_check(listener) >= 0 && !strv_contains(all, listener) && strv_extend(&all, listener) < 0)
                return -ENOMEM;
        /* The root cgroup's counters are the whole machine's: not a unit. */
        if (cgroup_of_pid(getpid(), &own) >= 0 && *own && !strv_contains(all, own) && strv_extend(&all, own) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(all);
        return 0;
}

int report_read_counters(Manager *m, UnitCounters **ret, size_t *ret_n) {
        _cleanup_strv_free_ char **cgroups = NULL;
        size_t n = 0, threads_left = REPORT_THREADS_MAX;
        UnitCounters *u;
        int r;

        r = edge_cgroups(m, &cgroups);
        if (r < 0)
                return r;
        usec_t t0 = now_usec(CLOCK_MONOTONIC);
        u = calloc(MIN(strv_length(cgroups), (size_t) REPORT_UNITS_MAX) + 1, sizeof(UnitCounters));
        if (!u)
                return -ENOMEM;
        for (char **x = cgroups; x && *x && n < REPORT_UNITS_MAX; x++) {
                r = unit_counters(m, *x, &threads_left, &u[n]);
                if (r == -ENOMEM) {
                        Period p = { .units = u, .n_units = n };
                        period_done(&p);
                        return r;
                }
                if (r >= 0)
                        n++;
        }
        log_debug("Read the counters of %zu cgroups, %zu threads, in %.2f ms.", n,
                  (size_t) REPORT_THREADS_MAX - threads_left, (double) (now_usec(CLOCK_MONOTONIC) - t0) / 1000.0);
        *ret = u;
        *ret_n = n;
        return 0;
}

static void print_kv(FILE *f, const char *key, const char *value) {
        char buf[4096];

        if (!value)
                return;
        (void) kv_append(buf, 0, sizeof(buf), key, value, sizeof(buf));
        fprintf(f, "\t%s", buf);
}

static void print_kv_u64(FILE *f, const char *key, uint64_t v) {
        fprintf(f, "\t%s=%" PRIu64, key, v);
}

static void print_period(FILE *f, const Period *p, bool report) {
        fputs("period", f);
        print_kv_u64(f, "start", p->start);
        if (report)
                print_kv_u64(f, "end", p->end);
        print_kv(f, "entered", p->entered);
        if (report)
                print_kv(f, "left", p->left);
        print_kv(f, "strategy", p->strategy);
        if (report) {
                print_kv_u64(f, "cut", p->cut);
                print_kv_u64(f, "dropped", p->dropped);
        }
        fputc('\n', f);
        for (size_t i = 0; i < p->n_units; i++) {
                const UnitCounters *u = &p->units[i];
                fputs("unit", f);
                print_kv(f, "cg", u->cgroup);
                print_kv_u64(f, "cpu", u->cpu_usec);
                print_kv_u64(f, "wakeups", u->wakeups);
                print_kv_u64(f, "frozen", u->frozen);
                if (u->gone)
                        print_kv_u64(f, "gone", 1);
                if (u->appeared)
                        print_kv_u64(f, "appeared", 1);
                fputc('\n', f);
        }
        for (size_t i = 0; i < p->n_wakes; i++) {
                char buf[WAKE_RECORD_SLOT];
                wake_record_format(&p->wakes[i], buf, sizeof(buf));
                fprintf(f, "wake\t%s\n", buf);
        }
}

/* Writes the period to name in dir_fd, whole or not at all. */
static int write_period(int dir_fd, const char *name, const Period *p, bool report) {
        _cleanup_free_ char *buf = NULL, *tmp = NULL;
        size_t size = 0;
        FILE *f;
        int fd, r = 0;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        print_period(f, p, report);
        if (fclose(f) != 0)
                return -ENOMEM;
        if (asprintf(&tmp, ".%s.tmp", name) < 0)
                return -ENOMEM;
        fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return -errno;
        for (size_t off = 0; off < size;) {
                ssize_t n = write(fd, buf + off, size - off);
                if (n < 0) {
                        r = -errno;
                        break;
                }
                off += (size_t) n;
        }
        if (r >= 0 && report && fsync(fd) < 0)
                r = -errno;
        close(fd);
        if (r >= 0 && renameat(dir_fd, tmp, dir_fd, name) < 0)
                r = -errno;
        if (r < 0)
                (void) unlinkat(dir_fd, tmp, 0);
        return r;
}

int report_parse(const char *text, Period *ret) {
        Period p = {};
        int r = 0;
        char *line_end;

        for (const char *line = text; line && *line; line = line_end ? line_end + 1 : NULL) {
                _cleanup_free_ char *copy = NULL;
                line_end = strchr(line, '\n');
                copy = strndup(line, line_end ? (size_t) (line_end - line) : strlen(line));
                if (!copy) {
                        r = -ENOMEM;
                        break;
                }
                if (strncmp(copy, "period\t", 7) == 0) {
                        uint64_t v = 0;
                        (void) kv_get_u64(copy, "start", &p.start);
                        (void) kv_get_u64(copy, "end", &p.end);
                        (void) kv_get(copy, "entered", &p.entered);
                        (void) kv_get(copy, "left", &p.left);
                        (void) kv_get(copy, "strategy", &p.strategy);
                        if (kv_get_u64(copy, "cut", &v) >= 0)
                                p.cut = v;
                        (void) kv_get_u64(copy, "dropped", &p.dropped);
                } else if (strncmp(copy, "unit\t", 5) == 0) {
                        UnitCounters u = {};
                        uint64_t v = 0;
                        if (kv_get(copy, "cg", &u.cgroup) < 0)
                                continue;
                        (void) kv_get_u64(copy, "cpu", &u.cpu_usec);
                        (void) kv_get_u64(copy, "wakeups", &u.wakeups);
                        u.frozen = kv_get_u64(copy, "frozen", &v) >= 0 && v;
                        u.gone = kv_get_u64(copy, "gone", &v) >= 0 && v;
                        u.appeared = kv_get_u64(copy, "appeared", &v) >= 0 && v;
                        UnitCounters *n = reallocarray(p.units, p.n_units + 1, sizeof(UnitCounters));
                        if (!n) {
                                free(u.cgroup);
                                r = -ENOMEM;
                                break;
                        }
                        p.units = n;
                        p.units[p.n_units++] = u;
                } else if (strncmp(copy, "wake\t", 5) == 0) {
                        WakeRecord w;
                        if (wake_record_parse(copy + 5, &w) < 0)
                                continue;
                        WakeRecord *n = reallocarray(p.wakes, p.n_wakes + 1, sizeof(WakeRecord));
                        if (!n) {
                                wake_record_done(&w);
                                r = -ENOMEM;
                                break;
                        }
                        p.wakes = n;
                        p.wakes[p.n_wakes++] = w;
                }
        }
        if (r >= 0 && p.start == 0)
                r = -EINVAL;
        if (r < 0) {
                period_done(&p);
                return r;
        }
        *ret = p;
        return 0;
}

static int read_period_file(int dir_fd, const char *name, Period *ret) {
        _cleanup_free_ char *text = NULL;
        int r = read_full_fileat_max(dir_fd, name, 2 * REPORTS_SIZE_MAX, &text, NULL);
        return r < 0 ? r : report_parse(text, ret);
}

/* The unit that ran this process, for how standby was entered or left. */
static char *how(const char *verb) {
        _cleanup_free_ char *cg = NULL;
        const char *base;
        char *s;

        if (cgroup_of_pid(getpid(), &cg) < 0 || !*cg)
                return strdup(verb);
        base = strrchr(cg, '/');
        return asprintf(&s, "%s from %s", verb, base ? base + 1 : cg) < 0 ? NULL : s;
}

static int report_dir_open(bool create, int *ret_fd) {
        const char *dir = report_dir();
        int fd;

        if (create) {
                /* Its parents as a package's StateDirectory= makes them. */
                _cleanup_free_ char *copy = strdup(dir);
                if (!copy)
                        return -ENOMEM;
                for (char *p = strchr(copy + 1, '/'); p; p = strchr(p + 1, '/')) {
                        *p = '\0';
                        if (mkdir(copy, 0755) < 0 && errno != EEXIST)
                                return -errno;
                        *p = '/';
                }
                /* Reports name callers and their reasons: root's alone. */
                if (mkdir(dir, 0700) < 0 && errno != EEXIST)
                        return -errno;
        }
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        *ret_fd = fd;
        return 0;
}

static int is_report(const struct dirent *d) {
        size_t n = strlen(d->d_name), k = strlen(REPORT_SUFFIX);
        return d->d_name[0] != '.' && n > k && strcmp(d->d_name + n - k, REPORT_SUFFIX) == 0;
}

/* Keeps the newest REPORTS_MAX reports within REPORTS_SIZE_MAX bytes; the
 * names sort as the periods' starts. */
static void prune_reports(int dir_fd) {
        struct dirent **list = NULL;
        int n;
        uint64_t total = 0;
        _cleanup_free_ char *path = NULL;

        if (asprintf(&path, "/proc/self/fd/%d", dir_fd) < 0)
                return;
        n = scandir(path, &list, is_report, alphasort);
        if (n < 0)
                return;
        for (int i = n - 1, kept = 0; i >= 0; i--) {
                struct stat st;
                if (fstatat(dir_fd, list[i]->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                total += (uint64_t) st.st_size;
                /* The newest is kept, whatever its size. */
                if (kept > 0 && (kept >= REPORTS_MAX || total > REPORTS_SIZE_MAX)) {
                        if (unlinkat(dir_fd, list[i]->d_name, 0) >= 0)
                                log_debug("Removed the old report %s.", list[i]->d_name);
                } else
                        kept++;
        }
        for (int i = 0; i < n; i++)
                free(list[i]);
        free(list);
}

/* Writes p as a report, prunes the old ones. */
static int write_report(const Period *p, char **ret_path) {
        _cleanup_close_ int fd = -EBADF;
        char name[64];
        int r;

        r = report_dir_open(true, &fd);
        if (r < 0)
                return r;
        snprintf(name, sizeof(name), "%020" PRIu64 REPORT_SUFFIX, p->start);
        r = write_period(fd, name, p, true);
        if (r < 0)
                return r;
        prune_reports(fd);
        if (ret_path && asprintf(ret_path, "%s/%s", report_dir(), name) < 0)
                return -ENOMEM;
        return 0;
}

/* A period left open: written as cut, its end the last thing known of it. */
static void close_cut(int dir_fd) {
        Period p = {};
        struct stat st;
        _cleanup_free_ char *path = NULL;
        int r;

        if (read_period_file(dir_fd, PERIOD_FILE, &p) < 0)
                return;
        (void) wake_record_read_all(dir_fd, &p.wakes, &p.n_wakes, &p.dropped);
        /* Its counters at the start say nothing without an end's. */
        for (size_t i = 0; i < p.n_units; i++)
                free(p.units[i].cgroup);
        p.units = mfree(p.units);
        p.n_units = 0;
        p.cut = true;
        p.end = p.start;
        if (fstatat(dir_fd, WAKE_RECORD_FILE, &st, 0) >= 0)
                p.end = MAX(p.end, (usec_t) st.st_mtim.tv_sec * USEC_PER_SEC + (usec_t) st.st_mtim.tv_nsec / 1000);
        if (p.n_wakes > 0)
                p.end = MAX(p.end, p.wakes[p.n_wakes - 1].realtime);
        free(p.left);
        p.left = strdup("cut: no exit recorded its end");
        r = write_report(&p, &path);
        if (r < 0)
                log_warning_errno(r, "Cannot write the report of the standby period cut short: %m");
        else
                log_notice("The last standby period had no recorded end: its report, marked cut, is %s.", path);
        period_done(&p);
}

void report_period_begin(Manager *m, const char *strategy) {
        _cleanup_close_ int state_fd = -EBADF, dir_fd = -EBADF;
        Period p = {};
        int r = -ENOMEM;

        state_fd = open(m->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (state_fd < 0 || wake_record_dir_open(state_fd, true, &dir_fd) < 0) {
                log_debug("No wake record directory in %s: no report for this period.", m->state_dir);
                return;
        }
        close_cut(dir_fd);
        (void) wake_record_remove(dir_fd);
        p.start = now_usec(CLOCK_REALTIME);
        p.entered = how("standby-manager enter");
        p.strategy = strdup(strategy);
        if (p.entered && p.strategy)
                r = write_period(dir_fd, PERIOD_FILE, &p, false);
        if (r < 0)
                log_warning_errno(r, "Cannot begin this standby period's report: %m");
        period_done(&p);
}

void report_period_entered(Manager *m) {
        _cleanup_close_ int state_fd = -EBADF, dir_fd = -EBADF;
        Period p = {};
        int r;

        state_fd = open(m->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (state_fd < 0 || wake_record_dir_open(state_fd, false, &dir_fd) < 0 ||
            read_period_file(dir_fd, PERIOD_FILE, &p) < 0)
                return;
        r = report_read_counters(m, &p.units, &p.n_units);
        if (r >= 0)
                r = write_period(dir_fd, PERIOD_FILE, &p, false);
        if (r < 0)
                log_warning_errno(r, "Cannot read the units' counters at enter: %m");
        period_done(&p);
}

void report_period_abandon(Manager *m) {
        _cleanup_close_ int state_fd = -EBADF, dir_fd = -EBADF;

        state_fd = open(m->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (state_fd < 0 || wake_record_dir_open(state_fd, false, &dir_fd) < 0)
                return;
        (void) unlinkat(dir_fd, PERIOD_FILE, 0);
        (void) wake_record_remove(dir_fd);
}

static UnitCounters *find_unit(Period *p, const char *cgroup) {
        for (size_t i = 0; i < p->n_units; i++)
                if (streq(p->units[i].cgroup, cgroup))
                        return &p->units[i];
        return NULL;
}

Period *report_period_snapshot_end(Manager *m) {
        _cleanup_close_ int state_fd = -EBADF, dir_fd = -EBADF;
        _cleanup_(period_freep) Period *p = NULL;
        UnitCounters *end = NULL;
        size_t n_end = 0;

        state_fd = open(m->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (state_fd < 0 || wake_record_dir_open(state_fd, false, &dir_fd) < 0)
                return NULL;
        p = calloc(1, sizeof(Period));
        if (!p || read_period_file(dir_fd, PERIOD_FILE, p) < 0)
                return NULL;
        p->end = now_usec(CLOCK_REALTIME);
        if (report_read_counters(m, &end, &n_end) < 0)
                return NULL;
        /* Deltas: a unit at both edges, the difference (a cgroup made anew
         * under the same name counts from 0); one that appeared, all it
         * counted; one that went, unknown. Wakeups of threads that exited
         * are lost. */
        for (size_t i = 0; i < n_end; i++) {
                UnitCounters *b = find_unit(p, end[i].cgroup);
                if (b && !b->gone && end[i].cpu_usec >= b->cpu_usec) {
                        end[i].cpu_usec -= b->cpu_usec;
                        end[i].wakeups = end[i].wakeups >= b->wakeups ? end[i].wakeups - b->wakeups : 0;
                        b->gone = true; /* matched */
                } else {
                        end[i].appeared = true;
                        if (b)
                                b->gone = true;
                }
        }
        for (size_t i = 0; i < p->n_units; i++) {
                if (p->units[i].gone) {
                        free(p->units[i].cgroup);
                        continue;
                }
                /* Gone before the end. */
                UnitCounters *n = reallocarray(end, n_end + 1, sizeof(UnitCounters));
                if (!n) {
                        free(p->units[i].cgroup);
                        continue;
                }
                end = n;
                end[n_end++] =
                        (UnitCounters){ .cgroup = p->units[i].cgroup, .frozen = p->units[i].frozen, .gone = true };
        }
        free(p->units);
        p->units = end;
        p->n_units = n_end;
        return TAKE_PTR(p);
}

int report_period_end(Manager *m, Period *p, char **ret_path) {
        _cleanup_close_ int state_fd = -EBADF, dir_fd = -EBADF;
        int r;

        state_fd = open(m->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (state_fd < 0)
                return -errno;
        r = wake_record_dir_open(state_fd, false, &dir_fd);
        if (r < 0)
                return r;
        (void) wake_record_read_all(dir_fd, &p->wakes, &p->n_wakes, &p->dropped);
        const WakeRecord *last = p->n_wakes > 0 ? &p->wakes[p->n_wakes - 1] : NULL;
        if (last && last->kind == WAKE_EXIT) {
                if (asprintf(&p->left, "rule %s (%s event)", last->rule ?: "?", last->source ?: "?") < 0)
                        p->left = NULL;
        } else
                p->left = how("standby-manager exit");
        r = write_report(p, ret_path);
        if (r < 0)
                return r;
        (void) unlinkat(dir_fd, PERIOD_FILE, 0);
        (void) wake_record_remove(dir_fd);
        return 0;
}

static int cmp_period(const void *a, const void *b) {
        const Period *x = a, *y = b;
        return x->start < y->start ? -1 : x->start > y->start;
}

int report_read_all(const char *dir, Period **ret, size_t *ret_n) {
        struct dirent **list = NULL;
        Period *p;
        size_t n = 0;
        int k, r = 0;
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        k = scandir(dir, &list, is_report, alphasort);
        if (k < 0)
                return -errno;
        p = calloc((size_t) k + 1, sizeof(Period));
        if (!p)
                r = -ENOMEM;
        for (int i = 0; i < k; i++) {
                if (r >= 0 && read_period_file(fd, list[i]->d_name, &p[n]) >= 0) {
                        if (asprintf(&p[n].path, "%s/%s", dir, list[i]->d_name) < 0)
                                p[n].path = NULL;
                        n++;
                }
                free(list[i]);
        }
        free(list);
        if (r < 0)
                return r;
        qsort(p, n, sizeof(Period), cmp_period);
        *ret = p;
        *ret_n = n;
        return 0;
}
