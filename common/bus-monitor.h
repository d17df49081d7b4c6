/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

/* Connects to address (NULL: the system bus), becomes a monitor
 * (org.freedesktop.DBus.Monitoring.BecomeMonitor) for the match rules in
 * matches, and returns a duplicate of the connection's fd in *ret_fd, for
 * the caller to read itself; the sd-bus object is gone. Messages sd-bus had
 * already read along with the reply are handed to queued() (may be NULL),
 * never dispatched: sd-bus would answer a monitored call, and a monitor
 * that sends anything is disconnected. The fd is left at a message
 * boundary (sd-bus reads a message at a time). Waits for the bus: for
 * callers outside an event loop. */
int bus_monitor_open(const char *address, char **matches, void (*queued)(sd_bus_message *m, void *userdata),
                     void *userdata, int *ret_fd);

/* The same in steps, for a caller that drives the connection from its own
 * loop without waiting. bus_monitor_start() opens it (connecting,
 * authenticating and Hello go on as it is driven) with BecomeMonitor
 * already queued; its reply goes to callback (timeout_usec: 0 for sd-bus's
 * default). The caller drives it with sd_bus_process(bus, &m) only, never
 * with a NULL message nor sd_bus_attach_event(): sd-bus would answer a
 * monitored call. Once the reply came (and said yes), bus_monitor_take_fd()
 * hands over what sd-bus has queued and the fd, as bus_monitor_open() does;
 * the caller closes the sd-bus object (sd_bus_close_unref(), never a flush). */
int bus_monitor_start(const char *address, char **matches, sd_bus_message_handler_t callback, void *userdata,
                      uint64_t timeout_usec, sd_bus **ret_bus, sd_bus_slot **ret_slot);
int bus_monitor_take_fd(sd_bus *bus, void (*queued)(sd_bus_message *m, void *userdata), void *userdata, int *ret_fd);
