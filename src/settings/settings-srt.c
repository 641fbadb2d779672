/* SPDX-License-Identifier: Apache-2.0 */
/* The Node sandbox runtime's settings (`~/.srt-settings.json`, @anthropic-ai/sandbox-runtime's
 * SandboxRuntimeConfig) translated into a cordon layer (docs/settings.md has the table).
 *
 * That runtime silently strips keys it does not know; cordon does not. Every key is either
 * translated, accepted because it asks for nothing (false, empty), or refused as one cordon cannot
 * honour here — unless the file lists it in "cordon": {"bestEffort": [...]} (a member the runtime
 * itself ignores), in which case it is left out with a warning. Unknown keys are always errors.
 * Where a best-effort key is dropped the result is stricter than the file asked for, except where
 * the list says so (dropping a deny entry cordon cannot express). */
#include <jansson.h>
#include <stdio.h>

#include "policy/json-read.h"
#include "settings/settings.h"

typedef struct srt_ctx {
        jread *c;
        settings_file *f;
        const char *cwd, *home;
        json_t *best_effort; /* the cordon.bestEffort array, or NULL */
        bool cwd_writable;   /* an allowWrite entry covers the current directory */
        bool deny_all;       /* network.deniedDomains holds "*" */
        bool allowed_set;    /* network.allowedDomains is present */
        size_t n_allowed;    /* ... with this many entries */
} srt_ctx;

typedef int (*srt_member_fn)(srt_ctx *x, json_t *v, const char *key);

#define BEST_EFFORT_HINT_FMT                                                                        \
        "remove it, or list \"%s\" in \"cordon\": {\"bestEffort\": [...]} to have it left out "  \
        "with a warning"

/* ---- best-effort keys ------------------------------------------------------------------------------ */

/* Keys that may be marked best-effort: the ones cordon can refuse. Anything else in the list is
 * an error (a key cordon honours, or a typo). */
static const char *const best_effort_keys[] = {
        "filesystem.disabled", "filesystem.allowRead", "filesystem.allowGitConfig",
        "filesystem.allowWrite", "filesystem.denyRead", "filesystem.denyWrite",
        "network.deniedDomains", "network.allowUnixSockets", "network.deniedDomainReasons", "network.allowAllDomains",
        "network.allowAllUnixSockets", "network.allowLocalBinding", "network.allowMachLookup",
        "network.httpProxyPort", "network.socksProxyPort", "network.mitmProxy",
        "network.tlsTerminate", "network.parentProxy", "credentials.files", "credentials.envVars",
        "credentials.allowPlaintextInject", "credentials.awsPairs", "credentials.sigv4",
        "ignoreViolations", "enableWeakerNestedSandbox", "enableWeakerNetworkIsolation",
        "allowAppleEvents", "allowPty", "ripgrep", "mandatoryDenySearchDepth", "seccomp",
        "bwrapPath", "socatPath", "windows", "git",
};

static bool marked_best_effort(const srt_ctx *x, const char *key) {
        size_t i;
        json_t *e;
        json_array_foreach(x->best_effort, i, e)
                if (json_is_string(e) && strcmp(json_string_value(e), key) == 0)
                        return true;
        return false;
}

static int oom(srt_ctx *x) {
        return cordon_set_error(x->c->err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
}

/* `key` asks for something cordon cannot honour: an error, or with the best-effort mark a note
 * and nothing applied. `value` (may be NULL) names the item for the note. */
static int not_honoured(srt_ctx *x, const char *key, const char *value, const char *why) {
        if (!marked_best_effort(x, key)) {
                char hint[320];
                (void) snprintf(hint, sizeof(hint), BEST_EFFORT_HINT_FMT, key);
                return jread_fail(x->c, false, hint, "cordon cannot honour this: %s", why);
        }
        json_pos pos = { 0, 0 };
        (void) jread_position(x->c, false, &pos);
        char note[512];
        (void) snprintf(note, sizeof(note), "not honoured (marked best-effort): %s", why);
        int r = settings_file_note(x->f, key, value, note, pos);
        return r == -ENOMEM ? oom(x) : r == -E2BIG ? jread_fail(x->c, false, "use fewer entries",
                                                                "too many best-effort notes")
                                                   : 0;
}

/* A value that asks for nothing: false, null, 0-length array or object. */
static bool asks_nothing(const json_t *v) {
        return json_is_false(v) || json_is_null(v) || (json_is_array(v) && !json_array_size(v)) ||
               (json_is_object(v) && !json_object_size(v));
}

static int parse_cordon_member(srt_ctx *x, json_t *v) {
        static const char *const keys[] = { "bestEffort" };
        int r = jread_expect(x->c, v, json_is_object(v), "an object",
                             "\"cordon\": {\"bestEffort\": [\"network.allowLocalBinding\"]}");
        const char *key;
        json_t *m;
        json_object_foreach(v, key, m) {
                if (r < 0)
                        break;
                jread_push_key(x->c, key);
                r = strcmp(key, "bestEffort") != 0 ? jread_unknown_key(x->c, keys, 1)
                    : jread_expect(x->c, m, json_is_array(m), "an array of srt key names",
                                   "[\"network.allowLocalBinding\"]");
                size_t i;
                json_t *e;
                json_array_foreach(m, i, e) {
                        if (r < 0)
                                break;
                        jread_push_index(x->c, i);
                        r = jread_expect(x->c, e, json_is_string(e), "a string",
                                         "\"network.allowLocalBinding\"");
                        if (r >= 0)
                                r = jread_check_enum(x->c, json_string_value(e),
                                                     best_effort_keys,
                                                     ELEMENTSOF(best_effort_keys),
                                                     "an srt key cordon may leave out (it is "
                                                     "honoured, or unknown)");
                        jread_pop(x->c);
                }
                jread_pop(x->c);
        }
        if (r >= 0)
                x->best_effort = json_object_get(v, "bestEffort");
        return r;
}

/* ---- paths ------------------------------------------------------------------------------------------ */

/* "~" and "~/x" name the home directory, as in the runtime; a relative path is resolved against
 * the current directory (the runtime uses process.cwd()). Only leading "." and ".." components
 * are resolved here, which is exact because cwd comes from getcwd(3) and holds no symlinks; a
 * ".." anywhere else is left for policy_check_path to refuse. */
static int make_absolute(srt_ctx *x, const char *in, char **ret) {
        if (in[0] == '~')
                return asprintf(ret, "%s%s", x->home, in + 1) < 0 ? -ENOMEM : 0;
        if (in[0] == '/')
                return (*ret = strdup(in)) ? 0 : -ENOMEM;
        x->f->used_cwd = true;
        size_t base = strlen(x->cwd);
        const char *rest = in;
        for (;;) {
                size_t len = strcspn(rest, "/");
                if (len == 2 && rest[0] == '.' && rest[1] == '.') {
                        while (base > 1 && x->cwd[base - 1] != '/')
                                base--;
                        while (base > 1 && x->cwd[base - 1] == '/')
                                base--;
                } else if (!(len == 1 && rest[0] == '.'))
                        break;
                rest += len;
                rest += strspn(rest, "/");
        }
        bool root = base == 1;
        return asprintf(ret, "%.*s%s%s", (int) base, x->cwd, root || !*rest ? "" : "/", rest) < 0
                       ? -ENOMEM
                       : 0;
}

typedef enum srt_path_kind {
        SRT_PATH_LITERAL, /* allowWrite, allowUnixSockets: every character literal */
        SRT_PATH_DENY,    /* denyRead, denyWrite, credential files: '*' and '?' make a glob */
} srt_path_kind;

/* One path entry: 1 with the normalised absolute path in *ret, 0 when left out as best-effort,
 * or -errno with the error set. */
static int srt_path(srt_ctx *x, const char *s, srt_path_kind kind, const char *key, char **ret) {
        char shown[160];
        if (!*s)
                return jread_fail(x->c, false, "remove the empty entry", "the path is empty");
        if (s[0] == '~' && s[1] && s[1] != '/')
                return jread_fail(x->c, false, "write the path out, or use \"~/...\"",
                                  "'%s': ~user paths are not supported",
                                  jread_shorten(s, shown, sizeof(shown)));
        _cleanup_free_ char *abs = NULL;
        if (make_absolute(x, s, &abs) < 0)
                return oom(x);
        /* The runtime reads a trailing slash-star-star as "the directory and everything in it", which is
         * what a cordon path rule means already. */
        size_t n = strlen(abs);
        if (n > 3 && strcmp(abs + n - 3, "/**") == 0)
                abs[n - 3] = '\0';
        if (strpbrk(abs, "[]"))
                return jread_fail(x->c, false, "name the path without brackets",
                                  "'%s': '[' and ']' are not supported in translated paths",
                                  jread_shorten(s, shown, sizeof(shown)));
        int r = 0;
        if (strpbrk(abs, "*?") && kind == SRT_PATH_LITERAL)
                r = not_honoured(x, key, s, "a glob here would grant a literal path (the runtime "
                                            "skips such globs on Linux); name the directories");
        else if (strstr(abs, "**"))
                r = not_honoured(x, key, s, "'**' (any depth) cannot be expressed: '*' never "
                                            "matches '/' in cordon's globs");
        else {
                const char *why = policy_check_path(abs);
                if (why)
                        return jread_fail(x->c, false,
                                          "use an absolute path, \"~/...\" or a path relative to "
                                          "the current directory, without '..' inside",
                                          "'%s' %s", jread_shorten(s, shown, sizeof(shown)), why);
                return path_normalize(abs, ret) < 0 ? oom(x) : 1;
        }
        return r < 0 ? r : 0;
}

static int list_full(srt_ctx *x, int r) {
        if (r == -E2BIG)
                return jread_fail(x->c, false, "split the list", "too many entries (at most %u)",
                                  POLICY_MAX_LIST);
        return r == -ENOMEM ? oom(x)
                            : jread_fail(x->c, false, "check the value", "cordon refused it");
}

/* Applies one translated item to the layer and remembers where it came from. */
static int add_item(srt_ctx *x, settings_field field, const char *item, const char *key) {
        static const struct {
                settings_field field;
                int (*add)(cordon_policy *p, const char *s);
        } adders[] = {
                { SF_DENY_READ, cordon_policy_add_deny_read },
                { SF_DENY_WRITE, cordon_policy_add_deny_write },
                { SF_UNIX_SOCKETS, policy_add_unix_socket },
                { SF_EGRESS_ALLOW, cordon_policy_add_egress_allow },
                { SF_EGRESS_DENY, cordon_policy_add_egress_deny },
                { SF_ENV_SCRUB, cordon_policy_env_scrub },
        };
        int r = -EINVAL;
        if (field == SF_BINDS) {
                r = cordon_policy_add_bind(x->f->layer, item, false);
                if (path_startswith(x->cwd, item))
                        x->cwd_writable = true;
        }
        for (size_t i = 0; i < ELEMENTSOF(adders); i++)
                if (adders[i].field == field)
                        r = adders[i].add(x->f->layer, item);
        if (r >= 0)
                r = settings_file_origin(x->f, field, item, key);
        return r < 0 ? list_full(x, r) : 0;
}

/* Runs `each` on every element of an array member. */
static int for_each(srt_ctx *x, json_t *v, const char *example,
                    int (*each)(srt_ctx *x, json_t *e, const char *key, void *data),
                    const char *key, void *data) {
        int r = jread_expect(x->c, v, json_is_array(v), "an array", example);
        if (r < 0)
                return r;
        if (json_array_size(v) > POLICY_MAX_LIST)
                return jread_fail(x->c, false, "split the list", "has %zu entries; at most %u",
                                  json_array_size(v), POLICY_MAX_LIST);
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) {
                jread_push_index(x->c, i);
                r = each(x, e, key, data);
                jread_pop(x->c);
                if (r < 0)
                        return r;
        }
        return 0;
}

typedef struct path_list {
        settings_field field;
        srt_path_kind kind;
} path_list;

static int each_path(srt_ctx *x, json_t *e, const char *key, void *data) {
        const path_list *pl = data;
        int r = jread_expect(x->c, e, json_is_string(e), "a string", "\"~/project\"");
        _cleanup_free_ char *p = NULL;
        if (r >= 0)
                r = srt_path(x, json_string_value(e), pl->kind, key, &p);
        return r > 0 ? add_item(x, pl->field, p, key) : r;
}

static int parse_paths(srt_ctx *x, json_t *v, const char *key, settings_field field,
                       srt_path_kind kind) {
        path_list pl = { field, kind };
        return for_each(x, v, "[\"~/project\", \"./build\"]", each_path, key, &pl);
}

/* ---- domains ---------------------------------------------------------------------------------------- */

/* The runtime's rules (a name with a dot, "localhost", or "*." and at least two labels; an
 * optional ":port"), then cordon's own character check. */
static const char *srt_domain_why(const char *s, const char **hint) {
        const char *why = settings_check_domain(s, hint);
        if (why)
                return why;
        *hint = "write \"example.com\", \"*.example.com\" or \"example.com:443\"";
        const char *colon = strchr(s, ':');
        size_t hl = colon ? (size_t) (colon - s) : strlen(s);
        if (colon) {
                const char *p = colon + 1;
                uint64_t port = 0;
                if (!*p || strspn(p, "0123456789") != strlen(p) || strlen(p) > 5 ||
                    parse_u64(p, &port) < 0 || port < 1 || port > 65535)
                        return "has a bad port (1-65535)";
        }
        const char *h = s;
        if (hl == 9 && strncmp(h, "localhost", 9) == 0)
                return policy_check_host_pattern(s);
        if (hl >= 2 && h[0] == '*' && h[1] == '.') {
                h += 2;
                hl -= 2;
                if (!memchr(h, '.', hl))
                        return "is too broad: '*.' needs at least two labels after it "
                               "(\"*.example.com\")";
        }
        if (memchr(h, '*', hl))
                return "may hold '*' only as a leading \"*.\"";
        if (!memchr(h, '.', hl) || h[0] == '.' || h[hl - 1] == '.')
                return "is not a domain name (it needs a dot and no dot at either end)";
        return policy_check_host_pattern(s);
}

static int srt_domain(srt_ctx *x, json_t *e) {
        int r = jread_expect(x->c, e, json_is_string(e), "a string", "\"*.example.com\"");
        if (r < 0)
                return r;
        const char *hint = NULL, *why = srt_domain_why(json_string_value(e), &hint);
        char shown[160];
        if (why)
                return jread_fail(x->c, false, hint, "'%s' %s",
                                  jread_shorten(json_string_value(e), shown, sizeof(shown)), why);
        return 0;
}

/* ---- network ---------------------------------------------------------------------------------------- */

static int each_allowed(srt_ctx *x, json_t *e, const char *key, void *data) {
        int r = srt_domain(x, e);
        return r < 0 ? r : add_item(x, SF_EGRESS_ALLOW, json_string_value(e), key);
}

static int each_denied(srt_ctx *x, json_t *e, const char *key, void *data) {
        if (json_is_string(e) && strcmp(json_string_value(e), "*") == 0) {
                x->deny_all = true; /* deny-all: exactly cordon's network off */
                return 0;
        }
        if (json_is_string(e) && strncmp(json_string_value(e), "*:", 2) == 0)
                return not_honoured(x, key, json_string_value(e),
                                    "a per-port deny-all (\"*:22\") has no cordon equivalent");
        int r = srt_domain(x, e);
        return r < 0 ? r : add_item(x, SF_EGRESS_DENY, json_string_value(e), key);
}


static int parse_allowed(srt_ctx *x, json_t *v, const char *key) {
        x->allowed_set = true;
        x->n_allowed = json_is_array(v) ? json_array_size(v) : 0;
        return for_each(x, v, "[\"github.com\", \"*.npmjs.org\"]", each_allowed, key, NULL);
}

static int parse_denied(srt_ctx *x, json_t *v, const char *key) {
        return for_each(x, v, "[\"tracker.example.com\"]", each_denied, key, NULL);
}

static int parse_unix_sockets(srt_ctx *x, json_t *v, const char *key) {
        return parse_paths(x, v, key, SF_UNIX_SOCKETS, SRT_PATH_LITERAL);
}

/* cordon's allowlist is always strict (there is no ask callback): both values are honoured. */
static int parse_strict(srt_ctx *x, json_t *v, const char *key) {
        return 0;
}

/* ---- the member tables --------------------------------------------------------------------------- */

typedef enum srt_type {
        T_BOOL,
        T_ARRAY,
        T_OBJECT,
        T_INT,
        T_STRING,
} srt_type;

struct srt_member {
        const char *key;
        srt_type type;
        srt_member_fn parse; /* NULL: not honoured unless it asks for nothing */
        const char *why;
};

static bool has_type(const json_t *v, srt_type t) {
        switch (t) {
        case T_BOOL:
                return json_is_boolean(v);
        case T_ARRAY:
                return json_is_array(v);
        case T_OBJECT:
                return json_is_object(v);
        case T_INT:
                return json_is_integer(v);
        case T_STRING:
                return json_is_string(v);
        default:
                return false;
        }
}

static const char *type_phrase(srt_type t, const char **example) {
        static const char *const what[] = { "a boolean", "an array", "an object", "an integer",
                                            "a string" };
        static const char *const ex[] = { "false", "[]", "{}", "8080", "\"/usr/bin/x\"" };
        *example = ex[t];
        return what[t];
}

static int parse_member(srt_ctx *x, const struct srt_member *m, json_t *v, const char *full) {
        const char *example;
        const char *what = type_phrase(m->type, &example);
        int r = jread_expect(x->c, v, has_type(v, m->type), what, example);
        if (r < 0)
                return r;
        if (m->parse)
                return m->parse(x, v, full);
        /* A value that asks for nothing (false, [], {}) is honoured by doing nothing. */
        return asks_nothing(v) ? 0 : not_honoured(x, full, NULL, m->why);
}

static int parse_section(srt_ctx *x, json_t *obj, const char *section,
                         const struct srt_member *members, size_t n) {
        const char *key;
        json_t *v;
        json_object_foreach(obj, key, v) {
                const struct srt_member *m = NULL;
                for (size_t i = 0; i < n && !m; i++)
                        if (strcmp(members[i].key, key) == 0)
                                m = &members[i];
                char full[96];
                (void) snprintf(full, sizeof(full), "%s%s%s", section ? section : "",
                                section ? "." : "", m ? m->key : "");
                jread_push_key(x->c, key);
                int r;
                if (m)
                        r = parse_member(x, m, v, full);
                else {
                        const char *names[32];
                        size_t k = 0;
                        for (; k < n && k < ELEMENTSOF(names); k++)
                                names[k] = members[k].key;
                        r = jread_unknown_key(x->c, names, k);
                }
                jread_pop(x->c);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- sections ------------------------------------------------------------------------------------- */

static const struct srt_member network_members[] = {
        { "allowedDomains", T_ARRAY, parse_allowed, NULL },
        { "deniedDomains", T_ARRAY, parse_denied, NULL },
        { "allowUnixSockets", T_ARRAY, parse_unix_sockets, NULL },
        { "strictAllowlist", T_BOOL, parse_strict, NULL },
        { "deniedDomainReasons", T_OBJECT, NULL, "cordon's refusals carry no custom reasons" },
        { "allowAllDomains", T_BOOL, NULL,
          "cordon has no allow-all: every destination must be listed" },
        { "allowAllUnixSockets", T_BOOL, NULL,
          "cordon allows Unix sockets by path only (network.allowUnixSockets)" },
        { "allowLocalBinding", T_BOOL, NULL,
          "the command has its own loopback: a server it starts is not reachable from the host" },
        { "allowMachLookup", T_ARRAY, NULL, "XPC/Mach services exist on macOS only" },
        { "httpProxyPort", T_INT, NULL, "cordon always runs its own filtering proxy" },
        { "socksProxyPort", T_INT, NULL, "cordon always runs its own filtering proxy" },
        { "mitmProxy", T_OBJECT, NULL, "cordon has no upstream MITM proxy routing" },
        { "tlsTerminate", T_OBJECT, NULL, "cordon's proxy does not terminate TLS" },
        { "parentProxy", T_OBJECT, NULL,
          "not translated: cordon's parent proxy is the egressUpstream key" },
};

static int parse_network(srt_ctx *x, json_t *v, const char *key) {
        return parse_section(x, v, "network", network_members, ELEMENTSOF(network_members));
}

static int parse_deny_read(srt_ctx *x, json_t *v, const char *key) {
        return parse_paths(x, v, key, SF_DENY_READ, SRT_PATH_DENY);
}

static int parse_deny_write(srt_ctx *x, json_t *v, const char *key) {
        return parse_paths(x, v, key, SF_DENY_WRITE, SRT_PATH_DENY);
}

static int parse_allow_write(srt_ctx *x, json_t *v, const char *key) {
        return parse_paths(x, v, key, SF_BINDS, SRT_PATH_LITERAL);
}

static const struct srt_member filesystem_members[] = {
        { "denyRead", T_ARRAY, parse_deny_read, NULL },
        { "allowWrite", T_ARRAY, parse_allow_write, NULL },
        { "denyWrite", T_ARRAY, parse_deny_write, NULL },
        { "allowRead", T_ARRAY, NULL,
          "cordon has no read carve-outs inside denied paths (what denyRead hides stays "
          "hidden)" },
        { "allowGitConfig", T_BOOL, NULL, "cordon always protects .git/config" },
        { "disabled", T_BOOL, NULL,
          "cordon cannot turn the file rules off on their own (only danger-full-access turns "
          "off the whole sandbox)" },
};

static int parse_filesystem(srt_ctx *x, json_t *v, const char *key) {
        return parse_section(x, v, "filesystem", filesystem_members,
                             ELEMENTSOF(filesystem_members));
}

/* ---- permissions ------------------------------------------------------------------------------------ */

/* Claude Code's read narrowing (the runtime reads it from the same file): true narrows reads to
 * the working directories, as blockReadsOutsideWorkdirs does; false asks for nothing. */
static int parse_block_reads(srt_ctx *x, json_t *v, const char *key) {
        int r = policy_set_block_reads(x->f->layer, json_is_true(v));
        if (r >= 0)
                r = settings_file_origin(x->f, SF_BLOCK_READS, NULL, key);
        return r < 0 ? list_full(x, r) : 0;
}

static const struct srt_member permission_members[] = {
        { "blockReadsOutsideWorkingDirectories", T_BOOL, parse_block_reads, NULL },
};

static int parse_permissions(srt_ctx *x, json_t *v, const char *key) {
        return parse_section(x, v, "permissions", permission_members,
                             ELEMENTSOF(permission_members));
}

/* ---- credentials ------------------------------------------------------------------------------------ */

/* The members of one credentials entry; masking-only members are type-checked and otherwise
 * irrelevant (the runtime ignores them for mode "deny" too). */
static const struct {
        const char *key;
        srt_type type;
} credential_keys[] = {
        { "path", T_STRING },          { "name", T_STRING },      { "mode", T_STRING },
        { "extract", T_STRING },       { "onExtractNoMatch", T_STRING },
        { "decode", T_STRING },        { "maskClaims", T_ARRAY }, { "maskDuplicates", T_BOOL },
        { "injectHosts", T_ARRAY },
};

/* Checks an entry's members; `id_key` ("path" or "name") and "mode" are required. */
static int check_credential(srt_ctx *x, json_t *e, const char *id_key, const char *example) {
        int r = jread_expect(x->c, e, json_is_object(e), "an object", example);
        const char *key, *names[ELEMENTSOF(credential_keys)];
        json_t *v;
        size_t n = 0;
        const char *other = strcmp(id_key, "path") == 0 ? "name" : "path";
        for (size_t i = 0; i < ELEMENTSOF(credential_keys); i++)
                if (strcmp(credential_keys[i].key, other) != 0)
                        names[n++] = credential_keys[i].key;
        json_object_foreach(e, key, v) {
                if (r < 0)
                        break;
                size_t k = 0;
                while (k < n && strcmp(names[k], key) != 0)
                        k++;
                jread_push_key(x->c, key);
                if (k == n)
                        r = jread_unknown_key(x->c, names, n);
                for (size_t i = 0; r >= 0 && i < ELEMENTSOF(credential_keys); i++)
                        if (strcmp(credential_keys[i].key, key) == 0) {
                                const char *ex, *what = type_phrase(credential_keys[i].type, &ex);
                                r = jread_expect(x->c, v, has_type(v, credential_keys[i].type),
                                                 what, ex);
                        }
                jread_pop(x->c);
        }
        const char *required[] = { id_key, "mode" };
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(required); i++)
                if (!json_object_get(e, required[i]))
                        r = jread_fail(x->c, false, example, "the entry needs '%s'",
                                       required[i]);
        return r;
}

/* "deny" is translated; "mask" (a sentinel the proxy swaps for the real value) is not
 * implemented: marked best-effort it degrades to "deny", as the runtime itself does on macOS,
 * which is stricter. Returns 1 to apply as deny, or -errno. */
static int credential_mode(srt_ctx *x, json_t *e, const char *key, const char *id) {
        const char *mode = json_string_value(json_object_get(e, "mode"));
        jread_push_key(x->c, "mode");
        int r = 1;
        if (strcmp(mode, "mask") == 0)
                r = not_honoured(x, key, id,
                                 "masking is not implemented; marked best-effort, the secret is "
                                 "denied instead");
        else if (strcmp(mode, "deny") != 0)
                r = jread_fail(x->c, false, "use \"deny\" or \"mask\"", "unknown mode '%s'",
                               mode);
        jread_pop(x->c);
        return r < 0 ? r : 1;
}

static int each_credential_file(srt_ctx *x, json_t *e, const char *key, void *data) {
        static const char example[] = "{\"path\": \"~/.config/tool/token\", \"mode\": \"deny\"}";
        int r = check_credential(x, e, "path", example);
        if (r < 0 || (r = credential_mode(x, e, key, json_string_value(json_object_get(e, "path")))) < 0)
                return r;
        _cleanup_free_ char *p = NULL;
        jread_push_key(x->c, "path");
        r = srt_path(x, json_string_value(json_object_get(e, "path")), SRT_PATH_DENY, key, &p);
        jread_pop(x->c);
        return r > 0 ? add_item(x, SF_DENY_READ, p, key) : r;
}

static int each_credential_env(srt_ctx *x, json_t *e, const char *key, void *data) {
        static const char example[] = "{\"name\": \"GITHUB_TOKEN\", \"mode\": \"deny\"}";
        int r = check_credential(x, e, "name", example);
        if (r < 0)
                return r;
        const char *name = json_string_value(json_object_get(e, "name")), *why;
        if ((why = policy_check_env_name(name))) {
                jread_push_key(x->c, "name");
                r = jread_fail(x->c, false, "use a variable name such as \"API_TOKEN\"",
                               "variable name %s", why);
                jread_pop(x->c);
                return r;
        }
        if ((r = credential_mode(x, e, key, name)) < 0)
                return r;
        /* A variable name is a glob matching only itself: scrubbed from the environment. */
        return add_item(x, SF_ENV_SCRUB, name, key);
}

static int parse_credential_files(srt_ctx *x, json_t *v, const char *key) {
        return for_each(x, v, "[{\"path\": \"~/.netrc\", \"mode\": \"deny\"}]",
                        each_credential_file, key, NULL);
}

static int parse_credential_envs(srt_ctx *x, json_t *v, const char *key) {
        return for_each(x, v, "[{\"name\": \"NPM_TOKEN\", \"mode\": \"deny\"}]",
                        each_credential_env, key, NULL);
}

static const struct srt_member credential_members[] = {
        { "files", T_ARRAY, parse_credential_files, NULL },
        { "envVars", T_ARRAY, parse_credential_envs, NULL },
        { "allowPlaintextInject", T_BOOL, NULL, "it applies to masking, which cordon lacks" },
        { "awsPairs", T_ARRAY, NULL, "it applies to masking, which cordon lacks" },
        { "sigv4", T_OBJECT, NULL, "it applies to masking, which cordon lacks" },
};

static int parse_credentials(srt_ctx *x, json_t *v, const char *key) {
        return parse_section(x, v, "credentials", credential_members,
                             ELEMENTSOF(credential_members));
}

/* ---- the document ------------------------------------------------------------------------------------ */

static int parse_skip(srt_ctx *x, json_t *v, const char *key) {
        return 0; /* "cordon": read first, by settings_srt_parse */
}

static const struct srt_member top_members[] = {
        { "network", T_OBJECT, parse_network, NULL },
        { "filesystem", T_OBJECT, parse_filesystem, NULL },
        { "credentials", T_OBJECT, parse_credentials, NULL },
        { "permissions", T_OBJECT, parse_permissions, NULL },
        { "cordon", T_OBJECT, parse_skip, NULL },
        { "ignoreViolations", T_OBJECT, NULL,
          "cordon reports every violation; it has no per-command silencing" },
        { "enableWeakerNestedSandbox", T_BOOL, NULL, "cordon has no weaker nested mode" },
        { "enableWeakerNetworkIsolation", T_BOOL, NULL, "it is a macOS-only weakening" },
        { "allowAppleEvents", T_BOOL, NULL, "Apple Events exist on macOS only" },
        { "allowPty", T_BOOL, NULL, "it is a macOS-only Seatbelt rule" },
        { "ripgrep", T_OBJECT, NULL, "cordon does not use ripgrep" },
        { "mandatoryDenySearchDepth", T_INT, NULL,
          "cordon protects the mandatory names at each writable root; it has no search depth" },
        { "seccomp", T_OBJECT, NULL, "cordon builds its own seccomp filter" },
        { "bwrapPath", T_STRING, NULL, "cordon does not use bubblewrap" },
        { "socatPath", T_STRING, NULL, "cordon does not use socat" },
        { "windows", T_OBJECT, NULL, "it configures the Windows sandbox" },
        { "git", T_OBJECT, NULL, "cordon does not inject git configuration" },
};

bool settings_srt_key(const char *key) {
        for (size_t i = 0; i < ELEMENTSOF(top_members); i++)
                if (strcmp(top_members[i].key, key) == 0)
                        return true;
        return false;
}

/* What the file implies beyond its entries: the runtime writes nowhere that allowWrite does not
 * name, so an uncovered current directory (cordon's default workspace) becomes read-only; an
 * empty allowedDomains means no network, non-empty means through the proxy; "*" in
 * deniedDomains means none at all. */
static int finish(srt_ctx *x) {
        cordon_policy *l = x->f->layer;
        int r = 0;
        if (!x->cwd_writable) {
                x->f->used_cwd = true;
                r = cordon_policy_add_bind(l, x->cwd, true);
                if (r >= 0)
                        r = settings_file_origin(x->f, SF_BINDS, x->cwd, "filesystem.allowWrite");
        }
        if (r >= 0 && (x->allowed_set || x->deny_all)) {
                r = cordon_policy_set_network_enabled(l, x->n_allowed > 0 && !x->deny_all);
                if (r >= 0)
                        r = settings_file_origin(x->f, SF_NETWORK, NULL,
                                                 x->deny_all ? "network.deniedDomains"
                                                             : "network.allowedDomains");
        }
        return r < 0 ? list_full(x, r) : 0;
}

int settings_srt_parse(settings_file *f, jread *c, void *root, const char *cwd, const char *home) {
        srt_ctx x = { .c = c, .f = f, .cwd = cwd, .home = home };
        json_t *doc = root, *marks = json_object_get(doc, "cordon");
        int r = 0;
        if (marks) {
                jread_push_key(c, "cordon");
                r = parse_cordon_member(&x, marks);
                jread_pop(c);
        }
        if (r >= 0)
                r = parse_section(&x, doc, NULL, top_members, ELEMENTSOF(top_members));
        return r < 0 ? r : finish(&x);
}
