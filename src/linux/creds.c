/* SPDX-License-Identifier: Apache-2.0 */
/* The launcher's side of credentials (creds.h). */
#include "linux/creds.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "secrets/secret-store.h"

static int random_bytes(uint8_t *buf, size_t n) {
        size_t got = 0;
        while (got < n) {
                ssize_t k = getrandom(buf + got, n - got, 0);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                got += (size_t) k;
        }
        return 0;
}

/* Entry i's value: its secret from the store, or a credential its broker issues now (with a
 * reaper that revokes it whatever happens to the run). */
static int value_of(const plan *p, const char *home, creds_run *run, const cred *c,
                    const policy_cred *pc, char **value, size_t *len, cordon_error *err) {
        if (!pc->broker) {
                int r = secret_store_get(home, c->secret, value, len, err);
                if (r == -ENOENT)
                        return cordon_set_error(err, CORDON_USAGE, ENOENT,
                                                "credentials: the secret '%s' (for %s) is not in "
                                                "cordon's store; hint: cordon secret set %s",
                                                c->secret, c->name, c->secret);
                return r;
        }
        const policy_broker *b = policy_req_broker(&p->net.req, pc->broker);
        if (!b)
                return cordon_set_error(err, CORDON_POLICY_INVALID, ENOENT,
                                        "credentials: %s names the broker '%s', which the "
                                        "managed settings do not configure (credentialBrokers)",
                                        c->name, pc->broker);
        int r = broker_issue(b, run->id, value, len, err);
        if (r < 0)
                return r;
        r = broker_reaper_start(b, run->id, *value, *len, &run->reapers[run->n], err);
        if (r < 0) {
                /* Issued but no reaper: revoke now rather than leave it valid. */
                after_run now = AFTER_RUN_INIT;
                cordon_error ignored = { 0 };
                if (broker_reaper_start(b, run->id, *value, *len, &now, &ignored) == 0)
                        after_run_finish(&now);
                secret_value_free(*value, *len);
                *value = NULL;
                return r;
        }
        run->n++;
        return 0;
}

/* Entry i: its value, a fresh placeholder (128 random bits: a command cannot guess another
 * run's, and one it learns is worth nothing outside this run), the variable. */
static int prepare_one(plan *p, const char *home, creds_run *run, cred_set *s, size_t i,
                       cordon_error *err) {
        const cred *c = &s->v[i];
        const policy_cred *pc = &p->net.req.creds[i];
        char *value = NULL;
        size_t len = 0;
        int r = value_of(p, home, run, c, pc, &value, &len, err);
        if (r < 0)
                return r;
        uint8_t rnd[16];
        r = random_bytes(rnd, sizeof(rnd));
        if (r >= 0)
                r = cred_set_value(s, i, rnd, value, len);
        explicit_bzero(rnd, sizeof(rnd));
        secret_value_free(value, len);
        const char *what = pc->broker ? "the credential of broker" : "the secret";
        const char *name = pc->broker ? pc->broker : c->secret;
        if (r == -EINVAL)
                return cordon_set_error(err, CORDON_USAGE, EINVAL,
                                        "credentials: %s '%s' (for %s) cannot go into an HTTP "
                                        "header: it is empty, longer than %u bytes, or holds a "
                                        "space, a line break or another control byte",
                                        what, name, c->name, CRED_VALUE_MAX);
        if (r >= 0)
                r = strv_env_set(&p->env, c->name, c->placeholder);
        if (r < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, -r,
                                        "credentials: cannot prepare %s: %s", c->name,
                                        strerror(-r));
        return 0;
}

/* The id brokers are given: random, per launch (a broker keys its credential to it). */
static int make_run_id(creds_run *run) {
        if (run->id[0])
                return 0;
        uint8_t b[16];
        int r = random_bytes(b, sizeof(b));
        for (size_t i = 0; r >= 0 && i < sizeof(b); i++)
                (void) snprintf(run->id + 2 * i, 3, "%02x", b[i]);
        return r;
}

int creds_prepare(plan *p, const char *home, creds_run *run, cred_set **ret,
                  cordon_error *err) {
        *ret = NULL;
        /* A second attempt of one launch (the step down from native to landlock) gets
         * credentials of its own: what the failed attempt was issued is revoked first, and
         * run->reapers never holds more than one attempt's. */
        creds_run_finish(run);
        cred_set *s = NULL;
        int r = cred_set_new(&s, &p->net.req);
        if (r >= 0)
                r = make_run_id(run);
        if (r < 0) {
                cred_set_free(s);
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, -r,
                                        "credentials: cannot build the table: %s", strerror(-r));
        }
        /* Brokers first: a reaper is forked from this process, and should hold no secret of
         * the store in its copy of it. */
        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; s && i < s->n; i++) {
                        if (!p->net.req.creds[i].broker != (pass == 1))
                                continue;
                        if ((r = prepare_one(p, home, run, s, i, err)) < 0) {
                                cred_set_free(s);
                                return r;
                        }
                }
        *ret = s;
        return 0;
}

void creds_run_release(creds_run *run) {
        for (size_t i = 0; i < run->n; i++)
                after_run_release(&run->reapers[i]);
}

void creds_run_finish(creds_run *run) {
        for (size_t i = 0; i < run->n; i++)
                after_run_finish(&run->reapers[i]);
        run->n = 0;
}

void creds_drop(cred_set **s) {
        cred_set_free(*s);
        *s = NULL;
}
