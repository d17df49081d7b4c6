/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ExitStandby=: standby ended by `standby-manager exit`, run as a program.
 *
 * An exit thaws every unit and waits for each (up to FreezeTimeout), puts
 * back every slacked thread's slack and re-arms nanosleepers through
 * ptrace, and goes through systemd where systemd froze a unit; run in the
 * loop, it would leave the listener deaf for as long. So standby-manager
 * does it (run-manager.c: none of the listener's descriptors, its own
 * journal lock), and its end is a loop event.
 *
 * While it runs, events are still answered, and what they ask for is
 * already under way: a thaw is the exit's own (every unit thaws), another
 * ExitStandby= joins the running exit, windows that end are not refrozen
 * (their units are the exit's), and the thaws not yet recorded are
 * dropped (the exit removes the units from the journal). If the exit
 * fails, the journal says so (phase exiting), as after standby-manager
 * exit, and the listener follows the journal again.
 *
 * Where systemd is PID 1 and the listener is on the system bus, the exit
 * is asked of systemd instead: standby-leave.service runs it, then stops
 * standby.target, so that the target, status and the journal agree after an
 * ExitStandby= rule as after any other exit; and the exit runs with what it
 * needs and the listener's unit withholds (ptrace for the slack strategy's
 * nanosleep re-arm, CAP_SYS_NICE for other processes' timer slack). The
 * StartUnit call is not waited for; until the exit has begun (the journal
 * leaves phase active) events change nothing, and another ExitStandby=
 * asks again (systemd joins it to the job under way). If systemd does not
 * start the unit, the exit runs here. */
#include <sys/wait.h>
#include <systemd/sd-daemon.h>

#include "listener.h"
#include "log.h"
#include "strv.h"

void listener_forget_exit(Listener *l) {
        l->exit_run = listener_manager_run_abandon(l->exit_run);
        /* Ended with the journal still active (it failed before touching
         * it): events act again, and another ExitStandby= tries again. */
        if (l->phase == LISTENER_PHASE_EXITING)
                listener_set_phase(l, LISTENER_PHASE_ACTIVE, "the exit ended, the journal still active");
}

static void on_exit_done(Listener *l, pid_t pid, int status, void *userdata) {
        l->exit_run = NULL; /* freed by its runner */
        if (!WIFEXITED(status) || (WEXITSTATUS(status) != EXIT_OK && WEXITSTATUS(status) != EXIT_NOT_ACTIVE))
                log_error("Ending standby failed (standby-manager exit, pid %d, wait status 0x%x); the journal says "
                          "what is left.", (int) pid, (unsigned) status);
        else
                log_info("Standby ended.");
        listener_forget_exit(l);
}

/* The exit run here, by standby-manager. */
static void exit_here(Listener *l, const char *why) {
        char *args[] = { (char *) "exit", NULL };

        if (listener_manager_run(l, args, on_exit_done, NULL, &l->exit_run) < 0) {
                /* Not started, or started unwatched (logged): the journal
                 * tells when standby is left. */
                if (l->phase == LISTENER_PHASE_LEAVE_ASKED)
                        listener_set_phase(l, LISTENER_PHASE_ACTIVE, "the exit did not start here");
                return;
        }
        listener_set_phase(l, LISTENER_PHASE_EXITING, why);
}

static int on_leave_started(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Listener *l = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);

        if (!e) {
                log_debug("standby-leave.service started.");
                return 0;
        }
        log_warning("systemd did not start standby-leave.service (%s: %s): ending standby here.", e->name,
                    e->message ?: "no message");
        if (l->phase == LISTENER_PHASE_LEAVE_ASKED)
                exit_here(l, "standby-leave.service not started");
        return 0;
}

static int leave_through_systemd(Listener *l) {
        int r;

        if (l->bus_address || sd_booted() <= 0 || !l->bus)
                return -EOPNOTSUPP;
        r = sd_bus_call_method_async(l->bus, NULL, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                     "org.freedesktop.systemd1.Manager", "StartUnit", on_leave_started, l, "ss",
                                     "standby-leave.service", "replace");
        if (r < 0)
                return log_warning_errno(r, "Cannot ask systemd to start standby-leave.service: %m");
        listener_set_phase(l, LISTENER_PHASE_LEAVE_ASKED, "standby-leave.service asked of systemd");
        return 0;
}

void listener_exit_standby(Listener *l, const char *why) {
        /* Asked of systemd again: a start joins the job under way, and
         * starts the unit anew if it ended without touching the journal. */
        if (l->phase == LISTENER_PHASE_LEAVE_ASKED) {
                (void) leave_through_systemd(l);
                return;
        }
        if (listener_exiting(l))
                return; /* one exit at a time: this event joins it */
        l->stats.exits++;
        log_info("Ending standby (%s).", why);
        /* Told as LastLeave (logind.c) once standby is left. */
        if (free_and_strdup(&l->leave_why, why) < 0)
                log_warning("Out of memory: this leave's reason is not told.");
        if (leave_through_systemd(l) < 0)
                exit_here(l, why);
        /* Everything in flight is the exit's now. */
        listener_maintenance_stop(l);
        listener_drop_windows(l);
        listener_drop_refreezes(l);
        listener_drop_records(l);
}
