/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The event sources: each one's file says, in a ListenerSource, what the
 * listener sets up at start, sets up again after a reload and tears down at
 * the end, and, in an EventKind for each Event= value it delivers, that
 * kind's [Match] keys, their parsing and checks, and how a rule matches one
 * of its events. standby-listener.c, rules.c and match.c go through this
 * table: a new source is its own file plus one row here. */
#include "listener.h"
#include "log.h"

extern const ListenerSource listener_source_push, listener_source_dbus_signal, listener_source_netlink,
        listener_source_input, listener_source_dbus_call, listener_source_uevent, listener_source_socket,
        listener_source_cgroup_watch, listener_source_logind;

/* In the order they are set up; torn down in the reverse order. */
static const ListenerSource * const sources[] = {
        &listener_source_push,      &listener_source_logind,      &listener_source_dbus_signal, &listener_source_netlink,
        &listener_source_input,     &listener_source_dbus_call,   &listener_source_uevent,
        &listener_source_socket,    &listener_source_cgroup_watch,
};

/* Every source's kinds, in the table's order: built once (the table is constant). */
#define EVENT_KINDS_MAX 32
static const EventKind *kinds[EVENT_KINDS_MAX + 1];

const EventKind * const *event_kinds(void) {
        if (!kinds[0]) {
                size_t n = 0;
                for (size_t i = 0; i < ELEMENTSOF(sources); i++)
                        for (const EventKind * const *k = sources[i]->kinds; k && *k; k++) {
                                if (n == EVENT_KINDS_MAX)
                                        abort(); /* a table this size is a mistake in the code */
                                kinds[n++] = *k;
                        }
        }
        return kinds;
}

const EventKind *event_kind_from_string(const char *name) {
        for (const EventKind * const *k = event_kinds(); name && *k; k++)
                if (streq((*k)->name, name))
                        return *k;
        return NULL;
}

/* The statistics of the listener as a whole (events of every kind, thaws,
 * windows) and those more than one source counts. */
static const ListenerStatistic core_statistics[] = {
        LISTENER_STATISTIC(events),          LISTENER_STATISTIC(matched),       LISTENER_STATISTIC(thaws),
        LISTENER_STATISTIC(coalesced),       LISTENER_STATISTIC(refreezes),     LISTENER_STATISTIC(exits),
        LISTENER_STATISTIC(resyncs),         LISTENER_STATISTIC(forged),        LISTENER_STATISTIC(replayed),
        LISTENER_STATISTIC(thaw_usec_total), LISTENER_STATISTIC(thaw_usec_max), LISTENER_STATISTIC(systemd_fallbacks),
        LISTENER_STATISTIC(journal_busy),    LISTENER_STATISTIC(thaw_failures), {},
};

#define STATISTICS_MAX (sizeof(Statistics) / sizeof(uint64_t))
static ListenerStatistic statistics[STATISTICS_MAX];
static size_t n_statistics;

const ListenerStatistic *listener_statistics(size_t *ret_n) {
        if (n_statistics == 0) {
                for (const ListenerStatistic *s = core_statistics; s->key && n_statistics < STATISTICS_MAX; s++)
                        statistics[n_statistics++] = *s;
                for (size_t i = 0; i < ELEMENTSOF(sources); i++)
                        for (const ListenerStatistic *s = sources[i]->statistics; s && s->key; s++)
                                if (n_statistics < STATISTICS_MAX)
                                        statistics[n_statistics++] = *s;
        }
        *ret_n = n_statistics;
        return statistics;
}

int listener_sources_start(Listener *l) {
        bool seen[STATISTICS_MAX] = {};
        size_t n;
        int r;

        /* Every field of Statistics has exactly one row: a counter nobody can
         * read is a mistake in the code, found at the first start. */
        const ListenerStatistic *stats = listener_statistics(&n);
        for (size_t i = 0; i < n; i++) {
                size_t k = stats[i].offset / sizeof(uint64_t);
                if (seen[k])
                        return log_error_errno(-EINVAL, "Statistic %s has two rows.", stats[i].key);
                seen[k] = true;
        }
        if (n != STATISTICS_MAX)
                return log_error_errno(-EINVAL, "%zu statistics of %zu have a row in listener/sources.c or a source's.",
                                       n, STATISTICS_MAX);

        for (size_t i = 0; i < ELEMENTSOF(sources); i++)
                if (sources[i]->start && (r = sources[i]->start(l)) < 0)
                        return log_error_errno(r, "Cannot set up the %s events: %m", sources[i]->name);
        return 0;
}

void listener_sources_reload(Listener *l, RuleSet *rules) {
        for (size_t i = 0; i < ELEMENTSOF(sources); i++)
                if (sources[i]->before_reload)
                        sources[i]->before_reload(l);
        listener_forget_resolved(l);
        rule_set_free(l->rules);
        l->rules = rules;
        for (size_t i = 0; i < ELEMENTSOF(sources); i++)
                if (sources[i]->reload)
                        (void) sources[i]->reload(l);
}

void listener_sources_stop(Listener *l) {
        for (size_t i = ELEMENTSOF(sources); i > 0; i--)
                if (sources[i - 1]->stop)
                        sources[i - 1]->stop(l);
}

bool listener_source_matches(const Rule *rule, const Event *ev) {
        return rule->event == ev->kind && rule->event->matches(rule, ev);
}
