/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The systemd backend. systemd expects to be the only writer of the cgroups of
 * the units it manages, and systemd 252 does not notice a cgroup.freeze
 * written behind its back (its FreezerState stays "running"). So a unit that
 * a reachable systemd manages is frozen and thawed through that manager's
 * FreezeUnit/ThawUnit; a unit is never frozen one way and thawed the other:
 * the journal records which manager froze it.
 *
 * A user manager's socket is its user's, and whoever answers there chooses
 * how long each answer takes. So no call waits on its own: calls are sent
 * without waiting (SystemdCall), to every manager at once, and one deadline
 * bounds all of a wait's calls, whatever their number and whichever
 * managers they go to (systemd_calls_wait()). */
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "log.h"
#include "manager.h"
#include "private-socket.h"
#include "sdbus-dl.h"
#include "strv.h"
#include "unit-name.h"

/* sd-bus's own bound for a call, behind the caller's deadline, which comes
 * first and cancels it. */
#define SYSTEMD_CALL_BACKSTOP_USEC (120 * USEC_PER_SEC)

/* The form of every address standby records: unix:path= and an absolute path
 * of plain characters. No other sd-bus syntax reaches sd-bus (no "unixexec:",
 * which runs a command as root; no "tcp:"; no second key or address after a
 * "," or ";"; no %-escapes), whatever a journal says. */
static bool address_is_plain_unix_path(const char *address) {
        const char *p;

        if (!strneq(address, "unix:path=/", strlen("unix:path=/")))
                return false;
        p = address + strlen("unix:path=");
        if (strlen(p) >= sizeof(((struct sockaddr_un *) NULL)->sun_path))
                return false;
        for (; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                      strchr("/._-", *p)))
                        return false;
        return true;
}

/* One connection per manager address, kept for the run. A manager that did
 * not answer in time (stopped: its user may SIGSTOP his own; or slow on
 * purpose) is not asked again in this run (error), so that it costs one
 * deadline, not one per unit. A FreezeUnit unanswered does not count:
 * systemd answers it only once the unit is frozen, and one task in D state
 * keeps that from ever happening while the manager answers everything else.
 * The connect is not waited for either: a user's socket is reached by a
 * child (private_socket_connect_start()), whose answer the wait polls with
 * the calls; the authentication runs in sd-bus, calls queued behind it. */
typedef struct Link {
        char *address;
        sd_bus *bus;
        pid_t connect_pid; /* the child connecting to a user's socket, or 0 */
        int connect_fd;    /* its answer, once readable */
        int error;         /* < 0: not asked again in this run */
} Link;
static Link links[64]; /* managers asked in one run: the system's and one per user */

/* Closes what the link holds, keeping its address and error. */
static void link_close(Link *l) {
        const SdBus *b = sdbus_get(NULL);

        if (l->connect_pid > 0)
                private_socket_connect_abort(l->connect_fd, l->connect_pid);
        l->connect_pid = 0;
        l->connect_fd = -EBADF;
        /* Not flushed: a flush waits for the authentication, unbounded. */
        if (l->bus && b)
                b->close_unref_noflush(l->bus);
        l->bus = NULL;
}

/* A new bus on fd (a user's socket) or on the address (root's). */
static int link_start_bus(Link *l, int fd) {
        const SdBus *b = sdbus_get(NULL);
        int r;

        r = b->new_(&l->bus);
        if (r >= 0 && fd >= 0) {
                /* A direct connection to systemd: no Hello, as with set_address. */
                r = b->set_fd(l->bus, fd, fd);
                if (r < 0)
                        safe_close(fd);
                fd = -EBADF;
        } else if (r >= 0)
                r = b->set_address(l->bus, l->address);
        safe_close(fd);
        if (r >= 0)
                r = b->start(l->bus);
        if (r >= 0)
                r = b->set_method_call_timeout(l->bus, SYSTEMD_CALL_BACKSTOP_USEC);
        if (r < 0)
                link_close(l);
        return r;
}

/* Whether a connect's error stands for the run: a timeout, or a user's
 * socket refused (a link, a mount, not theirs). */
static bool link_error_stands(int r) {
        return r == -ETIMEDOUT || r == -ELOOP || r == -EXDEV || r == -EPERM;
}

/* The link to address, its connect started if it has none. */
static int link_get(const char *address, Link **ret) {
        size_t i;
        uid_t uid;
        int r = 0;

        if (!sdbus_get(&r))
                return r;
        for (i = 0; i < ELEMENTSOF(links) && links[i].address; i++)
                if (streq(links[i].address, address))
                        break;
        if (i == ELEMENTSOF(links))
                return -ENOSPC;
        Link *l = &links[i];
        if (!l->address) {
                if (!address_is_plain_unix_path(address))
                        return -EADDRNOTAVAIL;
                l->address = strdup(address);
                if (!l->address)
                        return -ENOMEM;
                l->connect_fd = -EBADF;
        }
        if (l->error < 0)
                return l->error;
        if (!l->bus && l->connect_pid <= 0) {
                /* /run/systemd/private and SystemdAddress= are root's: the
                 * plain connect by name. A user's runtime directory is theirs. */
                if (private_socket_address_uid(address, &uid) >= 0)
                        r = private_socket_connect_start(PRIVATE_SOCKET_RUNTIME_ROOT, uid, &l->connect_pid,
                                                         &l->connect_fd);
                else
                        r = link_start_bus(l, -EBADF);
                if (r < 0) {
                        if (link_error_stands(r))
                                l->error = r;
                        return r;
                }
        }
        *ret = l;
        return 0;
}

/* The manager did not answer in time: no more calls to it in this run. */
static void link_timed_out(Link *l) {
        link_close(l);
        l->error = -ETIMEDOUT;
}

/* Forgets the connection: its manager went away (systemctl daemon-reexec,
 * a user manager restarted); the next call connects again. */
static void link_drop(Link *l) {
        link_close(l);
}

/* Whether a reply's error says the connection is gone, not the manager's
 * answer (sd-bus names that "...DBus.Error.Disconnected" or, for the calls
 * pending when it closes, "...NoReply"; or a local errno "System.Error.E..."). */
static bool error_says_link_lost(const sd_bus_error *error) {
        return error && error->name &&
               (streq(error->name, "org.freedesktop.DBus.Error.Disconnected") ||
                strneq(error->name, "System.Error.", strlen("System.Error.")));
}

/* Which manager manages a cgroup: the user manager of user@UID.service for
 * what lies below it (but not its own init.scope), else the system manager. */
static int derive_address(const char *cgroup, char **ret) {
        const char *p = strstr(cgroup, "user@");
        unsigned uid;

        if (p && sscanf(p, "user@%u.service/", &uid) == 1 && strchr(p, '/') && !strstr(p, ".service/init.scope"))
                return asprintf(ret, "unix:path=/run/user/%u/systemd/private", uid) < 0 ? -ENOMEM : 0;
        return (*ret = strdup("unix:path=/run/systemd/private")) ? 0 : -ENOMEM;
}

const char *systemd_unit_interface(const char *cgroup) {
        const char *dot = strrchr(unit_name_of_cgroup(cgroup), '.');
        return dot && streq(dot, ".scope") ? "org.freedesktop.systemd1.Scope" : "org.freedesktop.systemd1.Service";
}

int systemd_manager_address(const Config *c, const char *cgroup, char **ret_address) {
        if (c->backend == BACKEND_CGROUPFS)
                return -ENOENT;
        const char *name = unit_name_of_cgroup(cgroup), *dot = strrchr(name, '.');
        if (!unit_name_is_valid(name) || !dot || (!streq(dot, ".service") && !streq(dot, ".scope")))
                return -ENOENT;
        if (c->systemd_address)
                return (*ret_address = strdup(c->systemd_address)) ? 0 : -ENOMEM;
        return derive_address(cgroup, ret_address);
}

/* No such unit, or not active: systemd's word, not the kernel's. A unit
 * stopped while frozen (its watchdog fired, RuntimeMaxSec= elapsed, killed)
 * is "inactive" to ThawUnit while its cgroup lives on, frozen: the caller
 * looks at the cgroup (unit_set_freeze()). */
static bool error_says_no_active_unit(const sd_bus_error *error) {
        return error && error->name && (strstr(error->name, "NoSuchUnit") || strstr(error->name, "UnitInactive"));
}

static const char *const method_name[_SYSTEMD_METHOD_MAX] = {
        [SYSTEMD_FREEZE_UNIT] = "FreezeUnit",
        [SYSTEMD_THAW_UNIT] = "ThawUnit",
        [SYSTEMD_GET_CONTROL_GROUP] = "ControlGroup",
        [SYSTEMD_GET_FREEZER_STATE] = "FreezerState",
};

struct SystemdCall {
        Link *link;
        SystemdMethod method;
        sd_bus_slot *slot;  /* once sent: its link may still be connecting before */
        char *cgroup;
        char *value;        /* a property's, once answered */
        int result;         /* 1 in flight, then 0 or negative */
};

static int call_answered(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        SystemdCall *c = userdata;
        const SdBus *b = sdbus_get(NULL);
        const sd_bus_error *error = b->message_get_error(reply);
        const char *s = NULL;

        (void) ret_error;
        if (c->result <= 0)
                return 1; /* given up on already */
        if (error_says_no_active_unit(error))
                c->result = -ESRCH;
        else if (error_says_link_lost(error))
                c->result = -ECONNRESET;
        else if (error) {
                int r = b->message_get_errno(reply);
                c->result = r > 0 ? -r : -EIO;
                if (c->method == SYSTEMD_FREEZE_UNIT || c->method == SYSTEMD_THAW_UNIT)
                        log_error_errno(c->result, "systemd %s %s: %s", method_name[c->method],
                                        unit_name_of_cgroup(c->cgroup), error->message ? error->message : "failed");
        } else if (c->method == SYSTEMD_FREEZE_UNIT || c->method == SYSTEMD_THAW_UNIT)
                c->result = 0;
        else if (b->enter_container(reply, 'v', "s") < 0 || b->read(reply, "s", &s) < 0 || !s)
                c->result = -EBADMSG;
        else
                c->result = (c->value = strdup(s)) ? 0 : -ENOMEM;
        return 1;
}

/* A unit's object path: its name escaped as sd-bus labels. */
static char *unit_object_path(const char *unit) {
        char *path = malloc(strlen("/org/freedesktop/systemd1/unit/") + strlen(unit) * 3 + 1);
        if (!path)
                return NULL;
        char *w = stpcpy(path, "/org/freedesktop/systemd1/unit/");
        for (const char *p = unit; *p; p++)
                if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9' && p != unit))
                        *w++ = *p;
                else
                        w += sprintf(w, "_%02x", (unsigned char) *p);
        *w = 0;
        return path;
}

/* Writes (or queues behind the authentication) the call on its link's bus. */
static int call_write(SystemdCall *c) {
        const SdBus *b = sdbus_get(NULL);
        const char *unit = unit_name_of_cgroup(c->cgroup);
        _cleanup_free_ char *path = NULL;

        if (c->method == SYSTEMD_FREEZE_UNIT || c->method == SYSTEMD_THAW_UNIT)
                return b->call_method_async(c->link->bus, &c->slot, "org.freedesktop.systemd1",
                                            "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager",
                                            method_name[c->method], call_answered, c, "s", unit);
        path = unit_object_path(unit);
        if (!path)
                return -ENOMEM;
        return b->call_method_async(c->link->bus, &c->slot, "org.freedesktop.systemd1", path,
                                    "org.freedesktop.DBus.Properties", "Get", call_answered, c, "ss",
                                    c->method == SYSTEMD_GET_CONTROL_GROUP ? systemd_unit_interface(c->cgroup)
                                                                           : "org.freedesktop.systemd1.Unit",
                                    method_name[c->method]);
}

SystemdCall *systemd_call_free(SystemdCall *c) {
        if (!c)
                return NULL;
        /* An answer that comes after this is dropped by sd-bus. */
        if (c->slot)
                sdbus_get(NULL)->slot_unref(c->slot);
        free(c->cgroup);
        free(c->value);
        free(c);
        return NULL;
}

int systemd_call_send(const char *address, const char *cgroup, SystemdMethod method, SystemdCall **ret) {
        SystemdCall *c;
        int r;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->method = method;
        c->result = 1;
        c->cgroup = strdup(cgroup);
        if (!c->cgroup) {
                free(c);
                return -ENOMEM;
        }
        /* A connection kept from before may have lost its manager: then once
         * more on a new one. */
        for (int attempt = 0; attempt < 2; attempt++) {
                r = link_get(address, &c->link);
                if (r < 0 || !c->link->bus)
                        break; /* written once connected (systemd_calls_wait()) */
                r = call_write(c);
                if (r >= 0 || (r != -ENOTCONN && r != -ECONNRESET && r != -EPIPE))
                        break;
                link_drop(c->link);
        }
        if (r < 0) {
                systemd_call_free(c);
                return r;
        }
        *ret = c;
        return 0;
}

int systemd_call_result(const SystemdCall *c) {
        return c->result;
}

const char *systemd_call_value(const SystemdCall *c) {
        return c->value;
}

static bool link_has_pending(const Link *l, SystemdCall **calls, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (calls[i] && calls[i]->link == l && calls[i]->result > 0)
                        return true;
        return false;
}

/* Ends every call of l still in flight with r. */
static void link_fail_calls(Link *l, SystemdCall **calls, size_t n, int r) {
        const SdBus *b = sdbus_get(NULL);

        for (size_t i = 0; i < n; i++)
                if (calls[i] && calls[i]->link == l && calls[i]->result > 0) {
                        calls[i]->result = r;
                        if (calls[i]->slot)
                                calls[i]->slot = b->slot_unref(calls[i]->slot);
                }
}

/* The connect child of l answered: the bus on its socket, and the calls
 * that waited for it written. */
static void link_connected(Link *l, SystemdCall **calls, size_t n) {
        int fd = -EBADF, r;

        r = private_socket_connect_finish(l->connect_fd, l->connect_pid, &fd);
        l->connect_pid = 0;
        l->connect_fd = -EBADF;
        if (r >= 0)
                r = link_start_bus(l, fd);
        for (size_t i = 0; r >= 0 && i < n; i++)
                if (calls[i] && calls[i]->link == l && calls[i]->result > 0 && !calls[i]->slot)
                        r = call_write(calls[i]);
        if (r >= 0)
                return;
        log_debug_errno(r, "Cannot reach the systemd manager at %s: %s", l->address, private_socket_strerror(r));
        link_fail_calls(l, calls, n, r);
        link_close(l);
        if (link_error_stands(r))
                l->error = r;
}

/* The deadline passed with calls of l in flight: they fail, and a manager
 * that still owes a thaw or an answer, or never even took the connection,
 * is not asked again in this run. */
static void link_expire(Link *l, SystemdCall **calls, size_t n) {
        const SdBus *b = sdbus_get(NULL);
        bool stands = l->connect_pid > 0 || !l->bus || b->is_ready(l->bus) <= 0;

        for (size_t i = 0; i < n; i++)
                if (calls[i] && calls[i]->link == l && calls[i]->result > 0 &&
                    calls[i]->method != SYSTEMD_FREEZE_UNIT)
                        stands = true;
        link_fail_calls(l, calls, n, -ETIMEDOUT);
        if (stands) {
                log_warning("The systemd manager at %s did not answer in time: not asked again.", l->address);
                link_timed_out(l);
        }
}

int systemd_calls_wait(SystemdCall **calls, size_t n, usec_t deadline) {
        const SdBus *b = sdbus_get(NULL);

        for (;;) {
                struct pollfd p[ELEMENTSOF(links)];
                Link *polled[ELEMENTSOF(links)];
                size_t np = 0;
                bool progress = false;
                /* Checked on every round, not only when nothing is left to
                 * process: a server that never stops sending must not keep
                 * the wait going past it. */
                bool expired = now_usec(CLOCK_MONOTONIC) >= deadline, any_expired = false;

                for (size_t i = 0; i < ELEMENTSOF(links) && links[i].address; i++) {
                        Link *l = &links[i];
                        int r = 0;

                        if (!link_has_pending(l, calls, n))
                                continue;
                        if (expired) {
                                link_expire(l, calls, n);
                                any_expired = true;
                                continue;
                        }
                        if (l->connect_pid > 0) {
                                p[np] = (struct pollfd) { .fd = l->connect_fd, .events = POLLIN };
                                polled[np++] = l;
                                continue;
                        }
                        if (!l->bus) {
                                link_fail_calls(l, calls, n, l->error < 0 ? l->error : -ENOTCONN);
                                continue;
                        }
                        /* Calls made while the link was connecting, in a
                         * wait before this one. */
                        for (size_t k = 0; r >= 0 && k < n; k++)
                                if (calls[k] && calls[k]->link == l && calls[k]->result > 0 && !calls[k]->slot)
                                        r = call_write(calls[k]);
                        if (r >= 0)
                                r = b->process(l->bus, NULL);
                        if (r > 0) {
                                progress = true;
                                continue;
                        }
                        if (r == 0) {
                                int fd = b->get_fd(l->bus), events = b->get_events(l->bus);
                                if (fd >= 0 && events >= 0) {
                                        p[np] = (struct pollfd) { .fd = fd, .events = (short) events };
                                        polled[np++] = l;
                                        continue;
                                }
                                r = fd < 0 ? fd : events;
                        }
                        /* The connection failed under its calls: each of
                         * them failed (and is left to the kernel's word). */
                        log_debug_errno(r, "The connection to the systemd manager at %s failed: %m", l->address);
                        link_fail_calls(l, calls, n, r);
                        link_drop(l);
                }
                if (any_expired)
                        return -ETIME;
                if (progress)
                        continue;
                if (np == 0)
                        return 0;
                if (poll(p, np, deadline_poll_timeout(deadline)) < 0 && errno != EINTR)
                        return -errno;
                for (size_t k = 0; k < np; k++)
                        if (polled[k]->connect_pid > 0 && p[k].revents != 0)
                                link_connected(polled[k], calls, n);
        }
}

/* One call, waited for at most timeout; once more on a new connection if
 * the one kept from before lost its manager. */
static int call_one(const char *address, const char *cgroup, SystemdMethod method, usec_t timeout,
                    SystemdCall **ret) {
        int r;

        for (int attempt = 0; attempt < 2; attempt++) {
                SystemdCall *c = NULL;
                r = systemd_call_send(address, cgroup, method, &c);
                if (r < 0)
                        return r;
                (void) systemd_calls_wait(&c, 1, now_usec(CLOCK_MONOTONIC) + timeout);
                r = c->result;
                if (attempt == 0 && (r == -ECONNRESET || r == -ENOTCONN || r == -EPIPE || r == -ECONNREFUSED)) {
                        systemd_call_free(c);
                        continue;
                }
                *ret = c;
                return 0;
        }
        return r;
}

static int log_link_error(int r, const char *cgroup, const char *address) {
        if (r == -EADDRNOTAVAIL)
                return log_error_errno(r, "%s: refusing the systemd manager address \"%s\": not a "
                                       "unix:path= of plain characters.", cgroup, address);
        return log_error_errno(r, "Cannot reach the systemd manager at %s: %s", address, private_socket_strerror(r));
}

int systemd_set_freeze(const char *address, const char *cgroup, bool freeze) {
        SystemdCall *c = NULL;
        int r;

        /* systemd answers FreezeUnit once the unit is frozen, which may take
         * a while; a thaw is at once. */
        r = call_one(address, cgroup, freeze ? SYSTEMD_FREEZE_UNIT : SYSTEMD_THAW_UNIT,
                     freeze ? 30 * USEC_PER_SEC : SDBUS_CONNECT_TIMEOUT_USEC, &c);
        if (r < 0)
                return log_link_error(r, cgroup, address);
        r = c->result;
        systemd_call_free(c);
        return r;
}

int journal_add_units_with_backend(Manager *m, char **cgroups, UnitState state) {
        size_t n = strv_length(cgroups);
        _cleanup_free_ SystemdCall **calls = calloc(n + 1, sizeof(SystemdCall *));
        _cleanup_free_ char **addresses = calloc(n + 1, sizeof(char *)); /* with holes: freed one by one */
        int r = 0;

        if (!calls || !addresses)
                return -ENOMEM;
        /* Every question at once: which manager's unit is each cgroup, and
         * is that manager there? One deadline bounds the answers. */
        for (size_t i = 0; i < n; i++) {
                struct stat st;
                uid_t uid;

                if (systemd_manager_address(m->config, cgroups[i], &addresses[i]) < 0)
                        continue;
                /* Reachable? The socket of root's manager must be there (auto
                 * quietly falls back). A user's is not looked up by name (its
                 * path is theirs): the connect tells. */
                if ((private_socket_address_uid(addresses[i], &uid) >= 0 ||
                     (strneq(addresses[i], "unix:path=", 10) && stat(addresses[i] + 10, &st) >= 0)) &&
                    systemd_call_send(addresses[i], cgroups[i], SYSTEMD_GET_CONTROL_GROUP, &calls[i]) >= 0)
                        continue;
                if (m->config->backend == BACKEND_SYSTEMD) {
                        r = log_error_errno(-ENOTCONN, "%s: Backend=systemd, but no systemd manager takes it: %m",
                                            cgroups[i]);
                        goto finish;
                }
                addresses[i] = mfree(addresses[i]);
        }
        (void) systemd_calls_wait(calls, n, now_usec(CLOCK_MONOTONIC) + SDBUS_CONNECT_TIMEOUT_USEC);
        for (size_t i = 0; i < n; i++) {
                /* And it must be that manager's unit, in this very cgroup. */
                const char *cg = calls[i] && calls[i]->result == 0 ? calls[i]->value : NULL;
                if (addresses[i] && (!cg || cg[0] != '/' || !streq(cg + 1, cgroups[i]))) {
                        if (m->config->backend == BACKEND_SYSTEMD) {
                                r = log_error_errno(-ENXIO, "%s: Backend=systemd, but no systemd manager takes it: %m",
                                                    cgroups[i]);
                                goto finish;
                        }
                        addresses[i] = mfree(addresses[i]);
                }
        }
        for (size_t i = 0; i < n; i++) {
                r = journal_add_unit(m->journal, cgroups[i], state, NULL);
                if (r < 0)
                        goto finish;
                m->journal->units[m->journal->n_units - 1].systemd = TAKE_PTR(addresses[i]);
        }
finish:
        for (size_t i = 0; i < n; i++) {
                systemd_call_free(calls[i]);
                free(addresses[i]);
        }
        return r;
}

int systemd_address_check(const Config *c, const char *address) {
        if (c && c->systemd_address && streq(address, c->systemd_address))
                return 0;
        if (streq(address, "unix:path=/run/systemd/private"))
                return 0;
        /* The user form: a UID in decimal, rebuilt and compared whole, so
         * that nothing but the UID comes from the journal. */
        uid_t uid;
        if (private_socket_address_uid(address, &uid) < 0)
                return -EPERM;
        /* The user must have a runtime directory of their own (logind makes
         * it, owned by them): a directory of no one, or someone else's, is
         * nobody's manager. Not a user database lookup (LDAP, sssd), and no
         * stat that a FUSE mount of the user's could make wait: the listener
         * checks every journal it loads from its event loop. */
        _cleanup_close_ int fd = -EBADF;
        int r = private_socket_runtime_dir(PRIVATE_SOCKET_RUNTIME_ROOT, uid, &fd);
        if (r == -ENOENT || r == -ELOOP || r == -EXDEV || r == -EPERM)
                return -EPERM;
        return r < 0 ? r : 0;
}

void systemd_journal_check_addresses(Manager *m) {
        if (!m->journal)
                return;
        for (size_t i = 0; i < m->journal->n_units; i++) {
                JournalUnit *u = &m->journal->units[i];
                int r;

                if (!u->systemd)
                        continue;
                r = systemd_address_check(m->config, u->systemd);
                if (r >= 0)
                        continue;
                log_error("%s/" JOURNAL_FILE ": %s: refusing the recorded systemd manager address \"%s\" (%s); "
                          "its cgroup is frozen and thawed through cgroup.freeze instead.",
                          m->state_dir, u->cgroup, u->systemd,
                          r == -EPERM ? "not a form standby writes, or of no user" : strerror(-r));
                u->systemd = mfree(u->systemd);
        }
}
