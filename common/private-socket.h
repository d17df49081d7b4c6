/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "time-util.h"

/* A connection to a user manager's private socket, RUNTIME_ROOT/UID/systemd/private
 * (RUNTIME_ROOT is /run/user; tests pass a directory of their own). The
 * runtime directory is its user's, and so hostile to root: the path is
 * resolved by a forked child, which keeps none of its parent's fds, opens
 * one component at a time and follows no symbolic link (O_NOFOLLOW), takes
 * the UID directory only on /run/user's own filesystem or a tmpfs (logind's;
 * a user can mount nothing else there but FUSE, whose server could make any
 * lookup wait), crosses no mount below it, checks that the directories and
 * the socket are owned by UID, and connects through the opened file. The connected fd comes back
 * by SCM_RIGHTS. The caller bounds the child's time, and kills and reaps it
 * by its pid. */

#define PRIVATE_SOCKET_RUNTIME_ROOT "/run/user"

/* The UID of "unix:path=/run/user/UID/systemd/private", written exactly so
 * (decimal, no leading zero): 0 and *ret_uid, or -EINVAL for any other
 * address. */
int private_socket_address_uid(const char *address, uid_t *ret_uid);

/* Opens runtime_root/UID (O_PATH) without following links and checks it as
 * the child does (a directory of UID on an allowed filesystem), touching no
 * filesystem the user could mount: usable from a loop that must not wait.
 * -ELOOP (a link), -EXDEV (a mount of another kind), -EPERM (not UID's, or
 * not a directory), -ENOENT, or another -errno. */
int private_socket_runtime_dir(const char *runtime_root, uid_t uid, int *ret_fd);

/* Starts the child: *ret_pid (the caller's to kill and reap, by
 * private_socket_connect_finish or _abort) and *ret_fd, the parent's end of
 * a socketpair that becomes readable when the child answers. */
int private_socket_connect_start(const char *runtime_root, uid_t uid, pid_t *ret_pid, int *ret_fd);
/* The child's answer, once fd is readable: the connected socket in
 * *ret_socket (O_CLOEXEC, blocking), or the child's -errno (-ELOOP, -EXDEV,
 * -EPERM for a wrong owner or not a socket, -ENOENT, -ECONNREFUSED...).
 * Reaps the child and closes fd, either way. */
int private_socket_connect_finish(int fd, pid_t pid, int *ret_socket);
/* The child did not answer in time: SIGKILL, reaped, fd closed. */
void private_socket_connect_abort(int fd, pid_t pid);

/* All of it, waiting at most timeout for the child: -ETIMEDOUT past it. */
int private_socket_connect(const char *runtime_root, uid_t uid, usec_t timeout, int *ret_socket);

/* A few words on why the connect was refused, for an error message. */
const char *private_socket_strerror(int r);
