/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Stands in for standby-manager where the listener runs it, for the tests
 * ($STANDBY_LISTENER_MANAGER_PATH): writes what it was given, then runs the
 * real standby-manager (../standby-manager from its own directory) with
 * the same arguments.
 *
 * It writes STATE_DIR/exec-probe.VERB (STATE_DIR: its --state-dir
 * argument; VERB: its last argument), one line each:
 *   fd N       every open descriptor but the one reading /proc/self/fd
 *   env NAME=VALUE
 *   arg A */
#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char *argv[]) {
        const char *state_dir = NULL;
        char path[PATH_MAX], self[PATH_MAX], real[PATH_MAX + 32];
        struct dirent *de;
        ssize_t n;
        FILE *f;
        DIR *d;

        for (int i = 1; i + 1 < argc; i++)
                if (strcmp(argv[i], "--state-dir") == 0)
                        state_dir = argv[i + 1];
        if (!state_dir || argc < 2)
                return 2;
        /* Read before anything here opens a descriptor of its own. */
        d = opendir("/proc/self/fd");
        if (!d)
                return 2;
        snprintf(path, sizeof(path), "%s/exec-probe.%s", state_dir, argv[argc - 1]);
        f = fopen(path, "we");
        if (!f)
                return 2;
        while ((de = readdir(d)))
                if (de->d_name[0] != '.' && atoi(de->d_name) != dirfd(d) && atoi(de->d_name) != fileno(f))
                        fprintf(f, "fd %s\n", de->d_name);
        closedir(d);
        for (char **e = environ; *e; e++)
                fprintf(f, "env %s\n", *e);
        for (int i = 1; i < argc; i++)
                fprintf(f, "arg %s\n", argv[i]);
        if (fclose(f) != 0)
                return 2;

        n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (n <= 0)
                return 2;
        self[n] = 0;
        snprintf(real, sizeof(real), "%s/../standby-manager", dirname(self));
        execv(real, argv);
        return 127;
}
