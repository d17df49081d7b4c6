/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* GetStatistics' rows: the listener's own counters (Statistics), then each
 * started source's, read from its state through its rows
 * (ListenerSource.statistics), in the order the sources started. */
#include <string.h>

#include "listener.h"
#include "log.h"

/* The statistics of the listener as a whole (events of every kind, thaws,
 * windows) and those more than one source counts. */
static const ListenerStatistic core_statistics[] = {
        LISTENER_STATISTIC(events),          LISTENER_STATISTIC(matched),       LISTENER_STATISTIC(thaws),
        LISTENER_STATISTIC(fds_refused),
        LISTENER_STATISTIC(coalesced),       LISTENER_STATISTIC(refreezes),     LISTENER_STATISTIC(exits),
        LISTENER_STATISTIC(resyncs),         LISTENER_STATISTIC(forged),        LISTENER_STATISTIC(replayed),
        LISTENER_STATISTIC(thaw_usec_total), LISTENER_STATISTIC(thaw_usec_max), LISTENER_STATISTIC(systemd_fallbacks),
        LISTENER_STATISTIC(journal_busy),    LISTENER_STATISTIC(thaw_failures), LISTENER_STATISTIC(jobs_released),
        LISTENER_STATISTIC(systemd_connects), LISTENER_STATISTIC(records),   LISTENER_STATISTIC(systemd_links),
        LISTENER_STATISTIC(systemd_signals), LISTENER_STATISTIC(systemd_renewals), LISTENER_STATISTIC(yields),
        LISTENER_STATISTIC(systemd_thaws),   LISTENER_STATISTIC(idle_ends),     LISTENER_STATISTIC(idle_looks),
        LISTENER_STATISTIC(maintenance_windows), LISTENER_STATISTIC(maintenance_thaws),
        {},
};

int listener_statistics_check(void) {
        bool seen[sizeof(Statistics) / sizeof(uint64_t)] = {};
        size_t n = 0;

        for (const ListenerStatistic *s = core_statistics; s->key; s++, n++) {
                size_t k = s->offset / sizeof(uint64_t);
                if (seen[k])
                        return log_error_errno(-EINVAL, "Statistic %s has two rows.", s->key);
                seen[k] = true;
        }
        if (n != ELEMENTSOF(seen))
                return log_error_errno(-EINVAL, "%zu statistics of %zu have a row in listener/statistics.c.", n,
                                       ELEMENTSOF(seen));
        return 0;
}

static uint64_t read_counter(const void *base, const ListenerStatistic *s) {
        uint64_t v = 0;

        if (base) /* a source not started: nothing counted */
                memcpy(&v, (const uint8_t *) base + s->offset, sizeof(v));
        return v;
}

int listener_statistics_foreach(Listener *l, ListenerStatisticRow row, void *userdata) {
        int r;

        for (const ListenerStatistic *s = core_statistics; s->key; s++)
                if ((r = row(s->key, read_counter(&l->stats, s), userdata)) < 0)
                        return r;
        for (size_t i = 0; i < LISTENER_SOURCES_MAX && l->source_of_state[i]; i++)
                for (const ListenerStatistic *s = l->source_of_state[i]->statistics; s && s->key; s++)
                        if ((r = row(s->key, read_counter(l->source_states[i], s), userdata)) < 0)
                                return r;
        return 0;
}
