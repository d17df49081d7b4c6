/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* standby-manager report: each standby period's report, for a person
 * (text), a program (--json) or gnuplot (--plot). What it derives from the
 * report's wakes and counters: how long each thaw ran, the share of the
 * period with no window open (every target unit frozen), the quiet
 * intervals between wakes, and the offenders: units that cost more than
 * REPORT_OFFENDER_PERCENT of the period's wakeups or CPU time. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"
#include "log.h"
#include "report.h"
#include "report-show.h"
#include "strv.h"

/* A wake's busy interval, [from, to) in CLOCK_REALTIME. */
typedef struct Busy {
        usec_t from, to;
} Busy;

static const struct {
        const char *name;
        usec_t below;
} quiet_buckets[] = {
        { "<1s", USEC_PER_SEC },           { "1-10s", 10 * USEC_PER_SEC },      { "10s-1min", 60 * USEC_PER_SEC },
        { "1-10min", 600 * USEC_PER_SEC }, { "10min-1h", 3600 * USEC_PER_SEC }, { ">=1h", USEC_INFINITY },
};
#define N_BUCKETS ELEMENTSOF(quiet_buckets)

/* What is derived from one period. */
typedef struct Derived {
        usec_t *thawed; /* per wake: how long its units ran (a thaw's), 0 for others */
        usec_t *cpu; /* per wake: the CPU time they used in the window, 0 if unknown */
        uint64_t *wakeups; /* and their threads' wakeups in it */
        bool *thawed_to_end; /* ran until standby ended */
        usec_t busy_usec; /* union of the thaws' intervals */
        size_t quiet[N_BUCKETS];
        uint64_t total_wakeups, total_cpu;
        size_t *order; /* units, top first */
} Derived;

/* A wake's units, from their comma-separated list. */
static char **split_units(const char *s) {
        char **l = NULL;

        for (const char *p = s; p && *p;) {
                size_t n = strcspn(p, ",");
                _cleanup_free_ char *u = strndup(p, n);
                if (!u || strv_extend(&l, u) < 0) {
                        strv_free(l);
                        return NULL;
                }
                p += n + (p[n] == ',');
        }
        return l;
}

static void derived_done(Derived *d) {
        free(d->thawed);
        free(d->cpu);
        free(d->wakeups);
        free(d->thawed_to_end);
        free(d->order);
}

static int cmp_busy(const void *a, const void *b) {
        const Busy *x = a, *y = b;
        return x->from < y->from ? -1 : x->from > y->from;
}

static const Period *sort_period;
static int cmp_units(const void *a, const void *b) {
        const UnitCounters *x = &sort_period->units[*(const size_t *) a], *y = &sort_period->units[*(const size_t *) b];
        if (x->wakeups != y->wakeups)
                return x->wakeups > y->wakeups ? -1 : 1;
        if (x->cpu_usec != y->cpu_usec)
                return x->cpu_usec > y->cpu_usec ? -1 : 1;
        return strcmp(x->cgroup, y->cgroup);
}

static int derive(const Period *p, Derived *ret) {
        Derived d = {};
        _cleanup_free_ Busy *busy = NULL;
        size_t n_busy = 0;

        d.thawed = calloc(p->n_wakes + 1, sizeof(usec_t));
        d.thawed_to_end = calloc(p->n_wakes + 1, sizeof(bool));
        d.cpu = calloc(p->n_wakes + 1, sizeof(usec_t));
        d.wakeups = calloc(p->n_wakes + 1, sizeof(uint64_t));
        busy = calloc(p->n_wakes + 1, sizeof(Busy));
        d.order = calloc(p->n_units + 1, sizeof(size_t));
        if (!d.thawed || !d.cpu || !d.wakeups || !d.thawed_to_end || !busy || !d.order) {
                derived_done(&d);
                return -ENOMEM;
        }
        /* A thaw ran until the end of the window with the same units that
         * followed it, else until standby ended. */
        for (size_t i = 0; i < p->n_wakes; i++) {
                const WakeRecord *w = &p->wakes[i];
                if (w->kind != WAKE_THAW)
                        continue;
                usec_t to = p->end;
                d.thawed_to_end[i] = true;
                for (size_t j = i + 1; j < p->n_wakes; j++)
                        if (p->wakes[j].kind == WAKE_END && w->units && p->wakes[j].units &&
                            streq(p->wakes[j].units, w->units)) {
                                to = p->wakes[j].realtime;
                                d.cpu[i] = p->wakes[j].cpu;
                                d.wakeups[i] = p->wakes[j].wakeups;
                                d.thawed_to_end[i] = false;
                                break;
                        }
                to = MAX(to, w->realtime);
                d.thawed[i] = to - w->realtime;
                busy[n_busy++] = (Busy){ w->realtime, to };
        }
        qsort(busy, n_busy, sizeof(Busy), cmp_busy);
        usec_t quiet_from = p->start;
        for (size_t i = 0; i < n_busy; i++) {
                if (busy[i].from > quiet_from) {
                        usec_t gap = busy[i].from - quiet_from;
                        for (size_t b = 0; b < N_BUCKETS; b++)
                                if (gap < quiet_buckets[b].below) {
                                        d.quiet[b]++;
                                        break;
                                }
                }
                usec_t from = MAX(busy[i].from, quiet_from);
                if (busy[i].to > from)
                        d.busy_usec += busy[i].to - from;
                quiet_from = MAX(quiet_from, busy[i].to);
        }
        if (p->end > quiet_from) {
                usec_t gap = p->end - quiet_from;
                for (size_t b = 0; b < N_BUCKETS; b++)
                        if (gap < quiet_buckets[b].below) {
                                d.quiet[b]++;
                                break;
                        }
        }
        for (size_t i = 0; i < p->n_units; i++) {
                d.order[i] = i;
                d.total_wakeups += p->units[i].wakeups;
                d.total_cpu += p->units[i].cpu_usec;
        }
        sort_period = p;
        qsort(d.order, p->n_units, sizeof(size_t), cmp_units);
        *ret = d;
        return 0;
}

static double frozen_share(const Period *p, const Derived *d) {
        usec_t len = p->end > p->start ? p->end - p->start : 0;
        return len ? 1.0 - (double) MIN(d->busy_usec, len) / (double) len : 1.0;
}

bool report_is_offender(const UnitCounters *u, uint64_t total_wakeups, uint64_t total_cpu) {
        return (total_wakeups > 0 && u->wakeups * 100 > total_wakeups * REPORT_OFFENDER_PERCENT) ||
               (total_cpu > 0 && u->cpu_usec * 100 > total_cpu * REPORT_OFFENDER_PERCENT);
}

static void format_time(usec_t t, char *buf, size_t size) {
        time_t s = (time_t) (t / USEC_PER_SEC);
        struct tm tm;
        size_t n = 0;

        if (localtime_r(&s, &tm))
                n = strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm);
        snprintf(buf + n, size - n, ".%03u", (unsigned) (t % USEC_PER_SEC / 1000));
}

static void format_span(usec_t u, char *buf, size_t size) {
        if (u < USEC_PER_SEC)
                snprintf(buf, size, "%.1f ms", (double) u / 1000.0);
        else if (u < 120 * USEC_PER_SEC)
                snprintf(buf, size, "%.1f s", (double) u / USEC_PER_SEC);
        else if (u < 7200 * USEC_PER_SEC)
                snprintf(buf, size, "%.1f min", (double) u / (60 * USEC_PER_SEC));
        else
                snprintf(buf, size, "%.1f h", (double) u / (3600 * USEC_PER_SEC));
}

static void print_text(const Period *p, size_t index) {
        _cleanup_(derived_done) Derived d = {};
        char a[64], b[64], span[32];

        if (derive(p, &d) < 0)
                return;
        format_time(p->start, a, sizeof(a));
        format_time(p->end, b, sizeof(b));
        format_span(p->end > p->start ? p->end - p->start : 0, span, sizeof(span));
        printf("Period %zu: %s to %s (%s)%s\n", index, a, b, span, p->cut ? ", CUT: its end was not recorded" : "");
        printf("  Entered: ");
        text_print_string(stdout, p->entered ?: "?");
        printf("\n  Left:    ");
        text_print_string(stdout, p->left ?: "?");
        printf("\n  Strategy: %s\n", p->strategy ?: "?");
        printf("  Every target unit frozen: %.1f%% of the period\n", 100.0 * frozen_share(p, &d));

        size_t n_thaws = 0;
        for (size_t i = 0; i < p->n_wakes; i++)
                n_thaws += p->wakes[i].kind == WAKE_THAW;
        printf("  Wakes: %zu%s", n_thaws, p->dropped ? "" : "\n");
        if (p->dropped)
                printf(" (and %" PRIu64 " older records dropped: the record keeps %u)\n", p->dropped,
                       WAKE_RECORD_SLOTS);
        for (size_t i = 0; i < p->n_wakes; i++) {
                const WakeRecord *w = &p->wakes[i];
                if (w->kind == WAKE_END)
                        continue;
                format_time(w->realtime, a, sizeof(a));
                printf("    %s  ", a + 11); /* the time of day */
                if (w->cause && *w->cause) {
                        text_print_string(stdout, w->cause);
                        printf(" -> ");
                }
                text_print_string(stdout, w->source ?: "?");
                printf(" -> ");
                text_print_string(stdout, w->rule                                 ? w->rule
                                          : w->source && streq(w->source, "call") ? "(Thaw call)"
                                                                                  : "(no rule)");
                if (w->kind == WAKE_EXIT) {
                        printf(" -> standby ended\n");
                        continue;
                }
                printf(" -> ");
                text_print_string(stdout, w->units ?: "");
                format_span(d.thawed[i], span, sizeof(span));
                printf("  thawed %s%s", span, d.thawed_to_end[i] ? " (until standby ended)" : "");
                if (d.thawed_to_end[i])
                        putchar('\n');
                else {
                        format_span(d.cpu[i], span, sizeof(span));
                        printf(", CPU %s, %" PRIu64 " wakeups\n", span, d.wakeups[i]);
                }
        }

        printf("  Units over the period, top first (offender: more than %u%% of all wakeups or CPU time):\n",
               REPORT_OFFENDER_PERCENT);
        printf("    %10s %12s  %-6s %s\n", "WAKEUPS", "CPU", "FROZEN", "UNIT");
        for (size_t k = 0; k < p->n_units; k++) {
                const UnitCounters *u = &p->units[d.order[k]];
                if (u->gone) {
                        printf("    %10s %12s  %-6s ", "-", "-", u->frozen ? "yes" : "no");
                        text_print_string(stdout, u->cgroup);
                        printf("  (gone before the end)\n");
                        continue;
                }
                format_span(u->cpu_usec, span, sizeof(span));
                printf("    %10" PRIu64 " %12s  %-6s ", u->wakeups, span, u->frozen ? "yes" : "no");
                text_print_string(stdout, u->cgroup);
                printf("%s%s\n", u->appeared ? "  (new during the period)" : "",
                       report_is_offender(u, d.total_wakeups, d.total_cpu) ? "  OFFENDER" : "");
        }
        printf("  Quiet intervals (between wakes):");
        for (size_t q = 0; q < N_BUCKETS; q++)
                printf(" %s: %zu%s", quiet_buckets[q].name, d.quiet[q], q + 1 < N_BUCKETS ? "," : "\n");
}

static void print_json(const Period *p, bool last) {
        _cleanup_(derived_done) Derived d = {};

        if (derive(p, &d) < 0)
                return;
        printf("{\"start_usec\":%" PRIu64 ",\"end_usec\":%" PRIu64 ",\"entered\":", p->start, p->end);
        json_print_string(stdout, p->entered ?: "");
        printf(",\"left\":");
        json_print_string(stdout, p->left ?: "");
        printf(",\"strategy\":");
        json_print_string(stdout, p->strategy ?: "");
        printf(",\"cut\":%s,\"wakes_dropped\":%" PRIu64 ",\"frozen_share\":%.4f,\"offender_threshold_percent\":%u,",
               p->cut ? "true" : "false", p->dropped, frozen_share(p, &d), REPORT_OFFENDER_PERCENT);
        printf("\"wakes\":[");
        bool first = true;
        for (size_t i = 0; i < p->n_wakes; i++) {
                const WakeRecord *w = &p->wakes[i];
                if (w->kind == WAKE_END)
                        continue;
                printf("%s{\"time_usec\":%" PRIu64 ",\"kind\":\"%s\",\"event\":", first ? "" : ",", w->realtime,
                       wake_kind_to_string(w->kind));
                first = false;
                json_print_string(stdout, w->source ?: "");
                printf(",\"rule\":");
                if (w->rule)
                        json_print_string(stdout, w->rule);
                else
                        printf("null");
                printf(",\"cause\":");
                json_print_string(stdout, w->cause ?: "");
                printf(",\"units\":[");
                _cleanup_strv_free_ char **units = split_units(w->units);
                for (char **x = units; x && *x; x++) {
                        printf("%s", x == units ? "" : ",");
                        json_print_string(stdout, *x);
                }
                printf("],\"thaw_latency_usec\":%" PRIu64 ",\"thawed_usec\":%" PRIu64 ",\"thawed_until_exit\":%s",
                       w->took, d.thawed[i], d.thawed_to_end[i] ? "true" : "false");
                if (w->kind == WAKE_THAW && !d.thawed_to_end[i])
                        printf(",\"cpu_usec\":%" PRIu64 ",\"wakeups\":%" PRIu64, d.cpu[i], d.wakeups[i]);
                putchar('}');
        }
        printf("],\"units\":[");
        for (size_t k = 0; k < p->n_units; k++) {
                const UnitCounters *u = &p->units[d.order[k]];
                printf("%s{\"cgroup\":", k ? "," : "");
                json_print_string(stdout, u->cgroup);
                printf(",\"wakeups\":%" PRIu64 ",\"cpu_usec\":%" PRIu64
                       ",\"frozen\":%s,\"gone\":%s,\"new\":%s,\"offender\":%s}",
                       u->wakeups, u->cpu_usec, u->frozen ? "true" : "false", u->gone ? "true" : "false",
                       u->appeared ? "true" : "false",
                       !u->gone && report_is_offender(u, d.total_wakeups, d.total_cpu) ? "true" : "false");
        }
        printf("],\"quiet_intervals\":{");
        for (size_t b = 0; b < N_BUCKETS; b++)
                printf("%s\"%s\":%zu", b ? "," : "", quiet_buckets[b].name, d.quiet[b]);
        printf("}}%s\n", last ? "" : ",");
}

/* A gnuplot script of the period: a mark per thaw on its units' rows and a
 * bar for how long they ran, the windows as bands across (the frozen share
 * is what is left white); `gnuplot FILE` draws FILE.png. */
static int write_plot(const Period *p, const char *path) {
        _cleanup_(derived_done) Derived d = {};
        _cleanup_strv_free_ char **rows = NULL;
        FILE *f;
        int r;

        r = derive(p, &d);
        if (r < 0)
                return r;
        f = fopen(path, "we");
        if (!f)
                return -errno;
        fprintf(f, "# standby-manager report --plot: `gnuplot %s` writes %s.png\n", path, path);
        fprintf(f, "set terminal pngcairo size 1200,%d\nset output '%s.png'\n", 200 + 20 * (int) MIN(p->n_units, 40),
                path);
        fprintf(f, "set title 'Standby period: %.1f%% of it with every target unit frozen'\n",
                100.0 * frozen_share(p, &d));
        fprintf(f, "set xlabel 'seconds since standby was entered'\nset xrange [0:%.3f]\n",
                (double) (p->end > p->start ? p->end - p->start : 1) / USEC_PER_SEC);
        for (size_t i = 0; i < p->n_wakes; i++)
                if (p->wakes[i].kind == WAKE_THAW)
                        fprintf(f,
                                "set object rect from %.3f, graph 0 to %.3f, graph 1 fc rgb '#ffd0d0' fs solid 0.5 "
                                "noborder behind\n",
                                (double) (p->wakes[i].realtime - MIN(p->wakes[i].realtime, p->start)) / USEC_PER_SEC,
                                (double) (p->wakes[i].realtime + d.thawed[i] - MIN(p->wakes[i].realtime, p->start)) /
                                        USEC_PER_SEC);
        fprintf(f, "$wakes << EOD\n");
        for (size_t i = 0; i < p->n_wakes; i++) {
                const WakeRecord *w = &p->wakes[i];
                if (w->kind != WAKE_THAW)
                        continue;
                _cleanup_strv_free_ char **units = split_units(w->units);
                for (char **x = units; x && *x; x++) {
                        size_t row = 0;
                        while (rows && rows[row] && !streq(rows[row], *x))
                                row++;
                        if (!rows || !rows[row])
                                (void) strv_extend(&rows, *x);
                        fprintf(f, "%.3f %zu %.3f\n",
                                (double) (w->realtime - MIN(w->realtime, p->start)) / USEC_PER_SEC, row,
                                (double) d.thawed[i] / USEC_PER_SEC);
                }
        }
        fprintf(f, "EOD\nset ytics (");
        for (size_t i = 0; rows && rows[i]; i++) {
                fprintf(f, "%s\"", i ? ", " : "");
                /* gnuplot's strings: no quote or backslash of a cgroup's name breaks out. */
                for (const char *c = rows[i]; *c; c++)
                        fputc(*c == '"' || *c == '\\' || (unsigned char) *c < 0x20 ? '_' : *c, f);
                fprintf(f, "\" %zu", i);
        }
        fprintf(f,
                ")\nset yrange [-1:%zu]\nplot $wakes using 1:2:3:(0) with vectors nohead lw 6 lc rgb '#e07070' title "
                "'thawed', \\\n"
                "     $wakes using 1:2 with points pt 7 lc rgb '#303090' title 'wake'\n",
                strv_length(rows));
        r = fclose(f) != 0 ? -errno : 0;
        return r;
}

int report_show(const char *dir, bool json, const char *plot) {
        Period *p = NULL;
        size_t n = 0;
        int r;

        r = report_read_all(dir, &p, &n);
        if (r == -ENOENT)
                n = 0;
        else if (r < 0)
                return log_error_errno(r, "Cannot read the reports in %s: %m", dir);
        if (json) {
                printf("{\"report_dir\":");
                json_print_string(stdout, dir);
                printf(",\"periods\":[\n");
                for (size_t i = 0; i < n; i++)
                        print_json(&p[i], i + 1 == n);
                printf("]}\n");
        } else if (n == 0)
                printf("No standby period on record in %s.\n", dir);
        else
                for (size_t i = 0; i < n; i++) {
                        if (i)
                                putchar('\n');
                        print_text(&p[i], i + 1);
                }
        if (plot && n > 0) {
                r = write_plot(&p[n - 1], plot);
                if (r < 0) {
                        periods_free(p, n);
                        return log_error_errno(r, "Cannot write %s: %m", plot);
                }
                log_info("The last period's timeline: `gnuplot %s` draws %s.png.", plot, plot);
        }
        periods_free(p, n);
        return 0;
}
