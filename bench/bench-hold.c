/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* standby-bench --hold: how long new work started during standby runs
 * before the listener holds it. In standby, with the real listener, each
 * trial does what systemd does to start a unit: makes its cgroup, then
 * forks a process that moves itself in and works (a busy loop counting in
 * shared memory). Measured per trial: from the mkdir to cgroup.events
 * saying frozen 1 with the process in it, whether the process ran any of
 * its own code first (its count), and the CPU time it got (schedstat,
 * fork and attach included). */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>

#include "bench.h"
#include "cgroup.h"
#include "log.h"
#include "macro.h"

/* One trial: the cgroup made, a process in it; returns the time to frozen 1
 * (populated), the child's count and CPU time. */
static int trial(unsigned i, volatile uint64_t *count, double *ret_us, uint64_t *ret_count, double *ret_cpu_us) {
        char sub[64], rel[512];
        _cleanup_close_ int cg = -EBADF, events = -EBADF;
        uint64_t cpu_ns = 0, runs = 0;
        usec_t t0, deadline;
        pid_t pid;
        int r;

        snprintf(sub, sizeof(sub), "units.slice/held-%u.service", i);
        snprintf(rel, sizeof(rel), "%s/%s", scratch.base, sub);
        *count = 0;
        t0 = now_usec(CLOCK_MONOTONIC);
        r = cgroup_create(scratch.root_fd, rel);
        if (r < 0)
                return r;
        if ((r = cgroup_open(scratch.root_fd, rel, &cg)) < 0 || (r = cgroup_open_events(cg, &events)) < 0)
                return r;
        pid = fork();
        if (pid < 0)
                return negative_errno();
        if (pid == 0) {
                if (cgroup_attach(cg, getpid()) < 0)
                        _exit(127);
                for (;;)
                        (*count)++;
        }
        deadline = t0 + 5 * USEC_PER_SEC;
        for (;;) {
                bool frozen = false, populated = false;
                struct pollfd p = { .fd = events, .events = POLLPRI };
                int t;

                if ((r = cgroup_get_frozen(cg, &frozen, &populated)) < 0)
                        break;
                if (frozen && populated) {
                        *ret_us = (double) (now_usec(CLOCK_MONOTONIC) - t0);
                        break;
                }
                t = deadline_poll_timeout(deadline);
                if (t == 0) {
                        r = -ETIME;
                        break;
                }
                (void) cgroup_read_events_fd(events, &frozen, NULL); /* re-arms POLLPRI */
                (void) poll(&p, 1, MIN(t, 10));
        }
        *ret_count = *count;
        (void) stats_pid_schedstat(pid, &runs, &cpu_ns);
        *ret_cpu_us = (double) cpu_ns / 1000.0;
        (void) kill(pid, SIGKILL);
        (void) waitpid(pid, NULL, 0);
        (void) cgroup_remove(scratch.root_fd, rel);
        return r;
}

int bench_hold(const char *listener_path, unsigned samples, unsigned gap_ms) {
        _cleanup_free_ double *held_us = calloc(samples, sizeof(double)), *cpu_us = calloc(samples, sizeof(double));
        volatile uint64_t *count = mmap(NULL, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        char dir[400], units[400];
        char *idle[] = { (char *) bench_workload_path, "idle", NULL };
        sd_bus *bus = NULL;
        unsigned ran = 0, n = 0;
        int r;

        if (!held_us || !cpu_us || count == MAP_FAILED)
                return -ENOMEM;
        snprintf(dir, sizeof(dir), "%s/rules", tmpdir);
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return log_error_errno(negative_errno(), "Cannot create %s: %m", dir);
        snprintf(units, sizeof(units), "%s/units.slice", scratch.base);
        if ((r = scratch_spawn(&scratch, "units.slice/idle.service", idle, NULL)) < 0 || (r = write_config(units)) < 0 ||
            (r = bench_write_rule("10-push.rule", "[Match]\nEvent=push\nUnit=idle.service\n[Action]\nThaw=idle.service\n")) < 0 ||
            (r = bench_start_dbus()) < 0 || (r = bench_start_listener(listener_path, -EBADF)) < 0)
                return log_error_errno(r, "Failed to set up the hold bench: %m");
        if ((r = sd_bus_new(&bus)) < 0 || (r = sd_bus_set_address(bus, bus_address)) < 0 ||
            (r = sd_bus_set_bus_client(bus, 1)) < 0 || (r = sd_bus_start(bus)) < 0)
                goto finish;
        if (getenv("STANDBY_BENCH_DEBUG"))
                fprintf(stderr, "[hold] entering\n");
        if (run_manager("enter", NULL) == USEC_INFINITY) {
                r = -EIO;
                goto finish;
        }
        /* Answered once the journal change is taken: the watches are up. */
        if (bench_listener_statistic(bus, "held") == UINT64_MAX) {
                r = log_error_errno(-EPROTO, "%s has no \"held\" statistic: it does not hold new work", listener_path);
                goto finish;
        }
        for (unsigned i = 0; i < samples; i++) {
                uint64_t c = 0;
                double cpu = 0;
                if ((r = bench_check_interrupted()) < 0)
                        goto finish;
                if (getenv("STANDBY_BENCH_DEBUG"))
                        fprintf(stderr, "[hold] trial %u\n", i);
                r = trial(i, count, &held_us[n], &c, &cpu);
                if (r < 0) {
                        log_error_errno(r, "Trial %u: not held within 5 s: %m", i);
                        goto finish;
                }
                cpu_us[n++] = cpu;
                ran += c > 0;
                (void) poll(NULL, 0, (int) gap_ms);
        }
        printf("\nNew work held in standby (%u trials: mkdir, then a process moves in and spins)\n", n);
        printf("  mkdir -> frozen 1 (populated), us: p50 %.0f  p99 %.0f  max %.0f\n",
               stats_percentile(held_us, n, 50), stats_percentile(held_us, n, 99), stats_max(held_us, n));
        printf("  CPU time of the new process (fork, attach included), us: p50 %.0f  p99 %.0f  max %.0f\n",
               stats_percentile(cpu_us, n, 50), stats_percentile(cpu_us, n, 99), stats_max(cpu_us, n));
        printf("  trials in which it ran any of its own code before held: %u of %u\n", ran, n);
        printf("  listener's held count: %" PRIu64 "\n", bench_listener_statistic(bus, "held"));
        r = 0;
finish:
        (void) run_manager("exit", NULL);
        sd_bus_flush_close_unref(bus);
        bench_stop_services();
        (void) munmap((void *) count, sizeof(uint64_t));
        return r;
}
