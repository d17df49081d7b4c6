/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <stdio.h>

#include "fileio.h"
#include "macro.h"
#include "proc.h"

int proc_get_stat(pid_t pid, ProcStat *ret) {
        _cleanup_free_ char *buf = NULL;
        char path[64], *p;
        unsigned long long start = 0;
        int ppid = 0;
        char state;
        int r;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        r = read_full_fileat(AT_FDCWD, path, &buf, NULL);
        if (r < 0)
                return r;

        /* comm may hold spaces and parentheses: parse after the last ')'. */
        p = strrchr(buf, ')');
        if (!p)
                return -EIO;
        /* Fields 3 (state), 4 (ppid), then starttime is field 22. */
        if (sscanf(p + 1, " %c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
                   &state, &ppid, &start) != 3)
                return -EIO;
        ret->state = state;
        ret->ppid = ppid;
        ret->starttime = start;
        return 0;
}

int proc_get_comm(pid_t pid, char **ret) {
        char path[64];

        snprintf(path, sizeof(path), "/proc/%d/comm", (int) pid);
        return read_one_lineat(AT_FDCWD, path, ret);
}

int proc_get_wchan(pid_t pid, char **ret) {
        char path[64];

        snprintf(path, sizeof(path), "/proc/%d/wchan", (int) pid);
        return read_one_lineat(AT_FDCWD, path, ret);
}

int proc_list_tids(pid_t pid, pid_t **ret, size_t *ret_n) {
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_free_ pid_t *tids = NULL;
        size_t n = 0, cap = 0;
        struct dirent *de;
        char path[64];

        snprintf(path, sizeof(path), "/proc/%d/task", (int) pid);
        d = opendir(path);
        if (!d)
                return negative_errno();
        while ((de = readdir(d))) {
                int tid;

                if (parse_pid(de->d_name, &tid) < 0)
                        continue;
                if (!GROW_ARRAY(tids, cap, n + 1))
                        return -ENOMEM;
                tids[n++] = tid;
        }
        *ret = TAKE_PTR(tids);
        *ret_n = n;
        return 0;
}
