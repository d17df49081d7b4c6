/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dlfcn.h>

#include "macro.h"
#include "private-socket.h"
#include "time-util.h"
#include "sdbus-dl.h"

const SdBus *sdbus_get(int *ret_error) {
        static SdBus bus;
        static void *dl;
        static int loaded;
        const struct {
                const char *name;
                void **fn;
        } syms[] = {
                { "sd_bus_new", (void **) &bus.new_ },
                { "sd_bus_open_system", (void **) &bus.open_system },
                { "sd_bus_set_address", (void **) &bus.set_address },
                { "sd_bus_set_fd", (void **) &bus.set_fd },
                { "sd_bus_set_bus_client", (void **) &bus.set_bus_client },
                { "sd_bus_set_method_call_timeout", (void **) &bus.set_method_call_timeout },
                { "sd_bus_start", (void **) &bus.start },
                { "sd_bus_is_ready", (void **) &bus.is_ready },
                { "sd_bus_call_method", (void **) &bus.call_method },
                { "sd_bus_call_method_async", (void **) &bus.call_method_async },
                { "sd_bus_message_get_error", (void **) &bus.message_get_error },
                { "sd_bus_message_get_errno", (void **) &bus.message_get_errno },
                { "sd_bus_slot_unref", (void **) &bus.slot_unref },
                { "sd_bus_get_property_string", (void **) &bus.get_property_string },
                { "sd_bus_message_new_method_call", (void **) &bus.message_new_method_call },
                { "sd_bus_message_append_strv", (void **) &bus.append_strv },
                { "sd_bus_message_append", (void **) &bus.append },
                { "sd_bus_call", (void **) &bus.call },
                { "sd_bus_message_enter_container", (void **) &bus.enter_container },
                { "sd_bus_message_exit_container", (void **) &bus.exit_container },
                { "sd_bus_message_read", (void **) &bus.read },
                { "sd_bus_message_skip", (void **) &bus.skip },
                { "sd_bus_match_signal", (void **) &bus.match_signal },
                { "sd_bus_process", (void **) &bus.process },
                { "sd_bus_wait", (void **) &bus.wait },
                { "sd_bus_get_fd", (void **) &bus.get_fd },
                { "sd_bus_get_events", (void **) &bus.get_events },
                { "sd_bus_message_unref", (void **) &bus.message_unref },
                { "sd_bus_flush_close_unref", (void **) &bus.close_unref },
                { "sd_bus_close_unref", (void **) &bus.close_unref_noflush },
                { "sd_bus_error_free", (void **) &bus.error_free },
        };

        if (loaded > 0)
                return &bus;
        if (loaded < 0)
                goto fail;
        dl = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
        for (size_t i = 0; dl && i < ELEMENTSOF(syms); i++)
                if (!(*syms[i].fn = dlsym(dl, syms[i].name)))
                        dl = NULL;
        loaded = dl ? 1 : -1;
        if (dl)
                return &bus;
fail:
        if (ret_error)
                *ret_error = -EOPNOTSUPP;
        return NULL;
}

int sdbus_connect_direct(const char *address, sd_bus **ret) {
        int r = 0;
        const SdBus *b = sdbus_get(&r);
        sd_bus *bus = NULL;
        uid_t uid;

        if (!b)
                return r;
        r = b->new_(&bus);
        /* /run/systemd/private and SystemdAddress= are root's: the plain
         * connect by name. A user's runtime directory is theirs. */
        if (r >= 0 && private_socket_address_uid(address, &uid) >= 0) {
                int fd = -EBADF;
                r = private_socket_connect(PRIVATE_SOCKET_RUNTIME_ROOT, uid, SDBUS_CONNECT_TIMEOUT_USEC, &fd);
                /* A direct connection to systemd: no Hello, as with set_address. */
                if (r >= 0 && (r = b->set_fd(bus, fd, fd)) < 0)
                        safe_close(fd);
        } else if (r >= 0)
                r = b->set_address(bus, address);
        if (r >= 0)
                r = b->start(bus);
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + SDBUS_CONNECT_TIMEOUT_USEC;
        while (r >= 0 && (r = b->is_ready(bus)) == 0) {
                r = b->process(bus, NULL);
                if (r != 0)
                        continue;
                usec_t now = now_usec(CLOCK_MONOTONIC);
                r = now >= deadline ? -ETIMEDOUT : b->wait(bus, deadline - now);
        }
        if (r < 0) {
                if (bus)
                        b->close_unref_noflush(bus);
                return r;
        }
        (void) b->set_method_call_timeout(bus, SDBUS_CONNECT_TIMEOUT_USEC);
        *ret = bus;
        return 0;
}
