/* SPDX-License-Identifier: Apache-2.0 */
/* What each observed refusal means and which policy change would allow it (see explain.h).
 * Table-driven by the violation's action; an action this version does not know is still listed,
 * with no change suggested, so a new kind of violation needs no change here to be reported. */
#include "explain/explain.h"

#include <jansson.h>
#include <stdio.h>

#include "plan/gitconfig.h"
#include "util/util.h"

#define ADVICE_PRINTF _printf_(2, 3)

/* A suggestion is text an agent or a person may paste into a shell, and its value (a path, a
 * host) was chosen by the confined, possibly hostile, command: `--writable /w/$(rm -rf ~)` must
 * reach the shell as one inert word. Hence single quotes around anything outside a small safe
 * set. */
char *explain_shell_quote(const char *s) {
        static const char safe[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                   "0123456789_@%+=:,./-";
        if (s[0] && strspn(s, safe) == strlen(s))
                return strdup(s);
        size_t quotes = 0;
        for (const char *c = s; *c; c++)
                quotes += *c == '\'';
        char *out = malloc(strlen(s) + quotes * 3 + 3);
        if (!out)
                return NULL;
        char *o = out;
        *o++ = '\'';
        for (const char *c = s; *c; c++) {
                if (*c == '\'') {
                        memcpy(o, "'\\''", 4);
                        o += 4;
                } else
                        *o++ = *c;
        }
        *o++ = '\'';
        *o = '\0';
        return out;
}

ADVICE_PRINTF static int set(char **field, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        free(*field);
        int r = vasprintf(field, fmt, ap);
        va_end(ap);
        if (r < 0) {
                *field = NULL;
                return -ENOMEM;
        }
        return 0;
}

/* "flag VALUE" with VALUE shell-quoted. */
static int set_change(explain_violation *v, const char *flag, const char *value) {
        _cleanup_free_ char *q = explain_shell_quote(value);
        return q ? set(&v->change, "%s %s", flag, q) : -ENOMEM;
}

static const char *target_or(const explain_violation *v, const char *unknown) {
        return v->target[0] ? v->target : unknown;
}

/* The supervisor's git rules (docs/design/git-repos.md) and the fixed .cordon rule: no policy
 * lifts them, and they are not denyCreateNames entries. */
static int advise_fixed_rule(explain_violation *v, const char *rule) {
        bool git = strncmp(rule, "git: ", 5) == 0 || gitconfig_is_vet_key(rule);
        int r = set(&v->summary, "create %s (%s%s)", target_or(v, "(path not known)"),
                    gitconfig_is_vet_key(rule) ? "git config key " : "", rule);
        if (r < 0)
                return r;
        if (git)
                return set(&v->why, "a repository created in the sandbox may not get what the "
                                    "user's next host git would run or read: '%s' "
                                    "(docs/design/git-repos.md); no policy lifts it: make the "
                                    "change outside the sandbox after reviewing it", rule);
        return set(&v->why, "a .cordon directory holds project settings the next run would obey; "
                            "none may come into existence inside a writable root, and no policy "
                            "lifts that: create it outside the sandbox");
}

/* Whether a protected path (an absolute rule: name rules are file-name globs) is part of the
 * mandatory git protection: the repository's .git itself or a file in it that a later host git
 * executes or reads config from. */
static bool git_protection(const char *rule) {
        const char *g = strstr(rule, "/.git");
        return rule[0] == '/' && g && (g[5] == '\0' || g[5] == '/');
}

/* A protected path refused the creation: mandatory (git, the write-deny set) or protectedPaths,
 * never a denyCreateNames rule. */
static int advise_protected(explain_violation *v) {
        bool git = git_protection(v->rule);
        int r = set(&v->summary, "create %s (%s %s)", target_or(v, "(path not known)"),
                    git ? "git protection" : "protected path", v->rule);
        if (r < 0)
                return r;
        if (git)
                return set(&v->why, "'%s' is part of the mandatory git protection (hooks, config "
                                    "and the files a later host git runs or reads config from); "
                                    "it holds in every policy and no flag lifts it", v->rule);
        return set(&v->why, "'%s' is a protected path (the mandatory set or protectedPaths), "
                            "which holds in every policy layer; no flag lifts it", v->rule);
}

static int advise_create_name(explain_violation *v) {
        const char *rule = v->rule[0] ? v->rule : "?";
        if (strcmp(rule, ".cordon") == 0 || strncmp(rule, "git: ", 5) == 0 ||
            gitconfig_is_vet_key(rule))
                return advise_fixed_rule(v, rule);
        if (rule[0] == '/')
                return advise_protected(v);
        int r = set(&v->summary, "create %s (denyCreateNames %s)",
                    target_or(v, "(path not known)"), rule);
        /* Lists are unions over the policy layers (cordon_policy_resolve): no layer can remove a
         * name rule, so there is no change to suggest, only the rule to name. */
        return r < 0 ? r
                     : set(&v->why, "the name matches the denyCreateNames rule '%s'; no policy "
                                    "layer removes a name rule, but a file that is no secret (a "
                                    "test fixture, a template) can be let through by path or name: "
                                    "--allow-create-path PATH or --allow-create-name NAME (never a "
                                    "literal deny name such as .env); else create it outside the "
                                    "sandbox", rule);
}

/* The supervisor's refusal of a direct connect() in the landlock backend
 * (linux/supervisor-landlock.c): the start of its rule text. */
#define LANDLOCK_DIRECT "the landlock backend connects only to the run's egress proxy"

/* The ask mode's refusals (net/proxy-ask.c): every rule starts "ask: ". The destination is on no
 * list, so an allow entry lets it through without a question. */
#define ASK_RULE "ask: "
static int advise_ask(explain_violation *v) {
        const char *what = v->rule + strlen(ASK_RULE);
        const char *why = strncmp(what, "denied", 6) == 0 ? "it was denied when asked"
                          : strncmp(what, "no answer", 9) == 0
                                  ? "nobody answered the question in time (--ask-timeout)"
                          : strncmp(what, "nobody", 6) == 0
                                  ? "there was nobody to ask (no terminal, no on_egress_ask "
                                    "callback, or a warm session)"
                                  : "too many questions were open at once";
        int r = v->target[0] ? set_change(v, "--allow-domain", v->target) : 0;
        return r < 0 ? r
                     : set(&v->why, "the destination is on no egress list and the ask mode "
                                    "refused it: %s; answer allow when asked, or allow it "
                                    "without asking", why);
}

/* The reasons the proxy gives besides a deny pattern (net/egress.h, net/proxy-dial.c). */
/* "host:port" without its port ("[v6]:port" keeps its brackets). */
static char *host_of(const char *target) {
        const char *colon = strrchr(target, ':');
        return strndup(target, colon ? (size_t) (colon - target) : strlen(target));
}

static int advise_network_reason(explain_violation *v, const char *t) {
        if (strncmp(v->rule, ASK_RULE, strlen(ASK_RULE)) == 0)
                return advise_ask(v);
        if (strcmp(v->rule, "network disabled") == 0) {
                _cleanup_free_ char *q = explain_shell_quote(t);
                if (!q || set(&v->change, "drop --no-network (networkEnabled: true) and add "
                                          "--allow-domain %s", q) < 0)
                        return -ENOMEM;
                return set(&v->why, "the network is off for this run (--no-network): the proxy "
                                    "refuses every destination");
        }
        if (strcmp(v->rule, "invalid destination") == 0)
                return set(&v->why, "the destination is not a valid host name or address; no "
                                    "policy change makes it one");
        if (strncmp(v->rule, LANDLOCK_DIRECT, strlen(LANDLOCK_DIRECT)) == 0)
                return set(&v->why, "the landlock backend (no network namespace) lets the command "
                                    "connect only to its egress proxy: this client connected "
                                    "directly, ignoring HTTP_PROXY/HTTPS_PROXY/ALL_PROXY; make it "
                                    "use the proxy, then --allow-domain decides");
        if (strstr(v->rule, "resolver never gave out"))
                return set(&v->why, "the command connected to an address of the sandbox's own "
                                    "range (198.18.0.0/15) that its resolver gave to no name in "
                                    "this run (one kept from an earlier run?): connect by name");
        if (strncmp(v->rule, "request rules: ", 15) == 0) {
                /* A tunnel to a host with request rules (docs/policy.md, "Request rules"). */
                _cleanup_free_ char *h = host_of(t);
                if (!h || set(&v->change, "add \"%s\" to tls.passthrough in the policy (its "
                                          "tunnels then go through unjudged)", h) < 0)
                        return -ENOMEM;
                return set(&v->why, "%s has request rules (egressRules): its tunnels are judged "
                                    "only as TLS the proxy terminates (the native backend); a "
                                    "tunnel it cannot read would carry requests no rule saw", h);
        }
        if (strncmp(v->rule, "resolves only to", 16) == 0)
                return set(&v->why, "the name %s: the proxy never dials loopback, link-local, "
                                    "metadata or the host's own addresses for a name; a local "
                                    "server is reachable only through an explicit address entry "
                                    "such as --allow-domain 127.0.0.1:PORT, a metadata endpoint "
                                    "never", v->rule);
        /* Anything else is the pattern that refused it: the built-in deny list or a
         * --deny-domain entry, and deny beats allow. */
        if (v->reason && v->reason[0])
                return set(&v->why, "refused by the deny rule '%s': %s; deny beats allow, so "
                                    "--allow-domain cannot lift it",
                           v->rule, v->reason);
        return set(&v->why, "refused by the deny rule '%s' (the built-in deny list or "
                            "--deny-domain); deny beats allow, so --allow-domain cannot lift it",
                   v->rule);
}

/* A refused connect() to a Unix socket: its target is the socket's path. allowUnixSockets is a
 * policy-file key (no flag), so the change names the key with the path as a JSON string. */
static int advise_unix_socket(explain_violation *v) {
        bool not_allowed = !v->rule[0] || strstr(v->rule, "allowUnixSockets");
        int r = set(&v->summary, "connect %s (%s)", v->target,
                    v->rule[0] ? v->rule : "not in allowUnixSockets");
        v->network = false; /* not the proxy: the proxy-variables note does not apply */
        if (r < 0 || !not_allowed)
                return r < 0 ? r
                             : set(&v->why, "refused by '%s'; adding the path to allowUnixSockets "
                                            "does not change that", v->rule);
        json_t *j = json_string(v->target);
        char *path = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
        json_decref(j);
        r = path ? set(&v->change, "--policy FILE with {\"allowUnixSockets\": [%s]}", path)
                 : -ENOMEM;
        free(path);
        return r < 0 ? r
                     : set(&v->why, "connections to Unix sockets are refused unless the socket's "
                                    "path is in allowUnixSockets");
}

static int advise_network(explain_violation *v) {
        if (v->target[0] == '/')
                return advise_unix_socket(v);
        const char *t = target_or(v, "(destination not known)");
        bool not_allowed = !v->rule[0] || strcmp(v->rule, "not in allowlist") == 0;
        v->network = true;
        int r = set(&v->summary, "network %s (%s)", t,
                    not_allowed ? "not in allowlist"
                    : strncmp(v->rule, LANDLOCK_DIRECT, strlen(LANDLOCK_DIRECT)) == 0
                            ? "direct connection, not through the proxy"
                    : strcmp(v->rule, "network disabled") == 0 ||
                                      strcmp(v->rule, "invalid destination") == 0 ||
                                      strncmp(v->rule, "resolves only to", 16) == 0 ||
                                      strncmp(v->rule, ASK_RULE, strlen(ASK_RULE)) == 0
                            ? v->rule
                            : "deny rule");
        if (r < 0 || !not_allowed)
                return r < 0 ? r : advise_network_reason(v, t);
        if (!v->target[0])
                return set(&v->why, "the destination is not in the egress allowlist");
        r = set_change(v, "--allow-domain", v->target);
        return r < 0 ? r
                     : set(&v->why, "the destination is not in the egress allowlist; this adds "
                                    "exactly this host and port (without ':PORT', every port)");
}

/* A request the git push gateway refused (src/net/git-push.c): the repository is the host and
 * the path before /info/refs or /git-receive-pack (".git" cut), the ref the event's. */
static int advise_git_push(explain_violation *v, const char *t) {
        _cleanup_free_ char *h = host_of(t);
        size_t pl = strcspn(v->path, "?");
        const char *ends[] = { "/git-receive-pack", "/info/refs" };
        for (size_t i = 0; i < 2; i++) {
                size_t el = strlen(ends[i]);
                if (pl >= el && strncmp(v->path + pl - el, ends[i], el) == 0)
                        pl -= el;
        }
        if (pl > 4 && strncmp(v->path + pl - 4, ".git", 4) == 0)
                pl -= 4;
        if (!h)
                return -ENOMEM;
        /* "gitPush.allow[N]: REF: ..." names the entry that matched the ref but not the kind
         * of update: the change is to that entry. */
        if (strncmp(v->rule, "gitPush.allow[", 14) == 0) {
                int n = (int) strcspn(v->rule, ":");
                bool del = strstr(v->rule, "\"delete\"") != NULL;
                if (set(&v->change, "set %s in %.*s", del ? "\"delete\": true" : "\"update\": true",
                        n, v->rule) < 0)
                        return -ENOMEM;
                return set(&v->why, "%s", v->rule);
        }
        if (strncmp(v->rule, "gitPush: no gitPush.allow", 25) != 0)
                return set(&v->why, "%s: the git push gateway refuses a push it cannot read; no "
                                    "policy change allows it",
                           v->rule);
        if (set(&v->change, "add to gitPush.allow: {\"repo\": \"%s%.*s\", \"refs\": [\"%s\"]}",
                h, (int) pl, v->path, v->ref[0] ? v->ref : "refs/heads/BRANCH") < 0)
                return -ENOMEM;
        return set(&v->why, "gitPush is set: a push to a git host is refused unless a "
                            "gitPush.allow entry names its repository and ref");
}

/* A request refused by a request rule (src/net/req-rules.c): the rule is named in the event,
 * and only an allow rule for exactly this request, or removing a deny rule, changes it. */
static int advise_request(explain_violation *v) {
        const char *t = target_or(v, "(host not known)");
        v->network = true;
        if (strncmp(v->rule, "gitPush", 7) == 0) {
                int r = set(&v->summary, "push %s%s%s%s (gitPush)", t, v->path,
                            v->ref[0] ? " ref " : "", v->ref);
                return r < 0 ? r : advise_git_push(v, t);
        }
        bool cred = strncmp(v->rule, "credentials: ", 13) == 0;
        int r = set(&v->summary, "request %s %s%s (%s)", v->method[0] ? v->method : "?", t,
                    v->path, cred ? "credential placeholder"
                             : strncmp(v->rule, "egressRules[", 12) == 0 ? "deny rule"
                                                                         : "no request rule");
        if (r < 0)
                return r;
        /* A placeholder where its credential is not bound (docs/policy.md, "Credentials"): no
         * egressRules entry changes that, and the secret goes nowhere else by design. */
        if (cred)
                return set(&v->why, "%.*s: a placeholder goes only to its credential's hosts, "
                                    "over https; add this host to the credential's hosts only "
                                    "if it is meant to get the secret",
                           (int) strcspn(v->rule, ";"), v->rule);
        if (strncmp(v->rule, "request rules: the path", 23) == 0)
                return set(&v->why, "%s: a server could read this path as another one, so it is "
                                    "refused on a host with request rules; no policy change "
                                    "allows it, send the path in its plain form",
                           v->rule);
        if (strncmp(v->rule, "egressRules[", 12) == 0) {
                size_t n = strcspn(v->rule, ":");
                if (set(&v->change, "remove or narrow %.*s in the policy", (int) n, v->rule) < 0)
                        return -ENOMEM;
                return set(&v->why, "refused by the deny rule %s%s%s; a deny rule wins over "
                                    "every allow rule, so adding one cannot lift it",
                           v->rule, v->reason[0] ? ": " : "", v->reason);
        }
        _cleanup_free_ char *h = host_of(t);
        size_t pl = strcspn(v->path, "?");
        if (!h || set(&v->change, "add to egressRules: {\"host\": \"%s\", \"methods\": "
                                  "[\"%s\"], \"paths\": [\"%.*s\"], \"action\": \"allow\"}",
                      h, v->method, (int) pl, v->path) < 0)
                return -ENOMEM;
        return set(&v->why, "%s has request rules and none allows this request: a host with "
                            "request rules refuses what no rule allows",
                   h);
}

static int advise_syscall(explain_violation *v) {
        int r = set(&v->summary, "syscall %s (%s)", target_or(v, "?"),
                    v->rule[0] ? v->rule : "seccomp filter");
        /* The one table entry a policy lifts: AF_UNIX sockets while allowUnixSockets is empty.
         * The socket's path is not known at socket() time, so the change names the key only. */
        if (r >= 0 && strstr(v->rule, "allowUnixSockets is empty")) {
                r = set(&v->change, "--policy FILE with {\"allowUnixSockets\": [\"PATH\"]}, "
                                    "PATH the socket the command connects to");
                return r < 0 ? r
                             : set(&v->why, "Unix sockets are refused while allowUnixSockets is "
                                            "empty; listing a socket's path allows connecting to "
                                            "exactly that socket");
        }
        return r < 0 ? r
                     : set(&v->why, "cordon's seccomp filter refuses %s in every policy%s%s%s; "
                                    "no flag lifts it", target_or(v, "this call"),
                           v->rule[0] ? " (" : "", v->rule, v->rule[0] ? ")" : "");
}

/* The directory a write went into: what --writable needs. NULL when there is none. */
static char *parent_dir(const char *path) {
        const char *slash = strrchr(path, '/');
        if (path[0] != '/' || !slash || slash[1] == '\0')
                return NULL;
        return slash == path ? strdup("/") : strndup(path, (size_t) (slash - path));
}

static int advise_write(explain_violation *v) {
        int r = v->rule[0] ? set(&v->summary, "write %s (%s)", target_or(v, "?"), v->rule)
                           : set(&v->summary, "write %s (not writable)", target_or(v, "?"));
        if (r < 0)
                return r;
        if (v->rule[0])
                return set(&v->why, "refused by the rule '%s' (the mandatory write-deny set, a "
                                    "protected path or denyWrite), which no flag lifts", v->rule);
        _cleanup_free_ char *dir = parent_dir(v->target);
        if (!dir)
                return set(&v->why, "the path is outside the writable roots");
        r = set_change(v, "--writable", dir);
        return r < 0 ? r
                     : set(&v->why, "the path is outside the writable roots; this makes its "
                                    "directory writable (protected paths inside stay protected)");
}

/* The landlock backend's metadata refusals (src/linux/supervisor-meta.c): outside the writable
 * roots (the rule starts "metadata (") a --writable directory lifts it; a protected path or
 * secret stays as it is. */
static int advise_metadata(explain_violation *v) {
        int r = set(&v->summary, "change the mode, owner, times or attributes of %s",
                    target_or(v, "?"));
        if (r < 0)
                return r;
        if (strncmp(v->rule, "metadata (", 10) != 0)
                return set(&v->why, "the file is a protected path or a secret ('%s'): its "
                                    "metadata stays as it is in every policy", v->rule);
        _cleanup_free_ char *dir = parent_dir(v->target);
        if (!dir)
                return set(&v->why, "the file is outside the writable roots");
        r = set_change(v, "--writable", dir);
        return r < 0 ? r
                     : set(&v->why, "the file is outside the writable roots; this makes its "
                                    "directory writable (protected paths inside stay protected)");
}

static int advise_read(explain_violation *v) {
        int r = set(&v->summary, "read %s%s%s%s", target_or(v, "?"), v->rule[0] ? " (" : "",
                    v->rule, v->rule[0] ? ")" : "");
        return r < 0 ? r
                     : set(&v->why, "the path is in the secret set or denyRead, which hold in "
                                    "every policy layer; no flag lifts them");
}

static int advise_unknown(explain_violation *v) {
        int r = set(&v->summary, "%s %s", v->action[0] ? v->action : "(no action)",
                    target_or(v, "?"));
        return r < 0 ? r
                     : set(&v->why, "this version of cordon knows no policy change for this kind "
                                    "of refusal");
}

/* A limit was reached, not a rule broken: the process ceiling (target "pids": forks failed with
 * EAGAIN) or a full private tmpfs (target "/tmp" or "/dev/shm": writes failed with ENOSPC). The
 * change is the flag that raises that limit; the value is the user's to choose. */
static int advise_limit(explain_violation *v) {
        bool pids = strcmp(v->target, "pids") == 0;
        bool shm = strcmp(v->target, "/dev/shm") == 0;
        int r = pids ? set(&v->summary, "fork (%s)", v->rule)
                     : set(&v->summary, "write %s (%s)", target_or(v, "?"), v->rule);
        if (r < 0)
                return r;
        r = set(&v->change, pids ? "--pids N, above the ceiling that was reached"
                            : shm ? "--shm-size SIZE, larger than the size that was reached"
                                  : "--tmp-size SIZE, larger than the size that was reached");
        if (r < 0)
                return r;
        return set(&v->why, pids ? "the sandbox's process ceiling (processes and threads) was "
                                   "reached: further forks failed with EAGAIN"
                                 : "the private %s is a bounded tmpfs held in memory; it was "
                                   "full, so writes failed with ENOSPC",
                   target_or(v, "?"));
}

static const struct {
        const char *action;
        bool prefix; /* "file-write" matches "file-write-data", "file-write*", ... */
        int (*advise)(explain_violation *v);
} advisors[] = {
        { "file-create-name", false, advise_create_name },
        { "network-outbound", false, advise_network },
        { "network-request", false, advise_request },
        { "syscall", false, advise_syscall },
        { "resource-limit", false, advise_limit },
        { "file-metadata", false, advise_metadata },
        { "file-write", true, advise_write },
        { "file-read", true, advise_read },
};

int explain_advise(explain_violation *v) {
        for (size_t i = 0; i < ELEMENTSOF(advisors); i++) {
                size_t n = strlen(advisors[i].action);
                if (advisors[i].prefix ? strncmp(v->action, advisors[i].action, n) == 0
                                       : strcmp(v->action, advisors[i].action) == 0)
                        return advisors[i].advise(v);
        }
        return advise_unknown(v);
}

const char *explain_killed_change(const char *reason) {
        if (strcmp(reason, "timeout") == 0)
                return "--timeout DURATION, longer than the limit that was reached";
        if (strcmp(reason, "oom") == 0)
                return "--memory SIZE, larger than the limit that was reached";
        return NULL;
}
