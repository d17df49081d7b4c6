/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The event sources: each one's file says, in a ListenerSource, what the
 * listener sets up at start, sets up again after a reload, tears down at
 * the end, and how a rule of the kinds it delivers matches one of its
 * events; standby-listener.c and match.c go through this table. A new
 * source is its own file plus one row here (and its keys in
 * common/rules.c). */
#include "listener.h"
#include "log.h"

/* In the order they are set up; torn down in the reverse order. */
static const ListenerSource * const sources[] = {
        &listener_source_push,    &listener_source_dbus_signal, &listener_source_netlink, &listener_source_input,
        &listener_source_dbus_call, &listener_source_uevent,     &listener_source_socket,
        &listener_source_cgroup_watch,
};

static const ListenerSource *source_of(EventKind kind) {
        for (size_t i = 0; i < ELEMENTSOF(sources); i++)
                if (sources[i]->kinds & EVENT_KIND_MASK(kind))
                        return sources[i];
        return NULL;
}

int listener_sources_start(Listener *l) {
        int r;

        /* Every kind a rule may name has its source. */
        for (EventKind kind = 0; kind < _EVENT_KIND_MAX; kind++)
                if (!source_of(kind))
                        return log_error_errno(-EINVAL, "Event kind %d has no source in listener/sources.c.", (int) kind);
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
        const ListenerSource *s;

        if (rule->event != ev->kind || !(s = source_of(ev->kind)))
                return false;
        return s->matches(rule, ev);
}
