/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* standby-manager status asks standby-listener for its statistics over D-Bus
 * (libsystemd through sdbus-dl.c). */
#include "sdbus-dl.h"

#include "log.h"
#include "manager.h"

#define LISTENER_BUS_NAME "org.standby.Listener1"

int listener_stats_get(const char *address, ListenerStat **ret, size_t *ret_n) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        sd_bus *b = NULL;
        ListenerStat *stats = NULL;
        size_t n = 0;
        const char *key;
        uint64_t value;
        int r = 0;

        const SdBus *bus_fn = sdbus_get(&r);
        if (!bus_fn)
                return r;
#define bus (*bus_fn)
        if (address) {
                r = bus.new_(&b);
                if (r >= 0)
                        r = bus.set_address(b, address);
                if (r >= 0)
                        r = bus.set_bus_client(b, 1);
                if (r >= 0)
                        r = bus.start(b);
        } else
                r = bus.open_system(&b);
        if (r < 0)
                goto finish;
        (void) bus.set_method_call_timeout(b, 2 * USEC_PER_SEC);
        r = bus.call_method(b, LISTENER_BUS_NAME, "/org/standby/Listener1", "org.standby.Listener1", "GetStatistics",
                            &error, &reply, "");
        if (r < 0)
                goto finish;
        r = bus.enter_container(reply, 'a', "{st}");
        while (r >= 0 && (r = bus.read(reply, "{st}", &key, &value)) > 0) {
                ListenerStat *ns = realloc(stats, (n + 1) * sizeof(ListenerStat));
                if (!ns) {
                        r = -ENOMEM;
                        break;
                }
                stats = ns;
                snprintf(stats[n].key, sizeof(stats[n].key), "%s", key);
                stats[n++].value = value;
        }
finish:
        bus.error_free(&error);
        if (reply)
                bus.message_unref(reply);
        if (b)
                bus.close_unref(b);
        if (r < 0) {
                free(stats);
                return r;
        }
        *ret = stats;
        *ret_n = n;
        return 0;
#undef bus
}
