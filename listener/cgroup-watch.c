/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* New work held during standby: a cgroup that appears below the targets
 * (a timer's service, a socket-activated service, a unit a user starts)
 * is frozen the moment it is seen, before any process of it runs.
 *
 * While standby is active, every cgroup below the targets that may get new
 * units in it (the targets and the cgroups between them and the units) has
 * an inotify watch for IN_CREATE: a mkdir on cgroupfs raises it in the
 * parent, and inotify is one file descriptor in the loop that wakes only
 * when a cgroup is made. What is below a unit the journal names is not
 * watched: a cgroup made below a frozen one is frozen by the kernel, one
 * below a unit thawed for a window belongs to the window.
 *
 * A new cgroup is held whatever its name: frozen through cgroup.freeze at
 * once, while it is still empty (a process moved into a frozen cgroup is
 * frozen before it returns to user space, so systemd's child for the unit
 * never reaches its exec), and recorded in the journal by the dispatcher
 * once per turn of the loop, for all the cgroups held in that turn
 * (listener_cgroup_watch_record(): one journal read and one save). Not
 * held: what enter would not freeze (Exempt=, session scopes, the
 * listener's own cgroups, standby's own units: select_may_hold()), and
 * containers. A container is known by what it is, a cgroup whose work is
 * below it: one that has child cgroups and no process of its own when
 * seen, or a held one in which a child cgroup appears while it has no
 * process of its own (then the child is held and the container thawed and
 * forgotten by the journal; with a process of its own it stays held, and
 * the child is frozen with it). A held cgroup is watched for that.
 * Systemd's names for containers (a slice, user@UID.service) are taken at
 * their word only in a parent owned by root (when the cgroup is seen),
 * where only root makes cgroups: that is how a user's manager (user@UID.service, which starts in
 * that cgroup before it moves into its exempt init.scope) comes up during
 * standby, so a new login does not wait. In a user's delegated subtree a
 * name says nothing. A new cgroup of the name of a unit the journal lists
 * is that unit's: frozen again if the journal says frozen, left to its
 * window if thawed.
 *
 * What one user costs: each watched cgroup keeps its own name and a link
 * to its parent's entry (never its whole path, which would grow with the
 * depth), and the cgroups of one user's account (below the topmost
 * cgroup on their path root does not own, as user@UID.service: by place,
 * whatever uids the directories show) take at most CGROUP_WATCH_UID_MAX
 * watches. Past that (or with no inotify watch left),
 * a cgroup of theirs that would be watched is held unwatched (what is made
 * below it is frozen with it), counted in the "unwatched" statistic. Each new cgroup costs a fixed
 * amount of work when seen (its path rebuilt, opened, frozen, watched) and
 * a share of one journal transaction; one read of the inotify descriptor
 * per turn of the loop, so the other sources are taken between reads.
 *
 * When standby begins the targets are walked once and the watches added;
 * the leaves found are left as enter left them (it keeps its callers'
 * cgroups running, and only it knows them), so a unit made while enter
 * ran, after it listed the leaves, is not held. An inotify overflow walks
 * them again. */
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "listener.h"
#include "log.h"
#include "strv.h"

/* A watched cgroup (or the parent of one): its own name and its parent's
 * entry. Alive while it is watched or a child's entry names it. */
typedef struct WatchedCgroup {
        struct WatchedCgroup *parent; /* NULL for a target: then name is its whole path */
        /* Whose share of watches it takes: the topmost cgroup on its path
         * that root does not own (a delegation root, as user@UID.service),
         * itself or an ancestor; NULL: root's. By place, not by owner: a
         * user with subordinate uids can give their cgroups to each. */
        struct WatchedCgroup *account;
        unsigned n_account;           /* as an account: the watches it has */
        int wd;
        bool held;                    /* made during standby and held: a container once a child appears */
        unsigned refs;                /* its watch, and each child's entry */
        char name[];
} WatchedCgroup;

/* A held unit not yet frozen when held (a process was in it already, and
 * must reach the kernel's freezer trap): its cgroup.events, watched until
 * it says frozen 1, when the journal records it frozen. */
typedef struct HeldUnit {
        struct CgroupWatch *watch;
        char *cgroup;
        int events_fd;
        sd_event_source *source;
        struct HeldUnit *next;
} HeldUnit;

/* What the dispatcher records for the cgroups seen in one turn. */
typedef struct PendingHold {
        char *cgroup;
        bool release;                 /* a held cgroup found to be a container: thawed and forgotten */
} PendingHold;

/* How many entries wait at most for the journal's lock (a manager verb
 * holds it for seconds at most); past that a new cgroup runs, counted. */
#define PENDING_MAX 8192U

typedef struct CgroupWatch {
        Listener *listener;
        int fd;                   /* inotify */
        sd_event_source *source;
        HeldUnit *freezing;
        PendingHold *pending;     /* frozen, to be recorded by the dispatcher */
        size_t n_pending, n_pending_allocated;
        WatchedCgroup **by_wd;    /* sorted by wd */
        size_t n_watched, n_allocated;
        char **callers;           /* the listener's own cgroups and its ancestors': never held */
} CgroupWatch;

/* The source's state: the watch while standby is active, and what it did. */
typedef struct CgroupWatchState {
        CgroupWatch *watch;
        uint64_t held;            /* cgroups made below the targets during standby, held */
        uint64_t not_held;        /* such cgroups left running: exempt, a session, a unit's own */
        uint64_t unwatched;       /* cgroups held unwatched: past their owner's share, or no watch left */
        uint64_t watched;         /* cgroups watched now */
} CgroupWatchState;

extern const ListenerSource listener_source_cgroup_watch;

/* NULL outside the source's life (before its start, after its stop). */
static CgroupWatchState *state_of(Listener *l) {
        return listener_source_state(l, &listener_source_cgroup_watch);
}

static CgroupWatch *watch_of(Listener *l) {
        CgroupWatchState *st = state_of(l);
        return st ? st->watch : NULL;
}

#define HOLD_MASK (IN_CREATE | IN_MOVED_TO | IN_ONLYDIR)

static void held_free(HeldUnit *h) {
        sd_event_source_disable_unref(h->source);
        safe_close(h->events_fd);
        free(h->cgroup);
        free(h);
}

static void pending_free(CgroupWatch *w) {
        for (size_t i = 0; i < w->n_pending; i++)
                free(w->pending[i].cgroup);
        w->pending = mfree(w->pending);
        w->n_pending = w->n_pending_allocated = 0;
}

/* Nobody will record them: thawed, as nothing the journal does not name
 * may stay frozen. */
static void thaw_unrecorded(CgroupWatch *w, int root_fd) {
        for (size_t i = 0; i < w->n_pending; i++) {
                _cleanup_close_ int cg = -EBADF;
                if (!w->pending[i].release && cgroup_open(root_fd, w->pending[i].cgroup, &cg) >= 0)
                        (void) cgroup_set_freeze(cg, false);
        }
        pending_free(w);
}

static void node_unref(WatchedCgroup *x) {
        while (x && --x->refs == 0) {
                WatchedCgroup *p = x->parent;
                free(x);
                x = p;
        }
}

static void cgroup_watch_free(CgroupWatch *w) {
        if (!w)
                return;
        thaw_unrecorded(w, w->listener->m.root_fd);
        while (w->freezing) {
                HeldUnit *h = w->freezing;
                w->freezing = h->next;
                held_free(h);
        }
        sd_event_source_disable_unref(w->source);
        safe_close(w->fd);
        for (size_t i = 0; i < w->n_watched; i++)
                node_unref(w->by_wd[i]);
        free(w->by_wd);
        strv_free(w->callers);
        free(w);
}

/* Where wd is in by_wd, or where it would go. */
static size_t wd_index(CgroupWatch *w, int wd) {
        size_t lo = 0, hi = w->n_watched;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (w->by_wd[mid]->wd < wd)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

static WatchedCgroup *watched_by_wd(CgroupWatch *w, int wd) {
        size_t i = wd_index(w, wd);
        return i < w->n_watched && w->by_wd[i]->wd == wd ? w->by_wd[i] : NULL;
}

/* x's path, and child's below it if not NULL: rebuilt from the names up to
 * the target's, when needed (an event), never kept. */
static char *node_path(const WatchedCgroup *x, const char *child) {
        size_t n = child ? strlen(child) + 1 : 0, k;
        char *s;

        for (const WatchedCgroup *p = x; p; p = p->parent)
                n += strlen(p->name) + (p->parent ? 1 : 0);
        s = malloc(n + 1);
        if (!s)
                return NULL;
        s[n] = 0;
        if (child) {
                k = strlen(child);
                n -= k;
                memcpy(s + n, child, k);
                s[--n] = '/';
        }
        for (const WatchedCgroup *p = x; p; p = p->parent) {
                k = strlen(p->name);
                n -= k;
                memcpy(s + n, p->name, k);
                if (p->parent)
                        s[--n] = '/';
        }
        return s;
}

/* Watches cg_fd (its path cgroup, its parent's entry parent; fresh: made
 * during standby) through its /proc/self/fd link, so that a path of any
 * length (and no lookup by name) is watched. Returns its entry, the one it
 * had if it is watched already (a walk again, after an overflow); -EDQUOT
 * past its account's share. */
static int watch_add(CgroupWatch *w, int cg_fd, const char *cgroup, WatchedCgroup *parent, bool fresh, bool held,
                     WatchedCgroup **ret) {
        const char *name = parent ? strrchr(cgroup, '/') : NULL;
        WatchedCgroup *x, *account = NULL;
        struct stat st, up;
        bool own_account = false;
        char p[64];
        size_t i;
        int wd;

        name = name ? name + 1 : cgroup;
        if (fstat(cg_fd, &st) < 0)
                return negative_errno();
        /* The parent's owner now: systemd makes a delegated cgroup as root
         * and hands it over after, maybe after it was watched. */
        if (parent && fstatat(cg_fd, "..", &up, 0) >= 0 && up.st_uid != 0) {
                if (!parent->account)
                        parent->account = parent;
                account = parent->account;
        } else
                own_account = st.st_uid != 0;
        /* A cgroup made just now is watched by nobody yet: refused before
         * a watch is added (and removed again). */
        if (fresh && account && account->n_account >= CGROUP_WATCH_UID_MAX)
                return -EDQUOT;
        snprintf(p, sizeof(p), "/proc/self/fd/%d", cg_fd);
        wd = inotify_add_watch(w->fd, p, HOLD_MASK);
        if (wd < 0)
                return negative_errno();
        if ((x = watched_by_wd(w, wd))) {
                *ret = x;
                return 0;
        }
        if (account && account->n_account >= CGROUP_WATCH_UID_MAX) {
                (void) inotify_rm_watch(w->fd, wd);
                return -EDQUOT;
        }
        if (!GROW_ARRAY(w->by_wd, w->n_allocated, w->n_watched + 1))
                goto nomem;
        x = malloc(offsetof(WatchedCgroup, name) + strlen(name) + 1);
        if (!x)
                goto nomem;
        *x = (WatchedCgroup) { .parent = parent, .account = account, .wd = wd, .held = held, .refs = 1 };
        strcpy(x->name, name);
        if (own_account)
                x->account = x;
        if (x->account)
                x->account->n_account++;
        if (parent)
                parent->refs++;
        /* wds come in rising order: nearly always appended. */
        i = wd_index(w, wd);
        memmove(w->by_wd + i + 1, w->by_wd + i, (w->n_watched - i) * sizeof(WatchedCgroup *));
        w->by_wd[i] = x;
        w->n_watched++;
        state_of(w->listener)->watched = w->n_watched;
        *ret = x;
        return 0;
nomem:
        (void) inotify_rm_watch(w->fd, wd);
        return -ENOMEM;
}

static void watch_forget(CgroupWatch *w, int wd) {
        size_t i = wd_index(w, wd);
        WatchedCgroup *x;

        if (i >= w->n_watched || w->by_wd[i]->wd != wd)
                return;
        x = w->by_wd[i];
        memmove(w->by_wd + i, w->by_wd + i + 1, (w->n_watched - i - 1) * sizeof(WatchedCgroup *));
        w->n_watched--;
        state_of(w->listener)->watched = w->n_watched;
        /* An account that became one after its own watch was counted
         * elsewhere (root's) counts only what was added below it since. */
        if (x->account && x->account->n_account > 0)
                x->account->n_account--;
        node_unref(x);
}

/* The cgroup of the listener or of a process above it (PID 1's): never
 * held, nor what lies below. */
static bool is_caller(CgroupWatch *w, const char *cgroup) {
        return strv_contains(w->callers, cgroup);
}

/* Systemd's name for where units are made: a slice, or user@UID.service
 * (UID in decimal). Believed only where root alone makes cgroups. */
static bool is_container_name(const char *cgroup) {
        const char *name = strrchr(cgroup, '/');
        size_t n;

        name = name ? name + 1 : cgroup;
        n = strlen(name);
        if (n > 6 && streq(name + n - 6, ".slice"))
                return true;
        return strneq(name, "user@", 5) && n > 13 && streq(name + n - 8, ".service") &&
               strspn(name + 5, "0123456789") == n - 13;
}

/* Whether only root can make cgroups where cg_fd is: asked now, as
 * systemd makes a delegated cgroup as root and hands it to its user after. */
static bool parent_owned_by_root(int cg_fd) {
        struct stat st;

        return fstatat(cg_fd, "..", &st, 0) >= 0 && st.st_uid == 0 && (st.st_mode & 0022) == 0;
}

/* Whether a process is in the cgroup itself (not below it). */
static bool has_own_processes(int cg_fd) {
        _cleanup_close_ int fd = openat(cg_fd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
        char c;

        /* Unreadable: taken as having some, so it stays held. */
        return fd < 0 || read(fd, &c, 1) != 0;
}

static int on_held_events(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        HeldUnit *h = userdata;
        CgroupWatch *w = h->watch;
        Listener *l = w->listener;
        bool frozen = false;
        int r;

        r = cgroup_read_events_fd(fd, &frozen, NULL);
        if (r >= 0 && !frozen)
                return 0;
        /* With the lock busy, it stays recorded freezing: exit thaws it all the same. */
        if (r >= 0 && (r = listener_journal_begin(l)) != -EAGAIN) {
                bool recorded = r >= 0 &&
                                listener_unit_record(l, h->cgroup, UNIT_EVENT_FROZEN, 0, HOLD_REASON) > 0;
                r = listener_journal_commit(l, recorded ? LISTENER_JOURNAL_RECORDED : LISTENER_JOURNAL_UNCHANGED);
                if (r < 0)
                        log_warning_errno(r, "Cannot record %s frozen (it stays recorded freezing): %m", h->cgroup);
        }
        for (HeldUnit **p = &w->freezing; *p; p = &(*p)->next)
                if (*p == h) {
                        *p = h->next;
                        break;
                }
        held_free(h);
        return 0;
}

/* Watches a held unit's cgroup.events until it says frozen 1; true if it
 * says so already. */
static bool watch_freezing(CgroupWatch *w, int cg_fd, const char *cgroup) {
        HeldUnit *h = calloc(1, sizeof(HeldUnit));
        bool frozen = false;
        int r = h ? 0 : -ENOMEM;

        if (h) {
                *h = (HeldUnit) { .watch = w, .events_fd = -EBADF, .cgroup = strdup(cgroup) };
                r = h->cgroup ? cgroup_open_events(cg_fd, &h->events_fd) : -ENOMEM;
        }
        if (r >= 0)
                r = sd_event_add_io(w->listener->event, &h->source, h->events_fd, EPOLLPRI, on_held_events, h);
        if (r >= 0)
                r = cgroup_read_events_fd(h->events_fd, &frozen, NULL); /* and arms POLLPRI */
        if (r < 0) {
                log_warning_errno(r, "Cannot watch %s freeze (it stays recorded freezing): %m", cgroup);
                if (h)
                        held_free(h);
                return false;
        }
        if (frozen) {
                /* Frozen by now: recorded by the caller, who holds the journal's lock. */
                held_free(h);
                return true;
        }
        h->next = w->freezing;
        w->freezing = h;
        return false;
}


static void pending_add(Listener *l, const char *cgroup, bool release) {
        CgroupWatch *w = watch_of(l);
        char *c = strdup(cgroup);

        if (!c || !GROW_ARRAY(w->pending, w->n_pending_allocated, w->n_pending + 1)) {
                free(c);
                log_error_errno(-ENOMEM, "Cannot record %s held (exit's walk thaws it): %m", cgroup);
                return;
        }
        w->pending[w->n_pending++] = (PendingHold) { .cgroup = c, .release = release };
        listener_enqueue(l, LISTENER_WORK_HOLDS);
}

/* Frozen now, recorded by the dispatcher at the end of the turn. The
 * journal's copy in memory says whether it is to be held (u: its unit
 * there, looked up by the caller, or NULL); the dispatcher asks the
 * journal itself again, and thaws what it should not hold. */
static void hold(Listener *l, int cg_fd, const char *cgroup, const JournalUnit *u) {
        CgroupWatch *w = watch_of(l);
        Journal *j = l->m.journal;
        int r;

        const UnitStrategy *us = j && j->per_unit ? config_unit_strategy(l->m.config, cgroup) : NULL;
        if (!j || j->phase != JOURNAL_ACTIVE ||
            (us ? us->none || us->strategy != STRATEGY_FREEZE : j->strategy != STRATEGY_FREEZE) ||
            (u && !unit_machine_allows(u->state, UNIT_EVENT_HOLD)) || w->n_pending >= PENDING_MAX) {
                state_of(l)->not_held++;
                return;
        }
        r = cgroup_set_freeze(cg_fd, true);
        if (r < 0) {
                if (r != -ENOENT && r != -ENODEV)
                        log_warning_errno(r, "Failed to hold %s, started during standby (it runs): %m", cgroup);
                return;
        }
        pending_add(l, cgroup, false);
}

typedef struct Visit {
        Listener *listener;
        bool top_is_new;          /* the walk began at a cgroup made just now */
        WatchedCgroup *top_parent;
        /* The entries of the cgroups above the one visited, and the
         * lengths of their paths: the walk goes depth first. */
        WatchedCgroup **stack;
        size_t *lens;
        size_t n_stack, n_allocated, n_lens_allocated;
} Visit;

static WatchedCgroup *visit_parent(Visit *v, const char *cgroup) {
        const char *slash = strrchr(cgroup, '/');
        size_t k = slash ? (size_t) (slash - cgroup) : 0;

        while (v->n_stack > 0 && v->lens[v->n_stack - 1] > k)
                v->n_stack--;
        if (v->n_stack > 0)
                return v->lens[v->n_stack - 1] == k ? v->stack[v->n_stack - 1] : NULL;
        return v->top_parent;
}

static int visit_push(Visit *v, WatchedCgroup *x, const char *cgroup) {
        if (!GROW_ARRAY(v->stack, v->n_allocated, v->n_stack + 1) ||
            !GROW_ARRAY(v->lens, v->n_lens_allocated, v->n_stack + 1)) {
                log_error_errno(-ENOMEM, "Cannot walk below %s: %m", cgroup);
                return CGROUP_WALK_SKIP;
        }
        v->stack[v->n_stack] = x;
        v->lens[v->n_stack++] = strlen(cgroup);
        return CGROUP_WALK_CONTINUE;
}

/* A container that cannot be watched (past its owner's share, or the
 * watch failed): held, and what is made below it is frozen with it. */
static int hold_unwatched(Listener *l, int fd, const char *cgroup, int r) {
        state_of(l)->unwatched++;
        log_debug_errno(r, "Not watching %s for units started during standby (held instead): %m", cgroup);
        hold(l, fd, cgroup, NULL);
        return CGROUP_WALK_SKIP;
}

/* A cgroup below a target: watched, held, or left alone (with what lies below). */
static int visit(int fd, const char *cgroup, void *userdata) {
        Visit *v = userdata;
        Listener *l = v->listener;
        CgroupWatch *w = watch_of(l);
        WatchedCgroup *parent = visit_parent(v, cgroup), *x = NULL;
        const JournalUnit *u;
        /* Below a cgroup made just now, everything is as new (made before
         * its watch was added). */
        bool is_new = v->top_is_new;
        struct stat st;
        int r;

        if (l->m.journal && (u = journal_find_unit(l->m.journal, cgroup))) {
                /* A unit standby froze: what is below is its own. Made anew
                 * under its name (restarted): the same unit, in the new
                 * cgroup, and the journal says what it is. */
                if (is_new) {
                        listener_unit_made_anew(l, cgroup, fd);
                        hold(l, fd, cgroup, u);
                }
                return CGROUP_WALK_SKIP;
        }
        if (is_caller(w, cgroup) || !select_may_hold(&l->m, NULL, cgroup)) {
                if (is_new)
                        state_of(l)->not_held++;
                return CGROUP_WALK_SKIP;
        }
        if (fstat(fd, &st) < 0)
                return CGROUP_WALK_SKIP; /* gone */
        if (!is_new) {
                /* Found by the walk at the start of standby: a leaf is left
                 * as enter left it (kernfs counts subdirectories in the link
                 * count): enter keeps its callers' cgroups running, which
                 * only it knows. */
                if (st.st_nlink == 2 && !is_container_name(cgroup))
                        return CGROUP_WALK_SKIP;
                r = watch_add(w, fd, cgroup, parent, false, false, &x);
                return r < 0 ? hold_unwatched(l, fd, cgroup, r) : visit_push(v, x, cgroup);
        }
        if (is_container_name(cgroup) && parent_owned_by_root(fd)) {
                /* Made where only root makes cgroups, under systemd's name
                 * for a container. */
                r = watch_add(w, fd, cgroup, parent, true, false, &x);
                return r < 0 ? hold_unwatched(l, fd, cgroup, r) : visit_push(v, x, cgroup);
        }
        /* Watched before it is looked at: a child made after the look is
         * seen by the watch. */
        r = watch_add(w, fd, cgroup, parent, true, true, &x);
        if (r >= 0 && st.st_nlink > 2 && !has_own_processes(fd)) {
                /* A container already: its children are the new work. */
                x->held = false;
                return visit_push(v, x, cgroup);
        }
        /* Past its owner's share, or no watch left (root's inotify limit):
         * what is made in it is frozen with it. Counted, not logged: a
         * user makes as many as they like. */
        if (r < 0) {
                log_debug_errno(r, "Not watching %s for cgroups made in it: %m", cgroup);
                state_of(l)->unwatched++;
        }
        hold(l, fd, cgroup, NULL);
        return CGROUP_WALK_SKIP;
}

static void walk(Listener *l, const char *top, bool is_new, WatchedCgroup *parent) {
        Visit v = { .listener = l, .top_is_new = is_new, .top_parent = parent };
        int r = cgroup_walk(l->m.root_fd, top, visit, &v);

        free(v.stack);
        free(v.lens);
        if (r > 0)
                log_warning("%d cgroups below %s cannot be walked: units started in them during standby run.", r,
                            top);
        else if (r < 0 && r != -ENOENT)
                log_warning_errno(r, "Cannot walk %s for units started during standby: %m", top);
}

static void walk_targets(Listener *l) {
        _cleanup_strv_free_ char **targets = NULL;

        if (select_targets(&l->m, &targets) < 0)
                return;
        for (char **t = targets; *t; t++)
                walk(l, *t, false, NULL);
}

/* A cgroup made in x (name, a path of x's). */
static void on_made(Listener *l, WatchedCgroup *x, const char *name) {
        _cleanup_free_ char *cgroup = NULL, *parent = NULL;

        if (x->held) {
                _cleanup_close_ int fd = -EBADF;

                /* A held cgroup with a child: with a process of its own it
                 * stays held and the child is frozen with it; with none, it
                 * is a container: the child is held, and the container
                 * thawed and forgotten once the child is frozen. */
                parent = node_path(x, NULL);
                if (!parent)
                        return (void) log_error_errno(-ENOMEM, "Cannot hold a unit started during standby: %m");
                if (cgroup_open(l->m.root_fd, parent, &fd) < 0)
                        return;
                if (has_own_processes(fd))
                        return;
                x->held = false;
        }
        cgroup = node_path(x, name);
        if (!cgroup)
                return (void) log_error_errno(-ENOMEM, "Cannot hold a unit started during standby: %m");
        /* Forgotten before the child is recorded, so that it does not take
         * the child's room in the budget; thawed after the child froze. */
        if (parent)
                pending_add(l, parent, true);
        walk(l, cgroup, true, x);
}

static int on_inotify(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Listener *l = userdata;
        union {
                struct inotify_event ev;
                char raw[8 * 1024];
        } buf;
        ssize_t n;

        /* One read per turn of the loop. */
        n = read(fd, &buf, sizeof(buf));
        if (n < 0)
                return errno == EAGAIN || errno == EINTR ? 0 : log_warning_errno(-errno, "inotify: %m");
        /* A full read may leave more: then the source waits its turn with
         * the others (a push, a key) until a read empties the queue, as
         * sd-event takes a higher priority first however long the others
         * waited; cgroups made at most one read apart are all judged
         * before what came after them. */
        bool more = (size_t) n > sizeof(buf) - sizeof(struct inotify_event) - NAME_MAX - 1;
        (void) sd_event_source_set_priority(s, more ? SD_EVENT_PRIORITY_NORMAL : SD_EVENT_PRIORITY_IMPORTANT);
        for (char *p = buf.raw; p < buf.raw + n;) {
                struct inotify_event *ev = (struct inotify_event *) p;
                WatchedCgroup *x;

                p += sizeof(struct inotify_event) + ev->len;
                /* The watcher may go (standby left) while events are in hand. */
                if (!watch_of(l) || !listener_standby_active(l) || listener_exiting(l))
                        return 0;
                if (ev->mask & IN_Q_OVERFLOW) {
                        l->stats.resyncs++;
                        walk_targets(l);
                        continue;
                }
                if (ev->mask & IN_IGNORED) {
                        watch_forget(watch_of(l), ev->wd);
                        continue;
                }
                if (!(ev->mask & IN_ISDIR) || ev->len == 0 || !(x = watched_by_wd(watch_of(l), ev->wd)))
                        continue;
                on_made(l, x, ev->name);
        }
        return 0;
}

void listener_cgroup_watch_record(Listener *l) {
        CgroupWatch *w = watch_of(l);
        PendingHold *todo;
        size_t n, n_held = 0;
        const char *first = NULL;
        bool changed = false;
        int r;

        if (!w || w->n_pending == 0)
                return;
        r = listener_journal_begin(l);
        if (r == -EAGAIN)
                return; /* frozen meanwhile: recorded once the lock is free (LISTENER_WORK_LOCK_FREE) */
        todo = TAKE_PTR(w->pending);
        n = w->n_pending;
        w->n_pending = w->n_pending_allocated = 0;
        listener_held_jobs_sweep(l);
        for (size_t i = 0; i < n; i++) {
                _cleanup_close_ int cg = -EBADF;
                const char *c = todo[i].cgroup;
                JournalUnit *u;
                int k;

                if (cgroup_open(l->m.root_fd, c, &cg) < 0)
                        continue; /* gone */
                if (todo[i].release) {
                        /* Held, and a container after all: its child holds
                         * the work. Left alone if the journal has it
                         * otherwise now (thawed for a window). */
                        u = r >= 0 ? journal_find_unit(l->m.journal, c) : NULL;
                        bool forget = u && u->held_uid != JOURNAL_NOT_HELD &&
                                      unit_machine_allows(u->state, UNIT_EVENT_RELEASE);
                        if (forget && listener_unit_record(l, c, UNIT_EVENT_RELEASE, 0, NULL) > 0)
                                changed = true;
                        if (!u || forget)
                                (void) cgroup_set_freeze(cg, false);
                        continue;
                }
                k = r >= 0 ? freeze_hold(&l->m, c, cg) : r;
                if (k > 0) {
                        changed = true;
                        state_of(l)->held++;
                        if (n_held++ == 0)
                                first = c;
                        log_debug("Held %s: started during standby.", c);
                        /* Added last, or listed already. */
                        u = &l->m.journal->units[l->m.journal->n_units - 1];
                        if (!streq(u->cgroup, c))
                                u = journal_find_unit(l->m.journal, c);
                        if (u && unit_machine_allows(u->state, UNIT_EVENT_FROZEN) && watch_freezing(w, cg, c))
                                (void) listener_unit_record(l, c, UNIT_EVENT_FROZEN, 0, HOLD_REASON);
                        listener_release_timer_job(l, cg, c);
                } else {
                        /* Standby ended meanwhile, past the budget, or it is
                         * a window's: not ours to keep frozen. */
                        (void) cgroup_set_freeze(cg, false);
                        if (k == 0)
                                state_of(l)->not_held++;
                        else if (k != -ENOENT && r >= 0)
                                log_warning_errno(k, "Failed to hold %s, started during standby (it runs): %m", c);
                }
        }
        if (r >= 0) {
                r = listener_journal_commit(l, changed ? LISTENER_JOURNAL_RECORDED : LISTENER_JOURNAL_UNCHANGED);
                if (r < 0)
                        log_warning_errno(r, "Cannot record the units held during standby (exit's walk thaws them): %m");
        }
        /* One line a turn, however many a user makes. */
        if (n_held == 1)
                log_info("Held %s: started during standby.", first);
        else if (n_held > 1)
                log_info("Held %s and %zu more: started during standby.", first, n_held - 1);
        for (size_t i = 0; i < n; i++)
                free(todo[i].cgroup);
        free(todo);
}

static void watch_stop(Listener *l);

/* Watches while standby is active, and only then. */
int listener_cgroup_watch_sync(Listener *l) {
        CgroupWatch *w;
        int r;

        if (!listener_standby_active(l) || listener_exiting(l)) {
                watch_stop(l);
                return 0;
        }
        if (!state_of(l) || state_of(l)->watch)
                return 0;
        w = calloc(1, sizeof(CgroupWatch));
        if (!w)
                return -ENOMEM;
        w->listener = l;
        w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (w->fd < 0) {
                r = negative_errno();
                goto fail;
        }
        r = select_callers(&w->callers);
        if (r < 0)
                goto fail;
        r = sd_event_add_io(l->event, &w->source, w->fd, EPOLLIN, on_inotify, l);
        /* A new unit is held before any other event pending beside it is
         * taken: the sooner the freeze lands, the less the unit runs. And a
         * D-Bus call made after a cgroup was created is answered after the
         * listener has judged that cgroup. */
        if (r >= 0)
                r = sd_event_source_set_priority(w->source, SD_EVENT_PRIORITY_IMPORTANT);
        if (r < 0)
                goto fail;
        state_of(l)->watch = w;
        walk_targets(l);
        return 0;
fail:
        cgroup_watch_free(w);
        return log_warning_errno(r, "Cannot watch for units started during standby (they run): %m");
}

static void watch_stop(Listener *l) {
        CgroupWatchState *st = state_of(l);

        if (st) {
                cgroup_watch_free(TAKE_PTR(st->watch));
                st->watched = 0;
        }
        listener_held_jobs_drop(l);
}

/* No Event= kind of its own: it acts on new cgroups, not for rules; set up
 * by the journal's changes (listener_cgroup_watch_sync()). */
const ListenerSource listener_source_cgroup_watch = {
        .name = "cgroup",
        .state_size = sizeof(CgroupWatchState),
        .statistics = (const ListenerStatistic[]) { LISTENER_SOURCE_STATISTIC(CgroupWatchState, held),
                                                      LISTENER_SOURCE_STATISTIC(CgroupWatchState, not_held),
                                                      LISTENER_SOURCE_STATISTIC(CgroupWatchState, unwatched),
                                                      LISTENER_SOURCE_STATISTIC(CgroupWatchState, watched), {} },
        .stop = watch_stop,
};
