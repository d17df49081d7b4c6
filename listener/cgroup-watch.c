/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* New work held during standby: a cgroup that appears below the targets
 * (a timer's service, a socket-activated service, a unit a user starts)
 * is frozen the moment it is made, before any process of it runs.
 *
 * While standby is active, every cgroup below the targets that may get new
 * units in it (the targets and the cgroups between them and the units) has
 * an inotify watch for IN_CREATE: a mkdir on cgroupfs raises it in the
 * parent, and inotify is one file descriptor in the loop that wakes only
 * when a cgroup is made. What is below a unit the journal names is not
 * watched: a cgroup made below a frozen one is frozen by the kernel, one
 * below a unit thawed for a window belongs to the window.
 *
 * A new cgroup is held (freeze_hold(): recorded, then frozen through
 * cgroup.freeze) at once, while it is still empty; a process moved into a
 * frozen cgroup is frozen before it returns to user space, so systemd's
 * child for the unit never reaches its exec. Not held: what enter would
 * not freeze (Exempt=, session scopes, the listener's own cgroups,
 * standby's own units: select_may_hold()), slices
 * (containers of units: watched instead), and user@UID.service (the user
 * manager starts in it before it moves into its init.scope, which is
 * exempt; a new login waits for it), which is watched as well. A new
 * cgroup of the name of a unit the journal lists is that unit's: frozen
 * again if the journal says frozen, left to its window if thawed.
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

typedef struct WatchedCgroup {
        int wd;
        char *cgroup;
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

typedef struct CgroupWatch {
        Listener *listener;
        int fd;                   /* inotify */
        sd_event_source *source;
        HeldUnit *freezing;
        char **unrecorded;        /* frozen while another process held the journal's lock: recorded once it is free */
        WatchedCgroup *watched;
        size_t n_watched, n_allocated;
        char **callers;           /* the listener's own cgroups and its ancestors': never held */
} CgroupWatch;

/* The source's state: the watch while standby is active, and what it did. */
typedef struct CgroupWatchState {
        CgroupWatch *watch;
        uint64_t held;            /* cgroups made below the targets during standby, held */
        uint64_t not_held;        /* such cgroups left running: exempt, a session, a unit's own */
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

/* Nobody will record them: thawed, as nothing the journal does not name
 * may stay frozen. */
static void thaw_unrecorded(CgroupWatch *w, int root_fd) {
        for (char **c = w->unrecorded; c && *c; c++) {
                _cleanup_close_ int cg = -EBADF;
                if (cgroup_open(root_fd, *c, &cg) >= 0)
                        (void) cgroup_set_freeze(cg, false);
        }
        w->unrecorded = strv_free(w->unrecorded);
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
                free(w->watched[i].cgroup);
        free(w->watched);
        strv_free(w->callers);
        free(w);
}

static WatchedCgroup *watched_by_wd(CgroupWatch *w, int wd) {
        for (size_t i = 0; i < w->n_watched; i++)
                if (w->watched[i].wd == wd)
                        return &w->watched[i];
        return NULL;
}

/* cg_fd, opened beneath the root: watched through its /proc/self/fd link,
 * so that a path of any length (and no lookup by name) is watched. */
static int watch_add(CgroupWatch *w, int cg_fd, const char *cgroup) {
        char p[64];
        WatchedCgroup *x;
        char *c;
        int wd;

        snprintf(p, sizeof(p), "/proc/self/fd/%d", cg_fd);
        wd = inotify_add_watch(w->fd, p, HOLD_MASK);
        if (wd < 0)
                return negative_errno();
        c = strdup(cgroup);
        if (!c)
                return -ENOMEM;
        if ((x = watched_by_wd(w, wd))) { /* watched already (a walk again, after an overflow) */
                free(x->cgroup);
                x->cgroup = c;
                return 0;
        }
        if (w->n_watched == w->n_allocated) {
                size_t n = MAX(w->n_allocated * 2, (size_t) 16);
                WatchedCgroup *a = reallocarray(w->watched, n, sizeof(WatchedCgroup));
                if (!a) {
                        free(c);
                        return -ENOMEM;
                }
                w->watched = a;
                w->n_allocated = n;
        }
        w->watched[w->n_watched++] = (WatchedCgroup) { .wd = wd, .cgroup = c };
        return 0;
}

static void watch_forget(CgroupWatch *w, int wd) {
        for (size_t i = 0; i < w->n_watched; i++)
                if (w->watched[i].wd == wd) {
                        free(w->watched[i].cgroup);
                        w->watched[i] = w->watched[--w->n_watched];
                        return;
                }
}

/* The cgroup of the listener or of a process above it (PID 1's): never
 * held, nor what lies below. */
static bool is_caller(CgroupWatch *w, const char *cgroup) {
        return strv_contains(w->callers, cgroup);
}

/* Where units are made: watched, never held. */
static bool is_container(const char *cgroup) {
        const char *name = strrchr(cgroup, '/');
        size_t n;

        name = name ? name + 1 : cgroup;
        n = strlen(name);
        if (n > 6 && streq(name + n - 6, ".slice"))
                return true;
        /* user@UID.service, UID in decimal */
        return strneq(name, "user@", 5) && n > 13 && streq(name + n - 8, ".service") &&
               strspn(name + 5, "0123456789") == n - 13;
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
                bool recorded = r >= 0 && freeze_record(&l->m, h->cgroup, UNIT_STATE_MASK(UNIT_FREEZING), UNIT_FROZEN,
                                                        0, HOLD_REASON) > 0;
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

static void hold(Listener *l, int cg_fd, const char *cgroup) {
        CgroupWatch *w = watch_of(l);
        JournalUnit *u;
        int r;

        /* The listener never waits for the journal's lock. While a manager
         * verb holds it, the unit is frozen now and recorded once the lock
         * is free (listener_cgroup_watch_retry()): exit's walk thaws
         * whatever is frozen below the targets, recorded or not, so
         * freezing first loses nothing of exit's promise. */
        r = listener_journal_begin(l);
        if (r == -EAGAIN) {
                if (strv_contains(w->unrecorded, cgroup))
                        return;
                r = cgroup_set_freeze(cg_fd, true);
                if (r >= 0 && (r = strv_extend(&w->unrecorded, cgroup)) < 0)
                        (void) cgroup_set_freeze(cg_fd, false);
                if (r < 0 && r != -ENOENT)
                        log_warning_errno(r, "Failed to hold %s, started during standby (it runs): %m", cgroup);
                if (r >= 0)
                        log_debug("Held %s; recorded once the journal's lock is free.", cgroup);
                return;
        }
        if (r >= 0)
                r = freeze_hold(&l->m, cgroup, cg_fd);
        /* Frozen by now: recorded so at once, saved with the hold. */
        bool frozen = r > 0 && (u = journal_find_unit(l->m.journal, cgroup)) && u->state == UNIT_FREEZING &&
                      watch_freezing(watch_of(l), cg_fd, cgroup) &&
                      freeze_record(&l->m, cgroup, UNIT_STATE_MASK(UNIT_FREEZING), UNIT_FROZEN, 0, HOLD_REASON) > 0;
        (void) listener_journal_commit(l, frozen ? LISTENER_JOURNAL_RECORDED :
                                          r > 0  ? LISTENER_JOURNAL_SAVED : LISTENER_JOURNAL_UNCHANGED);
        if (r > 0) {
                state_of(l)->held++;
                log_info("Held %s: started during standby.", cgroup);
                listener_release_timer_job(l, cg_fd, cgroup);
        } else if (r == 0)
                state_of(l)->not_held++;
        else if (r != -ENOENT)
                log_warning_errno(r, "Failed to hold %s, started during standby (it runs): %m", cgroup);
}

typedef struct Visit {
        Listener *listener;
        bool top_is_new;          /* the walk began at a cgroup made just now */
} Visit;

/* A cgroup below a target: watched, held, or left alone (with what lies below). */
static int visit(int fd, const char *cgroup, void *userdata) {
        Visit *v = userdata;
        Listener *l = v->listener;
        CgroupWatch *w = watch_of(l);
        /* Below a cgroup made just now, everything is as new (made before
         * its watch was added). */
        bool is_new = v->top_is_new;
        struct stat st;
        int r;

        if (l->m.journal && journal_find_unit(l->m.journal, cgroup)) {
                /* A unit standby froze: what is below is its own. Made anew
                 * under its name (restarted): the same unit, in the new
                 * cgroup, and the journal says what it is. */
                if (is_new) {
                        listener_unit_made_anew(l, cgroup, fd);
                        hold(l, fd, cgroup);
                }
                return CGROUP_WALK_SKIP;
        }
        if (is_caller(w, cgroup) || !select_may_hold(&l->m, NULL, cgroup)) {
                if (is_new)
                        state_of(l)->not_held++;
                return CGROUP_WALK_SKIP;
        }
        /* A new cgroup that is no container is a unit: held. A leaf found
         * by the walk at the start of standby is left as enter left it
         * (kernfs counts subdirectories in the link count): enter keeps
         * its callers' cgroups running, which only it knows. */
        if (is_new && !is_container(cgroup)) {
                hold(l, fd, cgroup);
                return CGROUP_WALK_SKIP;
        }
        if (!is_new && !is_container(cgroup) && fstat(fd, &st) >= 0 && st.st_nlink == 2)
                return CGROUP_WALK_SKIP;
        r = watch_add(w, fd, cgroup);
        if (r < 0)
                log_warning_errno(r, "Cannot watch %s for units started during standby: %m", cgroup);
        return CGROUP_WALK_CONTINUE;
}

static void walk(Listener *l, const char *top, bool is_new) {
        Visit v = { .listener = l, .top_is_new = is_new };
        int r = cgroup_walk(l->m.root_fd, top, visit, &v);

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
                walk(l, *t, false);
}

static int on_inotify(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Listener *l = userdata;
        union {
                struct inotify_event ev;
                char raw[64 * 1024];
        } buf;

        for (;;) {
                ssize_t n = read(fd, &buf, sizeof(buf));
                if (n < 0)
                        return errno == EAGAIN || errno == EINTR ? 0 : log_warning_errno(-errno, "inotify: %m");
                for (char *p = buf.raw; p < buf.raw + n;) {
                        struct inotify_event *ev = (struct inotify_event *) p;
                        _cleanup_free_ char *cgroup = NULL;
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
                        if (asprintf(&cgroup, "%s/%s", x->cgroup, ev->name) < 0)
                                return log_error_errno(-ENOMEM, "Cannot hold a unit started during standby: %m");
                        walk(l, cgroup, true);
                }
        }
}

void listener_cgroup_watch_retry(Listener *l) {
        CgroupWatch *w = watch_of(l);
        _cleanup_strv_free_ char **todo = NULL;
        int r;

        if (!w || !w->unrecorded)
                return;
        r = listener_journal_begin(l);
        if (r == -EAGAIN)
                return;
        todo = TAKE_PTR(w->unrecorded);
        for (char **c = todo; *c; c++) {
                _cleanup_close_ int cg = -EBADF;

                if (cgroup_open(l->m.root_fd, *c, &cg) < 0)
                        continue; /* gone */
                r = r >= 0 ? freeze_hold(&l->m, *c, cg) : r;
                if (r > 0) {
                        state_of(l)->held++;
                        log_info("Held %s: started during standby.", *c);
                        listener_release_timer_job(l, cg, *c);
                } else {
                        /* Standby ended meanwhile, or it is a window's: not ours to keep frozen. */
                        (void) cgroup_set_freeze(cg, false);
                        if (r == 0)
                                state_of(l)->not_held++;
                }
        }
        /* freeze_hold() saved each one it held. */
        (void) listener_journal_commit(l, LISTENER_JOURNAL_SAVED);
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

        if (st)
                cgroup_watch_free(TAKE_PTR(st->watch));
        listener_held_jobs_drop(l);
}

/* No Event= kind of its own: it acts on new cgroups, not for rules; set up
 * by the journal's changes (listener_cgroup_watch_sync()). */
const ListenerSource listener_source_cgroup_watch = {
        .name = "cgroup",
        .state_size = sizeof(CgroupWatchState),
        .statistics = (const ListenerStatistic[]) { LISTENER_SOURCE_STATISTIC(CgroupWatchState, held),
                                                      LISTENER_SOURCE_STATISTIC(CgroupWatchState, not_held), {} },
        .stop = watch_stop,
};
