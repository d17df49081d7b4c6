/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Event=uevent: kernel device events (hotplug), from the kernel's uevent
 * netlink multicast. The messages are "ACTION@DEVPATH" followed by KEY=VALUE
 * strings; we need ACTION and SUBSYSTEM only, so the socket is read directly
 * rather than through libudev (whose "kernel" monitor is this same socket). */
#include <linux/netlink.h>
#include <sys/socket.h>

#include "listener.h"
#include "log.h"

/* Event=uevent's [Match]. */
typedef struct UeventMatch {
        char *subsystem;     /* Subsystem=; NULL: any */
        char *change;        /* Change=: add, remove, change; NULL: any */
} UeventMatch;

static const EventKind event_kind_uevent;

static int on_uevent(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Listener *l = userdata;
        char buf[8192];

        for (;;) {
                struct sockaddr_nl from = {};
                socklen_t from_len = sizeof(from);
                ssize_t n = recvfrom(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT, (struct sockaddr *) &from, &from_len);
                const char *action = NULL, *subsystem = NULL;

                if (n < 0) {
                        if (errno == ENOBUFS) {
                                /* Device events cannot be read back from anywhere:
                                 * say so, and let the rules see an unknown change. */
                                log_warning("Uevent receive buffer overran: device events were lost.");
                                l->stats.resyncs++;
                                continue;
                        }
                        return 0; /* EAGAIN */
                }
                /* Any local process may send to the socket's port: only the
                 * kernel's word (port 0) is a device event. */
                if (from_len < sizeof(from) || from.nl_pid != 0) {
                        l->stats.forged++;
                        continue;
                }
                buf[n] = 0;
                for (char *p = buf; p < buf + n; p += strlen(p) + 1) {
                        if (strneq(p, "ACTION=", 7))
                                action = p + 7;
                        else if (strneq(p, "SUBSYSTEM=", 10))
                                subsystem = p + 10;
                }
                if (!action)
                        continue; /* not a kernel uevent (libudev's format starts otherwise) */
                log_debug("Uevent %s %s", action, strna(subsystem));
                (void) listener_dispatch(l,
                                         &(Event) { .kind = &event_kind_uevent, .change = action, .subsystem = subsystem },
                                         now_usec(CLOCK_MONOTONIC));
        }
}

/* The source's state: the uevent socket, open while a rule needs it. */
typedef struct UeventState {
        sd_event_source *source;
} UeventState;

extern const ListenerSource listener_source_uevent;

static UeventState *state_of(Listener *l) {
        return listener_source_state(l, &listener_source_uevent);
}

static int setup_uevent(Listener *l) {
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = 1 /* the kernel's */ };
        UeventState *st = state_of(l);
        bool any = false;
        int fd, r;

        st->source = sd_event_source_disable_unref(st->source);
        for (size_t i = 0; l->rules && i < l->rules->n_rules; i++)
                any = any || l->rules->rules[i].event == &event_kind_uevent;
        if (!any)
                return 0;
        fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT);
        if (fd < 0)
                return log_error_errno(-errno, "Cannot open the uevent socket: %m");
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                r = -errno;
                safe_close(fd);
                return log_error_errno(r, "Cannot bind the uevent socket: %m");
        }
        r = sd_event_add_io(l->event, &st->source, fd, EPOLLIN, on_uevent, l);
        if (r < 0) {
                safe_close(fd);
                return r;
        }
        /* The source closes the fd with it. */
        return sd_event_source_set_io_fd_own(st->source, true);
}

static void stop_uevent(Listener *l) {
        state_of(l)->source = sd_event_source_disable_unref(state_of(l)->source);
}

static void uevent_match_done(void *match) {
        UeventMatch *m = match;
        free(m->subsystem);
        free(m->change);
}

/* Subsystem=: a kernel subsystem name (usb, power_supply, ...). */
static int parse_subsystem(Rule *rule, const char *value, char **ret_why) {
        size_t n = strlen(value);
        if (n == 0 || n > 64 ||
            strspn(value, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.:") != n)
                return rule_key_fail(ret_why, "Subsystem=%s: expected a kernel subsystem name such as usb or "
                                     "power_supply", value);
        return rule_key_string(&((UeventMatch *) rule->match)->subsystem, value);
}

static int parse_change(Rule *rule, const char *value, char **ret_why) {
        return rule_key_one_of(&((UeventMatch *) rule->match)->change, "Change", rule->event, "add remove change",
                               value, ret_why);
}

static char *describe_uevent(const Rule *rule) {
        const UeventMatch *m = rule->match;
        char *s;
        return asprintf(&s, "on uevent %s%s%s", m->change ?: "any change", m->subsystem ? " of " : "",
                        m->subsystem ?: "") < 0 ? NULL : s;
}

static bool match_uevent(const Rule *rule, const Event *ev) {
        const UeventMatch *m = rule->match;
        return listener_str_matches(m->subsystem, ev->subsystem) && listener_str_matches(m->change, ev->change);
}

static const EventKind event_kind_uevent = {
        .name = "uevent",
        .match_size = sizeof(UeventMatch),
        .done = uevent_match_done,
        .keys = (const RuleKey[]) { { "Subsystem", parse_subsystem }, { "Change", parse_change }, {} },
        .describe = describe_uevent,
        .matches = match_uevent,
};

const ListenerSource listener_source_uevent = {
        .name = "uevent",
        .state_size = sizeof(UeventState),
        .kinds = (const EventKind * const[]) { &event_kind_uevent, NULL },
        .start = setup_uevent,
        .reload = setup_uevent,
        .stop = stop_uevent,
};
