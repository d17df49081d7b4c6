/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Apps are told, and may finish: standby's own inhibitor locks, beside
 * logind's and shaped like them.
 *
 * Before standby freezes anything the listener sends PrepareForStandby(true)
 * on the system bus; once standby is left and everything thawed,
 * PrepareForStandby(false). An app that needs a moment first takes a delay
 * lock (Inhibit("standby", who, why, "delay") -> fd) and closes the fd when
 * it is ready: the freeze waits until every delay lock is closed or
 * InhibitDelayMaxSec= has passed, whichever comes first. A block lock keeps
 * the policy (lid, power key, idle) from entering standby at all; an
 * explicit entry by root (`systemctl start standby.target`) still enters.
 *
 * Every local user is hostile, and may take locks: a user (neither root nor
 * in Group=) holds at most LISTENER_INHIBITORS_PER_USER_MAX, and users
 * together leave LISTENER_INHIBITORS_RESERVED of the LISTENER_INHIBITORS_MAX
 * slots free for root and Group=. A user's delay lock holds off one entry
 * at most: a user whose delay lock is still held when InhibitDelayMaxSec=
 * runs out is told of later entries as everyone is, but its delay locks
 * are no longer waited for (until the listener restarts). So the delay
 * users add to an entry is at most InhibitDelayMaxSec=, and a given user
 * adds it to one entry only; a lock closed in time, as an app that was told
 * does, never marks its user. Root's and Group='s locks are always waited
 * for, up to InhibitDelayMaxSec=.
 *
 * The fd handed out is the write end of a pipe whose read end the listener
 * watches: the lock ends when every copy of it is closed (the app exits,
 * crashes, or closes it), which the pipe reports as a hang-up. Nothing here
 * waits: the freeze's caller (PrepareEntry, from `standby-manager enter`)
 * gets its answer when the delay ends. */
#include <fcntl.h>
#include <sys/epoll.h>

#include "bus-owner.h"
#include "json.h"
#include "listener.h"
#include "log.h"

struct Inhibitor {
        Listener *listener;
        char *who, *why;
        bool block;
        bool privileged;         /* root or Group=: from the reserved slots, always waited for */
        uid_t uid;
        pid_t pid;
        sd_event_source *source; /* owns the pipe's read end */
        struct Inhibitor *next;
};

static size_t count_locks(Listener *l, int block, uid_t uid) {
        size_t n = 0;
        for (Inhibitor *i = l->inhibitors; i; i = i->next)
                if ((block < 0 || i->block == (block > 0)) && (uid == (uid_t) -1 || i->uid == uid))
                        n++;
        return n;
}

static size_t count_all(Listener *l, uid_t uid) {
        return count_locks(l, -1, uid);
}

static size_t count_unprivileged(Listener *l) {
        size_t n = 0;
        for (Inhibitor *i = l->inhibitors; i; i = i->next)
                n += !i->privileged;
        return n;
}

static bool uid_is_late(Listener *l, uid_t uid) {
        for (size_t k = 0; k < l->n_late_uids; k++)
                if (l->late_uids[k] == uid)
                        return true;
        /* With the table full, any user may be one that outlasted a
         * delay: none is waited for (they are still told). */
        return l->n_late_uids == LISTENER_LATE_UIDS_MAX;
}

/* Whether an entry waits for i to close. */
static bool waited_for(Listener *l, const Inhibitor *i) {
        return !i->block && (i->privileged || !uid_is_late(l, i->uid));
}

static size_t count_waited(Listener *l) {
        size_t n = 0;
        for (Inhibitor *i = l->inhibitors; i; i = i->next)
                n += waited_for(l, i);
        return n;
}

/* The delay ran out with i still held: its user's delay locks are not
 * waited for again. */
static void mark_late(Listener *l, const Inhibitor *i) {
        if (i->privileged || uid_is_late(l, i->uid))
                return;
        l->late_uids[l->n_late_uids++] = i->uid;
        log_notice("Delay lock of %s (uid %u, pid %d) still held when the delay ran out: the delay locks of uid %u "
                   "are no longer waited for.",
                   i->who, (unsigned) i->uid, (int) i->pid, (unsigned) i->uid);
}

static void inhibitor_free(Inhibitor *i) {
        if (!i)
                return;
        sd_event_source_disable_unref(i->source);
        free(i->who);
        free(i->why);
        free(i);
}

#define TOLD_WITHOUT_ENTRY_USEC (5 * USEC_PER_SEC) /* see on_told_timeout */
static int on_told_timeout(sd_event_source *s, uint64_t usec, void *userdata);

/* The delay is over: everyone waiting for it is answered. */
static void announce_finish(Listener *l, bool timed_out) {
        void (*done)(Listener *) = l->announce_done;

        if (l->phase != LISTENER_PHASE_ANNOUNCING && !l->announce_timer && l->n_announce_calls == 0)
                return;
        if (l->phase == LISTENER_PHASE_ANNOUNCING)
                listener_set_phase(l, LISTENER_PHASE_TOLD, timed_out ? "the apps' delay ran out" : "apps are ready");
        l->announce_timer = sd_event_source_disable_unref(l->announce_timer);
        if (timed_out) {
                log_notice("%zu delay locks still held after %.1f s: freezing all the same.", count_waited(l),
                           (double) l->announce_max / USEC_PER_SEC);
                for (Inhibitor *i = l->inhibitors; i; i = i->next)
                        if (waited_for(l, i))
                                mark_late(l, i);
        } else
                log_info("Apps are ready for standby.");
        for (size_t k = 0; k < l->n_announce_calls; k++) {
                (void) sd_bus_reply_method_return(l->announce_calls[k], NULL);
                sd_bus_message_unref(l->announce_calls[k]);
        }
        l->announce_calls = mfree(l->announce_calls);
        l->n_announce_calls = 0;
        l->announce_done = NULL;
        l->told_timer = sd_event_source_disable_unref(l->told_timer);
        if (listener_apps_told(l) && !listener_standby_active(l) &&
            sd_event_add_time_relative(l->event, &l->told_timer, CLOCK_MONOTONIC, TOLD_WITHOUT_ENTRY_USEC, USEC_PER_SEC,
                                       on_told_timeout, l) < 0)
                log_warning("Cannot time the apps' wait for standby: if none follows, they are told when one ends.");
        if (done)
                done(l);
}

/* Apps told that standby begins hear that it did not when no enter follows
 * the delay: an enter that failed before touching the journal, a
 * PrepareEntry with no enter after it, a freeze before a sleep not begun.
 * An enter waiting for the journal's lock (held by another standby-manager)
 * is waited for. */
static int on_told_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Listener *l = userdata;
        int fd = -EBADF;

        l->told_timer = sd_event_source_disable_unref(l->told_timer);
        if (!listener_apps_told(l) || l->phase == LISTENER_PHASE_ANNOUNCING || !listener_standby_over(l))
                return 0; /* standby began: (false) once it is over */
        if (journal_lock(l->m.state_fd, LOCK_SH | LOCK_NB, &fd) < 0) {
                (void) sd_event_add_time_relative(l->event, &l->told_timer, CLOCK_MONOTONIC, TOLD_WITHOUT_ENTRY_USEC,
                                                  USEC_PER_SEC, on_told_timeout, l);
                return 0;
        }
        safe_close(fd);
        log_info("No standby followed the apps' delay.");
        listener_announce_end(l);
        return 0;
}

static int on_announce_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        announce_finish(userdata, true);
        return 0;
}

static int on_lock_fd(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Inhibitor *i = userdata;
        Listener *l = i->listener;

        if (!(revents & (EPOLLHUP | EPOLLERR)))
                return 0;
        log_debug("%s lock of %s (uid %u, pid %d) released.", i->block ? "Block" : "Delay", i->who, (unsigned) i->uid,
                  (int) i->pid);
        for (Inhibitor **p = &l->inhibitors; *p; p = &(*p)->next)
                if (*p == i) {
                        *p = i->next;
                        break;
                }
        bool was_delay = !i->block;
        inhibitor_free(i);
        listener_enqueue(l, LISTENER_WORK_INHIBITORS_CHANGED);
        if (was_delay && l->phase == LISTENER_PHASE_ANNOUNCING && count_waited(l) == 0)
                announce_finish(l, false);
        if (!was_delay && !listener_blocked(l, NULL))
                listener_enqueue(l, LISTENER_WORK_BLOCKS_CHANGED);
        return 0;
}

/* who and why are shown to root (status, ListInhibitors): no controls, C1
 * and bidi ones included, which a terminal may act on. */
static bool text_is_sane(const char *s) {
        size_t n = strlen(s);
        if (n == 0 || n > 256)
                return false;
        for (const char *p = s; *p; p += n) {
                n = utf8_char_len(p);
                if (n == 0 || utf8_is_control(p, n))
                        return false;
        }
        return true;
}

int listener_method_inhibit(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Listener *l = userdata;
        const char *what, *who, *why, *mode;
        _cleanup_close_ int rfd = -EBADF, wfd = -EBADF;
        bool privileged = false, block;
        Inhibitor *i;
        uid_t uid;
        pid_t pid;
        int r, p[2];

        r = sd_bus_message_read(msg, "ssss", &what, &who, &why, &mode);
        if (r < 0)
                return r;
        if (!streq(what, "standby"))
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "What=\"%s\": only \"standby\" is known.", what);
        if (!streq(mode, "delay") && !streq(mode, "block"))
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "Mode \"%s\": expected \"delay\" or \"block\".", mode);
        if (!text_is_sane(who) || !text_is_sane(why))
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Who and why: 1 to 256 printable characters each.");
        block = streq(mode, "block");
        r = listener_caller(l, msg, listener_method_inhibit, &uid, &pid, &privileged, error);
        if (r != 0)
                return r;
        /* Every local user is hostile: a block lock held forever would keep
         * the machine out of standby, so only root, Group= and whom polkit
         * allows (by default, the user at the machine) may take one unless
         * the administrator lets every user (UsersMayBlock=yes); a delay
         * lock is bounded by InhibitDelayMaxSec= whoever holds it. */
        if (block && !privileged && !l->m.config->users_may_block) {
                r = listener_check_access(l, msg, "org.standby.inhibit-block",
                                          "take a block lock (UsersMayBlock=no) from", listener_method_inhibit, error);
                if (r != 0)
                        return r;
        }
        privileged = privileged || uid == 0;
        if (count_all(l, (uid_t) -1) >= LISTENER_INHIBITORS_MAX ||
            (uid != 0 && count_all(l, uid) >= LISTENER_INHIBITORS_PER_USER_MAX) ||
            (!privileged && count_unprivileged(l) >= LISTENER_INHIBITORS_MAX - LISTENER_INHIBITORS_RESERVED))
                return sd_bus_error_setf(error, "org.standby.Listener1.TooManyLocks",
                                         "Too many locks (at most %d, %d for each user but root, %d of them "
                                         "kept for root%s).",
                                         LISTENER_INHIBITORS_MAX, LISTENER_INHIBITORS_PER_USER_MAX,
                                         LISTENER_INHIBITORS_RESERVED, l->m.config->group ? " and Group=" : "");

        if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
                return -errno;
        rfd = p[0];
        wfd = p[1];
        i = calloc(1, sizeof(Inhibitor));
        if (!i)
                return -ENOMEM;
        *i = (Inhibitor) { .listener = l, .who = strdup(who), .why = strdup(why), .block = block,
                           .privileged = privileged, .uid = uid, .pid = pid };
        if (!i->who || !i->why) {
                inhibitor_free(i);
                return -ENOMEM;
        }
        /* The hang-up alone (epoll reports it unasked): what an app writes
         * into its lock stays there, and cannot wake the listener. */
        r = sd_event_add_io(l->event, &i->source, rfd, 0, on_lock_fd, i);
        if (r < 0) {
                inhibitor_free(i);
                return r;
        }
        (void) sd_event_source_set_io_fd_own(i->source, true);
        TAKE_FD(rfd);
        bool first_block = block && !listener_blocked(l, NULL);
        i->next = l->inhibitors;
        l->inhibitors = i;
        if (first_block)
                listener_enqueue(l, LISTENER_WORK_BLOCKS_CHANGED);
        listener_enqueue(l, LISTENER_WORK_INHIBITORS_CHANGED);
        log_info("%s lock on standby taken by %s (uid %u, pid %d): %s.", block ? "Block" : "Delay", who, (unsigned) uid,
                 (int) pid, why);
        return sd_bus_reply_method_return(msg, "h", wfd); /* sends a copy; ours closes here */
}

/* The locks as logind lists its own: what, who, why, mode, uid, pid. */
static int append_inhibitors(Listener *l, sd_bus_message *m) {
        int r = sd_bus_message_open_container(m, 'a', "(ssssuu)");
        for (Inhibitor *i = l->inhibitors; r >= 0 && i; i = i->next)
                r = sd_bus_message_append(m, "(ssssuu)", "standby", i->who, i->why, i->block ? "block" : "delay",
                                          (uint32_t) i->uid, (uint32_t) i->pid);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

int listener_method_list_inhibitors(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_message_new_method_return(msg, &reply);
        if (r >= 0)
                r = append_inhibitors(userdata, reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

int listener_property_inhibitors(sd_bus *bus, const char *path, const char *interface, const char *property,
                                 sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return append_inhibitors(userdata, reply);
}

void listener_announce(Listener *l, sd_bus_message *call, void (*done)(Listener *l), usec_t max_delay) {
        if (call) {
                sd_bus_message **n = realloc(l->announce_calls, (l->n_announce_calls + 1) * sizeof(*n));
                if (!n) {
                        (void) sd_bus_reply_method_errno(call, ENOMEM, NULL);
                        return;
                }
                l->announce_calls = n;
                l->announce_calls[l->n_announce_calls++] = sd_bus_message_ref(call);
        }
        if (done)
                l->announce_done = done;
        if (!listener_apps_told(l)) {
                l->told_realtime = now_usec(CLOCK_REALTIME);
                log_info("Telling apps that standby begins (%zu delay locks held, %zu waited for).",
                         count_locks(l, 0, (uid_t) -1), count_waited(l));
                (void) sd_bus_emit_signal(l->bus, LISTENER_OBJECT_PATH, LISTENER_INTERFACE, "PrepareForStandby", "b", 1);
        }
        if (l->phase == LISTENER_PHASE_ANNOUNCING)
                return; /* joins the delay under way */
        listener_set_phase(l, LISTENER_PHASE_ANNOUNCING, call ? "PrepareEntry" : "a sleep");
        l->announce_max = max_delay;
        if (count_waited(l) == 0 ||
            sd_event_add_time_relative(l->event, &l->announce_timer, CLOCK_MONOTONIC, max_delay, 0,
                                       on_announce_timeout, l) < 0)
                announce_finish(l, false);
}

void listener_announce_cut_short(Listener *l) {
        if (l->announce_timer || l->n_announce_calls > 0)
                announce_finish(l, false);
}

void listener_announce_end(Listener *l) {
        if (!listener_apps_told(l) || l->phase == LISTENER_PHASE_ANNOUNCING)
                return;
        l->told_realtime = 0;
        if (l->phase == LISTENER_PHASE_TOLD)
                listener_set_phase(l, LISTENER_PHASE_INACTIVE, "apps told standby is off");
        l->told_timer = sd_event_source_disable_unref(l->told_timer);
        log_info("Telling apps that standby is over.");
        (void) sd_bus_emit_signal(l->bus, LISTENER_OBJECT_PATH, LISTENER_INTERFACE, "PrepareForStandby", "b", 0);
}

const Inhibitor *listener_blocked(Listener *l, char **ret_description) {
        for (Inhibitor *i = l->inhibitors; i; i = i->next)
                if (i->block) {
                        if (ret_description && asprintf(ret_description, "%s (uid %u, pid %d: %s)", i->who,
                                                        (unsigned) i->uid, (int) i->pid, i->why) < 0)
                                *ret_description = NULL;
                        return i;
                }
        return NULL;
}

/* The enter that asked ended (its bus connection closed). One that failed
 * before it froze anything leaves no journal: apps hear that standby is
 * off again, as they would once it ended. */
static int on_announcer_gone(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Listener *l = userdata;

        if (!bus_signal_from_bus(msg)) /* anyone may send it to the listener alone */
                return 0;
        l->announce_watch = sd_bus_slot_unref(l->announce_watch);
        if (listener_standby_over(l))
                listener_announce_end(l);
        return 0;
}

/* `standby-manager enter`, before it freezes anything: answered once the
 * apps are ready (or InhibitDelayMaxSec= passed). Standby entered already
 * is answered at once. */
int listener_method_prepare_entry(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Listener *l = userdata;
        char match[256];
        int r;

        r = listener_check_access(l, msg, NULL, "announce standby through", listener_method_prepare_entry, error);
        if (r != 0)
                return r;
        if (listener_standby_active(l))
                return sd_bus_reply_method_return(msg, NULL);
        /* Added before the answer is sent: the bus takes the match before
         * the caller can hear the answer and go. */
        snprintf(match, sizeof(match),
                 "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
                 "member='NameOwnerChanged',arg0='%s',arg2=''",
                 sd_bus_message_get_sender(msg));
        l->announce_watch = sd_bus_slot_unref(l->announce_watch);
        r = sd_bus_add_match_async(l->bus, &l->announce_watch, match, on_announcer_gone, NULL, l);
        if (r < 0)
                log_warning_errno(r, "Cannot watch the caller of PrepareEntry: %m");
        listener_announce(l, msg, NULL, l->m.config->inhibit_delay_max);
        return 1;
}

void listener_drop_inhibitors(Listener *l) {
        l->announce_watch = sd_bus_slot_unref(l->announce_watch);
        while (l->inhibitors) {
                Inhibitor *i = l->inhibitors;
                l->inhibitors = i->next;
                inhibitor_free(i);
        }
        l->announce_done = NULL;
        announce_finish(l, false);
        l->told_timer = sd_event_source_disable_unref(l->told_timer);
}
