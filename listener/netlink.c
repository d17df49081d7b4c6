/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Network events from rtnetlink (libnl-route-3): links going up or down or
 * changing carrier, addresses added or removed. The kernel sends what changed;
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
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
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

struct NetlinkWatch {
        struct nl_sock *sock;
        sd_event_source *source;
        unsigned groups;           /* GROUP_*: what the rules need, and what is joined */
        LinkState *links;
        size_t n_links;
        char **addresses;          /* "ifindex family address" */
        char **seen_addresses;     /* during a resync */
        int msg_type;              /* of the message being parsed */
        bool resyncing;
        unsigned quiet;            /* GROUP_*: dumped for state, not events (just joined) */
};

static unsigned family_group(int family) {
        return family == AF_INET ? GROUP_IPV4 : family == AF_INET6 ? GROUP_IPV6 : 0;
}

static LinkState *link_find(NetlinkWatch *w, int ifindex) {
        for (size_t i = 0; i < w->n_links; i++)
                if (w->links[i].ifindex == ifindex)
                        return &w->links[i];
        return NULL;
}

static void emit(Listener *l, EventKind kind, const char *ifname, int family, const char *change) {
        if (l->netlink->quiet & (kind == EVENT_LINK ? GROUP_LINK : family_group(family)))
                return;
        log_debug("Network: %s %s %s", event_kind_to_string(kind), ifname, change);
        (void) listener_dispatch(l,
                                 &(Event) { .kind = kind, .interface = ifname, .family = family, .change = change },
                                 now_usec(CLOCK_MONOTONIC));
}

static void handle_link(Listener *l, struct rtnl_link *link, bool deleted) {
        NetlinkWatch *w = l->netlink;
        int ifindex = rtnl_link_get_ifindex(link);
        const char *name = rtnl_link_get_name(link);
        bool up = !deleted && (rtnl_link_get_flags(link) & IFF_UP);
        bool carrier = !deleted && rtnl_link_get_carrier(link);
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
                snprintf(s->name, sizeof(s->name), "%s", name);
        s->seen = true;
        if (s->up != up)
                emit(l, EVENT_LINK, s->name, 0, up ? "up" : "down");
        if (s->carrier != carrier)
                emit(l, EVENT_LINK, s->name, 0, "carrier");
        s->up = up;
        s->carrier = carrier;
}

static void handle_addr(Listener *l, struct rtnl_addr *addr, bool deleted) {
        NetlinkWatch *w = l->netlink;
        int ifindex = rtnl_addr_get_ifindex(addr), family = rtnl_addr_get_family(addr);
        LinkState *s = w->groups & GROUP_LINK ? link_find(w, ifindex) : NULL;
        char buf[INET6_ADDRSTRLEN + 8], key[128], ifname[IF_NAMESIZE];

        if (!rtnl_addr_get_local(addr) || !(w->groups & family_group(family)))
                return;
        nl_addr2str(rtnl_addr_get_local(addr), buf, sizeof(buf));
        snprintf(key, sizeof(key), "%d %d %s", ifindex, family, buf);
        if (w->resyncing)
                (void) strv_extend(&w->seen_addresses, key);

        bool known = strv_contains(w->addresses, key);
        if (deleted == !known)
                return; /* a repeat */
        if (deleted) {
                for (char **a = w->addresses; *a; a++)
                        if (streq(*a, key)) {
                                free(*a);
                                memmove(a, a + 1, sizeof(char *) * strv_length(a + 1) + sizeof(char *));
                                break;
                        }
        } else
                (void) strv_extend(&w->addresses, key);
        emit(l, EVENT_ADDRESS, s ? s->name : if_indextoname((unsigned) ifindex, ifname) ?: "?", family,
             deleted ? "removed" : "added");
}

static void on_object(struct nl_object *obj, void *userdata) {
        Listener *l = userdata;
        NetlinkWatch *w = l->netlink;
        const char *type = nl_object_get_type(obj);

        /* A message of a group just left may still be queued: ignored. */
        if (streq(type, "route/link") && w->groups & GROUP_LINK)
                handle_link(l, (struct rtnl_link *) obj, w->msg_type == RTM_DELLINK);
        else if (streq(type, "route/addr"))
                handle_addr(l, (struct rtnl_addr *) obj, w->msg_type == RTM_DELADDR);
}

static int on_valid(struct nl_msg *msg, void *userdata) {
        Listener *l = userdata;

        l->netlink->msg_type = nlmsg_hdr(msg)->nlmsg_type;
        (void) nl_msg_parse(msg, on_object, l);
        return NL_OK;
}

static void foreach_link(struct nl_object *obj, void *userdata) {
        Listener *l = userdata;
        l->netlink->msg_type = RTM_NEWLINK;
        on_object(obj, l);
}

static void foreach_addr(struct nl_object *obj, void *userdata) {
        Listener *l = userdata;
        l->netlink->msg_type = RTM_NEWADDR;
        on_object(obj, l);
}

/* Dumps the links and addresses of the joined groups and folds them in as
 * events: after an overrun (only what changed), and, quiet (the groups in
 * quiet give state, not events), for groups just joined. */
static int resync(Listener *l, unsigned quiet) {
        NetlinkWatch *w = l->netlink;
        struct nl_sock *sock = nl_socket_alloc();
        struct nl_cache *links = NULL, *addrs = NULL;
        int r;

        if (!sock)
                return -ENOMEM;
        r = nl_errno(nl_connect(sock, NETLINK_ROUTE));
        if (r >= 0 && w->groups & GROUP_LINK)
                r = nl_errno(rtnl_link_alloc_cache(sock, AF_UNSPEC, &links));
        if (r >= 0 && w->groups & GROUP_ADDRESS)
                r = nl_errno(rtnl_addr_alloc_cache(sock, &addrs));
        if (r < 0)
                goto finish;

        w->quiet = quiet;
        if (links) {
                for (size_t i = 0; i < w->n_links; i++)
                        w->links[i].seen = false;
                nl_cache_foreach(links, foreach_link, l);
                /* Links that vanished while we were not listening went down. */
                for (size_t i = 0; i < w->n_links; i++)
                        if (!w->links[i].seen && w->links[i].up) {
                                emit(l, EVENT_LINK, w->links[i].name, 0, "down");
                                w->links[i].up = w->links[i].carrier = false;
                        }
        }
        if (!addrs)
                goto finish;

        w->resyncing = true;
        strv_free(w->seen_addresses);
        w->seen_addresses = NULL;
        nl_cache_foreach(addrs, foreach_addr, l);
        w->resyncing = false;
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
                        emit(l, EVENT_ADDRESS, s ? s->name : if_indextoname((unsigned) ifindex, ifname) ?: "?",
                             family, "removed");
                free(gone);
        }
finish:
        w->quiet = 0;
        nl_cache_free(links);
        nl_cache_free(addrs);
        nl_socket_free(sock);
        return r;
}

static int on_readable(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Listener *l = userdata;

        /* Drain until it would block; an overrun means a resync. */
        for (;;) {
                int r = nl_errno(nl_recvmsgs_default(l->netlink->sock));
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
                if (r->event == EVENT_LINK)
                        g |= GROUP_LINK;
                else if (r->event == EVENT_ADDRESS)
                        g |= family_group(r->family) ?: GROUP_ADDRESS;
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

static int open_socket(Listener *l) {
        NetlinkWatch *w = calloc(1, sizeof(NetlinkWatch));
        const char *rcvbuf = getenv("STANDBY_LISTENER_NETLINK_RCVBUF");
        int r;

        if (!w)
                return -ENOMEM;
        l->netlink = w;
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

int listener_setup_netlink(Listener *l) {
        unsigned want = groups_wanted(l->rules), added, dropped;
        int r;

        if (!want) {
                listener_free_netlink(l);
                return 0;
        }
        if (!l->netlink) {
                r = open_socket(l);
                if (r < 0) {
                        listener_free_netlink(l);
                        return r;
                }
        }
        NetlinkWatch *w = l->netlink;
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

void listener_free_netlink(Listener *l) {
        NetlinkWatch *w = l->netlink;

        if (!w)
                return;
        sd_event_source_disable_unref(w->source);
        nl_socket_free(w->sock);
        free(w->links);
        strv_free(w->addresses);
        strv_free(w->seen_addresses);
        free(w);
        l->netlink = NULL;
}

static bool match_netlink(const Rule *rule, const Event *ev) {
        return listener_str_matches(rule->interface, ev->interface) && listener_str_matches(rule->change, ev->change) &&
               (!rule->family || rule->family == ev->family);
}

const ListenerSource listener_source_netlink = {
        .name = "netlink", .kinds = EVENT_KIND_MASK(EVENT_LINK) | EVENT_KIND_MASK(EVENT_ADDRESS),
        .start = listener_setup_netlink, .reload = listener_setup_netlink, .stop = listener_free_netlink,
        .matches = match_netlink,
};
