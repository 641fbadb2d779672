/* SPDX-License-Identifier: Apache-2.0 */
/* The interception rules of intercept.h: two routes through rtnetlink and one nftables table,
 * each built with the netfilter project's own libraries (libmnl for the netlink framing,
 * libnftnl for the nf_tables objects and expressions) and sent in one batch, so the table appears
 * whole or not at all. */
#include "linux/intercept.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/table.h>

#include "util/util.h"

#define TABLE "cordon"
#define CHAIN "output"
#define IPV4_DADDR_OFFSET 16 /* bytes into the IPv4 header (RFC 791) */
#define IPV6_DADDR_OFFSET 24 /* bytes into the IPv6 header (RFC 8200) */

/* ---- netlink round trips -------------------------------------------------------------------- */

/* Sends `len` bytes of requests, each asking for an ACK, and reads the answers until `n_acks`
 * have come: the first error the kernel reports is returned. */
static int talk(int proto, const void *msgs, size_t len, unsigned n_acks) {
        struct mnl_socket *nl = mnl_socket_open2(proto, SOCK_CLOEXEC);
        if (!nl)
                return -errno;
        int r = 0;
        if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0 ||
            mnl_socket_sendto(nl, msgs, len) < 0)
                r = -errno;
        char buf[8192]; /* MNL_SOCKET_BUFFER_SIZE, which is a run-time value */
        while (r == 0 && n_acks > 0) {
                ssize_t got = mnl_socket_recvfrom(nl, buf, sizeof(buf));
                if (got < 0) {
                        r = -errno;
                        break;
                }
                /* Each request's answer is an NLMSG_ERROR: error 0 is its ACK, else the errno
                 * the kernel refused it with (the batch is then undone as a whole). */
                int n = (int) got;
                for (const struct nlmsghdr *h = (const struct nlmsghdr *) buf;
                     r == 0 && n_acks > 0 && mnl_nlmsg_ok(h, n); h = mnl_nlmsg_next(h, &n)) {
                        if (h->nlmsg_type != NLMSG_ERROR)
                                continue;
                        const struct nlmsgerr *e = mnl_nlmsg_get_payload(h);
                        r = e->error;
                        n_acks--;
                }
        }
        (void) mnl_socket_close(nl);
        return r;
}

/* ---- routes --------------------------------------------------------------------------------- */

/* "ip route add default dev lo src LOOPBACK": connect() to any address finds a route, so the
 * connection reaches the NAT hook (which runs after the route lookup) instead of failing at once
 * with ENETUNREACH; the source is loopback's, so the proxy sees a peer it can name. */
static size_t put_default_route(char *buf, int family, unsigned lo, uint32_t seq) {
        struct nlmsghdr *h = mnl_nlmsg_put_header(buf);
        h->nlmsg_type = RTM_NEWROUTE;
        h->nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK;
        h->nlmsg_seq = seq;
        struct rtmsg *rt = mnl_nlmsg_put_extra_header(h, sizeof(*rt));
        rt->rtm_family = (unsigned char) family;
        rt->rtm_table = RT_TABLE_MAIN;
        rt->rtm_protocol = RTPROT_BOOT;
        rt->rtm_scope = family == AF_INET ? RT_SCOPE_LINK : RT_SCOPE_UNIVERSE;
        rt->rtm_type = RTN_UNICAST;
        mnl_attr_put_u32(h, RTA_OIF, lo);
        if (family == AF_INET) {
                struct in_addr a = { htonl(INADDR_LOOPBACK) };
                mnl_attr_put(h, RTA_PREFSRC, sizeof(a), &a);
        } else
                mnl_attr_put(h, RTA_PREFSRC, sizeof(in6addr_loopback), &in6addr_loopback);
        return h->nlmsg_len;
}

static int add_default_route(int family, unsigned lo) {
        char buf[256];
        size_t len = put_default_route(buf, family, lo, (uint32_t) time(NULL));
        return talk(NETLINK_ROUTE, buf, len, 1);
}

/* ---- the nf_tables batch -------------------------------------------------------------------- */

typedef struct batch {
        struct mnl_nlmsg_batch *b;
        uint32_t seq;
        unsigned n_acks;
        bool failed;           /* out of room or memory: nothing is sent */
} batch;

static void batch_next(batch *bt) {
        if (!mnl_nlmsg_batch_next(bt->b))
                bt->failed = true;
        bt->n_acks++;
}

static void add_expr(struct nftnl_rule *r, struct nftnl_expr *e, batch *bt) {
        if (!e) {
                bt->failed = true;
                return;
        }
        nftnl_rule_add_expr(r, e);
}

/* reg1 = meta KEY (NFT_META_NFPROTO: ipv4/ipv6; NFT_META_L4PROTO: tcp/udp). */
static void expr_meta(struct nftnl_rule *r, uint32_t key, batch *bt) {
        struct nftnl_expr *e = nftnl_expr_alloc("meta");
        if (e) {
                nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, key);
                nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, NFT_REG_1);
        }
        add_expr(r, e, bt);
}

/* reg1 = LEN bytes at OFFSET of the header at BASE. */
static void expr_payload(struct nftnl_rule *r, uint32_t base, uint32_t offset, uint32_t len,
                         batch *bt) {
        struct nftnl_expr *e = nftnl_expr_alloc("payload");
        if (e) {
                nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, base);
                nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, offset);
                nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, len);
                nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, NFT_REG_1);
        }
        add_expr(r, e, bt);
}

/* reg1 &= MASK (XOR 0). */
static void expr_mask(struct nftnl_rule *r, const void *mask, uint32_t len, batch *bt) {
        static const uint8_t zero[16];
        struct nftnl_expr *e = nftnl_expr_alloc("bitwise");
        if (e) {
                nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
                nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
                nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, len);
                nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, mask, len);
                nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, zero, len);
        }
        add_expr(r, e, bt);
}

/* The rule goes on only when reg1 == DATA. */
static void expr_eq(struct nftnl_rule *r, const void *data, uint32_t len, batch *bt) {
        struct nftnl_expr *e = nftnl_expr_alloc("cmp");
        if (e) {
                nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, NFT_REG_1);
                nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, NFT_CMP_EQ);
                nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, data, len);
        }
        add_expr(r, e, bt);
}

static void expr_return(struct nftnl_rule *r, batch *bt) {
        struct nftnl_expr *e = nftnl_expr_alloc("immediate");
        if (e) {
                nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
                nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, NFT_RETURN);
        }
        add_expr(r, e, bt);
}

/* "redirect to :PORT": the destination becomes the loopback address of the packet's family
 * and PORT; the proxy reads the original one back (SO_ORIGINAL_DST). */
static void expr_redirect(struct nftnl_rule *r, uint16_t port, batch *bt) {
        uint16_t be = htons(port);
        struct nftnl_expr *e = nftnl_expr_alloc("immediate");
        if (e) {
                nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_1);
                nftnl_expr_set(e, NFTNL_EXPR_IMM_DATA, &be, sizeof(be));
        }
        add_expr(r, e, bt);
        e = nftnl_expr_alloc("redir");
        if (e)
                nftnl_expr_set_u32(e, NFTNL_EXPR_REDIR_REG_PROTO_MIN, NFT_REG_1);
        add_expr(r, e, bt);
}

/* Appends the rule to the batch and frees it. */
static void put_rule(batch *bt, struct nftnl_rule *r) {
        if (!bt->failed) {
                nftnl_rule_set_str(r, NFTNL_RULE_TABLE, TABLE);
                nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, CHAIN);
                nftnl_rule_set_u32(r, NFTNL_RULE_FAMILY, NFPROTO_INET);
                struct nlmsghdr *h = nftnl_rule_nlmsg_build_hdr(
                        mnl_nlmsg_batch_current(bt->b), NFT_MSG_NEWRULE, NFPROTO_INET,
                        NLM_F_APPEND | NLM_F_CREATE | NLM_F_ACK, bt->seq++);
                nftnl_rule_nlmsg_build_payload(h, r);
                batch_next(bt);
        }
        nftnl_rule_free(r);
}

static struct nftnl_rule *new_rule(batch *bt) {
        struct nftnl_rule *r = nftnl_rule_alloc();
        if (!r)
                bt->failed = true;
        return r;
}

/* "meta l4proto PROTO th dport 53 redirect to :DNS". First: a query to the namespace's own
 * loopback (a resolv.conf naming 127.0.0.53) is redirected too. */
static void rule_dns(batch *bt, uint8_t l4proto, uint16_t dns_port) {
        struct nftnl_rule *r = new_rule(bt);
        if (!r)
                return;
        uint16_t dport = htons(53);
        expr_meta(r, NFT_META_L4PROTO, bt);
        expr_eq(r, &l4proto, 1, bt);
        expr_payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, bt);
        expr_eq(r, &dport, 2, bt);
        expr_redirect(r, dns_port, bt);
        put_rule(bt, r);
}

/* "ip daddr 127.0.0.0/8 return" and "ip6 daddr ::1 return": the namespace's own loopback (the
 * command's local servers, the proxy's own ports) is left alone. */
static void rule_loopback_v4(batch *bt) {
        struct nftnl_rule *r = new_rule(bt);
        if (!r)
                return;
        uint8_t v4 = NFPROTO_IPV4;
        uint32_t mask = htonl(0xff000000u), net = htonl(0x7f000000u);
        expr_meta(r, NFT_META_NFPROTO, bt);
        expr_eq(r, &v4, 1, bt);
        expr_payload(r, NFT_PAYLOAD_NETWORK_HEADER, IPV4_DADDR_OFFSET, 4, bt);
        expr_mask(r, &mask, 4, bt);
        expr_eq(r, &net, 4, bt);
        expr_return(r, bt);
        put_rule(bt, r);
}

static void rule_loopback_v6(batch *bt) {
        struct nftnl_rule *r = new_rule(bt);
        if (!r)
                return;
        uint8_t v6 = NFPROTO_IPV6;
        expr_meta(r, NFT_META_NFPROTO, bt);
        expr_eq(r, &v6, 1, bt);
        expr_payload(r, NFT_PAYLOAD_NETWORK_HEADER, IPV6_DADDR_OFFSET, 16, bt);
        expr_eq(r, &in6addr_loopback, 16, bt);
        expr_return(r, bt);
        put_rule(bt, r);
}

/* "meta l4proto tcp redirect to :TCP": every other TCP connection, whatever its address. */
static void rule_tcp(batch *bt, uint16_t tcp_port) {
        struct nftnl_rule *r = new_rule(bt);
        if (!r)
                return;
        uint8_t tcp = IPPROTO_TCP;
        expr_meta(r, NFT_META_L4PROTO, bt);
        expr_eq(r, &tcp, 1, bt);
        expr_redirect(r, tcp_port, bt);
        put_rule(bt, r);
}

static void put_table(batch *bt) {
        struct nftnl_table *t = nftnl_table_alloc();
        if (!t) {
                bt->failed = true;
                return;
        }
        nftnl_table_set_u32(t, NFTNL_TABLE_FAMILY, NFPROTO_INET);
        nftnl_table_set_str(t, NFTNL_TABLE_NAME, TABLE);
        struct nlmsghdr *h = nftnl_table_nlmsg_build_hdr(mnl_nlmsg_batch_current(bt->b),
                                                         NFT_MSG_NEWTABLE, NFPROTO_INET,
                                                         NLM_F_CREATE | NLM_F_ACK, bt->seq++);
        nftnl_table_nlmsg_build_payload(h, t);
        nftnl_table_free(t);
        batch_next(bt);
}

/* "type nat hook output priority -100": the hook locally generated packets pass, at the
 * priority of destination NAT (NF_IP_PRI_NAT_DST). */
static void put_chain(batch *bt) {
        struct nftnl_chain *c = nftnl_chain_alloc();
        if (!c) {
                bt->failed = true;
                return;
        }
        nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, TABLE);
        nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, CHAIN);
        nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, "nat");
        nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, NF_INET_LOCAL_OUT);
        nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, -100);
        nftnl_chain_set_u32(c, NFTNL_CHAIN_POLICY, NF_ACCEPT);
        struct nlmsghdr *h = nftnl_chain_nlmsg_build_hdr(mnl_nlmsg_batch_current(bt->b),
                                                         NFT_MSG_NEWCHAIN, NFPROTO_INET,
                                                         NLM_F_CREATE | NLM_F_ACK, bt->seq++);
        nftnl_chain_nlmsg_build_payload(h, c);
        nftnl_chain_free(c);
        batch_next(bt);
}

int intercept_rules_install(uint16_t tcp_port, uint16_t dns_port) {
        /* Seven small messages: a page and a half is plenty (the batch refuses to overflow). */
        char buf[8192];
        batch bt = { .b = mnl_nlmsg_batch_start(buf, sizeof(buf)), .seq = (uint32_t) time(NULL) };
        if (!bt.b)
                return -ENOMEM;
        nftnl_batch_begin(mnl_nlmsg_batch_current(bt.b), bt.seq++);
        (void) mnl_nlmsg_batch_next(bt.b);
        put_table(&bt);
        put_chain(&bt);
        rule_dns(&bt, IPPROTO_UDP, dns_port);
        rule_dns(&bt, IPPROTO_TCP, dns_port);
        rule_loopback_v4(&bt);
        rule_loopback_v6(&bt);
        rule_tcp(&bt, tcp_port);
        nftnl_batch_end(mnl_nlmsg_batch_current(bt.b), bt.seq++);
        (void) mnl_nlmsg_batch_next(bt.b);
        int r = bt.failed ? -ENOMEM
                          : talk(NETLINK_NETFILTER, mnl_nlmsg_batch_head(bt.b),
                                 mnl_nlmsg_batch_size(bt.b), bt.n_acks);
        mnl_nlmsg_batch_stop(bt.b);
        return r;
}

/* The kernel gives a new network namespace's loopback index 1 (LOOPBACK_IFINDEX) and nothing
 * else can have it: no if_nametoindex() round trip on every sandbox's start-up. */
#define LOOPBACK_IFINDEX 1

int intercept_install(uint16_t tcp_port, uint16_t dns_port) {
        unsigned lo = LOOPBACK_IFINDEX;
        int r = add_default_route(AF_INET, lo);
        if (r < 0)
                return r;
        /* Without IPv6 in the kernel there is nothing to route; with it, a missing route would
         * let an IPv6 connect() fail at once where IPv4's is judged. */
        r = add_default_route(AF_INET6, lo);
        if (r < 0 && r != -EAFNOSUPPORT)
                return r;
        return intercept_rules_install(tcp_port, dns_port);
}
