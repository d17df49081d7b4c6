/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* standby-listener: the always-runnable daemon that thaws the units an event
 * concerns. This build has its rule files and --check; the event loop itself
 * is being built (docs/design.md, "Not yet built"). */
#include <getopt.h>
#include <stdio.h>

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
               "  --check [FILE...]   Validate rule files (default: every *.rule in the rule\n"
               "                      directories) and print what was understood\n"
               "  --rules-dir DIR     Read rules from DIR instead of /etc/standby/rules.d,\n"
               "                      /run/standby/rules.d, /usr/lib/standby/rules.d (repeatable,\n"
               "                      highest priority first)\n"
               "  -h, --help          Show this help\n"
               "      --version       Show the version\n"
               "\n"
               "Exit status: 0 rules valid, 1 failure, 2 usage, 5 a rule file is invalid or refused.\n");
}

int main(int argc, char *argv[]) {
        enum { ARG_CHECK = 0x100, ARG_RULES_DIR, ARG_VERSION };
        static const struct option options[] = {
                { "check", no_argument, NULL, ARG_CHECK },
                { "rules-dir", required_argument, NULL, ARG_RULES_DIR },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                {}
        };
        const char *dirs[RULES_DIRS_MAX + 1] = {};
        size_t n_dirs = 0;
        bool check = false;
        int c, r;

        log_set_prefix("standby-listener");
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
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

        if (!check) {
                if (optind < argc) {
                        log_error("Files are only taken with --check.");
                        return EXIT_USAGE;
                }
                log_error("The listener's event loop is not built yet; only --check works in this version.");
                return EXIT_FAILURE_GENERIC;
        }
        if (n_dirs == 0) {
                dirs[n_dirs++] = STANDBY_SYSCONFDIR "/standby/rules.d";
                dirs[n_dirs++] = "/run/standby/rules.d";
                dirs[n_dirs++] = "/usr/lib/standby/rules.d";
        }

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

        for (size_t i = 0; set && i < set->n_rules; i++) {
                _cleanup_free_ char *d = rule_describe(&set->rules[i]);
                printf("%s\n", d ? d : set->rules[i].path);
        }
        if (r < 0)
                return EXIT_CONFIG;
        if (!set || set->n_rules == 0)
                printf("No rules.\n");
        return EXIT_OK;
}
