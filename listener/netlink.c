/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Network events from rtnetlink: links going up or down or changing carrier,
 * addresses added or removed. libnl-3's socket and attribute parsing read
 * the messages; libnl-route-3's object caches are not used (linked, they
 * would be the largest part of the resident listener's pages). The kernel sends what changed;
 * we keep each link's state and each address to tell a change from a repeat.
 * A receive-buffer overrun (ENOBUFS) means events were lost: the state is
 * dumped afresh and compared, so that no change goes unnoticed.
 *
 * Only the multicast groups the rules need are joined: with no Event=link
 * rule a link change (a DHCP client, a Wi-Fi roam) never wakes the listener,
 * and with no link or address rule there is no socket at all. */
#include <arpa/inet.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "listener.h"
#include "log.h"
#include "strv.h"

/* libnl's -NLE_* codes, turned into -errno in this one place. */
static int nl_errno(int nle) {
        switch (-nle) {
        case 0:
                return 0;
        case NLE_AGAIN:
                return -EAGAIN;
        case NLE_NOMEM:
                return -ENOBUFS; /* what recvmsg() said: the socket overran */
        case NLE_PERM:
                return -EPERM;
        case NLE_NOACCESS:
                return -EACCES;
        case NLE_BAD_SOCK:
                return -EBADF;
        default:
                return -EIO;
        }
}

/* Event=link's and Event=address's [Match]. */
typedef struct NetlinkMatch {
        char *interface;     /* Interface=; NULL: any */
        int family;          /* Family= (address): AF_INET, AF_INET6, or 0 for any */
        char *change;        /* Change=; NULL: any */
} NetlinkMatch;

static const EventKind event_kind_link, event_kind_address;

typedef struct LinkState {
        int ifindex;
        char name[IFNAMSIZ];
        bool up, carrier, seen;
} LinkState;

/* The groups joined, as a mask of these. */
enum {
        GROUP_LINK = 1 << 0,
        GROUP_IPV4 = 1 << 1,
        GROUP_IPV6 = 1 << 2,
        GROUP_ADDRESS = GROUP_IPV4 | GROUP_IPV6,
};

/* The source's state: the socket, open while a rule needs a group. */
typedef struct NetlinkWatch {
        struct nl_sock *sock;      /* NULL: no rule needs rtnetlink */
        sd_event_source *source;
        unsigned groups;           /* GROUP_*: what the rules need, and what is joined */
        LinkState *links;
        size_t n_links;
        char **addresses;          /* "ifindex family address" */
        char **seen_addresses;     /* during a resync */
        bool resyncing;
        unsigned quiet;            /* GROUP_*: dumped for state, not events (just joined) */
} NetlinkWatch;

extern const ListenerSource listener_source_netlink;

static NetlinkWatch *watch_of(Listener *l) {
        return listener_source_state(l, &listener_source_netlink);
}

static unsigned family_group(int family) {
        return family == AF_INET ? GROUP_IPV4 : family == AF_INET6 ? GROUP_IPV6 : 0;
}

static LinkState *link_find(NetlinkWatch *w, int ifindex) {
        for (size_t i = 0; i < w->n_links; i++)
                if (w->links[i].ifindex == ifindex)
                        return &w->links[i];
        return NULL;
}

static void emit(Listener *l, const EventKind *kind, const char *ifname, int family, const char *change) {
        if (watch_of(l)->quiet & (kind == &event_kind_link ? GROUP_LINK : family_group(family)))
                return;
        log_debug("Network: %s %s %s", kind->name, ifname, change);
        (void) listener_dispatch(l,
                                 &(Event) { .kind = kind, .interface = ifname, .family = family, .change = change },
                                 now_usec(CLOCK_MONOTONIC));
}

static void handle_link(Listener *l, struct nlmsghdr *hdr) {
        NetlinkWatch *w = watch_of(l);
        struct nlattr *tb[IFLA_MAX + 1];
        struct ifinfomsg *ifi = nlmsg_data(hdr);
        bool deleted = hdr->nlmsg_type == RTM_DELLINK;

        if (nlmsg_parse(hdr, sizeof(*ifi), tb, IFLA_MAX, NULL) < 0)
                return;
        int ifindex = ifi->ifi_index;
        const char *name = tb[IFLA_IFNAME] ? nla_get_string(tb[IFLA_IFNAME]) : NULL;
        bool up = !deleted && (ifi->ifi_flags & IFF_UP);
        bool carrier = !deleted && tb[IFLA_CARRIER] && nla_get_u8(tb[IFLA_CARRIER]);
        LinkState *s = link_find(w, ifindex);

        if (!s) {
                LinkState *n = realloc(w->links, (w->n_links + 1) * sizeof(LinkState));
                if (!n)
                        return;
                w->links = n;
                s = &w->links[w->n_links++];
                *s = (LinkState) { .ifindex = ifindex };
        }
        if (name)
                snprintf(s->name, sizeof(s->name), "%.*s", (int) strnlen(name, nla_len(tb[IFLA_IFNAME])), name);
        s->seen = true;
        if (s->up != up)
                emit(l, &event_kind_link, s->name, 0, up ? "up" : "down");
        if (s->carrier != carrier)
                emit(l, &event_kind_link, s->name, 0, "carrier");
        s->up = up;
        s->carrier = carrier;
}

static void handle_addr(Listener *l, struct nlmsghdr *hdr) {
        NetlinkWatch *w = watch_of(l);
        struct nlattr *tb[IFA_MAX + 1];
        struct ifaddrmsg *ifa = nlmsg_data(hdr);
        bool deleted = hdr->nlmsg_type == RTM_DELADDR;
        char buf[INET6_ADDRSTRLEN], key[128], ifname[IF_NAMESIZE];

        if (nlmsg_parse(hdr, sizeof(*ifa), tb, IFA_MAX, NULL) < 0)
                return;
        int ifindex = (int) ifa->ifa_index, family = ifa->ifa_family;
        LinkState *s = w->groups & GROUP_LINK ? link_find(w, ifindex) : NULL;
        /* The local address: IFA_LOCAL where there is a peer, else IFA_ADDRESS. */
        struct nlattr *a = tb[IFA_LOCAL] ?: tb[IFA_ADDRESS];
        size_t want = family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;

        if (!a || !want || nla_len(a) != (int) want || !(w->groups & family_group(family)))
                return;
        if (!inet_ntop(family, nla_data(a), buf, sizeof(buf)))
                return;
        snprintf(key, sizeof(key), "%d %d %s/%u", ifindex, family, buf, ifa->ifa_prefixlen);
        if (w->resyncing)
                (void) strv_extend(&w->seen_addresses, key);

        bool known = strv_contains(w->addresses, key);
        if (deleted == !known)
                return; /* a repeat */
        if (deleted) {
                for (char **k = w->addresses; *k; k++)
                        if (streq(*k, key)) {
                                free(*k);
                                memmove(k, k + 1, sizeof(char *) * strv_length(k + 1) + sizeof(char *));
                                break;
                        }
        } else
                (void) strv_extend(&w->addresses, key);
        emit(l, &event_kind_address, s ? s->name : if_indextoname((unsigned) ifindex, ifname) ?: "?", family,
             deleted ? "removed" : "added");
}

static int on_valid(struct nl_msg *msg, void *userdata) {
        Listener *l = userdata;
        struct nlmsghdr *hdr = nlmsg_hdr(msg);
        struct sockaddr_nl *src = nlmsg_get_src(msg);
        uint16_t type = hdr->nlmsg_type;

        /* Any local process may send to the socket's port: only the
         * kernel's word (port 0) is an event. */
        if (!src || src->nl_pid != 0) {
                l->stats.forged++;
                return NL_SKIP;
        }
        /* A message of a group just left may still be queued: ignored. */
        if ((type == RTM_NEWLINK || type == RTM_DELLINK) && watch_of(l)->groups & GROUP_LINK)
                handle_link(l, hdr);
        else if (type == RTM_NEWADDR || type == RTM_DELADDR)
                handle_addr(l, hdr);
        return NL_OK;
}

/* Asks the kernel for every link or address (a dump) on sock, and reads
 * the answer through on_valid(). The kernel answers at once: no peer to
 * wait for. */
static int dump(Listener *l, struct nl_sock *sock, int type) {
        struct rtgenmsg gen = { .rtgen_family = AF_UNSPEC };
        int r = nl_send_simple(sock, type, NLM_F_DUMP, &gen, sizeof(gen)); /* bytes sent, or -NLE_* */
        if (r < 0)
                return nl_errno(r);
        return nl_errno(nl_recvmsgs_default(sock));
}

/* Dumps the links and addresses of the joined groups and folds them in as
 * events: after an overrun (only what changed), and, quiet (the groups in
 * quiet give state, not events), for groups just joined. */
static int resync(Listener *l, unsigned quiet) {
        NetlinkWatch *w = watch_of(l);
        struct nl_sock *sock = nl_socket_alloc();
        int r;

        if (!sock)
                return -ENOMEM;
        nl_socket_modify_cb(sock, NL_CB_VALID, NL_CB_CUSTOM, on_valid, l);
        r = nl_errno(nl_connect(sock, NETLINK_ROUTE));
        if (r < 0)
                goto finish;

        w->quiet = quiet;
        if (w->groups & GROUP_LINK) {
                for (size_t i = 0; i < w->n_links; i++)
                        w->links[i].seen = false;
                r = dump(l, sock, RTM_GETLINK);
                if (r < 0)
                        goto finish;
                /* Links that vanished while we were not listening went down. */
                for (size_t i = 0; i < w->n_links; i++)
                        if (!w->links[i].seen && w->links[i].up) {
                                emit(l, &event_kind_link, w->links[i].name, 0, "down");
                                w->links[i].up = w->links[i].carrier = false;
                        }
        }
        if (!(w->groups & GROUP_ADDRESS))
                goto finish;

        w->resyncing = true;
        strv_free(w->seen_addresses);
        w->seen_addresses = NULL;
        r = dump(l, sock, RTM_GETADDR);
        w->resyncing = false;
        if (r < 0)
                goto finish;
        /* Addresses that are gone were removed. */
        for (size_t i = 0; w->addresses && w->addresses[i];) {
                int ifindex = 0, family = 0;
                char ifname[IF_NAMESIZE];
                (void) sscanf(w->addresses[i], "%d %d", &ifindex, &family);
                if (strv_contains(w->seen_addresses, w->addresses[i])) {
                        i++;
                        continue;
                }
                LinkState *s = w->groups & GROUP_LINK ? link_find(w, ifindex) : NULL;
                char *gone = w->addresses[i];
                memmove(&w->addresses[i], &w->addresses[i + 1], sizeof(char *) * (strv_length(&w->addresses[i + 1]) + 1));
                /* Of a family whose group was left: forgotten, no event. */
                if (w->groups & family_group(family))
                        emit(l, &event_kind_address, s ? s->name : if_indextoname((unsigned) ifindex, ifname) ?: "?",
                             family, "removed");
                free(gone);
        }
finish:
        w->quiet = 0;
        nl_socket_free(sock);
        return r;
}

static int on_readable(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Listener *l = userdata;

        /* Drain until it would block; an overrun means a resync. */
        for (;;) {
                int r = nl_errno(nl_recvmsgs_default(watch_of(l)->sock));
                if (r == -EAGAIN)
                        return 0;
                if (r == -ENOBUFS) {
                        log_warning("Netlink receive buffer overran: events were lost, reading the state afresh.");
                        l->stats.resyncs++;
                        r = resync(l, 0);
                        if (r < 0)
                                log_error_errno(r, "Netlink resync failed: %m");
                        continue;
                }
                if (r < 0)
                        return log_error_errno(r, "Netlink receive failed: %m");
        }
}

/* The groups the rules need: links for Event=link, the address families of
 * Event=address (both without Family=). */
static unsigned groups_wanted(const RuleSet *rules) {
        unsigned g = 0;

        for (size_t i = 0; rules && i < rules->n_rules; i++) {
                const Rule *r = &rules->rules[i];
                if (r->event == &event_kind_link)
                        g |= GROUP_LINK;
                else if (r->event == &event_kind_address)
                        g |= family_group(((const NetlinkMatch *) r->match)->family) ?: GROUP_ADDRESS;
        }
        return g;
}

static int change_memberships(struct nl_sock *sock, unsigned groups, bool add) {
        static const struct {
                unsigned group;
                int rtnlgrp;
        } map[] = { { GROUP_LINK, RTNLGRP_LINK }, { GROUP_IPV4, RTNLGRP_IPV4_IFADDR }, { GROUP_IPV6, RTNLGRP_IPV6_IFADDR } };

        for (size_t i = 0; i < ELEMENTSOF(map); i++) {
                if (!(groups & map[i].group))
                        continue;
                int r = nl_errno(add ? nl_socket_add_membership(sock, map[i].rtnlgrp)
                                     : nl_socket_drop_membership(sock, map[i].rtnlgrp));
                if (r < 0)
                        return r;
        }
        return 0;
}

static void free_netlink(Listener *l) {
        NetlinkWatch *w = watch_of(l);

        if (!w)
                return;
        sd_event_source_disable_unref(w->source);
        nl_socket_free(w->sock);
        free(w->links);
        strv_free(w->addresses);
        strv_free(w->seen_addresses);
        *w = (NetlinkWatch) {};
}

static int open_socket(Listener *l) {
        NetlinkWatch *w = watch_of(l);
        const char *rcvbuf = getenv("STANDBY_LISTENER_NETLINK_RCVBUF");
        int r;

        w->sock = nl_socket_alloc();
        if (!w->sock)
                return -ENOMEM;
        nl_socket_disable_seq_check(w->sock);
        nl_socket_modify_cb(w->sock, NL_CB_VALID, NL_CB_CUSTOM, on_valid, l);
        r = nl_errno(nl_connect(w->sock, NETLINK_ROUTE));
        if (r >= 0)
                r = nl_errno(nl_socket_set_nonblocking(w->sock));
        /* For the overrun test only: a receive buffer small enough to overrun. */
        if (r >= 0 && rcvbuf)
                r = nl_errno(nl_socket_set_buffer_size(w->sock, atoi(rcvbuf), 0));
        if (r < 0)
                return log_error_errno(r, "Failed to open the rtnetlink socket: %m");
        r = sd_event_add_io(l->event, &w->source, nl_socket_get_fd(w->sock), EPOLLIN, on_readable, l);
        if (r < 0)
                return log_error_errno(r, "Failed to watch the rtnetlink socket: %m");
        return 0;
}

static int setup_netlink(Listener *l) {
        unsigned want = groups_wanted(l->rules), added, dropped;
        int r;

        if (!want) {
                free_netlink(l);
                return 0;
        }
        if (!watch_of(l)->sock) {
                r = open_socket(l);
                if (r < 0) {
                        free_netlink(l);
                        return r;
                }
        }
        NetlinkWatch *w = watch_of(l);
        added = want & ~w->groups;
        dropped = w->groups & ~want;
        r = change_memberships(w->sock, dropped, false);
        if (r >= 0)
                r = change_memberships(w->sock, added, true);
        if (r < 0)
                return log_error_errno(r, "Failed to join the rtnetlink groups: %m");
        w->groups = want;
        if (!added)
                return 0;
        /* Joined first, then dumped: nothing falls between the two. What was
         * kept in the meantime of a group just joined is stale: its dump is
         * state, not events. */
        r = resync(l, added);
        if (r < 0)
                return log_error_errno(r, "Failed to read the network state: %m");
        return 0;
}


static void netlink_match_done(void *match) {
        NetlinkMatch *m = match;
        free(m->interface);
        free(m->change);
}

/* Interface=: a network interface name as the kernel takes it (dev_valid_name()). */
static int parse_interface(Rule *rule, const char *value, char **ret_why) {
        size_t n = strlen(value);
        if (n == 0 || n >= 16 || streq(value, ".") || streq(value, "..") || strpbrk(value, "/: \t"))
                return rule_key_fail(ret_why, "Interface=%s: expected a network interface name (at most 15 bytes, "
                                     "no '/', ':' or space, not \".\" or \"..\")", value);
        return rule_key_string(&((NetlinkMatch *) rule->match)->interface, value);
}

static int parse_family(Rule *rule, const char *value, char **ret_why) {
        NetlinkMatch *m = rule->match;
        if (streq(value, "ipv4"))
                m->family = AF_INET;
        else if (streq(value, "ipv6"))
                m->family = AF_INET6;
        else
                return rule_key_fail(ret_why, "Family=%s: expected \"ipv4\" or \"ipv6\"", value);
        return 0;
}

static int parse_link_change(Rule *rule, const char *value, char **ret_why) {
        return rule_key_one_of(&((NetlinkMatch *) rule->match)->change, "Change", rule->event, "up down carrier",
                               value, ret_why);
}

static int parse_address_change(Rule *rule, const char *value, char **ret_why) {
        return rule_key_one_of(&((NetlinkMatch *) rule->match)->change, "Change", rule->event, "added removed",
                               value, ret_why);
}

static char *describe_netlink(const Rule *rule) {
        const NetlinkMatch *m = rule->match;
        char *s;
        if (asprintf(&s, "on %s %s%s%s%s", rule->event->name, m->change ?: "any change", m->interface ? " of " : "",
                     m->interface ?: "", m->family ? (m->family == AF_INET ? " (ipv4)" : " (ipv6)") : "") < 0)
                return NULL;
        return s;
}

static bool match_netlink(const Rule *rule, const Event *ev) {
        const NetlinkMatch *m = rule->match;
        return listener_str_matches(m->interface, ev->interface) && listener_str_matches(m->change, ev->change) &&
               (!m->family || m->family == ev->family);
}

static const EventKind event_kind_link = {
        .name = "link",
        .match_size = sizeof(NetlinkMatch),
        .done = netlink_match_done,
        .keys = (const RuleKey[]) { { "Interface", parse_interface }, { "Change", parse_link_change }, {} },
        .describe = describe_netlink,
        .matches = match_netlink,
};

static const EventKind event_kind_address = {
        .name = "address",
        .match_size = sizeof(NetlinkMatch),
        .done = netlink_match_done,
        .keys = (const RuleKey[]) {
                { "Interface", parse_interface }, { "Family", parse_family }, { "Change", parse_address_change }, {},
        },
        .describe = describe_netlink,
        .matches = match_netlink,
};

const ListenerSource listener_source_netlink = {
        .name = "netlink",
        .state_size = sizeof(NetlinkWatch),
        .kinds = (const EventKind * const[]) { &event_kind_link, &event_kind_address, NULL },
        .start = setup_netlink,
        .reload = setup_netlink,
        .stop = free_netlink,
};
