/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <systemd/sd-bus.h>

typedef struct BusOwner BusOwner;

/* Called when the bus says name changed hands (not for the first answer):
 * owner is the new unique name, NULL when nobody owns it. */
typedef void (*bus_owner_changed_t)(BusOwner *o, const char *owner, void *userdata);

/* Follows who owns the bus name name, without waiting: NameOwnerChanged
 * from the bus itself, and GetNameOwner asked once. A unique name owns
 * itself. changed may be NULL. Returns 0 and *ret, or -errno. */
int bus_owner_new(sd_bus *bus, const char *name, bus_owner_changed_t changed, void *userdata, BusOwner **ret);

/* Accepts NULL; returns NULL. */
BusOwner *bus_owner_free(BusOwner *o);

/* Whether msg was sent to everyone (no destination) by the connection that
 * owns the name now. False while the owner is not known yet. */
bool bus_owner_sent(const BusOwner *o, sd_bus_message *msg);

/* Whether msg is a signal sent to everyone: a signal sent to one
 * connection alone is delivered whatever the receiver's match rules say,
 * sender= included, so any connection the bus policy lets send it could
 * forge it. */
bool bus_signal_is_broadcast(sd_bus_message *msg);

/* Whether msg was sent to everyone by the bus itself (NameOwnerChanged):
 * its name is one no connection can take. */
bool bus_signal_from_bus(sd_bus_message *msg);
