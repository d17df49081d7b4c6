/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "cgroup.h"
#include "fileio.h"
#include "macro.h"
#include "strv.h"

#define CGROUP_PATH_MAX 4096

static void unescape_mountinfo(char *s) {
        /* mountinfo escapes space, tab, newline and backslash as \ooo. */
        char *w = s;

        for (char *r = s; *r;) {
                if (r[0] == '\\' && r[1] >= '0' && r[1] <= '7' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' &&
                    r[3] <= '7') {
                        *w++ = (char) (((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
                        r += 4;
                } else
                        *w++ = *r++;
        }
        *w = 0;
}

int cgroup_find_mount_in(const char *mountinfo, char **ret) {
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;

        f = fopen(mountinfo, "re");
        if (!f)
                return negative_errno();

        while (getline(&line, &cap, f) > 0) {
                char *save = NULL, *mnt = NULL, *tok;
                int field = 0;
                bool after_sep = false;

                for (tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save), field++) {
                        if (field == 4)
                                mnt = tok;
                        else if (field > 5 && !after_sep && streq(tok, "-"))
                                after_sep = true;
                        else if (after_sep) {
                                /* The first field after "-" is the file system type. */
                                if (streq(tok, "cgroup2") && mnt) {
                                        char *m = strdup(mnt);
                                        if (!m)
                                                return -ENOMEM;
                                        unescape_mountinfo(m);
                                        *ret = m;
                                        return 0;
                                }
                                break;
                        }
                }
        }
        return -ENOMEDIUM;
}

int cgroup_find_mount(char **ret) {
        return cgroup_find_mount_in("/proc/self/mountinfo", ret);
}

int cgroup_open_root(const char *mount, int *ret_fd) {
        int fd = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        *ret_fd = fd;
        return 0;
}

int cgroup_path_validate(const char *rel) {
        int r;

        if (!rel)
                return -EINVAL;
        if (strlen(rel) >= CGROUP_PATH_MAX)
                return -EINVAL;
        for (const char *p = rel; *p; p++)
                if ((unsigned char) *p < 0x20 || *p == 0x7f)
                        return -EINVAL;
        r = cgroup_path_check(rel);
        return r < 0 ? r : 0;
}

int cgroup_path_check(const char *rel) {
        if (!rel || rel[0] == '/' || strlen(rel) > CGROUP_REL_MAX)
                return -EINVAL;
        if (!*rel)
                return 0;
        for (const char *p = rel;;) {
                size_t n = strcspn(p, "/");

                if (n == 0 || n > NAME_MAX)
                        return -EINVAL;
                if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
                        return -EINVAL;
                if (!p[n])
                        return 0;
                p += n + 1;
        }
}

static bool have_openat2 = true;

/* Opens path (relative, no "..", shorter than PATH_MAX) below dir_fd without
 * following a symlink or leaving the file system dir_fd is on: a mount point
 * below the cgroup tree (a bind mount, say) is -EXDEV. */
static int open_resolve(int dir_fd, const char *path, int flags) {
        struct open_how how = {
                .flags = (uint64_t) (flags | O_CLOEXEC | O_NOCTTY),
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
        };
        struct stat st, dst;
        long fd;

        if (have_openat2) {
                fd = syscall(SYS_openat2, dir_fd, path, &how, sizeof(how));
                if (fd >= 0)
                        return (int) fd;
                if (errno != ENOSYS)
                        return negative_errno();
                have_openat2 = false;
        }

        /* Kernels before 5.6: component by component, refusing symlinks and
         * other file systems (a bind mount of the cgroup2 file system itself
         * is not told apart here). The callers have excluded "..". */
        if (fstat(dir_fd, &dst) < 0)
                return negative_errno();
        _cleanup_close_ int dir = fcntl(dir_fd, F_DUPFD_CLOEXEC, 3);
        if (dir < 0)
                return negative_errno();
        _cleanup_free_ char *copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        char *save = NULL;
        for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                bool last = !save || !*save;
                int nfd = openat(dir, c, (last ? flags : O_RDONLY | O_DIRECTORY) | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
                if (nfd < 0)
                        return negative_errno();
                safe_close(dir);
                dir = nfd;
                if (fstat(dir, &st) < 0)
                        return negative_errno();
                if (st.st_dev != dst.st_dev)
                        return -EXDEV;
        }
        return TAKE_FD(dir);
}

/* rel may be longer than PATH_MAX (a cgroup name may be 255 bytes at any
 * depth): it is opened a piece shorter than PATH_MAX at a time, each below
 * the last. */
static int open_beneath(int root_fd, const char *rel, int flags) {
        _cleanup_close_ int dir = -EBADF;
        const char *p = isempty(rel) ? "." : rel;

        while (strlen(p) >= PATH_MAX) {
                _cleanup_free_ char *chunk = NULL;
                size_t k = PATH_MAX - 1;
                int nfd;

                while (k > 0 && p[k] != '/')
                        k--;
                if (k == 0)
                        return -ENAMETOOLONG; /* cgroup_path_check() makes this impossible */
                chunk = strndup(p, k);
                if (!chunk)
                        return -ENOMEM;
                nfd = open_resolve(dir >= 0 ? dir : root_fd, chunk, O_RDONLY | O_DIRECTORY);
                if (nfd < 0)
                        return nfd;
                safe_close(dir);
                dir = nfd;
                p += k + 1;
        }
        return open_resolve(dir >= 0 ? dir : root_fd, p, flags);
}

int cgroup_open(int root_fd, const char *rel, int *ret_fd) {
        int r, fd;

        r = cgroup_path_check(rel);
        if (r < 0)
                return r;
        fd = open_beneath(root_fd, rel, O_RDONLY | O_DIRECTORY);
        if (fd < 0)
                return fd;
        *ret_fd = fd;
        return 0;
}

int cgroup_open_child(int dir_fd, const char *name, int *ret_fd) {
        int fd;

        if (isempty(name) || strchr(name, '/') || streq(name, ".") || streq(name, ".."))
                return -EINVAL;
        fd = open_resolve(dir_fd, name, O_RDONLY | O_DIRECTORY);
        if (fd < 0)
                return fd;
        *ret_fd = fd;
        return 0;
}

int cgroup_account(int root_fd, const char *rel, CgroupAccount *ret) {
        _cleanup_close_ int dir = -EBADF;
        struct stat st;
        int r;

        r = cgroup_path_check(rel);
        if (r < 0)
                return r;
        dir = fcntl(root_fd, F_DUPFD_CLOEXEC, 3);
        if (dir < 0)
                return negative_errno();
        for (const char *p = rel; *p;) {
                size_t k = strcspn(p, "/");
                char name[NAME_MAX + 1];
                int child;

                memcpy(name, p, k); /* checked: k <= NAME_MAX */
                name[k] = 0;
                r = cgroup_open_child(dir, name, &child);
                if (r < 0)
                        return r;
                safe_close(dir);
                dir = child;
                if (fstat(dir, &st) < 0)
                        return negative_errno();
                p += k;
                if (st.st_uid != 0) {
                        *ret = (CgroupAccount){ .uid = st.st_uid,
                                                .id = (uint64_t) st.st_ino,
                                                .prefix_len = (size_t) (p - rel) };
                        return 0;
                }
                if (*p == '/')
                        p++;
        }
        *ret = (CgroupAccount){};
        return 0;
}

int cgroup_opener_open(CgroupOpener *o, const char *rel, int *ret_fd) {
        const char *slash;
        int r;

        r = cgroup_path_check(rel);
        if (r < 0)
                return r;
        slash = strrchr(rel, '/');
        if (!slash)
                return cgroup_open(o->root_fd, rel, ret_fd);

        size_t plen = (size_t) (slash - rel);
        if (!o->parent || strlen(o->parent) != plen || !strneq(o->parent, rel, plen)) {
                _cleanup_free_ char *parent = strndup(rel, plen);
                int pfd;

                if (!parent)
                        return -ENOMEM;
                r = cgroup_open(o->root_fd, parent, &pfd);
                if (r < 0)
                        return r;
                safe_close(o->parent_fd);
                free(o->parent);
                o->parent_fd = pfd;
                o->parent = TAKE_PTR(parent);
        }
        /* The last component is a plain name (checked): no "..", no "/". */
        return cgroup_open_child(o->parent_fd, slash + 1, ret_fd);
}

void cgroup_opener_done(CgroupOpener *o) {
        /* parent_fd is valid exactly when parent is set (a zeroed opener is fine). */
        if (o->parent)
                safe_close(o->parent_fd);
        free(o->parent);
        *o = CGROUP_OPENER_INIT(o->root_fd);
}

int cgroup_set_freeze(int cg_fd, bool freeze) {
        int r = write_stringat(cg_fd, "cgroup.freeze", freeze ? "1" : "0");
        /* The cgroup directory was removed while we held its fd. */
        if (r == -ENODEV)
                return -ENOENT;
        return r;
}

int cgroup_open_freeze(int cg_fd, int *ret_fd) {
        int fd = openat(cg_fd, "cgroup.freeze", O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return errno == ENODEV ? -ENOENT : negative_errno();
        *ret_fd = fd;
        return 0;
}

int cgroup_write_freeze(int freeze_fd, bool freeze) {
        if (pwrite(freeze_fd, freeze ? "1" : "0", 1, 0) == 1)
                return 0;
        /* The cgroup directory was removed while the file was open. */
        return errno == ENODEV ? -ENOENT : negative_errno();
}

int cgroup_get_freeze(int cg_fd, bool *ret) {
        _cleanup_close_ int fd = -EBADF;
        char buf[8];
        ssize_t n;

        /* One read: exit's walk asks every cgroup below the targets. */
        fd = openat(cg_fd, "cgroup.freeze", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return errno == ENODEV ? -ENOENT : negative_errno();
        n = read(fd, buf, sizeof(buf));
        if (n < 0)
                return errno == ENODEV ? -ENOENT : negative_errno();
        if (n < 2 || (buf[0] != '0' && buf[0] != '1') || buf[1] != '\n')
                return -EINVAL;
        *ret = buf[0] == '1';
        return 0;
}

static int parse_events(const char *buf, bool *ret_frozen, bool *ret_populated) {
        bool have_frozen = false;

        for (const char *p = buf; p && *p;) {
                if (strneq(p, "frozen ", 7)) {
                        if (ret_frozen)
                                *ret_frozen = p[7] == '1';
                        have_frozen = true;
                } else if (strneq(p, "populated ", 10) && ret_populated)
                        *ret_populated = p[10] == '1';
                p = strchr(p, '\n');
                if (p)
                        p++;
        }
        /* No "frozen" key: this kernel has no cgroup v2 freezer (before 5.2). */
        return have_frozen ? 0 : -EOPNOTSUPP;
}

int cgroup_get_frozen(int cg_fd, bool *ret_frozen, bool *ret_populated) {
        _cleanup_free_ char *buf = NULL;
        int r;

        r = read_full_fileat(cg_fd, "cgroup.events", &buf, NULL);
        if (r < 0)
                return r == -ENODEV ? -ENOENT : r;
        return parse_events(buf, ret_frozen, ret_populated);
}

int cgroup_read_events_fd(int fd, bool *ret_frozen, bool *ret_populated) {
        char buf[256];
        ssize_t n;

        /* Reading re-arms kernfs's poll notification for this open file. */
        if (lseek(fd, 0, SEEK_SET) < 0)
                return negative_errno();
        n = read(fd, buf, sizeof(buf) - 1);
        if (n < 0)
                return negative_errno();
        buf[n] = 0;
        return parse_events(buf, ret_frozen, ret_populated);
}

int cgroup_open_events(int cg_fd, int *ret_fd) {
        int fd = openat(cg_fd, "cgroup.events", O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

        if (fd < 0)
                return errno == ENODEV ? -ENOENT : negative_errno();
        *ret_fd = fd;
        return 0;
}

int cgroup_wait_frozen(const int *cg_fds, size_t n, bool want, usec_t deadline, bool *ret_done) {
        _cleanup_free_ struct pollfd *pfds = NULL;
        _cleanup_free_ size_t *idx = NULL;
        size_t left = 0, next = 0;
        int r = 0;

        if (ret_done)
                memset(ret_done, 0, n * sizeof(bool));
        if (n == 0)
                return 0;

        pfds = calloc(n, sizeof(struct pollfd));
        idx = calloc(n, sizeof(size_t));
        if (!pfds || !idx)
                return -ENOMEM;

        for (;;) {
                /* Watch as many as descriptors allow: a caller that holds
                 * one per cgroup already (any user can make that many empty
                 * ones) has few left, and a cgroup whose answer came frees
                 * its slot for the next. One written long ago reads done
                 * at once when its turn comes. */
                while (next < n) {
                        int fd = openat(cg_fds[next], "cgroup.events", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
                        if (fd < 0) {
                                if (errno == ENOENT || errno == ENODEV) {
                                        if (ret_done)
                                                ret_done[next] = true;
                                        next++;
                                        continue;
                                }
                                if ((errno == EMFILE || errno == ENFILE) && left > 0)
                                        break;
                                r = negative_errno();
                                goto finish;
                        }
                        pfds[left] = (struct pollfd){ .fd = fd, .events = POLLPRI };
                        idx[left++] = next++;
                }
                if (left == 0)
                        break;

                size_t k = 0;
                /* Read everything still pending, then keep only what has not arrived. */
                for (size_t j = 0; j < left; j++) {
                        bool frozen = false;
                        int q = cgroup_read_events_fd(pfds[j].fd, &frozen, NULL);

                        if (q == -ENODEV || q == -ENOENT || (q >= 0 && frozen == want)) {
                                if (ret_done)
                                        ret_done[idx[j]] = true;
                                safe_close(pfds[j].fd);
                                continue;
                        }
                        if (q < 0) {
                                r = q;
                                goto finish;
                        }
                        pfds[k] = pfds[j];
                        pfds[k].revents = 0;
                        idx[k++] = idx[j];
                }
                bool freed = k < left;
                left = k;
                if (left == 0 && next == n)
                        break;
                if (freed && next < n)
                        continue; /* open the next ones first */

                int timeout = deadline_poll_timeout(deadline);
                if (timeout == 0) {
                        r = -ETIME;
                        goto finish;
                }
                if (poll(pfds, left, timeout) < 0 && errno != EINTR) {
                        r = negative_errno();
                        goto finish;
                }
        }

finish:
        for (size_t j = 0; j < left; j++)
                safe_close(pfds[j].fd);
        return r;
}

/* nr_descendants from cgroup.stat: 0 for a leaf. */
static int read_nr_descendants(int cg_fd, uint64_t *ret) {
        _cleanup_free_ char *buf = NULL;
        const char *p;
        int r;

        r = read_full_fileat(cg_fd, "cgroup.stat", &buf, NULL);
        if (r < 0)
                return r;
        p = strstr(buf, "nr_descendants ");
        if (!p)
                return -EIO;
        *ret = strtoull(p + strlen("nr_descendants "), NULL, 10);
        return 0;
}

/* The names of the child directories of dir_fd (every name but "." and
 * ".."), read through a directory stream of its own, closed before the
 * caller descends: one fd per level of a walk, not two. */
static int list_children(int dir_fd, char ***ret) {
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_strv_free_ char **children = NULL;
        struct dirent *de;
        int r;

        r = opendir_at(dir_fd, ".", &d);
        if (r < 0)
                return r;
        children = calloc(1, sizeof(char *));
        if (!children)
                return -ENOMEM;
        while ((errno = 0, de = readdir(d)))
                if ((de->d_type == DT_DIR || de->d_type == DT_UNKNOWN) && !streq(de->d_name, ".") &&
                    !streq(de->d_name, "..")) {
                        r = strv_extend(&children, de->d_name);
                        if (r < 0)
                                return r;
                }
        if (errno != 0)
                return negative_errno();
        *ret = TAKE_PTR(children);
        return 0;
}

static int join_rel(const char *rel, const char *name, char **ret) {
        return asprintf(ret, "%s%s%s", rel, *rel ? "/" : "", name) < 0 ? -ENOMEM : 0;
}

typedef struct LeafWalk {
        char ***leaves, ***inner, ***unwalked;
} LeafWalk;

/* Takes ownership of dir_fd. A directory listing on kernfs costs ~15 us, so
 * the walk opens as few as it can: cgroup.stat's nr_descendants tells a leaf
 * without listing it, and when a cgroup has exactly as many descendants as
 * children, all its children are leaves and none of them is opened. What
 * cannot be walked (too deep, another file system mounted there, an error)
 * is listed in unwalked, never in leaves: nothing below it is touched. */
static int list_leaves_rec(int dir_fd, const char *rel, unsigned depth, LeafWalk *w) {
        _cleanup_close_ int fd = dir_fd;
        _cleanup_strv_free_ char **children = NULL;
        uint64_t descendants;
        int r;

        if (depth > CGROUP_DEPTH_MAX)
                return w->unwalked ? strv_extend(w->unwalked, rel) : 0;
        r = read_nr_descendants(fd, &descendants);
        if (r == -ENOENT || r == -ENODEV)
                return -ENOENT;
        if (r < 0)
                return w->unwalked ? strv_extend(w->unwalked, rel) : 0;
        if (descendants == 0)
                return strv_extend(w->leaves, rel);
        r = list_children(fd, &children);
        if (r == -ENOENT || r == -ENODEV)
                return -ENOENT;
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return w->unwalked ? strv_extend(w->unwalked, rel) : 0;
        bool all_leaves = strv_length(children) == descendants;

        for (char **c = children; *c; c++) {
                _cleanup_free_ char *crel = NULL;
                int child;

                r = join_rel(rel, *c, &crel);
                if (r < 0)
                        return r;
                if (all_leaves) {
                        r = strv_extend(w->leaves, crel);
                        if (r < 0)
                                return r;
                        continue;
                }
                r = cgroup_open_child(fd, *c, &child);
                if (r == -ENOENT || r == -ENODEV)
                        continue; /* removed under us */
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        /* A mount point (-EXDEV), a symlink: not ours to walk. */
                        if (w->unwalked && (r = strv_extend(w->unwalked, crel)) < 0)
                                return r;
                        continue;
                }
                r = list_leaves_rec(child, crel, depth + 1, w);
                if (r < 0 && r != -ENOENT)
                        return r;
        }

        if (w->inner && *rel) {
                _cleanup_free_ char *procs = NULL;
                r = read_full_fileat(fd, "cgroup.procs", &procs, NULL);
                if (r >= 0 && procs[0])
                        return strv_extend(w->inner, rel);
        }
        return 0;
}

int cgroup_list_leaves(int root_fd, const char *rel, char ***ret, char ***ret_inner, char ***ret_unwalked) {
        _cleanup_strv_free_ char **leaves = NULL, **inner = NULL, **unwalked = NULL;
        _cleanup_close_ int fd = -EBADF;
        int r;

        r = cgroup_open(root_fd, rel, &fd);
        if (r < 0)
                return r;

        leaves = calloc(1, sizeof(char *));
        inner = calloc(1, sizeof(char *));
        unwalked = calloc(1, sizeof(char *));
        if (!leaves || !inner || !unwalked)
                return -ENOMEM;

        LeafWalk w = { &leaves, ret_inner ? &inner : NULL, ret_unwalked ? &unwalked : NULL };
        r = list_leaves_rec(TAKE_FD(fd), rel, 0, &w);
        if (r < 0)
                return r;

        strv_sort(leaves);
        *ret = TAKE_PTR(leaves);
        if (ret_inner) {
                strv_sort(inner);
                *ret_inner = TAKE_PTR(inner);
        }
        if (ret_unwalked)
                *ret_unwalked = TAKE_PTR(unwalked);
        return 0;
}

int cgroup_list_pids(int cg_fd, bool threads, pid_t **ret, size_t *ret_n) {
        _cleanup_free_ char *buf = NULL;
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0, cap = 0;
        int r;

        r = read_full_fileat(cg_fd, threads ? "cgroup.threads" : "cgroup.procs", &buf, NULL);
        if (r < 0)
                return r == -ENODEV ? -ENOENT : r;

        char *p = buf;
        for (char *line; (line = strsep(&p, "\n"));) {
                int pid;

                if (!*line)
                        continue;
                r = parse_pid(line, &pid);
                if (r < 0)
                        return r;
                if (!GROW_ARRAY(pids, cap, n + 1))
                        return -ENOMEM;
                pids[n++] = pid;
        }

        *ret = TAKE_PTR(pids);
        *ret_n = n;
        return 0;
}

int cgroup_of_pid(pid_t pid, char **ret) {
        _cleanup_free_ char *buf = NULL;
        char path[64];
        int r;

        snprintf(path, sizeof(path), "/proc/%d/cgroup", (int) pid);
        r = read_full_fileat(AT_FDCWD, path, &buf, NULL);
        if (r < 0)
                return r;

        char *p = buf;
        for (char *line; (line = strsep(&p, "\n"));)
                if (strneq(line, "0::/", 4)) {
                        char *s = strdup(line + 4);
                        if (!s)
                                return -ENOMEM;
                        *ret = s;
                        return 0;
                }
        return -ENODATA;
}

int cgroup_create(int root_fd, const char *rel) {
        int r = cgroup_path_check(rel);
        if (r < 0)
                return r;
        if (isempty(rel))
                return -EINVAL;
        if (mkdirat(root_fd, rel, 0755) < 0)
                return negative_errno();
        return 0;
}

int cgroup_remove(int root_fd, const char *rel) {
        int r = cgroup_path_check(rel);
        if (r < 0)
                return r;
        if (isempty(rel))
                return -EINVAL;
        if (unlinkat(root_fd, rel, AT_REMOVEDIR) < 0)
                return negative_errno();
        return 0;
}

int cgroup_attach(int cg_fd, pid_t pid) {
        char buf[32];

        snprintf(buf, sizeof(buf), "%d", (int) pid);
        return write_stringat(cg_fd, "cgroup.procs", buf);
}

/* The path of the cgroup being walked, one buffer for the whole walk: each
 * level appends its name and cuts it off again, so that a chain of any
 * depth costs one path's length, not a path per level (which grows with
 * the square of the depth: 127 MB at 1000 levels of 255-byte names). */
typedef struct WalkPath {
        char *buf;
        size_t len, cap;
} WalkPath;

static int walk_path_push(WalkPath *p, const char *name) {
        size_t need = p->len + (p->len > 0) + strlen(name) + 1;
        if (need > p->cap) {
                char *b = realloc(p->buf, MAX(need, 2 * p->cap));
                if (!b)
                        return -ENOMEM;
                p->buf = b;
                p->cap = MAX(need, 2 * p->cap);
        }
        if (p->len > 0)
                p->buf[p->len++] = '/';
        strcpy(p->buf + p->len, name);
        p->len += strlen(name);
        return 0;
}

static int walk_rec(int cg_fd, WalkPath *path, unsigned depth, cgroup_walk_fn fn, void *userdata) {
        _cleanup_strv_free_ char **children = NULL;
        struct stat st;
        int r, unwalked = 0;

        if (fn(cg_fd, path->buf, userdata) == CGROUP_WALK_SKIP)
                return 0;
        /* kernfs counts a directory's subdirectories in its link count: a
         * leaf (2) needs no listing, which is most of the cost of a walk. */
        if (fstat(cg_fd, &st) >= 0 && S_ISDIR(st.st_mode) && st.st_nlink == 2)
                return 0;
        if (depth >= CGROUP_DEPTH_MAX)
                return 1;
        r = list_children(cg_fd, &children);
        if (r == -ENOENT || r == -ENODEV)
                return 0;
        if (r < 0)
                return r == -ENOMEM ? r : 1;
        for (char **c = children; *c; c++) {
                _cleanup_close_ int child = -EBADF;
                size_t len = path->len;

                r = cgroup_open_child(cg_fd, *c, &child);
                /* Gone, or another file system mounted there: what is there is
                 * not a cgroup of this tree. */
                if (r == -ENOENT || r == -ENODEV || r == -EXDEV)
                        continue;
                if (r < 0) {
                        unwalked++;
                        continue;
                }
                r = walk_path_push(path, *c);
                if (r < 0)
                        return r;
                r = walk_rec(child, path, depth + 1, fn, userdata);
                path->len = len;
                path->buf[len] = 0;
                if (r < 0)
                        return r;
                unwalked += r;
        }
        return unwalked;
}

int cgroup_walk(int root_fd, const char *rel, cgroup_walk_fn fn, void *userdata) {
        _cleanup_close_ int fd = -EBADF;
        WalkPath path = {};
        int r;

        r = cgroup_open(root_fd, rel, &fd);
        if (r < 0)
                return r;
        path.buf = strdup(rel);
        if (!path.buf)
                return -ENOMEM;
        path.len = path.cap = strlen(rel);
        path.cap++;
        r = walk_rec(fd, &path, 0, fn, userdata);
        free(path.buf);
        return r;
}

/* One level of cgroup_walk_below(): the names of its child cgroups, and
 * how many of them were walked. */
typedef struct DeepLevel {
        char **children;
        size_t next;
} DeepLevel;

int cgroup_walk_below(int cg_fd, cgroup_walk_below_fn fn, void *userdata) {
        _cleanup_close_ int cur = -EBADF;
        DeepLevel *levels = NULL;
        size_t n = 0, cap = 0;
        int r, unwalked = 0;

        cur = fcntl(cg_fd, F_DUPFD_CLOEXEC, 3);
        if (cur < 0)
                return negative_errno();
        if (!GROW_ARRAY(levels, cap, 1))
                return -ENOMEM;
        r = list_children(cur, &levels[0].children);
        if (r < 0) {
                free(levels);
                return r == -ENOMEM ? r : 1;
        }
        levels[0].next = 0;
        n = 1;
        while (n > 0) {
                DeepLevel *l = &levels[n - 1];
                _cleanup_close_ int child = -EBADF;
                struct stat st;

                if (!l->children[l->next]) {
                        /* This level is done: up to its parent. */
                        strv_free(l->children);
                        if (--n == 0)
                                break;
                        int up = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                        if (up < 0) {
                                /* Removed under the walk: what is left of it
                                 * cannot be reached from here. */
                                r = negative_errno();
                                break;
                        }
                        safe_close(cur);
                        cur = up;
                        continue;
                }
                r = cgroup_open_child(cur, l->children[l->next++], &child);
                if (r == -ENOENT || r == -ENODEV || r == -EXDEV)
                        continue;
                if (r < 0) {
                        unwalked++;
                        continue;
                }
                if (fn(child, n, userdata) == CGROUP_WALK_SKIP)
                        continue;
                if (fstat(child, &st) >= 0 && S_ISDIR(st.st_mode) && st.st_nlink == 2)
                        continue;
                if (!GROW_ARRAY(levels, cap, n + 1)) {
                        r = -ENOMEM;
                        break;
                }
                levels[n] = (DeepLevel){};
                r = list_children(child, &levels[n].children);
                if (r == -ENOENT || r == -ENODEV)
                        continue;
                if (r < 0) {
                        if (r == -ENOMEM)
                                break;
                        unwalked++;
                        continue;
                }
                n++;
                safe_close(cur);
                cur = TAKE_FD(child);
        }
        for (size_t i = 0; i < n; i++)
                strv_free(levels[i].children);
        free(levels);
        if (r == -ENOMEM)
                return r;
        return unwalked + (n > 0);
}

static int remove_tree_rec(int parent_fd, const char *name, unsigned depth) {
        _cleanup_strv_free_ char **children = NULL;
        _cleanup_close_ int fd = -EBADF;
        int r;

        r = cgroup_open_child(parent_fd, name, &fd);
        if (r < 0)
                return r;
        r = depth < CGROUP_DEPTH_MAX ? list_children(fd, &children) : -ELOOP;
        for (char **c = children; c && *c; c++) {
                int q = remove_tree_rec(fd, *c, depth + 1);
                if (q < 0 && r == 0)
                        r = q;
        }
        if (unlinkat(parent_fd, name, AT_REMOVEDIR) < 0 && r == 0)
                r = negative_errno();
        return r;
}

int cgroup_remove_tree(int parent_fd, const char *name) {
        _cleanup_close_ int dir = -EBADF;
        const char *slash = strrchr(name, '/');

        if (!slash)
                return remove_tree_rec(parent_fd, name, 0);
        /* A path: its parent opened as any cgroup. */
        _cleanup_free_ char *parent = strndup(name, (size_t) (slash - name));
        if (!parent)
                return -ENOMEM;
        int r = cgroup_open(parent_fd, parent, &dir);
        if (r < 0)
                return r;
        return remove_tree_rec(dir, slash + 1, 0);
}

bool cgroup_path_startswith(const char *rel, const char *prefix) {
        size_t n = strlen(prefix);

        if (n == 0)
                return true;
        return strneq(rel, prefix, n) && (rel[n] == 0 || rel[n] == '/');
}
