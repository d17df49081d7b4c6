/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Event=socket: wake an unmodified daemon when a client connects or its push
 * server sends. While a unit is frozen, the listener holds duplicates of its
 * listening and connected stream sockets (pidfd_open + pidfd_getfd) and
 * watches them for readability, edge-triggered on the loop's hot path
 * (loop.c), without reading anything: the data stays for the daemon. Once
 * the unit is thawed the duplicates are dropped at the next sync, which
 * the thaw's journal record brings 2 ms later (not on the event's path): a
 * held duplicate keeps a socket open after its owner closes it, and the
 * peer would not see the close until then.
 *
 * Who may wake a unit this way: anyone who can connect to one of its
 * listening sockets or send on one of its connections, its bus connection
 * among them. That is the service's own public interface, by design; a
 * listening socket becomes readable only when a connection is pending. */
#include <sys/socket.h>

#include "listener.h"
#include "log.h"
#include "strv.h"

/* Event=socket: Unit=, whose sockets to watch. */
typedef struct SocketMatch {
        char *unit;
} SocketMatch;

static const EventKind event_kind_socket;

static const char *socket_rule_unit(const Rule *rule) {
        return ((const SocketMatch *) rule->match)->unit;
}

typedef struct SocketWatch {
        Listener *listener;
        const Rule *rule;
        char *cgroup;                /* the frozen leaf whose sockets these are */
        FdCharge charge;             /* the fds, from the account of the cgroup */
        int *fds;
        LoopSource **sources;
        size_t n;
        bool fired;                  /* it woke the listener: dropped at the next sync */
        struct SocketWatch *next;
} SocketWatch;

static void watch_free(SocketWatch *w) {
        for (size_t i = 0; i < w->n; i++) {
                listener_loop_remove(w->listener, w->sources[i]);
                safe_close(w->fds[i]);
        }
        listener_fds_give_back_all(w->listener, &w->charge);
        free(w->fds);
        free(w->sources);
        free(w->cgroup);
        free(w);
}

static bool thaw_first(Listener *l, const SocketWatch *w);

static void on_socket_readable(Listener *l, void *userdata) {
        SocketWatch *w = userdata;
        const char *unit = socket_rule_unit(w->rule);
        usec_t received = now_usec(CLOCK_MONOTONIC);

        bool wrote = thaw_first(l, w);
        if (wrote) {
                usec_t before = now_usec(CLOCK_MONOTONIC);
                listener_step_aside(l);
                /* The thaw statistics time the listener, not what ran meanwhile. */
                received += now_usec(CLOCK_MONOTONIC) - before;
        }
        /* Nothing but the thaw before the woken service may run. The watch
         * is edge-triggered, so the socket still readable does not wake the
         * listener again; it is dropped at the next sync, which the thaw's
         * journal record (2 ms later) brings: sd-event's turn comes after
         * this, and a sync here would free the watches of this epoll batch. */
        w->fired = true;
        (void) listener_dispatch(l, &(Event) { .kind = &event_kind_socket, .unit = unit, .stepped_aside = wrote },
                                 received);
        log_debug("Socket of %s (%s) became readable.", unit, w->cgroup);
}

/* Only stream sockets that can wake their owner: listening ones, and
 * connected ones (a push server's connection). */
static bool worth_watching(int fd) {
        int type = 0, listening = 0;
        socklen_t len = sizeof(int);
        struct sockaddr_storage peer;
        socklen_t plen = sizeof(peer);

        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_STREAM)
                return false;
        len = sizeof(int);
        if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) == 0 && listening)
                return true;
        return getpeername(fd, (struct sockaddr *) &peer, &plen) == 0;
}

static int watch_add_fd(SocketWatch *w, int fd) {
        int *nf = realloc(w->fds, (w->n + 1) * sizeof(int));
        if (!nf)
                return -ENOMEM;
        w->fds = nf;
        LoopSource **ns = realloc(w->sources, (w->n + 1) * sizeof(LoopSource *));
        if (!ns)
                return -ENOMEM;
        w->sources = ns;
        /* On the loop's hot path (loop.c), edge-triggered: readable when
         * armed is reported all the same. */
        int r = listener_loop_add(w->listener, fd, on_socket_readable, w, &w->sources[w->n]);
        if (r < 0)
                return r;
        w->fds[w->n++] = fd;
        return 0;
}

static int keep_if_worth_watching(const SocketRef *s, void *userdata) {
        SocketWatch *w = userdata;
        int r;

        if (!worth_watching(s->dup))
                return 0;
        /* Past the account's share, the walk ends: the rest of its
         * sockets are not watched. */
        r = listener_fds_take(w->listener, &w->charge, 1, "Event=socket");
        if (r < 0)
                return r;
        if (watch_add_fd(w, s->dup) < 0) {
                listener_fds_give_back(w->listener, &w->charge, 1);
                return 0;
        }
        return 1;
}

/* Duplicates every worthwhile socket of every process of the cgroup, as
 * many as its account's share of descriptors allows (fd-budget.c). */
static int watch_arm(SocketWatch *w) {
        int r = listener_fds_charge_for(w->listener, w->cgroup, &w->charge);
        if (r < 0)
                return r;
        r = listener_for_each_socket(w->listener, w->cgroup, keep_if_worth_watching, w);
        log_debug("Holding %zu sockets of %s.", w->n, w->cgroup);
        return r;
}

/* What an Event=socket rule thaws before its dispatch: indices into the
 * listener's cache, valid while its generation is the one they were taken
 * in (rule_thaws_sync()). */
typedef struct RuleThaws {
        size_t *units;
        size_t n;
} RuleThaws;

/* The source's state: what the listener holds of frozen units. */
typedef struct SocketState {
        SocketWatch *sockets;      /* of the units of Event=socket rules */
        RuleThaws *rule_thaws;     /* by rule index */
        size_t n_rule_thaws;
        uint64_t generation;       /* the cache's, when rule_thaws was taken */
        uint64_t thawed_first;     /* socket events that wrote cgroup.freeze before their dispatch */
} SocketState;

extern const ListenerSource listener_source_socket;

/* NULL outside the source's life (before its start, after its stop). */
static SocketState *state_of(Listener *l) {
        return listener_source_state(l, &listener_source_socket);
}

static void drop_rule_thaws(SocketState *st) {
        for (size_t i = 0; i < st->n_rule_thaws; i++)
                free(st->rule_thaws[i].units);
        st->rule_thaws = mfree(st->rule_thaws);
        st->n_rule_thaws = 0;
}

/* Whether an ExitStandby= rule takes the socket events of unit: its exit
 * comes first, and a thaw before the dispatch would be one the dispatch
 * does not do. */
static bool exit_rule_for(Listener *l, const char *unit) {
        const Event ev = { .kind = &event_kind_socket, .unit = unit };

        for (size_t i = 0; i < l->rules->n_rules; i++)
                if (l->rules->rules[i].exit_standby && listener_source_matches(&l->rules->rules[i], &ev))
                        return true;
        return false;
}

/* For each Event=socket rule: the units of its Thaw= that its socket event
 * writes cgroup.freeze 0 to before the dispatch (thaw_first()). One set
 * per rule, whichever of its watches fires. */
static int rule_thaws_sync(Listener *l, SocketState *st) {
        drop_rule_thaws(st);
        st->generation = l->cache_generation;
        if (!l->rules || l->rules->n_rules == 0)
                return 0;
        st->rule_thaws = calloc(l->rules->n_rules, sizeof(RuleThaws));
        if (!st->rule_thaws)
                return -ENOMEM;
        st->n_rule_thaws = l->rules->n_rules;
        for (size_t i = 0; i < l->rules->n_rules; i++) {
                const Rule *rule = &l->rules->rules[i];
                RuleThaws *t = &st->rule_thaws[i];
                bool watched = false;

                for (SocketWatch *w = st->sockets; w && !watched; w = w->next)
                        watched = w->rule == rule;
                if (!watched || rule->exit_standby || exit_rule_for(l, socket_rule_unit(rule)))
                        continue;
                for (char **name = rule->thaw; name && *name; name++)
                        for (char **leaf = listener_resolve_unit(l, *name); leaf && *leaf; leaf++) {
                                CachedUnit *c = listener_cached_unit(l, *leaf);
                                if (!c)
                                        continue;
                                size_t *nu = realloc(t->units, (t->n + 1) * sizeof(size_t));
                                if (!nu)
                                        return -ENOMEM; /* the dispatch thaws what is left out */
                                t->units = nu;
                                t->units[t->n++] = (size_t) (c - l->cache);
                        }
        }
        return 0;
}

/* The thaw first: woken after an idle gap, all that the dispatch reads
 * (rules, names, most of the cache) is cold, and the woken service would
 * wait for it. Only what the dispatch would thaw through cgroupfs, as the
 * listener's view says now: units frozen (not thawed, not freezing again),
 * not by systemd (ThawUnit, from the dispatch), in a standby that no exit
 * is ending, with the cache the set was taken from. The dispatch then does
 * everything else (windows, the record, other rules); its own write to a
 * unit thawed here changes nothing in the kernel. */
static bool thaw_first(Listener *l, const SocketWatch *w) {
        SocketState *st = state_of(l);
        size_t k = (size_t) (w->rule - l->rules->rules);
        bool wrote = false;

        if (!st || !listener_standby_active(l) || listener_exiting(l) || st->generation != l->cache_generation ||
            k >= st->n_rule_thaws)
                return false;
        for (size_t i = 0; i < st->rule_thaws[k].n; i++)
                wrote |= listener_unit_thaw_ahead(&l->cache[st->rule_thaws[k].units[i]]);
        st->thawed_first += wrote;
        return wrote;
}

/* By the listener's own view (a thaw it just did counts before the journal
 * records it). */
static bool wanted(Listener *l, const Rule *rule, const char *cgroup) {
        CachedUnit *u = listener_cached_unit(l, cgroup);
        return u && u->state == UNIT_FROZEN && l->m.journal->phase == JOURNAL_ACTIVE &&
               l->rules && rule >= l->rules->rules && rule < l->rules->rules + l->rules->n_rules;
}

/* From the journal as the listener last read it: every change to it reaches
 * on_state_change(), which reads it and calls this. */
int listener_sync_sockets(Listener *l) {
        SocketState *st = state_of(l);

        if (!l->m.journal || !st)
                return 0;
        /* Drop what is no longer frozen (or no longer ruled). */
        for (SocketWatch **p = &st->sockets; *p;) {
                SocketWatch *w = *p;
                /* A watch that fired is armed afresh if its unit is frozen
                 * (again): with unread bytes, that wakes the listener at once. */
                if (!w->fired && wanted(l, w->rule, w->cgroup)) {
                        p = &w->next;
                        continue;
                }
                *p = w->next;
                watch_free(w);
        }

        /* Arm what is newly frozen. */
        for (size_t i = 0; l->m.journal->phase == JOURNAL_ACTIVE && l->rules && i < l->rules->n_rules; i++) {
                const Rule *rule = &l->rules->rules[i];
                _cleanup_strv_free_ char **leaves = NULL;

                if (rule->event != &event_kind_socket || listener_unit_leaves(l, socket_rule_unit(rule), &leaves) < 0)
                        continue;
                for (char **leaf = leaves; *leaf; leaf++) {
                        bool armed = false;
                        for (SocketWatch *w = st->sockets; w; w = w->next)
                                if (w->rule == rule && streq(w->cgroup, *leaf))
                                        armed = true;
                        if (armed || !wanted(l, rule, *leaf))
                                continue;
                        SocketWatch *w = calloc(1, sizeof(SocketWatch));
                        if (!w || !(w->cgroup = strdup(*leaf))) {
                                free(w);
                                return -ENOMEM;
                        }
                        w->listener = l;
                        w->rule = rule;
                        (void) watch_arm(w);
                        w->next = st->sockets;
                        st->sockets = w;
                }
        }
        return rule_thaws_sync(l, st);
}

static void drop_sockets(Listener *l) {
        SocketState *st = state_of(l);

        drop_rule_thaws(st);
        while (st->sockets) {
                SocketWatch *w = st->sockets;
                st->sockets = w->next;
                watch_free(w);
        }
}

static void socket_match_done(void *match) {
        free(((SocketMatch *) match)->unit);
}

static int parse_socket_unit(Rule *rule, const char *value, char **ret_why) {
        return rule_key_unit(&((SocketMatch *) rule->match)->unit, value, ret_why);
}

static int check_socket(const Rule *rule, char **ret_why) {
        if (!socket_rule_unit(rule))
                return rule_key_fail(ret_why, "Event=socket needs Unit= (whose sockets to watch)");
        return 0;
}

static char *describe_socket(const Rule *rule) {
        char *s;
        return asprintf(&s, "on socket activity of %s", socket_rule_unit(rule)) < 0 ? NULL : s;
}

static bool match_socket(const Rule *rule, const Event *ev) {
        return listener_str_matches(socket_rule_unit(rule), ev->unit);
}

static const EventKind event_kind_socket = {
        .name = "socket",
        .match_size = sizeof(SocketMatch),
        .done = socket_match_done,
        .keys = (const RuleKey[]) { { "Unit", parse_socket_unit }, {} },
        .check = check_socket,
        .describe = describe_socket,
        .matches = match_socket,
};

/* Held for the units the journal calls frozen: set up once the journal is
 * read, and again at every change of it (listener_sync_sockets); the
 * watches point into the rules, so they are dropped before a reload. */
const ListenerSource listener_source_socket = {
        .name = "socket",
        .state_size = sizeof(SocketState),
        .kinds = (const EventKind * const[]) { &event_kind_socket, NULL },
        .before_reload = drop_sockets,
        .reload = listener_sync_sockets,
        .stop = drop_sockets,
        .statistics = (const ListenerStatistic[]) { LISTENER_SOURCE_STATISTIC(SocketState, thawed_first), {} },
};
