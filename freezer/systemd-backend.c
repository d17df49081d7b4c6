/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The systemd backend. systemd expects to be the only writer of the cgroups of
 * the units it manages, and systemd 252 does not notice a cgroup.freeze
 * written behind its back (its FreezerState stays "running"). So a unit that
 * a reachable systemd manages is frozen and thawed through that manager's
 * FreezeUnit/ThawUnit; a unit is never frozen one way and thawed the other:
 * the journal records which manager froze it. */
#include <sys/stat.h>
#include <sys/un.h>

#include "log.h"
#include "manager.h"
#include "private-socket.h"
#include "sdbus-dl.h"
#include "strv.h"
#include "unit-name.h"

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

/* One connection per manager address, kept for the run; a manager that
 * did not answer in time (stopped: its user may SIGSTOP his own) is not
 * asked again in this run (error), so that it costs one timeout, not one
 * per unit. A FreezeUnit unanswered does not count: systemd answers it only
 * once the unit is frozen, and one task in D state keeps that from ever
 * happening while the manager answers everything else. */
static struct {
        char *address;
        sd_bus *bus;
        int error;
} links[8];

static int link_get(const char *address, sd_bus **ret) {
        size_t i;
        int r;

        for (i = 0; i < ELEMENTSOF(links) && links[i].address; i++)
                if (streq(links[i].address, address)) {
                        if (links[i].error < 0)
                                return links[i].error;
                        *ret = links[i].bus;
                        return 0;
                }
        if (i == ELEMENTSOF(links))
                return -ENOSPC;
        if (!address_is_plain_unix_path(address))
                return -EADDRNOTAVAIL;
        r = sdbus_connect_direct(address, &links[i].bus);
        /* A timeout, or a user's socket refused (a link, a mount, not
         * theirs), stands for the run. */
        if (r < 0 && r != -ETIMEDOUT && r != -ELOOP && r != -EXDEV && r != -EPERM)
                return r;
        links[i].address = strdup(address);
        if (!links[i].address)
                return -ENOMEM;
        links[i].error = r < 0 ? r : 0;
        if (r < 0)
                return r;
        *ret = links[i].bus;
        return 0;
}

/* The manager at address did not answer in time: no more calls to it in
 * this run. */
static void link_timed_out(const char *address) {
        int r = 0;
        const SdBus *b = sdbus_get(&r);

        for (size_t i = 0; i < ELEMENTSOF(links) && links[i].address; i++)
                if (streq(links[i].address, address) && links[i].error == 0) {
                        if (b)
                                b->close_unref_noflush(links[i].bus);
                        links[i].bus = NULL;
                        links[i].error = -ETIMEDOUT;
                }
}

/* Forgets the connection to address: its manager went away (systemctl
 * daemon-reexec, a user manager restarted), and a long-lived process (the
 * listener) must not keep failing on it. */
static void link_drop(const char *address) {
        size_t i, n;
        int r = 0;
        const SdBus *b = sdbus_get(&r);

        for (n = 0; n < ELEMENTSOF(links) && links[n].address; n++)
                ;
        for (i = 0; i < n; i++)
                if (streq(links[i].address, address))
                        break;
        if (i == n)
                return;
        if (b)
                b->close_unref(links[i].bus);
        free(links[i].address);
        links[i] = links[n - 1];
        links[n - 1].address = NULL;
        links[n - 1].bus = NULL;
}

/* Whether a call failed because the connection is gone, not by the
 * manager's answer (sd-bus names that "...DBus.Error.Disconnected", or a
 * local errno "System.Error.E..."). */
static bool link_lost(int r, const sd_bus_error *error) {
        if (error && error->name && !streq(error->name, "org.freedesktop.DBus.Error.Disconnected") &&
            !strneq(error->name, "System.Error.", strlen("System.Error.")))
                return false;
        return r == -ENOTCONN || r == -ECONNRESET || r == -EPIPE || r == -ESHUTDOWN || r == -ECONNREFUSED;
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

/* A unit's string property, by its object path (the name escaped as sd-bus labels). */
static int unit_property(const char *address, const char *cgroup, const char *interface, const char *property, char **ret) {
        _cleanup_free_ char *path = NULL;
        const char *unit = unit_name_of_cgroup(cgroup);
        int r = 0;
        const SdBus *b = sdbus_get(&r);
        sd_bus *bus;

        if (!b)
                return r;
        r = link_get(address, &bus);
        if (r < 0)
                return r;
        path = malloc(strlen("/org/freedesktop/systemd1/unit/") + strlen(unit) * 3 + 1);
        if (!path)
                return -ENOMEM;
        char *w = stpcpy(path, "/org/freedesktop/systemd1/unit/");
        for (const char *p = unit; *p; p++)
                if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9' && p != unit))
                        *w++ = *p;
                else
                        w += sprintf(w, "_%02x", (unsigned char) *p);
        *w = 0;
        r = b->get_property_string(bus, "org.freedesktop.systemd1", path, interface, property, NULL, ret);
        if (r == -ETIMEDOUT)
                link_timed_out(address);
        if (!link_lost(r, NULL))
                return r;
        link_drop(address);
        r = link_get(address, &bus);
        if (r < 0)
                return r;
        return b->get_property_string(bus, "org.freedesktop.systemd1", path, interface, property, NULL, ret);
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

int systemd_backend_for(Manager *m, const char *cgroup, char ***unreachable, char **ret_address) {
        _cleanup_free_ char *address = NULL;
        struct stat st;
        int r;

        /* Only services and scopes: systemd has a freezer for no other unit
         * type (a socket unit's cgroup, say), so cgroupfs contradicts nobody there. */
        r = systemd_manager_address(m->config, cgroup, &address);
        if (r < 0)
                return r;
        /* Reachable? The socket must be there (auto quietly falls back).
         * A user's is not looked up by name (its path is theirs): the
         * connect tells (private_socket_connect()). */
        uid_t uid;
        sd_bus *bus;
        if (strneq(address, "unix:path=", 10) &&
            ((unreachable && strv_contains(*unreachable, address)) ||
             (private_socket_address_uid(address, &uid) >= 0 ? link_get(address, &bus) < 0
                                                              : stat(address + 10, &st) < 0))) {
                if (unreachable && !strv_contains(*unreachable, address))
                        (void) strv_extend(unreachable, address);
                return m->config->backend == BACKEND_SYSTEMD ? -ENOTCONN : -ENOENT;
        }
        /* And it must be that manager's unit, in this very cgroup. */
        _cleanup_free_ char *cg = NULL;
        r = unit_property(address, cgroup, systemd_unit_interface(cgroup), "ControlGroup", &cg);
        if (r < 0 || !cg || cg[0] != '/' || !streq(cg + 1, cgroup))
                return m->config->backend == BACKEND_SYSTEMD ? -ENXIO : -ENOENT;
        *ret_address = TAKE_PTR(address);
        return 0;
}

/* No such unit, or not active: systemd's word, not the kernel's. A unit
 * stopped while frozen (its watchdog fired, RuntimeMaxSec= elapsed, killed)
 * is "inactive" to ThawUnit while its cgroup lives on, frozen: the caller
 * looks at the cgroup (unit_set_freeze()). */
static bool error_says_no_active_unit(const sd_bus_error *error) {
        return error && error->name && (strstr(error->name, "NoSuchUnit") || strstr(error->name, "UnitInactive"));
}

static int log_link_error(int r, const char *cgroup, const char *address) {
        if (r == -EADDRNOTAVAIL)
                return log_error_errno(r, "%s: refusing the systemd manager address \"%s\": not a "
                                       "unix:path= of plain characters.", cgroup, address);
        return log_error_errno(r, "Cannot reach the systemd manager at %s: %s", address, private_socket_strerror(r));
}

int systemd_set_freeze(const char *address, const char *cgroup, bool freeze) {
        int r = 0;
        const SdBus *b = sdbus_get(&r);
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus *bus;

        if (!b)
                return r;
        /* A connection kept from before may have lost its manager: then once
         * more on a new one. */
        for (int attempt = 0; attempt < 2; attempt++) {
                r = link_get(address, &bus);
                if (r < 0)
                        return log_link_error(r, cgroup, address);
                b->error_free(&error);
                /* systemd answers FreezeUnit once the unit is frozen, which
                 * may take a while; a thaw is at once. */
                (void) b->set_method_call_timeout(bus, freeze ? 30 * USEC_PER_SEC : SDBUS_CONNECT_TIMEOUT_USEC);
                r = b->call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                   "org.freedesktop.systemd1.Manager", freeze ? "FreezeUnit" : "ThawUnit", &error,
                                   NULL, "s", unit_name_of_cgroup(cgroup));
                (void) b->set_method_call_timeout(bus, SDBUS_CONNECT_TIMEOUT_USEC);
                /* A FreezeUnit unanswered is a unit that does not freeze (a
                 * task in D state), not a manager gone. */
                if (r == -ETIMEDOUT && !freeze)
                        link_timed_out(address);
                if (r >= 0 || !link_lost(r, &error))
                        break;
                link_drop(address);
        }
        if (r < 0 && error_says_no_active_unit(&error))
                r = -ESRCH;
        else if (r < 0)
                log_error_errno(r, "systemd %s %s: %s", freeze ? "FreezeUnit" : "ThawUnit",
                                unit_name_of_cgroup(cgroup), error.message ? error.message : "failed");
        b->error_free(&error);
        return r;
}

struct SystemdFreeze {
        sd_bus *bus;        /* the link's; the slot keeps it referenced */
        sd_bus_slot *slot;
        char *unit;
        int result;         /* 1 in flight, then 0 (frozen) or negative */
};

static int freeze_answered(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        SystemdFreeze *c = userdata;
        const SdBus *b = sdbus_get(NULL);
        const sd_bus_error *error = b->message_get_error(reply);

        (void) ret_error;
        if (!error)
                c->result = 0;
        else if (error_says_no_active_unit(error))
                c->result = -ESRCH;
        else {
                int r = b->message_get_errno(reply);
                c->result = r > 0 ? -r : -EIO;
                log_error_errno(c->result, "systemd FreezeUnit %s: %s", c->unit,
                                error->message ? error->message : "failed");
        }
        return 1;
}

SystemdFreeze *systemd_freeze_free(SystemdFreeze *c) {
        if (!c)
                return NULL;
        /* An answer that comes after this is dropped by sd-bus. */
        if (c->slot)
                sdbus_get(NULL)->slot_unref(c->slot);
        free(c->unit);
        free(c);
        return NULL;
}

int systemd_freeze_send(const char *address, const char *cgroup, usec_t timeout, SystemdFreeze **ret) {
        _cleanup_free_ SystemdFreeze *c = NULL;
        int r = 0;
        const SdBus *b = sdbus_get(&r);

        if (!b)
                return r;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->unit = strdup(unit_name_of_cgroup(cgroup));
        if (!c->unit)
                return -ENOMEM;
        c->result = 1;
        for (int attempt = 0; attempt < 2; attempt++) {
                r = link_get(address, &c->bus);
                if (r < 0) {
                        r = log_link_error(r, cgroup, address);
                        break;
                }
                /* The caller's deadline cancels it first; sd-bus's own
                 * bound only backs that up. */
                (void) b->set_method_call_timeout(c->bus, timeout + SDBUS_CONNECT_TIMEOUT_USEC);
                r = b->call_method_async(c->bus, &c->slot, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                         "org.freedesktop.systemd1.Manager", "FreezeUnit", freeze_answered, c, "s",
                                         c->unit);
                (void) b->set_method_call_timeout(c->bus, SDBUS_CONNECT_TIMEOUT_USEC);
                /* A connection kept from before may have lost its manager. */
                if (r >= 0 || !link_lost(r, NULL))
                        break;
                link_drop(address);
        }
        if (r < 0) {
                free(c->unit);
                return r;
        }
        *ret = TAKE_PTR(c);
        return 0;
}

int systemd_freeze_result(const SystemdFreeze *c) {
        return c->result;
}

int systemd_freeze_wait(SystemdFreeze **calls, size_t n, usec_t deadline) {
        const SdBus *b = sdbus_get(NULL);

        for (;;) {
                sd_bus *bus = NULL;
                int r;

                for (size_t i = 0; i < n && !bus; i++)
                        if (calls[i] && calls[i]->result > 0)
                                bus = calls[i]->bus;
                if (!bus)
                        return 0;
                r = b->process(bus, NULL);
                if (r == 0) {
                        usec_t now = now_usec(CLOCK_MONOTONIC);
                        if (now >= deadline)
                                return -ETIME;
                        r = b->wait(bus, deadline - now);
                }
                if (r >= 0)
                        continue;
                /* The connection failed under its calls: each of them
                 * failed (and is left to the kernel's word, as a thaw is). */
                for (size_t i = 0; i < n; i++)
                        if (calls[i] && calls[i]->bus == bus && calls[i]->result > 0) {
                                calls[i]->result = r;
                                log_error_errno(r, "systemd FreezeUnit %s: %m", calls[i]->unit);
                        }
        }
}

int systemd_freezer_state(const char *address, const char *cgroup, char **ret) {
        return unit_property(address, cgroup, "org.freedesktop.systemd1.Unit", "FreezerState", ret);
}

int journal_add_unit_with_backend(Manager *m, const char *cgroup, UnitState state, char ***unreachable) {
        _cleanup_free_ char *address = NULL;
        int r = systemd_backend_for(m, cgroup, unreachable, &address);

        if (r < 0 && r != -ENOENT)
                return log_error_errno(r, "%s: Backend=systemd, but no systemd manager takes it: %m", cgroup);
        r = journal_add_unit(m->journal, cgroup, state, NULL);
        if (r < 0)
                return r;
        m->journal->units[m->journal->n_units - 1].systemd = TAKE_PTR(address);
        return 0;
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
