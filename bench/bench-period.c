/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* standby-bench --standby-period: a Debian 12 system booted under
 * systemd-nspawn (bench/period/system.sh), each strategy in turn over a
 * standby period with the same seeded schedule of events, measured from the
 * host: wakeups and CPU time per unit of the booted system, each event to
 * its answer, how late each periodic job ran, whether redis and postgres
 * did their timed duties (by their results on disk), and how the system
 * comes back after exit. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "fileio.h"
#include "json.h"
#include "log.h"
#include "macro.h"
#include "strv.h"

#define SYSTEM_SCRIPT "bench/period/system.sh"
#define CHAT_PORT 5222
#define MAIL_PORT 1143
#define REDIS_PORT 6379
#define MEMCACHED_PORT 11211
#define REDIS_BULK 10000          /* changes that make redis's stock "save 60 10000" due */
#define REDIS_SAVE_SECONDS 60     /* redis's stock "save 60 10000" */
#define PG_CHECKPOINT_TIMEOUT 300.0 /* postgresql's stock checkpoint_timeout */
#define ANSWER_BOUND_USEC (10 * USEC_PER_SEC)

enum { STRATEGY_NONE, STRATEGY_SLACK, STRATEGY_FREEZE, STRATEGY_FREEZE_WINDOWS, STRATEGY_PERIODIC };
typedef struct Strategy {
        const char *name;
        int kind;
        char slack[32]; /* TimerSlackNSec= */
} Strategy;

enum { EV_MAIL, EV_CHAT, EV_REDIS, EV_MEMCACHED, EV_LINK, _EV_MAX };
static const char * const ev_names[_EV_MAX] = { "mail push", "chat message", "redis request", "memcached request",
                                                "link change" };

/* The periodic jobs, by what records their runs. */
enum { JOB_TICK, JOB_CRON, JOB_CHAT, JOB_MAIL, _JOB_MAX };
static const char * const job_names[_JOB_MAX] = { "alice's tick.timer (10 s)", "cron job (1 min)",
                                                  "chat keepalive (30 s)", "mail check (1 min)" };
static const char * const job_keys[_JOB_MAX] = { "timer", "cron", "chat_keepalive", "mail_check" };
static const double job_period[_JOB_MAX] = { 10, 60, 30, 60 };
/* The lateness each job accepts, declared as its user would: a minute for
 * the timer, cron and the mail checks, and half a minute for the chat
 * keepalive, whose server drops a client after two missed. A run missed is
 * one that did not come by its due time plus this. */
static const double job_allowed[_JOB_MAX] = { 60, 60, 30, 60 };
/* And for the daemons' own timed duties (redis's save, postgres's timed
 * checkpoint), read from their results. */
#define DUTY_ALLOWED 60.0

typedef struct Event {
        double at;          /* s after the start of standby */
        int kind;
        double sent;        /* wall clock, s */
        double answered;    /* wall clock, s; 0: not yet */
} Event;

/* A connection to a service or from a client, and the events waiting for
 * their answers on it, in order. */
typedef struct Conn {
        int fd;
        size_t *queue;
        size_t head, n, cap;
        double *keepalives; /* a client's 'k's, wall clock */
        size_t n_keepalives, keepalives_cap;
} Conn;

typedef struct Result {
        double wakeups, kernel_wakeups, cpu_ms;       /* per second of standby */
        double p50_ms, p99_ms;
        unsigned n_events, unanswered, after_exit;     /* events never answered; answered only after exit */
        double job_late_p50[_JOB_MAX], job_late_max[_JOB_MAX];
        unsigned job_due[_JOB_MAX], job_missed[_JOB_MAX];
        unsigned runs_missed;                          /* every job's and duty's, by its declared lateness */
        double lateness_median;                        /* every job's due runs, a missed one as its lateness */
        double recovery_late_max;                      /* the due runs of the recovery window */
        unsigned recovery_missed;
        double redis_due, redis_done, pg_due, pg_done; /* wall clock; 0: none */
        double enter_ms, exit_ms;
        bool correct;
} Result;

typedef struct Period {
        const PeriodOptions *o;
        pid_t leader;
        char cgroup[4096], root[64];
        int cg_mount_fd, netns_fd, host_ns_fd;
        Conn chat, mail, redis, memcached;
        sd_bus *bus;
        Event *events;
        size_t n_events;
        Strategy *strategies;
        size_t n_strategies;
        Result *results;
        UnitTracker *trackers;
        bool link_up;
        unsigned redis_incr, memcached_incr, pg_rows;
} Period;

static double wall(void) {
        return (double) now_usec(CLOCK_REALTIME) / USEC_PER_SEC;
}

static int parse_strategy(const char *name, Strategy *s) {
        *s = (Strategy) { .name = name };
        if (streq(name, "none"))
                s->kind = STRATEGY_NONE;
        else if (streq(name, "freeze"))
                s->kind = STRATEGY_FREEZE;
        else if (streq(name, "freeze-windows"))
                s->kind = STRATEGY_FREEZE_WINDOWS;
        else if (streq(name, "periodic"))
                s->kind = STRATEGY_PERIODIC;
        else if (streq(name, "slack")) {
                s->kind = STRATEGY_SLACK;
                strcpy(s->slack, "max");
        } else if (strneq(name, "slack-", 6)) {
                char *end;
                unsigned long long v = strtoull(name + 6, &end, 10);
                unsigned long long mult = streq(end, "us") ? 1000ULL
                                        : streq(end, "ms") ? 1000000ULL
                                        : streq(end, "s")  ? 1000000000ULL
                                                           : 0;
                if (end == name + 6 || mult == 0 || v == 0 || v > UINT64_MAX / mult)
                        return log_error_errno(-EINVAL, "Unknown strategy \"%s\" (slack-N with us, ms or s)", name);
                s->kind = STRATEGY_SLACK;
                snprintf(s->slack, sizeof(s->slack), "%llu", v * mult);
        } else
                return log_error_errno(-EINVAL,
                                       "Unknown strategy \"%s\": none, slack, slack-N{us,ms,s}, freeze, freeze-windows, "
                                       "periodic",
                                       name);
        return 0;
}

/* Runs argv; with out, its stdout (up to size - 1 bytes) into out. Returns
 * the exit status, or a negative errno. */
static int spawn_wait(char *const argv[], char *out, size_t size) {
        posix_spawn_file_actions_t fa;
        int pipefd[2] = { -EBADF, -EBADF }, status = 0;
        pid_t pid;

        if (out && pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;
        posix_spawn_file_actions_init(&fa);
        if (out)
                posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
        int r = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        if (out)
                close(pipefd[1]);
        if (r != 0) {
                if (out)
                        close(pipefd[0]);
                return -r;
        }
        if (out) {
                size_t got = 0;
                ssize_t n;
                while (got + 1 < size && (n = read(pipefd[0], out + got, size - 1 - got)) > 0)
                        got += (size_t) n;
                out[got] = 0;
                char drain[256];
                while (read(pipefd[0], drain, sizeof(drain)) > 0)
                        ;
                close(pipefd[0]);
        }
        if (waitpid(pid, &status, 0) != pid)
                return -errno;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* Runs a command in the booted system (every namespace of its PID 1). */
static int in_ct(Period *p, const char *cmd, char *out, size_t size) {
        char leader[16];
        snprintf(leader, sizeof(leader), "%d", (int) p->leader);
        char *argv[] = { "nsenter", "-t", leader, "-a", "sh", "-c", (char *) cmd, NULL };
        return spawn_wait(argv, out, size);
}

static int in_netns(Period *p, int port, bool listening) {
        if (setns(p->netns_fd, CLONE_NEWNET) < 0)
                return -errno;
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t) port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, r = 0;
        if (fd < 0)
                r = -errno;
        else if (listening && (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
                               bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(fd, 4) < 0))
                r = -errno;
        else if (!listening && connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                r = -errno;
        if (setns(p->host_ns_fd, CLONE_NEWNET) < 0 && r == 0)
                r = -errno;
        if (r < 0) {
                safe_close(fd);
                return r;
        }
        return fd;
}

/* Accepts the client that connects to port (it retries every second). */
static int accept_client(Period *p, int port, Conn *c) {
        _cleanup_close_ int l = in_netns(p, port, true);
        if (l < 0)
                return log_error_errno(l, "Cannot listen on port %d in the system's namespace: %m", port);
        struct pollfd pf = { .fd = l, .events = POLLIN };
        if (poll(&pf, 1, 30000) != 1)
                return log_error_errno(-ETIMEDOUT, "No client on port %d within 30 s", port);
        c->fd = accept4(l, NULL, NULL, SOCK_CLOEXEC);
        return c->fd < 0 ? -errno : 0;
}

static int conn_push(Conn *c, size_t ev) {
        if (!GROW_ARRAY(c->queue, c->cap, c->head + c->n + 1))
                return -ENOMEM;
        c->queue[c->head + c->n++] = ev;
        return 0;
}

/* Reads what came on c: each answer (a line from a daemon, 'r' from a
 * client) ends the oldest event waiting; each 'k' is a keepalive. */
static int conn_read(Period *p, Conn *c, bool client) {
        char buf[4096];
        ssize_t n = read(c->fd, buf, sizeof(buf));
        double t = wall();
        if (n <= 0)
                return n == 0 ? -ECONNRESET : -errno;
        for (ssize_t i = 0; i < n; i++) {
                bool answer = client ? buf[i] == 'r' : buf[i] == '\n';
                if (client && buf[i] == 'k') {
                        if (!GROW_ARRAY(c->keepalives, c->keepalives_cap, c->n_keepalives + 1))
                                return -ENOMEM;
                        c->keepalives[c->n_keepalives++] = t;
                }
                if (answer && c->n > 0) {
                        p->events[c->queue[c->head]].answered = t;
                        c->head++;
                        c->n--;
                }
        }
        return 0;
}

/* Sends req on c and waits, up to 10 s, for reply_lines lines; the reply in
 * out. For the checks before and after standby, with nothing waiting. */
static int conn_request(Conn *c, const char *req, unsigned reply_lines, char *out, size_t size) {
        size_t got = 0;
        unsigned lines = 0;
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + ANSWER_BOUND_USEC;

        if (write(c->fd, req, strlen(req)) != (ssize_t) strlen(req))
                return -EIO;
        while (lines < reply_lines) {
                usec_t now = now_usec(CLOCK_MONOTONIC);
                struct pollfd pf = { .fd = c->fd, .events = POLLIN };
                if (now >= deadline || poll(&pf, 1, (int) ((deadline - now) / 1000) + 1) != 1)
                        return -ETIMEDOUT;
                ssize_t n = read(c->fd, out + got, size - 1 - got);
                if (n <= 0)
                        return -EIO;
                for (ssize_t i = 0; i < n; i++)
                        lines += out[got + i] == '\n';
                got += (size_t) n;
                if (got + 1 >= size)
                        return -E2BIG;
        }
        out[got] = 0;
        return 0;
}

/* Sends 'm' to a client and waits for its 'r' (keepalives in between are
 * kept). */
static int client_answers(Conn *c) {
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + ANSWER_BOUND_USEC;
        if (write(c->fd, "m", 1) != 1)
                return -EIO;
        for (;;) {
                usec_t now = now_usec(CLOCK_MONOTONIC);
                struct pollfd pf = { .fd = c->fd, .events = POLLIN };
                char ch;
                if (now >= deadline || poll(&pf, 1, (int) ((deadline - now) / 1000) + 1) != 1 || read(c->fd, &ch, 1) != 1)
                        return -ETIMEDOUT;
                if (ch == 'r')
                        return 0;
                if (ch == 'k' && GROW_ARRAY(c->keepalives, c->keepalives_cap, c->n_keepalives + 1))
                        c->keepalives[c->n_keepalives++] = wall();
        }
}

static int link_set(Period *p, bool up) {
        char ns[64];
        snprintf(ns, sizeof(ns), "--net=/proc/%d/ns/net", (int) p->leader);
        char *argv[] = { "nsenter", ns, "ip", "link", "set", "dev", "sbp0", up ? "up" : "down", NULL };
        p->link_up = up;
        return spawn_wait(argv, NULL, 0) == 0 ? 0 : -EIO;
}

/* The bench's connection to the system's bus, through its root. */
static int bus_connect(Period *p) {
        char address[128];
        int r;

        p->bus = sd_bus_flush_close_unref(p->bus);
        snprintf(address, sizeof(address), "unix:path=%s/run/dbus/system_bus_socket", p->root);
        if ((r = sd_bus_new(&p->bus)) < 0 || (r = sd_bus_set_address(p->bus, address)) < 0 ||
            (r = sd_bus_set_bus_client(p->bus, true)) < 0 || (r = sd_bus_start(p->bus)) < 0)
                return r;
        return 0;
}

static int fire(Period *p, size_t i) {
        Event *e = &p->events[i];
        int r = 0;

        e->sent = wall();
        switch (e->kind) {
        case EV_MAIL:
                /* The mail arrives on the client's connection and the push
                 * says so, as a push service would. */
                if (write(p->mail.fd, "m", 1) != 1)
                        return -EIO;
                r = conn_push(&p->mail, i);
                if (r >= 0) {
                        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
                        int q = sd_bus_call_method(p->bus, "org.standby.Listener1", "/org/standby/Listener1",
                                                   "org.standby.Listener1", "Push", &error, NULL, "ss", "mail.service", "mail");
                        if (q == -ENOTCONN || q == -ECONNRESET) {
                                /* The bus dropped the connection: once more on a new one. */
                                sd_bus_error_free(&error);
                                q = bus_connect(p);
                                if (q >= 0)
                                        q = sd_bus_call_method(p->bus, "org.standby.Listener1", "/org/standby/Listener1",
                                                               "org.standby.Listener1", "Push", &error, NULL, "ss",
                                                               "mail.service", "mail");
                        }
                        if (q < 0)
                                log_warning_errno(q, "Push for mail.service failed: %s", error.message ?: strerror(-q));
                }
                return r;
        case EV_CHAT:
                if (write(p->chat.fd, "m", 1) != 1)
                        return -EIO;
                return conn_push(&p->chat, i);
        case EV_REDIS:
                p->redis_incr++;
                if (write(p->redis.fd, "INCR ctr\r\n", 10) != 10)
                        return -EIO;
                return conn_push(&p->redis, i);
        case EV_MEMCACHED:
                p->memcached_incr++;
                if (write(p->memcached.fd, "incr ctr 1\r\n", 12) != 12)
                        return -EIO;
                return conn_push(&p->memcached, i);
        case EV_LINK:
                r = link_set(p, !p->link_up);
                e->answered = e->sent; /* nothing answers a link change; it is load on the listener */
                return r;
        }
        return -EINVAL;
}

static int enter(Period *p, const Strategy *s, double *ms) {
        usec_t t0 = now_usec(CLOCK_MONOTONIC);
        char out[4096];
        if (in_ct(p, "systemctl start standby.target 2>&1", out, sizeof(out)) != 0)
                return log_error_errno(-EIO, "Entering standby (%s) failed: %s", s->name, out);
        if (ms)
                *ms = (double) (now_usec(CLOCK_MONOTONIC) - t0) / 1000.0;
        return 0;
}

static int leave(Period *p, const Strategy *s, double *ms) {
        usec_t t0 = now_usec(CLOCK_MONOTONIC);
        char out[4096];
        if (in_ct(p, "systemctl stop standby.target standby-enter.service 2>&1", out, sizeof(out)) != 0)
                return log_error_errno(-EIO, "Leaving standby (%s) failed: %s", s->name, out);
        if (ms)
                *ms = (double) (now_usec(CLOCK_MONOTONIC) - t0) / 1000.0;
        return 0;
}

/* A rule file with EndWhenIdle=yes at its end, or without it. */
static int rule_end_when_idle(const char *path, bool idle) {
        _cleanup_free_ char *text = NULL;
        int r = read_full_fileat(AT_FDCWD, path, &text, NULL);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return log_error_errno(r, "Cannot read %s: %m", path);
        char *at = strstr(text, "EndWhenIdle=yes\n");
        if (at)
                *at = 0;
        _cleanup_fclose_ FILE *f = fopen(path, "we");
        if (!f || fputs(text, f) < 0 || (idle && fputs("EndWhenIdle=yes\n", f) < 0) || fflush(f) != 0)
                return log_error_errno(-EIO, "Cannot write %s", path);
        return 0;
}

/* The strategy's standby.conf and rules: the periodic thaw has no rules
 * (its listener only holds units made in standby); freeze and periodic have
 * no maintenance windows (Lateness=infinity). freeze-windows declares, for
 * the units whose periodic work the bench checks, the lateness that work
 * accepts (a minute; the chat keepalive half of one), the rest keeping the
 * default, and its windows end when their units' threads sleep
 * (EndWhenIdle=yes), For= their bound. */
static int configure(Period *p, const Strategy *s) {
        char path[256], from[512], to[512];
        snprintf(path, sizeof(path), "%s/etc/standby/standby.conf", p->root);
        FILE *f = fopen(path, "we");
        if (!f)
                return log_error_errno(-errno, "Cannot write %s: %m", path);
        fprintf(f, "[Standby]\nTargets=system.slice user.slice\nStrategy=%s\n",
                s->kind == STRATEGY_SLACK ? "slack" : "freeze");
        if (s->kind == STRATEGY_SLACK)
                fprintf(f, "TimerSlackNSec=%s\n", s->slack);
        /* 5 s under what each accepts: the run itself comes a little
         * after the window opens. */
        if (s->kind == STRATEGY_FREEZE_WINDOWS) {
                static const char * const minute[] = { "tick.service", "cron.service", "mail.service",
                                                       "redis-server.service", "postgresql@15-main.service" };
                fprintf(f, "[Lateness]\nchat.service=%.0fs\n", job_allowed[JOB_CHAT] - 5);
                for (size_t i = 0; i < ELEMENTSOF(minute); i++)
                        fprintf(f, "%s=%.0fs\n", minute[i], DUTY_ALLOWED - 5);
        }
        else
                fprintf(f, "[Maintenance]\nLateness=infinity\n");
        if (fclose(f) != 0)
                return -errno;
        static const char * const rules[] = { "10-mail", "20-chat", "30-redis", "40-memcached", "50-postgresql", "60-link" };
        bool on = s->kind != STRATEGY_PERIODIC;
        for (size_t i = 0; i < ELEMENTSOF(rules); i++) {
                snprintf(from, sizeof(from), "%s/etc/standby/%s/%s.rule", p->root, on ? "rules.off" : "rules.d", rules[i]);
                snprintf(to, sizeof(to), "%s/etc/standby/%s/%s.rule", p->root, on ? "rules.d" : "rules.off", rules[i]);
                if (rename(from, to) < 0 && errno != ENOENT)
                        return log_error_errno(-errno, "Cannot move %s: %m", from);
                int r = rule_end_when_idle(to, s->kind == STRATEGY_FREEZE_WINDOWS);
                if (r < 0)
                        return r;
        }
        char out[4096];
        if (in_ct(p, "systemctl restart standby-listener.service 2>&1", out, sizeof(out)) != 0)
                return log_error_errno(-EIO, "Restarting the listener failed: %s", out);
        return 0;
}

static double file_mtime(Period *p, const char *rel) {
        char path[256];
        struct stat st;
        snprintf(path, sizeof(path), "%s%s", p->root, rel);
        return stat(path, &st) < 0 ? 0 : (double) st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
}

/* postgresql's latest checkpoint (when it started), from pg_controldata:
 * it reads the control file and does not touch the server. */
static double pg_checkpoint(Period *p) {
        char out[8192];
        if (in_ct(p, "TZ=UTC LC_ALL=C /usr/lib/postgresql/15/bin/pg_controldata /var/lib/postgresql/15/main", out,
                  sizeof(out)) != 0)
                return 0;
        return pg_checkpoint_parse(out);
}

static int psql(Period *p, const char *sql, long *ret) {
        char cmd[512], out[256];
        snprintf(cmd, sizeof(cmd), "runuser -u postgres -- env PGOPTIONS=--client-min-messages=warning psql -qAt -c \"%s\"", sql);
        if (in_ct(p, cmd, out, sizeof(out)) != 0)
                return -EIO;
        if (ret)
                *ret = strtol(out, NULL, 10);
        return 0;
}

/* Reads a log of run times (one wall-clock time a line) below the system's root. */
static int read_runs(Period *p, const char *rel, double **ret, size_t *ret_n) {
        _cleanup_free_ char *text = NULL;
        char path[256];
        size_t cap = 0, n = 0;
        double *v = NULL;

        snprintf(path, sizeof(path), "%s%s", p->root, rel);
        if (read_full_fileat(AT_FDCWD, path, &text, NULL) < 0) {
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        for (char *s = text, *end; *s; s = end) {
                double t = strtod(s, &end);
                if (end == s)
                        break;
                if (!GROW_ARRAY(v, cap, n + 1)) {
                        free(v);
                        return -ENOMEM;
                }
                v[n++] = t;
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

static int job_runs(Period *p, int job, double **ret, size_t *n) {
        Conn *c = job == JOB_CHAT ? &p->chat : &p->mail;
        if (job == JOB_TICK)
                return read_runs(p, "/home/alice/tick.log", ret, n);
        if (job == JOB_CRON)
                return read_runs(p, "/var/log/cron-tick.log", ret, n);
        *ret = malloc(MAX(c->n_keepalives, 1) * sizeof(double));
        if (!*ret)
                return -ENOMEM;
        memcpy(*ret, c->keepalives, c->n_keepalives * sizeof(double));
        *n = c->n_keepalives;
        return 0;
}

/* Waits until until (CLOCK_MONOTONIC), handling answers, firing the
 * events due (offsets from t0), sampling the tracker every second and (a
 * periodic strategy in standby) thawing and freezing all on its cycle. */
static int run_until(Period *p, const Strategy *s, usec_t t0, usec_t until, size_t *next_ev, UnitTracker *tr,
                     bool *in_standby, usec_t *next_cycle, unsigned *interval) {
        usec_t next_sample = now_usec(CLOCK_MONOTONIC) + USEC_PER_SEC;
        Conn *conns[] = { &p->chat, &p->mail, &p->redis, &p->memcached };
        int r;

        for (;;) {
                usec_t now = now_usec(CLOCK_MONOTONIC), wake = until;
                if (bench_interrupted)
                        return log_error_errno(-EINTR, "Interrupted: leaving standby and stopping the system");
                if (now >= until)
                        return 0;
                if (next_ev && *next_ev < p->n_events) {
                        usec_t at = t0 + (usec_t) (p->events[*next_ev].at * USEC_PER_SEC);
                        if (at <= now) {
                                r = fire(p, (*next_ev)++);
                                if (r < 0)
                                        return log_error_errno(r, "Event %zu failed: %m", *next_ev - 1);
                                continue;
                        }
                        wake = MIN(wake, at);
                }
                if (next_cycle && *next_cycle) {
                        if (*next_cycle <= now) {
                                if (*in_standby) {
                                        r = leave(p, s, NULL);
                                        *next_cycle = now_usec(CLOCK_MONOTONIC) + p->o->thaw_window * USEC_PER_SEC;
                                } else {
                                        r = enter(p, s, NULL);
                                        *interval *= 2;
                                        *next_cycle = now_usec(CLOCK_MONOTONIC) + *interval * USEC_PER_SEC;
                                }
                                if (r < 0)
                                        return r;
                                *in_standby = !*in_standby;
                                continue;
                        }
                        wake = MIN(wake, *next_cycle);
                }
                if (tr) {
                        if (next_sample <= now) {
                                r = unit_tracker_sample(tr);
                                if (r < 0)
                                        return log_error_errno(r, "Sampling the units failed: %m");
                                next_sample += USEC_PER_SEC;
                                continue;
                        }
                        wake = MIN(wake, next_sample);
                }
                struct pollfd pf[ELEMENTSOF(conns)];
                for (size_t i = 0; i < ELEMENTSOF(conns); i++)
                        pf[i] = (struct pollfd) { .fd = conns[i]->fd, .events = POLLIN };
                int n = poll(pf, ELEMENTSOF(conns), (int) ((wake - now + 999) / 1000));
                if (n < 0 && errno != EINTR)
                        return -errno;
                for (size_t i = 0; n > 0 && i < ELEMENTSOF(conns); i++)
                        if (pf[i].revents) {
                                r = conn_read(p, conns[i], i < 2);
                                if (r < 0)
                                        return log_error_errno(r, "Connection %zu failed: %m", i);
                        }
        }
}

static double median_late(double *v, size_t n) {
        return n ? stats_median(v, n) : NAN;
}

static int cmp_units(const void *a, const void *b) {
        const UnitCount *x = a, *y = b;
        return x->wakeups < y->wakeups ? 1 : x->wakeups > y->wakeups ? -1 : strcmp(x->name, y->name);
}

/* A unit's name for the tables: alice's below her user manager by the unit. */
static const char *short_unit(const char *name) {
        const char *u = strstr(name, "user@1000.service/");
        if (u) {
                const char *last = strrchr(name, '/');
                static char buf[300];
                snprintf(buf, sizeof(buf), "alice: %s", streq(last, "/init.scope") ? "user manager" : last + 1);
                return buf;
        }
        const char *last = strrchr(name, '/');
        return last ? last + 1 : name;
}

/* One strategy over the period: prepare, enter, the schedule, exit, recovery, checks. */
static int run_strategy(Period *p, size_t si) {
        const Strategy *s = &p->strategies[si];
        Result *res = &p->results[si];
        UnitTracker *tr = &p->trackers[si];
        char reply[512];
        long rows = 0;
        int r;

        printf("\n== %s ==\n", s->name);
        fflush(stdout);
        r = configure(p, s);
        if (r < 0)
                return r;
        /* The duties made due: a redis save 61 s after this one with 10,000
         * changes; a postgres checkpoint 300 s after the one made here, with
         * WAL written since. */
        if (conn_request(&p->redis, "SAVE\r\n", 1, reply, sizeof(reply)) < 0)
                return log_error_errno(-EIO, "redis SAVE failed");
        double saved = wall();
        for (unsigned i = 0; i < REDIS_BULK; i += 1000) {
                char batch[32 * 1000];
                size_t len = 0;
                for (unsigned j = i; j < i + 1000; j++)
                        len += (size_t) snprintf(batch + len, sizeof(batch) - len, "SET bulk:%u %u\r\n", j, j);
                char big[8 * 1000];
                if (conn_request(&p->redis, batch, 1000, big, sizeof(big)) < 0)
                        return log_error_errno(-EIO, "redis SET failed");
        }
        if (conn_request(&p->redis, "SET ctr 0\r\n", 1, reply, sizeof(reply)) < 0 ||
            conn_request(&p->memcached, "set ctr 0 0 1\r\n0\r\n", 1, reply, sizeof(reply)) < 0)
                return log_error_errno(-EIO, "Setting the counters failed");
        p->redis_incr = p->memcached_incr = 0;
        /* A checkpoint now sets the checkpointer's clock (its timed one
         * comes checkpoint_timeout after the last it made, or skipped for
         * want of WAL, which pg_control does not show); the row after it
         * is the WAL that makes the timed one write. */
        if (psql(p, "insert into bench values (now()); checkpoint; insert into bench values (now())", NULL) < 0)
                return log_error_errno(-EIO, "psql insert failed");
        p->pg_rows += 2;
        double ckpt0 = pg_checkpoint(p), dump0 = file_mtime(p, "/var/lib/redis/dump.rdb");
        for (size_t i = 0; i < p->n_events; i++)
                p->events[i].sent = p->events[i].answered = 0;

        /* Standby. */
        double t_enter = wall();
        bool in_standby = false;
        unsigned interval = p->o->thaw_first;
        usec_t next_cycle = 0;
        if (s->kind != STRATEGY_NONE) {
                r = enter(p, s, &res->enter_ms);
                if (r < 0)
                        return r;
                in_standby = true;
        }
        usec_t t0 = now_usec(CLOCK_MONOTONIC);
        if (s->kind == STRATEGY_PERIODIC)
                next_cycle = t0 + interval * USEC_PER_SEC;
        r = unit_tracker_start(tr, p->cg_mount_fd, p->cgroup, true);
        if (r < 0)
                return log_error_errno(r, "Cannot read the system's cgroups: %m");
        size_t next_ev = 0;
        r = run_until(p, s, t0, t0 + p->o->seconds * USEC_PER_SEC, &next_ev, tr, &in_standby,
                      s->kind == STRATEGY_PERIODIC ? &next_cycle : NULL, &interval);
        if (r < 0)
                return r;
        r = unit_tracker_sample(tr);
        if (r < 0)
                return r;
        double t_leave = wall();
        double ckpt1 = pg_checkpoint(p), dump1 = file_mtime(p, "/var/lib/redis/dump.rdb");
        if (in_standby) {
                r = leave(p, s, &res->exit_ms);
                if (r < 0)
                        return r;
        }
        double t_back = wall();

        /* Recovery: answers still coming, jobs back on schedule. */
        r = run_until(p, s, 0, now_usec(CLOCK_MONOTONIC) + p->o->recovery_seconds * USEC_PER_SEC, NULL, NULL, NULL,
                      NULL, NULL);
        if (r < 0)
                return r;
        double t_end = wall();
        double ckpt2 = pg_checkpoint(p), dump2 = file_mtime(p, "/var/lib/redis/dump.rdb");

        /* Checks: every client answers; the counters and rows are right. */
        char expect[64];
        bool ok = client_answers(&p->mail) >= 0 && client_answers(&p->chat) >= 0;
        snprintf(expect, sizeof(expect), "\r\n%u\r\n", p->redis_incr);
        ok = ok && conn_request(&p->redis, "GET ctr\r\n", 2, reply, sizeof(reply)) >= 0 && strstr(reply, expect);
        snprintf(expect, sizeof(expect), "\r\n%u\r\nEND", p->memcached_incr);
        ok = ok && conn_request(&p->memcached, "get ctr\r\n", 3, reply, sizeof(reply)) >= 0 && strstr(reply, expect);
        ok = ok && psql(p, "select count(*) from bench", &rows) >= 0 && rows == (long) p->pg_rows;
        res->correct = ok;

        /* Figures. */
        _cleanup_free_ double *lat = malloc(MAX(p->n_events, 1) * sizeof(double));
        if (!lat)
                return -ENOMEM;
        size_t nl = 0;
        unsigned late_kind[_EV_MAX] = {};
        for (size_t i = 0; i < p->n_events; i++) {
                const Event *e = &p->events[i];
                if (e->kind == EV_LINK || e->sent == 0)
                        continue;
                res->n_events++;
                if (e->answered == 0)
                        res->unanswered++;
                else {
                        lat[nl++] = (e->answered - e->sent) * 1000.0;
                        res->after_exit += e->answered >= t_leave;
                        late_kind[e->kind] += e->answered >= t_leave;
                }
        }
        res->p50_ms = stats_percentile(lat, nl, 50);
        res->p99_ms = stats_percentile(lat, nl, 99);
        for (size_t i = 0; i < tr->n_units; i++) {
                if (streq(tr->units[i].name, UNIT_TRACKER_KERNEL)) {
                        res->kernel_wakeups = unit_tracker_rate(tr, &tr->units[i]);
                        continue;
                }
                res->wakeups += unit_tracker_rate(tr, &tr->units[i]);
                double c = unit_tracker_cpu_ms_per_s(tr, &tr->units[i]);
                res->cpu_ms += isnan(c) ? 0 : c;
        }
        double all_late[4096];
        size_t n_all = 0;
        res->recovery_late_max = 0;
        for (int j = 0; j < _JOB_MAX; j++) {
                _cleanup_free_ double *runs = NULL;
                size_t n = 0, n_late = 0;
                unsigned missed = 0;
                r = job_runs(p, j, &runs, &n);
                if (r < 0)
                        return r;
                double late[4096];
                size_t cap = ELEMENTSOF(late);
                if ((t_leave - t_enter) / job_period[j] + 2 > (double) cap)
                        return log_error_errno(-E2BIG, "The period is too long for the job table");
                /* Judged: the runs due early enough that their lateness ends
                 * in standby (a later one the exit's thaw would serve). */
                res->job_due[j] = (unsigned) period_lateness(runs, n, job_period[j], job_allowed[j], t_enter,
                                                             t_leave - job_allowed[j], late, &n_late, &missed);
                res->job_missed[j] = missed;
                res->runs_missed += missed;
                res->job_late_p50[j] = median_late(late, n_late);
                res->job_late_max[j] = n_late ? stats_max(late, n_late) : NAN;
                for (size_t k = 0; k < n_late && n_all < ELEMENTSOF(all_late); k++)
                        all_late[n_all++] = late[k];
                for (unsigned k = 0; k < missed && n_all < ELEMENTSOF(all_late); k++)
                        all_late[n_all++] = job_allowed[j];
                /* Back on schedule: the runs due from a second after exit on,
                 * each by its period (nothing excuses lateness out of standby). */
                period_lateness(runs, n, job_period[j], job_period[j], t_back + 1, t_end, late, &n_late, &missed);
                res->recovery_missed += missed;
                if (n_late)
                        res->recovery_late_max = MAX(res->recovery_late_max, stats_max(late, n_late));
        }
        res->lateness_median = median_late(all_late, n_all);
        double redis_due = redis_save_due(saved, REDIS_SAVE_SECONDS);
        res->redis_due = redis_due < t_leave ? redis_due : 0;
        res->redis_done = dump1 > dump0 + 0.5 ? dump1 : dump2 > dump0 + 0.5 ? dump2 : 0;
        double pg_due = ckpt0 + PG_CHECKPOINT_TIMEOUT;
        res->pg_due = ckpt0 > 0 && pg_due < t_leave ? pg_due : 0;
        res->pg_done = ckpt1 > ckpt0 ? ckpt1 : ckpt2 > ckpt0 ? ckpt2 : 0;
        /* A duty is judged when its lateness ends in standby. */
        res->runs_missed += res->redis_due && res->redis_due + DUTY_ALLOWED <= t_leave &&
                            !(res->redis_done && res->redis_done - res->redis_due <= DUTY_ALLOWED);
        res->runs_missed += res->pg_due && res->pg_due + DUTY_ALLOWED <= t_leave &&
                            !(res->pg_done && res->pg_done - res->pg_due <= DUTY_ALLOWED);

        /* The strategy's block. */
        printf("standby %.0f s: %.1f wakeups/s in the system, %.1f in the kernel's threads, %.2f ms CPU/s\n",
               t_leave - t_enter, res->wakeups, res->kernel_wakeups, res->cpu_ms);
        if (s->kind != STRATEGY_NONE)
                printf("enter %.0f ms, exit %.0f ms\n", res->enter_ms, res->exit_ms);
        printf("events: %u, answer p50 %.1f ms, p99 %.1f ms, %u answered only after exit, %u never\n", res->n_events,
               res->p50_ms, res->p99_ms, res->after_exit, res->unanswered);
        if (res->after_exit) {
                printf("answered only after exit:");
                for (int k = 0, first = 1; k < _EV_MAX; k++)
                        if (late_kind[k]) {
                                printf("%s %u %s", first ? "" : ",", late_kind[k], ev_names[k]);
                                first = 0;
                        }
                printf("\n");
        }
        for (int j = 0; j < _JOB_MAX; j++)
                printf("%-28s due %u, missed %u (allowed %.0f s late), late p50 %.2f s, max %.2f s\n", job_names[j],
                       res->job_due[j], res->job_missed[j], job_allowed[j], res->job_late_p50[j], res->job_late_max[j]);
        if (res->redis_due)
                printf("redis save due at +%.0f s: %s", redis_due - t_enter, res->redis_done ? "" : "not done\n");
        else
                printf("redis save: not due within the period%s", res->redis_done ? "; " : "\n");
        if (res->redis_done)
                printf("done at +%.0f s%s\n", res->redis_done - t_enter, res->redis_done >= t_leave ? " (after exit)" : "");
        if (res->pg_due)
                printf("postgres checkpoint due at +%.0f s: %s", pg_due - t_enter, res->pg_done ? "" : "not done\n");
        else
                printf("postgres checkpoint: not due within the period%s", res->pg_done ? "; " : "\n");
        if (res->pg_done)
                printf("done at +%.0f s%s\n", res->pg_done - t_enter, res->pg_done >= t_leave ? " (after exit)" : "");
        printf("after exit (%u s): due runs late at most %.2f s, %u missed; results %s\n", p->o->recovery_seconds,
               res->recovery_late_max, res->recovery_missed, ok ? "correct" : "WRONG");
        /* Its busiest units, so that each block stands on its own. */
        qsort(tr->units, tr->n_units, sizeof(UnitCount), cmp_units);
        printf("busiest units (wakeups/s, CPU ms/s):");
        for (size_t u = 0, shown = 0; u < tr->n_units && shown < 8; u++) {
                if (streq(tr->units[u].name, UNIT_TRACKER_KERNEL))
                        continue;
                printf("%s %s %.2f %.2f", shown++ ? "," : "", short_unit(tr->units[u].name),
                       unit_tracker_rate(tr, &tr->units[u]), unit_tracker_cpu_ms_per_s(tr, &tr->units[u]));
        }
        printf("\n");
        fflush(stdout);
        return 0;
}

/* A JSON number, or null for what none was measured of (NaN) or never came
 * (infinity). */
static void json_number(FILE *f, const char *key, double v) {
        if (isfinite(v))
                fprintf(f, "\"%s\":%.3f", key, v);
        else
                fprintf(f, "\"%s\":null", key);
}

/* One strategy's figures in period.json, each job's due, missed and
 * lateness among them. */
static void write_json_result(FILE *f, const char *sep, const char *name, const Result *r, double redis_late,
                              double pg_late) {
        fprintf(f, "%s{\"strategy\":", sep);
        json_print_string(f, name);
        fputc(',', f);
        json_number(f, "wakeups_per_s", r->wakeups);
        fputc(',', f);
        json_number(f, "cpu_ms_per_s", r->cpu_ms);
        fputc(',', f);
        json_number(f, "p50_ms", r->p50_ms);
        fputc(',', f);
        json_number(f, "p99_ms", r->p99_ms);
        fprintf(f, ",\"events\":%u,\"unanswered\":%u,\"after_exit\":%u,\"runs_missed\":%u,", r->n_events,
                r->unanswered, r->after_exit, r->runs_missed);
        json_number(f, "redis_save_late_s", redis_late);
        fputc(',', f);
        json_number(f, "pg_checkpoint_late_s", pg_late);
        fprintf(f, ",\"duty_allowed_s\":%.0f,\"correct\":%s,\"jobs\":[", DUTY_ALLOWED, r->correct ? "true" : "false");
        for (int j = 0; j < _JOB_MAX; j++) {
                fprintf(f, "%s{\"job\":\"%s\",\"period_s\":%.0f,\"allowed_s\":%.0f,\"due\":%u,\"missed\":%u,",
                        j ? "," : "", job_keys[j], job_period[j], job_allowed[j], r->job_due[j], r->job_missed[j]);
                json_number(f, "late_p50_s", r->job_late_p50[j]);
                fputc(',', f);
                json_number(f, "late_max_s", r->job_late_max[j]);
                fputc('}', f);
        }
        fputs("]}", f);
}

/* OUT/name, made anew, with header written; logged and NULL if it cannot be. */
static FILE *open_result(const char *out, const char *name, const char *header) {
        char path[4096];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", out, name);
        f = fopen(path, "we");
        if (!f) {
                log_error_errno(-errno, "Cannot write %s: %m", path);
                return NULL;
        }
        fputs(header, f);
        return f;
}

static int write_results(Period *p) {
        char path[4096];
        const char *out = p->o->output;

        (void) mkdir(out, 0755);
        _cleanup_fclose_ FILE *csv = open_result(
                out, "period.csv",
                "strategy,wakeups_per_s,kernel_wakeups_per_s,cpu_ms_per_s,events,p50_ms,p99_ms,after_exit,unanswered,"
                "runs_missed,lateness_median_s,recovery_late_max_s,recovery_missed,redis_save_late_s,"
                "pg_checkpoint_late_s,enter_ms,exit_ms,correct\n");
        _cleanup_fclose_ FILE *jobs =
                open_result(out, "period-jobs.csv", "strategy,job,period_s,allowed_s,due,missed,late_p50_s,late_max_s\n");
        _cleanup_fclose_ FILE *js = open_result(out, "period.json", "[");
        _cleanup_fclose_ FILE *units = open_result(out, "period-units.csv", "strategy,unit,wakeups_per_s,cpu_ms_per_s\n");
        _cleanup_fclose_ FILE *dat = open_result(out, "period.dat", "# strategy wakeups/s p99_ms lateness_median_s\n");
        if (!csv || !jobs || !js || !units || !dat)
                return -EIO;

        printf("\n%-12s %10s %8s %9s %9s %9s %10s %11s %10s %10s %10s\n", "strategy", "wakeups/s", "kernel",
               "CPU ms/s", "p50 ms", "p99 ms", "unanswered", "runs missed", "late p50 s", "redis late", "pg late");
        for (size_t si = 0; si < p->n_strategies; si++) {
                const Result *r = &p->results[si];
                double rl = r->redis_due ? (r->redis_done ? r->redis_done - r->redis_due : INFINITY) : NAN;
                double pl = r->pg_due ? (r->pg_done ? r->pg_done - r->pg_due : INFINITY) : NAN;
                printf("%-12s %10.1f %8.1f %9.2f %9.1f %9.1f %10u %11u %10.2f %10.1f %10.1f\n", p->strategies[si].name,
                       r->wakeups, r->kernel_wakeups, r->cpu_ms, r->p50_ms, r->p99_ms, r->unanswered, r->runs_missed,
                       r->lateness_median, rl, pl);
                fprintf(csv, "%s,%.3f,%.3f,%.3f,%u,%.3f,%.3f,%u,%u,%u,%.3f,%.3f,%u,%.1f,%.1f,%.1f,%.1f,%s\n",
                        p->strategies[si].name, r->wakeups, r->kernel_wakeups, r->cpu_ms, r->n_events, r->p50_ms, r->p99_ms,
                        r->after_exit, r->unanswered, r->runs_missed, r->lateness_median, r->recovery_late_max,
                        r->recovery_missed, rl, pl, r->enter_ms, r->exit_ms, r->correct ? "yes" : "no");
                write_json_result(js, si ? "," : "", p->strategies[si].name, r, rl, pl);
                for (int j = 0; j < _JOB_MAX; j++)
                        fprintf(jobs, "%s,%s,%.0f,%.0f,%u,%u,%.3f,%.3f\n", p->strategies[si].name, job_keys[j],
                                job_period[j], job_allowed[j], r->job_due[j], r->job_missed[j], r->job_late_p50[j],
                                r->job_late_max[j]);
                fprintf(dat, "\"%s\" %.3f %.3f %.3f\n", p->strategies[si].name, MAX(r->wakeups, 0.1), MAX(r->p99_ms, 0.01),
                        MAX(r->lateness_median, 0.001));
                UnitTracker *tr = &p->trackers[si];
                qsort(tr->units, tr->n_units, sizeof(UnitCount), cmp_units);
                for (size_t u = 0; u < tr->n_units; u++)
                        fprintf(units, "%s,%s,%.3f,%.3f\n", p->strategies[si].name, tr->units[u].name,
                                unit_tracker_rate(tr, &tr->units[u]), unit_tracker_cpu_ms_per_s(tr, &tr->units[u]));
        }
        fputs("]\n", js);
        printf("(unanswered: events never answered; runs missed: the periodic jobs' due runs and the daemons'\n"
               " duties that did not come by their due time plus their declared lateness (60 s; the chat keepalive\n"
               " 30 s); late p50: every periodic job's due runs, a missed run counted as its lateness; redis/pg late:\n"
               " the duty's result after it was due, inf: not done, nan: not due within the period)\n");

        /* Wakeups per unit, the busiest first (by the first strategy's order). */
        printf("\nWakeups/s per unit in standby (the 20 busiest without standby):\n%-34s", "unit");
        for (size_t si = 0; si < p->n_strategies; si++)
                printf(" %10s", p->strategies[si].name);
        printf("\n");
        const UnitTracker *first = &p->trackers[0];
        for (size_t u = 0, shown = 0; u < first->n_units && shown < 20; u++) {
                bool any = false;
                for (size_t si = 0; si < p->n_strategies; si++) {
                        const UnitCount *c = unit_tracker_find(&p->trackers[si], first->units[u].name);
                        any = any || (c && c->wakeups > 0);
                }
                if (!any)
                        continue; /* no task, or none that ever woke */
                shown++;
                printf("%-34.34s", short_unit(first->units[u].name));
                for (size_t si = 0; si < p->n_strategies; si++) {
                        const UnitCount *c = unit_tracker_find(&p->trackers[si], first->units[u].name);
                        printf(" %10.2f", c ? unit_tracker_rate(&p->trackers[si], c) : 0.0);
                }
                printf("\n");
        }
        fflush(dat);

        snprintf(path, sizeof(path), "%s/period.gp", out);
        _cleanup_fclose_ FILE *gp = fopen(path, "we");
        if (!gp)
                return -errno;
        fprintf(gp,
                "set terminal pngcairo size 1000,450\nset output '%s/period.png'\n"
                "set multiplot layout 1,2 title 'Standby period of %u s on a booted Debian system, one point per strategy'\n"
                "set logscale xy\nset xlabel 'wakeups/s of the system in standby'\nset grid\nunset key\n"
                "set offsets 0, 0, graph 0.12, graph 0.05\n" /* labels clear of the title and the axes */
                "set ylabel 'event to answer, p99 (ms)'\n"
                "plot '%s/period.dat' using 2:3 with points pt 7 ps 1.5, '' using 2:3:1 with labels offset 0,1 font ',9'\n"
                "set ylabel 'periodic jobs: lateness, median (s)'\n"
                "plot '%s/period.dat' using 2:4 with points pt 7 ps 1.5, '' using 2:4:1 with labels offset 0,1 font ',9'\n"
                "unset multiplot\n",
                out, p->o->seconds, out, out);
        fflush(gp);
        if (bench_gnuplot(path) >= 0)
                printf("\nPlot: %s/period.png\n", out);
        return 0;
}

static int boot(Period *p) {
        char out[8192];
        char *argv[] = { SYSTEM_SCRIPT, "start", (char *) p->o->work, NULL };
        if (spawn_wait(argv, out, sizeof(out)) != 0)
                return log_error_errno(-EIO, "%s start failed: %s", SYSTEM_SCRIPT, out);
        char cg[4096];
        int leader;
        if (sscanf(out, "%d %4095s", &leader, cg) != 2)
                return log_error_errno(-EIO, "%s said \"%s\"", SYSTEM_SCRIPT, out);
        p->leader = leader;
        snprintf(p->root, sizeof(p->root), "/proc/%d/root", leader);
        /* The cgroup2 mount and the system's directory below it. */
        char *slash = strstr(cg, "/standby-bench-system.slice/");
        if (!slash)
                return -EIO;
        /* The booted system's own tree: nspawn's supervisor, beside it in
         * the container's cgroup, is the bench's machinery, not the system. */
        snprintf(p->cgroup, sizeof(p->cgroup), "%s/payload", slash + 1);
        *slash = 0;
        p->cg_mount_fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char ns[64];
        snprintf(ns, sizeof(ns), "/proc/%d/ns/net", leader);
        p->netns_fd = open(ns, O_RDONLY | O_CLOEXEC);
        p->host_ns_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        if (p->cg_mount_fd < 0 || p->netns_fd < 0 || p->host_ns_fd < 0)
                return log_error_errno(-errno, "Cannot open the system's cgroup or namespace: %m");
        return 0;
}

static void shutdown_system(Period *p) {
        char *argv[] = { SYSTEM_SCRIPT, "stop", (char *) p->o->work, NULL };
        (void) spawn_wait(argv, NULL, 0);
}

static int setup(Period *p) {
        char bus[128], out[4096];
        int r;

        r = accept_client(p, CHAT_PORT, &p->chat);
        if (r >= 0)
                r = accept_client(p, MAIL_PORT, &p->mail);
        if (r < 0)
                return r;
        /* system.sh start returns once systemd says the boot is done, every
         * unit started (redis and postgresql tell systemd when they are
         * ready): the daemons answer now, or they are broken. */
        p->redis.fd = in_netns(p, REDIS_PORT, false);
        p->memcached.fd = in_netns(p, MEMCACHED_PORT, false);
        if (p->redis.fd < 0 || p->memcached.fd < 0)
                return log_error_errno(-ECONNREFUSED, "redis-server or memcached does not answer in the system");
        if (psql(p, "create table if not exists bench (t timestamptz)", NULL) < 0)
                return log_error_errno(-EIO, "postgresql does not answer in the system");
        long rows = 0;
        if (psql(p, "select count(*) from bench", &rows) < 0)
                return log_error_errno(-EIO, "postgresql does not answer in the system");
        p->pg_rows = (unsigned) rows;
        r = bus_connect(p);
        if (r < 0)
                return log_error_errno(r, "Cannot connect to the system's bus: %m");
        snprintf(bus, sizeof(bus), "--net=/proc/%d/ns/net", (int) p->leader);
        char *veth[] = { "nsenter", bus, "ip", "link", "add", "sbp0", "type", "veth", "peer", "name", "sbp1", NULL };
        char *up[] = { "nsenter", bus, "ip", "link", "set", "sbp1", "up", NULL };
        if (spawn_wait(veth, out, sizeof(out)) != 0 || spawn_wait(up, out, sizeof(out)) != 0 || link_set(p, true) < 0)
                return log_error_errno(-EIO, "Cannot make the link sbp0 in the system's namespace");
        return 0;
}

/* The seeded schedule: one event every 10 s on average, at uniform times. */
static int make_schedule(Period *p) {
        unsigned seed = p->o->seed;
        p->n_events = MAX(p->o->seconds / 10, 5u);
        p->events = calloc(p->n_events, sizeof(Event));
        if (!p->events)
                return -ENOMEM;
        double span = MAX((double) p->o->seconds - 2, 1);
        for (size_t i = 0; i < p->n_events; i++) {
                p->events[i].at = 1 + span * rand_r(&seed) / ((double) RAND_MAX + 1);
                p->events[i].kind = rand_r(&seed) % _EV_MAX;
        }
        for (size_t i = 1; i < p->n_events; i++)
                for (size_t j = i; j > 0 && p->events[j].at < p->events[j - 1].at; j--) {
                        Event t = p->events[j];
                        p->events[j] = p->events[j - 1];
                        p->events[j - 1] = t;
                }
        unsigned count[_EV_MAX] = {};
        for (size_t i = 0; i < p->n_events; i++)
                count[p->events[i].kind]++;
        printf("Schedule (seed %u): %zu events over %u s:", p->o->seed, p->n_events, p->o->seconds);
        for (int k = 0; k < _EV_MAX; k++)
                printf("%s %u %s", k ? "," : "", count[k], ev_names[k]);
        printf("\n");
        return 0;
}

int bench_period(const PeriodOptions *o) {
        Period p = { .o = o, .cg_mount_fd = -EBADF, .netns_fd = -EBADF, .host_ns_fd = -EBADF };
        Conn *conns[] = { &p.chat, &p.mail, &p.redis, &p.memcached };
        int r;

        for (size_t i = 0; i < ELEMENTSOF(conns); i++)
                conns[i]->fd = -EBADF;
        p.n_strategies = strv_length(o->strategies);
        p.strategies = calloc(MAX(p.n_strategies, 1), sizeof(Strategy));
        p.results = calloc(MAX(p.n_strategies, 1), sizeof(Result));
        p.trackers = calloc(MAX(p.n_strategies, 1), sizeof(UnitTracker));
        if (!p.strategies || !p.results || !p.trackers)
                return log_error_errno(-ENOMEM, "Out of memory");
        for (size_t i = 0; i < p.n_strategies; i++) {
                r = parse_strategy(o->strategies[i], &p.strategies[i]);
                if (r < 0)
                        goto finish;
        }
        r = make_schedule(&p);
        if (r < 0)
                goto finish;
        printf("Booting the system (%s)...\n", o->work);
        fflush(stdout);
        usec_t b0 = now_usec(CLOCK_MONOTONIC);
        r = boot(&p);
        if (r < 0)
                goto finish;
        r = setup(&p);
        if (r < 0)
                goto finish;
        printf("Booted and connected in %.1f s\n", (double) (now_usec(CLOCK_MONOTONIC) - b0) / USEC_PER_SEC);
        for (size_t i = 0; i < p.n_strategies; i++) {
                r = run_strategy(&p, i);
                if (r < 0)
                        goto finish;
        }
        r = write_results(&p);
        for (size_t i = 0; r >= 0 && i < p.n_strategies; i++)
                if (!p.results[i].correct)
                        r = log_error_errno(-EBADMSG, "%s: results after exit are wrong", p.strategies[i].name);
finish:
        if (p.leader > 0) {
                char out[256];
                (void) in_ct(&p, "systemctl stop standby.target standby-enter.service", out, sizeof(out));
        }
        shutdown_system(&p);
        for (size_t i = 0; i < ELEMENTSOF(conns); i++) {
                safe_close(conns[i]->fd);
                free(conns[i]->queue);
                free(conns[i]->keepalives);
        }
        for (size_t i = 0; i < p.n_strategies; i++)
                unit_tracker_done(&p.trackers[i]);
        sd_bus_flush_close_unref(p.bus);
        safe_close(p.cg_mount_fd);
        safe_close(p.netns_fd);
        safe_close(p.host_ns_fd);
        free(p.events);
        free(p.strategies);
        free(p.results);
        free(p.trackers);
        return r;
}
