/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "bench.h"
#include "cgroup.h"
#include "fileio.h"
#include "macro.h"

int scratch_create(Scratch *s) {
        int r;

        *s = (Scratch) { .root_fd = -EBADF };
        r = cgroup_find_mount(&s->mount);
        if (r < 0)
                return r;
        r = cgroup_open_root(s->mount, &s->root_fd);
        if (r < 0)
                return r;
        if (asprintf(&s->base, "standby-bench.%d", (int) getpid()) < 0)
                return -ENOMEM;
        return cgroup_create(s->root_fd, s->base);
}

int scratch_open(Scratch *s, const char *sub, int *ret_fd) {
        char path[4096];

        snprintf(path, sizeof(path), "%s/%s", s->base, sub);
        /* mkdir -p, one component at a time below base */
        for (char *p = path + strlen(s->base) + 1; *p; p++)
                if (*p == '/') {
                        *p = 0;
                        if (mkdirat(s->root_fd, path, 0755) < 0 && errno != EEXIST)
                                return negative_errno();
                        *p = '/';
                }
        if (mkdirat(s->root_fd, path, 0755) < 0 && errno != EEXIST)
                return negative_errno();
        return cgroup_open(s->root_fd, path, ret_fd);
}

int scratch_spawn(Scratch *s, const char *sub, char *const argv[], pid_t *ret) {
        return scratch_spawn_ticking(s, sub, argv, ret, NULL);
}

int scratch_spawn_ticking(Scratch *s, const char *sub, char *const argv[], pid_t *ret, int *ret_tick_fd) {
        _cleanup_close_ int cg = -EBADF;
        int sync[2], tick[2] = { -1, -1 }, r;
        pid_t pid;
        char c;

        r = scratch_open(s, sub, &cg);
        if (r < 0)
                return r;
        pid_t *np = realloc(s->pids, (s->n_pids + 1) * sizeof(pid_t));
        if (!np)
                return -ENOMEM;
        s->pids = np;
        if (pipe2(sync, O_CLOEXEC) < 0)
                return negative_errno();
        if (ret_tick_fd && pipe2(tick, O_CLOEXEC | O_NONBLOCK) < 0)
                return negative_errno();
        pid = fork();
        if (pid < 0)
                return negative_errno();
        if (pid == 0) {
                close(sync[0]);
                if (cgroup_attach(cg, getpid()) < 0)
                        _exit(127);
                int null = open("/dev/null", O_RDWR);
                dup2(null, 0);
                dup2(null, 1);
                if (ret_tick_fd && dup2(tick[1], 3) != 3)
                        _exit(127);
                execv(argv[0], argv);
                (void) !write(sync[1], "e", 1);
                _exit(127);
        }
        close(sync[1]);
        if (ret_tick_fd) {
                close(tick[1]);
                *ret_tick_fd = tick[0];
        }
        s->pids[s->n_pids++] = pid;
        /* EOF: exec'd inside its cgroup; a byte: it failed. */
        ssize_t n = read(sync[0], &c, 1);
        close(sync[0]);
        if (n != 0)
                return -ENOEXEC;
        if (ret)
                *ret = pid;
        return 0;
}

static int thaw_one(int fd, const char *rel, void *userdata) {
        (void) cgroup_set_freeze(fd, false);
        return CGROUP_WALK_CONTINUE;
}

void scratch_destroy(Scratch *s) {
        if (s->root_fd >= 0 && s->base)
                (void) cgroup_walk(s->root_fd, s->base, thaw_one, NULL);
        for (size_t i = 0; i < s->n_pids; i++)
                (void) kill(s->pids[i], SIGKILL);
        for (size_t i = 0; i < s->n_pids; i++)
                (void) waitpid(s->pids[i], NULL, 0);
        if (s->root_fd >= 0 && s->base)
                (void) cgroup_remove_tree(s->root_fd, s->base);
        free(s->pids);
        free(s->base);
        free(s->mount);
        safe_close(s->root_fd);
        *s = (Scratch) { .root_fd = -EBADF };
}

void bench_drain(int fd) {
        char buf[4096];
        while (read(fd, buf, sizeof(buf)) > 0)
                ;
}
