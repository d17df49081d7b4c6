/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A desktop-like client of the listener, for the system tests: it follows
 * standby by signals alone, never polling.
 *
 *   standby-watch FILE
 *
 * Reads the State property once and appends "State=VALUE" to FILE, then
 * "ready"; then a line for each PropertiesChanged's State ("State=VALUE")
 * and each Entered ("Entered HOW"), Left ("Left WHY") and Thawed ("Thawed
 * UNIT") it hears, and exits after the first Left. The bus is the system
 * bus, or $STANDBY_BUS_ADDRESS. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#define PATH "/org/standby/Listener1"
#define IFACE "org.standby.Listener1"

static const char *file;
static int left;

static void note(const char *what, const char *value) {
        FILE *f = fopen(file, "ae");
        if (!f)
                return;
        fprintf(f, "%s%s\n", what, value);
        fflush(f);
        fsync(fileno(f));
        fclose(f);
}

static int on_properties_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        const char *iface, *name, *value;

        if (sd_bus_message_read(m, "s", &iface) < 0 || strcmp(iface, IFACE) != 0 ||
            sd_bus_message_enter_container(m, 'a', "{sv}") < 0)
                return 0;
        while (sd_bus_message_enter_container(m, 'e', "sv") > 0) {
                if (sd_bus_message_read(m, "s", &name) < 0)
                        return 0;
                if (strcmp(name, "State") == 0) {
                        if (sd_bus_message_read(m, "v", "s", &value) < 0)
                                return 0;
                        note("State=", value);
                } else if (sd_bus_message_skip(m, "v") < 0)
                        return 0;
                if (sd_bus_message_exit_container(m) < 0)
                        return 0;
        }
        return 0;
}

static int on_signal(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        const char *a, *b, *c;

        if (sd_bus_message_is_signal(m, IFACE, "Entered") && sd_bus_message_read(m, "s", &a) >= 0)
                note("Entered ", a);
        else if (sd_bus_message_is_signal(m, IFACE, "Left") && sd_bus_message_read(m, "s", &a) >= 0) {
                note("Left ", a);
                left = 1;
        } else if (sd_bus_message_is_signal(m, IFACE, "Thawed") && sd_bus_message_read(m, "sss", &a, &b, &c) >= 0)
                note("Thawed ", a);
        return 0;
}

int main(int argc, char **argv) {
        const char *address = getenv("STANDBY_BUS_ADDRESS");
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus *bus = NULL;
        char *state = NULL;
        int r;

        if (argc != 2) {
                fprintf(stderr, "Usage: standby-watch FILE\n");
                return 2;
        }
        file = argv[1];
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
        if (r >= 0)
                r = sd_bus_match_signal(bus, NULL, NULL, PATH, "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                        on_properties_changed, NULL);
        if (r >= 0)
                r = sd_bus_match_signal(bus, NULL, NULL, PATH, IFACE, NULL, on_signal, NULL);
        if (r < 0) {
                fprintf(stderr, "standby-watch: cannot watch the listener: %s\n", strerror(-r));
                return 1;
        }
        /* Subscribed first, then read: no change falls between the two. */
        r = sd_bus_get_property_string(bus, IFACE, PATH, IFACE, "State", &error, &state);
        if (r < 0) {
                fprintf(stderr, "standby-watch: State: %s\n", error.message ? error.message : strerror(-r));
                note("refused ", error.name ? error.name : strerror(-r));
                return 1;
        }
        note("State=", state);
        free(state);
        note("ready", "");
        while (!left) {
                r = sd_bus_process(bus, NULL);
                if (r < 0) {
                        fprintf(stderr, "standby-watch: %s\n", strerror(-r));
                        return 1;
                }
                if (r == 0 && sd_bus_wait(bus, UINT64_MAX) < 0)
                        return 1;
        }
        sd_bus_flush_close_unref(bus);
        return 0;
}
