/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Thawed signal: which unit an event or a call thawed, and why, told
 * once the thaw is done (thaw.c). A file of its own, calling nothing of
 * the listener's: the thaw path is below everything that changes the
 * state, and what tells of the state (bus-state.c) asks logind.c, which
 * ends standby, which thaws. */
#include "listener.h"

void listener_bus_thawed(Listener *l, const char *cgroup, const char *cause) {
        const char *slash = strrchr(cgroup, '/');

        if (l->bus)
                (void) sd_bus_emit_signal(l->bus, LISTENER_OBJECT_PATH, LISTENER_INTERFACE, "Thawed", "sss",
                                          slash ? slash + 1 : cgroup, cgroup, cause ?: "");
}
