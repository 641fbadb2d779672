/* SPDX-License-Identifier: Apache-2.0 */
/* The launcher's side of the egress ask mode (docs/design/network.md, "Ask mode"): the proxy's
 * questions (REPORT_EGRESS_ASK) go to the launch's on_egress_ask, its answers back to the proxy
 * (REPORT_EGRESS_ANSWER); the proxy's record of what each question came to
 * (REPORT_EGRESS_DECIDED) becomes the "egress.answer" event. The proxy enforces the deadline,
 * so a slow answerer cannot extend it: an answer after it finds nobody, and the record says
 * "timeout". */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "linux/launch.h"
#include "util/fork-gate.h"

/* The sandbox stands still while its question is open (the cgroup v2 freezer, when the run has
 * such a cgroup): a command sharing the terminal with a prompt cannot draw over it, nor go on
 * doing anything else meanwhile. Best effort: without the freezer the prompt's limits are
 * SECURITY.md's ("Ask mode"). */
static void freeze(const run_state *st, bool on) {
        if (!st->cg || cgroup_get_kind(st->cg) != CGROUP_V2)
                return;
        char path[4096];
        (void) snprintf(path, sizeof(path), "%s/cgroup.freeze", cgroup_get_path(st->cg));
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return;
        (void) !write(fd, on ? "1" : "0", 1);
        (void) close(fd);
}

/* The answerer's answer as the proxy's: anything but the three answers is a deny. */
static report_ask_answer ask_caller(run_state *st, const report_ask *a) {
        if (!st->opts->on_egress_ask)
                return REPORT_ASK_UNANSWERED; /* nobody to ask: refused at once, not held */
        cordon_egress_question q = { .target = a->target, .protocol = a->proto,
                                     .timeout_ms = a->value > 0 ? (uint64_t) a->value : 0 };
        freeze(st, true);
        cordon_egress_answer ans;
        FORK_GATE_PAUSED(ans = st->opts->on_egress_ask(st->opts->ask_userdata, &q));
        freeze(st, false);
        return ans == CORDON_EGRESS_ALLOW_ONCE      ? REPORT_ASK_ALLOW_ONCE
               : ans == CORDON_EGRESS_ALLOW_SESSION ? REPORT_ASK_ALLOW_SESSION
                                                    : REPORT_ASK_DENY;
}

static void on_question(run_state *st, const report_ask *a) {
        events_egress_ask(st->ev, a->id, a->proto, a->target,
                          a->value > 0 ? (uint64_t) a->value : 0);
        /* Two connections to one destination may both be asked before the first answer: the
         * second is answered as the first was for the session, not asked a second time. */
        report_ask_answer ans = strv_contains(&st->ask_session, a->target)
                                        ? REPORT_ASK_ALLOW_SESSION
                                        : ask_caller(st, a);
        if (ans == REPORT_ASK_ALLOW_SESSION)
                (void) strv_push_unique(&st->ask_session, a->target);
        if (st->proxy_fd >= 0)
                report_egress_answer(st->proxy_fd, a->id, ans);
}

bool run_ask_handle(run_state *st, const report_msg *m) {
        report_ask a;
        if (!report_msg_ask(m, &a))
                return false;
        if (m->type == REPORT_EGRESS_ASK) {
                on_question(st, &a);
                return true;
        }
        if (a.value == REPORT_ASK_ALLOW_SESSION)
                (void) strv_push_unique(&st->ask_session, a.target);
        events_egress_answer(st->ev, a.id, a.proto, a.target, report_ask_outcome_name(a.value));
        return true;
}
