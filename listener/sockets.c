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
 * listening socket becomes readable only when a connection is pending.
 *
 * For Event=dbus-call the bus connections of frozen units are found here
 * too (a connected socket whose peer address is the bus's listening socket,
 * which no one else can bind): only the bus writes on them, and only what
 * its policy let through, so a method call found there was delivered. */
#include <dirent.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "cgroup.h"
#include "dbus-wire.h"
#include "fileio.h"
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
        int *fds;
        LoopSource **sources;
        size_t n;
        bool fired;                  /* it woke the listener: dropped at the next sync */
        struct SocketWatch *next;
} SocketWatch;

static int pidfd_open_(pid_t pid) {
        return (int) syscall(SYS_pidfd_open, pid, 0);
}

static int pidfd_getfd_(int pidfd, int fd) {
        return (int) syscall(SYS_pidfd_getfd, pidfd, fd, 0);
}

static void watch_free(SocketWatch *w) {
        for (size_t i = 0; i < w->n; i++) {
                listener_loop_remove(w->listener, w->sources[i]);
                safe_close(w->fds[i]);
        }
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

/* One socket of a process of a cgroup, as for_each_socket() finds it. */
typedef struct SocketRef {
        pid_t pid;                   /* the process */
        int pidfd;                   /* the same */
        int fd;                      /* the socket's number there */
        int dup;                     /* a duplicate of it */
} SocketRef;

/* Calls fn with a duplicate of every socket of every process of the cgroup
 * (but stdout and stderr: output, a journal stream under systemd); fn keeps
 * the duplicate (returns > 0) or leaves it to be closed. A negative return
 * stops the walk. */
static int for_each_socket(Listener *l, const char *cgroup, int (*fn)(const SocketRef *s, void *userdata),
                           void *userdata) {
        _cleanup_close_ int cg = -EBADF;
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;
        int r;

        r = cgroup_open(l->m.root_fd, cgroup, &cg);
        if (r >= 0)
                r = cgroup_list_pids(cg, false, &pids, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                _cleanup_closedir_ DIR *d = NULL;
                _cleanup_close_ int pidfd = pidfd_open_(pids[i]);
                char path[64];
                struct dirent *de;

                if (pidfd < 0)
                        continue; /* gone */
                snprintf(path, sizeof(path), "/proc/%d/fd", (int) pids[i]);
                if (opendir_at(AT_FDCWD, path, &d) < 0)
                        continue;
                while ((de = readdir(d))) {
                        char target[64];
                        int fd;
                        ssize_t k;

                        if (de->d_name[0] < '0' || de->d_name[0] > '9')
                                continue;
                        if (streq(de->d_name, "1") || streq(de->d_name, "2"))
                                continue;
                        k = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1);
                        if (k <= 0)
                                continue;
                        target[k] = 0;
                        if (!strneq(target, "socket:", 7))
                                continue;
                        fd = pidfd_getfd_(pidfd, atoi(de->d_name));
                        if (fd < 0)
                                continue;
                        r = fn(&(SocketRef) { .pid = pids[i], .pidfd = pidfd, .fd = atoi(de->d_name), .dup = fd },
                               userdata);
                        if (r <= 0)
                                safe_close(fd);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static int keep_if_worth_watching(const SocketRef *s, void *userdata) {
        return worth_watching(s->dup) && watch_add_fd(userdata, s->dup) >= 0;
}

/* Duplicates every worthwhile socket of every process of the cgroup. */
static int watch_arm(SocketWatch *w) {
        int r = for_each_socket(w->listener, w->cgroup, keep_if_worth_watching, w);
        log_debug("Holding %zu sockets of %s.", w->n, w->cgroup);
        return r;
}

/* Whether fd is a connection to the bus: a stream socket whose peer is the
 * bus's listening socket. The peer address of a connected AF_UNIX socket is
 * the name the listening end was bound to: a client that connected to the
 * unit's own socket shows its own (usually none). The name alone is not
 * the bus: anyone may bind the same path in a mount namespace of their own
 * (an unprivileged user namespace gives one), so the credentials of who
 * listened, which every client of one listening socket sees alike
 * (SO_PEERCRED: the bus's, or PID 1's under socket activation), must be
 * the bus's too; another user's listener shows its own PID and uid. */
static bool is_bus_connection(Listener *l, int fd) {
        struct sockaddr_un peer;
        socklen_t len = sizeof(peer);
        struct ucred cred;
        socklen_t clen = sizeof(cred);
        int type = 0;
        socklen_t tlen = sizeof(type);

        if (l->bus_peer_len <= offsetof(struct sockaddr_un, sun_path))
                return false; /* the bus's own address unknown or unnamed: nothing is trusted */
        return getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) == 0 && type == SOCK_STREAM &&
               getpeername(fd, (struct sockaddr *) &peer, &len) == 0 && len == l->bus_peer_len &&
               memcmp(&peer, &l->bus_peer, len) == 0 &&
               getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0 && clen == sizeof(cred) &&
               cred.pid == l->bus_peer_cred.pid && cred.uid == l->bus_peer_cred.uid &&
               cred.gid == l->bus_peer_cred.gid;
}

/* What a peek looks for: a method call to bus_name; with sender set, the
 * one call of that sender and serial. */
typedef struct CallQuery {
        const char *bus_name;
        const char *sender;
        uint32_t serial;
} CallQuery;

/* Whether the unread bytes of a bus connection hold the call q asks for:
 * peeked, never read, and walked message by message from the first unread
 * byte (dbus-wire.c). The owner reads whole messages, or its library
 * buffers what it read; a stream that does not start at a message boundary
 * (the owner frozen in the middle of a read) shows no call, never a forged
 * one. */
static bool socket_holds_call(int fd, const CallQuery *q) {
        /* A frozen owner's unread messages: up to what a socket holds. */
        static uint8_t buf[256 * 1024];
        ssize_t n = recv(fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);

        return n > 0 && dbus_wire_holds_call(buf, (size_t) n, q->bus_name, q->sender, q->serial);
}

/* A walk over a unit's sockets (for_each_socket()) in search of its bus
 * connections. */
typedef struct BusWalk {
        Listener *listener;
        const char *bus_name;        /* find_unread_call(): the call's destination */
        pid_t owner;                 /* the process owning it: find_unread_call() looks at its
                                      * connections alone, add_if_bus_connection() holds them */
        bool found;
        struct CallTarget *target;         /* add_if_bus_connection(): where they go */
} BusWalk;

static int find_unread_call(const SocketRef *s, void *userdata) {
        BusWalk *w = userdata;

        if (s->pid != w->owner || !is_bus_connection(w->listener, s->dup) ||
            !socket_holds_call(s->dup, &(CallQuery) { .bus_name = w->bus_name }))
                return 0;
        w->found = true;
        return -ECANCELED; /* found: stop the walk */
}

bool listener_unit_has_unread_call(Listener *l, const char *cgroup, const char *bus_name) {
        BusWalk w = { .listener = l, .bus_name = bus_name, .owner = listener_call_owner_pid(l, bus_name) };
        if (w.owner <= 0)
                return false;
        (void) for_each_socket(l, cgroup, find_unread_call, &w);
        return w.found;
}

/* The bus connections of a frozen leaf of a dbus-call rule's Thaw= units.
 * Those of the process that owns the rule's BusName= are held, each socket
 * once (a process may hold one under many numbers), a duplicate checked
 * once to be the bus's, so that a call the monitor reports is looked for
 * with one peek; and watched through the process's pidfd: a held
 * duplicate would keep the connection, and the names it owns, alive after
 * its process died (a frozen process still dies of SIGKILL), so the
 * process's exit drops it. The rest (another process's; any, while the
 * owner is not known, or without the watch) are taken again, by
 * pidfd_getfd(), and checked at each call. */
typedef struct BusConnRef {
        pid_t pid;
        int pidfd;
        int fd;                       /* its number in the process */
        int conn;                     /* the held duplicate, or -EBADF */
        sd_event_source *exit_watch;  /* on pidfd: the process's end drops conn */
} BusConnRef;

typedef struct CallTarget {
        const Rule *rule;
        char *cgroup;
        BusConnRef *conns;
        size_t n;
        struct CallTarget *next;
} CallTarget;

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
        CallTarget *call_targets;  /* the bus connections of the units of Event=dbus-call rules */
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

static void call_target_free(CallTarget *t) {
        for (size_t i = 0; i < t->n; i++) {
                sd_event_source_disable_unref(t->conns[i].exit_watch);
                safe_close(t->conns[i].conn);
                safe_close(t->conns[i].pidfd);
        }
        free(t->conns);
        free(t->cgroup);
        free(t);
}

static int add_if_bus_connection(const SocketRef *s, void *userdata) {
        BusWalk *w = userdata;
        CallTarget *t = w->target;
        BusConnRef *nc;
        int pidfd;

        if (!is_bus_connection(w->listener, s->dup))
                return 0;
        bool hold = s->pid == w->owner;
        struct stat st;
        if (hold && fstat(s->dup, &st) >= 0)
                for (size_t i = 0; i < t->n; i++) {
                        struct stat held;
                        if (t->conns[i].conn >= 0 && fstat(t->conns[i].conn, &held) >= 0 && held.st_ino == st.st_ino &&
                            held.st_dev == st.st_dev)
                                return 0; /* the same socket, held already: its one peek covers it */
                }
        nc = realloc(t->conns, (t->n + 1) * sizeof(BusConnRef));
        if (!nc)
                return -ENOMEM;
        t->conns = nc;
        pidfd = fcntl(s->pidfd, F_DUPFD_CLOEXEC, 3);
        if (pidfd < 0)
                return -errno;
        t->conns[t->n++] = (BusConnRef) { .pid = s->pid, .pidfd = pidfd, .fd = s->fd, .conn = hold ? s->dup : -EBADF };
        return hold; /* the duplicate kept, or closed */
}

static int on_conn_owner_exit(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        BusConnRef *c = userdata;

        c->conn = safe_close(c->conn);
        c->exit_watch = sd_event_source_disable_unref(c->exit_watch);
        return 0;
}

/* Once a target's connections are all found (the array is final). */
static void watch_conn_owners(Listener *l, CallTarget *t) {
        for (size_t i = 0; i < t->n; i++)
                if (t->conns[i].conn >= 0 &&
                    sd_event_add_io(l->event, &t->conns[i].exit_watch, t->conns[i].pidfd, EPOLLIN, on_conn_owner_exit,
                                    &t->conns[i]) < 0)
                        t->conns[i].conn = safe_close(t->conns[i].conn); /* taken afresh at each call */
}

int listener_call_delivered(Listener *l, const Rule *rule, const char *sender, uint32_t serial) {
        CallQuery q = { .bus_name = listener_call_rule_bus_name(rule), .sender = sender, .serial = serial };
        pid_t owner = listener_call_owner_pid(l, q.bus_name);
        bool frozen = false;

        for (CallTarget *t = state_of(l) ? state_of(l)->call_targets : NULL; t; t = t->next) {
                CachedUnit *u = listener_cached_unit(l, t->cgroup);
                if (t->rule != rule || !u || (u->state != UNIT_FROZEN && u->state != UNIT_FREEZING))
                        continue;
                frozen = true;
                for (size_t i = 0; i < t->n; i++) {
                        /* Only the owner's: another process's unread bytes are
                         * what it chose to leave (dbus-call.c). */
                        if (owner <= 0 || t->conns[i].pid != owner)
                                continue;
                        if (t->conns[i].conn >= 0) {
                                if (socket_holds_call(t->conns[i].conn, &q))
                                        return 1;
                                continue;
                        }
                        _cleanup_close_ int fd = pidfd_getfd_(t->conns[i].pidfd, t->conns[i].fd);
                        /* The same socket still: the process is frozen, but
                         * its descriptor table might be shared. */
                        if (fd >= 0 && is_bus_connection(l, fd) && socket_holds_call(fd, &q))
                                return 1;
                }
        }
        return frozen ? 0 : -ESRCH;
}

static void drop_call_targets(SocketState *st) {
        while (st->call_targets) {
                CallTarget *t = st->call_targets;
                st->call_targets = t->next;
                call_target_free(t);
        }
}

/* Finds the bus connections of every frozen leaf of every dbus-call rule's
 * Thaw= units, afresh at every change: a unit thawed for a window and frozen
 * again meanwhile may have other connections now. */
static int sync_call_targets(Listener *l, SocketState *st) {
        drop_call_targets(st);
        for (size_t i = 0; l->m.journal->phase == JOURNAL_ACTIVE && l->rules && i < l->rules->n_rules; i++) {
                const Rule *rule = &l->rules->rules[i];
                if (rule->event != &event_kind_dbus_call)
                        continue;
                for (char **name = rule->thaw; name && *name; name++) {
                        _cleanup_strv_free_ char **leaves = NULL;
                        if (listener_unit_leaves(l, *name, &leaves) < 0)
                                continue;
                        for (char **leaf = leaves; *leaf; leaf++) {
                                CachedUnit *u = listener_cached_unit(l, *leaf);
                                /* Freezing again too: a call that reaches it
                                 * as the kernel freezes it would be lost. */
                                if (!u || (u->state != UNIT_FROZEN && u->state != UNIT_FREEZING))
                                        continue;
                                CallTarget *t = calloc(1, sizeof(CallTarget));
                                if (!t || !(t->cgroup = strdup(*leaf))) {
                                        free(t);
                                        return -ENOMEM;
                                }
                                t->rule = rule;
                                t->next = st->call_targets;
                                st->call_targets = t;
                                (void) for_each_socket(l, t->cgroup, add_if_bus_connection,
                                                       &(BusWalk) { .listener = l, .target = t,
                                                                    .owner = listener_call_owner_pid(
                                                                            l, listener_call_rule_bus_name(rule)) });
                                watch_conn_owners(l, t);
                                log_debug("%zu bus connections of %s for calls to %s.", t->n, t->cgroup,
                                          listener_call_rule_bus_name(rule));
                        }
                }
        }
        return 0;
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

        if (!st || !l->standby_active || listener_exiting(l) || st->generation != l->cache_generation ||
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
        (void) sync_call_targets(l, st);
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

        drop_call_targets(st);
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
