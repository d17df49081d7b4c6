/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A held unit that its timer started: the timer is held, not its job.
 *
 * A unit held while starting (cgroup-watch.c) keeps its start job running
 * at its manager for as long as standby lasts: a oneshot, notify or
 * forking service is "activating" until its frozen process gets on. While
 * a job runs, systemd reports it every half second, and a user manager
 * sends that report to PID 1 as STATUS=, which PID 1 publishes as
 * PropertiesChanged on user@UID.service, which logind reads back: four
 * processes woken several times a second by one frozen timer job
 * (docs/benchmark.md section 8). A job that a timer started has nobody
 * waiting for it, so cancelling it costs nothing: systemd leaves the unit
 * "activating" with its frozen process, the timer stays elapsed, and when
 * the process gets on, at exit or in a window, the unit finishes as it
 * would have and the timer waits for its next time. A job that someone
 * asked for (systemctl start, a D-Bus activation) is left alone: its
 * caller would hear "canceled".
 *
 * The unit's cgroup may be made before its job starts it (systemd 252
 * makes a unit's cgroup along with its siblings'), so the question waits
 * until a process comes into the held cgroup (cgroup.events: populated 1):
 * systemd's child for the job, which runs by then. Three calls to the
 * unit's manager follow, each sent from the loop without waiting: the
 * unit's TriggeredBy (a timer among them?), its Job, then CancelJob. Any
 * error ends them; the unit stays held either way. When standby ends,
 * whatever is still under way is dropped. A user manager is reached at the socket in that user's
 * runtime directory, which the user controls: what it answers decides
 * only whether this listener asks that same manager to cancel a job. */
#include <inttypes.h>
#include <sys/epoll.h>

#include "cgroup.h"
#include "listener.h"
#include "log.h"
#include "unit-name.h"

struct HeldJob {
        unsigned n_ref; /* the listener's list, and one per call in flight */
        bool dropped; /* standby ended: answers still to come are ignored */
        Listener *listener;
        char *cgroup;
        char *address; /* its manager's */
        char *path; /* the unit's object path */
        uint32_t job;
        int events_fd; /* cgroup.events, until populated */
        sd_event_source *populated_watch;
        HeldJob *next;
};

static void held_job_unref(void *userdata) {
        HeldJob *h = userdata;
        if (--h->n_ref > 0)
                return;
        sd_event_source_disable_unref(h->populated_watch);
        safe_close(h->events_fd);
        free(h->cgroup);
        free(h->address);
        free(h->path);
        free(h);
}

/* Done, whichever way: off the listener's list. */
static void held_job_finish(HeldJob *h) {
        for (HeldJob **p = &h->listener->held_jobs; *p; p = &(*p)->next)
                if (*p == h) {
                        *p = h->next;
                        held_job_unref(h);
                        return;
                }
}

void listener_held_jobs_drop(Listener *l) {
        while (l->held_jobs) {
                HeldJob *h = l->held_jobs;
                l->held_jobs = h->next;
                h->dropped = true;
                h->populated_watch = sd_event_source_disable_unref(h->populated_watch);
                held_job_unref(h);
        }
}

static int held_job_send(HeldJob *h, sd_bus *bus, sd_bus_message *msg, sd_bus_message_handler_t handler) {
        sd_bus_slot *slot = NULL;
        int r;

        r = sd_bus_call_async(bus, &slot, msg, handler, h, 2 * LISTENER_SYSTEMD_TIMEOUT_USEC);
        if (r < 0)
                return r;
        h->n_ref++;
        (void) sd_bus_slot_set_destroy_callback(slot, held_job_unref);
        (void) sd_bus_slot_set_floating(slot, true);
        sd_bus_slot_unref(slot);
        return 0;
}

static int send_get(HeldJob *h, sd_bus *bus, const char *property, sd_bus_message_handler_t handler) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *msg = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &msg, "org.freedesktop.systemd1", h->path,
                                           "org.freedesktop.DBus.Properties", "Get");
        if (r >= 0)
                r = sd_bus_message_append(msg, "ss", "org.freedesktop.systemd1.Unit", property);
        return r < 0 ? r : held_job_send(h, bus, msg, handler);
}

/* An answer to go on with: not an error, and standby still on. */
static bool answered(sd_bus_message *m, HeldJob *h, const char *what) {
        const sd_bus_error *e = sd_bus_message_get_error(m);

        if (h->dropped)
                return false;
        if (e) {
                log_debug("%s: its manager did not answer %s (%s); its job is left as it is.", h->cgroup, what,
                          e->message ?: e->name);
                held_job_finish(h);
                return false;
        }
        return true;
}

static int on_cancelled(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        HeldJob *h = userdata;

        if (!answered(m, h, "CancelJob"))
                return 0;
        h->listener->stats.jobs_released++;
        log_info("Released job %" PRIu32 " of %s, which its timer started: the unit stays held and runs when thawed.",
                 h->job, unit_name_of_cgroup(h->cgroup));
        held_job_finish(h);
        return 0;
}

static int on_job(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *msg = NULL;
        HeldJob *h = userdata;
        sd_bus *bus = sd_bus_message_get_bus(m);
        const char *path;
        int r;

        if (!answered(m, h, "its Job"))
                return 0;
        r = sd_bus_message_read(m, "v", "(uo)", &h->job, &path);
        if (r >= 0 && h->job == 0)
                r = -ESRCH; /* started already, or its process came by another way */
        if (r >= 0)
                r = sd_bus_message_new_method_call(bus, &msg, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                                   "org.freedesktop.systemd1.Manager", "CancelJob");
        if (r >= 0)
                r = sd_bus_message_append(msg, "u", h->job);
        if (r >= 0)
                r = held_job_send(h, bus, msg, on_cancelled);
        if (r < 0) {
                log_debug_errno(r, "%s: no job of it cancelled: %m", h->cgroup);
                held_job_finish(h);
        }
        return 0;
}

static int on_triggered_by(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        HeldJob *h = userdata;
        const char *name;
        bool by_timer = false;
        int r;

        if (!answered(m, h, "its TriggeredBy"))
                return 0;
        r = sd_bus_message_enter_container(m, 'v', "as");
        if (r >= 0)
                r = sd_bus_message_enter_container(m, 'a', "s");
        while (r > 0 && (r = sd_bus_message_read(m, "s", &name)) > 0) {
                const char *dot = strrchr(name, '.');
                by_timer = by_timer || (dot && streq(dot, ".timer"));
        }
        if (r >= 0 && by_timer)
                r = send_get(h, sd_bus_message_get_bus(m), "Job", on_job);
        if (r < 0)
                log_debug_errno(r, "%s: cannot ask its manager for its job: %m", h->cgroup);
        if (r < 0 || !by_timer)
                held_job_finish(h);
        return 0;
}

/* Its process has come: ask. */
static void held_job_ask(HeldJob *h) {
        sd_bus *bus;
        int r;

        h->populated_watch = sd_event_source_disable_unref(h->populated_watch);
        h->events_fd = safe_close(h->events_fd);
        r = listener_systemd_connect(h->listener, h->address, &bus);
        if (r >= 0)
                r = send_get(h, bus, "TriggeredBy", on_triggered_by);
        if (r < 0) {
                log_debug_errno(r, "%s: cannot ask its manager at %s whether a timer started it: %m", h->cgroup,
                                h->address);
                held_job_finish(h);
        }
}

static int on_events(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        HeldJob *h = userdata;
        bool populated = false;
        int r;

        r = cgroup_read_events_fd(fd, NULL, &populated);
        if (r < 0)
                held_job_finish(h); /* gone */
        else if (populated)
                held_job_ask(h);
        return 0;
}

void listener_release_timer_job(Listener *l, int cg_fd, const char *cgroup) {
        _cleanup_free_ char *address = NULL;
        bool populated = false;
        HeldJob *h;
        int r;

        if (systemd_manager_address(l->m.config, cgroup, &address) < 0)
                return; /* Backend=cgroupfs, or not a service or scope */
        h = calloc(1, sizeof(HeldJob));
        if (!h)
                return;
        *h = (HeldJob){ .n_ref = 1,
                        .listener = l,
                        .events_fd = -EBADF,
                        .cgroup = strdup(cgroup),
                        .address = TAKE_PTR(address),
                        .next = l->held_jobs };
        l->held_jobs = h;
        r = h->cgroup ? 0 : -ENOMEM;
        if (r >= 0)
                r = sd_bus_path_encode("/org/freedesktop/systemd1/unit", unit_name_of_cgroup(cgroup), &h->path);
        if (r >= 0)
                r = cgroup_open_events(cg_fd, &h->events_fd);
        if (r >= 0)
                r = sd_event_add_io(l->event, &h->populated_watch, h->events_fd, EPOLLPRI, on_events, h);
        if (r >= 0)
                r = cgroup_read_events_fd(h->events_fd, NULL, &populated); /* and arms POLLPRI */
        if (r < 0) {
                if (r != -ENOENT && r != -ENODEV)
                        log_debug_errno(r, "%s: cannot watch for its process: %m", cgroup);
                held_job_finish(h);
        } else if (populated)
                held_job_ask(h);
}
