/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* standby.target follows standby entered or left by hand.
 *
 * Where systemd is PID 1, standby.target is what the system says about
 * standby: `systemctl start standby.target` enters it (standby-enter.service
 * runs `standby-manager enter`), its stop leaves it. Standby entered or left
 * another way must move the target too, or the next start does nothing (the
 * target still active after an exit) or fails (status 6, entered already).
 * So `standby-manager enter` run by hand enters first (its callers exempt,
 * see select.c) and then starts the target, whose enter finds standby
 * entered and exits 6, which the unit counts as success; `exit` by hand
 * leaves, then stops standby-enter.service (and with it the target, which
 * requires it), whose exit finds nothing to undo and exits 7. Neither waits
 * for the job: the caller's standby is already what it asked for. */
#include <sys/stat.h>

#include "cgroup.h"
#include "log.h"
#include "manager.h"
#include "sdbus-dl.h"

#define SYSTEMD_PRIVATE_ADDRESS "unix:path=/run/systemd/private"

/* The units whose own enter or exit systemd runs: they are the target's
 * doing, and must not queue a job for it again. */
static bool run_by_our_units(void) {
        _cleanup_free_ char *cg = NULL;
        const char *base;

        if (cgroup_of_pid(getpid(), &cg) < 0)
                return false;
        base = strrchr(cg, '/');
        base = base ? base + 1 : cg;
        return streq(base, "standby-enter.service") || streq(base, "standby-leave.service");
}

int systemd_target_follow(Manager *m, bool entered) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        const char *unit = entered ? "standby.target" : "standby-enter.service";
        const SdBus *b;
        sd_bus *bus = NULL;
        struct stat st;
        int r = 0;

        /* Only the system's standby (a test's own state directory or
         * configuration is not it), and only where systemd is PID 1 (as
         * sd_booted() tells). */
        if (!streq(m->state_dir, STANDBY_STATE_DIR) || !streq(m->config_path, STANDBY_CONFIG_PATH) ||
            lstat("/run/systemd/system", &st) < 0 || !S_ISDIR(st.st_mode) || run_by_our_units())
                return 0;
        b = sdbus_get(&r);
        if (!b)
                return log_debug_errno(r, "No libsystemd: %s left as it is.", unit);
        r = sdbus_connect_direct(SYSTEMD_PRIVATE_ADDRESS, &bus);
        if (r >= 0) {
                (void) b->set_method_call_timeout(bus, 10 * USEC_PER_SEC);
                r = b->call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                   "org.freedesktop.systemd1.Manager", entered ? "StartUnit" : "StopUnit", &error,
                                   &reply, "ss", unit, "replace");
        }
        if (r < 0 && error.message)
                log_warning("Standby %s, but systemd did not %s %s: %s; `systemctl %s %s` does it.",
                            entered ? "entered" : "left", entered ? "start" : "stop", unit, error.message,
                            entered ? "start" : "stop", unit);
        else if (r < 0)
                log_warning_errno(r, "Standby %s, but %s cannot be %s: systemd at %s: %m; `systemctl %s %s` does it.",
                                  entered ? "entered" : "left", unit, entered ? "started" : "stopped",
                                  SYSTEMD_PRIVATE_ADDRESS, entered ? "start" : "stop", unit);
        else
                log_debug("%s %s through systemd.", entered ? "Starting" : "Stopping", unit);
        if (reply)
                b->message_unref(reply);
        b->error_free(&error);
        if (bus)
                b->close_unref(bus);
        return r;
}
