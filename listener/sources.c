/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The event sources: each one's file says, in a ListenerSource, what the
 * listener sets up at start, sets up again after a reload and tears down at
 * the end, and, in an EventKind for each Event= value it delivers, that
 * kind's [Match] keys, their parsing and checks, and how a rule matches one
 * of its events. standby-listener.c, rules.c and match.c go through this
 * table: a new source is its own file plus one row here; what it keeps, its
 * statistics among it, is a state of its own type that the listener
 * allocates for it (listener_source_state()). */
#include <assert.h>
#include <string.h>

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
        LISTENER_STATISTIC(journal_busy),    LISTENER_STATISTIC(thaw_failures), LISTENER_STATISTIC(jobs_released),
        LISTENER_STATISTIC(systemd_connects), LISTENER_STATISTIC(records),   LISTENER_STATISTIC(systemd_links),
        LISTENER_STATISTIC(systemd_signals), LISTENER_STATISTIC(systemd_renewals), LISTENER_STATISTIC(yields),
        {},
};

/* GetStatistics' rows: the listener's own, then each source's, with the
 * source whose state holds the counter (NULL: Statistics). */
#define STATISTICS_MAX 64
static struct {
        const ListenerStatistic *row;
        size_t source;
} statistics[STATISTICS_MAX];
static size_t n_statistics;

static void statistics_build(void) {
        if (n_statistics > 0)
                return;
        for (const ListenerStatistic *s = core_statistics; s->key; s++)
                statistics[n_statistics++].row = s;
        for (size_t i = 0; i < ELEMENTSOF(sources); i++)
                for (const ListenerStatistic *s = sources[i]->statistics; s && s->key; s++) {
                        if (n_statistics == STATISTICS_MAX)
                                abort(); /* a table this size is a mistake in the code */
                        statistics[n_statistics].row = s;
                        statistics[n_statistics++].source = i + 1;
                }
}

size_t listener_n_statistics(void) {
        statistics_build();
        return n_statistics;
}

const char *listener_statistic_key(size_t i) {
        statistics_build();
        return i < n_statistics ? statistics[i].row->key : NULL;
}

uint64_t listener_statistic_value(Listener *l, size_t i) {
        const uint8_t *base;
        uint64_t v;

        statistics_build();
        if (i >= n_statistics)
                return 0;
        base = statistics[i].source ? l->source_states[statistics[i].source - 1] : (const uint8_t *) &l->stats;
        if (!base)
                return 0; /* a source not started: nothing counted */
        memcpy(&v, base + statistics[i].row->offset, sizeof(v));
        return v;
}

void *listener_source_state(Listener *l, const ListenerSource *source) {
        for (size_t i = 0; i < ELEMENTSOF(sources); i++)
                if (sources[i] == source)
                        return l->source_states[i];
        abort(); /* a source not in the table is a mistake in the code */
}

int listener_sources_start(Listener *l) {
        bool seen[sizeof(Statistics) / sizeof(uint64_t)] = {};
        size_t n = 0;
        int r;

        static_assert(ELEMENTSOF(sources) <= LISTENER_SOURCES_MAX, "LISTENER_SOURCES_MAX too small");
        /* Every field of Statistics has exactly one row, and every row of a
         * source lies inside its state: a counter nobody can read, or a row
         * that reads past the state, is a mistake in the code, found at the
         * first start. */
        for (const ListenerStatistic *s = core_statistics; s->key; s++, n++) {
                size_t k = s->offset / sizeof(uint64_t);
                if (seen[k])
                        return log_error_errno(-EINVAL, "Statistic %s has two rows.", s->key);
                seen[k] = true;
        }
        if (n != ELEMENTSOF(seen))
                return log_error_errno(-EINVAL, "%zu statistics of %zu have a row in listener/sources.c.", n,
                                       ELEMENTSOF(seen));
        for (size_t i = 0; i < ELEMENTSOF(sources); i++)
                for (const ListenerStatistic *s = sources[i]->statistics; s && s->key; s++)
                        if (s->offset + sizeof(uint64_t) > sources[i]->state_size)
                                return log_error_errno(-EINVAL, "Statistic %s lies outside the %s source's state.",
                                                       s->key, sources[i]->name);

        /* Every state first: a source's code may run (its reload, a sync
         * that the journal brings) once any source has started. */
        for (size_t i = 0; i < ELEMENTSOF(sources); i++)
                if (sources[i]->state_size > 0 && !(l->source_states[i] = calloc(1, sources[i]->state_size)))
                        return log_error_errno(-ENOMEM, "Cannot set up the %s events: %m", sources[i]->name);
        for (size_t i = 0; i < ELEMENTSOF(sources); i++)
                if (sources[i]->start && (r = sources[i]->start(l)) < 0)
                        return log_error_errno(r, "Cannot set up the %s events: %m", sources[i]->name);
        return 0;
}

RuleSet *listener_sources_reload(Listener *l, RuleSet *rules) {
        RuleSet *old = l->rules;

        for (size_t i = 0; i < ELEMENTSOF(sources); i++)
                if (sources[i]->before_reload)
                        sources[i]->before_reload(l);
        listener_forget_resolved(l);
        l->rules = rules;
        for (size_t i = 0; i < ELEMENTSOF(sources); i++)
                if (sources[i]->reload)
                        (void) sources[i]->reload(l);
        return old;
}

void listener_sources_stop(Listener *l) {
        for (size_t i = ELEMENTSOF(sources); i > 0; i--)
                if (sources[i - 1]->stop && (sources[i - 1]->state_size == 0 || l->source_states[i - 1]))
                        sources[i - 1]->stop(l);
        for (size_t i = 0; i < ELEMENTSOF(sources); i++)
                l->source_states[i] = mfree(l->source_states[i]);
}

bool listener_source_matches(const Rule *rule, const Event *ev) {
        return rule->event == ev->kind && rule->event->matches(rule, ev);
}
