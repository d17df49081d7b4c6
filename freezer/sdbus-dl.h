/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

/* sd-bus, loaded with dlopen() on first use. Linked in, libsystemd costs every
 * standby-manager run 0.65 ms at start (1.68 against 1.03 ms for an empty
 * program), which enter cannot afford; only status and the systemd backend
 * need it (and thaw --for, which asks the listener). */
typedef struct SdBus {
        int (*new_)(sd_bus **);
        int (*open_system)(sd_bus **);
        int (*set_address)(sd_bus *, const char *);
        int (*set_fd)(sd_bus *, int, int);
        int (*set_bus_client)(sd_bus *, int);
        int (*set_method_call_timeout)(sd_bus *, uint64_t);
        int (*start)(sd_bus *);
        int (*is_ready)(sd_bus *);
        int (*call_method)(sd_bus *, const char *, const char *, const char *, const char *, sd_bus_error *,
                           sd_bus_message **, const char *, ...);
        int (*call_method_async)(sd_bus *, sd_bus_slot **, const char *, const char *, const char *, const char *,
                                 sd_bus_message_handler_t, void *, const char *, ...);
        const sd_bus_error *(*message_get_error)(sd_bus_message *);
        int (*message_get_errno)(sd_bus_message *);
        sd_bus_slot *(*slot_unref)(sd_bus_slot *);
        int (*get_property_string)(sd_bus *, const char *, const char *, const char *, const char *, sd_bus_error *,
                                   char **);
        int (*message_new_method_call)(sd_bus *, sd_bus_message **, const char *, const char *, const char *,
                                       const char *);
        int (*append_strv)(sd_bus_message *, char **);
        int (*append)(sd_bus_message *, const char *, ...);
        int (*call)(sd_bus *, sd_bus_message *, uint64_t, sd_bus_error *, sd_bus_message **);
        int (*enter_container)(sd_bus_message *, char, const char *);
        int (*exit_container)(sd_bus_message *);
        int (*read)(sd_bus_message *, const char *, ...);
        int (*skip)(sd_bus_message *, const char *);
        int (*match_signal)(sd_bus *, sd_bus_slot **, const char *, const char *, const char *, const char *,
                            sd_bus_message_handler_t, void *);
        int (*process)(sd_bus *, sd_bus_message **);
        int (*wait)(sd_bus *, uint64_t);
        int (*get_fd)(sd_bus *);
        int (*get_events)(sd_bus *);
        sd_bus_message *(*message_unref)(sd_bus_message *);
        sd_bus *(*close_unref)(sd_bus *);
        sd_bus *(*close_unref_noflush)(sd_bus *); /* a flush waits for the authentication, unbounded */
        void (*error_free)(sd_bus_error *);
} SdBus;

/* Returns the loaded functions, or NULL (and -EOPNOTSUPP in *ret_error) when
 * libsystemd.so.0 is not there. */
const SdBus *sdbus_get(int *ret_error);

/* Connects straight to a systemd manager's private socket (no bus daemon:
 * peer to peer, as systemctl does), and waits at most
 * SDBUS_CONNECT_TIMEOUT_USEC for the manager to take it (-ETIMEDOUT). The
 * kernel queues a connection to a listening socket whatever its owner does,
 * and sd-bus would wait for the authentication without any bound: a user
 * manager stopped by its own user (SIGSTOP) would keep exit from ever
 * thawing anything. The same bound is set for the connection's calls
 * (sdbus_connect_direct's caller may raise it for one that waits on
 * purpose, such as FreezeUnit). A user manager's address
 * (unix:path=/run/user/UID/systemd/private) is reached through
 * private_socket_connect() (common/private-socket.h), bounded by the same
 * timeout: its path is the user's. */
#define SDBUS_CONNECT_TIMEOUT_USEC (5 * 1000000ULL)
int sdbus_connect_direct(const char *address, sd_bus **ret);
