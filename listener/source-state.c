/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a source's code asks of the listener about sources: its own state,
 * and whether a rule matches an event. Apart from the table (sources.c),
 * which names every source: a source names only this. */
#include "listener.h"

void *listener_source_state(Listener *l, const ListenerSource *source) {
        for (size_t i = 0; i < LISTENER_SOURCES_MAX && l->source_of_state[i]; i++)
                if (l->source_of_state[i] == source)
                        return l->source_states[i];
        return NULL; /* before the sources start */
}

bool listener_source_matches(const Rule *rule, const Event *ev) {
        return rule->event == ev->kind && rule->event->matches(rule, ev);
}
