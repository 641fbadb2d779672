/* SPDX-License-Identifier: Apache-2.0 */
/* Every refusal the supervisor observes goes out through here, under a rate limit.
 *
 * The attack: a command that calls a refused syscall (or tries to create .env) in a loop makes a
 * report per call. Unlimited, that floods the report channel, the launcher, and whoever consumes
 * the events (an agent harness reading them into a model's context), and it grows nothing but
 * noise. So each kind of refusal (action, call, rule) is reported one by one for its first
 * SUPERVISOR_REPORT_BURST occurrences, and all kinds together at most SUPERVISOR_REPORT_MAX times;
 * past that a refusal is only counted, and each counted kind is reported once, as an aggregate
 * with `repeats` = how many refusals it stands for, when the supervisor stops. The refusals
 * themselves are never limited: every refused call is refused. Memory is a fixed table.
 *
 * An attributing supervisor (a warm session, whose execs each get their own refusals) keys every
 * kind and the overall budget by the callers' session id as well: one exec's storm must not use
 * up the reports of the exec that runs next to it or after it. A command could otherwise make
 * itself a new session id per report (setsid() in a loop): the table's size and an overall
 * ceiling (SUPERVISOR_REPORT_MAX_SHARED) still bound what all of them report one by one. */
#include "linux/supervisor-internal.h"

static const char *const actions[] = { "file-create-name", "syscall", "network-outbound",
                                        "file-metadata" };

_Static_assert(ELEMENTSOF(actions) == ELEMENTSOF(((report_limit *) 0)->overflow),
               "one overflow counter per action");

static size_t action_index(const char *action) {
        for (size_t i = 0; i < ELEMENTSOF(actions); i++)
                if (streq(action, actions[i]))
                        return i;
        return 0;
}

int report_limit_new(report_limit **ret) {
        report_limit *l = calloc(1, sizeof(*l));
        if (!l)
                return -ENOMEM;
        pthread_mutex_init(&l->lock, NULL);
        *ret = l;
        return 0;
}

/* The slot of a kind, taking a free one for a new kind; NULL when the table is full. */
static report_kind *kind_slot(report_limit *l, const void *key[3], pid_t sid) {
        for (size_t i = 0; i < ELEMENTSOF(l->kinds); i++) {
                report_kind *k = &l->kinds[i];
                if (!k->key[0]) {
                        memcpy(k->key, key, sizeof(k->key));
                        k->sid = sid;
                        return k;
                }
                if (memcmp(k->key, key, sizeof(k->key)) == 0 && k->sid == sid)
                        return k;
        }
        return NULL;
}

/* Reports sent one by one so far: in all, or by the callers of one session id. */
static unsigned budget_used(const report_limit *l, bool per_sid, pid_t sid) {
        if (!per_sid)
                return l->reported;
        unsigned n = 0;
        for (size_t i = 0; i < ELEMENTSOF(l->kinds) && l->kinds[i].key[0]; i++)
                if (l->kinds[i].sid == sid)
                        n += l->kinds[i].reported;
        return n;
}

/* The copies an aggregate needs. A failed copy leaves NULL: the aggregate still goes out, with
 * empty strings. */
static void remember(report_kind *k, const supervisor_report *rep, bool name_only_target) {
        if (k->action)
                return;
        k->action = strdup(rep->action);
        k->syscall = strdup(rep->syscall ? rep->syscall : "");
        /* A path (a created name, a socket) differs from one refusal to the next: an aggregate
         * names none. A syscall's target is its name, the same for the whole kind. */
        k->target = strdup(name_only_target && rep->target ? rep->target : "");
        k->rule = strdup(rep->rule ? rep->rule : "");
}

static void emit(const supervisor *s, const supervisor_report *rep) {
        if (s->on_report)
                s->on_report(s->userdata, rep);
        else if (s->on_violation && streq(rep->action, "file-create-name"))
                s->on_violation(s->userdata, rep->syscall, rep->target, rep->rule);
}

void supervisor_report_refusal(supervisor *s, const supervisor_report *rep, const void *key1,
                               const void *key2) {
        report_limit *l = s->limit;
        if (!l)
                return;
        const void *key[3] = { rep->action, key1, key2 };
        bool send = false;
        pthread_mutex_lock(&l->lock);
        report_kind *k = kind_slot(l, key, rep->sid);
        if (!k)
                l->overflow[action_index(rep->action)]++;
        else if (k->reported < SUPERVISOR_REPORT_BURST &&
                 budget_used(l, s->attribute, rep->sid) < SUPERVISOR_REPORT_MAX &&
                 l->reported < SUPERVISOR_REPORT_MAX_SHARED) {
                k->reported++;
                l->reported++;
                send = true;
        } else {
                k->suppressed++;
                remember(k, rep, streq(rep->action, "syscall"));
        }
        pthread_mutex_unlock(&l->lock);
        /* Outside the lock: the embedder writes to a socket, other refusals need not wait. */
        if (send)
                emit(s, rep);
}

void report_limit_flush_free(supervisor *s) {
        report_limit *l = TAKE_PTR(s->limit);
        if (!l)
                return;
        for (size_t i = 0; i < ELEMENTSOF(l->kinds); i++) {
                report_kind *k = &l->kinds[i];
                if (k->suppressed > 0)
                        emit(s, &(supervisor_report) {
                                .action = k->action ? k->action : "syscall",
                                .syscall = k->syscall ? k->syscall : "",
                                .target = k->target ? k->target : "",
                                .rule = k->rule ? k->rule : "",
                                .repeats = k->suppressed, .sid = k->sid });
                free(k->action);
                free(k->syscall);
                free(k->target);
                free(k->rule);
        }
        for (size_t i = 0; i < ELEMENTSOF(actions); i++)
                if (l->overflow[i] > 0)
                        emit(s, &(supervisor_report) {
                                .action = actions[i], .syscall = "", .target = "",
                                .rule = "refusals of more kinds than the report table holds",
                                .repeats = l->overflow[i] });
        pthread_mutex_destroy(&l->lock);
        free(l);
}
