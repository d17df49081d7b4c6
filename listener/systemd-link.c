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
#include "unit-name.h"

struct SystemdLink {
        char *address;
        sd_bus *bus;
        SystemdLink *next;
};

typedef struct SystemdCall {
        Listener *listener;
        char *cgroup;
        bool freeze;
        bool settled;             /* thawed through cgroup.freeze already: the answer is moot */
        sd_event_source *timer;   /* a thaw's own deadline (see listener_systemd_set_freeze) */
} SystemdCall;

static SystemdLink *link_free(SystemdLink *k) {
        if (!k)
                return NULL;
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

/* One connection per manager, kept open; one that closed (systemd
 * restarted) is opened anew. Connecting to a unix socket does not wait:
 * sd-bus authenticates as the loop runs, and queues the calls until then. */
static int link_get(Listener *l, const char *address, sd_bus **ret) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        SystemdLink *k;
        int r;

        for (SystemdLink **p = &l->systemd_links; *p; p = &(*p)->next)
                if (streq((*p)->address, address)) {
                        if (sd_bus_is_open((*p)->bus) > 0) {
                                *ret = (*p)->bus;
                                return 0;
                        }
                        k = *p;
                        *p = k->next;
                        link_free(k);
                        break;
                }
        if ((r = sd_bus_new(&bus)) < 0 || (r = sd_bus_set_address(bus, address)) < 0 || (r = sd_bus_start(bus)) < 0 ||
            (r = sd_bus_attach_event(bus, l->event, SD_EVENT_PRIORITY_NORMAL)) < 0)
                return r;
        k = calloc(1, sizeof(SystemdLink));
        if (!k || !(k->address = strdup(address))) {
                free(k);
                return -ENOMEM;
        }
        k->bus = TAKE_PTR(bus);
        k->next = l->systemd_links;
        l->systemd_links = k;
        *ret = k->bus;
        return 0;
}

int listener_systemd_connect(Listener *l, const char *address, sd_bus **ret) {
        sd_bus *bus;
        int r = link_get(l, address, &bus);
        if (r >= 0 && ret)
                *ret = bus;
        return r;
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

int listener_systemd_set_freeze(Listener *l, const char *address, const char *cgroup, bool freeze) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *msg = NULL;
        sd_bus_slot *slot = NULL;
        SystemdCall *c = NULL;
        sd_bus *bus;
        int r;

        r = link_get(l, address, &bus);
        if (r >= 0)
                r = sd_bus_message_new_method_call(bus, &msg, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                                   "org.freedesktop.systemd1.Manager",
                                                   freeze ? "FreezeUnit" : "ThawUnit");
        if (r >= 0)
                r = sd_bus_message_append(msg, "s", unit_name_of_cgroup(cgroup));
        if (r >= 0 && !(c = calloc(1, sizeof(SystemdCall))))
                r = -ENOMEM;
        if (r >= 0) {
                *c = (SystemdCall) { .listener = l, .cgroup = strdup(cgroup), .freeze = freeze };
                if (!c->cgroup)
                        r = -ENOMEM;
        }
        /* A freeze gets as long as any freeze (FreezeTimeout judges it, by
         * cgroup.events); a thaw only a moment, timed by a loop timer of its
         * own: sd-bus times a call only once its connection is up, and a
         * connection to a stopped manager never finishes authenticating. */
        if (r >= 0 && !freeze) /* absolute: sd_event_now() is stale on the loop's hot path (loop.c) */
                r = sd_event_add_time(l->event, &c->timer, CLOCK_MONOTONIC,
                                      now_usec(CLOCK_MONOTONIC) + LISTENER_SYSTEMD_TIMEOUT_USEC, 0, on_thaw_timeout, c);
        if (r >= 0)
                r = sd_bus_call_async(bus, &slot, msg, on_reply, c,
                                      freeze ? l->m.config->freeze_timeout : 2 * LISTENER_SYSTEMD_TIMEOUT_USEC);
        if (r >= 0) {
                (void) sd_bus_slot_set_destroy_callback(slot, call_free);
                (void) sd_bus_slot_set_floating(slot, true);
                sd_bus_slot_unref(slot);
                return 0;
        }
        if (c)
                call_free(c);
        if (freeze)
                return log_warning_errno(r, "%s: cannot ask the systemd manager at %s to freeze it: %m", cgroup, address);
        log_warning_errno(r, "%s: cannot ask the systemd manager at %s to thaw it (%m); thawing it through cgroup.freeze.",
                          cgroup, address);
        thaw_directly(l, cgroup);
        return 0;
}

int listener_unit_set_freeze(Listener *l, const char *cgroup, const char *address, int cg_fd, int freeze_fd, bool freeze) {
        if (address)
                return listener_systemd_set_freeze(l, address, cgroup, freeze);
        if (freeze_fd >= 0)
                return cgroup_write_freeze(freeze_fd, freeze);
        return cgroup_set_freeze(cg_fd, freeze);
}
