/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "time-util.h"

/* cgroup v2 access. Paths called "rel" are relative to the cgroup2 mount, with
 * no leading slash ("" is the root). Every open goes through openat2() with
 * RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS on one root dirfd, so no path given by a
 * user can leave the cgroup tree, whatever it contains. */

/* Finds the cgroup2 mount point in a mountinfo file (normally
 * /proc/self/mountinfo): pure unified (/sys/fs/cgroup) or hybrid
 * (/sys/fs/cgroup/unified). -ENOMEDIUM when there is none. */
int cgroup_find_mount_in(const char *mountinfo, char **ret);
int cgroup_find_mount(char **ret);

/* Opens the cgroup2 mount point as a directory fd. */
int cgroup_open_root(const char *mount, int *ret_fd);

/* Checks a relative cgroup path given on a command line: -EINVAL for an
 * absolute path, "..", ".", empty components, control characters or input
 * of PATH_MAX bytes or more. */
int cgroup_path_validate(const char *rel);

/* The structure of a cgroup path taken from the kernel or the journal, any
 * bytes allowed: -EINVAL for an absolute path, ".", "..", an empty component,
 * a component longer than NAME_MAX or a path longer than CGROUP_REL_MAX. */
#define CGROUP_REL_MAX (1024U * 1024U)
int cgroup_path_check(const char *rel);

/* How deep the walks go below where they start. The kernel sets no limit
 * (cgroup.max.depth is "max"); what lies deeper is reported, never touched,
 * and each level holds one fd while it is walked. */
#define CGROUP_DEPTH_MAX 1000

/* Opens the cgroup directory rel below root_fd ("" opens root itself). rel may
 * hold any bytes and be longer than PATH_MAX. -EINVAL for a path
 * cgroup_path_check() refuses, -ENOENT, -ENOTDIR, -ELOOP (a symlink), -EXDEV
 * (would leave the tree, or cross a mount point below it). */
int cgroup_open(int root_fd, const char *rel, int *ret_fd);
/* Opens the child cgroup name (one component) of dir_fd, the same way. */
int cgroup_open_child(int dir_fd, const char *name, int *ret_fd);

/* Whose a cgroup is, for what it costs others: the topmost cgroup on its
 * path that root does not own, the root of a delegated subtree (a user's
 * user@UID.service, a Delegate=yes service of User=). Everything below it is
 * one account, whatever uid its directories show: a user with subordinate
 * uids can chown their own cgroups to as many uids as they have, and even
 * the delegation root itself, but cannot rename it (cgroupfs refuses) nor
 * make a cgroup outside it. A cgroup with no such ancestor is root's. */
typedef struct CgroupAccount {
        uid_t uid;            /* the delegation root's owner now; 0: root's */
        uint64_t id;          /* its inode, the kernel's cgroup id (fixed for its life); 0: root's */
        size_t prefix_len;    /* rel's first prefix_len bytes name it; 0: root's */
} CgroupAccount;
/* The account of rel below root_fd, found by opening rel's components one
 * by one from the top, to the first one root does not own (as deep as the
 * delegation, not as deep as rel). -ENOENT and cgroup_open()'s errors. */
int cgroup_account(int root_fd, const char *rel, CgroupAccount *ret);
/* Whether an account is root's. */
static inline bool cgroup_account_is_root(const CgroupAccount *a) {
        return a->id == 0;
}

/* Opens many cgroups that share parents (the leaves of one slice) for the
 * price of one openat() each: the last parent directory is kept open and the
 * leaf is opened below it with O_NOFOLLOW. Same checks and errors as
 * cgroup_open(). */
typedef struct CgroupOpener {
        int root_fd;
        char *parent;
        int parent_fd;
} CgroupOpener;
#define CGROUP_OPENER_INIT(root) ((CgroupOpener) { .root_fd = (root), .parent_fd = -EBADF })
int cgroup_opener_open(CgroupOpener *o, const char *rel, int *ret_fd);
void cgroup_opener_done(CgroupOpener *o);

/* Writes cgroup.freeze. -ENOENT if the cgroup is gone, -EOPNOTSUPP for the
 * root cgroup or a kernel without the v2 freezer. */
int cgroup_set_freeze(int cg_fd, bool freeze);
/* The same through a cgroup.freeze already open for writing (one system call,
 * for a thaw on an event's path). */
int cgroup_open_freeze(int cg_fd, int *ret_fd);
int cgroup_write_freeze(int freeze_fd, bool freeze);

/* Reads "frozen" (and "populated", if ret_populated) from cgroup.events. */
int cgroup_get_frozen(int cg_fd, bool *ret_frozen, bool *ret_populated);

/* Reads cgroup.freeze: what was asked of this cgroup itself. */
int cgroup_get_freeze(int cg_fd, bool *ret);

/* Opens cgroup.events for reading, to be watched for POLLPRI (the kernel's
 * change notification) in an event loop; -ENOENT if the cgroup is gone. */
int cgroup_open_events(int cg_fd, int *ret_fd);
/* Reads "frozen" (and "populated", if ret_populated) from an open
 * cgroup.events (from its start), which also
 * re-arms its POLLPRI notification. -ENODEV once the cgroup is gone. */
int cgroup_read_events_fd(int fd, bool *ret_frozen, bool *ret_populated);

/* Waits until every cgroup in cg_fds reports frozen == want in cgroup.events,
 * or the CLOCK_MONOTONIC deadline passes. Reads each file right away, then
 * waits for the kernel's change notification (poll POLLPRI on cgroup.events),
 * never by sleeping. ret_done[i] (may be NULL) tells which ones got there;
 * a cgroup that vanished counts as done. Returns 0 when all did, -ETIME when
 * the deadline passed first, other negative errno on failure. */
int cgroup_wait_frozen(const int *cg_fds, size_t n, bool want, usec_t deadline, bool *ret_done);

/* Lists, sorted, the leaf cgroups (no child cgroups) at or below rel, as rel
 * paths. A cgroup that vanishes during the walk is left out. Inner cgroups that
 * hold processes of their own are listed in ret_inner if that is not NULL.
 * Cgroups that could not be walked (deeper than CGROUP_DEPTH_MAX, a mount
 * point, unreadable) are left out, with nothing below them, and listed in
 * ret_unwalked if that is not NULL. */
int cgroup_list_leaves(int root_fd, const char *rel, char ***ret, char ***ret_inner, char ***ret_unwalked);

/* Reads cgroup.procs (threads == false) or cgroup.threads into an array. */
int cgroup_list_pids(int cg_fd, bool threads, pid_t **ret, size_t *ret_n);

/* The cgroup2 path of a process, from /proc/PID/cgroup's "0::" line, as rel
 * (no leading slash). -ENODATA when the process has no cgroup2 entry. */
int cgroup_of_pid(pid_t pid, char **ret);

/* Creates (mkdir) and removes (rmdir) a cgroup below root_fd. */
int cgroup_create(int root_fd, const char *rel);
int cgroup_remove(int root_fd, const char *rel);

/* Moves a process into the cgroup. */
int cgroup_attach(int cg_fd, pid_t pid);

/* Calls fn with an fd and the rel path of the cgroup rel and of every cgroup
 * below it, parents first (the fd and the path are valid during the call
 * only: the walk holds one path, whatever its depth), staying on
 * the cgroup2 file system (never into a mount point below it) and at most
 * CGROUP_DEPTH_MAX levels deep; names may hold any bytes, paths be of any
 * length. fn returns CGROUP_WALK_SKIP to leave out what lies below that
 * cgroup. Cgroups that vanish, and mount points, are skipped. Returns how
 * many cgroups could not be walked into (too deep, unreadable; 0: all were),
 * or a negative errno if rel cannot be opened. */
#define CGROUP_WALK_CONTINUE 0
#define CGROUP_WALK_SKIP 1
typedef int (*cgroup_walk_fn)(int fd, const char *rel, void *userdata);
int cgroup_walk(int root_fd, const char *rel, cgroup_walk_fn fn, void *userdata);
/* Calls fn for every cgroup below cg_fd (not cg_fd's own), parents first,
 * with its depth below cg_fd (1 for a child) instead of a path: it goes
 * any depth, holding two fds and the names of the child cgroups of each
 * level on the way down (never a path, which would grow with the depth),
 * and goes back up by "..". For what cgroup_walk() cannot reach. Returns
 * as cgroup_walk() (how many could not be walked into, 0: all were), or
 * -ENOMEM. */
typedef int (*cgroup_walk_below_fn)(int fd, size_t depth, void *userdata);
int cgroup_walk_below(int cg_fd, cgroup_walk_below_fn fn, void *userdata);

/* Removes the cgroup name (a path of any length) below parent_fd and every
 * cgroup below it (children first), never crossing a mount point. Cgroups
 * that still hold processes stay; returns the first error. */
int cgroup_remove_tree(int parent_fd, const char *name);

/* True if rel equals prefix or lies below it. */
bool cgroup_path_startswith(const char *rel, const char *prefix);
