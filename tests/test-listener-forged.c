/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Forged input: calls forged on a bus connection, a spoofed bus, a call
 * hidden in a message body, forged netlink messages, and a state directory
 * replaced under the listener. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../listener/dbus-wire.h"
#include "fileio.h"
#include "listener-harness.h"
#include "manager.h"
#include "pidfd.h"
#include "test-util.h"

/* A method call's header, forged: what anyone who can connect to a
 * service can write into its socket. The first 16 bytes are the fixed
 * header; then DESTINATION=org.example.Mail. Returns its size. */
static size_t forged_call(uint8_t *m) {
        static const char dest[] = "org.example.Mail";
        memset(m, 0, 64);
        m[0] = 'l', m[1] = 1, m[3] = 1;        /* little-endian method call, version 1 */
        m[8] = 1;                              /* serial 1 */
        m[12] = 4 + 4 + sizeof(dest);          /* the fields' length */
        m[16] = 6, m[17] = 1, m[18] = 's';     /* DESTINATION, signature "s" */
        m[20] = sizeof(dest) - 1;
        memcpy(m + 24, dest, sizeof(dest));
        return 48;
}

/* At enter, a frozen service's unread D-Bus calls wake it; bytes that look
 * like one, written by a client into a connection to the service's own
 * socket, are not a call the bus delivered and wake nothing. */
START_TEST(test_forged_call_at_enter) {
        int port = 30000 + (int) (getpid() % 5000), tick;
        char portarg[16];
        uint8_t m[64];

        if (!test_need_root_cgroup2())
                return;
        write_rule("80-call.rule", "[Match]\nEvent=dbus-call\nBusName=org.example.Mail\n[Action]\nThaw=mail.service\n");
        snprintf(portarg, sizeof(portarg), "%d", port);
        char *argv[] = { (char *) test_bin("standby-workload"), "echo-server", "--port", portarg, "--tick-fd", "3", NULL };
        pid_t server = test_spawn("mail.service", argv, &tick);
        ck_assert_int_eq(test_ticks(tick, 1, 5 * USEC_PER_SEC), 1); /* listening */
        int c = tcp_connect(port);
        ck_assert(echo(c, "hello\n")); /* accepted: the connection is the server's */
        start_listener();
        sd_bus *bus = client();

        ck_assert_int_eq(kill(server, SIGSTOP), 0);
        ck_assert(test_wait_for(is_stopped, &server, 5 * USEC_PER_SEC));
        size_t size = forged_call(m);
        ck_assert_int_eq(write(c, m, size), (ssize_t) size);
        ck_assert(test_wait_for(has_unread, &server, 5 * USEC_PER_SEC));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert_int_eq(kill(server, SIGCONT), 0); /* it stays frozen: the signal waits */

        /* The journal change is taken before this call is. */
        ck_assert_msg(statistic(bus, "replayed") == 0, "forged bytes in a client's connection woke the unit");
        ck_assert(test_frozen("mail.service"));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        close(c);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* A spoofed bus (hold_spoofed_bus()): the write end of the connection, in
 * the holder, and whether a forged call goes into it at once. */
typedef struct SpoofedBus {
        int ready; /* the holder writes the write end's fd number here */
        bool forge;
} SpoofedBus;

/* As uid 65534, in the mail.service cgroup: in a user and mount namespace of
 * its own (which any user may make), a tmpfs over the bus's directory and a
 * socket bound at the bus's path there; connected to it, and (with forge) a
 * forged call to org.example.Mail written into that connection, unread. The
 * connection names the bus's address as its peer, as a real one does. Then
 * it reports the write end's fd number and waits to be killed. */
static void hold_spoofed_bus(void *userdata) {
        const SpoofedBus *sb = userdata;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int l, c, s;
        uint8_t m[64];

        if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0 ||
            prctl(PR_SET_DUMPABLE, 1) < 0 || unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
                _exit(2);
        if (write_stringat(AT_FDCWD, "/proc/self/setgroups", "deny") < 0 ||
            write_stringat(AT_FDCWD, "/proc/self/uid_map", "0 65534 1") < 0 ||
            write_stringat(AT_FDCWD, "/proc/self/gid_map", "0 65534 1") < 0 || mount("none", harness_dir, "tmpfs", 0, NULL) < 0)
                _exit(3);
        if (strlen(bus_address) - strlen("unix:path=") >= sizeof(sa.sun_path))
                _exit(4);
        memcpy(sa.sun_path, bus_address + strlen("unix:path="), strlen(bus_address) - strlen("unix:path="));
        l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (l < 0 || c < 0 || bind(l, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(l, 1) < 0 ||
            connect(c, (struct sockaddr *) &sa, sizeof(sa)) < 0 || (s = accept4(l, NULL, NULL, SOCK_CLOEXEC)) < 0)
                _exit(4);
        size_t size = forged_call(m);
        if ((sb->forge && write(s, m, size) != (ssize_t) size) || write(sb->ready, &s, sizeof(s)) != sizeof(s))
                _exit(5);
        for (;;)
                pause();
}

/* Starts hold_spoofed_bus() in mail.service; returns the write end of its
 * connection, taken from it (pidfd_getfd), as any process of its user may. */
static int spawn_spoofed_bus(bool forge) {
        int ready[2], fd = -1;

        ck_assert_int_eq(pipe2(ready, O_CLOEXEC), 0);
        pid_t pid = test_fork("mail.service", hold_spoofed_bus, &(SpoofedBus) { .ready = ready[1], .forge = forge });
        close(ready[1]);
        struct pollfd p = { .fd = ready[0], .events = POLLIN };
        ck_assert_msg(poll(&p, 1, 5000) == 1 && read(ready[0], &fd, sizeof(fd)) == sizeof(fd),
                      "uid 65534 could not bind the bus's path in a namespace of its own");
        close(ready[0]);
        int pidfd = pidfd_of_pid(pid);
        ck_assert_int_ge(pidfd, 0);
        int w = pidfd_dup_fd(pidfd, fd);
        ck_assert_int_ge(w, 0);
        close(pidfd);
        return w;
}

/* A socket bound at the bus's path in another mount namespace is not the
 * bus: a forged call in a unit's connection to it wakes nothing at enter. */
START_TEST(test_spoofed_bus_at_enter) {
        if (!test_need_root_cgroup2())
                return;
        write_rule("80-call.rule", "[Match]\nEvent=dbus-call\nBusName=org.example.Mail\n[Action]\nThaw=mail.service\n");
        int w = spawn_spoofed_bus(true);
        start_listener();
        sd_bus *bus = client();

        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        /* The journal change is taken before this call is. */
        ck_assert_msg(statistic(bus, "replayed") == 0, "a connection to a spoofed bus woke the unit");
        ck_assert(test_frozen("mail.service"));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        close(w);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* A method call to org.example.Mail from sender with that serial, forged
 * (no path, member or body: the listener reads no more). Returns its size. */
static size_t forged_call_from(uint8_t *m, size_t size, const char *sender, uint32_t serial) {
        static const char dest[] = "org.example.Mail";
        const struct {
                uint8_t code;
                const char *value;
        } fields[] = { { 6, dest }, { 7, sender } };
        size_t off = 16, end = 16;

        memset(m, 0, size);
        m[0] = 'l', m[1] = 1, m[3] = 1; /* little-endian method call, version 1 */
        memcpy(m + 8, &serial, 4);      /* this host is little-endian, as the tests' buses */
        for (size_t i = 0; i < ELEMENTSOF(fields); i++) {
                uint32_t len = (uint32_t) strlen(fields[i].value);
                off = (off + 7) & ~(size_t) 7;
                ck_assert_uint_le(off + 8 + len + 1 + 7, size);
                m[off] = fields[i].code, m[off + 1] = 1, m[off + 2] = 's';
                memcpy(m + off + 4, &len, 4);
                memcpy(m + off + 8, fields[i].value, len + 1);
                end = off + 8 + len + 1;
                off = end;
        }
        uint32_t fields_len = (uint32_t) (end - 16);
        memcpy(m + 12, &fields_len, 4);
        return (end + 7) & ~(size_t) 7;
}

/* The same on a call: a call the bus refused, which a forged call in a
 * unit's connection to a spoofed bus names by sender and serial, wakes
 * nothing. The caller (uid 65534) tells its unique name before it calls;
 * the forged calls are written after enter, by another process of the
 * same user, and name the serials its next calls take. */
START_TEST(test_spoofed_bus_call) {
        int names[2], go[2], status;
        char name[256] = {}, k = 'k';

        if (!test_need_root_cgroup2())
                return;
        restart_dbus_with("<policy context=\"default\"><deny send_destination=\"org.example.Mail\" "
                          "send_interface=\"org.standby.Bench\" send_member=\"Secret\"/></policy>");
        write_rule("80-call.rule", "[Match]\nEvent=dbus-call\nBusName=org.example.Mail\n[Action]\nThaw=mail.service\n");
        spawn_mail_bus_service();
        int w = spawn_spoofed_bus(false);
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert(test_frozen("mail.service"));

        ck_assert_int_eq(pipe2(names, O_CLOEXEC), 0);
        ck_assert_int_eq(pipe2(go, O_CLOEXEC), 0);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                sd_bus_error error = SD_BUS_ERROR_NULL;
                sd_bus *b = NULL;
                const char *unique;
                if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                        _exit(2);
                if (sd_bus_new(&b) < 0 || sd_bus_set_address(b, bus_address) < 0 || sd_bus_set_bus_client(b, true) < 0 ||
                    sd_bus_start(b) < 0 || sd_bus_get_unique_name(b, &unique) < 0)
                        _exit(3);
                if (write(names[1], unique, strlen(unique)) < 0 || close(names[1]) < 0 || read(go[0], &k, 1) != 1)
                        _exit(4);
                (void) sd_bus_call_method(b, "org.example.Mail", "/org/standby/Bench", "org.standby.Bench", "Secret",
                                          &error, NULL, "");
                _exit(sd_bus_error_has_name(&error, SD_BUS_ERROR_ACCESS_DENIED) ? 0 : 5);
        }
        close(names[1]);
        close(go[0]);
        ck_assert_int_gt(read(names[0], name, sizeof(name) - 1), 0);
        close(names[0]);
        for (uint32_t serial = 1; serial <= 8; serial++) {
                uint8_t m[512];
                size_t size = forged_call_from(m, sizeof(m), name, serial);
                ck_assert_int_eq(write(w, m, size), (ssize_t) size);
        }
        ck_assert_int_eq(write(go[1], &k, 1), 1);
        close(go[1]);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the caller was not refused (0x%x)", (unsigned) status);

        ck_assert_msg(test_wait_for(saw_call_judged, bus, 5 * USEC_PER_SEC), "the listener never judged the call");
        ck_assert_msg(statistic(bus, "thaws") == 0, "a refused call named by a spoofed bus thawed the unit");
        ck_assert_uint_eq(statistic(bus, "undelivered"), 1);
        ck_assert(test_frozen("mail.service"));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        close(w);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* As uid 65534 in mail.service (a process of a Thaw= unit that a hostile
 * user runs, as in a user's own unit): a bus client subscribed to a signal
 * of its own, which sends itself that signal with forged calls to
 * org.example.Mail in its byte array, reads the header and the array's
 * length, and stops reading there: its unread bytes now start with the
 * forged calls, in a real connection to the bus. Writes one byte to
 * *(int *) userdata when it stopped, then waits to be killed. */
static void read_into_forged_body(void *userdata) {
        int ready = *(int *) userdata;
        sd_bus_message *m = NULL;
        sd_bus *bus = NULL;
        uint8_t body[2048], buf[4096];
        const char *unique;
        size_t off = 0;

        if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                _exit(2);
        if (sd_bus_new(&bus) < 0 || sd_bus_set_address(bus, bus_address) < 0 || sd_bus_set_bus_client(bus, true) < 0 ||
            sd_bus_start(bus) < 0 || sd_bus_get_unique_name(bus, &unique) < 0 ||
            sd_bus_add_match(bus, NULL, "type='signal',interface='org.example.Spam'", NULL, NULL) < 0)
                _exit(3);
        while (off + 512 <= sizeof(body))
                off += forged_call_from(body + off, 512, unique, 1);
        if (sd_bus_message_new_signal(bus, &m, "/org/example/Spam", "org.example.Spam", "Blob") < 0 ||
            sd_bus_message_append_array(m, 'y', body, off) < 0 || sd_bus_send(bus, m, NULL) < 0 || sd_bus_flush(bus) < 0)
                _exit(4);
        int fd = sd_bus_get_fd(bus);
        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                DBusHeader h;
                ssize_t n;
                if (poll(&p, 1, -1) != 1 || (n = recv(fd, buf, sizeof(buf), MSG_PEEK)) <= 0 ||
                    dbus_wire_header(buf, (size_t) n, &h) < 0)
                        _exit(5);
                if (n < (ssize_t) DBUS_FIXED_HEADER || (h.total_size <= 1024 && (uint64_t) n < h.total_size))
                        continue; /* more is on its way */
                if (h.total_size <= 1024) { /* the AddMatch reply, say */
                        if (recv(fd, buf, h.total_size, 0) != (ssize_t) h.total_size)
                                _exit(6);
                        continue;
                }
                size_t part = h.header_size + 4;
                if ((size_t) n < part || recv(fd, buf, part, 0) != (ssize_t) part || write(ready, "k", 1) != 1)
                        _exit(7);
                for (;;)
                        pause();
        }
}

/* Bytes inside a message the bus delivered are no call it delivered, even
 * where a reader stopped part-way: a forged call there, in a real bus
 * connection of a process of the Thaw= unit, wakes nothing at enter. */
START_TEST(test_call_forged_in_a_delivered_body) {
        int ready[2];
        char k;

        if (!test_need_root_cgroup2())
                return;
        write_rule("80-call.rule", "[Match]\nEvent=dbus-call\nBusName=org.example.Mail\n[Action]\nThaw=mail.service\n");
        spawn_mail_bus_service();
        ck_assert_int_eq(pipe2(ready, O_CLOEXEC), 0);
        (void) test_fork("mail.service", read_into_forged_body, &ready[1]);
        close(ready[1]);
        struct pollfd p = { .fd = ready[0], .events = POLLIN };
        ck_assert_msg(poll(&p, 1, 5000) == 1 && read(ready[0], &k, 1) == 1, "the reader did not stop in the body");
        close(ready[0]);
        start_listener();
        sd_bus *bus = client();

        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        /* The journal change is taken before this call is. */
        ck_assert_msg(statistic(bus, "replayed") == 0, "a call forged in a signal's body woke the unit");
        ck_assert(test_frozen("mail.service"));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* The port of the listener's netlink socket of protocol proto (from its
 * network namespace's /proc/net/netlink and its fds), or 0. */
static uint32_t listener_netlink_port(int proto) {
        char path[128], line[512];
        uint32_t port = 0;

        snprintf(path, sizeof(path), "/proc/%d/net/netlink", (int) listener_pid);
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        ck_assert_ptr_nonnull(f);
        while (!port && fgets(line, sizeof(line), f)) {
                unsigned long long sk, inode;
                unsigned eth, pid, groups;
                char fd_path[128], target[64], want[64];
                if (sscanf(line, "%llx %u %u %x %*d %*d %*d %*d %*d %llu", &sk, &eth, &pid, &groups, &inode) != 5 ||
                    (int) eth != proto || pid == 0)
                        continue;
                snprintf(want, sizeof(want), "socket:[%llu]", inode);
                for (int fd = 0; fd < 64 && !port; fd++) {
                        snprintf(fd_path, sizeof(fd_path), "/proc/%d/fd/%d", (int) listener_pid, fd);
                        ssize_t n = readlink(fd_path, target, sizeof(target) - 1);
                        if (n > 0 && (target[n] = 0, streq(target, want)))
                                port = pid;
                }
        }
        return port;
}

/* As uid 65534 in the test's network namespace, with CAP_NET_ADMIN kept (as
 * a network daemon under a user of its own has it; without it the kernel
 * refuses to send to another process's port), sends msg to a netlink port
 * of protocol proto; returns 0 when the kernel took it. */
static int send_as_nobody(int proto, uint32_t port, const void *msg, size_t size) {
        char p[128];
        pid_t pid = fork();

        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                snprintf(p, sizeof(p), "/run/netns/%s", listener_netns);
                int ns = open(p, O_RDONLY | O_CLOEXEC);
                struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
                struct __user_cap_data_struct caps[2] = {
                        { .effective = 1u << CAP_NET_ADMIN, .permitted = 1u << CAP_NET_ADMIN },
                };
                if (ns < 0 || setns(ns, CLONE_NEWNET) < 0 || setgroups(0, NULL) < 0 ||
                    prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0 || setresgid(65534, 65534, 65534) < 0 ||
                    setresuid(65534, 65534, 65534) < 0 || syscall(SYS_capset, &hdr, caps) < 0)
                        _exit(2);
                int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, proto);
                struct sockaddr_nl to = { .nl_family = AF_NETLINK, .nl_pid = port };
                _exit(fd >= 0 && sendto(fd, msg, size, 0, (struct sockaddr *) &to, sizeof(to)) == (ssize_t) size ? 0 : 1);
        }
        int status;
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

typedef struct ForgedWait {
        sd_bus *bus;
        uint64_t want;
} ForgedWait;

static bool forged_reached(void *userdata) {
        ForgedWait *w = userdata;
        uint64_t n = statistic(w->bus, "forged");
        return n != UINT64_MAX && n >= w->want;
}

/* A local process sends the listener's rtnetlink and uevent sockets what
 * the kernel would: "sb0 up", a device added. Only the kernel's word
 * counts: both are dropped and counted, nothing is thawed. */
START_TEST(test_netlink_forged_dropped) {
        struct {
                struct nlmsghdr h;
                struct ifinfomsg i;
                struct rtattr a;
                char name[8];
        } link = {
                .h = { .nlmsg_len = sizeof(link), .nlmsg_type = RTM_NEWLINK },
                .i = { .ifi_family = AF_UNSPEC, .ifi_index = 4242, .ifi_flags = 1 /* IFF_UP */ },
                .a = { .rta_len = RTA_LENGTH(4), .rta_type = IFLA_IFNAME },
                .name = "sb0",
        };
        static const char uevent[] = "add@/devices/standby-test\0ACTION=add\0SUBSYSTEM=standbytest\0SEQNUM=1";

        if (!test_need_root_cgroup2())
                return;
        write_rule("50-up.rule", "[Match]\nEvent=link\nInterface=sb0\nChange=up\n[Action]\nThaw=net.service\n");
        write_rule("51-dev.rule", "[Match]\nEvent=uevent\nSubsystem=standbytest\n[Action]\nThaw=net.service\n");
        test_spawn_workload("net.service", "idle", 100, 1, NULL);
        make_netns();
        start_listener();
        sd_bus *bus = client();
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);

        uint32_t route = listener_netlink_port(NETLINK_ROUTE), dev = listener_netlink_port(NETLINK_KOBJECT_UEVENT);
        ck_assert_uint_ne(route, 0);
        ck_assert_uint_ne(dev, 0);
        ck_assert_int_eq(send_as_nobody(NETLINK_ROUTE, route, &link, sizeof(link)), 0);
        ck_assert_int_eq(send_as_nobody(NETLINK_KOBJECT_UEVENT, dev, uevent, sizeof(uevent)), 0);

        ForgedWait w = { bus, 2 };
        ck_assert_msg(test_wait_for(forged_reached, &w, 5 * USEC_PER_SEC), "the forged messages were not dropped");
        ck_assert_uint_eq(statistic(bus, "matched"), 0);
        ck_assert(test_frozen("net.service"));
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* Removes a state directory the way test_env_teardown() does. */
static void remove_state_dir(const char *d) {
        static const char * const files[] = { JOURNAL_FILE, "state.tmp", "lock" };
        char p[512];
        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                snprintf(p, sizeof(p), "%s/%s", d, files[i]);
                (void) unlink(p);
        }
        (void) rmdir(d);
}

/* Writes value to /proc/sys/user/NAME of the listener's user namespace
 * (listener_userns): a limit that binds the listener alone. */
static void set_listener_userns_limit(const char *name, const char *value) {
        char p[128];
        int status;

        snprintf(p, sizeof(p), "/proc/%d/ns/user", (int) listener_pid);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                int fd = open(p, O_RDONLY | O_CLOEXEC);
                snprintf(p, sizeof(p), "/proc/sys/user/%s", name);
                _exit(fd >= 0 && setns(fd, CLONE_NEWUSER) >= 0 && write_stringat(AT_FDCWD, p, value) >= 0 ? 0 : 1);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "cannot set %s of the listener's user namespace",
                      name);
}

/* The state directory replaced while the listener cannot watch the new one
 * (no inotify watch left to it): it answers events meanwhile, tries again
 * every 100 ms (a timer of its own, which libsystemd 252 once aborted on),
 * and once it can, watches the new directory and carries out what came
 * while it could not see standby begin. */
START_TEST(test_state_dir_rewatch_retried) {
        char old[512];
        int acted;

        if (!test_need_root_cgroup2())
                return;
        test_spawn_workload("mail.service", "idle", 100, 1, NULL);
        listener_userns = true;
        start_listener();
        sd_bus *bus = client();
        snprintf(old, sizeof(old), "%s.old", T.state_dir);

        set_listener_userns_limit("max_inotify_watches", "0");
        ck_assert_int_eq(rename(T.state_dir, old), 0);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        /* The parent's watch told of the new directory before this call
         * came; watching it failed, so standby is not seen to be active:
         * the push is remembered for when it is. */
        ck_assert_ptr_null(push(bus, "mail.service", &acted));
        ck_assert_msg(test_frozen("mail.service"), "the listener watched the new directory beyond its limit");

        /* Only the retry's timer can find the new directory now. */
        set_listener_userns_limit("max_inotify_watches", "8192");
        ck_assert_msg(wait_frozen("mail.service", false),
                      "the listener did not find the new directory again, or did not carry out the push");
        ck_assert_ptr_null(push(bus, "mail.service", &acted)); /* and it still answers */
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        remove_state_dir(old);
        sd_bus_flush_close_unref(bus);
}
END_TEST

/* The state directory replaced under a running listener, renamed away or
 * removed: it finds the new one, and sees the next enter there. */
START_TEST(test_state_dir_replaced) {
        char old[512];
        int acted;

        if (!test_need_root_cgroup2())
                return;
        test_spawn_workload("mail.service", "idle", 100, 1, NULL);
        start_listener();
        sd_bus *bus = client();
        snprintf(old, sizeof(old), "%s.old", T.state_dir);

        /* Renamed: the watch would follow the old directory. enter makes
         * a new one. */
        ck_assert_int_eq(rename(T.state_dir, old), 0);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert_ptr_null(push(bus, "mail.service", &acted));
        ck_assert_msg(!test_frozen("mail.service"), "the listener did not see standby begin in the new directory");
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);

        /* Removed, and made again by the next enter. */
        remove_state_dir(T.state_dir);
        ck_assert_int_eq(test_manager(NULL, "--quiet", "enter", NULL), EXIT_OK);
        ck_assert(test_frozen("mail.service"));
        ck_assert_ptr_null(push(bus, "mail.service", &acted));
        ck_assert_msg(!test_frozen("mail.service"), "the listener did not see standby begin in the remade directory");
        ck_assert_int_eq(test_manager(NULL, "--quiet", "exit", NULL), EXIT_OK);
        remove_state_dir(old);
        sd_bus_flush_close_unref(bus);
}
END_TEST

void listener_forged_tests(const ListenerCases *c) {
        tcase_add_test(c->trust, test_forged_call_at_enter);
        tcase_add_test(c->trust, test_spoofed_bus_at_enter);
        tcase_add_test(c->trust, test_spoofed_bus_call);
        tcase_add_test(c->trust, test_call_forged_in_a_delivered_body);
        tcase_add_test(c->trust, test_state_dir_replaced);
        tcase_add_test(c->trust, test_state_dir_rewatch_retried);
        tcase_add_test(c->trust, test_netlink_forged_dropped);
}
