/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* standby-listener: the always-runnable daemon that thaws exactly the units
 * an event concerns. One single-threaded sd-event loop with no periodic timer:
 * idle in standby it does not wake at all. */
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>

#include "cgroup.h"
#include "fileio.h"
#include "listener.h"
#include "log.h"
#include "macro.h"
#include "rules.h"
#include "standby.h"
#include "strv.h"

#define RULES_DIRS_MAX 16

static void help(void) {
        printf("Usage: standby-listener [OPTIONS]\n"
               "       standby-listener --check [FILE...]\n"
               "\n"
               "  --check [FILE...]   Validate the configuration and its drop-ins, and rule\n"
               "                      files (default: every *.rule in the rule directories),\n"
               "                      and print what was understood\n"
               "  -c, --config FILE   Configuration (default " STANDBY_CONFIG_PATH ")\n"
               "  --state-dir DIR     Journal directory (default " STANDBY_STATE_DIR ")\n"
               "  --bus-address ADDR  Connect to this D-Bus address instead of the system bus\n"
               "  -v, --verbose       Log debug messages\n"
               "  --rules-dir DIR     Read rules from DIR instead of /etc/standby/rules.d,\n"
               "                      /run/standby/rules.d, /usr/lib/standby/rules.d (repeatable,\n"
               "                      highest priority first)\n"
               "  -h, --help          Show this help\n"
               "      --version       Show the version\n"
               "\n"
               "Exit status: 0 success (or rules valid), 1 failure, 2 usage, 3 not root,\n"
               "4 no cgroup v2, 5 a rule file or the configuration is invalid.\n");
}

/* A rule that thaws only a timer or a path unit thaws nothing: said at
 * every load and by --check, never refused (a cgroup may carry the name). */
static void warn_processless(const RuleSet *set) {
        for (size_t i = 0; set && i < set->n_rules; i++) {
                const char *u = rule_thaws_processless(&set->rules[i]);
                if (u)
                        log_warning("%s: Thaw=%s: a %s unit runs no processes of its own, so thawing it wakes "
                                    "nothing; name the service it starts.",
                                    set->rules[i].path, u, strrchr(u, '.') + 1);
        }
}

/* The entry and leave policy (EnterOn= and the keys beside it), [Strategy]
 * and the maintenance windows' ([Maintenance], [Lateness]) are read again;
 * the rest of the configuration is not (Group= is looked up once at
 * start, and the journal's cgroups are the running standby's). A file that
 * does not parse changes nothing. */
static void reload_policy(Listener *l) {
        _cleanup_config_ Config *c = NULL;
        _cleanup_free_ char *error = NULL;
        Config *cur = l->m.config;

        if (config_load(l->m.config_path, streq(l->m.config_path, STANDBY_CONFIG_PATH), &c, &error) < 0) {
                log_error("Reload of the policy refused, keeping the one in force: %s",
                          error ?: "cannot load the configuration");
                return;
        }
        cur->enter_on = c->enter_on;
        cur->leave_on = c->leave_on;
        cur->idle_enter = c->idle_enter;
        cur->inhibit_delay_max = c->inhibit_delay_max;
        cur->users_may_block = c->users_may_block;
        cur->freeze_before_sleep = c->freeze_before_sleep;
        /* [Strategy]: which new cgroups a standby of a strategy per unit
         * holds (freezer/hold.c), as the next enter reads it. */
        UnitStrategy *us = cur->unit_strategies;
        size_t n_us = cur->n_unit_strategies;
        cur->unit_strategies = c->unit_strategies;
        cur->n_unit_strategies = c->n_unit_strategies;
        c->unit_strategies = us; /* freed with c */
        c->n_unit_strategies = n_us;
        cur->lateness = c->lateness;
        cur->window_max = c->window_max;
        /* The old [Lateness] goes with c. */
        char **units = cur->lateness_units;
        usec_t *usecs = cur->lateness_usec;
        size_t n = cur->n_lateness;
        cur->lateness_units = c->lateness_units;
        cur->lateness_usec = c->lateness_usec;
        cur->n_lateness = c->n_lateness;
        c->lateness_units = units;
        c->lateness_usec = usecs;
        c->n_lateness = n;
        listener_logind_reload(l);
        if (!l->maintenance && !listener_exiting(l)) /* an exit stopped them */
                (void) listener_maintenance_start(l);
        else
                (void) listener_maintenance_follow(l);
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Listener *l = userdata;

        if (si->ssi_signo == SIGHUP) {
                _cleanup_rule_set_ RuleSet *set = NULL;
                _cleanup_free_ char *error = NULL;
                char buf[64];

                snprintf(buf, sizeof(buf), "RELOADING=1\nMONOTONIC_USEC=%llu",
                         (unsigned long long) now_usec(CLOCK_MONOTONIC));
                (void) sd_notify(false, buf);
                reload_policy(l);
                /* All or nothing: a rule set that does not load changes nothing. */
                if (rules_load(l->rules_dirs, true, &set, &error) < 0) {
                        log_error("Reload refused, keeping the %zu rules in force: %s", l->rules->n_rules,
                                  error ? error : "cannot load the rules");
                        /* The input devices the new policy wants (the
                         * sources' reload below does it with the rules). */
                        (void) listener_setup_input(l);
                } else {
                        warn_processless(set);
                        listener_forget_late(l); /* kept per rule of the old set */
                        rule_set_free(listener_sources_reload(l, TAKE_PTR(set)));
                        log_info("Reloaded %zu rules.", l->rules->n_rules);
                }
                if (!listener_call_monitor_says_ready(l))
                        (void) sd_notify(false, "READY=1");
                return 0;
        }
        (void) sd_notify(false, "STOPPING=1");
        return sd_event_exit(sd_event_source_get_event(s), 0);
}

/* The journal changed (or may have): standby begins, ends, or units were
 * frozen or thawed by anyone. */
static int state_changed(Listener *l) {
        bool active = listener_standby_active(l);

        /* Without the lock: blocking on the manager mid-enter would make the
         * listener itself a lock waiter the deadlock guard has to look at. */
        if (manager_read_journal(&l->m) >= 0)
                active = l->m.journal->phase == JOURNAL_ACTIVE;
        manager_unlock_journal(&l->m);
        /* Units frozen or thawed by anyone: what follows the journal (their
         * sockets held or dropped, the cgroup watch) is the dispatcher's,
         * right after this handler. */
        listener_enqueue(l, LISTENER_WORK_JOURNAL_CHANGED);
        bool changed = listener_phase_follow_journal(l, active);
        /* Entered while apps were still given their delay: it is over. */
        if (active)
                listener_announce_cut_short(l);
        /* Left, everything thawed: apps are told (if they were told it began). */
        if (l->m.journal && l->m.journal->phase == JOURNAL_NONE)
                listener_announce_end(l);
        if (!changed)
                return 0;
        listener_logind_state_changed(l);
        log_info("Standby %s.", active ? "entered" : "left");
        if (active) {
                /* Its copy of the journal is a new generation of the cache,
                 * which the socket source's thaw-first sets follow (queued
                 * above) before the first socket event of the standby. */
                int r = listener_windows_reconcile(l);
                if (r >= 0)
                        r = listener_maintenance_start(l);
                listener_replay_late(l);
                return r;
        }
        listener_maintenance_stop(l);
        listener_drop_windows(l);
        listener_drop_refreezes(l);
        return 0;
}

/* The manager's journal tells when standby begins and ends. */
static int on_state_change(sd_event_source *s, const struct inotify_event *ev, void *userdata) {
        Listener *l = userdata;

        if (ev->mask & (IN_MOVE_SELF | IN_DELETE_SELF | IN_IGNORED | IN_UNMOUNT))
                /* Not here: this source may be the one to replace. */
                return sd_event_source_set_enabled(l->state_rewatch, SD_EVENT_ONESHOT);
        if (!(ev->mask & IN_Q_OVERFLOW) && (ev->len == 0 || !streq(ev->name, JOURNAL_FILE)))
                return 0;
        return state_changed(l);
}

static int watch_state_dir(Listener *l, int dir_fd) {
        int r = sd_event_add_inotify_fd(l->event, &l->state_watch, dir_fd,
                                        IN_MOVED_TO | IN_DELETE | IN_MOVE_SELF | IN_DELETE_SELF | IN_ONLYDIR,
                                        on_state_change, l);
        if (r < 0)
                return log_error_errno(r, "Cannot watch the state directory %s: %m", l->m.state_dir);
        /* A journal change pending beside an event goes first: the event is
         * judged by the journal as it is now (and a D-Bus reply to anyone
         * who changed the journal before calling tells it was taken). */
        (void) sd_event_source_set_priority(l->state_watch, SD_EVENT_PRIORITY_IMPORTANT);
        return 0;
}

/* The state directory's own name came or went in its parent. */
static int on_state_parent_change(sd_event_source *s, const struct inotify_event *ev, void *userdata) {
        Listener *l = userdata;
        const char *base = strrchr(l->m.state_dir, '/');

        if ((ev->mask & IN_Q_OVERFLOW) || (ev->len > 0 && streq(ev->name, base ? base + 1 : l->m.state_dir)))
                return sd_event_source_set_enabled(l->state_rewatch, SD_EVENT_ONESHOT);
        return 0;
}

static int on_state_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        Listener *l = userdata;

        return sd_event_source_set_enabled(l->state_rewatch, SD_EVENT_ONESHOT);
}

/* The rewatch again in 100 ms: one timer, the listener's, armed once
 * however often the watch fails meanwhile. */
static int arm_state_retry(Listener *l) {
        int r;

        if (!l->state_retry)
                return sd_event_add_time_relative(l->event, &l->state_retry, CLOCK_MONOTONIC, 100 * USEC_PER_MSEC, 0,
                                                  on_state_retry, l);
        r = sd_event_source_set_time_relative(l->state_retry, 100 * USEC_PER_MSEC);
        if (r >= 0)
                r = sd_event_source_set_enabled(l->state_retry, SD_EVENT_ONESHOT);
        return r;
}

/* Opens the state directory by its path again; if it is another directory
 * than the one watched (removed and made again, or renamed and replaced),
 * watches and reads that one. While there is none (or one that is not
 * root's), the old one stays, and the parent's watch tells when one comes. */
static int on_state_rewatch(sd_event_source *s, void *userdata) {
        Listener *l = userdata;
        _cleanup_close_ int fd = -EBADF;
        struct stat now, before;
        int r;

        r = journal_dir_open(l->m.state_dir, false, &fd);
        if (r < 0) {
                log_warning_errno(r, "The state directory %s is gone or not root's (%m); waiting for it.",
                                  l->m.state_dir);
                return 0;
        }
        if (fstat(fd, &now) < 0)
                return log_error_errno(-errno, "Cannot stat the state directory %s: %m", l->m.state_dir);
        if (l->state_watch && fstat(l->m.state_fd, &before) >= 0 && before.st_dev == now.st_dev &&
            before.st_ino == now.st_ino)
                return 0; /* the same one */
        /* A wait for the old directory's lock would never end: its holder
         * closes a file no one uses any more, or has already. The next try
         * watches the new one. It goes before the new watch is added: the
         * removed lock file's inode number may already be the new
         * directory's, and sd-event refuses a second watch under a number
         * it still holds (EINVAL). */
        l->lock_watch = sd_event_source_disable_unref(l->lock_watch);
        l->state_watch = sd_event_source_disable_unref(l->state_watch);
        r = watch_state_dir(l, fd);
        if (r < 0) {
                /* Not deaf for good: try again shortly. */
                r = arm_state_retry(l);
                if (r < 0)
                        log_error_errno(r, "Cannot retry watching the state directory %s: %m; waiting for its "
                                        "parent to change.", l->m.state_dir);
                return 0;
        }
        safe_close(l->m.state_fd);
        l->m.state_fd = TAKE_FD(fd);
        l->m.lock_fd = safe_close(l->m.lock_fd); /* the lock file is the new directory's */
        log_notice("The state directory %s was replaced; watching the new one.", l->m.state_dir);
        return state_changed(l);
}

/* The directory itself may be replaced under the listener (removed and made
 * again, or renamed): a watch on it alone would stay on the old one, deaf to
 * every later enter; and while the listener holds it open, its removal
 * tells nothing. Its parent tells, by name. */
static int watch_state_dirs(Listener *l) {
        _cleanup_free_ char *parent = strdup(l->m.state_dir);
        char *slash = parent ? strrchr(parent, '/') : NULL;
        int r;

        if (!parent)
                return log_error_errno(-ENOMEM, "Cannot watch the state directory: %m");
        if (slash)
                *(slash == parent ? slash + 1 : slash) = 0;
        r = watch_state_dir(l, l->m.state_fd);
        if (r >= 0)
                r = sd_event_add_inotify(l->event, &l->state_parent_watch, slash ? parent : ".",
                                         IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ONLYDIR,
                                         on_state_parent_change, l);
        if (r >= 0)
                r = sd_event_source_set_priority(l->state_parent_watch, SD_EVENT_PRIORITY_IMPORTANT);
        if (r >= 0)
                r = sd_event_add_defer(l->event, &l->state_rewatch, on_state_rewatch, l);
        if (r >= 0)
                r = sd_event_source_set_priority(l->state_rewatch, SD_EVENT_PRIORITY_IMPORTANT);
        if (r >= 0)
                r = sd_event_source_set_enabled(l->state_rewatch, SD_EVENT_OFF);
        if (r < 0)
                return log_error_errno(r, "Cannot watch the state directory %s and its parent: %m", l->m.state_dir);
        return 0;
}

static int run_daemon(const char *config_path, const char *state_dir, const char *bus_address, const char **dirs) {
        _cleanup_free_ char *error = NULL;
        Listener l = { .bus_address = bus_address, .rules_dirs = dirs, .record_delay = LISTENER_RECORD_DELAY_USEC,
                       .call_monitor_timeout = LISTENER_CALL_MONITOR_TIMEOUT_USEC, .loop_fd = -EBADF };
        /* For the tests: a thaw's record held back long enough to race it. */
        const char *delay = getenv("STANDBY_LISTENER_RECORD_DELAY_USEC");
        if (delay && parse_u64(delay, &l.record_delay) < 0)
                l.record_delay = LISTENER_RECORD_DELAY_USEC;
        /* For the tests: a hung bus's setup failed without waiting 25 s. */
        const char *timeout = getenv("STANDBY_LISTENER_CALL_MONITOR_TIMEOUT_USEC");
        if (timeout && (parse_u64(timeout, &l.call_monitor_timeout) < 0 || l.call_monitor_timeout == 0))
                l.call_monitor_timeout = LISTENER_CALL_MONITOR_TIMEOUT_USEC;
        int r, ret = EXIT_FAILURE_GENERIC;

        l.m = (Manager) { .root_fd = -EBADF, .state_fd = -EBADF, .lock_fd = -EBADF, .state_dir = state_dir };
        l.m.config_path = config_path ? config_path : STANDBY_CONFIG_PATH;
        r = config_load(l.m.config_path, !config_path, &l.m.config, &error);
        if (r < 0) {
                log_error("%s", error ? error : "Failed to load the configuration.");
                return EXIT_CONFIG;
        }
        if (geteuid() != 0) {
                log_error("standby-listener needs root: it thaws and freezes cgroups.");
                ret = EXIT_PERMISSION;
                goto finish;
        }
        if (cgroup_find_mount(&l.m.cgroup_mount) < 0 || cgroup_open_root(l.m.cgroup_mount, &l.m.root_fd) < 0) {
                log_error("No cgroup v2 file system is mounted; standby needs one.");
                ret = EXIT_NO_CGROUP2;
                goto finish;
        }
        r = journal_dir_open(state_dir, true, &l.m.state_fd);
        if (r < 0) {
                log_error_errno(r, "Cannot use the state directory %s: %m", state_dir);
                goto finish;
        }
        free(TAKE_PTR(error));
        r = rules_load(dirs, true, &l.rules, &error);
        if (r < 0) {
                log_error("%s", error ? error : "Failed to load the rules.");
                ret = EXIT_CONFIG;
                goto finish;
        }
        warn_processless(l.rules);

        /* Two fds per journal unit (its cgroup and cgroup.freeze), and a
         * user makes as many units as he makes empty cgroups (enter records
         * every leaf; JOURNAL_UNITS_BUDGET bounds them): the soft limit
         * (1024 under systemd, for select()'s sake, which nothing here
         * uses) is raised to the hard one, or the listener could no longer
         * read the journal, and no event would thaw anything. */
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) >= 0 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                (void) setrlimit(RLIMIT_NOFILE, &rl);
        }

        /* One malloc arena: glibc gives each new thread (a refreeze's
         * deadlock guard) an arena of its own, up to 8 per CPU, whose freed
         * memory it keeps, locked below; one arena bounds that. */
        (void) mallopt(M_ARENA_MAX, 1);
        /* Stay responsive under memory pressure, without touching pages early. */
        if (mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) < 0)
                log_warning_errno(-errno, "mlockall failed, memory may be swapped out: %m");

        r = sd_event_default(&l.event);
        if (r >= 0)
                r = listener_loop_init(&l);
        if (r < 0)
                goto fail;
        r = listener_dispatcher_init(&l);
        if (r < 0)
                goto finish;
        sigset_t mask;
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        if ((r = sd_event_add_signal(l.event, NULL, SIGTERM, on_signal, &l)) < 0 ||
            (r = sd_event_add_signal(l.event, NULL, SIGINT, on_signal, &l)) < 0 ||
            (r = sd_event_add_signal(l.event, NULL, SIGHUP, on_signal, &l)) < 0)
                goto fail;
        r = watch_state_dirs(&l);
        if (r < 0)
                goto finish;
        r = listener_sources_start(&l);
        if (r < 0)
                goto finish;
        /* A damaged or unreadable journal (reported as it was read) does not
         * keep the listener from starting: standby is taken as inactive until
         * `standby-manager exit` repairs it, and nothing is frozen again. */
        r = listener_enforce_journal(&l);
        if (r < 0 && r != -EBADMSG && r != -EFBIG)
                goto fail;
        r = listener_windows_reconcile(&l);
        if (r == -EBADMSG || r == -EFBIG) {
                if (!l.m.journal && !(l.m.journal = journal_new())) {
                        r = -ENOMEM;
                        goto fail;
                }
                log_warning("The journal cannot be read: standby is taken as inactive.");
        } else if (r < 0)
                goto fail;
        else
                (void) listener_maintenance_start(&l);
        (void) listener_sync_call_targets(&l);
        r = listener_sync_sockets(&l);
        if (r < 0)
                goto fail;
        (void) listener_cgroup_watch_sync(&l);
        listener_bus_state_sync(&l); /* what the properties say from now on */
        listener_wake_log_start(&l);

        /* Apps told before a restart hear the end of this standby all the same. */
        if (listener_standby_active(&l))
                l.told_realtime = now_usec(CLOCK_REALTIME);
        log_info("Ready: %zu rules, standby %s.", l.rules->n_rules,
                 listener_standby_active(&l) ? "active" : "inactive");
        /* Ready once the rules are all in force: the call monitor may still
         * be becoming one. */
        if (!listener_call_monitor_says_ready(&l))
                (void) sd_notify(false, "READY=1");
        r = listener_loop_run(&l);
        if (r < 0)
                goto fail;
        ret = r; /* sd_event_exit()'s code: 0 on SIGTERM, a failure when the bus went away */
        goto finish;
fail:
        log_error_errno(r, "standby-listener failed: %m");
finish:
        if (l.m.state_fd >= 0)
                listener_flush_records_wait(&l); /* a thaw done is a thaw recorded */
        listener_wake_log_free(&l); /* and a wake captured is a wake logged */
        listener_forget_late(&l);
        listener_maintenance_stop(&l);
        listener_drop_windows(&l);
        listener_drop_refreezes(&l);
        listener_drop_reports(&l);
        listener_forget_exit(&l);
        sd_event_source_disable_unref(l.lock_watch);
        listener_forget_resolved(&l);
        listener_forget_verdicts();
        journal_free(TAKE_PTR(l.m.journal));
        listener_unit_states_free(&l);
        listener_sources_stop(&l);
        listener_fds_done(&l);
        listener_loop_free_removed(&l);
        safe_close(l.loop_fd);
        sd_event_source_disable_unref(l.state_watch);
        sd_event_source_disable_unref(l.state_parent_watch);
        sd_event_source_disable_unref(l.state_rewatch);
        sd_event_source_disable_unref(l.state_retry);
        listener_drop_systemd_links(&l);
        listener_queue_free(&l);
        free(l.leave_why);
        listener_forget_refused_links();
        sd_bus_flush_close_unref(l.bus);
        sd_event_unref(l.event);
        rule_set_free(l.rules);
        journal_free(l.m.journal);
        config_free(l.m.config);
        free(l.m.cgroup_mount);
        safe_close(l.m.root_fd);
        safe_close(l.m.state_fd);
        safe_close(l.m.lock_fd);
        return ret;
}

int main(int argc, char *argv[]) {
        enum { ARG_CHECK = 0x100, ARG_RULES_DIR, ARG_VERSION, ARG_STATE_DIR, ARG_BUS_ADDRESS };
        static const struct option options[] = {
                { "check", no_argument, NULL, ARG_CHECK },
                { "rules-dir", required_argument, NULL, ARG_RULES_DIR },
                { "config", required_argument, NULL, 'c' },
                { "state-dir", required_argument, NULL, ARG_STATE_DIR },
                { "bus-address", required_argument, NULL, ARG_BUS_ADDRESS },
                { "verbose", no_argument, NULL, 'v' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                {}
        };
        const char *dirs[RULES_DIRS_MAX + 1] = {};
        const char *config_path = NULL, *state_dir = STANDBY_STATE_DIR, *bus_address = NULL;
        size_t n_dirs = 0;
        bool check = false;
        int c, r;

        log_set_prefix("standby-listener");
        while ((c = getopt_long(argc, argv, "c:vh", options, NULL)) >= 0)
                switch (c) {
                case 'c':
                        config_path = optarg;
                        break;
                case ARG_STATE_DIR:
                        state_dir = optarg;
                        break;
                case ARG_BUS_ADDRESS:
                        bus_address = optarg;
                        break;
                case 'v':
                        log_set_max_level(LOG_DEBUG);
                        break;
                case ARG_CHECK:
                        check = true;
                        break;
                case ARG_RULES_DIR:
                        if (n_dirs == RULES_DIRS_MAX) {
                                log_error("At most %d --rules-dir.", RULES_DIRS_MAX);
                                return EXIT_USAGE;
                        }
                        dirs[n_dirs++] = optarg;
                        break;
                case 'h':
                        help();
                        return EXIT_OK;
                case ARG_VERSION:
                        printf("standby-listener " STANDBY_VERSION "\n");
                        return EXIT_OK;
                default:
                        fprintf(stderr, "Try 'standby-listener --help'.\n");
                        return EXIT_USAGE;
                }

        if (n_dirs == 0) {
                dirs[n_dirs++] = STANDBY_SYSCONFDIR "/standby/rules.d";
                dirs[n_dirs++] = "/run/standby/rules.d";
                dirs[n_dirs++] = STANDBY_RULES_LIBDIR;
        }
        if (!check) {
                if (optind < argc) {
                        log_error("Files are only taken with --check.");
                        return EXIT_USAGE;
                }
                return run_daemon(config_path, state_dir, bus_address, dirs);
        }

        /* The configuration as the daemon reads it at start: a file that
         * would keep the service from starting fails the check the same way
         * (exit 5, FILE:LINE). Then the rules, each file reported. */
        _cleanup_config_ Config *config = NULL;
        _cleanup_free_ char *config_error = NULL;
        int config_r = config_load(config_path ?: STANDBY_CONFIG_PATH, !config_path, &config, &config_error);
        if (config_r < 0)
                log_error("%s", config_error ? config_error : "Failed to load the configuration.");

        _cleanup_rule_set_ RuleSet *set = NULL;
        _cleanup_free_ char *error = NULL;
        if (optind < argc) {
                set = calloc(1, sizeof(RuleSet));
                if (!set)
                        return EXIT_FAILURE_GENERIC;
                /* Every file is checked, so one run reports every bad file. */
                int bad = 0;
                for (int i = optind; i < argc; i++) {
                        _cleanup_free_ char *e = NULL;
                        if (rules_parse_file(set, argv[i], true, &e) < 0) {
                                log_error("%s", e ? e : argv[i]);
                                bad++;
                        }
                }
                r = bad ? -EINVAL : 0;
        } else {
                r = rules_load(dirs, true, &set, &error);
                if (r < 0)
                        log_error("%s", error ? error : "Failed to load the rules.");
        }
        if (r < 0 && r != -EINVAL && r != -EPERM && !error)
                return EXIT_FAILURE_GENERIC;

        warn_processless(set);
        /* What [Strategy] says, in the order it decides. */
        for (size_t i = 0; config && i < config->n_unit_strategies; i++) {
                const UnitStrategy *u = &config->unit_strategies[i];
                char tb[32];
                if (u->none || u->strategy == STRATEGY_FREEZE)
                        printf("[Strategy] %s: %s\n", u->pattern, u->none ? "left alone" : "frozen");
                else if (u->slack_ns == 0)
                        printf("[Strategy] %s: slacked, timers as late as the kernel allows\n", u->pattern);
                else
                        printf("[Strategy] %s: slacked, timers at most %s late\n", u->pattern,
                               format_timespan(tb, sizeof(tb), u->slack_ns / NSEC_PER_USEC));
        }
        for (size_t i = 0; set && i < set->n_rules; i++) {
                _cleanup_free_ char *d = rule_describe(&set->rules[i]);
                printf("%s\n", d ? d : set->rules[i].path);
        }
        if (!set || set->n_rules == 0)
                printf("No rules.\n");
        if (r < 0 || config_r < 0)
                return EXIT_CONFIG;
        return EXIT_OK;
}
