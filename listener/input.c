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
 * ends standby. Key presses lost in it cannot be read back; that is logged. */
#include <dirent.h>
#include <fcntl.h>
#include <libevdev/libevdev.h>
#include <linux/input.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "fileio.h"
#include "listener.h"
#include "log.h"
#include "strv.h"

#define INPUT_DIR "/dev/input"

#define SW_LONGS ((SW_CNT + 8 * sizeof(unsigned long) - 1) / (8 * sizeof(unsigned long)))

struct InputWatch {
        Listener *listener;
        char *path;
        char *name;                  /* the device's evdev name, if it has one */
        int fd;
        sd_event_source *source;
        unsigned long sw[SW_LONGS];  /* switch states as last known */
        bool have_sw;                /* EVIOCGSW answers (a device, not a FIFO) */
        bool dropping;               /* after SYN_DROPPED, until the next SYN_REPORT */
        struct InputWatch *next;
};

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
                                 &(Event) { .kind = EVENT_INPUT, .device = w->name, .device_path = w->path,
                                            .key_type = (int) type, .key_code = (int) code, .value = value },
                                 now_usec(CLOCK_MONOTONIC));
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
                for (InputWatch **p = &l->inputs; *p; p = &(*p)->next)
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
        if (r->event != EVENT_INPUT)
                return false;
        if (!r->device)
                return true;
        return streq(r->device, path) || (name && streq(r->device, name));
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

        for (InputWatch *x = l->inputs; x; x = x->next)
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
                libevdev_free(dev);
        }
        /* The baseline an overrun is judged against. */
        w->have_sw = S_ISCHR(st.st_mode) && ioctl(fd, EVIOCGSW(sizeof(w->sw)), w->sw) >= 0;
        if (!w->path || !any_rule_wants(l, w->path, w->name)) {
                input_free(w);
                return 0;
        }
        r = sd_event_add_io(l->event, &w->source, fd, EPOLLIN, on_input, w);
        if (r < 0) {
                input_free(w);
                return r;
        }
        w->next = l->inputs;
        l->inputs = w;
        log_info("Watching input %s (%s).", w->path, w->name ?: "no evdev name");
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

int listener_setup_input(Listener *l) {
        bool any = false;

        listener_drop_inputs(l);
        for (size_t i = 0; l->rules && i < l->rules->n_rules; i++) {
                const Rule *r = &l->rules->rules[i];
                if (r->event != EVENT_INPUT)
                        continue;
                any = true;
                /* A device given by path outside /dev/input is opened as is. */
                if (r->device && r->device[0] == '/' && !strneq(r->device, INPUT_DIR "/", strlen(INPUT_DIR "/")))
                        if (input_open(l, r->device) < 0)
                                log_warning("Input %s in %s cannot be opened: %m", r->device, r->path);
        }
        if (!any)
                return 0;
        scan_input_dir(l);
        /* Devices plugged in later. Once per daemon: the rules may change, /dev/input not. */
        if (!l->input_dir_watch && access(INPUT_DIR, F_OK) == 0) {
                int r = sd_event_add_inotify(l->event, &l->input_dir_watch, INPUT_DIR, IN_CREATE | IN_ATTRIB,
                                             on_input_dir, l);
                if (r < 0)
                        log_warning_errno(r, "Cannot watch " INPUT_DIR " for new devices: %m");
        }
        return 0;
}

void listener_drop_inputs(Listener *l) {
        while (l->inputs) {
                InputWatch *w = l->inputs;
                l->inputs = w->next;
                input_free(w);
        }
}

static bool match_input(const Rule *rule, const Event *ev) {
        return (!rule->device || (ev->device && streq(rule->device, ev->device)) ||
                (ev->device_path && streq(rule->device, ev->device_path))) &&
               rule->key_type == ev->key_type && rule->key_code == ev->key_code &&
               (rule->value < 0 || rule->value == ev->value);
}

static void stop_inputs(Listener *l) {
        listener_drop_inputs(l);
        l->input_dir_watch = sd_event_source_disable_unref(l->input_dir_watch);
}

const ListenerSource listener_source_input = {
        .name = "input", .kinds = EVENT_KIND_MASK(EVENT_INPUT), .start = listener_setup_input,
        .reload = listener_setup_input, .stop = stop_inputs, .matches = match_input,
};
