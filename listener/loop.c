/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The listener's loop: sd-event's, run step by step (prepare, wait,
 * dispatch) with its epoll fd inside an epoll of our own, which also holds
 * the event sources on a thaw's critical path (held sockets). Those are
 * handled as soon as epoll_wait() returns, before sd-event looks at
 * anything: its pass over its sources and clocks cost the bare thawer's
 * path about 8 us (traced; docs/benchmark.md section 3), which is most of
 * what the listener added to a socket event. Everything else is sd-event's,
 * dispatched right after. A hot handler runs while sd-event is between
 * prepare and wait: sd_event_now() is stale there, so the thaw path sets
 * its timers in absolute time. */
#include <sys/epoll.h>

#include "listener.h"
#include "log.h"

struct LoopSource {
        LoopHandler handler;
        void *userdata;
        int fd;
        LoopSource *next_dead;       /* removed: freed once no epoll batch can name it */
};

int listener_loop_init(Listener *l) {
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };

        l->loop_fd = epoll_create1(EPOLL_CLOEXEC);
        if (l->loop_fd < 0)
                return -errno;
        if (epoll_ctl(l->loop_fd, EPOLL_CTL_ADD, sd_event_get_fd(l->event), &ev) < 0)
                return -errno;
        return 0;
}

int listener_loop_add(Listener *l, int fd, LoopHandler handler, void *userdata, LoopSource **ret) {
        LoopSource *s = calloc(1, sizeof(LoopSource));
        struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.ptr = s };

        if (!s)
                return -ENOMEM;
        *s = (LoopSource) { .handler = handler, .userdata = userdata, .fd = fd };
        if (epoll_ctl(l->loop_fd, EPOLL_CTL_ADD, fd, &ev) < 0) {
                int r = -errno;
                free(s);
                return r;
        }
        *ret = s;
        return 0;
}

LoopSource *listener_loop_remove(Listener *l, LoopSource *s) {
        if (!s)
                return NULL;
        /* Explicitly: the fd is a duplicate, and closing it would not take
         * an open file description that others still hold out of the epoll. */
        (void) epoll_ctl(l->loop_fd, EPOLL_CTL_DEL, s->fd, NULL);
        s->handler = NULL;
        s->next_dead = l->loop_dead;
        l->loop_dead = s;
        return NULL;
}

void listener_loop_free_removed(Listener *l) {
        while (l->loop_dead) {
                LoopSource *s = l->loop_dead;
                l->loop_dead = s->next_dead;
                free(s);
        }
}

int listener_loop_run(Listener *l) {
        struct epoll_event evs[16];
        int r, code = 0;

        for (;;) {
                r = sd_event_prepare(l->event);
                /* With sd-event's work pending, the hot sources are still
                 * looked at (without waiting) once per dispatch: a source
                 * that is always ready (a user making cgroups) does not
                 * keep them waiting. */
                int n = epoll_wait(l->loop_fd, evs, ELEMENTSOF(evs), r == 0 ? -1 : 0);
                if (n < 0 && errno != EINTR)
                        return -errno;
                for (int i = 0; i < n; i++) {
                        LoopSource *s = evs[i].data.ptr;
                        if (s && s->handler) /* not removed by an earlier one */
                                s->handler(l, s->userdata);
                }
                listener_loop_free_removed(l);
                if (r == 0)
                        r = sd_event_wait(l->event, 0);
                if (r > 0)
                        r = sd_event_dispatch(l->event);
                if (r < 0)
                        return r;
                if (sd_event_get_state(l->event) == SD_EVENT_FINISHED)
                        break;
        }
        r = sd_event_get_exit_code(l->event, &code);
        return r < 0 ? r : code;
}
