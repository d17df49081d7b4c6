/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"
#include "private-socket.h"

int private_socket_address_uid(const char *address, uid_t *ret_uid) {
        const char *prefix = "unix:path=" PRIVATE_SOCKET_RUNTIME_ROOT "/", *p;
        char expected[128], *end;
        unsigned long uid;

        if (strncmp(address, prefix, strlen(prefix)) != 0)
                return -EINVAL;
        p = address + strlen(prefix);
        if (*p < '0' || *p > '9')
                return -EINVAL;
        errno = 0;
        uid = strtoul(p, &end, 10);
        if (errno != 0 || uid >= (uid_t) -1 || strcmp(end, "/systemd/private") != 0)
                return -EINVAL;
        /* Rebuilt and compared whole: no leading zeros, nothing else. */
        snprintf(expected, sizeof(expected), "%s%lu/systemd/private", prefix, uid);
        if (strcmp(address, expected) != 0)
                return -EINVAL;
        *ret_uid = (uid_t) uid;
        return 0;
}

/* The mount an fd is on, from /proc/self/fdinfo: the kernel's record, which
 * asks no filesystem (a stat of a FUSE root would ask its server). */
static int fd_mount_id(int fd, int *ret) {
        char path[64], line[256];
        _cleanup_(fclosep) FILE *f = NULL;

        snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
        f = fopen(path, "re");
        if (!f)
                return -errno;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "mnt_id: %d", ret) == 1)
                        return 0;
        return -EIO;
}

/* Whether mount id is a tmpfs, by /proc/self/mountinfo (kernel records only). */
static int mount_is_tmpfs(int id) {
        _cleanup_(fclosep) FILE *f = fopen("/proc/self/mountinfo", "re");
        _cleanup_free_ char *line = NULL;
        size_t size = 0;

        if (!f)
                return -errno;
        while (getline(&line, &size, f) > 0) {
                const char *sep = strstr(line, " - ");
                int mid;
                if (sscanf(line, "%d ", &mid) == 1 && mid == id)
                        return sep && strncmp(sep + 3, "tmpfs ", 6) == 0;
        }
        return -ENOENT;
}

/* One component below parent, opened as is (O_PATH|O_NOFOLLOW: a link is
 * opened itself, never followed; no openat2(), which seccomp filters such
 * as a sandboxed unit's may answer ENOSYS) and judged before anything asks
 * its filesystem: on parent_mnt, or (may_cross) on a tmpfs, else -EXDEV;
 * then a link is -ELOOP, another type than type or another owner than uid
 * -EPERM. A component that is a mount point is opened at the mount's root,
 * which asks nothing of the filesystem mounted there. */
static int open_component(int parent, const char *name, int parent_mnt, bool may_cross, mode_t type, uid_t uid,
                          int *ret_fd, int *ret_mnt) {
        _cleanup_close_ int fd = openat(parent, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        int mnt, r;

        if (fd < 0)
                return -errno;
        r = fd_mount_id(fd, &mnt);
        if (r < 0)
                return r;
        if (mnt != parent_mnt) {
                r = may_cross ? mount_is_tmpfs(mnt) : 0;
                if (r < 0)
                        return r;
                if (r == 0)
                        return -EXDEV; /* a FUSE mount of the user's, say */
        }
        if (fstat(fd, &st) < 0)
                return -errno;
        if (S_ISLNK(st.st_mode))
                return -ELOOP;
        if ((st.st_mode & S_IFMT) != type || st.st_uid != uid)
                return -EPERM;
        *ret_fd = TAKE_FD(fd);
        if (ret_mnt)
                *ret_mnt = mnt;
        return 0;
}

static int runtime_dir(const char *runtime_root, uid_t uid, int *ret_fd, int *ret_mnt) {
        _cleanup_close_ int root = -EBADF;
        char name[16];
        int root_mnt, r;

        root = open(runtime_root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (root < 0)
                return -errno;
        r = fd_mount_id(root, &root_mnt);
        if (r < 0)
                return r;
        snprintf(name, sizeof(name), "%u", (unsigned) uid);
        /* A mount may be crossed here, to a tmpfs only: /run/user/UID is
         * logind's. */
        return open_component(root, name, root_mnt, true, S_IFDIR, uid, ret_fd, ret_mnt);
}

int private_socket_runtime_dir(const char *runtime_root, uid_t uid, int *ret_fd) {
        return runtime_dir(runtime_root, uid, ret_fd, NULL);
}

/* The child's work: the connected socket, or -errno. */
static int child_connect(const char *runtime_root, uid_t uid, int *ret_socket) {
        _cleanup_close_ int dir = -EBADF, sd = -EBADF, sock_path = -EBADF, s = -EBADF;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int mnt, r;

        r = runtime_dir(runtime_root, uid, &dir, &mnt);
        /* Below it, no mount is crossed: systemd/private lies on the same tmpfs. */
        if (r >= 0)
                r = open_component(dir, "systemd", mnt, false, S_IFDIR, uid, &sd, NULL);
        if (r >= 0)
                r = open_component(sd, "private", mnt, false, S_IFSOCK, uid, &sock_path, NULL);
        if (r < 0)
                return r;
        s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0)
                return -errno;
        /* Through the opened file: nothing is looked up by name again. */
        snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d", sock_path);
        if (connect(s, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return -errno;
        *ret_socket = TAKE_FD(s);
        return 0;
}

/* Closes every fd from first on: close_range(), or, where a seccomp filter
 * answers ENOSYS, one by one as /proc/self/fd lists them. */
static void close_all_from(int first) {
        if (syscall(SYS_close_range, (unsigned) first, ~0U, 0) == 0)
                return;
        DIR *d = opendir("/proc/self/fd");
        if (!d)
                return;
        int self = dirfd(d);
        for (struct dirent *de; (de = readdir(d));) {
                int fd = atoi(de->d_name);
                if (de->d_name[0] >= '0' && de->d_name[0] <= '9' && fd >= first && fd != self)
                        close(fd);
        }
        closedir(d);
}

int private_socket_connect_start(const char *runtime_root, uid_t uid, pid_t *ret_pid, int *ret_fd) {
        int pair[2];
        pid_t pid;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
                return -errno;
        pid = fork();
        if (pid < 0) {
                int r = -errno;
                close(pair[0]);
                close(pair[1]);
                return r;
        }
        if (pid == 0) {
                int s = -EBADF, r;
                union {
                        struct cmsghdr h;
                        char buf[CMSG_SPACE(sizeof(int))];
                } control = {};
                struct iovec iov;
                struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

                /* Nothing of the parent's stays open in the child, which may
                 * outlive a wait in connect(): not the journal's lock, whose
                 * flock() a copy of its fd would hold, nor apps' pipes. */
                if (pair[1] != 3 && (dup2(pair[1], 3) < 0 || close(pair[1]) < 0))
                        _exit(1);
                pair[1] = 3;
                close_all_from(4);
                r = child_connect(runtime_root, uid, &s);
                iov = (struct iovec){ .iov_base = &r, .iov_len = sizeof(r) };
                if (r >= 0) {
                        mh.msg_control = &control;
                        mh.msg_controllen = sizeof(control);
                        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
                        c->cmsg_level = SOL_SOCKET;
                        c->cmsg_type = SCM_RIGHTS;
                        c->cmsg_len = CMSG_LEN(sizeof(int));
                        memcpy(CMSG_DATA(c), &s, sizeof(int));
                }
                _exit(sendmsg(pair[1], &mh, MSG_NOSIGNAL) == (ssize_t) sizeof(r) ? 0 : 1);
        }
        close(pair[1]);
        *ret_pid = pid;
        *ret_fd = pair[0];
        return 0;
}

static void reap(pid_t pid) {
        /* The child asks no filesystem a user can mount (see
         * private_socket_runtime_dir): after SIGKILL it ends at once. */
        (void) kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
}

int private_socket_connect_finish(int fd, pid_t pid, int *ret_socket) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int))];
        } control = {};
        int result = -EIO, s = -EBADF;
        struct iovec iov = { .iov_base = &result, .iov_len = sizeof(result) };
        struct msghdr mh = {
                .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof(control)
        };
        ssize_t n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

        for (struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL; c; c = CMSG_NXTHDR(&mh, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
                        memcpy(&s, CMSG_DATA(c), sizeof(int));
        safe_close(fd);
        reap(pid);
        if (n != (ssize_t) sizeof(result))
                result = -EIO; /* the child died first */
        if (result >= 0 && s < 0)
                result = -EIO;
        if (result < 0) {
                safe_close(s);
                return result;
        }
        *ret_socket = s;
        return 0;
}

void private_socket_connect_abort(int fd, pid_t pid) {
        safe_close(fd);
        reap(pid);
}

int private_socket_connect(const char *runtime_root, uid_t uid, usec_t timeout, int *ret_socket) {
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + timeout;
        struct pollfd p = { .events = POLLIN };
        pid_t pid;
        int r;

        r = private_socket_connect_start(runtime_root, uid, &pid, &p.fd);
        if (r < 0)
                return r;
        for (;;) {
                r = poll(&p, 1, deadline_poll_timeout(deadline));
                if (r > 0)
                        return private_socket_connect_finish(p.fd, pid, ret_socket);
                if (r == 0 || errno != EINTR)
                        break;
        }
        private_socket_connect_abort(p.fd, pid);
        return -ETIMEDOUT;
}

const char *private_socket_strerror(int r) {
        switch (r) {
        case -ELOOP:
                return "a symbolic link on the way";
        case -EXDEV:
                return "a mount on the way";
        case -EPERM:
                return "not a socket and directory of that user's";
        case -ETIMEDOUT:
                return "no answer in time";
        default:
                return strerror(-r);
        }
}
