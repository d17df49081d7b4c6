/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* input-devices [FIFO]: a laptop's lid switch and power button, as two
 * virtual evdev devices through /dev/uinput ("standby-vm-lid": EV_SW SW_LID,
 * open at start, and SW_DOCK, undocked; "standby-vm-power": EV_KEY
 * KEY_POWER), so that a system test
 * drives real input events that every reader (systemd-logind,
 * standby-listener) sees as from real hardware.
 *
 * Commands, one a line, from FIFO (made if missing, and opened read-write so
 * that the devices outlive each writer: `echo "lid close" > FIFO` from
 * anywhere) or else from stdin (end of input ends it):
 *   lid close | lid open         the switch, then a SYN_REPORT
 *   dock on | dock off           the dock switch, likewise
 *   power press                  KEY_POWER down and up, each reported
 *   power down | power up        half a press (a held button)
 *   quit                         remove the devices and exit
 * Prints "ready LID_NODE POWER_NODE" (their /dev/input/eventN) once both
 * exist, and "done COMMAND" after each command it carried out, flushed, so
 * that a caller may wait for either; an unknown command is an error line on
 * stderr and changes nothing. Exits 1 if a device cannot be made. */
#include <errno.h>
#include <fcntl.h>
#include <libevdev/libevdev-uinput.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct InputDevice {
        struct libevdev *dev;
        struct libevdev_uinput *ui;
} InputDevice;

static int input_device_create(InputDevice *d, const char *name, unsigned type, unsigned code, int code2) {
        int r;

        d->dev = libevdev_new();
        if (!d->dev)
                return -ENOMEM;
        libevdev_set_name(d->dev, name);
        /* A host-side device, as ACPI's "Lid Switch" and "Power Button" are. */
        libevdev_set_id_bustype(d->dev, BUS_HOST);
        r = libevdev_enable_event_code(d->dev, type, code, NULL);
        if (r >= 0 && code2 >= 0)
                r = libevdev_enable_event_code(d->dev, type, (unsigned) code2, NULL);
        if (r < 0)
                return r;
        return libevdev_uinput_create_from_device(d->dev, LIBEVDEV_UINPUT_OPEN_MANAGED, &d->ui);
}

static void input_device_destroy(InputDevice *d) {
        if (d->ui)
                libevdev_uinput_destroy(d->ui);
        libevdev_free(d->dev);
}

static int input_device_emit(InputDevice *d, unsigned type, unsigned code, int value) {
        int r = libevdev_uinput_write_event(d->ui, type, code, value);
        return r < 0 ? r : libevdev_uinput_write_event(d->ui, EV_SYN, SYN_REPORT, 0);
}

/* Carries out one command line; 1 for quit, 0 when done, negative errno. */
static int run_command(const char *line, InputDevice *lid, InputDevice *power) {
        int r;

        if (strcmp(line, "lid close") == 0)
                return input_device_emit(lid, EV_SW, SW_LID, 1);
        if (strcmp(line, "lid open") == 0)
                return input_device_emit(lid, EV_SW, SW_LID, 0);
        if (strcmp(line, "dock on") == 0)
                return input_device_emit(lid, EV_SW, SW_DOCK, 1);
        if (strcmp(line, "dock off") == 0)
                return input_device_emit(lid, EV_SW, SW_DOCK, 0);
        if (strcmp(line, "power down") == 0)
                return input_device_emit(power, EV_KEY, KEY_POWER, 1);
        if (strcmp(line, "power up") == 0)
                return input_device_emit(power, EV_KEY, KEY_POWER, 0);
        if (strcmp(line, "power press") == 0) {
                r = input_device_emit(power, EV_KEY, KEY_POWER, 1);
                return r < 0 ? r : input_device_emit(power, EV_KEY, KEY_POWER, 0);
        }
        if (strcmp(line, "quit") == 0)
                return 1;
        return -EINVAL;
}

int main(int argc, char *argv[]) {
        InputDevice lid = {}, power = {};
        FILE *in = stdin;
        char line[128];
        int r, status = 1;

        if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
                fprintf(stderr, "Usage: input-devices [FIFO]\n");
                return 2;
        }
        if (argc == 2) {
                int fd;

                if (mkfifo(argv[1], 0600) < 0 && errno != EEXIST) {
                        fprintf(stderr, "input-devices: mkfifo %s: %s\n", argv[1], strerror(errno));
                        return 1;
                }
                /* Read-write: a writer closing is no end of input. */
                fd = open(argv[1], O_RDWR | O_CLOEXEC);
                if (fd < 0 || !(in = fdopen(fd, "r"))) {
                        fprintf(stderr, "input-devices: open %s: %s\n", argv[1], strerror(errno));
                        return 1;
                }
        }
        r = input_device_create(&lid, "standby-vm-lid", EV_SW, SW_LID, SW_DOCK);
        if (r >= 0)
                r = input_device_create(&power, "standby-vm-power", EV_KEY, KEY_POWER, -1);
        if (r < 0) {
                fprintf(stderr, "input-devices: cannot create a uinput device: %s\n", strerror(-r));
                goto out;
        }
        {
                const char *lid_node = libevdev_uinput_get_devnode(lid.ui), *power_node = libevdev_uinput_get_devnode(power.ui);
                printf("ready %s %s\n", lid_node ?: "?", power_node ?: "?");
        }
        fflush(stdout);
        while (fgets(line, sizeof(line), in)) {
                line[strcspn(line, "\n")] = '\0';
                if (line[0] == '\0')
                        continue;
                r = run_command(line, &lid, &power);
                if (r == 1)
                        break;
                if (r == -EINVAL) {
                        fprintf(stderr, "input-devices: unknown command \"%s\"\n", line);
                        continue;
                }
                if (r < 0) {
                        fprintf(stderr, "input-devices: %s: %s\n", line, strerror(-r));
                        goto out;
                }
                printf("done %s\n", line);
                fflush(stdout);
        }
        status = 0;
out:
        input_device_destroy(&power);
        input_device_destroy(&lid);
        if (in != stdin)
                fclose(in);
        return status;
}
