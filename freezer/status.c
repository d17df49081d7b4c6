/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* `standby-manager status`: the journal, next to what the kernel says. */
#include <inttypes.h>
#include <stdio.h>

#include "cgroup.h"
#include "macro.h"
#include "json.h"
#include "manager.h"
#include "sdbus-dl.h"
#include "strv.h"
#include "unit-name.h"

typedef struct UnitView {
        const JournalUnit *u;
        int kernel_frozen;   /* 1, 0, or -1 when the cgroup is gone */
        char *systemd_state; /* systemd's FreezerState, for units it froze */
        usec_t remaining;    /* of a thaw window; USEC_INFINITY: until exit; 0: none */
} UnitView;

static UnitView view_unit(Manager *m, const JournalUnit *u, usec_t now) {
        UnitView v = { .u = u, .kernel_frozen = -1 };
        _cleanup_close_ int fd = -EBADF;
        bool frozen;

        if (cgroup_open(m->root_fd, u->cgroup, &fd) >= 0 && cgroup_get_frozen(fd, &frozen, NULL) >= 0)
                v.kernel_frozen = frozen;
        if (u->state == UNIT_THAWED)
                v.remaining = u->thaw_until == USEC_INFINITY ? USEC_INFINITY
                              : u->thaw_until > now            ? u->thaw_until - now
                                                               : 0;
        return v;
}

static uint64_t stat_of(const ListenerStat *s, size_t n, const char *key) {
        for (size_t i = 0; i < n; i++)
                if (streq(s[i].key, key))
                        return s[i].value;
        return 0;
}

/* What the kernel says, not the journal: a unit thawed or restarted behind
 * standby's back is not counted frozen. */
static size_t count_kernel_frozen(const UnitView *views, size_t n) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
                if (views[i].kernel_frozen > 0)
                        k++;
        return k;
}

static void print_json(Manager *m, const UnitView *views, const ListenerStat *ls, size_t n_ls, bool have_ls,
                       char **pairs, char **locks) {
        const Journal *j = m->journal;
        FILE *f = stdout;

        fprintf(f, "{\"active\":%s,\"phase\":\"%s\",\"journal_busy\":%s,\"strategy\":",
                manager_standby_active(m) ? "true" : "false", journal_phase_to_string(j->phase),
                m->journal_busy ? "true" : "false");
        json_print_string(f, j->phase == JOURNAL_NONE ? NULL : strategy_to_string(j->strategy));
        fprintf(f, ",\"per_unit\":%s", j->per_unit ? "true" : "false");
        fprintf(f, ",\"since_realtime_usec\":%" PRIu64 ",\"cgroup_mount\":", j->since);
        json_print_string(f, m->cgroup_mount);
        fprintf(f, ",\"slack_ns\":%" PRIu64 ",\"threads_slacked\":%zu,\"units_frozen\":%zu,\"journal_damaged\":%s,"
                   "\"units\":[",
                j->slack_ns, j->n_threads, count_kernel_frozen(views, j->n_units), journal_is_damaged(j) ? "true" : "false");
        for (size_t i = 0; i < j->n_units; i++) {
                UnitView v = views[i];
                fprintf(f, "%s{\"unit\":", i ? "," : "");
                json_print_string(f, unit_name_of_cgroup(v.u->cgroup));
                fprintf(f, ",\"cgroup\":");
                json_print_string(f, v.u->cgroup);
                fprintf(f, ",\"state\":\"%s\",\"kernel_frozen\":%s,\"backend\":\"%s\",\"systemd_freezer_state\":",
                        unit_state_to_string(v.u->state), v.kernel_frozen < 0 ? "null" : v.kernel_frozen ? "true" : "false",
                        v.u->systemd ? "systemd" : "cgroupfs");
                json_print_string(f, v.systemd_state);
                if (v.u->state == UNIT_SLACKED)
                        fprintf(f, ",\"slack_ns\":%" PRIu64, v.u->slack_ns ? v.u->slack_ns : j->slack_ns);
                if (v.u->state == UNIT_THAWED) {
                        if (v.remaining == USEC_INFINITY)
                                fprintf(f, ",\"thawed_until\":\"exit\"");
                        else
                                fprintf(f, ",\"thaw_remaining_usec\":%" PRIu64, v.remaining);
                }
                fprintf(f, ",\"reason\":");
                json_print_string(f, v.u->reason);
                fputc('}', f);
        }
        fprintf(f, "],\"listener\":");
        if (!have_ls)
                fputs("null", f);
        else {
                fputc('{', f);
                for (size_t i = 0; i < n_ls; i++) {
                        fprintf(f, "%s", i ? "," : "");
                        json_print_string(f, ls[i].key);
                        fprintf(f, ":%" PRIu64, ls[i].value);
                }
                fputc('}', f);
        }
        fprintf(f, ",\"power\":");
        if (!pairs)
                fputs("null", f);
        else {
                fputc('{', f);
                for (char **p = pairs; p[0] && p[1]; p += 2) {
                        fprintf(f, "%s", p == pairs ? "" : ",");
                        json_print_string(f, p[0]);
                        fputc(':', f);
                        json_print_string(f, p[1]);
                }
                fprintf(f, "},\"locks\":[");
                for (char **p = locks; p && *p; p++) {
                        fprintf(f, "%s", p == locks ? "" : ",");
                        json_print_string(f, *p);
                }
                fputc(']', f);
        }
        fprintf(f, "}\n");
}

static void print_listener(const ListenerStat *ls, size_t n, bool have, int error) {
        if (!have) {
                printf("Listener: not reachable (%s)\n", strerror(-error));
                return;
        }
        uint64_t thaws = stat_of(ls, n, "thaws");
        printf("Listener: %" PRIu64 " events, %" PRIu64 " matched, %" PRIu64 " thaws", stat_of(ls, n, "events"),
               stat_of(ls, n, "matched"), thaws);
        if (thaws)
                printf(" (event to thaw: mean %.2f ms, max %.2f ms)",
                       (double) stat_of(ls, n, "thaw_usec_total") / (double) thaws / 1000.0,
                       (double) stat_of(ls, n, "thaw_usec_max") / 1000.0);
        /* Units left frozen that an event or a thaw window was to thaw: rare, and said only then. */
        if (stat_of(ls, n, "thaw_failures") > 0)
                printf(", %" PRIu64 " units not thawed (see its log)", stat_of(ls, n, "thaw_failures"));
        printf(", %" PRIu64 " coalesced, %" PRIu64 " refrozen, %" PRIu64 " exits, %" PRIu64 " resyncs, %" PRIu64
               " replayed\n",
               stat_of(ls, n, "coalesced"), stat_of(ls, n, "refreezes"), stat_of(ls, n, "exits"),
               stat_of(ls, n, "resyncs"), stat_of(ls, n, "replayed"));
}

/* The policy and the locks: what starts and ends standby, what logind
 * holds for it, which app holds off or blocks it, and who else holds the
 * lid. Said only when the listener answered. */
static void print_power(char **pairs, char **locks) {
        static const struct {
                const char *key, *label;
        } rows[] = {
                { "EnterOn", "Enters on" },       { "LeaveOn", "Leaves on" },
                { "LidLock", "logind's lid" },    { "PowerKeyLock", "logind's power key" },
                { "SleepLock", "Sleep delay" },   { "LidAlsoHeldBy", "Lid also held by" },
                { "PowerKeyAlsoHeldBy", "Power key also held by" },
                { "BlockedBy", "Blocked by" },    { "IdleHint", "logind idle" },
                { "LastEntry", "Last entry" },    { "LastLeave", "Last leave" },
                { "LastSleep", "Last sleep" },
        };
        for (size_t r = 0; r < ELEMENTSOF(rows); r++)
                for (char **p = pairs; p && p[0] && p[1]; p += 2)
                        if (streq(p[0], rows[r].key) && *p[1]) {
                                printf("%s: ", rows[r].label);
                                text_print_string(stdout, p[1]);
                                if (streq(p[0], "LidAlsoHeldBy"))
                                        printf(" (the lid is theirs: standby freezes before the sleep they ask for)");
                                printf("\n");
                        }
        for (char **p = locks; p && *p; p++) {
                printf("Lock on standby: ");
                text_print_string(stdout, *p);
                printf("\n");
        }
}

static void print_text(Manager *m, const UnitView *views, const ListenerStat *ls, size_t n_ls, bool have_ls,
                       int ls_error) {
        const Journal *j = m->journal;
        size_t counts[_UNIT_STATE_MAX] = {}, running = 0, gone = 0;

        if (m->journal_busy)
                printf("Journal: another standby-manager is changing it; shown as last saved\n");
        if (journal_is_damaged(j))
                printf("Journal: damaged, %zu lines could not be read (`standby-manager exit` thaws everything and "
                       "removes it)\n", j->n_errors);
        if (j->phase == JOURNAL_NONE && j->n_units == 0) {
                printf("Standby: inactive\n");
                print_listener(ls, n_ls, have_ls, ls_error);
                return;
        }
        for (size_t i = 0; i < j->n_units; i++) {
                UnitState st = j->units[i].state;
                if (views[i].kernel_frozen < 0)
                        gone++;
                else if ((st == UNIT_FROZEN || st == UNIT_FREEZING) && !views[i].kernel_frozen)
                        running++; /* thawed or restarted behind standby's back */
                else if (st == UNIT_FREEZING)
                        counts[UNIT_FROZEN]++;
                else
                        counts[st]++;
        }

        printf("Standby: %s", j->phase == JOURNAL_ACTIVE ? "active" : journal_phase_to_string(j->phase));
        if (j->phase == JOURNAL_ENTERING || j->phase == JOURNAL_EXITING)
                printf(" (interrupted? `standby-manager exit` undoes it)");
        printf("\n");
        if (j->phase != JOURNAL_NONE) {
                time_t t = (time_t) (j->since / USEC_PER_SEC);
                char tb[64];
                strftime(tb, sizeof(tb), "%Y-%m-%d %H:%M:%S", localtime(&t));
                if (j->per_unit)
                        printf("Strategy: per unit (standby.conf's [Strategy]; %s for the others), since %s\n",
                               strategy_to_string(j->strategy), tb);
                else
                        printf("Strategy: %s, since %s\n", strategy_to_string(j->strategy), tb);
        }
        if (j->n_threads && j->per_unit)
                printf("Timer slack: on %zu threads, each unit's bound below\n", j->n_threads);
        else if (j->n_threads) {
                char sb[32];
                printf("Timer slack: %s (%" PRIu64 " ns) on %zu threads\n",
                       format_timespan(sb, sizeof(sb), j->slack_ns / NSEC_PER_USEC), j->slack_ns, j->n_threads);
        }
        printf("Units: %zu frozen, %zu thawed, %zu skipped, %zu lock holders, %zu slacked", counts[UNIT_FROZEN],
               counts[UNIT_THAWED], counts[UNIT_SKIPPED], counts[UNIT_LOCKHOLDER], counts[UNIT_SLACKED]);
        if (counts[UNIT_LEFT])
                printf(", %zu left alone", counts[UNIT_LEFT]);
        if (running)
                printf(", %zu running that the journal calls frozen", running);
        if (gone)
                printf(", %zu gone", gone);
        printf("\n");
        print_listener(ls, n_ls, have_ls, ls_error);
        printf("\n%-12s %-7s %-8s %s\n", "STATE", "KERNEL", "SYSTEMD", "UNIT (CGROUP)");
        for (size_t i = 0; i < j->n_units; i++) {
                UnitView v = views[i];
                char tb[32];

                printf("%-12s %-7s %-8s ", unit_state_to_string(v.u->state),
                       v.kernel_frozen < 0 ? "gone" : v.kernel_frozen ? "frozen" : "running",
                       v.systemd_state ? v.systemd_state : "-");
                /* The name a user knows first, then where it is when that
                 * says more (a slice's unit, a user's manager). */
                const char *name = unit_name_of_cgroup(v.u->cgroup);
                text_print_string(stdout, name);
                if (name != v.u->cgroup) {
                        printf(" (");
                        text_print_string(stdout, v.u->cgroup);
                        printf(")");
                }
                if (v.u->state == UNIT_SLACKED) {
                        uint64_t ns = v.u->slack_ns ? v.u->slack_ns : j->slack_ns;
                        printf("  (slack %s)", ns >= UINT64_C(1) << 62 ? "max" : format_timespan(tb, sizeof(tb), ns / NSEC_PER_USEC));
                }
                if (v.u->state == UNIT_THAWED)
                        printf("  (%s)", v.remaining == USEC_INFINITY ? "until exit"
                                                                      : format_duration(tb, sizeof(tb), (v.remaining + USEC_PER_SEC - 1) / USEC_PER_SEC * USEC_PER_SEC));
                if (v.u->reason) {
                        printf("\n             ");
                        text_print_string(stdout, v.u->reason);
                }
                printf("\n");
        }
}

bool manager_standby_active(const Manager *m) {
        return m->journal && (m->journal->phase == JOURNAL_ACTIVE || m->journal->phase == JOURNAL_ENTERING);
}

int status_print(Manager *m) {
        _cleanup_strv_free_ char **pairs = NULL, **locks = NULL;
        usec_t now = now_usec(CLOCK_MONOTONIC);
        _cleanup_free_ ListenerStat *ls = NULL;
        _cleanup_free_ UnitView *views = NULL;
        size_t n_ls = 0;
        int r = listener_stats_get(m->bus_address, &ls, &n_ls);

        views = calloc(m->journal->n_units + 1, sizeof(UnitView));
        _cleanup_free_ SystemdCall **calls = calloc(m->journal->n_units + 1, sizeof(SystemdCall *));
        if (!views || !calls)
                return -ENOMEM;
        for (size_t i = 0; i < m->journal->n_units; i++) {
                const JournalUnit *u = &m->journal->units[i];
                views[i] = view_unit(m, u, now);
                if (u->systemd)
                        (void) systemd_call_send(u->systemd, u->cgroup, SYSTEMD_GET_FREEZER_STATE, &calls[i]);
        }
        /* systemd's view of every unit, asked of every manager at once under
         * one bound: the journal's lock is held meanwhile, and a user's
         * manager slow on purpose must not make an exit wait for it. */
        (void) systemd_calls_wait(calls, m->journal->n_units, now_usec(CLOCK_MONOTONIC) + SDBUS_CONNECT_TIMEOUT_USEC);
        for (size_t i = 0; i < m->journal->n_units; i++) {
                if (calls[i] && systemd_call_result(calls[i]) == 0)
                        views[i].systemd_state = strdup(systemd_call_value(calls[i]));
                systemd_call_free(calls[i]);
        }
        /* An answer with no pairs is still an answer: an empty list. */
        if (r >= 0 && listener_power_get(m->bus_address, &pairs, &locks) >= 0 && !pairs &&
            strv_split_words("", &pairs) < 0)
                return -ENOMEM;
        if (m->json)
                print_json(m, views, ls, n_ls, r >= 0, pairs, locks);
        else {
                print_text(m, views, ls, n_ls, r >= 0, r);
                print_power(pairs, locks);
        }
        for (size_t i = 0; i < m->journal->n_units; i++)
                free(views[i].systemd_state);
        return fflush(stdout) == 0 ? 0 : -EIO;
}

/* The journal (the state directory is root's) is not the caller's to
 * read: what the listener shows anyone, as systemctl status shows a unit's
 * state to every user. Which units are frozen, and why, is root's. */
int status_print_from_listener(Manager *m, bool is_active) {
        ListenerProperties p = {};
        int r = listener_properties_get(m->bus_address, &p);

        if (r < 0) {
                fprintf(stderr,
                        "standby-manager: The journal in %s is root's, and standby-listener did not answer "
                        "(%s): standby's state is unknown.\n",
                        m->state_dir, strerror(-r));
                return EXIT_STATUS_UNKNOWN;
        }
        /* As the journal's phases count: entering is active already. */
        bool active = streq(p.state, "active") || streq(p.state, "entering");
        if (is_active)
                printf("%s\n", p.state);
        else if (m->json) {
                printf("{\"active\":%s,\"phase\":", active ? "true" : "false");
                json_print_string(stdout, p.state);
                printf(",\"strategy\":");
                json_print_string(stdout, p.strategy);
                printf(",\"since_realtime_usec\":%" PRIu64 ",\"entered_by\":", p.since);
                json_print_string(stdout, p.entered_by);
                printf(",\"units\":null,\"listener\":{\"events\":%" PRIu64 ",\"thaws\":%" PRIu64
                       ",\"refreezes\":%" PRIu64 ",\"thaw_failures\":%" PRIu64 ",\"exits\":%" PRIu64 "},\"locks\":[",
                       p.events, p.thaws, p.refreezes, p.thaw_failures, p.exits);
                for (char **l = p.locks; l && *l; l++) {
                        printf("%s", l == p.locks ? "" : ",");
                        json_print_string(stdout, *l);
                }
                printf("]}\n");
        } else {
                printf("Standby: ");
                text_print_string(stdout, p.state);
                printf("\n");
                if (!streq(p.state, "inactive") && p.since > 0) {
                        time_t t = (time_t) (p.since / USEC_PER_SEC);
                        char tb[64];
                        strftime(tb, sizeof(tb), "%Y-%m-%d %H:%M:%S", localtime(&t));
                        printf("Strategy: ");
                        text_print_string(stdout, p.strategy);
                        printf(", since %s\n", tb);
                }
                if (p.entered_by && *p.entered_by) {
                        printf("Entered: ");
                        text_print_string(stdout, p.entered_by);
                        printf("\n");
                }
                printf("Listener: %" PRIu64 " events, %" PRIu64 " thaws, %" PRIu64 " refrozen, %" PRIu64 " exits",
                       p.events, p.thaws, p.refreezes, p.exits);
                if (p.thaw_failures > 0)
                        printf(", %" PRIu64 " units not thawed", p.thaw_failures);
                printf("\n");
                for (char **l = p.locks; l && *l; l++) {
                        printf("Lock on standby: ");
                        text_print_string(stdout, *l);
                        printf("\n");
                }
                printf("Units: shown to root only (the journal in %s is root's)\n", m->state_dir);
        }
        listener_properties_done(&p);
        if (fflush(stdout) != 0)
                return EXIT_STATUS_UNKNOWN;
        return active ? EXIT_OK : EXIT_STATUS_INACTIVE;
}
