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
 * requires it), whose exit finds nothing to undo and exits 7. Each waits
 * for its job (bounded), so that when it returns the target agrees. */
#include <stdio.h>
#include <sys/stat.h>

#include "cgroup.h"
#include "log.h"
#include "manager.h"
#include "sdbus-dl.h"

#define SYSTEMD_PRIVATE_ADDRESS "unix:path=/run/systemd/private"
/* How long enter or exit waits for the target to follow: its enter or exit
 * has nothing to do (6, 7), but the start may pull in the listener. */
#define SYSTEMD_TARGET_WAIT_USEC (30 * USEC_PER_SEC)

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

/* The job standby queued, and what systemd said of it when it ended. */
typedef struct JobWait {
        const SdBus *b;
        const char *path;
        char result[32];
        bool done;
} JobWait;

static int on_job_removed(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        JobWait *w = userdata;
        const char *path = NULL, *unit = NULL, *result = NULL;
        uint32_t id;

        if (w->path && w->b->read(msg, "uoss", &id, &path, &unit, &result) >= 0 && streq(path, w->path)) {
                snprintf(w->result, sizeof(w->result), "%s", result);
                w->done = true;
        }
        return 0;
}

int systemd_target_follow(Manager *m, bool entered) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        const char *unit = entered ? "standby.target" : "standby-enter.service";
        JobWait w = {};
        sd_bus *bus = NULL;
        struct stat st;
        usec_t deadline;
        int r = 0;

        /* Only the system's standby (a test's own state directory or
         * configuration is not it), and only where systemd is PID 1 (as
         * sd_booted() tells). */
        if (!streq(m->state_dir, STANDBY_STATE_DIR) || !streq(m->config_path, STANDBY_CONFIG_PATH) ||
            lstat("/run/systemd/system", &st) < 0 || !S_ISDIR(st.st_mode) || run_by_our_units())
                return 0;
        w.b = sdbus_get(&r);
        if (!w.b)
                return log_debug_errno(r, "No libsystemd: %s left as it is.", unit);
        /* Subscribed before the job is queued, so that its end is not missed. */
        r = sdbus_connect_direct(SYSTEMD_PRIVATE_ADDRESS, &bus);
        if (r >= 0)
                r = w.b->match_signal(bus, NULL, NULL, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager",
                                      "JobRemoved", on_job_removed, &w);
        if (r >= 0) {
                (void) w.b->set_method_call_timeout(bus, 10 * USEC_PER_SEC);
                r = w.b->call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                     "org.freedesktop.systemd1.Manager", "Subscribe", &error, NULL, "");
        }
        if (r >= 0)
                r = w.b->call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                     "org.freedesktop.systemd1.Manager", entered ? "StartUnit" : "StopUnit", &error,
                                     &reply, "ss", unit, "replace");
        if (r >= 0)
                r = w.b->read(reply, "o", &w.path);
        /* Waited for, bounded: when this returns, systemctl is-active
         * standby.target says what the journal says. The unit's own enter or
         * exit takes the journal lock, released before. */
        deadline = now_usec(CLOCK_MONOTONIC) + SYSTEMD_TARGET_WAIT_USEC;
        while (r >= 0 && !w.done) {
                usec_t now = now_usec(CLOCK_MONOTONIC);
                int q = w.b->process(bus, NULL);
                if (q < 0)
                        r = q;
                else if (q == 0 && now >= deadline)
                        break;
                else if (q == 0)
                        (void) w.b->wait(bus, deadline - now);
        }
        if (r < 0 && error.message)
                log_warning("Standby %s, but systemd did not %s %s: %s; `systemctl %s %s` does it.",
                            entered ? "entered" : "left", entered ? "start" : "stop", unit, error.message,
                            entered ? "start" : "stop", unit);
        else if (r < 0)
                log_warning_errno(r, "Standby %s, but %s cannot be %s: systemd at %s: %m; `systemctl %s %s` does it.",
                                  entered ? "entered" : "left", unit, entered ? "started" : "stopped",
                                  SYSTEMD_PRIVATE_ADDRESS, entered ? "start" : "stop", unit);
        else if (!w.done)
                log_warning("Standby %s; the %s of %s is still under way after %llu s.", entered ? "entered" : "left",
                            entered ? "start" : "stop", unit,
                            (unsigned long long) (SYSTEMD_TARGET_WAIT_USEC / USEC_PER_SEC));
        else if (!streq(w.result, "done")) {
                log_warning("Standby %s, but the %s of %s ended \"%s\"; see `systemctl status %s`.",
                            entered ? "entered" : "left", entered ? "start" : "stop", unit, w.result, unit);
                r = -EIO;
        } else
                log_debug("%s %s through systemd: done.", entered ? "Started" : "Stopped", unit);
        if (reply)
                w.b->message_unref(reply);
        w.b->error_free(&error);
        if (bus)
                w.b->close_unref(bus);
        return r;
}
