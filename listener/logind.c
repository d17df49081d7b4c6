/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* logind: what starts and ends standby (EnterOn=, LeaveOn=), and the freeze
 * before a real sleep.
 *
 * The lid and the power key are logind's to act on unless someone holds a
 * block lock on handle-lid-switch or handle-power-key; desktops (GNOME's
 * gsd-power, KDE's PowerDevil) hold them and read the switches themselves.
 * The listener does the same: it holds handle-lid-switch while EnterOn=
 * has "lid", and handle-power-key while EnterOn= has "power-key" or while
 * standby is entered and LeaveOn= has it (outside standby the power key
 * stays logind's). It reads SW_LID and KEY_POWER from every evdev device
 * that has them (input.c, hotplug included). Entering is a StartUnit of
 * standby.target; leaving is the exit of an ExitStandby= rule
 * (exit-standby.c), so the target, the journal and status agree.
 *
 * Another process holding handle-lid-switch is a desktop that handles the
 * lid itself: standby then leaves the lid to it, and freezes before the
 * sleep the desktop asks logind for (the sleep delay lock below) instead.
 * Lid opened and the power key still leave standby.
 *
 * Before a sleep: the listener holds a delay lock on "sleep"; on
 * PrepareForSleep(true) it tells apps, then freezes in a child (off the
 * loop) what is not frozen, with FreezeTimeout= cut to fit logind's
 * InhibitDelayMaxUSec and OnFreezeTimeout=skip, so that a unit that does
 * not freeze in time is thawed again and named (journal, status); the lock
 * is closed when the child is done or at the deadline, whichever is first,
 * so the sleep is never held past logind's delay. On PrepareForSleep(false)
 * what was entered for the sleep is left, and the lock taken again.
 *
 * Every call to logind is asynchronous, answered in a reply handler. */
#include <fcntl.h>
#include <inttypes.h>
#include <linux/input.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <systemd/sd-daemon.h>

#include "bus-owner.h"
#include "listener.h"
#include "log.h"

#define LOGIND "org.freedesktop.login1"
#define LOGIND_PATH "/org/freedesktop/login1"
#define LOGIND_MANAGER "org.freedesktop.login1.Manager"

typedef enum LockKind {
        LOCK_LID,
        LOCK_POWER_KEY,
        LOCK_SLEEP,
        _LOCK_MAX,
} LockKind;

static const struct {
        const char *what, *mode, *why;
} lock_info[_LOCK_MAX] = {
        [LOCK_LID] = { "handle-lid-switch", "block", "Connected standby on the lid (standby.conf EnterOn=)" },
        [LOCK_POWER_KEY] = { "handle-power-key", "block", "Connected standby on the power key (standby.conf)" },
        [LOCK_SLEEP] = { "sleep", "delay", "Freezing apps before the sleep (standby.conf FreezeBeforeSleep=)" },
};

typedef struct LogindLock {
        struct Logind *logind;
        LockKind kind;
        int fd;
        sd_bus_slot *pending;
        char *refused; /* logind's error, for status */
} LogindLock;

typedef struct Logind {
        Listener *l;
        LogindLock locks[_LOCK_MAX];
        sd_bus_slot *match_sleep, *match_props;
        BusOwner *owner;                /* logind's connection: whose signals count */
        usec_t delay_max;               /* logind's InhibitDelayMaxUSec; 0: not known yet */
        bool idle_hint;
        sd_event_source *idle_timer;
        char *lid_holders, *power_holders; /* other processes' block locks */
        sd_event_source *entering_timer; /* the policy's enter asked, until standby is entered or it is given up */
        bool sleeping;                  /* between PrepareForSleep(true) and (false) */
        bool sleep_ready;               /* the freeze before this sleep is done: its lock may go */
        bool entered_for_sleep;         /* standby was entered for the sleep: left on resume */
        char *leave_wanted;             /* a leave asked for during the entry (its apps' delay): why */
        bool lid_closed;                /* as last read (SW_LID) */
        sd_bus_slot *lid_query;         /* logind's docking rules, asked on a lid close */
        ManagerRun *sleep_run;          /* the freeze before the sleep: standby-manager --before-sleep enter */
        sd_event_source *sleep_deadline;
        usec_t sleep_started;
        char *last_entry, *last_leave, *last_sleep;
} Logind;

/* The source's state: logind's, on the system bus only (a private bus, as
 * in the tests, has no logind). */
typedef struct LogindState {
        Logind *logind;
} LogindState;

extern const ListenerSource listener_source_logind;

/* NULL without logind, and outside the source's life. */
static Logind *logind_of(Listener *l) {
        LogindState *st = listener_source_state(l, &listener_source_logind);
        return st ? st->logind : NULL;
}

/* Whether msg is logind's, sent to everyone: the bus lets any user send
 * a signal that names logind's interface, and one sent to the listener
 * alone reaches it whatever its match rules say. */
static bool from_logind(Logind *lg, sd_bus_message *msg) {
        if (bus_owner_sent(lg->owner, msg))
                return true;
        log_debug("Ignored the signal %s.%s from %s%s: not logind's.", strna(sd_bus_message_get_interface(msg)),
                  strna(sd_bus_message_get_member(msg)), strna(sd_bus_message_get_sender(msg)),
                  bus_signal_is_broadcast(msg) ? "" : ", sent to the listener alone");
        return false;
}

static bool on_system_bus(Listener *l) {
        return !l->bus_address;
}

/* logind is the system bus's; a test with a private bus may put a fake
 * one there ($STANDBY_LISTENER_TEST_LOGIND=1), for the locks and the
 * sleep. standby.target is still only the system's. */
static bool logind_on_bus(Listener *l) {
        const char *e = getenv("STANDBY_LISTENER_TEST_LOGIND");
        return on_system_bus(l) || (e && streq(e, "1"));
}

static void set_text(char **p, const char *fmt, ...) _printf_(2, 3);
static void set_text(char **p, const char *fmt, ...) {
        va_list ap;
        char *s = NULL;

        va_start(ap, fmt);
        if (vasprintf(&s, fmt, ap) < 0)
                s = NULL;
        va_end(ap);
        free(*p);
        *p = s;
}

/* Standby not active, but on its way: asked of systemd by the policy, or
 * apps told it begins (PrepareEntry, a sleep). */
static bool entry_under_way(Listener *l) {
        return !listener_standby_active(l) && (l->phase == LISTENER_PHASE_STARTING || listener_apps_told(l));
}

static bool lock_wanted(Logind *lg, LockKind k) {
        const Config *c = lg->l->m.config;
        bool in_standby = listener_standby_active(lg->l) || lg->l->phase == LISTENER_PHASE_STARTING;

        switch (k) {
        case LOCK_LID:
                /* A block lock on standby keeps the lid from entering it;
                 * the lid is then logind's (HandleLidSwitch=, a suspend by
                 * default) rather than nobody's: a closed laptop does not
                 * stay awake in a bag. In standby the lid stays the
                 * listener's, for LeaveOn=. */
                return (c->enter_on & TRIGGER_LID) && (in_standby || !listener_blocked(lg->l, NULL));
        case LOCK_POWER_KEY:
                /* LeaveOn=input counts the power key too: logind must not
                 * power off on the key that leaves standby. */
                return (c->enter_on & TRIGGER_POWER_KEY) ||
                       (in_standby && (c->leave_on & (TRIGGER_POWER_KEY | TRIGGER_INPUT)));
        case LOCK_SLEEP:
                /* Held through the sleep's delay until the freeze is done
                 * (sleep_done), whatever else calls sync_locks meanwhile. */
                return c->freeze_before_sleep && !(lg->sleeping && lg->sleep_ready);
        default:
                return false;
        }
}

static void lock_release(LogindLock *lk, const char *why) {
        if (lk->fd < 0)
                return;
        lk->fd = safe_close(lk->fd);
        log_info("Released logind's %s lock (%s).", lock_info[lk->kind].what, why);
}

static void sync_locks(Logind *lg);

static int on_inhibit_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        LogindLock *lk = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        int fd, r;

        lk->pending = sd_bus_slot_unref(lk->pending);
        if (e) {
                set_text(&lk->refused, "%s", e->message ?: e->name);
                log_warning("logind refused the %s %s lock: %s", lock_info[lk->kind].what, lock_info[lk->kind].mode,
                            lk->refused ?: e->name);
                return 0;
        }
        r = sd_bus_message_read(reply, "h", &fd);
        if (r >= 0 && (fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0)
                r = -errno;
        if (r < 0) {
                log_warning_errno(r, "Cannot take logind's %s lock: %m", lock_info[lk->kind].what);
                return 0;
        }
        lk->refused = mfree(lk->refused);
        safe_close(lk->fd);
        lk->fd = fd;
        log_info("Holding logind's %s lock (%s).", lock_info[lk->kind].what, lock_info[lk->kind].mode);
        /* Not wanted any more while it was asked for: let go again. */
        sync_locks(lk->logind);
        return 0;
}

static void sync_locks(Logind *lg) {
        Listener *l = lg->l;

        if (!logind_on_bus(l))
                return;
        for (LockKind k = 0; k < _LOCK_MAX; k++) {
                LogindLock *lk = &lg->locks[k];
                bool want = lock_wanted(lg, k);

                if (!want) {
                        lock_release(lk, "the policy does not use it now");
                        continue;
                }
                if (lk->fd >= 0 || lk->pending || (k == LOCK_SLEEP && lg->sleeping))
                        continue; /* a lock taken during the sleep's delay would not delay it */
                int r = sd_bus_call_method_async(l->bus, &lk->pending, LOGIND, LOGIND_PATH, LOGIND_MANAGER, "Inhibit",
                                                 on_inhibit_reply, lk, "ssss", lock_info[k].what, "standby",
                                                 lock_info[k].why, lock_info[k].mode);
                if (r < 0)
                        log_warning_errno(r, "Cannot ask logind for the %s lock: %m", lock_info[k].what);
        }
}

static int on_entering_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Logind *lg = userdata;

        lg->entering_timer = sd_event_source_disable_unref(lg->entering_timer);
        if (lg->l->phase == LISTENER_PHASE_STARTING) {
                log_warning("standby.target was started, but standby was not entered (see standby-enter.service).");
                listener_set_phase(lg->l, LISTENER_PHASE_INACTIVE, "no enter followed standby.target's start");
                sync_locks(lg);
        }
        return 0;
}

static int on_start_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Logind *lg = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);

        if (e) {
                log_warning("systemd did not start standby.target: %s", e->message ?: e->name);
                lg->entering_timer = sd_event_source_disable_unref(lg->entering_timer);
                if (lg->l->phase == LISTENER_PHASE_STARTING)
                        listener_set_phase(lg->l, LISTENER_PHASE_INACTIVE, "systemd did not start standby.target");
                sync_locks(lg);
        }
        return 0;
}

/* Asks systemd to start standby.target, not waiting. */
static int start_target(Logind *lg) {
        int r = sd_bus_call_method_async(lg->l->bus, NULL, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                         "org.freedesktop.systemd1.Manager", "StartUnit", on_start_reply, lg, "ss",
                                         "standby.target", "replace");
        if (r < 0)
                log_warning_errno(r, "Cannot ask systemd to start standby.target: %m");
        return r;
}

/* Starts standby.target; its enter tells apps and freezes. */
static void enter_standby(Logind *lg, const char *why, bool automatic) {
        Listener *l = lg->l;
        _cleanup_free_ char *blocker = NULL;

        if (entry_under_way(l))
                lg->leave_wanted = mfree(lg->leave_wanted); /* closed again: standby after all */
        /* Only from no standby at all: not while one is entered, being
         * entered or left, nor while an exit's child still runs. */
        if (l->phase == LISTENER_PHASE_STARTING || listener_standby_active(l) || l->exit_run)
                return;
        if (automatic && listener_blocked(l, &blocker)) {
                log_notice("Not entering standby (%s): a block lock is held by %s.", why, strna(blocker));
                set_text(&lg->last_entry, "refused (%s): block lock held by %s", why, strna(blocker));
                return;
        }
        if (!on_system_bus(l) || sd_booted() <= 0) {
                log_warning("Cannot enter standby (%s): standby.target needs systemd as PID 1 and the system bus.", why);
                return;
        }
        if (start_target(lg) < 0)
                return;
        /* An entry by hand whose apps are being told stays that: the
         * target's enter joins it. */
        if (l->phase != LISTENER_PHASE_ANNOUNCING)
                listener_set_phase(l, LISTENER_PHASE_STARTING, why);
        /* The enter waits for apps (InhibitDelayMaxSec=) and then freezes
         * (FreezeTimeout= per batch): one that failed without touching the
         * journal would otherwise leave the policy waiting for good. */
        lg->entering_timer = sd_event_source_disable_unref(lg->entering_timer);
        (void) sd_event_add_time_relative(l->event, &lg->entering_timer, CLOCK_MONOTONIC,
                                          l->m.config->inhibit_delay_max + 4 * l->m.config->freeze_timeout +
                                                  30 * USEC_PER_SEC,
                                          USEC_PER_SEC, on_entering_timeout, lg);
        log_info("Entering standby (%s).", why);
        set_text(&lg->last_entry, "%s", why);
        sync_locks(lg);
}

static void leave_standby(Logind *lg, const char *why) {
        Listener *l = lg->l;

        if (listener_standby_active(l))
                listener_exit_standby(l, why);
        else if (entry_under_way(l)) {
                /* An entry under way (the apps' delay, the freeze): left as
                 * soon as it is entered (listener_logind_state_changed). */
                log_info("Standby is being entered: left once it is (%s).", why);
                set_text(&lg->leave_wanted, "%s", why);
        }
}

/* The lid closed: logind's own rules for it are followed, as logind would
 * (logind-button.c): docked (or an external display), HandleLidSwitchDocked=;
 * else on external power, HandleLidSwitchExternalPower= if set; else
 * HandleLidSwitch=. Where that is "ignore", standby is not entered either:
 * a docked laptop's lid is closed to use the external screen. logind sends
 * no PropertiesChanged for Docked: undocked with the lid still closed,
 * nothing is looked at again until the lid's next close. */
static int on_lid_rules(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Logind *lg = userdata;
        const char *name, *s, *docked_action = NULL, *ep_action = NULL, *action = NULL;
        int b, docked = false, external = false, r;

        lg->lid_query = sd_bus_slot_unref(lg->lid_query);
        if (!lg->lid_closed || !(lg->l->m.config->enter_on & TRIGGER_LID) || lg->lid_holders)
                return 0; /* opened again, or no longer standby's */
        r = sd_bus_message_is_method_error(reply, NULL) ? -EIO : sd_bus_message_enter_container(reply, 'a', "{sv}");
        while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
                r = sd_bus_message_read(reply, "s", &name);
                if (r >= 0 && (streq(name, "Docked") || streq(name, "OnExternalPower")) &&
                    sd_bus_message_read(reply, "v", "b", &b) >= 0)
                        *(streq(name, "Docked") ? &docked : &external) = b;
                else if (r >= 0 && (streq(name, "HandleLidSwitch") || streq(name, "HandleLidSwitchDocked") ||
                                    streq(name, "HandleLidSwitchExternalPower")) &&
                         sd_bus_message_read(reply, "v", "s", &s) >= 0)
                        *(streq(name, "HandleLidSwitch") ? &action
                          : streq(name, "HandleLidSwitchDocked") ? &docked_action : &ep_action) = s;
                else if (r >= 0)
                        r = sd_bus_message_skip(reply, "v");
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
        }
        const char *key = "HandleLidSwitch", *why = NULL;
        if (r >= 0 && docked) {
                key = "HandleLidSwitchDocked", why = "docked";
                action = docked_action;
        } else if (r >= 0 && external && !isempty(ep_action)) {
                key = "HandleLidSwitchExternalPower", why = "on external power";
                action = ep_action;
        }
        if (r >= 0 && action && streq(action, "ignore")) {
                log_info("Lid closed: logind's %s=ignore%s%s%s: standby not entered.", key, why ? " (" : "", why ?: "",
                         why ? ")" : "");
                set_text(&lg->last_entry, "not entered (lid closed): %s=ignore", key);
                return 0;
        }
        /* logind not answering is no reason to stay awake in a bag. */
        enter_standby(lg, "lid closed", true);
        return 0;
}

static void lid_closed(Logind *lg) {
        int r;

        lg->lid_query = sd_bus_slot_unref(lg->lid_query);
        r = sd_bus_call_method_async(lg->l->bus, &lg->lid_query, LOGIND, LOGIND_PATH, "org.freedesktop.DBus.Properties",
                                     "GetAll", on_lid_rules, lg, "s", LOGIND_MANAGER);
        if (r < 0) {
                log_warning_errno(r, "Cannot read logind's rules for the lid: %m");
                enter_standby(lg, "lid closed", true);
        }
}

void listener_power_input(Listener *l, unsigned type, unsigned code, int value) {
        Logind *lg = logind_of(l);
        const Config *c = l->m.config;

        if (!lg)
                return;
        if (type == EV_SW && code == SW_LID) {
                lg->lid_closed = value;
                if (value && (c->enter_on & TRIGGER_LID)) {
                        if (lg->lid_holders) {
                                log_info("Lid closed: the lid is %s's; standby freezes before the sleep it asks for.",
                                         lg->lid_holders);
                                return;
                        }
                        lid_closed(lg);
                } else if (!value && (c->leave_on & TRIGGER_LID))
                        leave_standby(lg, "lid opened");
                return;
        }
        if (type != EV_KEY || value != 1)
                return;
        if (code == KEY_POWER) {
                if (listener_standby_active(l) || entry_under_way(l)) {
                        if (c->leave_on & TRIGGER_POWER_KEY)
                                leave_standby(lg, "power key");
                        else if (c->leave_on & TRIGGER_INPUT)
                                leave_standby(lg, "input");
                } else if (c->enter_on & TRIGGER_POWER_KEY)
                        enter_standby(lg, "power key", true);
                return;
        }
        if ((c->leave_on & TRIGGER_INPUT) && listener_standby_active(l))
                leave_standby(lg, "input");
}

bool listener_policy_wants_input(Listener *l, bool has_lid, bool has_power_key, bool has_keys) {
        const Config *c = l->m.config;
        unsigned t = c->enter_on | c->leave_on;

        if (!logind_of(l))
                return false;
        return (has_lid && (t & TRIGGER_LID)) || (has_power_key && (t & TRIGGER_POWER_KEY)) ||
               ((has_keys || has_power_key) && (c->leave_on & TRIGGER_INPUT));
}

/* Idleness: logind's IdleHint, held for IdleEnterSec=. */
static int on_idle_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Logind *lg = userdata;

        lg->idle_timer = sd_event_source_disable_unref(lg->idle_timer);
        if (lg->idle_hint && (lg->l->m.config->enter_on & TRIGGER_IDLE))
                enter_standby(lg, "idle", true);
        return 0;
}

static void idle_sync(Logind *lg) {
        Listener *l = lg->l;
        bool arm = lg->idle_hint && (l->m.config->enter_on & TRIGGER_IDLE) && !listener_standby_active(l) &&
                   l->phase != LISTENER_PHASE_STARTING;

        if (!arm) {
                lg->idle_timer = sd_event_source_disable_unref(lg->idle_timer);
                return;
        }
        if (lg->idle_timer)
                return;
        if (sd_event_add_time_relative(l->event, &lg->idle_timer, CLOCK_MONOTONIC, l->m.config->idle_enter,
                                       USEC_PER_SEC, on_idle_timer, lg) < 0)
                log_warning("Cannot arm the idle timer: standby is not entered on idleness.");
}

static void set_idle(Logind *lg, bool idle) {
        if (idle != lg->idle_hint)
                log_info("logind's idle hint: %s.", idle ? "idle" : "busy");
        lg->idle_hint = idle;
        idle_sync(lg);
}

static int on_idle_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        int b;

        if (!sd_bus_message_is_method_error(reply, NULL) && sd_bus_message_read(reply, "v", "b", &b) >= 0)
                set_idle(userdata, b);
        return 0;
}

static int on_delay_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Logind *lg = userdata;
        uint64_t usec;

        if (!sd_bus_message_is_method_error(reply, NULL) && sd_bus_message_read(reply, "v", "t", &usec) >= 0) {
                lg->delay_max = usec;
                log_debug("logind's InhibitDelayMaxUSec: %" PRIu64 " us.", usec);
        }
        return 0;
}

static char *describe_holders(sd_bus_message *reply, const char *what_wanted) {
        char *out = NULL;
        const char *what, *who, *why, *mode;
        uint32_t uid, pid;

        if (sd_bus_message_rewind(reply, true) < 0 || sd_bus_message_enter_container(reply, 'a', "(ssssuu)") < 0)
                return NULL;
        while (sd_bus_message_read(reply, "(ssssuu)", &what, &who, &why, &mode, &uid, &pid) > 0) {
                char *n = NULL;
                if ((pid_t) pid == getpid() || !streq(mode, "block") || !strstr(what, what_wanted))
                        continue;
                if (asprintf(&n, "%s%s%s (uid %u, pid %u)", out ?: "", out ? ", " : "", who, uid, pid) < 0)
                        break;
                free(out);
                out = n;
        }
        return out;
}

static int on_list_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Logind *lg = userdata;
        char *lid, *power;

        if (sd_bus_message_is_method_error(reply, NULL))
                return 0;
        lid = describe_holders(reply, "handle-lid-switch");
        power = describe_holders(reply, "handle-power-key");
        if (!(lid == lg->lid_holders || (lid && lg->lid_holders && streq(lid, lg->lid_holders))))
                log_notice(lid ? "The lid is also held by %s: closing it is theirs, standby freezes before the sleep "
                                 "they ask for." : "%sNo other process holds the lid: standby acts on it.",
                           lid ?: "");
        free(lg->lid_holders);
        lg->lid_holders = lid;
        free(lg->power_holders);
        lg->power_holders = power;
        return 0;
}

static void refresh(Logind *lg, bool idle, bool holders, bool delay) {
        sd_bus *bus = lg->l->bus;

        if (idle)
                (void) sd_bus_call_method_async(bus, NULL, LOGIND, LOGIND_PATH, "org.freedesktop.DBus.Properties", "Get",
                                                on_idle_reply, lg, "ss", LOGIND_MANAGER, "IdleHint");
        if (delay)
                (void) sd_bus_call_method_async(bus, NULL, LOGIND, LOGIND_PATH, "org.freedesktop.DBus.Properties", "Get",
                                                on_delay_reply, lg, "ss", LOGIND_MANAGER, "InhibitDelayMaxUSec");
        if (holders)
                (void) sd_bus_call_method_async(bus, NULL, LOGIND, LOGIND_PATH, LOGIND_MANAGER, "ListInhibitors",
                                                on_list_reply, lg, "");
}

static int on_properties_changed(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        Logind *lg = userdata;
        const char *iface, *name;
        bool idle = false, holders = false;
        int r;

        if (!from_logind(lg, msg))
                return 0;
        r = sd_bus_message_read(msg, "s", &iface);
        if (r < 0 || !streq(iface, LOGIND_MANAGER))
                return 0;
        r = sd_bus_message_enter_container(msg, 'a', "{sv}");
        while (r >= 0 && (r = sd_bus_message_enter_container(msg, 'e', "sv")) > 0) {
                int b;
                r = sd_bus_message_read(msg, "s", &name);
                if (r >= 0 && streq(name, "IdleHint") && sd_bus_message_read(msg, "v", "b", &b) >= 0)
                        set_idle(lg, b);
                else if (r >= 0) {
                        holders = holders || streq(name, "BlockInhibited");
                        r = sd_bus_message_skip(msg, "v");
                }
                if (r >= 0)
                        r = sd_bus_message_exit_container(msg);
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(msg);
        if (r >= 0 && sd_bus_message_enter_container(msg, 'a', "s") >= 0)
                while (sd_bus_message_read(msg, "s", &name) > 0) {
                        idle = idle || streq(name, "IdleHint");
                        holders = holders || streq(name, "BlockInhibited");
                }
        refresh(lg, idle, holders, false);
        return 0;
}

/* The freeze before a sleep. */
static void sleep_done(Logind *lg, const char *outcome) {
        if (lg->locks[LOCK_SLEEP].fd >= 0)
                log_info("Freezing before the sleep: %s (%.2f s); the sleep may go on.", outcome,
                         (double) (now_usec(CLOCK_MONOTONIC) - lg->sleep_started) / USEC_PER_SEC);
        set_text(&lg->last_sleep, "%s", outcome);
        lg->sleep_ready = true;
        if (lg->sleeping) /* after waking, it is the next sleep's */
                lock_release(&lg->locks[LOCK_SLEEP], "ready for the sleep");
        lg->sleep_deadline = sd_event_source_disable_unref(lg->sleep_deadline);
}

static int on_sleep_deadline(sd_event_source *s, uint64_t usec, void *userdata) {
        Logind *lg = userdata;

        log_warning("Freezing before the sleep did not finish within logind's delay; the sleep goes on, and what "
                    "did not freeze in time is thawed again.");
        sleep_done(lg, "not finished within logind's delay");
        return 0;
}

static void on_sleep_freeze_done(Listener *l, pid_t pid, int status, void *userdata) {
        Logind *lg = userdata;

        lg->sleep_run = NULL; /* freed by its runner */
        bool ok = WIFEXITED(status) && WEXITSTATUS(status) == EXIT_OK;
        lg->entered_for_sleep = ok;
        /* The units left running are named: the journal standby-manager
         * wrote lists them skipped, with why (read already: the journal's
         * watch goes before this one). */
        _cleanup_free_ char *skipped = NULL;
        if (ok && l->m.journal)
                for (size_t i = 0; i < l->m.journal->n_units; i++) {
                        const JournalUnit *u = &l->m.journal->units[i];
                        char *n = NULL;
                        if (u->state != UNIT_SKIPPED)
                                continue;
                        if (asprintf(&n, "%s%s%s", skipped ?: "", skipped ? ", " : "", u->cgroup) < 0)
                                break;
                        free(skipped);
                        skipped = n;
                }
        if (skipped) {
                _cleanup_free_ char *outcome = NULL;
                if (asprintf(&outcome, "frozen, but for what did not freeze in time and runs: %s", skipped) < 0)
                        outcome = NULL;
                sleep_done(lg, outcome ?: "frozen, but for some units");
        } else
                sleep_done(lg, ok ? "frozen" : "failed (the journal and the log say what is left)");
        /* Nothing entered: apps told for the sleep hear that it is off. */
        if (!ok && listener_standby_over(l))
                listener_announce_end(l);
        if (!ok)
                return;
        set_text(&lg->last_entry, "sleep");
        if (!lg->sleeping)
                /* Resumed before the freeze was done: left at once. */
                listener_exit_standby(l, "resumed from sleep");
        else if (on_system_bus(l) && sd_booted() > 0)
                (void) start_target(lg); /* the target follows; its enter finds standby entered (6) */
}

/* Why nothing is frozen before this sleep, or NULL to freeze. An exit
 * under way (the listener's, or another's that holds the journal's lock
 * with the journal saying "exiting") is not raced: what it thaws would be
 * frozen again behind it. A journal left "exiting" by a failed exit, the
 * lock free, is frozen over, as `standby-manager enter` does: any user can
 * make an exit fail (a freeze of their own above their units), and that
 * must not turn off the freeze before every later sleep. */
static const char *sleep_refusal(Logind *lg) {
        Listener *l = lg->l;
        int fd = -EBADF;

        if (listener_exiting(l) || l->exit_run)
                return "standby is being left";
        if (listener_standby_active(l))
                return "standby entered already";
        if (lg->sleep_run)
                return "a freeze before a sleep runs already";
        if (!l->m.journal || l->m.journal->phase != JOURNAL_EXITING)
                return NULL;
        if (journal_lock(l->m.state_fd, LOCK_SH | LOCK_NB, &fd) < 0)
                return "standby is being left";
        safe_close(fd);
        return NULL;
}

static void sleep_freeze_start(Listener *l) {
        Logind *lg = logind_of(l);
        usec_t delay = lg->delay_max ?: 5 * USEC_PER_SEC;
        usec_t elapsed = now_usec(CLOCK_MONOTONIC) - lg->sleep_started;
        /* logind counts its delay from before it sent PrepareForSleep, and
         * the lock's close takes a while to reach it on a busy machine: the
         * freeze gets six tenths of the delay, the deadline is at seven. */
        usec_t budget = delay * 6 / 10 > elapsed ? delay * 6 / 10 - elapsed : 0;
        const char *refused = lg->sleeping ? sleep_refusal(lg) : "woken already";
        char deadline[32];

        if (!refused && budget < 100 * USEC_PER_MSEC)
                refused = "no time left";
        if (refused) {
                log_info("Not freezing before the sleep: %s.", refused);
                sleep_done(lg, refused);
                if (listener_standby_over(l))
                        listener_announce_end(l);
                return;
        }
        if (l->m.journal && l->m.journal->phase == JOURNAL_EXITING)
                log_notice("The journal says the last exit did not thaw everything (standby-manager status): "
                           "freezing before the sleep all the same.");
        snprintf(deadline, sizeof(deadline), "%" PRIu64, (uint64_t) (lg->sleep_started + delay * 6 / 10));
        char *args[] = { (char *) "--before-sleep", deadline, (char *) "enter", NULL };
        if (listener_manager_run(l, args, on_sleep_freeze_done, lg, &lg->sleep_run) < 0)
                sleep_done(lg, "standby-manager did not start");
}

static int on_prepare_for_sleep(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        Logind *lg = userdata;
        Listener *l = lg->l;
        int start;

        if (!from_logind(lg, msg) || sd_bus_message_read(msg, "b", &start) < 0)
                return 0;
        if (start) {
                lg->sleeping = true;
                lg->sleep_ready = false;
                lg->sleep_started = now_usec(CLOCK_MONOTONIC);
                if (lg->locks[LOCK_SLEEP].fd < 0) {
                        lg->sleep_ready = true;
                        return 0; /* FreezeBeforeSleep=no, or logind refused the lock */
                }
                const char *refused = sleep_refusal(lg);
                if (refused) {
                        log_info("Not freezing before the sleep: %s.", refused);
                        sleep_done(lg, refused);
                        return 0;
                }
                usec_t delay = lg->delay_max ?: 5 * USEC_PER_SEC;
                log_info("The machine is about to sleep: telling apps, then freezing (logind waits %.1f s at most).",
                         (double) delay / USEC_PER_SEC);
                if (sd_event_add_time_relative(l->event, &lg->sleep_deadline, CLOCK_MONOTONIC, delay * 7 / 10, 0,
                                               on_sleep_deadline, lg) < 0) {
                        sleep_done(lg, "no deadline timer");
                        return 0;
                }
                /* Apps get a third of logind's delay at most. */
                listener_announce(l, NULL, sleep_freeze_start, MIN(l->m.config->inhibit_delay_max, delay / 3));
                return 0;
        }
        log_info("The machine woke up.");
        lg->sleeping = false;
        if (lg->entered_for_sleep && !lg->sleep_run) {
                lg->entered_for_sleep = false;
                listener_exit_standby(l, "resumed from sleep");
        }
        sync_locks(lg);
        return 0;
}

/* logind restarted: its locks are gone with it; taken again. */
static void on_logind_owner(BusOwner *o, const char *owner, void *userdata) {
        Logind *lg = userdata;

        if (!owner)
                return;
        for (LockKind k = 0; k < _LOCK_MAX; k++)
                lg->locks[k].fd = safe_close(lg->locks[k].fd);
        sync_locks(lg);
        refresh(lg, true, true, true);
}

static int logind_start(Listener *l) {
        Logind *lg;
        int r;

        if (!logind_on_bus(l))
                return 0; /* a private bus (tests): no logind */
        lg = calloc(1, sizeof(Logind));
        if (!lg)
                return -ENOMEM;
        lg->l = l;
        for (LockKind k = 0; k < _LOCK_MAX; k++)
                lg->locks[k] = (LogindLock) { .logind = lg, .kind = k, .fd = -EBADF };
        ((LogindState *) listener_source_state(l, &listener_source_logind))->logind = lg;
        r = sd_bus_match_signal_async(l->bus, &lg->match_sleep, LOGIND, LOGIND_PATH, LOGIND_MANAGER, "PrepareForSleep",
                                      on_prepare_for_sleep, NULL, lg);
        if (r >= 0)
                r = sd_bus_match_signal_async(l->bus, &lg->match_props, LOGIND, LOGIND_PATH,
                                              "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                              on_properties_changed, NULL, lg);
        if (r >= 0)
                r = bus_owner_new(l->bus, LOGIND, on_logind_owner, lg, &lg->owner);
        if (r < 0)
                return log_error_errno(r, "Cannot watch logind: %m");
        sync_locks(lg);
        refresh(lg, true, true, true);
        return 0;
}

void listener_logind_reload(Listener *l) {
        if (!logind_of(l))
                return;
        sync_locks(logind_of(l));
        idle_sync(logind_of(l));
}

void listener_logind_blocks_changed(Listener *l) {
        if (!logind_of(l))
                return;
        sync_locks(logind_of(l));
        idle_sync(logind_of(l));
}

void listener_logind_state_changed(Listener *l) {
        Logind *lg = logind_of(l);

        if (!lg)
                return;
        bool active = listener_standby_active(l);
        /* Entered or left neither by the policy, a sleep nor a rule (the
         * phase was starting until the journal said active). */
        if (active && !lg->entering_timer && !lg->sleep_run && !lg->sleeping)
                set_text(&lg->last_entry, "by hand (standby.target, standby-manager enter)");
        if (!active)
                set_text(&lg->last_leave, "%s", l->leave_why ?: "by hand (standby.target, standby-manager exit)");
        if (active)
                lg->entering_timer = sd_event_source_disable_unref(lg->entering_timer);
        else if (l->phase != LISTENER_PHASE_STARTING)
                lg->entered_for_sleep = lg->entered_for_sleep && lg->sleeping;
        if (!active && !entry_under_way(l))
                lg->leave_wanted = mfree(lg->leave_wanted);
        sync_locks(lg);
        idle_sync(lg);
        if (active && lg->leave_wanted) {
                _cleanup_free_ char *why = TAKE_PTR(lg->leave_wanted);
                listener_exit_standby(l, why);
        }
}

static void logind_stop(Listener *l) {
        Logind *lg = logind_of(l);

        if (!lg)
                return;
        for (LockKind k = 0; k < _LOCK_MAX; k++) {
                sd_bus_slot_unref(lg->locks[k].pending);
                safe_close(lg->locks[k].fd);
                free(lg->locks[k].refused);
        }
        sd_bus_slot_unref(lg->lid_query);
        sd_bus_slot_unref(lg->match_sleep);
        sd_bus_slot_unref(lg->match_props);
        bus_owner_free(lg->owner);
        sd_event_source_disable_unref(lg->idle_timer);
        sd_event_source_disable_unref(lg->entering_timer);
        listener_manager_run_abandon(lg->sleep_run);
        sd_event_source_disable_unref(lg->sleep_deadline);
        free(lg->lid_holders);
        free(lg->power_holders);
        free(lg->last_entry);
        free(lg->last_leave);
        free(lg->last_sleep);
        free(lg->leave_wanted);
        free(lg);
        ((LogindState *) listener_source_state(l, &listener_source_logind))->logind = NULL;
}

static void stop_logind(Listener *l) {
        logind_stop(l);
        listener_drop_inhibitors(l);
}

/* Delivers no Event= kind: the policy is the configuration's, not a rule's. */
const ListenerSource listener_source_logind = {
        .name = "logind",
        .state_size = sizeof(LogindState),
        .start = logind_start,
        .stop = stop_logind,
};

static const char *lock_state(const LogindLock *lk, char *buf, size_t size) {
        if (lk->fd >= 0)
                return "held";
        if (lk->pending)
                return "asked for";
        if (lk->refused) {
                snprintf(buf, size, "refused: %s", lk->refused);
                return buf;
        }
        return "not held";
}

/* What status shows: the policy and what logind and the apps hold. */
int listener_method_power_state(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ char *enter = NULL, *leave = NULL, *blocker = NULL;
        Listener *l = userdata;
        Logind *lg = logind_of(l);
        char b1[300], b2[300], b3[300], idle[64];
        int r;

        r = listener_check_access(l, msg, NULL, "read the power state of", listener_method_power_state, error);
        if (r != 0)
                return r;
        if (config_triggers_to_string(l->m.config->enter_on, &enter) < 0 ||
            config_triggers_to_string(l->m.config->leave_on, &leave) < 0)
                return -ENOMEM;
        (void) listener_blocked(l, &blocker);
        if (l->m.config->enter_on & TRIGGER_IDLE) {
                char d[32];
                snprintf(idle, sizeof(idle), " (idle: after %s)",
                         format_duration(d, sizeof(d), l->m.config->idle_enter));
        } else
                idle[0] = 0;
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "{ss}");
#define PAIR(k, v)                                                             \
        do {                                                                   \
                if (r >= 0)                                                    \
                        r = sd_bus_message_append(reply, "{ss}", (k), (v));    \
        } while (0)
        char enter_desc[128];
        snprintf(enter_desc, sizeof(enter_desc), "%s%s", enter, idle);
        PAIR("EnterOn", enter_desc);
        PAIR("LeaveOn", leave);
        PAIR("BlockedBy", blocker ?: "");
        if (lg) {
                PAIR("LidLock", lock_state(&lg->locks[LOCK_LID], b1, sizeof(b1)));
                PAIR("PowerKeyLock", lock_state(&lg->locks[LOCK_POWER_KEY], b2, sizeof(b2)));
                PAIR("SleepLock", lock_state(&lg->locks[LOCK_SLEEP], b3, sizeof(b3)));
                PAIR("LidAlsoHeldBy", lg->lid_holders ?: "");
                PAIR("PowerKeyAlsoHeldBy", lg->power_holders ?: "");
                PAIR("IdleHint", lg->idle_hint ? "yes" : "no");
                PAIR("LastEntry", lg->last_entry ?: "");
                /* The leave under way's, from its start. */
                PAIR("LastLeave", l->leave_why ?: lg->last_leave ?: "");
                PAIR("LastSleep", lg->last_sleep ?: "");
        }
#undef PAIR
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

int listener_logind_enter(Listener *l, const char *why) {
        Logind *lg = logind_of(l);

        /* standby.target is the system's: not with a fake logind on a
         * private bus (STANDBY_LISTENER_TEST_LOGIND). */
        if (!lg || !on_system_bus(l) || sd_booted() <= 0)
                return -EOPNOTSUPP;
        /* Asked for, not automatic: a block lock does not refuse it, as
         * it does not refuse `systemctl start standby.target`. */
        enter_standby(lg, why, false);
        return 0;
}

const char *listener_logind_last_entry(Listener *l) {
        Logind *lg = logind_of(l);
        return lg ? lg->last_entry : NULL;
}

const char *listener_logind_last_leave(Listener *l) {
        Logind *lg = logind_of(l);
        return lg ? lg->last_leave : NULL;
}
