/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Enter and Exit over the bus: standby entered or left as the rest of the
 * listener does it, answered as soon as it is under way (as systemctl
 * --no-block); the State property and the Entered and Left signals
 * (bus-state.c) tell when it is done.
 *
 * Enter starts standby.target where logind is followed (systemd as PID 1,
 * the system bus; logind.c), so that the target, status and the journal
 * agree; Exit ends standby as an ExitStandby= rule does (exit-standby.c).
 * Elsewhere (a private bus), and for a journal left entering or exiting by
 * an engine that failed, the engine itself runs: standby-manager, run as a
 * program (run-manager.c: none of the listener's descriptors, a fixed
 * environment), its end a loop event, never waited for. */
#include <sys/wait.h>

#include "listener.h"
#include "log.h"
#include "strv.h"

/* One engine run at a time per verb: another Enter (or Exit) while one
 * runs joins it. */
typedef struct VerbRun {
        const char *verb;
        ManagerRun *run;
} VerbRun;

static VerbRun runs[] = { { .verb = "enter" }, { .verb = "exit" } };

void listener_forget_manager_runs(Listener *l) {
        /* Left to finish; init reaps them once the listener is gone. */
        for (size_t i = 0; i < ELEMENTSOF(runs); i++)
                runs[i].run = listener_manager_run_abandon(runs[i].run);
}

static void on_manager_done(Listener *l, pid_t pid, int status, void *userdata) {
        VerbRun *v = userdata;

        v->run = NULL; /* freed by its runner */
        if (WIFEXITED(status) && (WEXITSTATUS(status) == EXIT_OK || WEXITSTATUS(status) == EXIT_NOT_ACTIVE))
                log_info("standby-manager %s (process %d) is done.", v->verb, (int) pid);
        else
                log_error("standby-manager %s (process %d) failed (wait status 0x%x); the journal says what is left.",
                          v->verb, (int) pid, (unsigned) status);
        /* An entry it made was told already (its journal's change went
         * first); one it did not make is not an Enter's any more. */
        if (streq(v->verb, "enter"))
                listener_bus_state_asked(NULL);
}

/* Runs standby-manager VERB, its end watched. 0: it runs (or one for the
 * same verb ran already), or a negative errno (logged). */
static int run_manager(Listener *l, VerbRun *v) {
        char *args[] = { (char *) "--quiet", (char *) v->verb, NULL };
        int r;

        if (v->run)
                return 0;
        r = listener_manager_run(l, args, on_manager_done, v, &v->run);
        if (r < 0)
                return r;
        log_info("Running standby-manager %s (process %d).", v->verb, (int) listener_manager_run_pid(v->run));
        return 0;
}

static JournalPhase journal_phase(const Listener *l) {
        return l->m.journal ? l->m.journal->phase : JOURNAL_NONE;
}

/* Who asked, for the log and EnteredBy, Left. */
static void asked_by(sd_bus_message *msg, const char *verb, char *buf, size_t size) {
        const char *sender = sd_bus_message_get_sender(msg);
        uid_t uid;

        if (sender && listener_sender_uid(sender, &uid))
                snprintf(buf, size, "%s over the bus by uid %u", verb, (unsigned) uid);
        else
                snprintf(buf, size, "%s over the bus by %s", verb, strna(sender));
}

int listener_method_enter(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Listener *l = userdata;
        char why[128];
        int r;

        r = listener_check_access(l, msg, "org.standby.enter", "enter standby through", listener_method_enter, error);
        if (r != 0)
                return r;
        if (listener_exiting(l) || journal_phase(l) == JOURNAL_EXITING)
                return sd_bus_error_set(error, LISTENER_INTERFACE ".Busy",
                                        "Standby is being left; enter once it is (the State property tells).");
        if (journal_phase(l) != JOURNAL_NONE)
                return sd_bus_reply_method_return(msg, ""); /* entered, or being entered: nothing to add */
        asked_by(msg, "Enter", why, sizeof(why));
        r = listener_logind_enter(l, why);
        if (r == -EOPNOTSUPP) {
                log_info("Entering standby (%s).", why);
                r = run_manager(l, &runs[0]);
                if (r >= 0)
                        listener_bus_state_asked(why);
        }
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot enter standby: %m");
        return sd_bus_reply_method_return(msg, "");
}

int listener_method_exit(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Listener *l = userdata;
        char why[128];
        int r = 0;

        r = listener_check_access(l, msg, "org.standby.exit", "leave standby through", listener_method_exit, error);
        if (r != 0)
                return r;
        asked_by(msg, "Exit", why, sizeof(why));
        if (listener_standby_active(l))
                /* As an ExitStandby= rule: joins an exit under way. */
                listener_exit_standby(l, why);
        else if (journal_phase(l) != JOURNAL_NONE && !listener_exiting(l)) {
                /* Entering, or left exiting by an exit that failed: the
                 * engine's exit takes any journal (standby-manager(8)). */
                log_info("Ending standby (%s).", why);
                if (free_and_strdup(&l->leave_why, why) < 0)
                        log_warning("Out of memory: this leave's reason is not told.");
                r = run_manager(l, &runs[1]);
        }
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot leave standby: %m");
        return sd_bus_reply_method_return(msg, "");
}
