/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The listener's state as org.standby.Listener1's properties, and the
 * signals that follow it: PropertiesChanged, Entered and Left (Thawed:
 * bus-thawed.c).
 *
 * The state is the journal's (the engine writes it, whoever ran the
 * engine), read through standby_state() alone; the dispatcher's
 * journal-changed step (dispatch.c) compares it with what was last told
 * and tells what changed, so a client follows a standby by signals and
 * never polls. The counters change with every event: they are read when
 * asked and emit no signal, or every event would wake every client. */
#include "listener.h"
#include "log.h"

typedef enum StandbyState {
        STANDBY_INACTIVE,
        STANDBY_ENTERING,
        STANDBY_ACTIVE,
        STANDBY_EXITING,
        _STANDBY_STATE_MAX,
} StandbyState;

static const char *const state_names[_STANDBY_STATE_MAX] = {
        [STANDBY_INACTIVE] = "inactive",
        [STANDBY_ENTERING] = "entering",
        [STANDBY_ACTIVE] = "active",
        [STANDBY_EXITING] = "exiting",
};

/* What was last told, to tell only what changed. */
static struct {
        bool synced; /* the first sync, at start, tells nothing */
        StandbyState state;
        Strategy strategy;
        usec_t since;
        bool entered; /* Entered was sent, Left not yet */
        usec_t left; /* CLOCK_REALTIME when the listener saw standby left; 0: not since it started */
        char *entered_by; /* how the standby under way was entered; NULL when inactive */
        char *asked; /* an Enter over the bus without logind: why, until it is entered */
} told;

static StandbyState standby_state(const Listener *l) {
        switch (l->m.journal ? l->m.journal->phase : JOURNAL_NONE) {
        case JOURNAL_ENTERING:
                return STANDBY_ENTERING;
        case JOURNAL_ACTIVE:
                return STANDBY_ACTIVE;
        case JOURNAL_EXITING:
                return STANDBY_EXITING;
        default:
                return STANDBY_INACTIVE;
        }
}

/* The strategy of the standby under way, else the one an entry would use. */
static Strategy standby_strategy(const Listener *l) {
        return standby_state(l) != STANDBY_INACTIVE ? l->m.journal->strategy : l->m.config->strategy;
}

static usec_t standby_since(const Listener *l) {
        return standby_state(l) != STANDBY_INACTIVE ? l->m.journal->since : told.left;
}

void listener_bus_state_asked(const char *why) {
        char *s = why ? strdup(why) : NULL;
        /* Out of memory: told as "by hand"; nothing is lost but the words. */
        free(told.asked);
        told.asked = s;
}

/* How the standby under way was entered: the policy's words (logind.c)
 * where logind is followed, else an Enter's, else by hand. */
static char *entry_cause(Listener *l) {
        const char *why = listener_logind_last_entry(l) ?: told.asked;
        return strdup(why ?: "by hand (standby.target, standby-manager enter)");
}

void listener_bus_state_sync(Listener *l) {
        StandbyState state = standby_state(l);
        Strategy strategy = standby_strategy(l);
        const char *changed[6];
        size_t n = 0;

        if (state == STANDBY_INACTIVE && told.state != STANDBY_INACTIVE)
                told.left = now_usec(CLOCK_REALTIME);
        usec_t since = standby_since(l);
        if (state == STANDBY_ENTERING || state == STANDBY_ACTIVE) {
                char *by = state != told.state ? entry_cause(l) : NULL;
                if (by && (!told.entered_by || !streq(by, told.entered_by))) {
                        free(told.entered_by);
                        told.entered_by = by;
                        changed[n++] = "EnteredBy";
                } else
                        free(by);
        } else if (state == STANDBY_INACTIVE && told.entered_by) {
                told.entered_by = mfree(told.entered_by);
                changed[n++] = "EnteredBy";
        }
        if (state == STANDBY_ACTIVE)
                told.asked = mfree(told.asked);
        if (state != told.state)
                changed[n++] = "State";
        if (strategy != told.strategy)
                changed[n++] = "Strategy";
        if (since != told.since)
                changed[n++] = "Since";
        changed[n] = NULL;
        told.state = state;
        told.strategy = strategy;
        told.since = since;
        if (!told.synced) {
                told.synced = true;
                told.entered = state == STANDBY_ACTIVE;
                return;
        }
        if (n > 0 && l->bus)
                (void) sd_bus_emit_properties_changed_strv(l->bus, LISTENER_OBJECT_PATH, LISTENER_INTERFACE,
                                                           (char **) changed);
        if (state == STANDBY_ACTIVE && !told.entered) {
                told.entered = true;
                if (l->bus)
                        (void) sd_bus_emit_signal(l->bus, LISTENER_OBJECT_PATH, LISTENER_INTERFACE, "Entered", "s",
                                                  told.entered_by ?: "");
        } else if (state == STANDBY_INACTIVE && told.entered) {
                told.entered = false;
                if (l->bus)
                        (void) sd_bus_emit_signal(l->bus, LISTENER_OBJECT_PATH, LISTENER_INTERFACE, "Left", "s",
                                                  l->leave_why ?: listener_logind_last_leave(l) ?:
                                                          "by hand (standby.target, standby-manager exit)");
        }
        if (state == STANDBY_INACTIVE)
                l->leave_why = mfree(l->leave_why); /* told (Left, and logind's LastLeave) */
}

void listener_bus_state_inhibitors_changed(Listener *l) {
        if (l->bus)
                (void) sd_bus_emit_properties_changed(l->bus, LISTENER_OBJECT_PATH, LISTENER_INTERFACE, "Inhibitors",
                                                      NULL);
}

void listener_bus_state_free(void) {
        told.entered_by = mfree(told.entered_by);
        told.asked = mfree(told.asked);
}

int listener_property_state(sd_bus *bus, const char *path, const char *interface, const char *property,
                            sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", state_names[standby_state(userdata)]);
}

int listener_property_strategy(sd_bus *bus, const char *path, const char *interface, const char *property,
                               sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", strategy_to_string(standby_strategy(userdata)));
}

int listener_property_since(sd_bus *bus, const char *path, const char *interface, const char *property,
                            sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "t", (uint64_t) standby_since(userdata));
}

int listener_property_entered_by(sd_bus *bus, const char *path, const char *interface, const char *property,
                                 sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        /* What the last sync told: the same words as EnteredBy's signal. */
        return sd_bus_message_append(reply, "s",
                                     standby_state(userdata) != STANDBY_INACTIVE ? told.entered_by ?: "" : "");
}

/* The counters worth a glance, from the listener's own statistics: how
 * much it did, not when (the rest, and the timings, are GetStatistics',
 * for root and Group=). */
int listener_property_counter(sd_bus *bus, const char *path, const char *interface, const char *property,
                              sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        const Statistics *s = &((Listener *) userdata)->stats;
        uint64_t v = streq(property, "Events")         ? s->events
                     : streq(property, "Thaws")        ? s->thaws
                     : streq(property, "Refreezes")    ? s->refreezes
                     : streq(property, "ThawFailures") ? s->thaw_failures
                     : streq(property, "Exits")        ? s->exits
                                                       : 0;
        return sd_bus_message_append(reply, "t", v);
}
