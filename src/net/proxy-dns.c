/* SPDX-License-Identifier: Apache-2.0 */
/* The sandbox's resolver (docs/design/network.md, "Names without a leak"): every DNS query the
 * command sends, to whatever address, reaches this socket (src/linux/intercept.h). It answers
 * from the egress rules alone and never forwards a query: a name the rules allow gets its
 * synthetic address (net/name-map.h), any other NXDOMAIN. So the sandbox's DNS is no channel out —
 * "<secret>.attacker.example" reaches no server — and a client learns no real address to
 * connect to past the proxy. Only A queries get an address: AAAA and every other type of an
 * allowed name are answered with no records (the client then uses IPv4, which the proxy dials
 * over whatever the host has). */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "net/dns.h"
#include "net/name-map.h"
#include "net/proxy-internal.h"

#define DNS_TTL 60 /* seconds; the mapping itself holds for the whole run */
/* Refused names reported one by one; then one more report says the rest are not. A command
 * that asks for random names must not flood the events (nor grow the proxy: the set is capped
 * with it). */
#define DNS_REPORTS_MAX 256
/* A warm session's reports per lookup (below), in all: as many as its supervisor makes
 * (docs/design/daemon.md). */
#define DNS_LOOKUP_REPORTS_MAX 1024

static void report_rest(proxy *px) {
        report_net_violation(px->cfg->report_fd, "dns", "*",
                             "more names refused; not reported one by one", "", NULL);
}

/* A cold run: each refused name is reported once per run (a resolver retries, and asks for A
 * and AAAA), and every report is the run's own. */
static void report_once(proxy *px, const char *name, const char *rule, const char *reason) {
        struct in_addr ignored;
        size_t before = name_map_count(px->dns_refused);
        if (before > DNS_REPORTS_MAX)
                return;
        if (before == DNS_REPORTS_MAX) {
                report_rest(px);
                (void) name_map_address(px->dns_refused, "", &ignored); /* counts the report */
                return;
        }
        if (name_map_address(px->dns_refused, name, &ignored) < 0 ||
            name_map_count(px->dns_refused) == before)
                return;
        report_net_violation(px->cfg->report_fd, "dns", name, rule, "", reason);
}

static uint64_t fnv1a(uint64_t h, const char *t) {
        for (; *t; t++)
                h = (h ^ (uint8_t) *t) * 1099511628211ull;
        return (h ^ 0xff) * 1099511628211ull; /* ends the string: ("ab", "c") is not ("a", "bc") */
}

/* A collision only spares a report. */
static uint64_t lookup_hash(const char *name, const char *client) {
        return fnv1a(fnv1a(14695981039346656037ull, name), client);
}

/* A warm session: a name refused once to one exec must reach the next exec that asks for it
 * too, and the session host tells them apart by the asking socket (`client`, the key of the
 * supervisor's record of the socket's connect() to port 53). So each lookup reports — a lookup
 * being a (name, socket) pair: its retries and its A and AAAA queries report once (the last
 * DNS_RECENT_MAX pairs are remembered) — up to DNS_LOOKUP_REPORTS_MAX in all. A query sent
 * without connect() has no record and reaches every running exec. */
static void report_lookup(proxy *px, const char *name, const char *rule, const char *reason,
                          const char *client) {
        if (px->dns_lookup_reports > DNS_LOOKUP_REPORTS_MAX)
                return;
        uint64_t h = lookup_hash(name, client);
        for (size_t i = 0; i < DNS_RECENT_MAX; i++)
                if (px->dns_recent[i] == h)
                        return;
        px->dns_recent[px->dns_recent_next] = h;
        px->dns_recent_next = (px->dns_recent_next + 1) % DNS_RECENT_MAX;
        if (px->dns_lookup_reports++ == DNS_LOOKUP_REPORTS_MAX)
                report_rest(px);
        else
                report_net_violation(px->cfg->report_fd, "dns", name, rule, client, reason);
}

/* The asking socket's key is made only here, for a refusal: an answered query pays nothing. */
static void report_refused(proxy *px, const char *name, const char *rule, const char *reason,
                           const struct sockaddr *peer, socklen_t peer_len) {
        if (px->cfg->report_fd < 0)
                return;
        if (!px->cfg->per_lookup_dns_reports) {
                report_once(px, name, rule, reason);
                return;
        }
        char client[REPORT_ENDPOINT_MAX] = "";
        report_conn_key(peer, peer_len, PROXY_DNS_PORT, client);
        report_lookup(px, name, rule, reason, client);
}

static size_t answer(proxy *px, const uint8_t *msg, size_t len, const struct sockaddr *peer,
                     socklen_t peer_len, uint8_t *out, size_t size) {
        dns_query q;
        int rc = dns_parse_query(msg, len, &q);
        if (rc < 0)
                return 0;
        if (rc != DNS_RCODE_NOERROR)
                return dns_build_response(&q, msg, (uint8_t) rc, NULL, 0, 0, out, size);
        if (q.qclass != DNS_CLASS_IN)
                return dns_build_response(&q, msg, DNS_RCODE_REFUSED, NULL, 0, 0, out, size);
        net_host h;
        egress_verdict v = { .allowed = false };
        if (net_host_canon(q.name, q.name_len, &h, NULL) < 0 || h.kind != NET_HOST_NAME)
                return dns_build_response(&q, msg, DNS_RCODE_NXDOMAIN, NULL, 0, 0, out, size);
        egress_decide_name(px->cfg->rules, &h, &v);
        /* The ask mode: an unlisted name gets its synthetic address like an allowed one, and
         * the question comes with the connection, which names the port (proxy-ask.c). Nothing
         * goes out for it meanwhile: the address is the run's own, never a real lookup. */
        bool ask = !v.allowed && v.unlisted && px->cfg->ask;
        if (!v.allowed && !ask) {
                report_refused(px, h.text, v.rule, v.reason[0] ? v.reason : NULL, peer, peer_len);
                return dns_build_response(&q, msg, DNS_RCODE_NXDOMAIN, NULL, 0, 0, out, size);
        }
        char why[400];
        if (!ask && budget_check(px, v.rule, h.text, why, sizeof(why))) {
                report_refused(px, h.text, why, NULL, peer, peer_len);
                return dns_build_response(&q, msg, DNS_RCODE_NXDOMAIN, NULL, 0, 0, out, size);
        }
        if (q.qtype != DNS_TYPE_A)
                return dns_build_response(&q, msg, DNS_RCODE_NOERROR, NULL, 0, 0, out, size);
        struct in_addr a;
        int r = name_map_address(px->names, h.text, &a);
        if (r < 0) {
                /* A run that resolved NAME_MAP_MAX names is refused more, not given a reused
                 * address that would judge one name's connection as another's. */
                report_refused(px, h.text, "too many names resolved in this run", NULL, peer,
                               peer_len);
                return dns_build_response(&q, msg, DNS_RCODE_SERVFAIL, NULL, 0, 0, out, size);
        }
        return dns_build_response(&q, msg, DNS_RCODE_NOERROR, &a, sizeof(a), DNS_TTL, out, size);
}

void dns_on_readable(proxy *px, endpoint *l) {
        /* A bounded batch per wake-up: a flood of queries cannot starve the tunnels. */
        for (int i = 0; i < 64; i++) {
                uint8_t msg[1500], out[DNS_UDP_MAX];
                struct sockaddr_storage peer;
                socklen_t pl = sizeof(peer);
                ssize_t n = recvfrom(l->fd, msg, sizeof(msg), MSG_DONTWAIT, (struct sockaddr *) &peer,
                                     &pl);
                if (n < 0)
                        return; /* EAGAIN, or an ICMP error of an earlier answer's */
                size_t len = answer(px, msg, (size_t) n, (const struct sockaddr *) &peer, pl, out,
                                    sizeof(out));
                if (len > 0)
                        (void) sendto(l->fd, out, len, MSG_DONTWAIT, (struct sockaddr *) &peer, pl);
        }
}
