/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Rules of Event=input: a lid switch from an event stream, a stream that is
 * dropped, and real devices made through /dev/uinput (case uinput). */
#include <errno.h>
#include <fcntl.h>
#include <libevdev/libevdev-uinput.h>
#include <libevdev/libevdev.h>
#include <linux/input.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "listener-harness.h"
#include "test-util.h"

static bool saw_two_events(void *userdata) {
        return statistic(userdata, "events") >= 2;
}

static void send_input(int fd, int type, int code, int value) {
        struct input_event ev[2] = {
                { .type = (unsigned short) type, .code = (unsigned short) code, .value = value },
                { .type = EV_SYN, .code = SYN_REPORT, .value = 0 },
        };
        ck_assert_int_eq(write(fd, ev, sizeof(ev)), (ssize_t) sizeof(ev));
}

/* A lid as an evdev-format stream (a FIFO; this machine has no /dev/uinput)
 * whose opening ends standby, and standby entered with mail.service idle;
 * returns the stream's write end. */
static int lid_stream_in_standby(void) {
        char fifo[128], rule[512];

        snprintf(fifo, sizeof(fifo), "%s/lid-events", harness_dir);
        ck_assert_int_eq(mkfifo(fifo, 0600), 0);
        snprintf(rule, sizeof(rule), "[Match]\nEvent=input\nDevice=%s\nSwitch=SW_LID\nValue=0\n[Action]\nExitStandby=yes\n",
                 fifo);
        write_rule("70-lid.rule", rule);
        sd_bus_flush_close_unref(standby_with_idle_mail());
        int fd = open(fifo, O_WRONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        return fd;
}

/* Event=input through an evdev-format stream (this machine has no
 * /dev/uinput): the lid closing does nothing, the lid opening ends standby. */
START_TEST(test_input_stream_lid) {
        if (!test_need_root_cgroup2())
                return;
        int fd = lid_stream_in_standby();
        send_input(fd, EV_SW, SW_LID, 1);  /* closed: no rule */
        send_input(fd, EV_KEY, KEY_A, 1);  /* another code: no rule */
        sd_bus *bus = client();
        /* The FIFO and the bus are separate sources: wait (bounded) until both
         * records have been read before judging what they did. */
        ck_assert(test_wait_for(saw_two_events, bus, 5 * USEC_PER_SEC));
        ck_assert_uint_eq(statistic(bus, "matched"), 0);
        ck_assert(test_frozen("mail.service"));

        send_input(fd, EV_SW, SW_LID, 0);  /* opened */
        ck_assert(wait_frozen("mail.service", false));
        ck_assert_uint_eq(statistic(bus, "exits"), 1);
        close(fd);
        sd_bus_flush_close_unref(bus);
}
END_TEST

static bool saw_resync(void *userdata) {
        return statistic(userdata, "resyncs") >= 1;
}

/* A device's buffer overran (SYN_DROPPED): the broken frame is ignored whole
 * (the lid opening in it is not taken: it may be half a frame), the overrun
 * is counted, and events after the frame are taken again. A FIFO has no
 * switch state to re-read; the re-read itself is the uinput test below. */
START_TEST(test_input_stream_dropped) {
        if (!test_need_root_cgroup2())
                return;
        int fd = lid_stream_in_standby();
        struct input_event broken[] = {
                { .type = EV_SYN, .code = SYN_DROPPED },
                { .type = EV_SW, .code = SW_LID, .value = 0 },
                { .type = EV_SYN, .code = SYN_REPORT },
        };
        ck_assert_int_eq(write(fd, broken, sizeof(broken)), (ssize_t) sizeof(broken));
        sd_bus *bus = client();
        ck_assert(test_wait_for(saw_resync, bus, 5 * USEC_PER_SEC));
        ck_assert_uint_eq(statistic(bus, "events"), 0);
        ck_assert(test_frozen("mail.service"));

        send_input(fd, EV_SW, SW_LID, 0); /* a whole frame again */
        ck_assert(wait_frozen("mail.service", false));
        ck_assert_uint_eq(statistic(bus, "exits"), 1);
        close(fd);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* A virtual input device through /dev/uinput. */
typedef struct TestDevice {
        struct libevdev *dev;
        struct libevdev_uinput *ui;
} TestDevice;

/* Creates it with the given (type, code) pairs; false, and the test says
 * skips (test_skip), where there is no /dev/uinput (or no root with cgroup v2). */
static bool uinput_open(TestDevice *d, const char *name, const unsigned (*codes)[2], size_t n) {
        *d = (TestDevice) {};
        if (access("/dev/uinput", W_OK) < 0)
                return test_skip("no /dev/uinput on this machine (the qemu recipe in shared/recipes has one)");
        if (!test_need_root_cgroup2())
                return false;
        d->dev = libevdev_new();
        ck_assert_ptr_nonnull(d->dev);
        libevdev_set_name(d->dev, name);
        for (size_t i = 0; i < n; i++)
                ck_assert_int_eq(libevdev_enable_event_code(d->dev, codes[i][0], codes[i][1], NULL), 0);
        ck_assert_int_eq(libevdev_uinput_create_from_device(d->dev, LIBEVDEV_UINPUT_OPEN_MANAGED, &d->ui), 0);
        return true;
}

static void uinput_close(TestDevice *d) {
        libevdev_uinput_destroy(d->ui);
        libevdev_free(d->dev);
}

/* The real-device overrun: the lid opens while the listener is stopped and
 * a flood of key events overruns its buffer, so the kernel drops the lid's
 * event; the listener re-reads the switch state and ends standby all the
 * same. Needs /dev/uinput. */
START_TEST(test_input_uinput_overrun_resync) {
        static const unsigned codes[][2] = { { EV_SW, SW_LID }, { EV_KEY, KEY_A } };
        TestDevice d;

        if (!uinput_open(&d, "standby-test-lid", codes, ELEMENTSOF(codes)))
                return;
        ck_assert_int_eq(libevdev_uinput_write_event(d.ui, EV_SW, SW_LID, 1), 0); /* closed */
        ck_assert_int_eq(libevdev_uinput_write_event(d.ui, EV_SYN, SYN_REPORT, 0), 0);
        write_rule("72-lid.rule",
                   "[Match]\nEvent=input\nDevice=standby-test-lid\nSwitch=SW_LID\nValue=0\n[Action]\nExitStandby=yes\n");
        sd_bus *bus = standby_with_idle_mail();

        ck_assert_int_eq(kill(listener_pid, SIGSTOP), 0);
        ck_assert_int_eq(libevdev_uinput_write_event(d.ui, EV_SW, SW_LID, 0), 0); /* opened... */
        ck_assert_int_eq(libevdev_uinput_write_event(d.ui, EV_SYN, SYN_REPORT, 0), 0);
        for (int i = 0; i < 4000; i++) { /* ...and lost in the overrun */
                ck_assert_int_eq(libevdev_uinput_write_event(d.ui, EV_KEY, KEY_A, i % 2), 0);
                ck_assert_int_eq(libevdev_uinput_write_event(d.ui, EV_SYN, SYN_REPORT, 0), 0);
        }
        ck_assert_int_eq(kill(listener_pid, SIGCONT), 0);
        ck_assert(wait_frozen("mail.service", false));
        ck_assert_uint_ge(statistic(bus, "resyncs"), 1);
        sd_bus_flush_close_unref(bus);
        uinput_close(&d);
}
END_TEST

/* The real-device path: a virtual power button through /dev/uinput. */
START_TEST(test_input_uinput_power_button) {
        static const unsigned codes[][2] = { { EV_KEY, KEY_POWER } };
        TestDevice d;

        if (!uinput_open(&d, "standby-test-power", codes, ELEMENTSOF(codes)))
                return;
        write_rule("71-power.rule",
                   "[Match]\nEvent=input\nDevice=standby-test-power\nKey=KEY_POWER\nValue=1\n[Action]\nExitStandby=yes\n");
        sd_bus_flush_close_unref(standby_with_idle_mail());
        ck_assert_int_eq(libevdev_uinput_write_event(d.ui, EV_KEY, KEY_POWER, 1), 0);
        ck_assert_int_eq(libevdev_uinput_write_event(d.ui, EV_SYN, SYN_REPORT, 0), 0);
        ck_assert(wait_frozen("mail.service", false));
        uinput_close(&d);
}
END_TEST

void listener_input_tests(const ListenerCases *c) {
        tcase_add_test(c->dbus, test_input_stream_lid);
        tcase_add_test(c->dbus, test_input_stream_dropped);
        tcase_add_test(c->uinput, test_input_uinput_power_button);
        tcase_add_test(c->uinput, test_input_uinput_overrun_resync);
}
