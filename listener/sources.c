/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The event sources: each one's file says, in a ListenerSource, what the
 * listener sets up at start, sets up again after a reload and tears down at
 * the end, and, in an EventKind for each Event= value it delivers, that
 * kind's [Match] keys, their parsing and checks, and how a rule matches one
 * of its events. standby-listener.c, rules.c and match.c go through this
 * table: a new source is its own file plus one row here; what it keeps, its
 * statistics among it, is a state of its own type that the listener
 * allocates for it (listener_source_state(), source-state.c: a source's
 * file never names this table's). */
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

int listener_sources_start(Listener *l) {
        int r;

        static_assert(ELEMENTSOF(sources) <= LISTENER_SOURCES_MAX, "LISTENER_SOURCES_MAX too small");
        /* Every field of Statistics has exactly one row, and every row of a
         * source lies inside its state: a counter nobody can read, or a row
         * that reads past the state, is a mistake in the code, found at the
         * first start. */
        r = listener_statistics_check();
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(sources); i++)
                for (const ListenerStatistic *s = sources[i]->statistics; s && s->key; s++)
                        if (s->offset + sizeof(uint64_t) > sources[i]->state_size)
                                return log_error_errno(-EINVAL, "Statistic %s lies outside the %s source's state.",
                                                       s->key, sources[i]->name);

        /* Every state first: a source's code may run (its reload, a sync
         * that the journal brings) once any source has started. */
        for (size_t i = 0; i < ELEMENTSOF(sources); i++)
                l->source_of_state[i] = sources[i];
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
