/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a thaw asked over the bus did (PushEx, Thaw): the units it left
 * running and those it could not thaw, each with why.
 *
 * A thaw through cgroup.freeze is known done when its write returns; one
 * through systemd only when ThawUnit is answered, or, failing that, when
 * the thaw through cgroup.freeze that replaces it is written
 * (systemd-link.c, within LISTENER_SYSTEMD_TIMEOUT_USEC). So the reply
 * waits for every such thaw to settle, and no longer than
 * LISTENER_REPORT_TIMEOUT_USEC: the loop goes on meanwhile. Each unit said
 * thawed is checked in its cgroup.events: a unit whose thaw was written
 * but that a frozen cgroup above it keeps frozen is a failure. */
#include <assert.h>

#include "cgroup.h"
#include "listener.h"
#include "log.h"
#include "strv.h"

#define OUTCOME_PENDING 1
#define OUTCOME_THAWED 0

struct ThawReport {
        Listener *listener;
        sd_bus_message *call;     /* answered once every unit has its outcome */
        char **cgroups;
        int *outcomes;            /* OUTCOME_*, or a negative errno: why it failed */
        size_t n, n_pending;
        sd_event_source *timer;   /* the bound on the wait */
        ThawReport *next;
};

static ThawReport *report_free(ThawReport *t) {
        if (!t)
                return NULL;
        sd_event_source_disable_unref(t->timer);
        sd_bus_message_unref(t->call);
        strv_free(t->cgroups);
        free(t->outcomes);
        free(t);
        return NULL;
}

void listener_drop_reports(Listener *l) {
        l->collecting = report_free(l->collecting);
        while (l->reports) {
                ThawReport *t = l->reports;
                l->reports = t->next;
                report_free(t);
        }
}

static const char *why(int outcome) {
        switch (outcome) {
        case -EBUSY:
                return "still frozen: a cgroup above it is frozen";
        case -ESRCH:
                return "not frozen by standby";
        case -ENOENT:
        case -ENODEV:
                return "its cgroup is gone";
        case -ETIMEDOUT:
                return "its thaw did not settle in time";
        default:
                return strerror(-outcome);
        }
}

/* The reply: (as thawed, a(ss) failed). A unit said thawed is checked in
 * the kernel first. */
static int report_send(Listener *l, ThawReport *t) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        for (size_t i = 0; i < t->n; i++) {
                _cleanup_close_ int fd = -EBADF;
                bool frozen = false;

                if (t->outcomes[i] != OUTCOME_THAWED)
                        continue;
                r = cgroup_open(l->m.root_fd, t->cgroups[i], &fd);
                if (r >= 0)
                        r = cgroup_get_frozen(fd, &frozen, NULL);
                if (r >= 0 && frozen)
                        r = -EBUSY;
                if (r < 0) {
                        t->outcomes[i] = r;
                        if (r != -ENOENT && r != -ENODEV) {
                                l->stats.thaw_failures++;
                                log_error("Failed to thaw %s: %s.", t->cgroups[i], why(r));
                        }
                }
        }
        r = sd_bus_message_new_method_return(t->call, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "s");
        for (size_t i = 0; r >= 0 && i < t->n; i++)
                if (t->outcomes[i] == OUTCOME_THAWED)
                        r = sd_bus_message_append(reply, "s", t->cgroups[i]);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(ss)");
        for (size_t i = 0; r >= 0 && i < t->n; i++)
                if (t->outcomes[i] < 0)
                        r = sd_bus_message_append(reply, "(ss)", t->cgroups[i], why(t->outcomes[i]));
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_send(NULL, reply, NULL);
        if (r < 0)
                log_warning_errno(r, "Failed to answer a thaw's caller: %m");
        return r;
}

static void report_finish(Listener *l, ThawReport *t) {
        for (ThawReport **p = &l->reports; *p; p = &(*p)->next)
                if (*p == t) {
                        *p = t->next;
                        break;
                }
        (void) report_send(l, t);
        report_free(t);
}

static int on_report_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        ThawReport *t = userdata;

        for (size_t i = 0; i < t->n; i++)
                if (t->outcomes[i] == OUTCOME_PENDING) {
                        t->outcomes[i] = -ETIMEDOUT;
                        t->listener->stats.thaw_failures++;
                        log_error("Failed to thaw %s: %s.", t->cgroups[i], why(-ETIMEDOUT));
                }
        t->n_pending = 0;
        report_finish(t->listener, t);
        return 0;
}

int listener_report_begin(Listener *l, sd_bus_message *call) {
        ThawReport *t;

        assert(!l->collecting);
        t = calloc(1, sizeof(ThawReport));
        if (!t)
                return -ENOMEM;
        *t = (ThawReport) { .listener = l, .call = sd_bus_message_ref(call) };
        l->collecting = t;
        return 0;
}

static int report_add(ThawReport *t, const char *cgroup, int outcome) {
        int *no;
        int r;

        for (size_t i = 0; i < t->n; i++)
                if (streq(t->cgroups[i], cgroup)) {
                        /* A settled outcome stands; a second one replaces a pending one. */
                        if (t->outcomes[i] == OUTCOME_PENDING && outcome != OUTCOME_PENDING) {
                                t->outcomes[i] = outcome;
                                t->n_pending--;
                        }
                        return 0;
                }
        no = realloc(t->outcomes, (t->n + 1) * sizeof(int));
        if (!no)
                return -ENOMEM;
        t->outcomes = no;
        r = strv_extend(&t->cgroups, cgroup);
        if (r < 0)
                return r;
        t->outcomes[t->n++] = outcome;
        if (outcome == OUTCOME_PENDING)
                t->n_pending++;
        return 0;
}

void listener_report_note(Listener *l, const char *cgroup, int outcome) {
        if (l->collecting && report_add(l->collecting, cgroup, outcome) < 0)
                log_warning("Out of memory: the answer to a thaw's caller leaves out %s.", cgroup);
}

void listener_report_settled(Listener *l, const char *cgroup, int r) {
        int outcome = r < 0 ? r : OUTCOME_THAWED;

        /* A thaw that settled while its call is still being handled. */
        listener_report_note(l, cgroup, outcome);
        for (ThawReport *t = l->reports, *next; t; t = next) {
                next = t->next;
                for (size_t i = 0; i < t->n; i++)
                        if (t->outcomes[i] == OUTCOME_PENDING && streq(t->cgroups[i], cgroup)) {
                                t->outcomes[i] = outcome;
                                t->n_pending--;
                        }
                if (t->n_pending == 0)
                        report_finish(l, t);
        }
}

int listener_report_end(Listener *l) {
        ThawReport *t = TAKE_PTR(l->collecting);
        int r;

        if (!t)
                return -ENOMEM;
        if (t->n_pending == 0) {
                r = report_send(l, t);
                report_free(t);
                return r < 0 ? r : 1;
        }
        r = sd_event_add_time_relative(l->event, &t->timer, CLOCK_MONOTONIC, LISTENER_REPORT_TIMEOUT_USEC, 0,
                                       on_report_timeout, t);
        if (r < 0) {
                report_free(t);
                return r;
        }
        t->next = l->reports;
        l->reports = t;
        return 1; /* handled: sd-bus looks no further, and the reply comes later */
}
