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
 * (docs/benchmark.md section 8). A job that its timer started has nobody
 * waiting for it, so cancelling it costs nothing: systemd leaves the unit
 * "activating" with its frozen process, the timer stays "running" (waiting
 * for its unit), and when the process gets on, at exit or in a window, the
 * unit finishes as it would have and the timer waits for its next time.
 *
 * Cancelled only when every sign says the timer started it and nothing
 * else waits for it: the unit's TriggeredBy names a timer whose SubState
 * is "running"; the unit's ControlGroup is this very cgroup (the manager
 * that answers manages it); its job is a start job, running, that no other
 * job waits for (GetBefore is empty: CancelJob would fail such jobs); and
 * the unit is still held. systemd 252 does not say who queued a job, so a
 * `systemctl start` of a unit whose timer has just fired is taken for the
 * timer's. Anything else (systemctl start, a socket, D-Bus activation)
 * keeps its job, so its caller waits rather than hear "canceled".
 *
 * The unit's cgroup may be made before its job starts it (systemd 252
 * makes a unit's cgroup along with its siblings'), so the questions wait
 * until a process comes into the held cgroup (cgroup.events: populated 1):
 * systemd's child for the job, which runs by then. Each is sent from the
 * loop without waiting; any error or "no" ends them, and the unit stays
 * held either way. When standby ends, whatever is under way is dropped. */
#include <inttypes.h>
#include <stdarg.h>
#include <sys/epoll.h>

#include "cgroup.h"
#include "listener.h"
#include "log.h"
#include "strv.h"
#include "unit-name.h"

#define HELD_JOBS_WAITING_MAX 64

struct HeldJob {
        unsigned n_ref;           /* the listener's list, and one per call in flight */
        bool dropped;             /* standby ended: answers still to come are ignored */
        Listener *listener;
        char *cgroup;
        char *address;            /* its manager's */
        uint64_t link;            /* the link held while asking (listener_systemd_acquire); 0: none */
        char *path;               /* the unit's object path */
        char **timers;            /* its TriggeredBy's timers, not yet asked */
        uint32_t job;
        char *job_path;
        int events_fd;            /* cgroup.events, until populated */
        sd_event_source *populated_watch;
        HeldJob *next;
};

static void held_job_unref(void *userdata) {
        HeldJob *h = userdata;
        if (--h->n_ref > 0)
                return;
        if (h->link > 0)
                listener_systemd_release(h->listener, h->link);
        sd_event_source_disable_unref(h->populated_watch);
        safe_close(h->events_fd);
        free(h->cgroup);
        free(h->address);
        free(h->path);
        strv_free(h->timers);
        free(h->job_path);
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

static int send_call(HeldJob *h, sd_bus *bus, const char *path, const char *interface, const char *method,
                     sd_bus_message_handler_t handler, const char *types, ...) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *msg = NULL;
        va_list ap;
        int r;

        r = sd_bus_message_new_method_call(bus, &msg, "org.freedesktop.systemd1", path, interface, method);
        if (r >= 0 && types) {
                va_start(ap, types);
                r = sd_bus_message_appendv(msg, types, ap);
                va_end(ap);
        }
        return r < 0 ? r : held_job_send(h, bus, msg, handler);
}

static int send_get(HeldJob *h, sd_bus *bus, const char *path, const char *interface, const char *property,
                    sd_bus_message_handler_t handler) {
        return send_call(h, bus, path, "org.freedesktop.DBus.Properties", "Get", handler, "ss", interface, property);
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

/* The end of a step: r < 0 (logged) or no (quietly) ends the questions. */
static int step_done(HeldJob *h, int r, const char *what) {
        if (r < 0)
                log_debug_errno(r, "%s: %s: %m; its job is left as it is.", h->cgroup, what);
        if (r <= 0)
                held_job_finish(h);
        return 0;
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

/* No other job waits for it, and it is still held: cancel it. */
static int on_before(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        HeldJob *h = userdata;
        CachedUnit *c;
        int r;

        if (!answered(m, h, "GetBefore"))
                return 0;
        r = sd_bus_message_enter_container(m, 'a', "(usssoo)");
        if (r >= 0)
                r = sd_bus_message_at_end(m, false) > 0; /* empty: nothing waits for it */
        c = listener_cached_unit(h->listener, h->cgroup);
        if (r > 0 && (!c || !unit_machine_stopped(c->state)))
                r = 0; /* thawed meanwhile: its job is the window's */
        if (r > 0)
                r = send_call(h, sd_bus_message_get_bus(m), "/org/freedesktop/systemd1",
                              "org.freedesktop.systemd1.Manager", "CancelJob", on_cancelled, "u", h->job);
        return step_done(h, r, "cannot cancel its job");
}

/* A start job, running. */
static int on_job_state(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        HeldJob *h = userdata;
        const char *key, *value, *type = NULL, *state = NULL;
        int r;

        if (!answered(m, h, "its job's properties"))
                return 0;
        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        while (r > 0 && (r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                r = sd_bus_message_read(m, "s", &key);
                if (r >= 0 && (streq(key, "JobType") || streq(key, "State"))) {
                        r = sd_bus_message_read(m, "v", "s", &value);
                        if (r >= 0)
                                *(streq(key, "JobType") ? &type : &state) = value;
                } else if (r >= 0)
                        r = sd_bus_message_skip(m, "v");
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
                if (r >= 0)
                        r = 1;
        }
        if (r >= 0)
                r = type && streq(type, "start") && state && streq(state, "running");
        if (r > 0)
                r = send_call(h, sd_bus_message_get_bus(m), h->job_path, "org.freedesktop.systemd1.Job", "GetBefore",
                              on_before, NULL);
        return step_done(h, r, "cannot read its job");
}

static int on_job(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        HeldJob *h = userdata;
        const char *path;
        int r;

        if (!answered(m, h, "its Job"))
                return 0;
        r = sd_bus_message_read(m, "v", "(uo)", &h->job, &path);
        if (r >= 0)
                r = h->job != 0; /* started already, or its process came by another way */
        if (r > 0)
                r = (h->job_path = strdup(path)) ? 1 : -ENOMEM;
        if (r > 0)
                r = send_call(h, sd_bus_message_get_bus(m), h->job_path, "org.freedesktop.DBus.Properties", "GetAll",
                              on_job_state, "s", "org.freedesktop.systemd1.Job");
        return step_done(h, r, "cannot ask for its job");
}

/* The manager that answers manages this very cgroup. */
static int on_control_group(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        HeldJob *h = userdata;
        const char *cg;
        int r;

        if (!answered(m, h, "its ControlGroup"))
                return 0;
        r = sd_bus_message_read(m, "v", "s", &cg);
        if (r >= 0)
                r = cg[0] == '/' && streq(cg + 1, h->cgroup);
        if (r > 0)
                r = send_get(h, sd_bus_message_get_bus(m), h->path, "org.freedesktop.systemd1.Unit", "Job", on_job);
        return step_done(h, r, "cannot ask for its job");
}

static int ask_next_timer(HeldJob *h, sd_bus *bus);

/* One of its timers has fired and waits for it ("running"); else the next. */
static int on_timer_state(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        HeldJob *h = userdata;
        const char *sub;
        int r;

        if (!answered(m, h, "a timer's SubState"))
                return 0;
        r = sd_bus_message_read(m, "v", "s", &sub);
        if (r >= 0 && !streq(sub, "running"))
                return step_done(h, ask_next_timer(h, sd_bus_message_get_bus(m)), "cannot ask for its timers");
        if (r >= 0)
                r = send_get(h, sd_bus_message_get_bus(m), h->path, systemd_unit_interface(h->cgroup), "ControlGroup",
                             on_control_group);
        if (r >= 0)
                r = 1;
        return step_done(h, r, "cannot ask for its cgroup");
}

/* 1 when a question is sent, 0 with no timer left. */
static int ask_next_timer(HeldJob *h, sd_bus *bus) {
        _cleanup_free_ char *name = NULL, *path = NULL;
        int r;

        if (!h->timers || !h->timers[0])
                return 0;
        name = h->timers[0];
        memmove(h->timers, h->timers + 1, strv_length(h->timers) * sizeof(char *));
        r = sd_bus_path_encode("/org/freedesktop/systemd1/unit", name, &path);
        if (r >= 0)
                r = send_get(h, bus, path, "org.freedesktop.systemd1.Unit", "SubState", on_timer_state);
        return r < 0 ? r : 1;
}

static int on_triggered_by(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        HeldJob *h = userdata;
        const char *name;
        int r;

        if (!answered(m, h, "its TriggeredBy"))
                return 0;
        r = sd_bus_message_enter_container(m, 'v', "as");
        if (r >= 0)
                r = sd_bus_message_enter_container(m, 'a', "s");
        while (r > 0 && (r = sd_bus_message_read(m, "s", &name)) > 0) {
                const char *dot = strrchr(name, '.');
                if (dot && streq(dot, ".timer") && unit_name_is_valid(name) && strv_length(h->timers) < 8)
                        r = strv_extend(&h->timers, name) < 0 ? -ENOMEM : 1;
        }
        if (r >= 0)
                r = ask_next_timer(h, sd_bus_message_get_bus(m));
        return step_done(h, r, "cannot ask for its timers");
}

/* Its manager's link takes calls: the first question. */
static void on_link_ready(void *userdata, sd_bus *bus, uint64_t link, int r) {
        HeldJob *h = userdata;

        if (r >= 0)
                h->link = link;
        if (r >= 0 && !h->dropped)
                r = send_get(h, bus, h->path, "org.freedesktop.systemd1.Unit", "TriggeredBy", on_triggered_by);
        if (r < 0 && !h->dropped) {
                log_debug_errno(r, "%s: cannot ask its manager at %s whether a timer started it: %m", h->cgroup,
                                h->address);
                held_job_finish(h);
        }
        held_job_unref(h); /* the wait's */
}

/* Its process has come: ask, once its manager's link takes calls. */
static void held_job_ask(HeldJob *h) {
        int r;

        h->populated_watch = sd_event_source_disable_unref(h->populated_watch);
        h->events_fd = safe_close(h->events_fd);
        h->n_ref++; /* the wait's */
        r = listener_systemd_acquire(h->listener, h->address, on_link_ready, h);
        if (r < 0)
                on_link_ready(h, NULL, 0, r);
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

void listener_held_jobs_sweep(Listener *l) {
        bool populated = false;
        int r;

        /* An empty cgroup removed raises nothing on its cgroup.events: those
         * still waiting are looked at before more are added. */
        for (HeldJob *o = l->held_jobs, *next; o; o = next) {
                next = o->next;
                if (o->events_fd < 0)
                        continue; /* asking */
                r = cgroup_read_events_fd(o->events_fd, NULL, &populated);
                if (r < 0)
                        held_job_finish(o);
                else if (populated)
                        held_job_ask(o);
        }
}

void listener_release_timer_job(Listener *l, int cg_fd, const char *cgroup) {
        _cleanup_free_ char *address = NULL;
        bool populated = false;
        HeldJob *h;
        int r;

        if (systemd_manager_address(l->m.config, cgroup, &address) < 0)
                return; /* Backend=cgroupfs, or not a service or scope */
        /* An older one of the same name is let go, and at most
         * HELD_JOBS_WAITING_MAX wait at once (looked at by the caller's
         * listener_held_jobs_sweep(), once for all it holds). */
        size_t n = 0;
        for (HeldJob *o = l->held_jobs, *next; o; o = next) {
                next = o->next;
                if (o->events_fd < 0)
                        continue; /* asking */
                if (streq(o->cgroup, cgroup))
                        held_job_finish(o);
                else
                        n++;
        }
        if (n >= HELD_JOBS_WAITING_MAX) {
                log_debug("%s: %zu held units wait for their process already; its job is left as it is.", cgroup, n);
                return;
        }
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
