/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The bus connections of frozen processes, peeked for the D-Bus method
 * calls waiting unread in them, for Event=dbus-call (dbus-call.c) and for
 * the calls that reached a unit frozen during enter (late.c); and who owns
 * each bus name those rules watch, since only the owner's connections
 * count. A bus connection is a connected socket whose peer is the bus's
 * listening socket (is_bus_connection()): only the bus writes on them, and
 * only what its policy let through, so a method call found there was
 * delivered. The sockets are found through the processes' pidfds
 * (proc-sockets.c). */
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "bus-owner.h"
#include "dbus-wire.h"
#include "listener.h"
#include "log.h"
#include "pidfd.h"
#include "strv.h"

/* The process that owns a watched bus name, by the bus's word
 * (GetConnectionUnixProcessID), asked again whenever the name changes hands
 * (NameOwnerChanged); 0 while unknown or unowned. Only its bus connections
 * can hold a call the bus delivered to the name: any other process of a
 * Thaw= unit reads its own connection where it likes, and can stop inside
 * a message whose body it wrote (a signal it sent itself), leaving forged
 * calls as its unread bytes. Both asked without waiting. */
typedef struct CallOwner {
        Listener *listener;
        char *bus_name;
        pid_t pid;
        sd_bus_slot *changed, *query;
        struct CallOwner *next;
} CallOwner;

static int on_owner_pid(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        CallOwner *o = userdata;
        uint32_t pid = 0;

        if (sd_bus_message_is_method_error(reply, NULL) || sd_bus_message_read(reply, "u", &pid) < 0)
                pid = 0; /* no owner */
        o->pid = (pid_t) pid;
        log_debug("%s is owned by process %u.", o->bus_name, pid);
        return 0;
}

static void owner_query(CallOwner *o) {
        o->pid = 0;
        o->query = sd_bus_slot_unref(o->query); /* a reply still to come is dropped */
        if (sd_bus_call_method_async(o->listener->bus, &o->query, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                     "org.freedesktop.DBus", "GetConnectionUnixProcessID", on_owner_pid, o, "s",
                                     o->bus_name) < 0)
                log_warning("Cannot ask the bus who owns %s: calls to it wake nothing.", o->bus_name);
}

static int on_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        if (bus_signal_from_bus(m)) /* anyone may send one to the listener alone */
                owner_query(userdata);
        return 0;
}

void listener_call_owners_drop(Listener *l) {
        while (l->call_owners) {
                CallOwner *o = l->call_owners;
                l->call_owners = o->next;
                sd_bus_slot_unref(o->changed);
                sd_bus_slot_unref(o->query);
                free(o->bus_name);
                free(o);
        }
}

int listener_call_owner_add(Listener *l, const char *bus_name) {
        _cleanup_free_ char *match = NULL;
        CallOwner *o;

        for (o = l->call_owners; o; o = o->next)
                if (streq(o->bus_name, bus_name))
                        return 0;
        if (!l->bus)
                return 0; /* no bus: no owner known, no call found */
        o = calloc(1, sizeof(CallOwner));
        if (!o || !(o->bus_name = strdup(bus_name))) {
                free(o);
                return -ENOMEM;
        }
        o->listener = l;
        o->next = l->call_owners;
        l->call_owners = o;
        if (asprintf(&match, "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
                             "member='NameOwnerChanged',arg0='%s'", bus_name) < 0)
                return -ENOMEM;
        /* The match first: no change between the question and the watch. */
        int r = sd_bus_add_match_async(l->bus, &o->changed, match, on_owner_changed, NULL, o);
        if (r < 0)
                return r;
        owner_query(o);
        return 0;
}

static pid_t owner_pid(Listener *l, const char *bus_name) {
        for (CallOwner *o = l->call_owners; o; o = o->next)
                if (streq(o->bus_name, bus_name))
                        return o->pid;
        return 0;
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
        BusWalk w = { .listener = l, .bus_name = bus_name, .owner = owner_pid(l, bus_name) };
        if (w.owner <= 0)
                return false;
        (void) listener_for_each_socket(l, cgroup, find_unread_call, &w);
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
        Listener *listener;
        FdCharge charge;              /* the pidfds and duplicates, from the cgroup's account */
        BusConnRef *conns;
        size_t n;
        struct CallTarget *next;
} CallTarget;

static void call_target_free(Listener *l, CallTarget *t) {
        for (size_t i = 0; i < t->n; i++) {
                sd_event_source_disable_unref(t->conns[i].exit_watch);
                safe_close(t->conns[i].conn);
                safe_close(t->conns[i].pidfd);
        }
        listener_fds_give_back_all(l, &t->charge);
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
        /* Past the account's share, the walk ends: the rest of its
         * connections are not looked at (fd-budget.c). */
        int r = listener_fds_take(w->listener, &t->charge, 1, "Event=dbus-call");
        if (r < 0)
                return r;
        /* The duplicate only within the share too; else taken afresh at each call. */
        hold = hold && listener_fds_take(w->listener, &t->charge, 1, "Event=dbus-call") >= 0;
        pidfd = fcntl(s->pidfd, F_DUPFD_CLOEXEC, 3);
        if (pidfd < 0) {
                listener_fds_give_back(w->listener, &t->charge, 1 + hold);
                return -errno;
        }
        t->conns[t->n++] = (BusConnRef) { .pid = s->pid, .pidfd = pidfd, .fd = s->fd, .conn = hold ? s->dup : -EBADF };
        return hold; /* the duplicate kept, or closed */
}

static void conn_drop(Listener *l, CallTarget *t, BusConnRef *c) {
        if (c->conn < 0)
                return;
        c->conn = safe_close(c->conn);
        listener_fds_give_back(l, &t->charge, 1);
}

static int on_conn_owner_exit(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        CallTarget *t = userdata;
        Listener *l = t->listener;

        for (size_t i = 0; i < t->n; i++)
                if (t->conns[i].exit_watch == s) {
                        conn_drop(l, t, &t->conns[i]);
                        t->conns[i].exit_watch = sd_event_source_disable_unref(t->conns[i].exit_watch);
                        break;
                }
        return 0;
}

/* Once a target's connections are all found (the array is final). */
static void watch_conn_owners(Listener *l, CallTarget *t) {
        for (size_t i = 0; i < t->n; i++)
                if (t->conns[i].conn >= 0 && sd_event_add_io(l->event, &t->conns[i].exit_watch, t->conns[i].pidfd,
                                                              EPOLLIN, on_conn_owner_exit, t) < 0)
                        conn_drop(l, t, &t->conns[i]); /* taken afresh at each call */
}

int listener_call_delivered(Listener *l, const Rule *rule, const char *sender, uint32_t serial) {
        CallQuery q = { .bus_name = listener_call_rule_bus_name(rule), .sender = sender, .serial = serial };
        pid_t owner = owner_pid(l, q.bus_name);
        bool frozen = false;

        for (CallTarget *t = l->call_targets; t; t = t->next) {
                CachedUnit *u = listener_cached_unit(l, t->cgroup);
                if (t->rule != rule || !u || !unit_machine_stopped(u->state))
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
                        _cleanup_close_ int fd = pidfd_dup_fd(t->conns[i].pidfd, t->conns[i].fd);
                        /* The same socket still: the process is frozen, but
                         * its descriptor table might be shared. */
                        if (fd >= 0 && is_bus_connection(l, fd) && socket_holds_call(fd, &q))
                                return 1;
                }
        }
        return frozen ? 0 : -ESRCH;
}

void listener_drop_call_targets(Listener *l) {
        while (l->call_targets) {
                CallTarget *t = l->call_targets;
                l->call_targets = t->next;
                call_target_free(l, t);
        }
}

/* Finds the bus connections of every frozen leaf of every dbus-call rule's
 * Thaw= units, afresh at every change: a unit thawed for a window and frozen
 * again meanwhile may have other connections now. */
int listener_sync_call_targets(Listener *l) {
        listener_drop_call_targets(l);
        if (!l->m.journal)
                return 0;
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
                                if (!u || !unit_machine_stopped(u->state))
                                        continue;
                                CallTarget *t = calloc(1, sizeof(CallTarget));
                                if (!t || !(t->cgroup = strdup(*leaf))) {
                                        free(t);
                                        return -ENOMEM;
                                }
                                t->rule = rule;
                                t->listener = l;
                                t->next = l->call_targets;
                                l->call_targets = t;
                                if (listener_fds_charge_for(l, t->cgroup, &t->charge) < 0)
                                        continue; /* gone: nothing to hold */
                                (void) listener_for_each_socket(l, t->cgroup, add_if_bus_connection,
                                                       &(BusWalk) { .listener = l, .target = t,
                                                                    .owner = owner_pid(
                                                                            l, listener_call_rule_bus_name(rule)) });
                                watch_conn_owners(l, t);
                                log_debug("%zu bus connections of %s for calls to %s.", t->n, t->cgroup,
                                          listener_call_rule_bus_name(rule));
                        }
                }
        }
        return 0;
}
