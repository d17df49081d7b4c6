/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Event=input: keys and switches (power button, lid) from evdev devices.
 * Devices are named by path or by their evdev name (looked up with libevdev);
 * devices that appear later in /dev/input are picked up through inotify. The
 * events are read as the kernel writes them (struct input_event), so a FIFO
 * carrying the same records works too: that is how the tests feed it on a
 * machine without /dev/uinput.
 *
 * When a device's buffer overruns, the kernel drops its events and says so
 * with SYN_DROPPED; as with netlink's ENOBUFS, the listener does not go on
 * as if nothing happened: it skips the broken frame (to the next
 * SYN_REPORT), re-reads the switch states (EVIOCGSW) and acts on every
 * switch that changed meanwhile, so a lid opened during the overrun still
 * ends standby. Key presses lost in it cannot be read back; that is logged.
 *
 * Devices are also opened for the policy (logind.c) by what they can do: a
 * lid switch (SW_LID), a power key (KEY_POWER), any keys for LeaveOn=input;
 * their switches and keys go to the policy as well as to the rules. */
#include <dirent.h>
#include <fcntl.h>
#include <libevdev/libevdev.h>
#include <linux/input.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <linux/major.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "fileio.h"
#include "listener.h"
#include "log.h"
#include "strv.h"

#define INPUT_DIR "/dev/input"

#define SW_LONGS ((SW_CNT + 8 * sizeof(unsigned long) - 1) / (8 * sizeof(unsigned long)))

/* Event=input's [Match]. */
typedef struct InputMatch {
        char *device;        /* Device=: an evdev device name or a path; NULL: any */
        int key_type;        /* EV_KEY or EV_SW, with key_code; -1 until Key= or Switch= */
        int key_code;
        int value;           /* Value=: -1 for any */
} InputMatch;

static const EventKind event_kind_input;

static const InputMatch *input_match(const Rule *rule) {
        return rule->match;
}

typedef struct InputWatch {
        Listener *listener;
        char *path;
        char *name;                  /* the device's evdev name, if it has one */
        int fd;
        sd_event_source *source;
        unsigned long sw[SW_LONGS];  /* switch states as last known */
        bool have_sw;                /* EVIOCGSW answers (a device, not a FIFO) */
        bool dropping;               /* after SYN_DROPPED, until the next SYN_REPORT */
        bool policy;                 /* read for the policy (logind.c) */
        struct InputWatch *next;
} InputWatch;

/* The source's state: the devices open, and the watch on their directory. */
typedef struct InputState {
        InputWatch *inputs;
        sd_event_source *dir_watch;
} InputState;

extern const ListenerSource listener_source_input;

static InputState *state_of(Listener *l) {
        return listener_source_state(l, &listener_source_input);
}

static bool sw_bit(const unsigned long *bits, unsigned code) {
        return bits[code / (8 * sizeof(unsigned long))] >> (code % (8 * sizeof(unsigned long))) & 1;
}

static void sw_set(unsigned long *bits, unsigned code, bool on) {
        unsigned long m = 1UL << (code % (8 * sizeof(unsigned long)));
        if (on)
                bits[code / (8 * sizeof(unsigned long))] |= m;
        else
                bits[code / (8 * sizeof(unsigned long))] &= ~m;
}

static void input_dispatch(InputWatch *w, unsigned type, unsigned code, int value) {
        log_debug("Input %s: %s %d", w->path, strna(libevdev_event_code_get_name(type, code)), value);
        (void) listener_dispatch(w->listener,
                                 &(Event) { .kind = &event_kind_input, .device = w->name, .device_path = w->path,
                                            .key_type = (int) type, .key_code = (int) code, .value = value },
                                 now_usec(CLOCK_MONOTONIC));
        /* After the rules: an exit a rule began is the one the policy joins. */
        if (w->policy)
                listener_power_input(w->listener, type, code, value);
}

/* After an overrun: the switches as they are now, acted on where they moved. */
static void input_resync(InputWatch *w) {
        unsigned long now[SW_LONGS] = {};

        w->listener->stats.resyncs++;
        if (!w->have_sw || ioctl(w->fd, EVIOCGSW(sizeof(now)), now) < 0) {
                log_warning("Input %s dropped events (its buffer overran); key presses and switch changes in "
                            "between are lost.", w->path);
                return;
        }
        log_warning("Input %s dropped events (its buffer overran): switch states re-read; key presses in "
                    "between are lost.", w->path);
        for (unsigned code = 0; code < SW_CNT; code++) {
                bool is = sw_bit(now, code);
                if (sw_bit(w->sw, code) == is)
                        continue;
                sw_set(w->sw, code, is);
                input_dispatch(w, EV_SW, code, is);
        }
}

static void input_free(InputWatch *w) {
        sd_event_source_disable_unref(w->source);
        safe_close(w->fd);
        free(w->path);
        free(w->name);
        free(w);
}

static int on_input(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        InputWatch *w = userdata;
        struct input_event ev[64];
        ssize_t n;

        n = read(fd, ev, sizeof(ev));
        if (n < 0) {
                if (errno == EAGAIN || errno == EINTR)
                        return 0;
                /* Unplugged (ENODEV): stop watching it. */
                log_info("Input device %s gone: %m", w->path);
                Listener *l = w->listener;
                for (InputWatch **p = &state_of(l)->inputs; *p; p = &(*p)->next)
                        if (*p == w) {
                                *p = w->next;
                                break;
                        }
                input_free(w);
                return 0;
        }
        for (size_t i = 0; i < (size_t) n / sizeof(struct input_event); i++) {
                if (ev[i].type == EV_SYN && ev[i].code == SYN_DROPPED) {
                        w->dropping = true;
                        continue;
                }
                if (w->dropping) {
                        /* The frame the overrun broke is ignored whole. */
                        if (ev[i].type == EV_SYN && ev[i].code == SYN_REPORT) {
                                w->dropping = false;
                                input_resync(w);
                        }
                        continue;
                }
                if (ev[i].type == EV_SW && ev[i].code < SW_CNT)
                        sw_set(w->sw, ev[i].code, ev[i].value != 0);
                if (ev[i].type == EV_KEY || ev[i].type == EV_SW)
                        input_dispatch(w, ev[i].type, ev[i].code, ev[i].value);
        }
        return 0;
}

static bool rule_wants(const Rule *r, const char *path, const char *name) {
        if (r->event != &event_kind_input)
                return false;
        const char *device = input_match(r)->device;
        if (!device)
                return true;
        return streq(device, path) || (name && streq(device, name));
}

static bool any_rule_wants(Listener *l, const char *path, const char *name) {
        for (size_t i = 0; l->rules && i < l->rules->n_rules; i++)
                if (rule_wants(&l->rules->rules[i], path, name))
                        return true;
        return false;
}

static int input_open(Listener *l, const char *path) {
        struct libevdev *dev = NULL;
        struct stat st;
        InputWatch *w;
        int fd, r;

        for (InputWatch *x = state_of(l)->inputs; x; x = x->next)
                if (streq(x->path, path))
                        return 0;
        if (stat(path, &st) < 0)
                return negative_errno();
        /* A FIFO is opened read-write, so that it never reports a hang-up. */
        fd = open(path, (S_ISFIFO(st.st_mode) ? O_RDWR : O_RDONLY) | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        w = calloc(1, sizeof(InputWatch));
        if (!w) {
                safe_close(fd);
                return -ENOMEM;
        }
        w->listener = l;
        w->fd = fd;
        w->path = strdup(path);
        if (S_ISCHR(st.st_mode) && libevdev_new_from_fd(fd, &dev) >= 0) {
                w->name = strdup(strna(libevdev_get_name(dev)));
                w->policy = listener_policy_wants_input(l, libevdev_has_event_code(dev, EV_SW, SW_LID),
                                                        libevdev_has_event_code(dev, EV_KEY, KEY_POWER),
                                                        libevdev_has_event_type(dev, EV_KEY));
                libevdev_free(dev);
        }
        /* The baseline an overrun is judged against. */
        w->have_sw = S_ISCHR(st.st_mode) && ioctl(fd, EVIOCGSW(sizeof(w->sw)), w->sw) >= 0;
        if (!w->path || (!w->policy && !any_rule_wants(l, w->path, w->name))) {
                input_free(w);
                return 0;
        }
        r = sd_event_add_io(l->event, &w->source, fd, EPOLLIN, on_input, w);
        if (r < 0) {
                input_free(w);
                return r;
        }
        InputState *is = state_of(l);
        w->next = is->inputs;
        is->inputs = w;
        log_info("Watching input %s (%s)%s.", w->path, w->name ?: "no evdev name", w->policy ? ", for the policy" : "");
        return 0;
}

static void scan_input_dir(Listener *l) {
        _cleanup_closedir_ DIR *d = opendir(INPUT_DIR);
        struct dirent *de;

        if (!d)
                return;
        while ((de = readdir(d))) {
                char path[300];
                if (!strneq(de->d_name, "event", 5))
                        continue;
                snprintf(path, sizeof(path), INPUT_DIR "/%s", de->d_name);
                (void) input_open(l, path);
        }
}

static int on_input_dir(sd_event_source *s, const struct inotify_event *ev, void *userdata) {
        Listener *l = userdata;
        char path[300];

        if (ev->len == 0 || !strneq(ev->name, "event", 5))
                return 0;
        snprintf(path, sizeof(path), INPUT_DIR "/%s", ev->name);
        (void) input_open(l, path);
        return 0;
}

static void drop_inputs(Listener *l) {
        InputState *st = state_of(l);

        while (st->inputs) {
                InputWatch *w = st->inputs;
                st->inputs = w->next;
                input_free(w);
        }
}

int listener_setup_input(Listener *l) {
        bool any = listener_policy_wants_input(l, true, true, true);

        drop_inputs(l);
        for (size_t i = 0; l->rules && i < l->rules->n_rules; i++) {
                const Rule *r = &l->rules->rules[i];
                if (r->event != &event_kind_input)
                        continue;
                any = true;
                /* A device given by path outside /dev/input is opened as is. */
                const char *device = input_match(r)->device;
                if (device && device[0] == '/' && !strneq(device, INPUT_DIR "/", strlen(INPUT_DIR "/")))
                        if (input_open(l, device) < 0)
                                log_warning("Input %s in %s cannot be opened: %m", device, r->path);
        }
        if (!any)
                return 0;
        scan_input_dir(l);
        /* Devices plugged in later. Once per daemon: the rules may change, /dev/input not. */
        if (!state_of(l)->dir_watch && access(INPUT_DIR, F_OK) == 0) {
                int r = sd_event_add_inotify(l->event, &state_of(l)->dir_watch, INPUT_DIR, IN_CREATE | IN_ATTRIB,
                                             on_input_dir, l);
                if (r < 0)
                        log_warning_errno(r, "Cannot watch " INPUT_DIR " for new devices: %m");
        }
        return 0;
}


static void stop_inputs(Listener *l) {
        drop_inputs(l);
        state_of(l)->dir_watch = sd_event_source_disable_unref(state_of(l)->dir_watch);
}

static void input_match_init(void *match) {
        InputMatch *m = match;
        m->key_type = -1;
        m->value = -1;
}

static void input_match_done(void *match) {
        free(((InputMatch *) match)->device);
}

/* Device=: an absolute path in normal form, or an evdev device name. */
static bool device_is_valid(const char *s) {
        if (*s == 0 || strlen(s) > 4096)
                return false;
        if (s[0] != '/')
                return true;
        for (const char *p = s; *p; p++)
                if (p[0] == '/' && (p[1] == '/' || p[1] == 0 || (p[1] == '.' && (p[2] == '/' || p[2] == 0)) ||
                                    (p[1] == '.' && p[2] == '.' && (p[3] == '/' || p[3] == 0))))
                        return false;
        return true;
}

/* Device= as a path: what the listener can watch. A path that does not
 * exist (yet: devices come and go) is left for later; one that exists and
 * is neither a FIFO nor a device of the kernel's input major (13: evdev's
 * /dev/input/event*, whatever a udev rule names them) can never be watched,
 * and would fail the listener's start. Judged by stat alone: opening a
 * character device can have effects (a watchdog starts counting). */
static bool device_is_watchable(const char *path) {
        struct stat st;

        if (path[0] != '/' || stat(path, &st) < 0)
                return true;
        return S_ISFIFO(st.st_mode) || (S_ISCHR(st.st_mode) && major(st.st_rdev) == INPUT_MAJOR);
}

static int parse_device(Rule *rule, const char *value, char **ret_why) {
        if (!device_is_valid(value))
                return rule_key_fail(ret_why, "Device=%s: expected a device name or an absolute path such as "
                                     "/dev/input/event3 (no \".\", \"..\" or empty components)", value);
        if (!device_is_watchable(value))
                return rule_key_fail(ret_why, "Device=%s: neither an input event device nor a FIFO, so it cannot "
                                     "be watched", value);
        return rule_key_string(&((InputMatch *) rule->match)->device, value);
}

/* Key= and Switch=: names resolved by libevdev; one of them per rule. */
static int parse_code(Rule *rule, int type, const char *value, char **ret_why) {
        InputMatch *m = rule->match;
        const char *key = type == EV_KEY ? "Key" : "Switch";
        int code;

        if (m->key_type >= 0 && m->key_type != type)
                return rule_key_fail(ret_why, "%s=%s: Event=input takes Key= or Switch=, not both", key, value);
        code = libevdev_event_code_from_name((unsigned) type, value);
        if (code < 0)
                return rule_key_fail(ret_why, "%s=%s: expected an evdev %s name such as %s", key, value,
                                     type == EV_KEY ? "key" : "switch", type == EV_KEY ? "KEY_POWER" : "SW_LID");
        m->key_type = type;
        m->key_code = code;
        return 0;
}

static int parse_key(Rule *rule, const char *value, char **ret_why) {
        return parse_code(rule, EV_KEY, value, ret_why);
}

static int parse_switch(Rule *rule, const char *value, char **ret_why) {
        return parse_code(rule, EV_SW, value, ret_why);
}

static int parse_value(Rule *rule, const char *value, char **ret_why) {
        if (!streq(value, "0") && !streq(value, "1") && !streq(value, "2"))
                return rule_key_fail(ret_why, "Value=%s: expected 0 (released/off), 1 (pressed/on) or 2 (repeat)",
                                     value);
        ((InputMatch *) rule->match)->value = value[0] - '0';
        return 0;
}

static int check_input(const Rule *rule, char **ret_why) {
        if (input_match(rule)->key_type < 0)
                return rule_key_fail(ret_why, "Event=input needs Key= or Switch=");
        return 0;
}

static char *describe_input(const Rule *rule) {
        const InputMatch *m = input_match(rule);
        char *s;

        if (asprintf(&s, "on %s%s%s%s",
                     libevdev_event_code_get_name((unsigned) m->key_type, (unsigned) m->key_code) ?: "?",
                     m->value >= 0 ? (m->value == 1 ? " pressed/on" : m->value == 0 ? " released/off" : " repeat") : "",
                     m->device ? " from " : "", m->device ?: "") < 0)
                return NULL;
        return s;
}

static bool match_input(const Rule *rule, const Event *ev) {
        const InputMatch *m = input_match(rule);

        return (!m->device || (ev->device && streq(m->device, ev->device)) ||
                (ev->device_path && streq(m->device, ev->device_path))) &&
               m->key_type == ev->key_type && m->key_code == ev->key_code && (m->value < 0 || m->value == ev->value);
}

static const EventKind event_kind_input = {
        .name = "input",
        .match_size = sizeof(InputMatch),
        .init = input_match_init,
        .done = input_match_done,
        .keys = (const RuleKey[]) {
                { "Device", parse_device }, { "Key", parse_key }, { "Switch", parse_switch },
                { "Value", parse_value }, {},
        },
        .check = check_input,
        .describe = describe_input,
        .matches = match_input,
};

const ListenerSource listener_source_input = {
        .name = "input",
        .state_size = sizeof(InputState),
        .kinds = (const EventKind * const[]) { &event_kind_input, NULL },
        .start = listener_setup_input,
        .reload = listener_setup_input,
        .stop = stop_inputs,
};
