/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* FreezeUnit and ThawUnit from the listener's loop, never waited for.
 *
 * The manager's systemd backend (freezer/systemd-backend.c) calls systemd
 * and waits, up to 30 s; a systemd manager that is slow, or stopped, would
 * leave the listener deaf for that long. Here each call is sent on a
 * connection attached to the loop, with a short timeout, and its answer is
 * an event: a thaw that systemd refuses or does not answer in time is done
 * through cgroup.freeze instead, so that no unit stays frozen (systemd's
 * FreezerState may then lag behind, as after a refused thaw at shutdown).
 * A freeze has no such fallback: freezing behind systemd's back would leave
 * a unit that its ThawUnit no longer thaws. Its outcome is told by
 * cgroup.events, as for cgroupfs (refreeze.c). Calls on one connection are
 * taken in order, so a freeze and a later thaw queued at a stopped manager
 * end thawed when it runs again. A link is authenticated only while it is
 * used (SystemdLink, below). */
#include <poll.h>
#include <stddef.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "cgroup.h"
#include "listener.h"
#include "log.h"
#include "private-socket.h"
#include "unit-name.h"

typedef struct SystemdCall SystemdCall;
typedef struct ThawOutcome ThawOutcome;
typedef struct LinkWaiter LinkWaiter;

/* One that waits for a link to take calls (listener_systemd_acquire). */
struct LinkWaiter {
        SystemdLinkReady ready;
        void *userdata;
        LinkWaiter *next;
};

/* The link to one systemd manager. systemd sends every signal it emits
 * (each job, each property change of every unit) to each of its private
 * connections that has authenticated, asked for or not, and nothing to one
 * that has not. So a link authenticates only to be used, and, once unused,
 * is closed by the first signal that its calls did not cause (one that
 * comes LINK_GRACE_USEC after the last call ended): a quiet manager's link
 * stays open and costs nothing, a busy one's costs one wake-up. Closed, it
 * holds a spare, a connected socket that has not authenticated, and a call
 * costs the authentication's round trip (sd-bus sends it at once and
 * queues the call until the manager answers). systemd drops a socket that has not
 * authenticated after 90 s: a spare is renewed once a minute, and watched
 * for its hang-up alone (its manager restarted) meanwhile, which wakes
 * nothing else. A user manager's socket (/run/user/UID/systemd/private) is
 * connected by a child (common/private-socket.c: its path is the user's,
 * who could make a lookup wait): its answer is an IO event, its bound a
 * timer, and the users wait for it in order in waiters. */
struct SystemdLink {
        Listener *listener;
        uint64_t id;              /* how users let go of it (listener_systemd_release) */
        char *address;
        sd_bus *bus;              /* authenticated, or authenticating: in use */
        unsigned n_users;         /* calls in flight, and users holding it (held-job.c) */
        usec_t last_used;         /* when its last user let go */
        bool unasked;             /* a signal no call caused came while unused: to be closed */
        sd_event_source *close_timer; /* closes the bus, from the loop rather than from sd-bus's dispatch */
        int spare;                /* connected, not authenticated: systemd sends it nothing */
        usec_t connected;         /* when the socket came (CLOCK_MONOTONIC) */
        sd_event_source *spare_watch, *renew_timer;
        pid_t child;              /* connecting a user manager's socket */
        sd_event_source *child_io, *child_timer;
        int failed;               /* the connect's error, for the waiters */
        bool kicking, kick_again; /* link_kick() runs: a nested one only asks for another round */
        bool lost;                /* its spare closed at once: not connected again ahead */
        LinkWaiter *waiters, **waiters_tail;
        SystemdLink *next;
};

struct SystemdCall {
        Listener *listener;
        char *address;
        char *cgroup;
        bool freeze;
        bool settled;             /* thawed through cgroup.freeze already: the answer is moot */
        ThawOutcome *outcome;     /* a thaw's, for its caller, until settled */
        uint64_t link;            /* the link it holds, from sending to its end; 0: none */
        sd_event_source *timer;   /* a thaw's own deadline (see listener_systemd_set_freeze) */
};

static void call_free(void *userdata);

/* Signals a call causes (FreezerState changes) come within milliseconds of
 * its answer; one later than this after the last call was not caused by it. */
#define LINK_GRACE_USEC (500 * USEC_PER_MSEC)
/* A spare is renewed after a minute (within 10 s, to share a wake-up), and
 * one older than 75 s is not used: systemd drops it at 90 s. */
#define LINK_SPARE_RENEW_USEC (60 * USEC_PER_SEC)
#define LINK_SPARE_RENEW_ACCURACY_USEC (10 * USEC_PER_SEC)
#define LINK_SPARE_MAX_USEC (75 * USEC_PER_SEC)

/* A user manager whose socket was refused (a link, a mount, another's
 * socket, no answer) is not tried again for a while: its user could
 * otherwise make the listener fork a child and log a line at every journal
 * change. Its calls fail at once meanwhile, a thaw through cgroup.freeze.
 * One line is logged per refusal, not per try. Root's sockets (PID 1's,
 * SystemdAddress=) are never refused so: connecting to them forks nothing,
 * and a daemon-reexec soon after a connect must not send ten seconds of
 * calls past systemd. */
#define LINK_RETRY_USEC (10 * USEC_PER_SEC)
#define LINK_REFUSALS_MAX 64
static struct {
        char *address;
        int error;
        usec_t until;
} refusals[LINK_REFUSALS_MAX];

static int refusal_find(const char *address) {
        for (int i = 0; i < LINK_REFUSALS_MAX; i++)
                if (refusals[i].address && streq(refusals[i].address, address))
                        return i;
        return -1;
}

/* The refusal in force for address, or 0. */
static int link_refused(const char *address) {
        int i = refusal_find(address);
        return i >= 0 && now_usec(CLOCK_MONOTONIC) < refusals[i].until ? refusals[i].error : 0;
}

/* Remembers the outcome of a connect to address; logs a refusal once,
 * unless quiet. */
static void link_note(const char *address, int r, bool quiet) {
        uid_t uid;
        int i = refusal_find(address);

        if (private_socket_address_uid(address, &uid) < 0)
                return; /* root's */
        if (r >= 0) {
                if (i >= 0) {
                        log_info("Connected to the systemd manager at %s again.", address);
                        refusals[i].address = mfree(refusals[i].address);
                }
                return;
        }
        if (quiet)
                log_debug("The systemd manager at %s closed a connection at once; not tried again for %u s.", address,
                          (unsigned) (LINK_RETRY_USEC / USEC_PER_SEC));
        else if (i < 0 || refusals[i].error != r)
                log_warning("Cannot connect to the systemd manager at %s: %s; its units are thawed through "
                            "cgroup.freeze, and it is tried again in %u s at the earliest.",
                            address, private_socket_strerror(r), (unsigned) (LINK_RETRY_USEC / USEC_PER_SEC));
        if (i < 0) {
                for (i = 0; i < LINK_REFUSALS_MAX && refusals[i].address; i++)
                        ;
                if (i == LINK_REFUSALS_MAX) /* full: the oldest entry goes */
                        for (int j = i = 0; j < LINK_REFUSALS_MAX; j++)
                                if (refusals[j].until < refusals[i].until)
                                        i = j;
                free(refusals[i].address);
                if (!(refusals[i].address = strdup(address)))
                        return;
        }
        refusals[i].error = r;
        refusals[i].until = now_usec(CLOCK_MONOTONIC) + LINK_RETRY_USEC;
}

static void link_note_outcome(const char *address, int r) {
        link_note(address, r, false);
}

/* A connection closed soon after it came: as good as refused, or a user
 * who accepts and closes at once would have a child forked again and
 * again. Quiet: a manager that exits (its user logged out) does the same. */
static void link_note_closed_at_once(const char *address) {
        link_note(address, -ECONNRESET, true);
}

void listener_forget_refused_links(void) {
        for (int i = 0; i < LINK_REFUSALS_MAX; i++)
                refusals[i].address = mfree(refusals[i].address);
}

static SystemdLink *link_find(Listener *l, const char *address) {
        for (SystemdLink *k = l->systemd_links; k; k = k->next)
                if (streq(k->address, address))
                        return k;
        return NULL;
}

/* A manager that froze a unit of the listener's copy of the journal. */
static bool link_wanted(SystemdLink *k) {
        Listener *l = k->listener;
        for (size_t i = 0; i < l->n_cache; i++)
                if (l->cache[i].systemd && streq(l->cache[i].systemd, k->address))
                        return true;
        return false;
}

static void link_drop_spare(SystemdLink *k) {
        k->spare_watch = sd_event_source_disable_unref(k->spare_watch);
        k->renew_timer = sd_event_source_disable_unref(k->renew_timer);
        k->spare = safe_close(k->spare);
}

static void link_close_bus(SystemdLink *k) {
        k->close_timer = sd_event_source_disable_unref(k->close_timer);
        k->unasked = false;
        if (!k->bus)
                return;
        k->bus = sd_bus_close_unref(k->bus); /* never waits for a stopped manager */
        k->listener->stats.systemd_links--;
}

/* Hands each waiter the bus (and a use of it), or the error r. */
static void link_serve(SystemdLink *k, int r) {
        while (k->waiters) {
                LinkWaiter *w = k->waiters;
                k->waiters = w->next;
                if (!k->waiters)
                        k->waiters_tail = &k->waiters;
                if (r >= 0) {
                        k->n_users++;
                        k->unasked = false; /* a new use: the next stray signal decides */
                }
                w->ready(w->userdata, r >= 0 ? k->bus : NULL, k->id, r);
                free(w);
        }
}

/* Off the list first: what its bus's slots let go of finds it gone. */
static void link_free(SystemdLink *k) {
        if (k->child > 0) {
                int fd = sd_event_source_get_io_fd(k->child_io);
                k->child_io = sd_event_source_disable_unref(k->child_io);
                private_socket_connect_abort(fd, k->child);
        }
        sd_event_source_disable_unref(k->child_timer);
        link_drop_spare(k);
        link_serve(k, -ECANCELED); /* the listener ends */
        link_close_bus(k);
        free(k->address);
        free(k);
}

static void link_discard(SystemdLink *k) {
        Listener *l = k->listener;
        for (SystemdLink **p = &l->systemd_links; *p; p = &(*p)->next)
                if (*p == k) {
                        *p = k->next;
                        break;
                }
        link_free(k);
}

void listener_drop_systemd_links(Listener *l) {
        while (l->systemd_links) {
                SystemdLink *k = l->systemd_links;
                l->systemd_links = k->next;
                link_free(k);
        }
}

static void link_kick(SystemdLink *k);

static int on_link_message(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        SystemdLink *k = userdata;

        if (sd_bus_message_is_signal(m, NULL, NULL) <= 0)
                return 0;
        k->listener->stats.systemd_signals++; /* what an authenticated link wakes the listener for */
        /* sd-bus's own Disconnected: its manager closed it. */
        if (sd_bus_message_is_signal(m, "org.freedesktop.DBus.Local", "Disconnected") > 0 ||
            (k->n_users == 0 && now_usec(CLOCK_MONOTONIC) - k->last_used >= LINK_GRACE_USEC)) {
                k->unasked = true;
                link_kick(k); /* arms the close timer; nothing is freed while the bus is there */
        }
        return 0;
}

static int on_spare_hangup(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        SystemdLink *k = userdata;
        bool at_once = now_usec(CLOCK_MONOTONIC) - k->connected < LINK_RETRY_USEC;

        link_drop_spare(k);
        if (at_once) { /* not connected again ahead, which could go on in a loop: on use, or at a journal change */
                link_note_closed_at_once(k->address);
                k->lost = true;
        }
        link_kick(k);
        return 0;
}

static int on_spare_renew(sd_event_source *s, uint64_t usec, void *userdata) {
        SystemdLink *k = userdata;
        k->listener->stats.systemd_renewals++;
        link_drop_spare(k);
        link_kick(k);
        return 0;
}

/* The spare to keep: watched for its hang-up, renewed in time. */
static int link_set_spare(SystemdLink *k, int fd) {
        Listener *l = k->listener;
        int r;

        k->spare = fd;
        k->connected = now_usec(CLOCK_MONOTONIC);
        /* A manager gone is seen before the events of its loop round
         * (those handled ahead of the dispatch ask the socket itself:
         * spare_hung_up()). */
        r = sd_event_add_io(l->event, &k->spare_watch, fd, EPOLLRDHUP, on_spare_hangup, k);
        if (r >= 0)
                r = sd_event_source_set_priority(k->spare_watch, SD_EVENT_PRIORITY_IMPORTANT);
        if (r >= 0)
                r = sd_event_add_time(l->event, &k->renew_timer, CLOCK_MONOTONIC, k->connected + LINK_SPARE_RENEW_USEC,
                                      LINK_SPARE_RENEW_ACCURACY_USEC, on_spare_renew, k);
        if (r < 0)
                link_drop_spare(k);
        return r;
}

/* The child answered (r: its socket's outcome), or did not in time. */
static void link_connected(SystemdLink *k, int fd, int r) {
        k->child = 0;
        k->child_timer = sd_event_source_disable_unref(k->child_timer);
        link_note_outcome(k->address, r);
        if (r >= 0)
                r = link_set_spare(k, fd);
        else
                safe_close(fd);
        if (r < 0)
                k->failed = r;
        link_kick(k);
}

static int on_child_answer(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        SystemdLink *k = userdata;
        int sock = -EBADF, r;

        k->child_io = sd_event_source_disable_unref(k->child_io);
        r = private_socket_connect_finish(fd, k->child, &sock);
        link_connected(k, sock, r);
        return 0;
}

static int on_child_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        SystemdLink *k = userdata;
        int fd = sd_event_source_get_io_fd(k->child_io);

        k->child_io = sd_event_source_disable_unref(k->child_io);
        private_socket_connect_abort(fd, k->child);
        link_connected(k, -EBADF, -ETIMEDOUT);
        return 0;
}

/* /run/systemd/private and SystemdAddress= are root's (unix:path= and an
 * absolute path, as config.c and the journal's reader check): connected by
 * name. A connect to a unix socket does not wait. */
static int connect_by_name(const char *address, int *ret_fd) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        const char *path = strneq(address, "unix:path=/", 11) ? address + 10 : NULL;
        int fd;

        if (!path || strlen(path) >= sizeof(sa.sun_path))
                return -EINVAL;
        memcpy(sa.sun_path, path, strlen(path));
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *) &sa, offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1) < 0) {
                int r = -errno;
                safe_close(fd);
                return r;
        }
        *ret_fd = fd;
        return 0;
}

/* Connects a spare: 0 when it is there, 1 while a child connects it, or
 * why not (a refusal in force, or this one's, noted). */
static int link_connect(SystemdLink *k) {
        Listener *l = k->listener;
        uid_t uid;
        pid_t pid = 0;
        int fd = -EBADF, r;

        if (k->child > 0)
                return 1;
        r = link_refused(k->address);
        if (r < 0)
                return r;
        if (private_socket_address_uid(k->address, &uid) < 0) {
                r = connect_by_name(k->address, &fd);
                link_note_outcome(k->address, r);
                return r < 0 ? r : link_set_spare(k, fd);
        }
        r = private_socket_connect_start(PRIVATE_SOCKET_RUNTIME_ROOT, uid, &pid, &fd);
        if (r < 0)
                return r;
        l->stats.systemd_connects++;
        r = sd_event_add_io(l->event, &k->child_io, fd, EPOLLIN, on_child_answer, k);
        if (r >= 0) /* absolute: sd_event_now() is stale on the loop's hot path (loop.c) */
                r = sd_event_add_time(l->event, &k->child_timer, CLOCK_MONOTONIC,
                                      now_usec(CLOCK_MONOTONIC) + LISTENER_SYSTEMD_CONNECT_TIMEOUT_USEC, 0,
                                      on_child_timeout, k);
        if (r < 0) {
                k->child_io = sd_event_source_disable_unref(k->child_io);
                private_socket_connect_abort(fd, pid);
                return r;
        }
        k->child = pid;
        return 1;
}

/* The spare becomes the bus: sd-bus sends the authentication at once and
 * queues the calls until the manager answers it. */
static int link_activate(SystemdLink *k) {
        _cleanup_(sd_bus_close_unrefp) sd_bus *bus = NULL;
        int fd, r;

        k->spare_watch = sd_event_source_disable_unref(k->spare_watch);
        k->renew_timer = sd_event_source_disable_unref(k->renew_timer);
        fd = TAKE_FD(k->spare);
        r = sd_bus_new(&bus);
        if (r >= 0 && (r = sd_bus_set_fd(bus, fd, fd)) >= 0)
                fd = -EBADF; /* sd-bus's */
        safe_close(fd);
        if (r >= 0)
                r = sd_bus_add_filter(bus, NULL, on_link_message, k);
        if (r >= 0)
                r = sd_bus_start(bus);
        if (r >= 0)
                r = sd_bus_attach_event(bus, k->listener->event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return r;
        k->bus = TAKE_PTR(bus);
        k->lost = false;
        k->last_used = now_usec(CLOCK_MONOTONIC);
        k->listener->stats.systemd_links++;
        return 0;
}

/* Asked of the socket itself: an event handled ahead of the loop's
 * dispatch (loop.c) can use a spare before its hang-up is dispatched. */
static bool spare_hung_up(SystemdLink *k) {
        struct pollfd p = { .fd = k->spare, .events = POLLRDHUP };
        return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* The waiters served, if they can be. */
static void link_step(SystemdLink *k) {
        int r = 0;

        if (!k->waiters) {
                k->failed = 0;
                return;
        }
        if (k->failed < 0) {
                r = k->failed;
                k->failed = 0;
                link_serve(k, r);
                return;
        }
        if (k->bus) {
                /* One its manager closed (a restart) is closed by the close
                 * timer once its calls have had their errors; then a new
                 * one is connected for these. */
                if (sd_bus_is_open(k->bus) > 0)
                        link_serve(k, 0);
                return;
        }
        if (k->spare >= 0 && (now_usec(CLOCK_MONOTONIC) - k->connected >= LINK_SPARE_MAX_USEC || spare_hung_up(k)))
                link_drop_spare(k);
        if (k->spare < 0)
                r = link_connect(k);
        if (r > 0)
                return; /* served when the child answers */
        if (r >= 0)
                r = link_activate(k);
        link_serve(k, r);
}

static int on_close(sd_event_source *s, uint64_t usec, void *userdata) {
        SystemdLink *k = userdata;

        k->close_timer = sd_event_source_disable_unref(k->close_timer);
        if (k->n_users > 0)
                return 0;
        if (k->bus && sd_bus_is_open(k->bus) <= 0 && now_usec(CLOCK_MONOTONIC) - k->connected < LINK_RETRY_USEC)
                link_note_closed_at_once(k->address);
        link_close_bus(k);
        link_kick(k);
        return 0;
}

/* Moves a link on after any change: its waiters served, a spare connected
 * while its manager froze a cached unit, its bus closed once unused and
 * either closed by its manager or sent a signal no call caused, and the
 * link dropped once it holds nothing. k may be gone after it, unless it
 * has a bus. */
static void link_kick(SystemdLink *k) {
        Listener *l = k->listener;

        if (k->kicking) { /* from a waiter's callback: after this round */
                k->kick_again = true;
                return;
        }
        k->kicking = true;
        do {
                k->kick_again = false;
                link_step(k);
        } while (k->kick_again);
        k->kicking = false;

        if (!k->bus && k->spare < 0 && k->child <= 0 && k->n_users == 0 && !k->lost && link_wanted(k))
                (void) link_connect(k); /* ahead, off the event's path; a refusal waits */
        if (!k->bus && k->spare < 0 && k->child <= 0 && k->n_users == 0 && !k->waiters) {
                link_discard(k);
                return;
        }
        if (!k->bus || k->n_users > 0 || (!k->unasked && sd_bus_is_open(k->bus) > 0)) {
                k->close_timer = sd_event_source_disable_unref(k->close_timer);
                return;
        }
        /* Closed in this round of the loop: no wake-up of its own. */
        if (!k->close_timer &&
            sd_event_add_time(l->event, &k->close_timer, CLOCK_MONOTONIC, now_usec(CLOCK_MONOTONIC), 0, on_close, k) < 0)
                link_close_bus(k); /* kept no longer; a spare comes with the next kick */
}

static SystemdLink *link_new(Listener *l, const char *address) {
        static uint64_t last_id;
        SystemdLink *k = calloc(1, sizeof(SystemdLink));
        char *a = strdup(address);

        if (!k || !a) {
                free(k);
                free(a);
                return NULL;
        }
        *k = (SystemdLink) { .listener = l, .id = ++last_id, .address = a, .spare = -EBADF,
                             .waiters_tail = &k->waiters, .next = l->systemd_links };
        l->systemd_links = k;
        return k;
}

int listener_systemd_acquire(Listener *l, const char *address, SystemdLinkReady ready, void *userdata) {
        SystemdLink *k = link_find(l, address);
        LinkWaiter *w = calloc(1, sizeof(LinkWaiter));

        if (!w || (!k && !(k = link_new(l, address)))) {
                free(w);
                return -ENOMEM;
        }
        *w = (LinkWaiter) { .ready = ready, .userdata = userdata };
        *k->waiters_tail = w;
        k->waiters_tail = &w->next;
        link_kick(k);
        return 0;
}

void listener_systemd_release(Listener *l, uint64_t link) {
        for (SystemdLink *k = l->systemd_links; k; k = k->next)
                if (k->id == link) {
                        if (k->n_users > 0 && --k->n_users == 0)
                                k->last_used = now_usec(CLOCK_MONOTONIC);
                        link_kick(k);
                        return;
                }
}

void listener_systemd_links_sync(Listener *l) {
        /* A spare for each manager that froze a cached unit, connected
         * ahead: a call on the event's path then costs no connect. */
        for (size_t i = 0; i < l->n_cache; i++) {
                const char *a = l->cache[i].systemd;
                SystemdLink *k;
                if (a && !link_find(l, a) && link_refused(a) == 0 && (k = link_new(l, a)))
                        link_kick(k);
        }
        /* The others go once unused. */
        for (SystemdLink *k = l->systemd_links, *next; k; k = next) {
                next = k->next;
                if (k->n_users == 0 && !k->waiters && !k->kicking && !link_wanted(k))
                        link_discard(k);
        }
}

/* What a thaw came to (r: 0 thawed, by systemd or through cgroup.freeze,
 * or why not), told to whoever asked for it from the loop: from a defer
 * source of its own, never from inside listener_systemd_set_freeze(), even
 * when the call fails at once. Made with the call, so that telling cannot
 * fail for want of memory; the call owns it until settled, then the loop
 * does (a floating source, whose destroy callback frees it). */
struct ThawOutcome {
        SystemdThawDone done;
        void *userdata;
        char *cgroup;
        int r;
        sd_event_source *source;
};

static void outcome_free(void *userdata) {
        ThawOutcome *o = userdata;

        free(o->cgroup);
        free(o);
}

static int on_outcome(sd_event_source *s, void *userdata) {
        ThawOutcome *o = userdata;

        o->done(o->userdata, o->cgroup, o->r);
        /* The loop's reference, the only one: freed (o too) once this returns. */
        (void) sd_event_source_set_floating(s, false);
        return 0;
}

static int outcome_new(Listener *l, const char *cgroup, SystemdThawDone done, void *userdata, ThawOutcome **ret) {
        ThawOutcome *o = calloc(1, sizeof(ThawOutcome));
        int r;

        if (!o)
                return -ENOMEM;
        *o = (ThawOutcome) { .done = done, .userdata = userdata, .cgroup = strdup(cgroup) };
        if (!o->cgroup) {
                outcome_free(o);
                return -ENOMEM;
        }
        r = sd_event_add_defer(l->event, &o->source, on_outcome, o);
        if (r < 0) {
                outcome_free(o);
                return r;
        }
        (void) sd_event_source_set_destroy_callback(o->source, outcome_free);
        (void) sd_event_source_set_enabled(o->source, SD_EVENT_OFF);
        /* Told before other events are judged, as the dispatcher is. */
        (void) sd_event_source_set_priority(o->source, LISTENER_QUEUE_PRIORITY);
        *ret = o;
        return 0;
}

/* The call's thaw ended (r): its outcome goes to the loop, once. */
static void thaw_settled(SystemdCall *c, int r) {
        ThawOutcome *o = TAKE_PTR(c->outcome);

        if (!o)
                return;
        o->r = r;
        (void) sd_event_source_set_enabled(o->source, SD_EVENT_ONESHOT);
        (void) sd_event_source_set_floating(o->source, true);
        sd_event_source_unref(o->source);
}

/* The thaw through cgroup.freeze that replaces one systemd did not do:
 * counted (systemd_fallbacks), and, if it fails too, logged and counted as
 * a failure (thaw_failures); its outcome goes to the caller. */
static void thaw_directly(SystemdCall *c) {
        Listener *l = c->listener;
        _cleanup_close_ int fd = -EBADF;
        int r;

        c->settled = true;
        r = cgroup_open(l->m.root_fd, c->cgroup, &fd);
        if (r >= 0)
                r = cgroup_set_freeze(fd, false);
        if (r == -ENOENT || r == -ENODEV) {
                thaw_settled(c, -ENOENT); /* gone: nothing to thaw */
                return;
        }
        if (r < 0) {
                log_error_errno(r, "Failed to thaw %s through cgroup.freeze: %m", c->cgroup);
                l->stats.thaw_failures++;
        } else
                l->stats.systemd_fallbacks++;
        thaw_settled(c, r);
}

static void call_free(void *userdata) {
        SystemdCall *c = userdata;
        sd_event_source_disable_unref(c->timer);
        if (c->outcome) /* never settled (the listener ends): nobody is told */
                sd_event_source_disable_unref(c->outcome->source);
        if (c->link > 0)
                listener_systemd_release(c->listener, c->link);
        free(c->address);
        free(c->cgroup);
        free(c);
}

static int on_thaw_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        SystemdCall *c = userdata;
        char tbuf[32];

        c->timer = sd_event_source_disable_unref(c->timer);
        log_warning("%s: systemd did not answer ThawUnit within %s; thawing it through cgroup.freeze.", c->cgroup,
                    format_duration(tbuf, sizeof(tbuf), LISTENER_SYSTEMD_TIMEOUT_USEC));
        thaw_directly(c);
        return 0;
}

static int on_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        SystemdCall *c = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);

        c->timer = sd_event_source_disable_unref(c->timer);
        if (c->settled)
                return 0;
        if (!e) {
                if (!c->freeze) {
                        c->listener->stats.systemd_thaws++;
                        thaw_settled(c, 0);
                }
                return 0;
        }
        /* systemd's view, not the kernel's: a unit stopped while frozen (its
         * watchdog, RuntimeMaxSec=, a kill) is inactive to ThawUnit while its
         * cgroup lives on, frozen. thaw_directly() leaves a gone one be. */
        if (e->name && (strstr(e->name, "NoSuchUnit") || strstr(e->name, "UnitInactive"))) {
                if (!c->freeze) {
                        log_warning("%s: systemd says %s is not active; thawing it through cgroup.freeze.", c->cgroup,
                                    unit_name_of_cgroup(c->cgroup));
                        thaw_directly(c);
                }
                return 0;
        }
        if (c->freeze) {
                log_warning("%s: systemd did not freeze it: %s", c->cgroup, e->message ?: e->name);
                return 0;
        }
        log_warning("%s: systemd did not thaw it (%s); thawing it through cgroup.freeze.", c->cgroup,
                    e->message ?: e->name);
        thaw_directly(c);
        return 0;
}

/* A call that could not be sent (r): a thaw is done through cgroup.freeze
 * (unless its timer did that already), a freeze is left to cgroup.events. */
static void call_failed(SystemdCall *c, int r) {
        const char *address = c->address ?: "(its socket)";

        if (r == -ECANCELED) { /* the listener ends */
                call_free(c);
                return;
        }
        if (r == link_refused(address)) /* logged once, when refused */
                log_debug("%s: the systemd manager at %s refused a connect lately: %s", c->cgroup, address,
                          private_socket_strerror(r));
        else if (c->freeze)
                log_warning_errno(r, "%s: cannot ask the systemd manager at %s to freeze it: %s", c->cgroup, address,
                                  private_socket_strerror(r));
        else if (!c->settled)
                log_warning_errno(r, "%s: cannot ask the systemd manager at %s to thaw it (%s); thawing it through "
                                  "cgroup.freeze.", c->cgroup, address, private_socket_strerror(r));
        if (!c->freeze && !c->settled)
                thaw_directly(c);
        call_free(c);
}

/* Its link takes calls (bus), or will not (r). */
static void call_ready(void *userdata, sd_bus *bus, uint64_t link, int r) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *msg = NULL;
        SystemdCall *c = userdata;
        sd_bus_slot *slot = NULL;

        if (r < 0) {
                call_failed(c, r);
                return;
        }
        c->link = link; /* let go of when the call ends (call_free) */
        r = sd_bus_message_new_method_call(bus, &msg, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                           "org.freedesktop.systemd1.Manager", c->freeze ? "FreezeUnit" : "ThawUnit");
        if (r >= 0)
                r = sd_bus_message_append(msg, "s", unit_name_of_cgroup(c->cgroup));
        if (r >= 0)
                r = sd_bus_call_async(bus, &slot, msg, on_reply, c,
                                      c->freeze ? c->listener->m.config->freeze_timeout : 2 * LISTENER_SYSTEMD_TIMEOUT_USEC);
        if (r < 0) {
                call_failed(c, r);
                return;
        }
        (void) sd_bus_slot_set_destroy_callback(slot, call_free);
        (void) sd_bus_slot_set_floating(slot, true);
        sd_bus_slot_unref(slot);
}

int listener_systemd_set_freeze(Listener *l, const char *address, const char *cgroup, bool freeze,
                                SystemdThawDone done, void *userdata) {
        SystemdCall *c;
        int r;

        c = calloc(1, sizeof(SystemdCall));
        if (!c)
                return -ENOMEM;
        *c = (SystemdCall) { .listener = l, .address = strdup(address), .cgroup = strdup(cgroup), .freeze = freeze };
        r = c->cgroup && c->address ? 0 : -ENOMEM;
        if (r >= 0 && !freeze && done)
                r = outcome_new(l, cgroup, done, userdata, &c->outcome);
        /* A freeze gets as long as any freeze (FreezeTimeout judges it, by
         * cgroup.events); a thaw only a moment, timed by a loop timer of its
         * own: sd-bus times a call only once its connection is up, and a
         * connection to a stopped manager never finishes authenticating
         * (nor a child's connect to a socket that does not answer). */
        if (r >= 0 && !freeze) /* absolute: sd_event_now() is stale on the loop's hot path (loop.c) */
                r = sd_event_add_time(l->event, &c->timer, CLOCK_MONOTONIC,
                                      now_usec(CLOCK_MONOTONIC) + LISTENER_SYSTEMD_TIMEOUT_USEC, 0, on_thaw_timeout, c);
        if (r < 0) {
                /* Nothing asked, nobody told: the caller's to do. */
                call_free(c);
                return r;
        }
        r = listener_systemd_acquire(l, address, call_ready, c); /* sent now, or once connected */
        if (r < 0)
                call_failed(c, r);
        return 0;
}
