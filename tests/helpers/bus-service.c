/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus-service ADDRESS NAME: owns NAME on the bus at ADDRESS and answers
 * org.example.Service.Ping with "pong": an unmodified D-Bus service for the
 * listener's dbus-call test. Prints "ready" once it owns the name. */
#include <stdio.h>
#include <systemd/sd-bus.h>

static int ping(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return sd_bus_reply_method_return(m, "s", "pong");
}

static const sd_bus_vtable vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("Ping", "", "s", ping, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END
};

int main(int argc, char *argv[]) {
        sd_bus *bus = NULL;

        if (argc != 3) {
                fprintf(stderr, "Usage: bus-service ADDRESS NAME\n");
                return 2;
        }
        if (sd_bus_new(&bus) < 0 || sd_bus_set_address(bus, argv[1]) < 0 || sd_bus_set_bus_client(bus, 1) < 0 ||
            sd_bus_start(bus) < 0 || sd_bus_add_object_vtable(bus, NULL, "/org/example", "org.example.Service", vtable, NULL) < 0 ||
            sd_bus_request_name(bus, argv[2], 0) < 0) {
                fprintf(stderr, "bus-service: cannot set up on %s\n", argv[1]);
                return 1;
        }
        printf("ready\n");
        fflush(stdout);
        for (;;) {
                int r = sd_bus_process(bus, NULL);
                if (r < 0)
                        return 1;
                if (r == 0 && sd_bus_wait(bus, UINT64_MAX) < 0)
                        return 1;
        }
}
