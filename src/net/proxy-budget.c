/* SPDX-License-Identifier: Apache-2.0 */
/* The wildcard budget (docs/design/network.md, "Wildcard budget"): how many distinct names one
 * wildcard egress entry ("*.githubusercontent.com", "a.*.example.com") lets a run resolve. A
 * wildcard lets the command choose the name, and each name it has resolved — by the sandbox's
 * resolver, or by the proxy dialling it — is a query some DNS server outside sees:
 * "<64 bytes of a secret>.githubusercontent.com" carries data to whoever runs that zone's name
 * servers, through an entry of the built-in allowlist. The budget bounds that channel per run;
 * an exact entry names its one name and has none. A name counts once, however often it is
 * resolved; the one past the budget is refused with a violation, and so is every new one after. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/name-map.h"
#include "net/proxy-internal.h"

#define BUDGET_RULES_MAX 1024 /* wildcard entries tracked; the rest are refused (fail closed) */

struct budget {
        struct name_map *seen;   /* "RULE\nNAME": each name once per entry */
        struct {
                char *rule;
                uint64_t n;
        } *rules;
        size_t n_rules;
};

void budget_free(budget *b) {
        if (!b)
                return;
        name_map_free(b->seen);
        for (size_t i = 0; i < b->n_rules; i++)
                free(b->rules[i].rule);
        free(b->rules);
        free(b);
}

int budget_new(budget **ret) {
        budget *b = calloc(1, sizeof(*b));
        if (!b || name_map_new(&b->seen) < 0 ||
            !(b->rules = calloc(BUDGET_RULES_MAX, sizeof(*b->rules)))) {
                budget_free(b);
                return -ENOMEM;
        }
        *ret = b;
        return 0;
}

/* The entry's counter, made on first use; NULL when there is no room. */
static uint64_t *counter(budget *b, const char *rule) {
        for (size_t i = 0; i < b->n_rules; i++)
                if (strcmp(b->rules[i].rule, rule) == 0)
                        return &b->rules[i].n;
        if (b->n_rules == BUDGET_RULES_MAX || !(b->rules[b->n_rules].rule = strdup(rule)))
                return NULL;
        return &b->rules[b->n_rules++].n;
}

const char *budget_check(proxy *px, const char *rule, const char *name, char *why, size_t size) {
        uint64_t cap = px->cfg->wildcard_names;
        if (cap == 0 || !strchr(rule, '*'))
                return NULL; /* no budget, or an exact entry: its one name */
        budget *b = px->budget;
        char key[2 * NET_HOST_INPUT_MAX + 2];
        (void) snprintf(key, sizeof(key), "%s\n%s", rule, name);
        if (name_map_has(b->seen, key))
                return NULL; /* counted already: the same name again costs nothing */
        uint64_t *n = counter(b, rule);
        struct in_addr ignored;
        if (n && *n < cap && name_map_address(b->seen, key, &ignored) == 0) {
                (*n)++;
                return NULL;
        }
        (void) snprintf(why, size,
                        "wildcard budget: more than %llu names under %s resolved in this run "
                        "(limits.wildcardNames)",
                        (unsigned long long) cap, rule);
        return why;
}
