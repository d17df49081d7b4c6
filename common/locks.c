/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>

#include "locks.h"
#include "macro.h"

int locks_read_waits(const char *path, LockWait **ret, size_t *ret_n) {
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        _cleanup_free_ LockWait *waits = NULL;
        size_t n = 0, cap = 0, lcap = 0;
        pid_t holder = 0;
        unsigned long holder_id = 0;

        f = fopen(path, "re");
        if (!f)
                return negative_errno();

        while (getline(&line, &lcap, f) > 0) {
                unsigned long id;
                char type[16];
                int pid, consumed = 0;
                bool blocked;

                if (sscanf(line, "%lu:%n", &id, &consumed) != 1)
                        continue;
                char *p = line + consumed;
                p += strspn(p, " ");
                blocked = strneq(p, "->", 2);
                if (blocked)
                        p += 2;
                /* TYPE ADVISORY|MANDATORY|... READ|WRITE|... PID dev:ino start end */
                if (sscanf(p, " %15s %*s %*s %d", type, &pid) != 2)
                        continue;

                if (!blocked) {
                        holder = pid;
                        holder_id = id;
                        continue;
                }
                if (id != holder_id)
                        continue; /* a waiter whose lock line we did not see */

                if (n == cap) {
                        size_t nc = cap ? cap * 2 : 8;
                        LockWait *nw = realloc(waits, nc * sizeof(LockWait));
                        if (!nw)
                                return -ENOMEM;
                        waits = nw;
                        cap = nc;
                }
                waits[n] = (LockWait) { .holder = holder, .waiter = pid };
                snprintf(waits[n].type, sizeof(waits[n].type), "%s", type);
                n++;
        }

        *ret = TAKE_PTR(waits);
        *ret_n = n;
        return 0;
}
