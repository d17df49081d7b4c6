/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Whom a bus name belongs to, so that a signal's sender can be checked.
 * On dbus-daemon, sd-bus cannot check a well-known sender= itself (messages
 * carry unique names): the bus filters broadcasts by it, but a signal that
 * reaches the listener for another match, or one sent to the listener
 * alone, comes from whoever sent it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-owner.h"
#include "log.h"
#include "macro.h"

#define DBUS_SERVICE "org.freedesktop.DBus"

static bool sent_by(sd_bus_message *msg, const char *name) {
        const char *sender = sd_bus_message_get_sender(msg);
        return sender && name && streq(sender, name);
}

struct BusOwner {
        char *name;
        char *owner;                    /* unique name; NULL: nobody, or not known yet */
        sd_bus_slot *match, *query;
        bus_owner_changed_t changed;
        void *userdata;
};

static void set_owner(BusOwner *o, const char *owner) {
        char *s = NULL;

        if (!isempty(owner) && !(s = strdup(owner)))
                log_warning("Out of memory: the owner of %s is not known; its signals are ignored.", o->name);
        free(o->owner);
        o->owner = s;
}

/* NameOwnerChanged from the bus itself: its sender is the bus's own name,
 * which no connection can take, and it is sent to everyone. */
static int on_owner_changed(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        BusOwner *o = userdata;
        const char *name, *old, *new;

        if (!bus_signal_from_bus(msg)) {
                log_debug("Ignored a NameOwnerChanged from %s%s: not the bus's.", strna(sd_bus_message_get_sender(msg)),
                          bus_signal_is_broadcast(msg) ? "" : ", sent to the listener alone");
                return 0;
        }
        if (sd_bus_message_read(msg, "sss", &name, &old, &new) < 0 || !streq(name, o->name))
                return 0;
        /* A change answers the question too: an older answer is stale. */
        o->query = sd_bus_slot_unref(o->query);
        set_owner(o, new);
        log_debug("%s is owned by %s.", o->name, o->owner ?: "nobody");
        if (o->changed)
                o->changed(o, o->owner, o->userdata);
        return 0;
}

static int on_get_owner(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        BusOwner *o = userdata;
        const char *owner = NULL;

        o->query = sd_bus_slot_unref(o->query);
        if (!sd_bus_message_is_method_error(reply, NULL))
                (void) sd_bus_message_read(reply, "s", &owner);
        set_owner(o, owner);
        log_debug("%s is owned by %s.", o->name, o->owner ?: "nobody");
        return 0;
}

int bus_owner_new(sd_bus *bus, const char *name, bus_owner_changed_t changed, void *userdata, BusOwner **ret) {
        _cleanup_free_ char *match = NULL;
        BusOwner *o;
        int r;

        o = calloc(1, sizeof(BusOwner));
        if (!o)
                return -ENOMEM;
        o->changed = changed;
        o->userdata = userdata;
        o->name = strdup(name);
        if (!o->name) {
                bus_owner_free(o);
                return -ENOMEM;
        }
        if (name[0] == ':') { /* a unique name: never changes hands */
                o->owner = strdup(name);
                if (!o->owner) {
                        bus_owner_free(o);
                        return -ENOMEM;
                }
                *ret = o;
                return 0;
        }
        /* The match first: the bus answers in order, so no change after the
         * answer is missed. */
        if (asprintf(&match, "type='signal',sender='" DBUS_SERVICE "',interface='" DBUS_SERVICE
                             "',member='NameOwnerChanged',arg0='%s'", name) < 0)
                r = -ENOMEM;
        else
                r = sd_bus_add_match_async(bus, &o->match, match, on_owner_changed, NULL, o);
        if (r >= 0)
                r = sd_bus_call_method_async(bus, &o->query, DBUS_SERVICE, "/org/freedesktop/DBus", DBUS_SERVICE,
                                             "GetNameOwner", on_get_owner, o, "s", name);
        if (r < 0) {
                bus_owner_free(o);
                return r;
        }
        *ret = o;
        return 0;
}

BusOwner *bus_owner_free(BusOwner *o) {
        if (!o)
                return NULL;
        sd_bus_slot_unref(o->match);
        sd_bus_slot_unref(o->query);
        free(o->name);
        free(o->owner);
        free(o);
        return NULL;
}

bool bus_signal_is_broadcast(sd_bus_message *msg) {
        return !sd_bus_message_get_destination(msg);
}

bool bus_owner_sent(const BusOwner *o, sd_bus_message *msg) {
        return o && bus_signal_is_broadcast(msg) && sent_by(msg, o->owner);
}

bool bus_signal_from_bus(sd_bus_message *msg) {
        return sent_by(msg, DBUS_SERVICE) && bus_signal_is_broadcast(msg);
}
