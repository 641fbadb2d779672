/* SPDX-License-Identifier: Apache-2.0 */
/* The decoder's verdict as JSON and as text (see explain.h; the JSON is documented in
 * docs/explain.md), and the one cleaning function every input string goes through. */
#include "explain/explain.h"

#include <jansson.h>
#include <stdio.h>

#include "util/utf8.h"
#include "util/util.h"

#define NETWORK_NOTE                                                                              \
        "on the native backend every TCP client meets the same rules, proxy variables or not "   \
        "(its names resolve only when allowed); on the landlock backend tools that ignore the "  \
        "proxy variables (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY) cannot connect anywhere, not "    \
        "even to allowed hosts: point them at the proxy"

/* A character that must not reach a terminal or a one-line message: C0 and C1 controls, DEL,
 * and the bidirectional overrides that reorder what a reader sees (U+202A-U+202E,
 * U+2066-U+2069). */
static bool unsafe_char(const unsigned char *c, size_t len) {
        if (len == 1)
                return c[0] < 0x20 || c[0] == 0x7f;
        if (len == 2)
                return c[0] == 0xc2 && c[1] < 0xa0;
        return len == 3 && c[0] == 0xe2 &&
               ((c[1] == 0x80 && c[2] >= 0xaa && c[2] <= 0xae) ||
                (c[1] == 0x81 && c[2] >= 0xa6 && c[2] <= 0xa9));
}

char *explain_clean_text(const char *s, size_t len, size_t max) {
        char *out = malloc(max + 4);
        if (!out)
                return NULL;
        size_t o = 0, i = 0;
        while (i < len) {
                size_t n = utf8_char_len(s + i, len - i);
                size_t step = n ? n : 1;
                if (o + step > max) {
                        memcpy(out + o, "...", 3);
                        o += 3;
                        break;
                }
                if (n == 0 || unsafe_char((const unsigned char *) s + i, n))
                        out[o++] = '?';
                else {
                        memcpy(out + o, s + i, n);
                        o += n;
                }
                i += step;
        }
        out[o] = '\0';
        return out;
}

/* ---- JSON --------------------------------------------------------------------------------- */

static json_t *str_or_null(const char *s) {
        return s ? json_string(s) : json_null();
}

static json_t *violation_json(const explain_violation *v) {
        json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:I, s:s, s:s, s:o, s:s}", "action",
                              v->action, "target", v->target, "rule", v->rule, "syscall",
                              v->syscall, "count", (json_int_t) v->count, "evidence", "observed",
                              "summary", v->summary, "change", str_or_null(v->change), "why",
                              v->why);
        if (o && v->reason && v->reason[0])
                (void) json_object_set_new(o, "reason", json_string(v->reason));
        return o;
}

static json_t *hints_json(const cordon_explanation *x) {
        json_t *a = json_array();
        for (unsigned k = 0; a && x->hint_source && k < EXPLAIN_HINT_KINDS; k++) {
                const explain_hint *h = &x->hint_source->hints[k];
                if (h->count == 0)
                        continue;
                (void) json_array_append_new(
                        a, json_pack("{s:s, s:s, s:s, s:I, s:s}", "evidence", "inferred", "kind",
                                     explain_hint_defs[k].kind, "line", h->line, "count",
                                     (json_int_t) h->count, "note", explain_hint_defs[k].note));
        }
        return a;
}

/* Fields present only when known. */
static void optional_json(const cordon_explanation *x, json_t *o) {
        if (x->session_id && x->session_id[0])
                (void) json_object_set_new(o, "sessionId", json_string(x->session_id));
        if (x->requested_backend && x->requested_backend[0])
                (void) json_object_set_new(o, "requestedBackend",
                                           json_string(x->requested_backend));
        if (x->backend && x->backend[0])
                (void) json_object_set_new(o, "backend", json_string(x->backend));
        if (x->result_exit_code >= 0)
                (void) json_object_set_new(o, "exitCode", json_integer(x->result_exit_code));
        if (x->signal)
                (void) json_object_set_new(o, "signal", json_string(x->signal));
        if (x->start_ms >= 0 && x->end_ms >= x->start_ms)
                (void) json_object_set_new(o, "durationMs", json_integer(x->end_ms - x->start_ms));
        if (x->killed_reason)
                (void) json_object_set_new(o, "killed",
                                           json_pack("{s:s, s:o}", "reason", x->killed_reason,
                                                     "change", str_or_null(x->killed_change)));
        if (x->error_code)
                (void) json_object_set_new(o, "error",
                                           json_pack("{s:s, s:s}", "code", x->error_code,
                                                     "message", x->error_message));
}

static char *explanation_json(const cordon_explanation *x) {
        json_t *o = json_pack("{s:s, s:s}", "status", cordon_outcome_to_string(x->outcome),
                              "reason", x->reason);
        json_t *v = json_array();
        json_t *notes = json_array();
        char *out = NULL;
        if (o && v && notes) {
                optional_json(x, o);
                for (size_t i = 0; i < x->n_v; i++)
                        (void) json_array_append_new(v, violation_json(&x->v[i]));
                (void) json_object_set(o, "violations", v);
                if (x->v_not_listed)
                        (void) json_object_set_new(o, "violationsNotListed",
                                                   json_integer((json_int_t) x->v_not_listed));
                (void) json_object_set_new(o, "inferred", hints_json(x));
                if (x->network_note)
                        (void) json_array_append_new(notes, json_string(NETWORK_NOTE));
                (void) json_object_set(o, "notes", notes);
                out = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
        }
        json_decref(o);
        json_decref(v);
        json_decref(notes);
        return out;
}

/* ---- text --------------------------------------------------------------------------------- */

static void text_violations(const cordon_explanation *x, FILE *f) {
        if (x->n_v == 0)
                return;
        fprintf(f, "observed refusals:\n");
        for (size_t i = 0; i < x->n_v; i++) {
                const explain_violation *v = &x->v[i];
                fprintf(f, "  - %s", v->summary);
                if (v->syscall[0] && strcmp(v->syscall, v->target) != 0)
                        fprintf(f, " [%s]", v->syscall);
                if (v->count > 1)
                        fprintf(f, ", %llu times", (unsigned long long) v->count);
                if (v->change)
                        fprintf(f, "\n    to allow it: %s\n    %s\n", v->change, v->why);
                else
                        fprintf(f, "\n    no policy change allows it: %s\n", v->why);
        }
        if (x->v_not_listed)
                fprintf(f, "  ... and %llu more refusals not listed\n",
                        (unsigned long long) x->v_not_listed);
}

static void text_hints(const cordon_explanation *x, FILE *f) {
        bool header = false;
        for (unsigned k = 0; x->hint_source && k < EXPLAIN_HINT_KINDS; k++) {
                const explain_hint *h = &x->hint_source->hints[k];
                if (h->count == 0)
                        continue;
                if (!header)
                        fprintf(f, "inferred from stderr (NOT observed by the sandbox; it may "
                                   "have other causes):\n");
                header = true;
                fprintf(f, "  - %s: \"%s\"", explain_hint_defs[k].kind, h->line);
                if (h->count > 1)
                        fprintf(f, " (%llu lines)", (unsigned long long) h->count);
                fprintf(f, "\n    %s\n", explain_hint_defs[k].note);
        }
}

static char *explanation_text(const cordon_explanation *x) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);
        if (!f)
                return NULL;
        fprintf(f, "%s: %s\n", cordon_outcome_to_string(x->outcome), x->reason);
        if (x->backend && x->backend[0])
                fprintf(f, "backend: %s\n", x->backend);
        if (x->error_code)
                fprintf(f, "fatal: %s: %s\n", x->error_code, x->error_message);
        if (x->killed_reason)
                fprintf(f, "killed: %s%s%s\n", x->killed_reason[0] ? x->killed_reason : "?",
                        x->killed_change ? "; to allow it: " : "",
                        x->killed_change ? x->killed_change : "");
        text_violations(x, f);
        text_hints(x, f);
        if (x->network_note)
                fprintf(f, "note: %s\n", NETWORK_NOTE);
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

/* ---- the public serializers --------------------------------------------------------------- */

/* Both formats' checks and result (include/cordon/cordon.h: *ret NULL on failure). `fn` names
 * the call in the message. */
static int render(const cordon_explanation *x, char *(*format)(const cordon_explanation *),
                  const char *fn, char **ret, cordon_error *err) {
        if (!ret)
                return cordon_set_error(err, CORDON_USAGE, EINVAL, "%s: ret is NULL", fn);
        *ret = NULL;
        if (!x)
                return cordon_set_error(err, CORDON_USAGE, EINVAL, "%s: no explanation", fn);
        if (!x->finished)
                return cordon_set_error(err, CORDON_USAGE, EINVAL,
                                        "%s: the explanation is not finished; hint: call "
                                        "cordon_explanation_finish() first", fn);
        *ret = format(x);
        return *ret ? 0 : cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
}

int cordon_explanation_to_json(const cordon_explanation *x, char **ret, cordon_error *err) {
        return render(x, explanation_json, "cordon_explanation_to_json", ret, err);
}

int cordon_explanation_to_text(const cordon_explanation *x, char **ret, cordon_error *err) {
        return render(x, explanation_text, "cordon_explanation_to_text", ret, err);
}
