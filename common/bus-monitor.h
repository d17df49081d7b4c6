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
 * boundary (sd-bus reads a message at a time). */
int bus_monitor_open(const char *address, char **matches, void (*queued)(sd_bus_message *m, void *userdata),
                     void *userdata, int *ret_fd);
