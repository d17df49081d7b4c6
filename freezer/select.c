/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which cgroups standby may touch. */
#include <unistd.h>

#include "cgroup.h"
#include "log.h"
#include "manager.h"
#include "proc.h"
#include "strv.h"
#include "unit-name.h"

/* The cgroups of this process and of every ancestor up to PID 1: freezing the
 * shell or terminal that runs us would freeze the user's way back. */
int select_callers(char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        pid_t pid = getpid();
        int r;

        r = strv_split_words("", &l);
        if (r < 0)
                return r;
        for (unsigned depth = 0; pid > 1 && depth < 256; depth++) {
                _cleanup_free_ char *cg = NULL;
                ProcStat st;

                if (cgroup_of_pid(pid, &cg) >= 0 && !strv_contains(l, cg)) {
                        r = strv_consume(&l, TAKE_PTR(cg));
                        if (r < 0)
                                return r;
                }
                if (proc_get_stat(pid, &st) < 0)
                        break;
                pid = st.ppid;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

/* An Exempt= entry with a '/' is a cgroup path (exempting its subtree); a unit
 * name exempts any cgroup of that name and everything below it. */
static bool is_exempt(char **exempt, const char *leaf) {
        for (char **e = exempt; e && *e; e++) {
                if (strchr(*e, '/')) {
                        if (cgroup_path_startswith(leaf, *e))
                                return true;
                        continue;
                }
                size_t n = strlen(*e);
                for (const char *p = leaf; p; p = strchr(p, '/')) {
                        if (*p == '/')
                                p++;
                        if (strneq(p, *e, n) && (p[n] == 0 || p[n] == '/'))
                                return true;
                }
        }
        return false;
}

/* logind's session scopes: the login shells, ssh logins and the display
 * server's session, whose processes are whoever may ask for standby through
 * systemctl (the service that enters it cannot learn who did). A name is
 * session-ID.scope, ID of letters and digits, at any depth (logind puts them
 * in user.slice/user-UID.slice). */
static bool is_session_scope(const char *leaf) {
        for (const char *p = leaf; p; p = strchr(p, '/')) {
                if (*p == '/')
                        p++;
                size_t n = strcspn(p, "/");
                if (n > strlen("session-.scope") && strneq(p, "session-", 8) && strneq(p + n - 6, ".scope", 6) &&
                    strspn(p + 8, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == n - 14)
                        return true;
        }
        return false;
}

static bool holds_caller(char **callers, const char *leaf) {
        for (char **c = callers; c && *c; c++)
                if (cgroup_path_startswith(*c, leaf))
                        return true;
        return false;
}

/* standby's own units, whatever Exempt= says: enter's unit runs exit as
 * its ExecStop in a cgroup made anew in standby (systemd removes the empty
 * one after enter), and the leave unit runs exit too; holding either would
 * freeze the exit that thaws it. Only where the system manager puts them,
 * and below: a user can name a unit of their own anything. */
static bool is_standby_unit(const char *cgroup) {
        static const char * const own[] = { "system.slice/standby-enter.service", "system.slice/standby-leave.service",
                                            "system.slice/standby-listener.service" };

        for (size_t i = 0; i < ELEMENTSOF(own); i++)
                if (cgroup_path_startswith(cgroup, own[i]))
                        return true;
        return false;
}

bool select_may_hold(Manager *m, char **callers, const char *cgroup) {
        return !holds_caller(callers, cgroup) && !is_exempt(m->config->exempt, cgroup) && !is_standby_unit(cgroup) &&
               (m->config->freeze_sessions || !is_session_scope(cgroup));
}

static int cmp_size_desc(const void *a, const void *b) {
        const size_t *x = a, *y = b;
        return x[0] < y[0] ? 1 : x[0] > y[0] ? -1 : 0;
}

/* The journal must name every unit before any is frozen, and it is read
 * whole, at most JOURNAL_SIZE_MAX: a user who makes names long and deep
 * enough (a delegated subtree allows any number of 1000-level paths) must
 * not keep standby from being entered at all. So when the unit lines would
 * take more than JOURNAL_UNITS_BUDGET, the units with the longest names are
 * left running (said, and kept: never frozen, so never to be thawed),
 * until the rest fits. */
static int fit_journal(char **units, char ***kept) {
        _cleanup_free_ size_t *sizes = NULL;
        size_t n = strv_length(units), total = 0;
        int r;

        sizes = calloc(2 * n + 2, sizeof(size_t));
        if (!sizes)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                sizes[2 * i] = JOURNAL_UNIT_LINE_SIZE(units[i]);
                sizes[2 * i + 1] = i;
                total += sizes[2 * i];
        }
        if (total <= JOURNAL_UNITS_BUDGET)
                return 0;
        qsort(sizes, n, 2 * sizeof(size_t), cmp_size_desc);
        for (size_t k = 0; k < n && total > JOURNAL_UNITS_BUDGET; k++) {
                char *u = units[sizes[2 * k + 1]];
                log_warning("Leaving %.200s... running: its path (%zu bytes) is too long to record with the others "
                            "within the journal's %u bytes.", u, strlen(u), JOURNAL_UNITS_BUDGET);
                total -= sizes[2 * k];
                r = strv_extend(kept, u);
                if (r < 0)
                        return r;
                free(u);
                units[sizes[2 * k + 1]] = NULL;
        }
        /* Close the gaps, keeping the order. */
        size_t w = 0;
        for (size_t i = 0; i < n; i++)
                if (units[i])
                        units[w++] = units[i];
        units[w] = NULL;
        return 0;
}

int select_targets(Manager *m, char ***ret) {
        _cleanup_strv_free_ char **rels = NULL;
        int r;

        r = strv_split_words("", &rels);
        if (r < 0)
                return r;
        for (char **t = m->config->targets; *t; t++) {
                _cleanup_free_ char *rel = NULL;

                r = unit_resolve_cgroup(m->root_fd, NULL, *t, &rel);
                if (r == -ENOENT) {
                        log_notice("Target %s: no such cgroup, skipped.", *t);
                        continue;
                }
                if (r < 0)
                        return log_error_errno(r, "Target %s in %s: cannot resolve: %m", *t, m->config_path);
                if (isempty(rel))
                        return log_error_errno(-EINVAL, "Target %s in %s: refusing the root cgroup.", *t, m->config_path);
                if (!strv_contains(rels, rel) && (r = strv_consume(&rels, TAKE_PTR(rel))) < 0)
                        return r;
        }
        *ret = TAKE_PTR(rels);
        return 0;
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char * const *) a, *(char * const *) b);
}

/* Appends a copy of s to the list l of n entries (cap allocated): amortised
 * O(1), where strv_extend() counts the list first. Any user can make the
 * units by the ten thousand. */
static int units_append(char ***l, size_t *n, size_t *cap, const char *s) {
        char *c = strdup(s);
        if (!c || !GROW_ARRAY(*l, *cap, *n + 2)) {
                free(c);
                return -ENOMEM;
        }
        (*l)[(*n)++] = c;
        (*l)[*n] = NULL;
        return 0;
}

int select_units(Manager *m, char **targets, char ***ret, char ***ret_kept) {
        _cleanup_strv_free_ char **callers = NULL, **units = NULL, **kept = NULL;
        _cleanup_free_ char **seen = NULL; /* the units of earlier targets, sorted (borrowed strings) */
        size_t n_units = 0, units_cap = 0, n_kept = 0, kept_cap = 0, n_seen = 0;
        int r;

        r = select_callers(&callers);
        if (r < 0)
                return r;
        units = calloc(1, sizeof(char *));
        kept = calloc(1, sizeof(char *));
        if (!units || !kept)
                return -ENOMEM;
        units_cap = kept_cap = 1;

        for (char **t = targets; *t; t++) {
                _cleanup_strv_free_ char **leaves = NULL, **inner = NULL, **unwalked = NULL;

                /* Targets may nest, so a leaf may come twice; one target's
                 * walk lists each once. Looked up among the earlier targets'
                 * units, sorted: a list check per leaf would cost the square
                 * of what any user can make. */
                if (t != targets && n_units > n_seen) {
                        char **s2 = realloc(seen, (n_units + 1) * sizeof(char *));
                        if (!s2)
                                return -ENOMEM;
                        seen = s2;
                        memcpy(seen, units, n_units * sizeof(char *));
                        n_seen = n_units;
                        qsort(seen, n_seen, sizeof(char *), cmp_str);
                }
                r = cgroup_list_leaves(m->root_fd, *t, &leaves, &inner, &unwalked);
                if (r < 0)
                        return log_error_errno(r, "Failed to list cgroups below %s: %m", *t);
                /* Never frozen: what is not walked is not recorded, and what is
                 * not recorded could not be thawed. */
                for (char **u = unwalked; *u; u++)
                        log_warning("Leaving %s and what lies below it running: it is deeper than %d levels, "
                                    "another file system is mounted there, or it cannot be read.", *u,
                                    CGROUP_DEPTH_MAX);
                for (char **i = inner; *i; i++) {
                        if (!is_exempt(m->config->exempt, *i) && !holds_caller(callers, *i) &&
                            (m->config->freeze_sessions || !is_session_scope(*i)))
                                log_warning("Cgroup %s has processes of its own besides child cgroups; those stay running.", *i);
                        if ((r = units_append(&kept, &n_kept, &kept_cap, *i)) < 0)
                                return r;
                }

                for (char **l = leaves; *l; l++) {
                        if (n_seen > 0 && bsearch(l, seen, n_seen, sizeof(char *), cmp_str))
                                continue;
                        if (holds_caller(callers, *l))
                                log_info("Leaving %s running: it holds standby-manager or its caller.", *l);
                        else if (is_exempt(m->config->exempt, *l))
                                log_debug("Leaving %s running: exempt.", *l);
                        else if (!m->config->freeze_sessions && is_session_scope(*l))
                                log_info("Leaving %s running: a login session (FreezeSessions=no).", *l);
                        else {
                                r = units_append(&units, &n_units, &units_cap, *l);
                                if (r < 0)
                                        return r;
                                continue;
                        }
                        if ((r = units_append(&kept, &n_kept, &kept_cap, *l)) < 0)
                                return r;
                }
        }
        r = fit_journal(units, &kept);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(units);
        if (ret_kept)
                *ret_kept = TAKE_PTR(kept);
        return 0;
}

/* The targets that resolve, quietly: where a unit name is looked up first. */
static int target_scopes(Manager *m, char ***ret) {
        _cleanup_strv_free_ char **scopes = calloc(1, sizeof(char *));
        int r;

        if (!scopes)
                return -ENOMEM;
        for (char **t = m->config->targets; t && *t; t++) {
                _cleanup_free_ char *rel = NULL;

                if (unit_resolve_cgroup(m->root_fd, NULL, *t, &rel) < 0 || isempty(rel) || strv_contains(scopes, rel))
                        continue;
                r = strv_consume(&scopes, TAKE_PTR(rel));
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(scopes);
        return 0;
}

int select_named_unit(Manager *m, const char *name, char ***ret) {
        _cleanup_strv_free_ char **callers = NULL, **leaves = NULL, **scopes = NULL;
        _cleanup_free_ char *rel = NULL;
        int r;

        /* Within the targets first: what standby freezes is what a name
         * given to freeze or thaw most likely means. */
        r = target_scopes(m, &scopes);
        if (r < 0)
                return r;
        r = unit_resolve_cgroup(m->root_fd, scopes, name, &rel);
        if (r < 0)
                return r;
        if (isempty(rel))
                return -EINVAL;
        r = select_callers(&callers);
        if (r < 0)
                return r;
        r = cgroup_list_leaves(m->root_fd, rel, &leaves, NULL, NULL);
        if (r < 0)
                return r;
        for (char **l = leaves; *l; l++)
                if (holds_caller(callers, *l))
                        return -EDEADLK;
        *ret = TAKE_PTR(leaves);
        return 0;
}
