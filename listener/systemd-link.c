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
 * end thawed when it runs again. */
#include "cgroup.h"
#include "listener.h"
#include "log.h"
#include "private-socket.h"
#include "unit-name.h"

typedef struct SystemdCall SystemdCall;

/* A user manager's socket (/run/user/UID/systemd/private) is connected by
 * a child (common/private-socket.c: its path is the user's, who could make
 * a lookup wait): its answer is an IO event, its bound a timer, and the
 * calls for it wait in order in queued meanwhile. */
struct SystemdLink {
        Listener *listener;
        char *address;
        sd_bus *bus;              /* NULL while the child connects */
        pid_t child;
        usec_t connected;         /* when the child's socket came (CLOCK_MONOTONIC); 0: by name */
        sd_event_source *child_io, *child_timer;
        SystemdCall *queued, **queued_tail;
        SystemdLink *next;
};

struct SystemdCall {
        Listener *listener;
        char *cgroup;
        bool freeze;
        bool settled;             /* thawed through cgroup.freeze already: the answer is moot */
        sd_event_source *timer;   /* a thaw's own deadline (see listener_systemd_set_freeze) */
        SystemdCall *next_queued;
};

static void call_free(void *userdata);

/* A user manager whose socket was refused (a link, a mount, another's
 * socket, no answer) is not tried again for a while: its user could
 * otherwise make the listener fork a child and log a line at every journal
 * change. Its calls fail at once meanwhile, a thaw through cgroup.freeze.
 * One line is logged per refusal, not per try. */
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

/* Remembers the outcome of a connect to address; logs a refusal once. */
static void link_note_outcome(const char *address, int r) {
        int i = refusal_find(address);

        if (r >= 0) {
                if (i >= 0) {
                        log_info("Connected to the systemd manager at %s again.", address);
                        refusals[i].address = mfree(refusals[i].address);
                }
                return;
        }
        if (i < 0 || refusals[i].error != r)
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

void listener_forget_refused_links(void) {
        for (int i = 0; i < LINK_REFUSALS_MAX; i++)
                refusals[i].address = mfree(refusals[i].address);
}

static SystemdLink *link_free(SystemdLink *k) {
        if (!k)
                return NULL;
        if (k->child > 0) {
                int fd = sd_event_source_get_io_fd(k->child_io);
                k->child_io = sd_event_source_disable_unref(k->child_io);
                private_socket_connect_abort(fd, k->child);
        }
        sd_event_source_disable_unref(k->child_timer);
        while (k->queued) { /* the listener ends: dropped */
                SystemdCall *c = k->queued;
                k->queued = c->next_queued;
                call_free(c);
        }
        sd_bus_close_unref(k->bus); /* never waits for a stopped manager */
        free(k->address);
        free(k);
        return NULL;
}

void listener_drop_systemd_links(Listener *l) {
        while (l->systemd_links) {
                SystemdLink *k = l->systemd_links;
                l->systemd_links = k->next;
                link_free(k);
        }
}

static int call_send(SystemdCall *c, sd_bus *bus);
static void call_failed(SystemdCall *c, const char *address, int r);

static void link_unlink(Listener *l, SystemdLink *k) {
        for (SystemdLink **p = &l->systemd_links; *p; p = &(*p)->next)
                if (*p == k) {
                        *p = k->next;
                        return;
                }
}

/* The child answered (r: its socket's outcome), or did not in time: the
 * queued calls are sent, or fail as an unanswered call does. A link that
 * failed is dropped: the next call tries anew. */
static void link_connected(SystemdLink *k, int fd, int r) {
        Listener *l = k->listener;
        sd_bus *bus = NULL;

        k->child = 0;
        k->child_timer = sd_event_source_disable_unref(k->child_timer);
        if (r >= 0) {
                if ((r = sd_bus_new(&bus)) >= 0 && (r = sd_bus_set_fd(bus, fd, fd)) >= 0)
                        fd = -EBADF; /* sd-bus's */
                if (r >= 0 && (r = sd_bus_start(bus)) >= 0)
                        r = sd_bus_attach_event(bus, l->event, SD_EVENT_PRIORITY_NORMAL);
                safe_close(fd);
                if (r < 0)
                        bus = sd_bus_close_unref(bus);
        }
        k->bus = bus;
        k->connected = bus ? now_usec(CLOCK_MONOTONIC) : 0;
        link_note_outcome(k->address, r);
        if (r < 0)
                link_unlink(l, k);
        while (k->queued) {
                SystemdCall *c = k->queued;
                k->queued = c->next_queued;
                c->next_queued = NULL;
                if (r >= 0)
                        r = call_send(c, k->bus); /* a failure here fails the rest, too */
                else
                        call_failed(c, k->address, r);
        }
        k->queued_tail = &k->queued;
        if (!k->bus)
                link_free(k);
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

/* One connection per manager, kept open; one that closed (systemd
 * restarted) is opened anew. Connecting to a unix socket does not wait:
 * sd-bus authenticates as the loop runs, and queues the calls until then.
 * A user manager's is connected by a child first (its bus NULL until then). */
static int link_get(Listener *l, const char *address, SystemdLink **ret) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        SystemdLink *k;
        uid_t uid;
        pid_t pid = 0;
        int fd = -EBADF, r;

        for (SystemdLink **p = &l->systemd_links; *p; p = &(*p)->next)
                if (streq((*p)->address, address)) {
                        if (!(*p)->bus || sd_bus_is_open((*p)->bus) > 0) {
                                *ret = *p;
                                return 0;
                        }
                        k = *p;
                        *p = k->next;
                        /* Closed soon after a child connected it: as good as
                         * refused, or a user who accepts and closes at once
                         * would have a child forked at every call. */
                        if (k->connected > 0 && now_usec(CLOCK_MONOTONIC) - k->connected < LINK_RETRY_USEC)
                                link_note_outcome(address, -ECONNRESET);
                        link_free(k);
                        break;
                }
        r = link_refused(address);
        if (r < 0)
                return r;
        k = calloc(1, sizeof(SystemdLink));
        if (!k || !(k->address = strdup(address))) {
                free(k);
                return -ENOMEM;
        }
        k->listener = l;
        k->queued_tail = &k->queued;
        /* /run/systemd/private and SystemdAddress= are root's: by name. */
        if (private_socket_address_uid(address, &uid) >= 0) {
                r = private_socket_connect_start(PRIVATE_SOCKET_RUNTIME_ROOT, uid, &pid, &fd);
                if (r >= 0) {
                        l->stats.systemd_connects++;
                        k->child = pid;
                        r = sd_event_add_io(l->event, &k->child_io, fd, EPOLLIN, on_child_answer, k);
                        if (r < 0)
                                private_socket_connect_abort(fd, pid);
                }
                if (r >= 0) /* absolute: sd_event_now() is stale on the loop's hot path (loop.c) */
                        r = sd_event_add_time(l->event, &k->child_timer, CLOCK_MONOTONIC,
                                              now_usec(CLOCK_MONOTONIC) + LISTENER_SYSTEMD_CONNECT_TIMEOUT_USEC, 0,
                                              on_child_timeout, k);
                if (r < 0 && k->child_io) {
                        k->child_io = sd_event_source_disable_unref(k->child_io);
                        private_socket_connect_abort(fd, pid);
                }
                if (r < 0)
                        k->child = 0;
        } else if ((r = sd_bus_new(&bus)) >= 0 && (r = sd_bus_set_address(bus, address)) >= 0 &&
                   (r = sd_bus_start(bus)) >= 0 && (r = sd_bus_attach_event(bus, l->event, SD_EVENT_PRIORITY_NORMAL)) >= 0)
                k->bus = TAKE_PTR(bus);
        if (r < 0) {
                link_free(k);
                return r;
        }
        k->next = l->systemd_links;
        l->systemd_links = k;
        *ret = k;
        return 0;
}

int listener_systemd_connect(Listener *l, const char *address, sd_bus **ret) {
        SystemdLink *k;
        int r = link_get(l, address, &k);
        if (r < 0)
                return r;
        if (!k->bus)
                return -EINPROGRESS;
        if (ret)
                *ret = k->bus;
        return 0;
}

/* The thaw through cgroup.freeze that replaces one systemd did not do:
 * counted (systemd_fallbacks), and, if it fails too, logged and counted as
 * a failure (thaw_failures); its outcome goes to the reply of the call
 * that asked for it, if one did (report.c). */
static void thaw_directly(Listener *l, const char *cgroup) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        r = cgroup_open(l->m.root_fd, cgroup, &fd);
        if (r >= 0)
                r = cgroup_set_freeze(fd, false);
        if (r == -ENOENT || r == -ENODEV) {
                listener_report_settled(l, cgroup, -ENOENT); /* gone: nothing to thaw */
                return;
        }
        if (r < 0) {
                log_error_errno(r, "Failed to thaw %s through cgroup.freeze: %m", cgroup);
                l->stats.thaw_failures++;
        } else
                l->stats.systemd_fallbacks++;
        listener_report_settled(l, cgroup, r);
}

static void call_free(void *userdata) {
        SystemdCall *c = userdata;
        sd_event_source_disable_unref(c->timer);
        free(c->cgroup);
        free(c);
}

static int on_thaw_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        SystemdCall *c = userdata;
        char tbuf[32];

        c->timer = sd_event_source_disable_unref(c->timer);
        c->settled = true;
        log_warning("%s: systemd did not answer ThawUnit within %s; thawing it through cgroup.freeze.", c->cgroup,
                    format_duration(tbuf, sizeof(tbuf), LISTENER_SYSTEMD_TIMEOUT_USEC));
        thaw_directly(c->listener, c->cgroup);
        return 0;
}

static int on_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        SystemdCall *c = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);

        c->timer = sd_event_source_disable_unref(c->timer);
        if (c->settled)
                return 0;
        if (!e) {
                if (!c->freeze)
                        listener_report_settled(c->listener, c->cgroup, 0);
                return 0;
        }
        /* systemd's view, not the kernel's: a unit stopped while frozen (its
         * watchdog, RuntimeMaxSec=, a kill) is inactive to ThawUnit while its
         * cgroup lives on, frozen. thaw_directly() leaves a gone one be. */
        if (e->name && (strstr(e->name, "NoSuchUnit") || strstr(e->name, "UnitInactive"))) {
                if (!c->freeze) {
                        log_warning("%s: systemd says %s is not active; thawing it through cgroup.freeze.", c->cgroup,
                                    unit_name_of_cgroup(c->cgroup));
                        thaw_directly(c->listener, c->cgroup);
                }
                return 0;
        }
        if (c->freeze) {
                log_warning("%s: systemd did not freeze it: %s", c->cgroup, e->message ?: e->name);
                return 0;
        }
        log_warning("%s: systemd did not thaw it (%s); thawing it through cgroup.freeze.", c->cgroup,
                    e->message ?: e->name);
        thaw_directly(c->listener, c->cgroup);
        return 0;
}

/* A call that could not be sent (r): a thaw is done through cgroup.freeze
 * (unless its timer did that already), a freeze is left to cgroup.events. */
static void call_failed(SystemdCall *c, const char *address, int r) {
        Listener *l = c->listener;
        _cleanup_free_ char *cgroup = TAKE_PTR(c->cgroup);
        bool freeze = c->freeze, settled = c->settled;

        call_free(c);
        if (r == link_refused(address)) /* logged once, when refused */
                log_debug("%s: the systemd manager at %s refused a connect lately: %s", cgroup, address,
                          private_socket_strerror(r));
        else if (freeze)
                log_warning_errno(r, "%s: cannot ask the systemd manager at %s to freeze it: %s", cgroup, address,
                                  private_socket_strerror(r));
        else if (!settled)
                log_warning_errno(r, "%s: cannot ask the systemd manager at %s to thaw it (%s); thawing it through "
                                  "cgroup.freeze.", cgroup, address, private_socket_strerror(r));
        if (!freeze && !settled)
                thaw_directly(l, cgroup);
}

static int call_send(SystemdCall *c, sd_bus *bus) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *msg = NULL;
        sd_bus_slot *slot = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &msg, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                           "org.freedesktop.systemd1.Manager", c->freeze ? "FreezeUnit" : "ThawUnit");
        if (r >= 0)
                r = sd_bus_message_append(msg, "s", unit_name_of_cgroup(c->cgroup));
        if (r >= 0)
                r = sd_bus_call_async(bus, &slot, msg, on_reply, c,
                                      c->freeze ? c->listener->m.config->freeze_timeout : 2 * LISTENER_SYSTEMD_TIMEOUT_USEC);
        if (r < 0) {
                char *address = NULL;
                (void) sd_bus_get_address(bus, (const char **) &address);
                call_failed(c, address ?: "(its socket)", r);
                return r;
        }
        (void) sd_bus_slot_set_destroy_callback(slot, call_free);
        (void) sd_bus_slot_set_floating(slot, true);
        sd_bus_slot_unref(slot);
        return 0;
}

int listener_systemd_set_freeze(Listener *l, const char *address, const char *cgroup, bool freeze) {
        SystemdCall *c;
        SystemdLink *k = NULL;
        int r;

        c = calloc(1, sizeof(SystemdCall));
        if (!c)
                return -ENOMEM;
        *c = (SystemdCall) { .listener = l, .cgroup = strdup(cgroup), .freeze = freeze };
        r = c->cgroup ? 0 : -ENOMEM;
        /* A freeze gets as long as any freeze (FreezeTimeout judges it, by
         * cgroup.events); a thaw only a moment, timed by a loop timer of its
         * own: sd-bus times a call only once its connection is up, and a
         * connection to a stopped manager never finishes authenticating
         * (nor a child's connect to a socket that does not answer). */
        if (r >= 0 && !freeze) /* absolute: sd_event_now() is stale on the loop's hot path (loop.c) */
                r = sd_event_add_time(l->event, &c->timer, CLOCK_MONOTONIC,
                                      now_usec(CLOCK_MONOTONIC) + LISTENER_SYSTEMD_TIMEOUT_USEC, 0, on_thaw_timeout, c);
        if (r >= 0)
                r = link_get(l, address, &k);
        if (r < 0) {
                call_failed(c, address, r);
                return freeze ? r : 0;
        }
        if (!k->bus) { /* connecting: sent in order once connected */
                *k->queued_tail = c;
                k->queued_tail = &c->next_queued;
                return 0;
        }
        r = call_send(c, k->bus);
        return freeze ? r : 0;
}

int listener_unit_set_freeze(Listener *l, const char *cgroup, const char *address, int cg_fd, int freeze_fd, bool freeze) {
        if (address)
                return listener_systemd_set_freeze(l, address, cgroup, freeze);
        if (freeze_fd >= 0)
                return cgroup_write_freeze(freeze_fd, freeze);
        return cgroup_set_freeze(cg_fd, freeze);
}
