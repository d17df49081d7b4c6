/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* standby-manager: enter and leave connected standby; freeze and thaw units. */
#include <getopt.h>
#include <grp.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>

#include "cgroup.h"
#include "fileio.h"
#include "log.h"
#include "manager.h"
#include "report.h"
#include "report-show.h"
#include "strv.h"
#include "unit-name.h"

static void help(void) {
        printf("Usage: standby-manager [OPTIONS] VERB [ARGS]\n"
               "\n"
               "Freeze user cgroups for connected standby and thaw them again.\n"
               "\n"
               "Verbs:\n"
               "  enter [--strategy=freeze|slack]  Enter standby: freeze (or slack) every unit below\n"
               "                                   the configured targets, each as its [Strategy] line\n"
               "                                   says, or all one way with --strategy\n"
               "  exit                             Leave standby: undo everything the journal lists\n"
               "  status [--json]                  Show standby state, unit by unit\n"
               "  is-active                        Print whether standby is active\n"
               "  freeze UNIT...                   Freeze units (names or cgroup paths)\n"
               "  thaw UNIT... [--for DURATION]    Thaw frozen units, for a while or until exit\n"
               "  report [--json] [--plot FILE]    What woke each standby period, and what each unit\n"
               "                                   cost (offender: more than 10%% of the wakeups or CPU)\n"
               "\n"
               "Options:\n"
               "  -c, --config FILE     Configuration file (default " STANDBY_CONFIG_PATH ")\n"
               "      --state-dir DIR   Journal directory (default " STANDBY_STATE_DIR ")\n"
               "      --strategy NAME   freeze or slack for every unit (enter only; overrides Strategy=\n"
               "                        and [Strategy])\n"
               "      --for DURATION    thaw only: refreeze after DURATION (e.g. 30s, 2min)\n"
               "      --json            status, report: one JSON object\n"
               "      --plot FILE       report only: the last period's timeline as a gnuplot script\n"
               "      --bus-address A   enter, status, thaw --for: reach standby-listener on this D-Bus address\n"
               "      --before-sleep T  enter only, as standby-listener runs it before a sleep: done by\n"
               "                        T (CLOCK_MONOTONIC, microseconds), through cgroup.freeze, what\n"
               "                        does not freeze in time left running; apps are not told\n"
               "  -v, --verbose         Log debug messages\n"
               "  -q, --quiet           Log only warnings and errors\n"
               "  -h, --help            Show this help\n"
               "      --version         Show the version\n"
               "\n"
               "Exit status: 0 success, 1 failure, 2 usage, 3 permission, 4 no cgroup v2,\n"
               "5 configuration, 6 already in standby, 7 not in standby / not frozen,\n"
               "8 unknown or refused unit, 9 enter rolled back; status and is-active, as\n"
               "LSB's status: 0 active, 3 not active, 4 unknown. See standby-manager(8).\n");
}

static bool allowed(const Config *c) {
        if (geteuid() == 0)
                return true;
        if (!c->group)
                return false;
        struct group *g = getgrnam(c->group);
        if (!g)
                return false;
        if (getegid() == g->gr_gid)
                return true;
        gid_t groups[256];
        int n = getgroups(ELEMENTSOF(groups), groups);
        for (int i = 0; i < n; i++)
                if (groups[i] == g->gr_gid)
                        return true;
        return false;
}

/* Resolves every argument before anything changes: bad input changes nothing. */
static int resolve_units(Manager *m, char **args, char ***ret) {
        _cleanup_strv_free_ char **all = NULL;
        int r;

        r = strv_split_words("", &all);
        if (r < 0)
                return r;
        for (char **a = args; *a; a++) {
                _cleanup_strv_free_ char **leaves = NULL;

                r = select_named_unit(m, *a, &leaves);
                if (r == -EINVAL)
                        return log_error_errno(r, "%s: not a valid unit name, nor a cgroup path below %s (no \"..\", "
                                               "no leading \"/\", no symlinks).", *a, m->cgroup_mount);
                if (r == -ENOENT || r == -ENOTDIR)
                        return log_error_errno(r, "%s: no such unit or cgroup below %s.", *a, m->cgroup_mount);
                if (r == -ENOTUNIQ)
                        return log_error_errno(r, "%s: matches several cgroups; give its cgroup path instead.", *a);
                if (r == -ELOOP || r == -EXDEV)
                        return log_error_errno(r, "%s: refused, the path leaves the cgroup tree.", *a);
                if (r == -EDEADLK)
                        return log_error_errno(r, "%s: refused, it holds standby-manager or its caller.", *a);
                if (r < 0)
                        return log_error_errno(r, "%s: cannot resolve: %m", *a);
                for (char **l = leaves; *l; l++)
                        if (!strv_contains(all, *l) && (r = strv_extend(&all, *l)) < 0)
                                return r;
        }
        *ret = TAKE_PTR(all);
        return 0;
}

static int verb_enter_told(Manager *m, Strategy strategy, bool per_unit);

/* enter --before-sleep: the listener told apps already, and logind waits
 * for the sleep only so long. systemd answers FreezeUnit only once the unit
 * is frozen, one unit at a time (up to 30 s each): cgroup.freeze is written
 * for every unit at once instead and waited for within a FreezeTimeout= cut
 * to fit; a unit that does not freeze by then is thawed again and named
 * (OnFreezeTimeout=skip); the deadlock guard's scan of every process is not
 * bounded by the deadline, and the standby entered here ends on waking. The
 * journal records the backend, so the thaw on waking goes the same way. */
static int verb_enter_before_sleep(Manager *m, usec_t deadline) {
        usec_t now = now_usec(CLOCK_MONOTONIC);

        if (now >= deadline) {
                log_error("No time left to freeze before the sleep.");
                return EXIT_FAILURE_GENERIC;
        }
        m->config->freeze_timeout = MIN(m->config->freeze_timeout, (deadline - now) * 3 / 4);
        m->config->on_freeze_timeout = FREEZE_FAILURE_SKIP;
        m->config->deadlock_guard = false;
        m->config->backend = BACKEND_CGROUPFS;
        m->freeze_deadline = deadline;
        return verb_enter_told(m, STRATEGY_FREEZE, false);
}

/* per_unit: each unit by its [Strategy] line (strategy for the others). */
static int verb_enter(Manager *m, Strategy strategy, bool per_unit) {
        sd_bus *told = NULL;
        int r;

        /* Apps are told first, and given their delay (the listener's
         * InhibitDelayMaxSec=), before the journal's lock is taken: nothing
         * else waits on it meanwhile. No listener, no one to tell. The
         * connection stays open until the enter is done: closed with no
         * standby entered, it tells the listener to tell apps it is off. */
        r = listener_prepare_entry(m->bus_address, m->config->inhibit_delay_max + 5 * USEC_PER_SEC, &told);
        if (r < 0)
                log_debug_errno(r, "Apps not told through the listener: %m");
        r = verb_enter_told(m, strategy, per_unit);
        listener_prepare_done(told);
        return r;
}

static int verb_enter_told(Manager *m, Strategy strategy, bool per_unit) {
        _cleanup_strv_free_ char **units = NULL;
        int r;

        r = manager_lock_journal(m, true);
        if (r < 0)
                return EXIT_FAILURE_GENERIC;
        /* An exit that could not thaw everything (a cgroup frozen from
         * above the targets, say) leaves the journal "exiting", naming what
         * it could not thaw, for the next exit to try again. That must not
         * refuse every enter from then on (the lid closed again would enter
         * nothing): the freeze strategy enters over it, and those units stay
         * in the journal. */
        bool over_failed_exit = m->journal->phase == JOURNAL_EXITING && (strategy == STRATEGY_FREEZE || per_unit) &&
                                m->journal->strategy == STRATEGY_FREEZE && m->journal->n_threads == 0;
        if (m->journal->phase != JOURNAL_NONE && !over_failed_exit) {
                log_error("Standby is already entered (%s, strategy %s); run `standby-manager exit` first.",
                          journal_phase_to_string(m->journal->phase), strategy_to_string(m->journal->strategy));
                return EXIT_ALREADY;
        }
        if (m->freeze_deadline > 0 && now_usec(CLOCK_MONOTONIC) >= m->freeze_deadline) {
                log_error("The journal's lock came too late to freeze before the sleep.");
                return EXIT_FAILURE_GENERIC;
        }
        if (over_failed_exit)
                log_warning("The last exit left %zu units it could not thaw (see `standby-manager status`); "
                            "entering all the same.", m->journal->n_units);

        /* Before the journal says active: the listener records the wakes
         * of the new period from then on (those of events during the enter
         * too), in the file this starts anew. */
        report_period_begin(m, per_unit ? "per-unit" : strategy_to_string(strategy));
        if (per_unit)
                r = strategy_enter(m);
        else if (strategy == STRATEGY_FREEZE)
                r = freeze_enter(m);
        else {
                _cleanup_strv_free_ char **targets = NULL;
                r = select_targets(m, &targets);
                if (r >= 0)
                        r = select_units(m, targets, &units, NULL);
                if (r >= 0)
                        r = slack_enter(m, units);
        }
        if (r < 0)
                report_period_abandon(m); /* no period: what was frozen is thawed again */
        else
                report_period_entered(m);
        if (r == -ECANCELED)
                return EXIT_ROLLED_BACK;
        if (r == -EOPNOTSUPP) {
                log_error("This kernel has no cgroup v2 freezer (cgroup.freeze needs Linux 5.2).");
                return EXIT_NO_CGROUP2;
        }
        if (r < 0 && m->journal && !journal_is_empty(m->journal)) {
                /* A failure after the first freeze (out of memory, no
                 * descriptor left for a wait: any user can make enough
                 * empty cgroups) must not leave the machine frozen with
                 * nothing to thaw it: standby-enter.service's ExecStop does
                 * not run after a failed start, and the listener acts only
                 * on an active standby. What was done is undone now. */
                log_error("Entering standby failed; leaving it again.");
                if (manager_exit_standby(m) < 0)
                        log_error("Not everything could be thawed; `standby-manager exit` tries again.");
        }
        return r < 0 ? EXIT_FAILURE_GENERIC : EXIT_OK;
}

static int verb_exit(Manager *m) {
        int r;

        /* Exit takes what a damaged journal still says, and without any
         * journal (unreadable, no lock to be had on a full or read-only
         * state directory) it still walks the targets. */
        m->take_damaged = true;
        r = manager_lock_journal(m, true);
        if (r < 0 && m->lock_fd < 0)
                r = manager_read_journal(m); /* no lock to be had: read it all the same */
        if (r < 0) {
                journal_free(m->journal);
                m->journal = journal_new();
                if (!m->journal) {
                        log_error("Out of memory.");
                        return EXIT_FAILURE_GENERIC;
                }
                m->journal_lost = true;
                log_warning("Leaving standby without the journal: every cgroup below the targets is thawed.");
        }
        r = manager_exit_standby(m);
        if (r == -ENOENT) {
                log_error("Not in standby: nothing to undo.");
                return EXIT_NOT_ACTIVE;
        }
        if (r < 0) {
                log_error("Standby left only in part: see above what stays frozen.");
                return EXIT_FAILURE_GENERIC;
        }
        log_info("Standby left.");
        return EXIT_OK;
}

/* The unit arguments of freeze and thaw, resolved before the journal is locked:
 * returns EXIT_OK or the exit status to give. */
static int resolve_and_lock(Manager *m, char **args, char ***ret_leaves) {
        if (resolve_units(m, args, ret_leaves) < 0)
                return EXIT_UNKNOWN_UNIT;
        if (manager_lock_journal(m, true) < 0)
                return EXIT_FAILURE_GENERIC;
        return EXIT_OK;
}

static int verb_freeze(Manager *m, char **args) {
        _cleanup_strv_free_ char **leaves = NULL;
        int r;

        r = resolve_and_lock(m, args, &leaves);
        if (r != EXIT_OK)
                return r;
        r = freeze_units(m, leaves);
        if (r == -ECANCELED)
                return EXIT_ROLLED_BACK;
        return r < 0 ? EXIT_FAILURE_GENERIC : EXIT_OK;
}

/* thaw --for: the window is standby-listener's, which outlives this command
 * and freezes the units again, the way standby froze them, when it ends. */
static int verb_thaw_window(Manager *m, char **args, usec_t duration) {
        _cleanup_strv_free_ char **leaves = NULL, **thawed = NULL, **failed = NULL, **why = NULL;
        _cleanup_free_ char *error = NULL;
        char tbuf[32];
        bool unknown = true;
        int r;

        if (resolve_units(m, args, &leaves) < 0)
                return EXIT_UNKNOWN_UNIT;
        r = listener_thaw_window(m->bus_address, leaves, duration, &thawed, &failed, &why, &error);
        if (r == -EOPNOTSUPP && !error) {
                log_error("thaw --for asks standby-listener over D-Bus, which needs libsystemd.so.0: not found.");
                return EXIT_FAILURE_GENERIC;
        }
        if (error && streq(error, "org.standby.Listener1.NotActive")) {
                log_error("--for needs standby to be active (a refreeze outside standby would outlive its reason).");
                return EXIT_NOT_ACTIVE;
        }
        if (error && streq(error, "org.freedesktop.DBus.Error.AccessDenied")) {
                log_error("standby-listener refused the thaw window: only root or members of its Group= may ask.");
                return EXIT_PERMISSION;
        }
        if (r < 0) {
                log_error_errno(r, "Cannot ask standby-listener for a thaw window (%s%s%m): thaw --for needs it "
                                "running, as the window's owner; without --for, a thaw lasts until exit.",
                                error ?: "", error ? ": " : "");
                return EXIT_FAILURE_GENERIC;
        }
        for (char **t = thawed; t && *t; t++)
                log_info("%s thawed for %s; standby-listener freezes it again then.", *t,
                         format_duration(tbuf, sizeof(tbuf), duration));
        for (size_t i = 0; failed && failed[i]; i++) {
                if (!streq(why[i], "not frozen by standby"))
                        unknown = false;
                log_error("%s: not thawed: %s.", failed[i], why[i]);
        }
        if (!thawed && unknown)
                return EXIT_NOT_ACTIVE;
        return failed ? EXIT_FAILURE_GENERIC : EXIT_OK;
}

static int verb_thaw(Manager *m, char **args, usec_t duration) {
        _cleanup_strv_free_ char **leaves = NULL;
        int r;

        if (duration != USEC_INFINITY)
                return verb_thaw_window(m, args, duration);
        r = resolve_and_lock(m, args, &leaves);
        if (r != EXIT_OK)
                return r;
        r = thaw_units(m, leaves, duration);
        if (r == -ESRCH) {
                log_error("Not frozen by standby: %s.", args[0]);
                return EXIT_NOT_ACTIVE;
        }
        return r < 0 ? EXIT_FAILURE_GENERIC : EXIT_OK;
}

int main(int argc, char *argv[]) {
        enum {
                ARG_STATE_DIR = 0x100,
                ARG_STRATEGY,
                ARG_FOR,
                ARG_JSON,
                ARG_VERSION,
                ARG_BUS_ADDRESS,
                ARG_PLOT,
                ARG_BEFORE_SLEEP
        };
        static const struct option options[] = {
                { "config", required_argument, NULL, 'c' },
                { "state-dir", required_argument, NULL, ARG_STATE_DIR },
                { "strategy", required_argument, NULL, ARG_STRATEGY },
                { "for", required_argument, NULL, ARG_FOR },
                { "json", no_argument, NULL, ARG_JSON },
                { "plot", required_argument, NULL, ARG_PLOT },
                { "bus-address", required_argument, NULL, ARG_BUS_ADDRESS },
                { "before-sleep", required_argument, NULL, ARG_BEFORE_SLEEP },
                { "verbose", no_argument, NULL, 'v' },
                { "quiet", no_argument, NULL, 'q' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                {}
        };
        Manager m = { .root_fd = -EBADF, .state_fd = -EBADF, .lock_fd = -EBADF };
        const char *config_path = NULL, *strategy_arg = NULL, *for_arg = NULL, *plot_arg = NULL, *sleep_arg = NULL,
                   *verb;
        usec_t sleep_deadline = 0;
        _cleanup_free_ char *error = NULL;
        usec_t duration = USEC_INFINITY;
        Strategy strategy;
        int c, r, ret;

        log_set_prefix("standby-manager");
        m.state_dir = STANDBY_STATE_DIR;

        while ((c = getopt_long(argc, argv, "c:vqh", options, NULL)) >= 0)
                switch (c) {
                case 'c':
                        config_path = optarg;
                        break;
                case ARG_STATE_DIR:
                        m.state_dir = optarg;
                        break;
                case ARG_STRATEGY:
                        strategy_arg = optarg;
                        break;
                case ARG_FOR:
                        for_arg = optarg;
                        break;
                case ARG_JSON:
                        m.json = true;
                        break;
                case ARG_PLOT:
                        plot_arg = optarg;
                        break;
                case ARG_BUS_ADDRESS:
                        m.bus_address = optarg;
                        break;
                case ARG_BEFORE_SLEEP:
                        sleep_arg = optarg;
                        break;
                case 'v':
                        log_set_max_level(LOG_DEBUG);
                        break;
                case 'q':
                        log_set_max_level(LOG_WARNING);
                        break;
                case 'h':
                        help();
                        return EXIT_OK;
                case ARG_VERSION:
                        printf("standby-manager " STANDBY_VERSION "\n");
                        return EXIT_OK;
                default:
                        fprintf(stderr, "Try 'standby-manager --help'.\n");
                        return EXIT_USAGE;
                }

        if (optind >= argc) {
                log_error("No verb given. Try 'standby-manager --help'.");
                return EXIT_USAGE;
        }
        verb = argv[optind];
        char **args = argv + optind + 1;
        size_t n_args = (size_t) (argc - optind - 1);

        bool takes_units = streq(verb, "freeze") || streq(verb, "thaw");
        bool asks_state = streq(verb, "status") || streq(verb, "is-active");
        bool report = streq(verb, "report");
        if (!takes_units && !streq(verb, "enter") && !streq(verb, "exit") && !asks_state && !report) {
                log_error("Unknown verb \"%s\". Try 'standby-manager --help'.", verb);
                return EXIT_USAGE;
        }
        if (takes_units ? n_args == 0 : n_args > 0) {
                log_error(takes_units ? "%s needs at least one unit." : "%s takes no arguments.", verb);
                return EXIT_USAGE;
        }
        if ((strategy_arg && !streq(verb, "enter")) || (for_arg && !streq(verb, "thaw")) ||
            (m.json && !streq(verb, "status") && !report) || (plot_arg && !report) ||
            (sleep_arg && (!streq(verb, "enter") || strategy_arg))) {
                log_error("--strategy and --before-sleep go with enter (not together), --for with thaw, --json "
                          "with status or report, --plot with report.");
                return EXIT_USAGE;
        }
        if (sleep_arg && (parse_u64(sleep_arg, &sleep_deadline) < 0 || sleep_deadline == 0)) {
                log_error("--before-sleep=%s: expected a CLOCK_MONOTONIC time in microseconds.", sleep_arg);
                return EXIT_USAGE;
        }
        /* The reports are files of their own: no configuration, no cgroups. */
        if (report)
                return report_show(report_dir(), m.json, plot_arg) < 0 ? EXIT_FAILURE_GENERIC : EXIT_OK;
        if (for_arg && (parse_duration(for_arg, &duration) < 0 || duration == 0)) {
                log_error("--for=%s: expected a positive duration such as \"30s\" or \"2min\".", for_arg);
                return EXIT_USAGE;
        }

        /* status and is-active are anyone's, as systemctl status is: a
         * caller who cannot read the journal (its directory is root's,
         * 0700) reads the listener's properties instead. Nor does it load
         * the configuration, whose /run drop-ins are in that directory. */
        if (asks_state && geteuid() != 0 && access(m.state_dir, R_OK | X_OK) < 0)
                return status_print_from_listener(&m, streq(verb, "is-active"));

        m.config_path = config_path ? config_path : STANDBY_CONFIG_PATH;
        r = config_load(m.config_path, !config_path, &m.config, &error);
        if (r < 0) {
                log_error("%s", error ? error : "Failed to load the configuration.");
                return EXIT_CONFIG;
        }
        strategy = m.config->strategy;
        if (strategy_arg && (strategy = strategy_from_string(strategy_arg)) == _STRATEGY_INVALID) {
                log_error("--strategy=%s: expected \"freeze\" or \"slack\".", strategy_arg);
                ret = EXIT_USAGE;
                goto finish;
        }

        /* status and is-active for a caller the journal is not open to
         * (not root nor in Group=), from the listener, as above. */
        if (asks_state && !allowed(m.config)) {
                ret = status_print_from_listener(&m, streq(verb, "is-active"));
                goto finish;
        }
        if (!allowed(m.config)) {
                log_error("Permission denied: standby-manager %s needs root%s%s%s.", verb,
                          m.config->group ? " or membership of group \"" : "", m.config->group ?: "",
                          m.config->group ? "\"" : "");
                ret = EXIT_PERMISSION;
                goto finish;
        }

        r = cgroup_find_mount(&m.cgroup_mount);
        if (r < 0) {
                log_error("No cgroup v2 file system is mounted (looked in /proc/self/mountinfo); standby needs one.");
                ret = EXIT_NO_CGROUP2;
                goto finish;
        }
        r = cgroup_open_root(m.cgroup_mount, &m.root_fd);
        if (r < 0) {
                log_error_errno(r, "Cannot open the cgroup2 mount %s: %m", m.cgroup_mount);
                ret = EXIT_NO_CGROUP2;
                goto finish;
        }
        r = journal_dir_open(m.state_dir, true, &m.state_fd);
        if (r == -EPERM || r == -EACCES || r == -ELOOP || r == -ENOTDIR) {
                log_error("Refusing the state directory %s: %s.", m.state_dir,
                          r == -EPERM    ? "it is owned by neither root nor the caller"
                          : r == -EACCES ? "group or others may write to it"
                                         : "it is a symlink or not a directory");
                ret = EXIT_PERMISSION;
                goto finish;
        }
        if (r < 0) {
                log_error_errno(r, "Cannot use the state directory %s: %m", m.state_dir);
                ret = EXIT_FAILURE_GENERIC;
                goto finish;
        }

        /* One fd per unit while freezing, one per level while walking: the
         * soft limit (1024, for select()'s sake, which nothing here uses) is
         * raised to the hard one. */
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) >= 0 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                (void) setrlimit(RLIMIT_NOFILE, &rl);
        }

        const char *crash = getenv("STANDBY_TEST_CRASH_AFTER");
        if (crash)
                (void) parse_u64(crash, &m.crash_after);

        if (streq(verb, "enter") || streq(verb, "exit")) {
                bool enter = streq(verb, "enter");
                /* --strategy is one for all: the [Strategy] lines are not read
                 * then; nor before a sleep, which freezes every unit. */
                ret = sleep_deadline > 0 ? verb_enter_before_sleep(&m, sleep_deadline)
                      : enter ? verb_enter(&m, strategy, !strategy_arg && m.config->n_unit_strategies > 0)
                              : verb_exit(&m);
                /* Unlocked first: the unit's own enter or exit takes the lock.
                 * Standby entered already (by hand, say) starts the target too;
                 * any exit stops it, even a failed one (the unit's exit tries
                 * again) or one with nothing to undo (the target stayed up). */
                bool active = m.journal && m.journal->phase == JOURNAL_ACTIVE;
                (void) manager_unlock_journal(&m);
                /* Before a sleep, the listener starts the target itself,
                 * not waiting: this must end within logind's delay. */
                if (sleep_deadline == 0 && (!enter || ret == EXIT_OK || (ret == EXIT_ALREADY && active)))
                        (void) systemd_target_follow(&m, enter);
        }
        else if (asks_state) {
                m.take_damaged = true; /* shown with what could not be read */
                if (manager_peek_journal(&m, &m.journal_busy) < 0)
                        ret = EXIT_STATUS_UNKNOWN;
                else if (streq(verb, "is-active")) {
                        /* systemctl is-active's words where they fit. */
                        JournalPhase ph = m.journal->phase;
                        printf("%s\n", ph == JOURNAL_NONE ? "inactive" : journal_phase_to_string(ph));
                        ret = manager_standby_active(&m) ? EXIT_OK : EXIT_STATUS_INACTIVE;
                } else if (status_print(&m) < 0)
                        ret = EXIT_STATUS_UNKNOWN;
                else
                        ret = manager_standby_active(&m) ? EXIT_OK : EXIT_STATUS_INACTIVE;
        } else if (streq(verb, "freeze"))
                ret = verb_freeze(&m, args);
        else
                ret = verb_thaw(&m, args, duration);

finish:
        /* status and is-active answer as LSB's status action does: 0 active,
         * 3 not active, and 4 (unknown) for whatever kept them from
         * knowing; 2 and 5 (usage, configuration) stay as for every verb. */
        if (asks_state && ret != EXIT_OK && ret != EXIT_STATUS_INACTIVE && ret != EXIT_USAGE && ret != EXIT_CONFIG)
                ret = EXIT_STATUS_UNKNOWN;
        journal_free(m.journal);
        config_free(m.config);
        free(m.cgroup_mount);
        safe_close(m.root_fd);
        safe_close(m.state_fd);
        safe_close(m.lock_fd);
        return ret;
}
