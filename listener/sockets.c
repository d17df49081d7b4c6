/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Event=socket: wake an unmodified daemon when a client connects or its push
 * server sends. While a unit is frozen, the listener holds duplicates of its
 * listening and connected stream sockets (pidfd_open + pidfd_getfd) and
 * watches them for readability, level-triggered, without reading anything:
 * the data stays for the daemon. When the unit is thawed the duplicates are
 * dropped at once: a held duplicate keeps a socket open after its owner
 * closes it, and the peer would never see the close. */
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

struct SocketWatch {
        Listener *listener;
        const Rule *rule;
        char *cgroup;                /* the frozen leaf whose sockets these are */
        int *fds;
        sd_event_source **sources;
        size_t n;
        struct SocketWatch *next;
};

static int pidfd_open_(pid_t pid) {
        return (int) syscall(SYS_pidfd_open, pid, 0);
}

static int pidfd_getfd_(int pidfd, int fd) {
        return (int) syscall(SYS_pidfd_getfd, pidfd, fd, 0);
}

static void watch_free(SocketWatch *w) {
        for (size_t i = 0; i < w->n; i++) {
                sd_event_source_disable_unref(w->sources[i]);
                safe_close(w->fds[i]);
        }
        free(w->fds);
        free(w->sources);
        free(w->cgroup);
        free(w);
}

static int on_socket_readable(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        SocketWatch *w = userdata;
        Listener *l = w->listener;
        const char *unit = w->rule->unit;

        log_debug("Socket of %s (%s) became readable.", unit, w->cgroup);
        /* The thaw drops this watch (sync), so nothing here may be touched after. */
        (void) listener_dispatch(l, &(Event) { .kind = EVENT_SOCKET, .unit = unit }, now_usec(CLOCK_MONOTONIC));
        return listener_sync_sockets(l);
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
        sd_event_source **ns = realloc(w->sources, (w->n + 1) * sizeof(sd_event_source *));
        if (!ns)
                return -ENOMEM;
        w->sources = ns;
        int r = sd_event_add_io(w->listener->event, &w->sources[w->n], fd, EPOLLIN, on_socket_readable, w);
        if (r < 0)
                return r;
        w->fds[w->n++] = fd;
        return 0;
}

/* Calls fn with a duplicate of every socket of every process of the cgroup
 * (but stdout and stderr: output, a journal stream under systemd); fn keeps
 * the duplicate (returns > 0) or leaves it to be closed. A negative return
 * stops the walk. */
static int for_each_socket(Listener *l, const char *cgroup, int (*fn)(int fd, void *userdata), void *userdata) {
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
                        r = fn(fd, userdata);
                        if (r <= 0)
                                safe_close(fd);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static int keep_if_worth_watching(int fd, void *userdata) {
        return worth_watching(fd) && watch_add_fd(userdata, fd) >= 0;
}

/* Duplicates every worthwhile socket of every process of the cgroup. */
static int watch_arm(SocketWatch *w) {
        int r = for_each_socket(w->listener, w->cgroup, keep_if_worth_watching, w);
        log_debug("Holding %zu sockets of %s.", w->n, w->cgroup);
        return r;
}

/* Whether unread bytes on a connected stream socket hold a D-Bus method
 * call: the bytes are peeked, never read, and walked message by message
 * (dbus-wire.c). */
static int find_method_call(int fd, void *userdata) {
        static uint8_t buf[65536];
        int type = 0;
        socklen_t len = sizeof(type);
        ssize_t n;
        DBusHeader h;

        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_STREAM)
                return 0;
        n = recv(fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
        for (uint64_t off = 0; n > 0 && off < (uint64_t) n && dbus_wire_header(buf + off, (size_t) n - off, &h) > 0;
             off += h.total_size)
                if (h.type == DBUS_TYPE_METHOD_CALL) {
                        *(bool *) userdata = true;
                        return -ECANCELED; /* found: stop the walk */
                }
        return 0;
}

bool listener_unit_has_unread_call(Listener *l, const char *cgroup) {
        bool found = false;
        (void) for_each_socket(l, cgroup, find_method_call, &found);
        return found;
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
        if (!l->m.journal)
                return 0;
        /* Drop what is no longer frozen (or no longer ruled). */
        for (SocketWatch **p = &l->sockets; *p;) {
                SocketWatch *w = *p;
                if (wanted(l, w->rule, w->cgroup)) {
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

                if (rule->event != EVENT_SOCKET || listener_unit_leaves(l, rule->unit, &leaves) < 0)
                        continue;
                for (char **leaf = leaves; *leaf; leaf++) {
                        bool armed = false;
                        for (SocketWatch *w = l->sockets; w; w = w->next)
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
                        w->next = l->sockets;
                        l->sockets = w;
                }
        }
        return 0;
}

void listener_drop_sockets(Listener *l) {
        while (l->sockets) {
                SocketWatch *w = l->sockets;
                l->sockets = w->next;
                watch_free(w);
        }
}
