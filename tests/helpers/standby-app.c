/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An app that wants to be told before standby, for the system tests.
 *
 *   standby-app DIR [delay|block] [WORK_MSEC]
 *
 * delay (the default): takes a delay lock on standby, writes DIR/ready;
 * on PrepareForStandby(true) works WORK_MSEC (default 500), appends a line
 * to DIR/prepared and closes the lock; on PrepareForStandby(false) appends
 * to DIR/resumed and takes the lock again. block: takes a block lock,
 * writes DIR/ready and holds it until killed. The bus is the system bus,
 * or $STANDBY_BUS_ADDRESS. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

static const char *dir;
static const char *mode = "delay";
static long work_msec = 500;
static int lock_fd = -1;

static void note(const char *file, const char *what) {
        char path[4096];
        struct timespec ts;
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, file);
        clock_gettime(CLOCK_REALTIME, &ts);
        f = fopen(path, "ae");
        if (!f)
                return;
        fprintf(f, "%lld.%09ld %s\n", (long long) ts.tv_sec, ts.tv_nsec, what);
        fflush(f);
        fsync(fileno(f));
        fclose(f);
}

static int take_lock(sd_bus *bus) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        int fd, r;

        r = sd_bus_call_method(bus, "org.standby.Listener1", "/org/standby/Listener1", "org.standby.Listener1",
                               "Inhibit", &error, &reply, "ssss", "standby", "standby-app",
                               "writes its state before standby", mode);
        if (r < 0) {
                fprintf(stderr, "standby-app: Inhibit: %s\n", error.message ? error.message : strerror(-r));
                note("refused", error.message ? error.message : strerror(-r));
                sd_bus_error_free(&error);
                return r;
        }
        r = sd_bus_message_read(reply, "h", &fd);
        if (r >= 0)
                lock_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        sd_bus_message_unref(reply);
        return lock_fd < 0 ? -errno : 0;
}

static int on_prepare(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        int start;

        if (sd_bus_message_read(msg, "b", &start) < 0)
                return 0;
        if (start) {
                struct timespec ts = { work_msec / 1000, (work_msec % 1000) * 1000000L };
                nanosleep(&ts, NULL); /* the work an app finishes first */
                note("prepared", "state written");
                if (lock_fd >= 0)
                        close(lock_fd);
                lock_fd = -1;
        } else {
                note("resumed", "told standby is over");
                (void) take_lock(userdata);
        }
        return 0;
}

int main(int argc, char *argv[]) {
        const char *address = getenv("STANDBY_BUS_ADDRESS");
        sd_bus *bus = NULL;
        int r;

        if (argc < 2) {
                fprintf(stderr, "Usage: standby-app DIR [delay|block] [WORK_MSEC]\n");
                return 2;
        }
        dir = argv[1];
        if (argc > 2)
                mode = argv[2];
        if (argc > 3)
                work_msec = strtol(argv[3], NULL, 10);
        if (address) {
                r = sd_bus_new(&bus);
                if (r >= 0)
                        r = sd_bus_set_address(bus, address);
                if (r >= 0)
                        r = sd_bus_set_bus_client(bus, 1);
                if (r >= 0)
                        r = sd_bus_start(bus);
        } else
                r = sd_bus_open_system(&bus);
        if (r < 0) {
                fprintf(stderr, "standby-app: cannot connect: %s\n", strerror(-r));
                return 1;
        }
        r = sd_bus_match_signal(bus, NULL, "org.standby.Listener1", "/org/standby/Listener1", "org.standby.Listener1",
                                "PrepareForStandby", on_prepare, bus);
        if (r < 0 || take_lock(bus) < 0)
                return 1;
        note("ready", mode);
        for (;;) {
                r = sd_bus_process(bus, NULL);
                if (r < 0)
                        return 1;
                if (r == 0 && sd_bus_wait(bus, UINT64_MAX) < 0)
                        return 1;
        }
}
