/* SPDX-License-Identifier: Apache-2.0 */
/* The egress ask mode in a warm session (docs/design/network.md, "Ask mode"). The session's
 * proxy asks its host (REPORT_EGRESS_ASK); the question becomes an "egress.ask" event in the
 * stream of the exec whose process made the connection (session-host-conns.c), or of every
 * running exec when that is not known, and the handle's caller (cordond: the client;
 * cordon_session_egress_answer()) answers with an "A<id> <answer>" line, passed on to the proxy.
 * The proxy's record of the outcome (REPORT_EGRESS_DECIDED) is the "egress.answer" event, in the
 * same streams. Without an answerer (no CORDON_SESSION_EGRESS_ANSWERS), or with no exec running
 * to carry the question, it is refused at once: a session never holds a connection for an
 * answer nobody can give. The proxy keeps the deadline, so a client that never answers costs the
 * connection its timeout, nothing more. */
#include <stdlib.h>
#include <string.h>

#include "linux/session-host-internal.h"

/* The streams a question or its outcome goes to: the connecting exec's, else every running
 * exec's. Returns how many. */
static size_t streams(host *h, const char *client, host_exec **out) {
        host_exec *x = host_exec_of_sid(h, host_client_sid(h, client));
        if (x) {
                out[0] = x;
                return 1;
        }
        size_t n = 0;
        for (size_t i = 0; i < h->n_execs; i++)
                if (!h->execs[i]->exited)
                        out[n++] = h->execs[i];
        return n;
}

bool host_ask_report(host *h, const report_msg *m) {
        report_ask a;
        if (!report_msg_ask(m, &a))
                return false;
        host_exec *to[HOST_EXECS_MAX];
        size_t n = streams(h, a.client, to);
        for (size_t i = 0; i < n; i++) {
                if (m->type == REPORT_EGRESS_ASK)
                        events_egress_ask(&to[i]->ev, a.id, a.proto, a.target,
                                          a.value > 0 ? (uint64_t) a.value : 0);
                else
                        events_egress_answer(&to[i]->ev, a.id, a.proto, a.target,
                                             report_ask_outcome_name(a.value));
        }
        if (m->type == REPORT_EGRESS_ASK && (!h->answers || n == 0))
                report_egress_answer(h->px.report_fd, a.id, REPORT_ASK_UNANSWERED);
        return true;
}

/* "A<id> <answer>": the answer is cordon_egress_answer's value; anything else denies. The proxy
 * drops an answer for a question it no longer holds. */
void host_ask_answer(host *h, const char *line) {
        char *end = NULL;
        unsigned long long id = strtoull(line + 1, &end, 10);
        if (!end || *end != ' ' || id > UINT32_MAX || h->px.report_fd < 0)
                return;
        long v = strtol(end + 1, NULL, 10);
        report_ask_answer a = v == CORDON_EGRESS_ALLOW_ONCE      ? REPORT_ASK_ALLOW_ONCE
                              : v == CORDON_EGRESS_ALLOW_SESSION ? REPORT_ASK_ALLOW_SESSION
                                                                 : REPORT_ASK_DENY;
        report_egress_answer(h->px.report_fd, (uint32_t) id, a);
}
