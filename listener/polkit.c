/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* polkit: whether a caller who is neither root nor in Group= may do an
 * action (org.standby.enter, .exit, .push, .thaw-own, .thaw,
 * .inhibit-block; polkit/org.standby.policy) is asked of
 * org.freedesktop.PolicyKit1.Authority, without waiting: the
 * call is held and handled again once polkit answers, as bus-access.c does
 * for the caller's credentials. The subject is the caller's unique bus
 * name, which polkit resolves through the bus to its connection's
 * credentials and session: never a PID read later.
 *
 * It fails closed: no polkit on the bus, polkit stopped and not
 * activatable, an error, or no answer within the bound is a refusal, said
 * in the error's message. */
#include "listener.h"
#include "log.h"

#define POLKIT_NAME "org.freedesktop.PolicyKit1"
#define POLKIT_PATH "/org/freedesktop/PolicyKit1/Authority"
#define POLKIT_INTERFACE "org.freedesktop.PolicyKit1.Authority"
/* CheckAuthorization's flag: polkit may ask the user through an agent. */
#define POLKIT_ALLOW_USER_INTERACTION 1u

/* How long polkit has to answer; with an agent asking the user, as long
 * as sd-bus's clients wait for a reply by default. */
#define POLKIT_TIMEOUT_USEC (5 * USEC_PER_SEC)
#define POLKIT_INTERACTIVE_TIMEOUT_USEC (25 * USEC_PER_SEC)
/* Calls held for polkit's answer at once, and from one sender: one more
 * is answered LimitsExceeded. Twice what dbus-daemon lets one user connect
 * on the system bus (max_connections_per_user, 256), as for the
 * credentials. */
#define POLKIT_QUERIES_MAX 512
#define POLKIT_QUERIES_PER_SENDER_MAX 8

typedef struct PolkitQuery {
        sd_bus_message *call;
        sd_bus_message_handler_t method;
        void *userdata;
        char *action;
        char *refusal; /* the error message if polkit says no */
        sd_bus_slot *slot;
        struct PolkitQuery *next;
} PolkitQuery;

static PolkitQuery *queries;
static unsigned n_queries;
/* polkit's last call failed: said once, not for every caller (any user can
 * call as often as he likes), until it answers again. */
static bool failing;
/* The call being handled again after polkit said yes, and for what. */
static sd_bus_message *granted_call;
static const char *granted_action;

static void query_unlink(PolkitQuery *q) {
        for (PolkitQuery **p = &queries; *p; p = &(*p)->next)
                if (*p == q) {
                        *p = q->next;
                        n_queries--;
                        break;
                }
}

static void query_free(PolkitQuery *q) {
        sd_bus_slot_unref(q->slot);
        sd_bus_message_unref(q->call);
        free(q->action);
        free(q->refusal);
        free(q);
}

void listener_polkit_stop(void) {
        while (queries) {
                PolkitQuery *q = queries;
                query_unlink(q);
                query_free(q);
        }
}

bool listener_polkit_granted(sd_bus_message *msg, const char *action) {
        return msg && msg == granted_call && action && granted_action && streq(action, granted_action);
}

/* polkit's answer: (bba{ss}) is_authorized, is_challenge, details. */
static int on_polkit_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        PolkitQuery *q = userdata;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        int authorized = 0, challenge = 0, r = 0;

        query_unlink(q);
        if (!e && failing) {
                log_info("polkit answers again.");
                failing = false;
        }
        if (e) {
                log_full(failing ? LOG_DEBUG : LOG_WARNING,
                         "polkit did not answer whether %s may %s (%s: %s): refused, as every call polkit does not "
                         "answer.",
                         strna(sd_bus_message_get_sender(q->call)), q->action, e->name, strna(e->message));
                failing = true;
                r = sd_bus_error_setf(&error, SD_BUS_ERROR_ACCESS_DENIED,
                                      "%s polkit could not be asked (%s), and its silence is a refusal.", q->refusal,
                                      e->name);
        } else if (sd_bus_message_enter_container(reply, 'r', "bba{ss}") < 0 ||
                   sd_bus_message_read(reply, "bb", &authorized, &challenge) < 0) {
                log_warning("polkit's answer for %s does not parse: refused.", q->action);
                r = sd_bus_error_setf(&error, SD_BUS_ERROR_ACCESS_DENIED, "%s polkit's answer does not parse.",
                                      q->refusal);
        } else if (!authorized && challenge)
                r = sd_bus_error_setf(&error, SD_BUS_ERROR_INTERACTIVE_AUTHORIZATION_REQUIRED,
                                      "%s polkit asks for authentication (%s): call with interactive "
                                      "authorization allowed, with an agent running.",
                                      q->refusal, q->action);
        else if (!authorized)
                r = sd_bus_error_setf(&error, SD_BUS_ERROR_ACCESS_DENIED, "%s polkit said no (%s).", q->refusal,
                                      q->action);
        else {
                /* Handled afresh, from its first argument, now allowed. */
                granted_call = q->call;
                granted_action = q->action;
                r = sd_bus_message_rewind(q->call, true);
                if (r >= 0)
                        r = q->method(q->call, q->userdata, &error);
                granted_call = NULL;
                granted_action = NULL;
        }
        if (r < 0 || sd_bus_error_is_set(&error))
                (void) sd_bus_reply_method_errno(q->call, r < 0 ? r : -EACCES, &error);
        sd_bus_error_free(&error);
        query_free(q);
        return 0;
}

int listener_polkit_check(sd_bus_message *msg, const char *action, const char *refusal, sd_bus_message_handler_t method,
                          void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *ask = NULL;
        const char *sender = sd_bus_message_get_sender(msg);
        bool interactive = sd_bus_message_get_allow_interactive_authorization(msg) > 0;
        unsigned from_sender = 0;
        PolkitQuery *q;
        int r;

        if (!sender)
                return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED, "%s", refusal);
        for (q = queries; q; q = q->next)
                if (streq(strna(sd_bus_message_get_sender(q->call)), sender))
                        from_sender++;
        if (n_queries >= POLKIT_QUERIES_MAX || from_sender >= POLKIT_QUERIES_PER_SENDER_MAX)
                return sd_bus_error_set(error, SD_BUS_ERROR_LIMITS_EXCEEDED, "Too many calls wait for polkit.");
        q = calloc(1, sizeof(PolkitQuery));
        if (!q)
                return -ENOMEM;
        q->action = strdup(action);
        q->refusal = strdup(refusal);
        if (!q->action || !q->refusal) {
                query_free(q);
                return -ENOMEM;
        }
        r = sd_bus_message_new_method_call(sd_bus_message_get_bus(msg), &ask, POLKIT_NAME, POLKIT_PATH,
                                           POLKIT_INTERFACE, "CheckAuthorization");
        if (r >= 0)
                r = sd_bus_message_append(ask, "(sa{sv})sa{ss}us", "system-bus-name", 1, "name", "s", sender, action, 0,
                                          interactive ? POLKIT_ALLOW_USER_INTERACTION : 0u, "");
        if (r >= 0)
                r = sd_bus_call_async(sd_bus_message_get_bus(msg), &q->slot, ask, on_polkit_reply, q,
                                      interactive ? POLKIT_INTERACTIVE_TIMEOUT_USEC : POLKIT_TIMEOUT_USEC);
        if (r < 0) {
                query_free(q);
                log_warning_errno(r, "Cannot ask polkit whether %s may %s: %m", sender, action);
                return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED, "%s polkit could not be asked.", refusal);
        }
        q->call = sd_bus_message_ref(msg);
        q->method = method;
        q->userdata = userdata;
        q->next = queries;
        queries = q;
        n_queries++;
        return 1;
}
