/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The listener's queue of work: what a handler leaves for the dispatcher
 * (dispatch.c). A source, a timer or a completion only sets bits here; one
 * defer source, enabled while bits are set, hands them to the dispatcher
 * once the handler returns. Nothing is enabled while nothing is queued:
 * an idle listener has no source pending. */
#include "listener.h"

int listener_queue_init(Listener *l, sd_event_handler_t dispatcher) {
        int r;

        r = sd_event_add_defer(l->event, &l->queue_source, dispatcher, l);
        if (r < 0)
                return r;
        /* Before every other source: an event is judged by a cache that
         * follows the journal, and the hot sources (loop.c) are read only
         * once nothing of sd-event's is pending. */
        r = sd_event_source_set_priority(l->queue_source, LISTENER_QUEUE_PRIORITY);
        if (r >= 0)
                r = sd_event_source_set_enabled(l->queue_source, l->queued ? SD_EVENT_ONESHOT : SD_EVENT_OFF);
        if (r < 0)
                l->queue_source = sd_event_source_unref(l->queue_source);
        return r;
}

void listener_enqueue(Listener *l, ListenerWork work) {
        l->queued |= work;
        /* Enabling a defer source makes it pending at once: sd_event_wait()
         * sees it even when this runs on the hot path, between prepare and
         * wait. */
        if (l->queue_source)
                (void) sd_event_source_set_enabled(l->queue_source, SD_EVENT_ONESHOT);
}

ListenerWork listener_queue_take(Listener *l) {
        ListenerWork work = l->queued;

        l->queued = 0;
        return work;
}

void listener_queue_free(Listener *l) {
        l->queue_source = sd_event_source_disable_unref(l->queue_source);
        l->queued = 0;
}
