/* SPDX-License-Identifier: Apache-2.0 */
/* Which exec made a connection to the session's egress proxy (docs/design/daemon.md, "Warm
 * sessions"). A TCP connection names no process, so the proxy alone cannot say whose request it
 * refused. The supervisor performs every connect() of the sandbox and, for one to the proxy's
 * ports, reports the caller's session id with the connection's key (REPORT_CONNECTION: the
 * socket's local address and the proxy port, report_conn_key()) before the call returns; the
 * proxy names the same key for the connection it refused. The join:
 *   - a ring of the last HOST_CONNS_MAX records, newest first on lookup: the key is the 4-tuple,
 *     which the kernel keeps unique among live connections, so a newer record for the same key
 *     (the port was reused after the old connection ended) shadows the older one and a live
 *     connection is always matched with the connect that made it;
 *   - what overflows is forgotten, oldest first: a refusal on a connection more than
 *     HOST_CONNS_MAX recorded connects old, or on one with no record (made without connect(),
 *     e.g. sendto(MSG_FASTOPEN)), is unattributable and reaches every running exec, as before —
 *     never hidden from the exec that may have caused it. */
#include "linux/session-host-internal.h"

#include <stdio.h>
#include <string.h>

void host_conn_record(host *h, pid_t sid, const char *client) {
        if (!client[0])
                return;
        host_conn *c = &h->conns[h->conns_next];
        h->conns_next = (h->conns_next + 1) % HOST_CONNS_MAX;
        if (h->n_conns < HOST_CONNS_MAX)
                h->n_conns++;
        c->sid = sid;
        (void) snprintf(c->client, sizeof(c->client), "%s", client);
}

bool host_conn_sid(const host *h, const char *client, pid_t *ret) {
        for (size_t k = 1; client[0] && k <= h->n_conns; k++) {
                const host_conn *c = &h->conns[(h->conns_next + HOST_CONNS_MAX - k) % HOST_CONNS_MAX];
                if (strcmp(c->client, client) == 0) {
                        *ret = c->sid;
                        return true;
                }
        }
        return false;
}
