/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuse-stuck CGROUP_DIR: a FUSE server that never answers, and a client in
 * CGROUP_DIR stuck in the kernel waiting for it (state D, killable only): the
 * task that keeps a cgroup from ever reaching "frozen 1".
 * Prints "ready <client-pid>" once the client's request has been taken; then
 * keeps reading requests until killed. Everything lives in a private mount
 * namespace, so nothing is left mounted when it ends. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define BUF_SIZE (1024 * 1024 + 4096)

static void die(const char *what) {
        fprintf(stderr, "fuse-stuck: %s: %s\n", what, strerror(errno));
        exit(1);
}

int main(int argc, char *argv[]) {
        static char buf[BUF_SIZE];
        char opts[128], procs[4096];
        const char *dir = "/tmp/standby-fuse";
        bool announced = false;
        pid_t client;
        int fd;

        if (argc != 2) {
                fprintf(stderr, "Usage: fuse-stuck CGROUP_DIR\n");
                return 2;
        }
        if (unshare(CLONE_NEWNS) < 0)
                die("unshare");
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                die("make / private");
        if (mount("tmpfs", "/tmp", "tmpfs", 0, "size=1m") < 0)
                die("mount tmpfs");
        if (mkdir(dir, 0755) < 0)
                die("mkdir");
        fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
        if (fd < 0)
                die("open /dev/fuse");
        snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0", fd);
        if (mount("standby-test", dir, "fuse.standby-test", MS_NOSUID | MS_NODEV, opts) < 0)
                die("mount fuse");

        /* Answer INIT, the one request this server answers. */
        ssize_t n = read(fd, buf, sizeof(buf));
        struct fuse_in_header *in = (struct fuse_in_header *) buf;
        if (n < (ssize_t) sizeof(*in) || in->opcode != FUSE_INIT)
                die("expected FUSE_INIT");
        struct {
                struct fuse_out_header h;
                struct fuse_init_out i;
        } reply = {
                .h = { .len = sizeof(reply), .error = 0, .unique = in->unique },
                .i = { .major = FUSE_KERNEL_VERSION, .minor = FUSE_KERNEL_MINOR_VERSION, .max_readahead = 65536,
                       .max_write = 4096, .max_background = 16, .congestion_threshold = 12 },
        };
        if (write(fd, &reply, sizeof(reply)) != sizeof(reply))
                die("reply INIT");

        snprintf(procs, sizeof(procs), "%s/cgroup.procs", argv[1]);
        client = fork();
        if (client < 0)
                die("fork");
        if (client == 0) {
                struct stat st;
                char path[64];
                /* Only the server may hold the device: when it dies, the
                 * connection aborts and this request fails instead of hanging. */
                close(fd);
                FILE *f = fopen(procs, "we");
                if (!f || fprintf(f, "%d", (int) getpid()) < 0 || fclose(f) != 0)
                        _exit(3);
                snprintf(path, sizeof(path), "%s/never", dir);
                (void) stat(path, &st); /* blocks until the connection is aborted */
                _exit(0);
        }

        for (;;) {
                n = read(fd, buf, sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        die("read /dev/fuse");
                if (!announced && in->pid == (uint32_t) client) {
                        printf("ready %d\n", (int) client);
                        fflush(stdout);
                        announced = true;
                }
                /* Never reply: the client stays in request_wait_answer(). */
        }
}
