/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Every wake on record: each thaw (an event's, or a Thaw call's), each
 * window's end and each exit a rule asks for is logged at info, with the
 * journal fields of standby.catalog, and appended to the period's wake
 * record in the state directory's tmpfs (common/wake-record.h), which the
 * engine turns into the period's report when standby ends
 * (freezer/report.c). Nothing of it is on a thaw's critical path: a thaw's
 * wake is only captured there, after the writes and the step aside
 * (thaw.c), and logged from a defer source, once the event's handler has
 * returned (a push answered); the record is written to RAM only. Wakes are
 * logged in the order they came: a window's end or an exit logs the
 * captured ones first. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>
#include <systemd/sd-journal.h>

#include "cgroup.h"
#include "fileio.h"
#include "listener.h"
#include "log.h"
#include "strv.h"
#include "wake-ids.h"
#include "wake-record.h"

/* A wake's fields: the journal's name and the record's. */
typedef struct WakeField {
        const char *journal; /* STANDBY_... */
        const char *record; /* in the record's cause */
        char value[192];
} WakeField;

#define WAKE_FIELDS_MAX 8

typedef struct WakeFields {
        WakeField f[WAKE_FIELDS_MAX];
        size_t n;
} WakeFields;

_printf_(4, 5) static void field_add(WakeFields *w, const char *journal, const char *record, const char *fmt, ...) {
        va_list ap;

        if (w->n >= WAKE_FIELDS_MAX)
                return;
        WakeField *f = &w->f[w->n++];
        f->journal = journal;
        f->record = record;
        va_start(ap, fmt);
        (void) vsnprintf(f->value, sizeof(f->value), fmt, ap);
        va_end(ap);
}

/* The caller's unit: the last component of its cgroup, if the bus told
 * its pid when its access was checked (a read of /proc, never waited on). */
static void add_caller_unit(WakeFields *w, pid_t pid) {
        _cleanup_free_ char *cg = NULL;

        if (pid > 0 && cgroup_of_pid(pid, &cg) >= 0 && *cg) {
                const char *base = strrchr(cg, '/');
                field_add(w, "STANDBY_CALLER_UNIT", "caller_unit", "%s", base ? base + 1 : cg);
        }
}

/* What the event carried (the caller's unit apart: add_caller_unit()). */
static void event_fields(const Event *ev, WakeFields *w) {
        if (!ev)
                return;
        if (ev->reason)
                field_add(w, "STANDBY_PUSH_REASON", "reason", "%s", ev->reason);
        if (ev->sender)
                field_add(w, "STANDBY_CALLER", "caller", "%s", ev->sender);
        if (ev->unit)
                field_add(w, "STANDBY_EVENT_UNIT", "unit", "%s", ev->unit);
        if (ev->interface)
                field_add(w, "STANDBY_LINK", "link", "%s%s%s", ev->interface, ev->change ? " " : "", ev->change ?: "");
        if (ev->device)
                field_add(w, "STANDBY_DEVICE", "device", "%s", ev->device);
        if (ev->kind && streq(ev->kind->name, "input"))
                field_add(w, "STANDBY_KEY", "key", "%d:%d=%d", ev->key_type, ev->key_code, ev->value);
        if (ev->subsystem)
                field_add(w, "STANDBY_UEVENT", "uevent", "%s %s", ev->subsystem, ev->change ?: "");
}

/* "late": an event from before standby was entered (one that came during
 * the enter, or a D-Bus call its service froze with unread), carried out
 * once it was: its fields are gone; "call": a Thaw call. A thaw of no
 * event says its own (l->waking_source: "maintenance"). */
static const char *event_name(const Event *ev) {
        return !ev ? "late" : ev->kind ? ev->kind->name : "call";
}

/* Whether stderr is the journal's stream (JOURNAL_STREAM names it): then
 * the structured entry is the line, else a plain line is printed. */
static bool stderr_is_journal(void) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;

        return e && sscanf(e, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) >= 0 &&
               (unsigned long long) st.st_dev == dev && (unsigned long long) st.st_ino == ino;
}

/* The entry: MESSAGE, MESSAGE_ID, PRIORITY, the fields, a STANDBY_UNIT= per unit. */
static void journal_send(const char *id, const char *message, const WakeFields *w, char **units) {
        size_t n_units = strv_length(units), n = 0;
        _cleanup_free_ struct iovec *iov = NULL;
        _cleanup_strv_free_ char **s = NULL;

        if (!stderr_is_journal()) {
                log_info("%s", message);
                return;
        }
        iov = calloc(3 + w->n + n_units, sizeof(struct iovec));
        s = calloc(3 + w->n + n_units + 1, sizeof(char *));
        if (!iov || !s) {
                log_info("%s", message);
                return;
        }
        if (asprintf(&s[n++], "MESSAGE=%s", message) < 0 || asprintf(&s[n++], "MESSAGE_ID=%s", id) < 0 ||
            !(s[n++] = strdup("PRIORITY=6")))
                goto fail;
        for (size_t i = 0; i < w->n; i++)
                if (asprintf(&s[n++], "%s=%s", w->f[i].journal, w->f[i].value) < 0)
                        goto fail;
        for (size_t i = 0; i < n_units; i++)
                if (asprintf(&s[n++], "STANDBY_UNIT=%s", units[i]) < 0)
                        goto fail;
        for (size_t i = 0; i < n; i++)
                iov[i] = (struct iovec){ .iov_base = s[i], .iov_len = strlen(s[i]) };
        if (sd_journal_sendv(iov, (int) n) >= 0)
                return;
fail:
        log_info("%s", message);
}

/* "a, b, c" for the record; NULL for none. */
static char *join_units(char **units) {
        size_t len = 0;
        char *s;

        if (!units || !*units)
                return NULL;
        for (char **x = units; *x; x++)
                len += strlen(*x) + 1;
        s = malloc(len);
        if (!s)
                return NULL;
        len = 0;
        for (char **x = units; *x; x++) {
                size_t k = strlen(*x);
                memcpy(s + len, *x, k);
                len += k;
                s[len++] = ',';
        }
        s[len - 1] = '\0';
        return s;
}

/* "unit" or "unit and N more", for a message. */
static void units_summary(char **units, char *buf, size_t size) {
        size_t n = strv_length(units);

        if (n <= 1)
                (void) snprintf(buf, size, "%s", n ? units[0] : "nothing");
        else
                (void) snprintf(buf, size, "%s and %zu more", units[0], n - 1);
}

/* "reason=...; caller=..." for the record. */
static char *cause_of(const WakeFields *w) {
        char buf[512] = "";
        size_t len = 0;

        for (size_t i = 0; i < w->n && len < sizeof(buf); i++) {
                int k = snprintf(buf + len, sizeof(buf) - len, "%s%s=%s", i ? "; " : "", w->f[i].record, w->f[i].value);
                if (k < 0)
                        break;
                len += (size_t) k;
        }
        return strdup(buf);
}

/* Appends to the period's wake record; failures cost the record only. */
static void record(Listener *l, usec_t realtime, WakeKind kind, const char *source, const char *rule,
                   const WakeFields *w, char **units, usec_t took, usec_t duration, uint64_t cpu, uint64_t wakeups) {
        _cleanup_close_ int state_fd = -EBADF, dir_fd = -EBADF;
        _cleanup_free_ char *cause = cause_of(w), *joined = join_units(units);
        struct stat st;
        int r;

        state_fd = open(l->m.state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (state_fd < 0)
                return (void) log_debug_errno(-errno, "Cannot open %s for the wake record: %m", l->m.state_dir);
        r = wake_record_dir_open(state_fd, true, &dir_fd);
        if (r < 0)
                return (void) log_debug_errno(r, "Cannot open the wake record's directory: %m");
        /* The engine starts a period's file anew: seq goes on from its content. */
        if (fstatat(dir_fd, WAKE_RECORD_FILE, &st, AT_SYMLINK_NOFOLLOW) < 0 || (uint64_t) st.st_ino != l->wake_ino ||
            st.st_size == 0) {
                r = wake_record_next_seq(dir_fd, &l->wake_seq);
                if (r < 0)
                        return (void) log_debug_errno(r, "Cannot read the wake record: %m");
        }
        WakeRecord rec = {
                .seq = l->wake_seq,
                .realtime = realtime,
                .kind = kind,
                .source = (char *) source,
                .rule = (char *) rule,
                .cause = cause,
                .units = joined,
                .took = took,
                .duration = duration,
                .cpu = cpu,
                .wakeups = wakeups,
        };
        r = wake_record_append(dir_fd, &rec);
        if (r < 0)
                return (void) log_debug_errno(r, "Cannot append to the wake record: %m");
        l->wake_seq++;
        if (fstatat(dir_fd, WAKE_RECORD_FILE, &st, AT_SYMLINK_NOFOLLOW) >= 0)
                l->wake_ino = (uint64_t) st.st_ino;
}

/* A thaw's wake, captured on its event's path and logged later. */
typedef struct PendingThaw {
        usec_t realtime;
        char *source, *rule;
        WakeFields cause; /* what the event carried, the caller's unit apart */
        pid_t caller_pid;
        char **units;
        usec_t took, window;
} PendingThaw;

/* At most this many wait for the loop's next turn; one more logs them now. */
#define WAKE_PENDING_MAX 32

struct WakeLog {
        PendingThaw pending[WAKE_PENDING_MAX];
        size_t n;
        sd_event_source *flush;
};

static char **copy_units(char **units) {
        char **c = NULL;

        for (char **x = units; x && *x; x++)
                if (strv_extend(&c, *x) < 0)
                        return strv_free(c);
        return c;
}

static void pending_done(PendingThaw *p) {
        free(p->source);
        free(p->rule);
        strv_free(p->units);
        *p = (PendingThaw){};
}

static void emit_thaw(Listener *l, PendingThaw *p) {
        _cleanup_free_ char *message = NULL, *cause = NULL;
        char what[256];
        WakeFields w = {};

        /* What the event carried: in the plain line too, where no field is. */
        add_caller_unit(&p->cause, p->caller_pid);
        cause = cause_of(&p->cause);
        field_add(&w, "STANDBY_EVENT", "event", "%s", p->source);
        if (p->rule)
                field_add(&w, "STANDBY_RULE", "rule", "%s", p->rule);
        for (size_t i = 0; i < p->cause.n && w.n < WAKE_FIELDS_MAX - 1; i++)
                w.f[w.n++] = p->cause.f[i];
        field_add(&w, "STANDBY_THAW_USEC", "took_usec", "%" PRIu64, p->took);
        units_summary(p->units, what, sizeof(what));
        const char *span = p->window ? "a window" : "the rest of standby";
        bool carried = cause && *cause;
        if ((p->rule ? asprintf(&message, "Thawed %s for %s: %s event%s%s%s, rule %s.", what, span, p->source,
                                carried ? " (" : "", carried ? cause : "", carried ? ")" : "", p->rule)
                     : asprintf(&message, "Thawed %s for %s: a Thaw call%s%s%s.", what, span, carried ? " (" : "",
                                carried ? cause : "", carried ? ")" : "")) < 0)
                return;
        journal_send(WAKE_MESSAGE_THAW, message, &w, p->units);
        /* The record has its own columns for event and rule. */
        record(l, p->realtime, WAKE_THAW, p->source, p->rule, &p->cause, p->units, p->took, p->window, 0, 0);
}

/* Logs every captured wake, in order, and reads the usage of the windows
 * opened since (their baseline for the window's end). */
static void wake_log_flush(Listener *l) {
        struct WakeLog *wl = l->wake_log;

        for (size_t i = 0; wl && i < wl->n; i++) {
                emit_thaw(l, &wl->pending[i]);
                pending_done(&wl->pending[i]);
        }
        if (wl)
                wl->n = 0;
        for (Window *w = l->windows; w; w = w->next)
                if (w->usage_pending)
                        listener_window_read_open(l, w);
}

static int on_flush(sd_event_source *s, void *userdata) {
        wake_log_flush(userdata);
        return 0;
}

/* The flush, once the current handler returns. */
static void schedule_flush(Listener *l) {
        struct WakeLog *wl = l->wake_log;

        if (!wl->flush && sd_event_add_defer(l->event, &wl->flush, on_flush, l) < 0) {
                wake_log_flush(l);
                return;
        }
        (void) sd_event_source_set_enabled(wl->flush, SD_EVENT_ONESHOT);
}

void listener_wake_thawed(Listener *l, char **units, usec_t took, usec_t window) {
        const Event *ev = l->waking;
        PendingThaw *p;

        if (!l->wake_log && !(l->wake_log = calloc(1, sizeof(struct WakeLog))))
                return (void) log_debug("Out of memory: a wake not on record.");
        if (l->wake_log->n >= WAKE_PENDING_MAX)
                wake_log_flush(l);
        p = &l->wake_log->pending[l->wake_log->n];
        *p = (PendingThaw){
                .realtime = now_usec(CLOCK_REALTIME),
                .source = strdup(ev ? event_name(ev) : l->waking_source ?: event_name(NULL)),
                .rule = l->waking_rule ? strdup(l->waking_rule->path) : NULL,
                .caller_pid = ev && ev->sender ? listener_access_sender_pid(ev->sender) : 0,
                .units = copy_units(units),
                .took = took,
                .window = window,
        };
        if (!p->source || (l->waking_rule && !p->rule) || (units && !p->units)) {
                pending_done(p);
                return (void) log_debug("Out of memory: a wake not on record.");
        }
        event_fields(ev, &p->cause);
        l->wake_log->n++;
        schedule_flush(l);
}

void listener_wake_window_opened(Listener *l, Window *w) {
        w->usage_pending = true;
        if (!l->wake_log && !(l->wake_log = calloc(1, sizeof(struct WakeLog)))) {
                listener_window_read_open(l, w);
                return;
        }
        schedule_flush(l);
}

void listener_window_read_open(Listener *l, Window *w) {
        size_t n = strv_length(w->leaves);

        w->usage_pending = false;
        free(w->cpu_at_open);
        free(w->wakeups_at_open);
        w->cpu_at_open = calloc(MAX(n, 1), sizeof(uint64_t));
        w->wakeups_at_open = calloc(MAX(n, 1), sizeof(uint64_t));
        if (!w->cpu_at_open || !w->wakeups_at_open) { /* not measured: the log says 0 */
                w->cpu_at_open = mfree(w->cpu_at_open);
                w->wakeups_at_open = mfree(w->wakeups_at_open);
                return;
        }
        for (size_t i = 0; i < n; i++) {
                char *one[] = { w->leaves[i], NULL };
                listener_units_usage(l, one, &w->cpu_at_open[i], &w->wakeups_at_open[i]);
        }
}

void listener_wake_log_free(Listener *l) {
        if (!l->wake_log)
                return;
        wake_log_flush(l);
        sd_event_source_disable_unref(l->wake_log->flush);
        l->wake_log = mfree(l->wake_log);
}

/* The voluntary context switches of one thread: 0 if it exited. */
static uint64_t thread_wakeups(pid_t tid) {
        _cleanup_free_ char *s = NULL;
        char path[64];
        const char *p;

        snprintf(path, sizeof(path), "/proc/%d/status", (int) tid);
        if (read_full_fileat(AT_FDCWD, path, &s, NULL) < 0)
                return 0;
        p = strstr(s, "\nvoluntary_ctxt_switches:");
        return p ? strtoull(p + strlen("\nvoluntary_ctxt_switches:"), NULL, 10) : 0;
}

void listener_units_usage(Listener *l, char **units, uint64_t *ret_cpu_usec, uint64_t *ret_wakeups) {
        uint64_t cpu = 0, wakeups = 0;
        size_t threads_left = LISTENER_WAKE_THREADS_MAX;

        for (char **x = units; x && *x; x++) {
                _cleanup_close_ int own = -EBADF;
                _cleanup_free_ char *s = NULL;
                _cleanup_free_ pid_t *tids = NULL;
                size_t n = 0;
                CachedUnit *c = listener_cached_unit(l, *x);
                int fd = c && c->fd >= 0 ? c->fd : -EBADF;
                const char *p;

                if (fd < 0 && cgroup_open(l->m.root_fd, *x, &own) >= 0)
                        fd = own;
                if (fd < 0)
                        continue;
                if (read_full_fileat(fd, "cpu.stat", &s, NULL) >= 0) {
                        p = strstr(s, "usage_usec ");
                        if (p && (p == s || p[-1] == '\n'))
                                cpu += strtoull(p + strlen("usage_usec "), NULL, 10);
                }
                if (cgroup_list_pids(fd, true, &tids, &n) >= 0)
                        for (size_t i = 0; i < n && threads_left > 0; i++, threads_left--)
                                wakeups += thread_wakeups(tids[i]);
        }
        *ret_cpu_usec = cpu;
        *ret_wakeups = wakeups;
}

void listener_wake_window_end(Listener *l, char **units, usec_t ran, uint64_t cpu_usec, uint64_t wakeups) {
        _cleanup_free_ char *message = NULL;
        char what[256];
        WakeFields w = {};

        wake_log_flush(l);
        field_add(&w, "STANDBY_RAN_USEC", "ran_usec", "%" PRIu64, ran);
        field_add(&w, "STANDBY_CPU_USEC", "cpu_usec", "%" PRIu64, cpu_usec);
        field_add(&w, "STANDBY_WAKEUPS", "wakeups", "%" PRIu64, wakeups);
        units_summary(units, what, sizeof(what));
        if (asprintf(&message,
                     "Thaw window of %s ended after %.1f s, %.1f ms of CPU, %" PRIu64 " wakeups: freezing again.", what,
                     (double) ran / USEC_PER_SEC, (double) cpu_usec / 1000.0, wakeups) < 0)
                return;
        journal_send(WAKE_MESSAGE_END, message, &w, units);
        record(l, now_usec(CLOCK_REALTIME), WAKE_END, NULL, NULL, &(WakeFields){}, units, 0, ran, cpu_usec, wakeups);
}

void listener_wake_exit(Listener *l, const Rule *rule, const Event *ev) {
        _cleanup_free_ char *message = NULL, *cause = NULL;
        WakeFields w = {}, c = {};

        /* On record before the exit reads the record. */
        wake_log_flush(l);
        event_fields(ev, &c);
        add_caller_unit(&c, ev && ev->sender ? listener_access_sender_pid(ev->sender) : 0);
        cause = cause_of(&c);
        field_add(&w, "STANDBY_EVENT", "event", "%s", event_name(ev));
        field_add(&w, "STANDBY_RULE", "rule", "%s", rule->path);
        for (size_t i = 0; i < c.n && w.n < WAKE_FIELDS_MAX; i++)
                w.f[w.n++] = c.f[i];
        if (asprintf(&message, "Rule %s ends standby (%s event%s%s).", rule->path, event_name(ev),
                     cause && *cause ? ": " : "", cause ?: "") < 0)
                return;
        journal_send(WAKE_MESSAGE_EXIT, message, &w, NULL);
        record(l, now_usec(CLOCK_REALTIME), WAKE_EXIT, event_name(ev), rule->path, &c, NULL, 0, 0, 0, 0);
}

void listener_wake_log_start(Listener *l) {
        _cleanup_close_ int state_fd = -EBADF, dir_fd = -EBADF, fd = -EBADF;
        _cleanup_free_ char *cg = NULL;

        if (cgroup_of_pid(getpid(), &cg) < 0 || !*cg)
                return;
        state_fd = open(l->m.state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (state_fd < 0 || wake_record_dir_open(state_fd, true, &dir_fd) < 0)
                return;
        fd = openat(dir_fd, "listener", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd >= 0)
                (void) dprintf(fd, "%s\n", cg);
}
