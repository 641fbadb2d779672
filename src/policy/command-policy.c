/* SPDX-License-Identifier: Apache-2.0 */
/* The command policy (docs/policy.md, "Command policy"): per mode, command patterns a run refuses
 * outright ("refuse") or runs only with the launch's approval ("ask": on_command_ask, the
 * `cordon run` prompt, cordond's commandApproved; without an approver refused, and the message
 * says how to approve). Checked against the simple commands of the argument
 * vector (policy/cmdline.h) before anything starts, on every backend: an extra layer over the
 * sandbox, and the only layer on `none` and in danger-full-access. A convenience that stops an
 * agent's habitual `git push` in a review, NOT a security boundary: a command that wants to run
 * git push can write a script that does. */
#include <stdio.h>

#include "policy/cmdline.h"
#include "policy/policy-json-internal.h"
#include "util/fork-gate.h"

#define RULE_EXAMPLE "{\"command\": [\"git\", \"push\"], \"action\": \"refuse\", \"modes\": [\"read-only\"]}"

static void rule_free(policy_command_rule *r) {
        strv_done(&r->words);
}

void policy_command_rules_clear(cordon_policy *p) {
        for (size_t i = 0; i < p->n_command_rules; i++)
                rule_free(&p->command_rules[i]);
        free(p->command_rules);
        p->command_rules = NULL;
        p->n_command_rules = 0;
}

static bool same_rule(const policy_command_rule *a, const policy_command_rule *b) {
        if (a->ask != b->ask || a->modes != b->modes || a->words.n != b->words.n)
                return false;
        for (size_t i = 0; i < a->words.n; i++)
                if (strcmp(a->words.v[i], b->words.v[i]) != 0)
                        return false;
        return true;
}

/* A word of a pattern: non-empty, at most 255 bytes, printable, no shell syntax (it is compared
 * with a command's words as they are). */
const char *policy_check_command_word(const char *w) {
        if (!w || !w[0])
                return "must not be empty";
        if (strlen(w) > POLICY_MAX_NAME)
                return "is longer than 255 bytes";
        for (const char *c = w; *c; c++)
                if ((unsigned char) *c <= 0x20 || *c == 0x7f || strchr("$`'\"\\;&|<>()*?[]{}", *c))
                        return "must be one word without spaces, quotes or shell syntax";
        return NULL;
}

int policy_add_command_rule(cordon_policy *p, char *const *words, bool ask, unsigned modes) {
        policy_command_rule r = { .ask = ask, .modes = modes ? modes : POLICY_ALL_MODES };
        size_t n = 0;
        for (; words && words[n]; n++)
                if (policy_check_command_word(words[n]))
                        return -EINVAL;
        if (!p || n == 0 || n > 16 || (modes & ~POLICY_ALL_MODES))
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (strv_push(&r.words, words[i]) < 0) {
                        rule_free(&r);
                        return -ENOMEM;
                }
        for (size_t i = 0; i < p->n_command_rules; i++)
                if (same_rule(&p->command_rules[i], &r)) {
                        rule_free(&r);
                        return 0;
                }
        policy_command_rule *nv = p->n_command_rules < POLICY_MAX_LIST
                                          ? realloc(p->command_rules,
                                                    (p->n_command_rules + 1) * sizeof(*nv))
                                          : NULL;
        if (!nv) {
                rule_free(&r);
                return p->n_command_rules < POLICY_MAX_LIST ? -ENOMEM : -E2BIG;
        }
        p->command_rules = nv;
        p->command_rules[p->n_command_rules++] = r;
        return 0;
}

int policy_command_rules_merge(cordon_policy *dst, const cordon_policy *src) {
        for (size_t i = 0; i < src->n_command_rules; i++) {
                const policy_command_rule *r = &src->command_rules[i];
                int e = policy_add_command_rule(dst, r->words.v, r->ask, r->modes);
                if (e < 0)
                        return e;
        }
        return 0;
}

/* ---- checking a command --------------------------------------------------------------------- */

static void pattern_text(const policy_command_rule *r, char *buf, size_t size) {
        size_t o = 0;
        buf[0] = '\0';
        for (size_t i = 0; i < r->words.n && o < size; i++)
                o += (size_t) snprintf(buf + o, size - o, "%s%s", i ? " " : "", r->words.v[i]);
}

static int refuse(const policy_command_rule *r, size_t index, cordon_mode mode,
                  cordon_error *err) {
        char pat[256];
        pattern_text(r, pat, sizeof(pat));
        return cordon_set_error(err, CORDON_EXEC_FAILED, EPERM,
                                "the command policy refuses '%s' in mode %s (commandPolicy[%zu]); "
                                "it is not run; use another mode, or remove the rule from the "
                                "policy", pat, cordon_mode_to_string(mode), index);
}

/* An "ask" rule's question; refused unless the approver approves. */
static int ask_rule(const policy_command_rule *r, size_t index, cordon_mode mode,
                    char *const argv[], cordon_command_ask_fn ask, void *userdata,
                    cordon_error *err) {
        char pat[256];
        pattern_text(r, pat, sizeof(pat));
        if (!ask)
                return cordon_set_error(err, CORDON_EXEC_FAILED, EPERM,
                                        "the command policy needs approval for '%s' in mode %s "
                                        "(commandPolicy[%zu], action \"ask\"), and this run has "
                                        "nobody to ask; run it from a terminal (cordon run asks "
                                        "there), approve it through the launcher (on_command_ask;"
                                        " cordond: \"commandApproved\": true), or remove the "
                                        "rule", pat, cordon_mode_to_string(mode), index);
        cordon_command_question q = { .argv = argv, .pattern = pat,
                                      .mode = cordon_mode_to_string(mode), .rule = index };
        cordon_command_answer a;
        FORK_GATE_PAUSED(a = ask(userdata, &q)); /* the caller's code */
        if (a == CORDON_COMMAND_APPROVE)
                return 0;
        return cordon_set_error(err, CORDON_EXEC_FAILED, EPERM,
                                "the command policy needs approval for '%s' in mode %s "
                                "(commandPolicy[%zu], action \"ask\"), and it was not approved; "
                                "it is not run", pat, cordon_mode_to_string(mode), index);
}

/* Which rules of the mode the commands of `l` match: a "refuse" match refuses at once (no
 * question is asked for a line that would be refused anyway); the "ask" rules matched are
 * marked in `asked` (one question per rule, however many of the commands it matches). */
static int match_rules(const cordon_policy *p, cordon_mode mode, const cmd_list *l, bool *asked,
                       cordon_error *err) {
        for (size_t k = 0; k < l->n; k++)
                for (size_t i = 0; i < p->n_command_rules; i++) {
                        const policy_command_rule *rule = &p->command_rules[i];
                        if (!(rule->modes & (1u << mode)) ||
                            !cmdline_matches(&l->v[k], rule->words.v))
                                continue;
                        if (!rule->ask)
                                return refuse(rule, i, mode, err);
                        asked[i] = true;
                }
        if (l->unreadable)
                return cordon_set_error(err, CORDON_EXEC_FAILED, EPERM,
                                        "the command line cannot be checked against the command "
                                        "policy (an unclosed quote or substitution, or nested "
                                        "too deep) in mode %s; simplify it",
                                        cordon_mode_to_string(mode));
        return 0;
}

int policy_check_command(const cordon_policy *p, char *const argv[], cordon_command_ask_fn ask,
                         void *userdata, cordon_error *err) {
        cordon_mode mode = p->mode_set ? p->mode : CORDON_MODE_WORKSPACE_WRITE;
        bool any = false;
        for (size_t i = 0; i < p->n_command_rules; i++)
                any = any || (p->command_rules[i].modes & (1u << mode));
        if (!any || !argv)
                return 0;
        cmd_list l = { 0 };
        bool *asked = calloc(p->n_command_rules, sizeof(*asked));
        int r = asked ? cmdline_split_argv(argv, &l) : -ENOMEM;
        if (r >= 0)
                r = match_rules(p, mode, &l, asked, err);
        for (size_t i = 0; r >= 0 && i < p->n_command_rules; i++)
                if (asked[i])
                        r = ask_rule(&p->command_rules[i], i, mode, argv, ask, userdata, err);
        cmd_list_done(&l);
        free(asked);
        return r == -ENOMEM ? cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM,
                                               "out of memory")
                            : r;
}

/* ---- JSON ----------------------------------------------------------------------------------- */

typedef struct rule_parse {
        strv words;
        bool ask, action_set;
        unsigned modes;
} rule_parse;

static int parse_words(parse_ctx *c, json_t *v, void *target) {
        rule_parse *rp = target;
        if (json_is_string(v)) {
                _cleanup_free_ char *copy = strdup(json_string_value(v));
                char *save = NULL;
                for (char *t = copy ? strtok_r(copy, " \t", &save) : NULL; t;
                     t = strtok_r(NULL, " \t", &save))
                        if (strv_push(&rp->words, t) < 0)
                                return policy_json_fail_errno(c, -ENOMEM);
        } else if (json_is_array(v)) {
                size_t i;
                json_t *e;
                json_array_foreach(v, i, e) {
                        if (!json_is_string(e) || strv_push(&rp->words, json_string_value(e)) < 0)
                                return jread_expect(&c->j, e, false, "a string", "\"push\"");
                }
        } else
                return jread_expect(&c->j, v, false, "a string or an array of strings",
                                    "[\"git\", \"push\"]");
        if (rp->words.n == 0 || rp->words.n > 16)
                return jread_fail(&c->j, false, "give 1 to 16 words, e.g. [\"git\", \"push\"]",
                                  "a command pattern needs 1 to 16 words");
        for (size_t i = 0; i < rp->words.n; i++) {
                const char *why = policy_check_command_word(rp->words.v[i]);
                if (why)
                        return jread_fail(&c->j, false, "write each word as the command has it",
                                          "word %zu %s", i + 1, why);
        }
        return 0;
}

static int parse_action(parse_ctx *c, json_t *v, void *target) {
        rule_parse *rp = target;
        const char *a = json_string_value(v);
        if (!a || (strcmp(a, "refuse") != 0 && strcmp(a, "ask") != 0))
                return jread_fail(&c->j, false, "use \"refuse\" or \"ask\"",
                                  "the action must be \"refuse\" or \"ask\"");
        rp->ask = strcmp(a, "ask") == 0;
        rp->action_set = true;
        return 0;
}

static int parse_modes(parse_ctx *c, json_t *v, void *target) {
        rule_parse *rp = target;
        int r = jread_expect(&c->j, v, json_is_array(v) && json_array_size(v) > 0,
                             "a non-empty array of modes", "[\"read-only\"]");
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) {
                cordon_mode m;
                if (r >= 0 && (!json_is_string(e) ||
                               cordon_mode_from_string(json_string_value(e), &m) < 0))
                        r = jread_fail(&c->j, false,
                                       "use workspace-write (chat), read-only (review, plan, "
                                       "orchestrate) or danger-full-access",
                                       "modes[%zu] is not a mode", i);
                if (r >= 0)
                        rp->modes |= 1u << m;
        }
        return r;
}

static const field rule_fields[] = {
        { "command", parse_words, NULL },
        { "action", parse_action, NULL },
        { "modes", parse_modes, NULL },
};

static int parse_rule(parse_ctx *c, json_t *e) {
        rule_parse rp = { 0 };
        int r = jread_expect(&c->j, e, json_is_object(e), "an object", RULE_EXAMPLE);
        if (r >= 0)
                r = policy_json_fields(c, e, rule_fields, ELEMENTSOF(rule_fields), RULE_EXAMPLE,
                                       &rp);
        if (r >= 0 && (!rp.words.n || !rp.action_set))
                r = jread_fail(&c->j, false, "write " RULE_EXAMPLE,
                               "a command rule needs 'command' and 'action'");
        if (r >= 0 && (r = policy_add_command_rule(c->layer, rp.words.v, rp.ask, rp.modes)) < 0)
                r = policy_json_fail_errno(c, r);
        strv_done(&rp.words);
        return r;
}

int policy_json_command_policy(parse_ctx *c, json_t *v, void *target) {
        int r = jread_expect(&c->j, v, json_is_array(v), "an array", "[" RULE_EXAMPLE "]");
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) {
                if (r < 0)
                        break;
                jread_push_index(&c->j, i);
                r = parse_rule(c, e);
                jread_pop(&c->j);
        }
        return r;
}

void *policy_command_rules_to_json(const cordon_policy *p) {
        json_t *a = json_array();
        for (size_t i = 0; a && i < p->n_command_rules; i++) {
                const policy_command_rule *r = &p->command_rules[i];
                json_t *words = json_array(), *modes = json_array();
                for (size_t k = 0; words && k < r->words.n; k++)
                        (void) json_array_append_new(words, json_string(r->words.v[k]));
                for (int m = 0; modes && m < 3; m++)
                        if (r->modes & (1u << m))
                                (void) json_array_append_new(
                                        modes, json_string(cordon_mode_to_string((cordon_mode) m)));
                json_t *o = json_pack("{s:o?, s:s, s:o?}", "command", words, "action",
                                      r->ask ? "ask" : "refuse", "modes", modes);
                if (!o || json_array_append_new(a, o) < 0) {
                        json_decref(a);
                        return NULL;
                }
        }
        return a;
}
