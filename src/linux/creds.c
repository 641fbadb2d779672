/* SPDX-License-Identifier: Apache-2.0 */
/* The launcher's side of credentials (creds.h). */
#include "linux/creds.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

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

/* Entry i: its secret, a fresh placeholder (128 random bits: a command cannot guess another
 * run's, and one it learns is worth nothing outside this run), the variable. */
static int prepare_one(plan *p, const char *home, cred_set *s, size_t i, cordon_error *err) {
        const cred *c = &s->v[i];
        char *value = NULL;
        size_t len = 0;
        int r = secret_store_get(home, c->secret, &value, &len, err);
        if (r == -ENOENT)
                return cordon_set_error(err, CORDON_USAGE, ENOENT,
                                        "credentials: the secret '%s' (for %s) is not in "
                                        "cordon's store; hint: cordon secret set %s",
                                        c->secret, c->name, c->secret);
        if (r < 0)
                return r;
        uint8_t rnd[16];
        r = random_bytes(rnd, sizeof(rnd));
        if (r >= 0)
                r = cred_set_value(s, i, rnd, value, len);
        explicit_bzero(rnd, sizeof(rnd));
        secret_value_free(value, len);
        if (r == -EINVAL)
                return cordon_set_error(err, CORDON_USAGE, EINVAL,
                                        "credentials: the secret '%s' (for %s) cannot go into "
                                        "an HTTP header: it is empty, longer than %u bytes, or "
                                        "holds a space, a line break or another control byte; "
                                        "hint: cordon secret set %s",
                                        c->secret, c->name, CRED_VALUE_MAX, c->secret);
        if (r >= 0)
                r = strv_env_set(&p->env, c->name, c->placeholder);
        if (r < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, -r,
                                        "credentials: cannot prepare %s: %s", c->name,
                                        strerror(-r));
        return 0;
}

int creds_prepare(plan *p, const char *home, cred_set **ret, cordon_error *err) {
        *ret = NULL;
        cred_set *s = NULL;
        int r = cred_set_new(&s, &p->net.req);
        if (r < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, -r,
                                        "credentials: cannot build the table: %s", strerror(-r));
        for (size_t i = 0; s && i < s->n; i++)
                if ((r = prepare_one(p, home, s, i, err)) < 0) {
                        cred_set_free(s);
                        return r;
                }
        *ret = s;
        return 0;
}

void creds_drop(cred_set **s) {
        cred_set_free(*s);
        *s = NULL;
}
