/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Event=push, and the methods that thaw or count: Push(unit, reason),
 * PushEx(unit, reason), Thaw(cgroups, usec), ThawUnit(unit, usec) and
 * GetStatistics(). The
 * interface that reaches them is bus-api.c's; who may call them,
 * bus-access.c's. */
#include "listener.h"
#include "log.h"
#include "strv.h"
#include "unit-name.h"

/* What Push and PushEx share: their arguments, read and checked, from a
 * caller who may push. 0 and the unit; 1 when the caller's credentials are
 * asked for (method is called again); or the error to answer with. */
static int push_read(Listener *l, sd_bus_message *msg, sd_bus_message_handler_t method, const char **ret_unit,
                     const char **ret_reason, sd_bus_error *error) {
        const char *unit, *reason;
        int r;

        r = sd_bus_message_read(msg, "ss", &unit, &reason);
        if (r < 0)
                return r;
        r = listener_check_access(l, msg, "org.standby.push", "push to", method, error);
        if (r != 0)
                return r;
        if (!unit_name_is_valid(unit))
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "\"%s\" is not a unit name.", unit);

        log_debug("Push for %s: %s", unit, reason);
        *ret_unit = unit;
        *ret_reason = reason;
        return 0;
}

int listener_method_push(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Listener *l = userdata;
        usec_t received = now_usec(CLOCK_MONOTONIC);
        const char *unit, *reason;
        int r;

        r = push_read(l, msg, listener_method_push, &unit, &reason, error);
        if (r != 0)
                return r;
        r = listener_dispatch(l,
                              &(Event) { .kind = &listener_event_kind_push, .unit = unit, .reason = reason,
                                         .sender = sd_bus_message_get_sender(msg) },
                              received);
        return sd_bus_reply_method_return(msg, "b", r > 0);
}

/* Push, answered with what it did (report.c): the units it left running,
 * and those that stay frozen, each with why. */
int listener_method_push_ex(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Listener *l = userdata;
        usec_t received = now_usec(CLOCK_MONOTONIC);
        const char *unit, *reason;
        int r;

        r = push_read(l, msg, listener_method_push_ex, &unit, &reason, error);
        if (r != 0)
                return r;
        r = listener_report_begin(l, msg);
        if (r < 0)
                return r;
        (void) listener_dispatch(l,
                                 &(Event) { .kind = &listener_event_kind_push, .unit = unit, .reason = reason,
                                            .sender = sd_bus_message_get_sender(msg) },
                                 received);
        return listener_report_end(l);
}

/* A thaw window asked over the bus, for leaves: answered once the thaws'
 * outcomes are known (report.c). */
static int thaw_window(Listener *l, sd_bus_message *msg, char **leaves, uint64_t usec, const char *what,
                       usec_t received, sd_bus_error *error) {
        int r;

        if (usec == 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "A thaw window of 0 s.");
        if (!listener_standby_active(l) || l->phase == LISTENER_PHASE_EXITING)
                return sd_bus_error_setf(error, LISTENER_INTERFACE ".NotActive", "Standby is not active.");

        r = listener_report_begin(l, msg);
        if (r < 0)
                return r;
        log_info("A thaw window of %.1f s asked over the bus, for %s.", (double) usec / USEC_PER_SEC, what);
        l->thaw_cause = "a Thaw call";
        l->waking = &(Event) { .sender = sd_bus_message_get_sender(msg) };
        r = listener_thaw_leaves(l, leaves, usec, false, received);
        l->thaw_cause = NULL;
        l->waking = NULL;
        if (r < 0 && r != -EIO)
                log_warning_errno(r, "Failed to open a thaw window: %m");
        return listener_report_end(l);
}

/* Who may thaw cgroups: root and Group=; else whom polkit allows
 * org.standby.thaw-own when every cgroup is the caller's own (below her
 * user manager), org.standby.thaw (an administrator's) when any is not or
 * none is named. As listener_check_access() returns. */
static int thaw_access(Listener *l, sd_bus_message *msg, char **cgroups, sd_bus_message_handler_t method,
                       sd_bus_error *error) {
        bool privileged = false;
        uid_t uid;
        pid_t pid;
        int r;

        r = listener_caller(l, msg, method, &uid, &pid, &privileged, error);
        if (r != 0)
                return r;
        return listener_check_access(l, msg, privileged ? NULL : listener_thaw_action(l, uid, cgroups),
                                     "thaw units through", method, error);
}

/* standby-manager thaw --for: the window is the listener's, which outlives
 * the caller and freezes the units again the way standby froze them. Only
 * units the journal lists as frozen by standby are thawed; cgroups is what
 * the caller resolved its names to, and anything else in it is answered
 * "not frozen by standby". */
int listener_method_thaw(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_strv_free_ char **cgroups = NULL;
        Listener *l = userdata;
        usec_t received = now_usec(CLOCK_MONOTONIC);
        uint64_t usec;
        char what[64];
        int r;

        r = sd_bus_message_read_strv(msg, &cgroups);
        if (r >= 0)
                r = sd_bus_message_read(msg, "t", &usec);
        if (r < 0)
                return r;
        r = thaw_access(l, msg, cgroups, listener_method_thaw, error);
        if (r != 0)
                return r;
        snprintf(what, sizeof(what), "%zu cgroups", strv_length(cgroups));
        return thaw_window(l, msg, cgroups, usec, what, received, error);
}

/* The same for a unit name, as a rule's Thaw= names one: every cgroup of
 * that name that standby froze, and what is below it (names.c). */
int listener_method_thaw_unit(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Listener *l = userdata;
        usec_t received = now_usec(CLOCK_MONOTONIC);
        const char *unit;
        uint64_t usec;
        int r;

        r = sd_bus_message_read(msg, "st", &unit, &usec);
        if (r < 0)
                return r;
        if (!unit_name_is_valid(unit))
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "\"%s\" is not a unit name.", unit);
        /* The state is anyone's to read (the State property); what is
         * frozen is not: NotFrozen comes after the access check. */
        if (!listener_standby_active(l) || l->phase == LISTENER_PHASE_EXITING)
                return sd_bus_error_setf(error, LISTENER_INTERFACE ".NotActive", "Standby is not active.");
        char **leaves = listener_resolve_unit(l, unit);
        r = thaw_access(l, msg, leaves, listener_method_thaw_unit, error);
        if (r != 0)
                return r;
        if (!leaves || !*leaves)
                return sd_bus_error_setf(error, LISTENER_INTERFACE ".NotFrozen", "%s is not frozen by standby.", unit);
        return thaw_window(l, msg, leaves, usec, unit, received, error);
}

static int append_statistic(const char *key, uint64_t value, void *userdata) {
        return sd_bus_message_append(userdata, "{st}", key, value);
}

int listener_method_statistics(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Listener *l = userdata;
        int r;

        /* When events came and how long thaws took tell when a user's
         * services were woken: not for everyone's eyes. */
        r = listener_check_access(l, msg, NULL, "read the statistics of", listener_method_statistics, error);
        if (r != 0)
                return r;
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "{st}");
        if (r >= 0)
                r = listener_statistics_foreach(l, append_statistic, reply);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

/* Event=push: Unit= (any unit when left out). */
typedef struct PushMatch {
        char *unit;
} PushMatch;

static void push_match_done(void *match) {
        free(((PushMatch *) match)->unit);
}

static int parse_push_unit(Rule *rule, const char *value, char **ret_why) {
        return rule_key_unit(&((PushMatch *) rule->match)->unit, value, ret_why);
}

static char *describe_push(const Rule *rule) {
        const char *unit = ((const PushMatch *) rule->match)->unit;
        char *s;
        return asprintf(&s, "on a D-Bus push%s%s", unit ? " for " : "", unit ?: "") < 0 ? NULL : s;
}

static bool match_push(const Rule *rule, const Event *ev) {
        return listener_str_matches(((const PushMatch *) rule->match)->unit, ev->unit);
}

const EventKind listener_event_kind_push = {
        .name = "push",
        .match_size = sizeof(PushMatch),
        .done = push_match_done,
        .keys = (const RuleKey[]) { { "Unit", parse_push_unit }, {} },
        .describe = describe_push,
        .matches = match_push,
        .answers_caller = true, /* Push, PushEx */
};
