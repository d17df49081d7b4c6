/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Who calls the listener's methods, and whether they may: root, or a member
 * of Group=, judged by the credentials the bus recorded for the caller's
 * connection, asked of the bus without waiting and kept per sender; for
 * the methods that change state, polkit may let others in (polkit.c).
 * Every method of the interface (bus-api.c) asks here. */
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>

#include "listener.h"
#include "log.h"

/* The verdict for each recent sender. Asking the bus for a sender's
 * credentials is a round trip (~0.5 ms); a unique name keeps its connection,
 * and so the credentials the bus recorded for it, for the bus's lifetime, and
 * is never reused (the listener exits when the bus goes away). */
#define VERDICTS 16
static struct {
        char *sender;
        bool allowed;
        uid_t uid;
        pid_t pid;
} verdicts[VERDICTS];
static unsigned next_verdict;

static void remember(const char *sender, bool allowed, uid_t uid, pid_t pid) {
        free(verdicts[next_verdict].sender);
        verdicts[next_verdict].sender = strdup(sender);
        verdicts[next_verdict].allowed = allowed;
        verdicts[next_verdict].uid = uid;
        verdicts[next_verdict].pid = pid;
        next_verdict = (next_verdict + 1) % VERDICTS;
}

pid_t listener_access_sender_pid(const char *sender) {
        for (unsigned i = 0; sender && i < VERDICTS; i++)
                if (verdicts[i].sender && streq(verdicts[i].sender, sender))
                        return verdicts[i].pid;
        return 0;
}

void listener_forget_verdicts(void) {
        for (unsigned i = 0; i < VERDICTS; i++)
                verdicts[i].sender = mfree(verdicts[i].sender);
}

/* Group='s gid, looked up once at start (Group= is not reloaded): a user
 * database lookup (LDAP, sssd) per caller could make the loop wait. -1: no
 * group, root alone. */
static gid_t access_gid = (gid_t) -1;

/* The connection's uid and groups as the bus recorded them when it connected
 * (GetConnectionCredentials' reply: SO_PEERCRED and SO_PEERGROUPS), never
 * read from /proc/PID when the call is handled: by then the PID may be
 * another process, or the same one with other credentials. Returns whether
 * it is root or in gid (-1: no group configured). A bus that gives no
 * UnixGroupIDs admits root alone. */
static int creds_allowed(sd_bus_message *reply, gid_t gid, bool *ret, uid_t *ret_uid, pid_t *ret_pid) {
        bool have_uid = false, allowed = false;
        uint32_t uid = UINT32_MAX, pid = 0;
        const char *key;
        int r;

        r = sd_bus_message_enter_container(reply, 'a', "{sv}");
        while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
                r = sd_bus_message_read(reply, "s", &key);
                if (r >= 0 && streq(key, "ProcessID"))
                        r = sd_bus_message_read(reply, "v", "u", &pid);
                else if (r >= 0 && streq(key, "UnixUserID")) {
                        r = sd_bus_message_read(reply, "v", "u", &uid);
                        have_uid = r >= 0;
                        if (r >= 0 && uid == 0)
                                allowed = true;
                } else if (r >= 0 && streq(key, "UnixGroupIDs")) {
                        const uint32_t *gids;
                        size_t size;
                        r = sd_bus_message_enter_container(reply, 'v', "au");
                        if (r >= 0)
                                r = sd_bus_message_read_array(reply, 'u', (const void **) &gids, &size);
                        for (size_t i = 0; r >= 0 && gid != (gid_t) -1 && i < size / sizeof(uint32_t); i++)
                                if (gids[i] == (uint32_t) gid)
                                        allowed = true;
                        if (r >= 0)
                                r = sd_bus_message_exit_container(reply);
                } else if (r >= 0)
                        r = sd_bus_message_skip(reply, "v");
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
        }
        if (r < 0)
                return r;
        if (!have_uid)
                return -EPROTO;
        *ret = allowed;
        *ret_uid = uid;
        *ret_pid = (pid_t) pid;
        return 0;
}

/* A call whose caller's credentials are asked of the bus: the loop does not
 * wait for the answer (a slow or hostile bus would stall every event); the
 * call is handled again once it comes. sd_bus_query_sender_creds() would
 * not do: on dbus-daemon, whose messages carry no credentials, it makes the
 * same call synchronously (or reads /proc/PID, which may be another process
 * by then). */
typedef struct HeldCall {
        sd_bus_message *call;
        sd_bus_message_handler_t method;
        void *userdata;
} HeldCall;

/* One question per sender, whatever it sends meanwhile: one connection
 * sending calls back to back takes one place, not every place, and its
 * calls beyond CREDS_CALLS_PER_SENDER_MAX are answered LimitsExceeded. */
#define CREDS_CALLS_PER_SENDER_MAX 8

typedef struct CredsQuery {
        char *sender;
        HeldCall calls[CREDS_CALLS_PER_SENDER_MAX];
        unsigned n_calls;
        sd_bus_slot *slot;
        struct CredsQuery *next;
} CredsQuery;

/* Senders waiting at once, at most: one more is answered LimitsExceeded.
 * Twice what dbus-daemon lets one user connect on the system bus
 * (max_connections_per_user, 256): no user alone fills it. */
#define CREDS_SENDERS_MAX 512
/* How long the bus has to answer: then the calls are refused. */
#define CREDS_TIMEOUT_USEC (2 * USEC_PER_SEC)
static CredsQuery *creds_queries;
static unsigned n_creds_queries;

static void creds_query_unlink(CredsQuery *q) {
        for (CredsQuery **p = &creds_queries; *p; p = &(*p)->next)
                if (*p == q) {
                        *p = q->next;
                        n_creds_queries--;
                        break;
                }
}

static void creds_query_free(CredsQuery *q) {
        sd_bus_slot_unref(q->slot);
        for (unsigned i = 0; i < q->n_calls; i++)
                sd_bus_message_unref(q->calls[i].call);
        free(q->sender);
        free(q);
}

void listener_access_stop(Listener *l) {
        listener_polkit_stop();
        while (creds_queries) {
                CredsQuery *q = creds_queries;
                creds_query_unlink(q);
                creds_query_free(q);
        }
}

static int on_creds(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        CredsQuery *q = userdata;
        bool allowed = false;
        uid_t uid = (uid_t) -1;
        pid_t pid = 0;
        int r;

        /* Out of the list before any call is handled again: a new call
         * from this sender finds the verdict, not this query. */
        creds_query_unlink(q);
        if (sd_bus_message_is_method_error(reply, NULL))
                r = -sd_bus_message_get_errno(reply) ?: -EIO;
        else
                r = creds_allowed(reply, access_gid, &allowed, &uid, &pid);
        if (r < 0)
                log_warning_errno(r, "Cannot get the bus's credentials of %s: %m", q->sender);
        else
                remember(q->sender, allowed, uid, pid);
        for (unsigned i = 0; i < q->n_calls; i++) {
                HeldCall *c = &q->calls[i];
                sd_bus_error error = SD_BUS_ERROR_NULL;
                int k = r;

                /* Handled afresh, from its first argument: the verdict is known now. */
                if (k >= 0)
                        k = sd_bus_message_rewind(c->call, true);
                if (k >= 0)
                        k = c->method(c->call, c->userdata, &error);
                if (k < 0 || sd_bus_error_is_set(&error))
                        (void) sd_bus_reply_method_errno(c->call, k < 0 ? k : -EACCES, &error);
                sd_bus_error_free(&error);
        }
        creds_query_free(q);
        return 0;
}

static int creds_query_hold(CredsQuery *q, sd_bus_message *msg, sd_bus_message_handler_t method, void *userdata,
                            sd_bus_error *error) {
        if (q->n_calls >= CREDS_CALLS_PER_SENDER_MAX)
                return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
                                         "Too many calls from %s wait for its credentials from the bus.", q->sender);
        q->calls[q->n_calls++] = (HeldCall) { .call = sd_bus_message_ref(msg), .method = method, .userdata = userdata };
        return 1;
}

/* Asks the bus for the credentials of msg's sender without waiting, once
 * for each sender; msg is handled again by method when they come. Returns
 * 1 (the call is taken), or the error to answer with. */
static int creds_query_start(sd_bus_message *msg, sd_bus_message_handler_t method, void *userdata,
                             sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *ask = NULL;
        const char *sender = sd_bus_message_get_sender(msg);
        CredsQuery *q;
        int r;

        for (q = creds_queries; q; q = q->next)
                if (streq(q->sender, sender))
                        return creds_query_hold(q, msg, method, userdata, error);
        if (n_creds_queries >= CREDS_SENDERS_MAX)
                return sd_bus_error_set(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
                                        "Too many callers wait for their credentials from the bus.");
        q = calloc(1, sizeof(CredsQuery));
        if (!q || !(q->sender = strdup(sender))) {
                free(q);
                return -ENOMEM;
        }
        r = sd_bus_message_new_method_call(sd_bus_message_get_bus(msg), &ask, "org.freedesktop.DBus",
                                           "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                           "GetConnectionCredentials");
        if (r >= 0)
                r = sd_bus_message_append(ask, "s", sender);
        if (r >= 0)
                r = sd_bus_call_async(sd_bus_message_get_bus(msg), &q->slot, ask, on_creds, q, CREDS_TIMEOUT_USEC);
        if (r < 0) {
                free(q->sender);
                free(q);
                return log_warning_errno(r, "Cannot ask the bus for the credentials of %s: %m", sender);
        }
        q->next = creds_queries;
        creds_queries = q;
        n_creds_queries++;
        return creds_query_hold(q, msg, method, userdata, error);
}

/* Root, or a member of the configured Group=, may push and read the
 * statistics; for an action (polkit/org.standby.policy), polkit may let
 * others in (polkit.c). What is asked is named in the error. 0: allowed;
 * 1: the caller's credentials, or polkit's verdict, are being asked for,
 * and method is called again with msg once they come; < 0: refused (error
 * set). */
int listener_check_access(Listener *l, sd_bus_message *msg, const char *action, const char *what,
                          sd_bus_message_handler_t method, sd_bus_error *error) {
        const char *sender = sd_bus_message_get_sender(msg);
        const char *group = l->m.config->group;
        char refusal[256];

        if (action && listener_polkit_granted(msg, action))
                return 0;
        snprintf(refusal, sizeof(refusal), "Only root%s%s%s%s%s may %s standby-listener.", group ? ", members of \"" : "",
                 group ?: "", group ? "\"" : "", action ? " or whom polkit authorizes for " : "", action ?: "", what);
        if (!sender)
                goto deny; /* a direct connection, not through the bus: nobody to judge */
        for (unsigned i = 0; i < VERDICTS; i++)
                if (verdicts[i].sender && streq(verdicts[i].sender, sender)) {
                        if (verdicts[i].allowed)
                                return 0;
                        if (action)
                                return listener_polkit_check(msg, action, refusal, method, l, error);
                        goto deny;
                }
        return creds_query_start(msg, method, l, error);
deny:
        return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED, "%s", refusal);
}

bool listener_sender_uid(const char *sender, uid_t *ret_uid) {
        for (unsigned i = 0; i < VERDICTS; i++)
                if (verdicts[i].sender && streq(verdicts[i].sender, sender)) {
                        *ret_uid = verdicts[i].uid;
                        return true;
                }
        return false;
}

int listener_caller(Listener *l, sd_bus_message *msg, sd_bus_message_handler_t method, uid_t *ret_uid,
                    pid_t *ret_pid, bool *ret_privileged, sd_bus_error *error) {
        const char *sender = sd_bus_message_get_sender(msg);

        if (!sender)
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "Cannot tell who is calling.");
        for (unsigned i = 0; i < VERDICTS; i++)
                if (verdicts[i].sender && streq(verdicts[i].sender, sender)) {
                        *ret_uid = verdicts[i].uid;
                        *ret_pid = verdicts[i].pid;
                        *ret_privileged = verdicts[i].allowed;
                        return 0;
                }
        return creds_query_start(msg, method, l, error);
}

void listener_access_setup(Listener *l) {
        const char *group = l->m.config->group;

        if (!group)
                return;
        errno = 0;
        struct group *g = getgrnam(group);
        if (g)
                access_gid = g->gr_gid;
        else
                log_warning("Group=%s in %s: no such group (%s); only root may push, thaw or read the "
                            "statistics.", group, l->m.config_path ?: "the configuration",
                            errno > 0 ? strerror(errno) : "not found");
}

/* Whether cgroup is uid's own: at or below the user manager systemd starts
 * for uid (user-UID.slice/user@UID.service, the first user manager on the
 * path), and its directory uid's, as the manager's delegated tree is. A
 * cgroup another user made to look like one of uid's (user@UID.service
 * below her own tree, or below a service delegated to her) is not. */
static bool cgroup_is_users(int root_fd, const char *cgroup, uid_t uid) {
        char slice[32], manager[40];
        const char *parent = NULL, *p = cgroup;
        bool below = false;
        struct stat st;

        snprintf(slice, sizeof(slice), "user-%u.slice", (unsigned) uid);
        snprintf(manager, sizeof(manager), "user@%u.service", (unsigned) uid);
        while (*p == '/')
                p++;
        for (const char *c = p; *c;) {
                size_t n = strcspn(c, "/");
                /* A path that is not canonical names nothing standby froze. */
                if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
                        return false;
                if (!below && n > strlen("user@.service") && strneq(c, "user@", 5) &&
                    strneq(c + n - strlen(".service"), ".service", strlen(".service"))) {
                        if (n != strlen(manager) || !strneq(c, manager, n) || !parent ||
                            !strneq(parent, slice, strlen(slice)) || parent[strlen(slice)] != '/')
                                return false;
                        below = true;
                }
                parent = c;
                c += n;
                while (*c == '/')
                        c++;
        }
        return below && fstatat(root_fd, p, &st, AT_SYMLINK_NOFOLLOW) >= 0 && S_ISDIR(st.st_mode) && st.st_uid == uid;
}

const char *listener_thaw_action(Listener *l, uid_t uid, char **cgroups) {
        if (!cgroups || !*cgroups)
                return LISTENER_ACTION_THAW;
        for (char **c = cgroups; *c; c++)
                if (!cgroup_is_users(l->m.root_fd, *c, uid))
                        return LISTENER_ACTION_THAW;
        return LISTENER_ACTION_THAW_OWN;
}
