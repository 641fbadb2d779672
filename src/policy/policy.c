/* SPDX-License-Identifier: Apache-2.0 */
/* The policy model: lifecycle, validating setters, layer merging and per-call resolution
 * (docs/policy.md). Pure data: nothing here touches the filesystem. */
#include "policy/policy.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <limits.h>
#include <stdio.h>

#include "policy/egress-pattern.h"
#include "policy/upstream-url.h"
#include "util/globtok.h"

/* ---- validators ----------------------------------------------------------------------------- */

static bool has_control_char(const char *s) {
        for (const unsigned char *c = (const unsigned char *) s; *c; c++)
                if (*c < 0x20 || *c == 0x7f)
                        return true;
        return false;
}

const char *policy_check_path(const char *s) {
        if (!s || !*s)
                return "must not be empty";
        if (strnlen(s, POLICY_MAX_STRING + 1) > POLICY_MAX_STRING)
                return "is longer than 4096 bytes";
        if (!path_is_absolute(s))
                return "must be an absolute path";
        /* Control characters (a newline above all) would forge lines in logs, error messages and
         * mount tables; no real workspace path needs them. */
        if (has_control_char(s))
                return "must not contain control characters";
        _cleanup_free_ char *norm = NULL;
        int r = path_normalize(s, &norm);
        if (r == -EINVAL)
                /* ".." can only be resolved honestly against the filesystem, at plan time; a
                 * lexical guess could point a rule somewhere else than the user meant. */
                return "must not contain '..' components";
        if (r < 0)
                return "is too long";
        return NULL;
}

const char *policy_check_id(const char *s) {
        if (!s || !*s)
                return "must not be empty";
        if (strnlen(s, POLICY_MAX_ID + 1) > POLICY_MAX_ID)
                return "is longer than 256 bytes";
        /* Ids end up in file, cgroup and socket names later: no separators, no spaces, no
         * control characters, nothing that needs quoting. */
        for (const unsigned char *c = (const unsigned char *) s; *c; c++)
                if (*c <= 0x20 || *c >= 0x7f || *c == '/' || *c == '\\')
                        return "may contain only printable ASCII without spaces, '/' or '\\'";
        return NULL;
}

const char *policy_check_name_glob(const char *s) {
        if (!s || !*s)
                return "must not be empty";
        if (strnlen(s, POLICY_MAX_NAME + 1) > POLICY_MAX_NAME)
                return "is longer than 255 bytes";
        if (strchr(s, '/'))
                return "is a file-name glob and must not contain '/'";
        if (has_control_char(s))
                return "must not contain control characters";
        if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
                return "must not be '.' or '..'";
        /* The creation rules and the Seatbelt profile read it with one parser; what that parser
         * flags (an unclosed '[', a reversed range, an unknown class) is a typo that would make
         * a deny name mean something its author did not write. */
        return globtok_check(s, strlen(s));
}

const char *policy_check_env_name(const char *s) {
        if (!s || !*s)
                return "must not be empty";
        if (strnlen(s, POLICY_MAX_NAME + 1) > POLICY_MAX_NAME)
                return "is longer than 255 bytes";
        if (!(s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')))
                return "must match [A-Za-z_][A-Za-z0-9_]*";
        if (strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") !=
            strlen(s))
                return "must match [A-Za-z_][A-Za-z0-9_]*";
        return NULL;
}

const char *policy_check_env_glob(const char *s) {
        if (!s || !*s)
                return "must not be empty";
        if (strnlen(s, POLICY_MAX_NAME + 1) > POLICY_MAX_NAME)
                return "is longer than 255 bytes";
        if (strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_*?[]!^-") !=
            strlen(s))
                return "may contain only letters, digits, '_' and the glob characters *?[]!^-";
        return NULL;
}

const char *policy_check_env_value(const char *s) {
        if (!s)
                return "must be a string";
        if (strnlen(s, POLICY_MAX_ENV_VALUE + 1) > POLICY_MAX_ENV_VALUE)
                return "is longer than 65536 bytes";
        return NULL;
}

const char *policy_check_host_pattern(const char *s) {
        if (!s || !*s)
                return "must not be empty";
        if (strnlen(s, 262) > 261)
                return "is longer than a host name and port can be";
        /* A host, "*.host", "a.*.host", optionally ":port". Refusing everything else here keeps
         * NUL/space/'@'/'/' parser differentials out of the allowlist. */
        if (strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_*:[]") !=
            strlen(s))
                return "may contain only letters, digits and . - _ * : [ ]";
        /* The matcher's own grammar (egress-pattern.h), so a pattern the proxy would refuse at
         * launch is refused where it is written, with its line and column. */
        return egress_check_pattern(s);
}

const char *policy_check_host_name(const char *s) {
        if (!s || !*s)
                return "must not be empty";
        size_t n = strnlen(s, 254);
        if (n > 253)
                return "is longer than a host name can be (253)";
        /* The egress proxy canonicalises again; this keeps the policy file honest. */
        if (strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") != n)
                return "may contain only letters, digits and . - _";
        if (s[0] == '.' || strstr(s, ".."))
                return "has an empty label";
        return NULL;
}

const char *policy_check_ip_address(const char *s) {
        unsigned char buf[sizeof(struct in6_addr)];
        if (!s || !*s)
                return "must not be empty";
        if (inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1)
                return NULL;
        return "is not an IPv4 address (1.2.3.4) or IPv6 address (::1)";
}

const char *policy_check_limit(policy_limit which, uint64_t v) {
        switch (which) {
        case POLICY_LIMIT_TIMEOUT_MS:
                return v >= 1 && v <= POLICY_TIMEOUT_MAX_MS ? NULL
                                                            : "must be between 1ms and 30 days";
        case POLICY_LIMIT_MEMORY_BYTES:
                return v >= POLICY_MEMORY_MIN && v <= POLICY_MEMORY_MAX
                               ? NULL
                               : "must be between 1M and 1P bytes";
        case POLICY_LIMIT_PIDS:
                return v >= 1 && v <= POLICY_PIDS_MAX ? NULL : "must be between 1 and 4194304";
        case POLICY_LIMIT_CPU_SECONDS:
                return v >= 1 && v <= POLICY_CPU_MAX_S ? NULL
                                                       : "must be between 1 and 2592000 seconds";
        case POLICY_LIMIT_WILDCARD_NAMES:
                return v >= 1 && v <= POLICY_WILDCARD_NAMES_MAX ? NULL
                                                                : "must be between 1 and 65536";
        case POLICY_LIMIT_CPUS:
                return v >= 1 && v <= POLICY_CPUS_MAX ? NULL : "must be between 1 and 255";
        case POLICY_LIMIT_TMP_BYTES:
        case POLICY_LIMIT_SHM_BYTES:
                return v >= POLICY_TMPFS_MIN && v <= POLICY_TMPFS_MAX
                               ? NULL
                               : "must be between 1M and 1T bytes";
        case _POLICY_LIMIT_MAX:
        default:
                return "is not a known limit";
        }
}

/* ---- modes ---------------------------------------------------------------------------------- */

static const struct {
        const char *name;
        cordon_mode mode;
} mode_names[] = {
        { "workspace-write", CORDON_MODE_WORKSPACE_WRITE },
        { "chat", CORDON_MODE_WORKSPACE_WRITE },
        { "read-only", CORDON_MODE_READ_ONLY },
        { "review", CORDON_MODE_READ_ONLY },
        { "plan", CORDON_MODE_READ_ONLY },
        { "orchestrate", CORDON_MODE_READ_ONLY },
        { "danger-full-access", CORDON_MODE_DANGER_FULL_ACCESS },
};

int cordon_mode_from_string(const char *name, cordon_mode *ret) {
        if (!name || !ret)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(mode_names); i++)
                if (strcmp(name, mode_names[i].name) == 0) {
                        *ret = mode_names[i].mode;
                        return 0;
                }
        return -EINVAL;
}

const char *cordon_mode_to_string(cordon_mode mode) {
        switch (mode) {
        case CORDON_MODE_WORKSPACE_WRITE:
                return "workspace-write";
        case CORDON_MODE_READ_ONLY:
                return "read-only";
        case CORDON_MODE_DANGER_FULL_ACCESS:
                return "danger-full-access";
        default:
                return "unknown";
        }
}

/* ---- lifecycle ------------------------------------------------------------------------------ */

cordon_policy *policy_new(void) {
        return calloc(1, sizeof(cordon_policy));
}

int cordon_policy_new(cordon_policy **ret, cordon_error *err) {
        if (!ret)
                return cordon_set_error(err, CORDON_USAGE, EINVAL,
                                        "cordon_policy_new: ret is NULL");
        *ret = policy_new();
        if (!*ret)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        return 0;
}

/* Frees a string that may hold a password, wiping it first: freed memory is handed out again. */
static void free_secret(char *s) {
        if (s)
                explicit_bzero(s, strlen(s));
        free(s);
}

static void policy_clear(cordon_policy *p) {
        free(p->session_id);
        free(p->workspace_id);
        free(p->agent_id);
        free(p->workdir);
        free_secret(p->egress_upstream);
        free(p->egress_upstream_shown);
        for (size_t i = 0; i < p->n_binds; i++) {
                free(p->binds[i].host_path);
                free(p->binds[i].guest_path);
        }
        free(p->binds);
        strv *lists[] = { &p->protected_paths, &p->runner_state_dirs, &p->deny_read,
                          &p->deny_write, &p->deny_create_names, &p->allow_create_names,
                          &p->allow_create_paths, &p->exec_grant_roots,
                          &p->egress_allowlist, &p->egress_denylist, &p->allow_unix_sockets,
                          &p->env_pass, &p->env_scrub };
        for (size_t i = 0; i < ELEMENTSOF(lists); i++)
                strv_done(lists[i]);
        for (size_t i = 0; i < p->n_hosts; i++) {
                free(p->hosts[i].name);
                free(p->hosts[i].address);
        }
        free(p->hosts);
        for (size_t i = 0; i < p->n_env_set; i++) {
                free(p->env_set[i].name);
                free(p->env_set[i].value);
        }
        free(p->env_set);
        policy_caches_clear(p);
        policy_reasons_clear(p);
        policy_req_clear(&p->req);
        policy_reads_clear(p);
        memset(p, 0, sizeof(*p));
}

void cordon_policy_free(cordon_policy *policy) {
        if (!policy)
                return;
        policy_clear(policy);
        free(policy);
}

static void policy_freep(cordon_policy **p) {
        cordon_policy_free(*p);
}
#define _cleanup_policy_ _cleanup_(policy_freep)

void policy_swap(cordon_policy *a, cordon_policy *b) {
        cordon_policy t = *a;
        *a = *b;
        *b = t;
}

/* ---- setters -------------------------------------------------------------------------------- */

/* Records why a setter refused (cordon_policy_last_error) and returns r. `value` is quoted in the
 * message with control characters shown as '?' (NULL: not shown, e.g. a variable's value, which
 * may be a secret); `why` is the validator's reason (NULL: the errno's). */
int policy_refuse(cordon_policy *p, int r, const char *value, const char *why) {
        if (!p)
                return r;
        char shown[201];
        size_t n = 0;
        for (; value && value[n] && n < sizeof(shown) - 1; n++)
                shown[n] = (unsigned char) value[n] < 0x20 || value[n] == 0x7f ? '?' : value[n];
        shown[n] = '\0';
        const char *reason = why                ? why
                             : r == -E2BIG      ? "cannot be added: the list is full (at most 1024 "
                                                  "entries)"
                             : r == -ENOMEM     ? "cannot be stored: out of memory"
                                                : "is not accepted";
        (void) cordon_set_error(&p->last_error,
                                r == -ENOMEM ? CORDON_LAUNCH_FAILED : CORDON_POLICY_INVALID, -r,
                                "%s%s%s%s %s", value ? "'" : "", shown,
                                value && value[n] ? "..." : "", value ? "'" : "the value",
                                reason);
        return r;
}

const cordon_error *cordon_policy_last_error(const cordon_policy *p) {
        return p && p->last_error.code != CORDON_OK ? &p->last_error : NULL;
}

static int replace_string(char **slot, const char *value) {
        char *c = strdup(value);
        if (!c)
                return -ENOMEM;
        free(*slot);
        *slot = c;
        return 0;
}

/* Validates and normalises a path and appends it unless present. */
int policy_push_path(cordon_policy *p, strv *list, const char *path) {
        const char *why = policy_check_path(path);
        if (!p || why)
                return policy_refuse(p, -EINVAL, path, why);
        _cleanup_free_ char *norm = NULL;
        int r = path_normalize(path, &norm);
        if (r < 0)
                return policy_refuse(p, r, path, NULL);
        if (strv_contains(list, norm))
                return 0;
        if (list->n >= POLICY_MAX_LIST)
                return policy_refuse(p, -E2BIG, path, NULL);
        r = strv_push_take(list, TAKE_PTR(norm));
        return r < 0 ? policy_refuse(p, r, path, NULL) : r;
}

static int push_checked(cordon_policy *p, strv *list, const char *s,
                        const char *(*check)(const char *)) {
        const char *why = check(s);
        if (!p || why)
                return policy_refuse(p, -EINVAL, s, why);
        if (strv_contains(list, s))
                return 0;
        if (list->n >= POLICY_MAX_LIST)
                return policy_refuse(p, -E2BIG, s, NULL);
        int r = strv_push(list, s);
        return r < 0 ? policy_refuse(p, r, s, NULL) : r;
}

int cordon_policy_set_mode(cordon_policy *p, cordon_mode mode) {
        if (!p || (unsigned) mode > CORDON_MODE_DANGER_FULL_ACCESS)
                return policy_refuse(p, -EINVAL, NULL, "is not a mode (cordon_mode)");
        p->mode = mode;
        p->mode_set = true;
        return 0;
}

cordon_mode cordon_policy_get_mode(const cordon_policy *p) {
        return p && p->mode_set ? p->mode : CORDON_MODE_WORKSPACE_WRITE;
}

int cordon_policy_set_session_id(cordon_policy *p, const char *id) {
        const char *why = policy_check_id(id);
        if (!p || why)
                return policy_refuse(p, -EINVAL, id, why);
        int r = replace_string(&p->session_id, id);
        return r < 0 ? policy_refuse(p, r, id, NULL) : r;
}

int policy_set_workspace_id(cordon_policy *p, const char *id) {
        if (!p || policy_check_id(id))
                return -EINVAL;
        return replace_string(&p->workspace_id, id);
}

int policy_set_agent_id(cordon_policy *p, const char *id) {
        if (!p || policy_check_id(id))
                return -EINVAL;
        return replace_string(&p->agent_id, id);
}

int cordon_policy_set_workdir(cordon_policy *p, const char *dir) {
        const char *why = policy_check_path(dir);
        if (!p || why)
                return policy_refuse(p, -EINVAL, dir, why);
        _cleanup_free_ char *norm = NULL;
        int r = path_normalize(dir, &norm);
        if (r < 0)
                return policy_refuse(p, r, dir, NULL);
        free(p->workdir);
        p->workdir = TAKE_PTR(norm);
        return 0;
}

int cordon_policy_set_network_enabled(cordon_policy *p, bool enabled) {
        if (!p)
                return -EINVAL;
        p->network_enabled = enabled;
        p->network_set = true;
        return 0;
}

static policy_bind *find_bind(const cordon_policy *p, const char *host_path) {
        for (size_t i = 0; i < p->n_binds; i++)
                if (strcmp(p->binds[i].host_path, host_path) == 0)
                        return &p->binds[i];
        return NULL;
}

/* Adds a bind, or updates the flag of the bind with the same (normalised) host path. */
static int bind_upsert(cordon_policy *p, const char *host_path, bool read_only) {
        _cleanup_free_ char *host = NULL, *guest = NULL;
        int r = path_normalize(host_path, &host);
        if (r < 0)
                return r;
        policy_bind *b = find_bind(p, host);
        if (b) {
                b->read_only = read_only;
                return 0;
        }
        if (p->n_binds >= POLICY_MAX_LIST)
                return -E2BIG;
        guest = strdup(host); /* native backends: guestPath = hostPath (docs/policy.md) */
        if (!guest)
                return -ENOMEM;
        policy_bind *nb = realloc(p->binds, (p->n_binds + 1) * sizeof(*nb));
        if (!nb)
                return -ENOMEM;
        p->binds = nb;
        p->binds[p->n_binds++] = (policy_bind){ TAKE_PTR(host), TAKE_PTR(guest), read_only };
        return 0;
}

int cordon_policy_add_bind(cordon_policy *p, const char *host_path, bool read_only) {
        const char *why = policy_check_path(host_path);
        if (!p || why)
                return policy_refuse(p, -EINVAL, host_path, why);
        int r = bind_upsert(p, host_path, read_only);
        return r < 0 ? policy_refuse(p, r, host_path, NULL) : r;
}

int cordon_policy_add_protected_path(cordon_policy *p, const char *path) {
        return policy_push_path(p, p ? &p->protected_paths : NULL, path);
}

int cordon_policy_add_runner_state_dir(cordon_policy *p, const char *path) {
        return policy_push_path(p, p ? &p->runner_state_dirs : NULL, path);
}

int cordon_policy_add_deny_read(cordon_policy *p, const char *path) {
        return policy_push_path(p, p ? &p->deny_read : NULL, path);
}

int cordon_policy_add_deny_write(cordon_policy *p, const char *path) {
        return policy_push_path(p, p ? &p->deny_write : NULL, path);
}

int policy_add_exec_grant_root(cordon_policy *p, const char *path) {
        return policy_push_path(p, p ? &p->exec_grant_roots : NULL, path);
}

int policy_add_unix_socket(cordon_policy *p, const char *path) {
        return policy_push_path(p, p ? &p->allow_unix_sockets : NULL, path);
}

int cordon_policy_add_egress_allow(cordon_policy *p, const char *pattern) {
        return push_checked(p, p ? &p->egress_allowlist : NULL, pattern, policy_check_host_pattern);
}

int cordon_policy_add_egress_deny(cordon_policy *p, const char *pattern) {
        return push_checked(p, p ? &p->egress_denylist : NULL, pattern, policy_check_host_pattern);
}

/* The URL is never quoted in the reason (value NULL): it may hold a password. */
int cordon_policy_set_egress_upstream(cordon_policy *p, const char *url) {
        policy_upstream u;
        const char *hint = NULL, *why = policy_upstream_parse(url, &u, &hint);
        if (!p || why) {
                char reason[400];
                (void) snprintf(reason, sizeof(reason), "%s (%s)", why ? why : "is not accepted",
                                hint ? hint : POLICY_UPSTREAM_HINT);
                return policy_refuse(p, -EINVAL, NULL, reason);
        }
        char full[POLICY_UPSTREAM_URL_MAX + 1], shown[POLICY_UPSTREAM_URL_MAX + 1];
        /* Both fit by construction (POLICY_UPSTREAM_URL_MAX); a failure is treated as memory. */
        bool ok = policy_upstream_format(&u, false, full, sizeof(full)) >= 0 &&
                  policy_upstream_format(&u, true, shown, sizeof(shown)) >= 0;
        policy_upstream_wipe(&u);
        char *f = ok ? strdup(full) : NULL, *sh = ok ? strdup(shown) : NULL;
        explicit_bzero(full, sizeof(full));
        if (!f || !sh) {
                free_secret(f);
                free(sh);
                return policy_refuse(p, -ENOMEM, NULL, NULL);
        }
        free_secret(p->egress_upstream);
        free(p->egress_upstream_shown);
        p->egress_upstream = f;
        p->egress_upstream_shown = sh;
        return 0;
}

static int set_host(cordon_policy *p, const char *name, const char *address);

int cordon_policy_set_host(cordon_policy *p, const char *name, const char *address) {
        const char *why = policy_check_host_name(name);
        if (!p || why)
                return policy_refuse(p, -EINVAL, name, why);
        if ((why = policy_check_ip_address(address)))
                return policy_refuse(p, -EINVAL, address, why);
        int r = set_host(p, name, address);
        return r < 0 ? policy_refuse(p, r, name, NULL) : r;
}

static int set_host(cordon_policy *p, const char *name, const char *address) {
        _cleanup_free_ char *n = strdup(name), *a = strdup(address);
        if (!n || !a)
                return -ENOMEM;
        /* Names are case-insensitive: one spelling per name, so a later layer replaces it. */
        for (char *q = n; *q; q++)
                *q = (char) tolower((unsigned char) *q);
        for (size_t i = 0; i < p->n_hosts; i++)
                if (strcmp(p->hosts[i].name, n) == 0)
                        return replace_string(&p->hosts[i].address, a);
        if (p->n_hosts >= POLICY_MAX_LIST)
                return -E2BIG;
        policy_host *nh = realloc(p->hosts, (p->n_hosts + 1) * sizeof(*nh));
        if (!nh)
                return -ENOMEM;
        p->hosts = nh;
        p->hosts[p->n_hosts++] = (policy_host){ TAKE_PTR(n), TAKE_PTR(a) };
        return 0;
}

int cordon_policy_add_deny_create_name(cordon_policy *p, const char *glob) {
        return push_checked(p, p ? &p->deny_create_names : NULL, glob, policy_check_name_glob);
}

int policy_add_allow_create_name(cordon_policy *p, const char *glob) {
        return push_checked(p, p ? &p->allow_create_names : NULL, glob, policy_check_name_glob);
}

int policy_add_allow_create_path(cordon_policy *p, const char *path) {
        return policy_push_path(p, p ? &p->allow_create_paths : NULL, path);
}

int cordon_policy_env_pass(cordon_policy *p, const char *name) {
        return push_checked(p, p ? &p->env_pass : NULL, name, policy_check_env_name);
}

int cordon_policy_env_scrub(cordon_policy *p, const char *glob) {
        return push_checked(p, p ? &p->env_scrub : NULL, glob, policy_check_env_glob);
}

static int env_set(cordon_policy *p, const char *name, const char *value);

/* The value is never shown in the reason: it may be a secret. */
int cordon_policy_env_set(cordon_policy *p, const char *name, const char *value) {
        const char *why = policy_check_env_name(name);
        if (!p || why)
                return policy_refuse(p, -EINVAL, name, why);
        if ((why = policy_check_env_value(value)))
                return policy_refuse(p, -EINVAL, NULL, why);
        int r = env_set(p, name, value);
        return r < 0 ? policy_refuse(p, r, name, NULL) : r;
}

static int env_set(cordon_policy *p, const char *name, const char *value) {
        for (size_t i = 0; i < p->n_env_set; i++)
                if (strcmp(p->env_set[i].name, name) == 0)
                        return replace_string(&p->env_set[i].value, value);
        if (p->n_env_set >= POLICY_MAX_LIST)
                return -E2BIG;
        _cleanup_free_ char *n = strdup(name), *v = strdup(value);
        if (!n || !v)
                return -ENOMEM;
        policy_env_var *nv = realloc(p->env_set, (p->n_env_set + 1) * sizeof(*nv));
        if (!nv)
                return -ENOMEM;
        p->env_set = nv;
        p->env_set[p->n_env_set++] = (policy_env_var){ TAKE_PTR(n), TAKE_PTR(v) };
        return 0;
}

static int set_limit(cordon_policy *p, policy_limit which, uint64_t v, uint64_t *slot) {
        const char *why = policy_check_limit(which, v);
        if (!p || why) {
                char shown[24];
                (void) snprintf(shown, sizeof(shown), "%llu", (unsigned long long) v);
                return policy_refuse(p, -EINVAL, shown, why);
        }
        *slot = v;
        return 0;
}

int cordon_policy_set_timeout_ms(cordon_policy *p, uint64_t ms) {
        return set_limit(p, POLICY_LIMIT_TIMEOUT_MS, ms, p ? &p->timeout_ms : NULL);
}

int cordon_policy_set_memory_bytes(cordon_policy *p, uint64_t bytes) {
        return set_limit(p, POLICY_LIMIT_MEMORY_BYTES, bytes, p ? &p->memory_bytes : NULL);
}

int cordon_policy_set_pids(cordon_policy *p, uint64_t pids) {
        return set_limit(p, POLICY_LIMIT_PIDS, pids, p ? &p->pids : NULL);
}

int cordon_policy_set_cpu_seconds(cordon_policy *p, uint64_t seconds) {
        return set_limit(p, POLICY_LIMIT_CPU_SECONDS, seconds, p ? &p->cpu_seconds : NULL);
}

int cordon_policy_set_cpus(cordon_policy *p, uint64_t cpus) {
        return set_limit(p, POLICY_LIMIT_CPUS, cpus, p ? &p->cpus : NULL);
}

int cordon_policy_set_tmp_size(cordon_policy *p, uint64_t bytes) {
        return set_limit(p, POLICY_LIMIT_TMP_BYTES, bytes, p ? &p->tmp_bytes : NULL);
}

int cordon_policy_set_shm_size(cordon_policy *p, uint64_t bytes) {
        return set_limit(p, POLICY_LIMIT_SHM_BYTES, bytes, p ? &p->shm_bytes : NULL);
}

int cordon_policy_set_wildcard_names(cordon_policy *p, uint64_t names) {
        return set_limit(p, POLICY_LIMIT_WILDCARD_NAMES, names, p ? &p->wildcard_names : NULL);
}

/* ---- merging and resolution ----------------------------------------------------------------- */

static int merge_string(char **dst, const char *src) {
        return src ? replace_string(dst, src) : 0;
}

static int merge_scalars(cordon_policy *dst, const cordon_policy *src) {
        int r;
        if (src->mode_set) {
                dst->mode = src->mode;
                dst->mode_set = true;
        }
        if (src->network_set) {
                dst->network_enabled = src->network_enabled;
                dst->network_set = true;
        }
        if (src->egress_mode_set) {
                dst->egress_mode = src->egress_mode;
                dst->egress_mode_set = true;
        }
        if (src->egress_ask_timeout_ms)
                dst->egress_ask_timeout_ms = src->egress_ask_timeout_ms;
        if (src->microvm_accel_set) {
                dst->microvm_tcg = src->microvm_tcg;
                dst->microvm_accel_set = true;
        }
        if ((r = merge_string(&dst->session_id, src->session_id)) < 0 ||
            (r = merge_string(&dst->workspace_id, src->workspace_id)) < 0 ||
            (r = merge_string(&dst->agent_id, src->agent_id)) < 0 ||
            (r = merge_string(&dst->workdir, src->workdir)) < 0)
                return r;
        /* Through the setter: the two forms of the URL are set together or not at all. */
        if (src->egress_upstream &&
            (r = cordon_policy_set_egress_upstream(dst, src->egress_upstream)) < 0)
                return r;
        const uint64_t *s[] = { &src->timeout_ms, &src->memory_bytes, &src->pids,
                                &src->cpu_seconds, &src->tmp_bytes, &src->shm_bytes,
                                &src->wildcard_names, &src->cpus };
        uint64_t *d[] = { &dst->timeout_ms, &dst->memory_bytes, &dst->pids, &dst->cpu_seconds,
                          &dst->tmp_bytes, &dst->shm_bytes, &dst->wildcard_names, &dst->cpus };
        for (size_t i = 0; i < ELEMENTSOF(s); i++)
                if (*s[i] != 0)
                        *d[i] = *s[i];
        return 0;
}

int policy_merge(cordon_policy *dst, const cordon_policy *src) {
        int r = merge_scalars(dst, src);
        if (r < 0)
                return r;
        for (size_t i = 0; i < src->n_binds; i++)
                if ((r = bind_upsert(dst, src->binds[i].host_path, src->binds[i].read_only)) < 0)
                        return r;
        /* Lists are unions: a higher layer can add a deny rule but never remove one. */
        const strv *s[] = { &src->protected_paths, &src->runner_state_dirs, &src->deny_read,
                            &src->deny_write, &src->deny_create_names, &src->allow_create_names,
                            &src->allow_create_paths, &src->exec_grant_roots,
                            &src->egress_allowlist, &src->egress_denylist,
                            &src->allow_unix_sockets, &src->env_pass, &src->env_scrub };
        strv *d[] = { &dst->protected_paths, &dst->runner_state_dirs, &dst->deny_read,
                      &dst->deny_write, &dst->deny_create_names, &dst->allow_create_names,
                      &dst->allow_create_paths, &dst->exec_grant_roots,
                      &dst->egress_allowlist, &dst->egress_denylist,
                      &dst->allow_unix_sockets, &dst->env_pass, &dst->env_scrub };
        for (size_t i = 0; i < ELEMENTSOF(s); i++)
                if ((r = strv_extend(d[i], s[i])) < 0)
                        return r;
        for (size_t i = 0; i < src->n_env_set; i++)
                if ((r = cordon_policy_env_set(dst, src->env_set[i].name,
                                               src->env_set[i].value)) < 0)
                        return r;
        for (size_t i = 0; i < src->n_hosts; i++)
                if ((r = cordon_policy_set_host(dst, src->hosts[i].name, src->hosts[i].address)) < 0)
                        return r;
        if ((r = policy_reasons_merge(dst, src)) < 0 || (r = policy_req_copy(&dst->req, &src->req)) < 0 ||
            (r = policy_reads_merge(dst, src)) < 0)
                return r;
        return policy_caches_merge(dst, src);
}

cordon_policy *policy_dup(const cordon_policy *p) {
        _cleanup_policy_ cordon_policy *c = policy_new();
        if (!c || policy_merge(c, p) < 0)
                return NULL;
        c->managed_applied = p->managed_applied;
        return TAKE_PTR(c);
}

int cordon_policy_resolve(const cordon_policy *deployment_default, const cordon_policy *session,
                          const cordon_policy *approved_escalation, cordon_policy **ret,
                          cordon_error *err) {
        if (ret)
                *ret = NULL;
        if (!deployment_default || !ret)
                return cordon_set_error(err, CORDON_POLICY_INVALID, EINVAL,
                                        "cordon_policy_resolve: the deployment default is "
                                        "required; start from cordon_policy_new_default()");
        _cleanup_policy_ cordon_policy *res = policy_new();
        if (!res)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        /* Lowest precedence first, so each higher layer overrides the scalars it sets. */
        const cordon_policy *layers[] = { deployment_default, session, approved_escalation };
        static const char *const names[] = { "deployment default", "session",
                                             "approved escalation" };
        for (size_t i = 0; i < ELEMENTSOF(layers); i++) {
                if (!layers[i])
                        continue;
                /* The highest layer decides: the managed settings a resolved layer holds stay
                 * applied only while no layer above it can override what they set. */
                res->managed_applied = layers[i]->managed_applied;
                int r = policy_merge(res, layers[i]);
                if (r == -E2BIG)
                        return cordon_set_error(err, CORDON_POLICY_INVALID, E2BIG,
                                                "resolving the policy: the %s layer makes a "
                                                "list longer than %u entries",
                                                names[i], POLICY_MAX_LIST);
                if (r < 0)
                        return cordon_set_error(err, CORDON_LAUNCH_FAILED, r,
                                                "resolving the policy: %s", strerror(-r));
        }
        *ret = TAKE_PTR(res);
        return 0;
}

const char *const policy_default_deny_create_names[] = {
        ".env", ".env.*", "*.pem", "*.key", NULL,
};

int cordon_policy_new_default(const char *cwd, const char *home, cordon_policy **ret,
                              cordon_error *err) {
        const char *why;
        if (!ret)
                return cordon_set_error(err, CORDON_POLICY_INVALID, EINVAL,
                                        "cordon_policy_new_default: ret is NULL");
        *ret = NULL;
        if ((why = policy_check_path(cwd)))
                return cordon_set_error(err, CORDON_POLICY_INVALID, EINVAL,
                                        "default policy: the current directory '%s' %s",
                                        cwd ? cwd : "(null)", why);
        if ((why = policy_check_path(home)))
                return cordon_set_error(err, CORDON_POLICY_INVALID, EINVAL,
                                        "default policy: the home directory '%s' %s; set HOME "
                                        "to an absolute path",
                                        home ? home : "(null)", why);
        _cleanup_policy_ cordon_policy *p = policy_new();
        if (!p)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        int r = cordon_policy_set_mode(p, CORDON_MODE_WORKSPACE_WRITE);
        if (r >= 0)
                r = cordon_policy_add_bind(p, cwd, false);
        for (size_t i = 0; r >= 0 && policy_default_deny_create_names[i]; i++)
                r = cordon_policy_add_deny_create_name(p, policy_default_deny_create_names[i]);
        /* Network on, through the egress proxy, with the built-in allowlist
         * (docs/design/network.md). */
        if (r >= 0)
                r = cordon_policy_set_network_enabled(p, true);
        if (r < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, r,
                                        "building the default policy: %s", strerror(-r));
        *ret = TAKE_PTR(p);
        return 0;
}
