/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "log.h"
#include "macro.h"
#include "test-util.h"

/* Runs one log call with stderr on a memfd and returns what it wrote. */
static char *captured(void (*call)(void)) {
        static char out[512];
        int fd = memfd_create("log", MFD_CLOEXEC), saved = dup(STDERR_FILENO);
        ssize_t n;

        ck_assert_int_ge(fd, 0);
        fflush(stderr);
        dup2(fd, STDERR_FILENO);
        call();
        fflush(stderr);
        dup2(saved, STDERR_FILENO);
        close(saved);
        n = pread(fd, out, sizeof(out) - 1, 0);
        close(fd);
        out[n > 0 ? n : 0] = 0;
        return out;
}

static void info_after_failed_call(void) {
        errno = ENODEV;
        log_info("device gone: %m");
}

static void error_with_errno(void) {
        errno = 0;
        (void) log_error_errno(-EIO, "write failed: %m");
}

START_TEST(test_percent_m) {
        /* Without an error argument, %m is the errno of the failed call
         * (it printed "Success" for an unplugged input device). */
        ck_assert_ptr_nonnull(strstr(captured(info_after_failed_call), "device gone: No such device"));
        ck_assert_ptr_nonnull(strstr(captured(error_with_errno), "write failed: Input/output error"));
}
END_TEST

Suite *log_suite(void) {
        Suite *s = suite_create("log");
        TCase *tc = tcase_create("format");
        tcase_add_test(tc, test_percent_m);
        suite_add_tcase(s, tc);
        return s;
}
