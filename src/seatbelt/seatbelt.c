/* SPDX-License-Identifier: Apache-2.0 */
/* seatbelt_profile(): the profile's frame, its process and network sections, and the small
 * writer every section uses (seatbelt-internal.h). The file and exec sections: seatbelt-fs.c.
 * Layout and reasons: docs/design/seatbelt.md. */
#include <dirent.h>
#include <stdio.h>
#include <strings.h>
#include <sys/stat.h>

#include "plan/resolve.h" /* path_resolve_lenient(), the planner's own resolution */
#include "seatbelt/seatbelt-internal.h"

/* ---- the writer ----------------------------------------------------------------------------- */

void sb_comment(sb_gen *g, const char *text) {
        if (!text[0]) {
                sbuf_add(&g->out, "\n"); /* a blank line between sections */
                return;
        }
        sbuf_add(&g->out, ";; ");
        sbuf_add(&g->out, text);
        sbuf_add(&g->out, "\n");
}

/* docs/design/seatbelt.md, "Violation reports": the kernel logs a refusal with the message of
 * the rule that made it, which names the rule and the session, so the launcher can tell its own
 * run's refusals from everyone else's and say which rule refused. */
static void add_tag(sb_gen *g, const char *head, seatbelt_rule rule) {
        if (strncmp(head, "deny ", 5) != 0)
                return;
        const char *name = seatbelt_rule_name(rule);
        if (!name) {
                sbuf_fail(&g->out, -EINVAL); /* every deny is tagged: a bug fails the profile */
                return;
        }
        _cleanup_free_ char *msg = NULL;
        if (asprintf(&msg, SEATBELT_TAG_PREFIX "%s %s", name, g->session) < 0) {
                sbuf_fail(&g->out, -ENOMEM);
                return;
        }
        sbuf_add(&g->out, " (with message ");
        sbpl_quote(&g->out, msg);
        sbuf_add(&g->out, ")");
}

void sb_rule_begin(sb_gen *g, const char *head, seatbelt_rule rule) {
        g->n_filters = 0;
        g->depth = 0;
        sbuf_add(&g->out, "(");
        sbuf_add(&g->out, head);
        add_tag(g, head, rule);
}

void sb_rule_everywhere(sb_gen *g, const char *head, seatbelt_rule rule) {
        sb_rule_begin(g, head, rule);
        sbuf_add(&g->out, ")\n");
}

/* Remembers the first string that cannot go into a profile, for the error message. */
static bool check_or_blame(sb_gen *g, const char *s) {
        int r = sbpl_check_string(s);
        if (r >= 0)
                return true;
        if (!g->bad)
                g->bad = strdup(s);
        sbuf_fail(&g->out, r);
        return false;
}

static sbpl_glob_kind regex_kind(sb_filter kind) {
        switch (kind) {
        case SB_DENY_EXACT:
        case SB_DENY_GLOB_EXACT:
                return SBPL_GLOB_EXACT;
        case SB_DENY_NAME:
                return SBPL_GLOB_NAME;
        case SB_DENY_SUBPATH:
        case SB_DENY_GLOB_SUBPATH:
        case SB_ALLOW_SUBPATH:
        case SB_ALLOW_LITERAL:
        default:
                return SBPL_GLOB_SUBPATH;
        }
}

static void add_regex(sb_gen *g, sb_filter kind, const char *path) {
        bool literal = kind == SB_DENY_SUBPATH || kind == SB_DENY_EXACT;
        _cleanup_free_ char *quoted = literal ? sbpl_glob_quote(path) : NULL, *re = NULL;
        if (literal && !quoted) {
                sbuf_fail(&g->out, -ENOMEM);
                return;
        }
        int r = sbpl_glob_regex(literal ? quoted : path, regex_kind(kind), &re);
        if (r < 0) {
                if (!g->bad)
                        g->bad = strdup(path);
                sbuf_fail(&g->out, r);
                return;
        }
        sbuf_add(&g->out, "(regex ");
        sbpl_quote(&g->out, re);
        sbuf_add(&g->out, ")");
}

void sb_filter_add(sb_gen *g, sb_filter kind, const char *path) {
        if (g->out.err || !check_or_blame(g, path))
                return;
        g->n_filters++;
        sbuf_add(&g->out, "\n  ");
        for (unsigned i = 0; i < g->depth; i++)
                sbuf_add(&g->out, "  ");
        if (kind == SB_ALLOW_SUBPATH || kind == SB_ALLOW_LITERAL) {
                sbuf_add(&g->out, kind == SB_ALLOW_SUBPATH ? "(subpath " : "(literal ");
                sbpl_quote(&g->out, path);
                sbuf_add(&g->out, ")");
                return;
        }
        add_regex(g, kind, path);
}

void sb_filter_open(sb_gen *g, const char *head) {
        g->n_filters++;
        sbuf_add(&g->out, "\n  (");
        sbuf_add(&g->out, head);
        g->depth++;
}

void sb_filter_close(sb_gen *g) {
        g->depth--;
        sbuf_add(&g->out, ")");
}

void sb_rule_end(sb_gen *g) {
        /* An SBPL rule without a filter applies to everything: `(allow file-write*` with its
         * filters lost would open the whole disk. Never emitted; a bug fails the profile. */
        if (g->n_filters == 0)
                sbuf_fail(&g->out, -EINVAL);
        sbuf_add(&g->out, ")\n");
}

static int compare_strings(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

void sb_sort(strv *s) {
        if (s->n > 1)
                qsort(s->v, s->n, sizeof(char *), compare_strings);
}

void sb_rule(sb_gen *g, const char *head, seatbelt_rule rule, sb_filter kind, const strv *items) {
        if (items->n == 0)
                return;
        sb_rule_begin(g, head, rule);
        for (size_t i = 0; i < items->n; i++)
                sb_filter_add(g, kind, items->v[i]);
        sb_rule_end(g);
}

/* ---- spellings of a path -------------------------------------------------------------------- */

bool sb_is_glob(const char *path) {
        return strpbrk(path, "*?") != NULL; /* the planner's rule (docs/policy.md) */
}

static int default_resolve(void *userdata, const char *path, char **ret) {
        return path_resolve_lenient(path, ret);
}

/* A glob keeps its pattern: only the directory before its first wildcard is resolved. */
static int resolve_form(sb_gen *g, const char *path, bool glob, char **ret) {
        const char *w = glob ? strpbrk(path, "*?") : NULL;
        if (!w)
                return g->params.resolve(g->params.userdata, path, ret);
        const char *slash = w;
        while (slash > path && *slash != '/')
                slash--;
        if (slash == path)
                return -ENOENT; /* "/x*": nothing to resolve */
        _cleanup_free_ char *dir = strndup(path, (size_t) (slash - path)), *rdir = NULL;
        if (!dir)
                return -ENOMEM;
        int r = g->params.resolve(g->params.userdata, dir, &rdir);
        if (r < 0)
                return r;
        *ret = path_join(rdir, slash + 1);
        return *ret ? 0 : -ENOMEM;
}

int sb_push_forms(sb_gen *g, strv *out, const char *path, bool glob) {
        int r = strv_push_unique(out, path);
        if (r < 0)
                return r;
        _cleanup_free_ char *resolved = NULL;
        r = resolve_form(g, path, glob, &resolved);
        if (r == -ENOMEM)
                return r;
        return r < 0 || !resolved ? 0 : strv_push_unique(out, resolved);
}

/* ---- on-disk case --------------------------------------------------------------------------- */

/* The entry of `dir` spelled `name`: exactly, else the one that matches ignoring ASCII case
 * (malloc'ed), or NULL (none, unreadable directory). A folded match counts only where the
 * volume folds: `folds`, or the spelling as written names an entry (lstat succeeds though no
 * entry is spelled so). On a case-sensitive volume ~/Project and ~/project are two directories,
 * and an allow for the one the policy did not name would widen the sandbox. */
static char *entry_on_disk(const char *dir, const char *name, bool folds) {
        DIR *d = opendir(dir);
        if (!d)
                return NULL;
        char *found = NULL;
        for (struct dirent *de; (de = readdir(d));) {
                if (strcmp(de->d_name, name) == 0) {
                        free(found);
                        closedir(d);
                        return strdup(name);
                }
                if (!found && strcasecmp(de->d_name, name) == 0)
                        found = strdup(de->d_name);
        }
        closedir(d);
        if (found && !folds) {
                _cleanup_free_ char *written = path_join(dir, name);
                struct stat st;
                if (!written || lstat(written, &st) < 0) {
                        free(found);
                        found = NULL;
                }
        }
        return found;
}

int sb_disk_case(const char *path, bool folds, char **ret) {
        _cleanup_free_ char *copy = strdup(path);
        sbuf out = { 0 };
        if (!copy)
                return -ENOMEM;
        bool lost = false; /* a component not found: it and the rest stay as written */
        for (char *save = NULL, *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                _cleanup_free_ char *disk = NULL;
                if (!lost) {
                        disk = entry_on_disk(out.len ? out.s : "/", c, folds);
                        lost = !disk;
                }
                sbuf_add(&out, "/");
                sbuf_add(&out, disk ? disk : c);
        }
        if (out.len == 0)
                sbuf_add(&out, "/");
        int r = 0;
        *ret = sbuf_take(&out, &r);
        return *ret ? 0 : r;
}

/* The kernel checks the path with the volume's spelling: a writable root the policy names
 * ~/Project while the disk says ~/project matched no allow, and every write there was refused
 * (TMPDIR, execGrantRoots and allowUnixSockets likewise). Only allows: a deny regex ignores
 * case already. */
void sb_add_disk_case(sb_gen *g, strv *forms) {
        size_t n = forms->n;
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *disk = NULL;
                int r = sb_disk_case(forms->v[i], false, &disk);
                if (r >= 0)
                        r = strv_push_unique(forms, disk);
                if (r < 0)
                        sbuf_fail(&g->out, r);
        }
        sb_sort(forms);
}

/* ---- the sections --------------------------------------------------------------------------- */

static void section_header(sb_gen *g) {
        sb_comment(g, "cordon: macOS Seatbelt profile (SBPL), generated from a resolved policy");
        sb_comment(g, "(layout and reasons: docs/design/seatbelt.md).");
        sb_comment(g, "Seatbelt applies the LAST rule that matches an operation: each section");
        sb_comment(g, "narrows or reopens what the sections above it decided. Every path appears");
        sb_comment(g, "as written and with symlinks resolved (/tmp is /private/tmp). Allows match");
        sb_comment(g, "the exact string; denies are regexes that match ASCII letters in either");
        sb_comment(g, "case, because a case-insensitive volume opens .GIT/HOOKS as .git/hooks.");
        sbuf_addf(&g->out, ";; mode: %s\n", cordon_mode_to_string(g->p->mode));
        sbuf_add(&g->out, "(version 1)\n");
        /* Allow-default with carve-outs (docs/design/seatbelt.md): a deny-default profile breaks
         * interactive shells, which need more dyld, XPC and Mach services than can be listed. */
        sbuf_add(&g->out, "(allow default)\n");
}

static void section_processes(sb_gen *g) {
        sb_comment(g, "");
        sb_comment(g, "processes: signals and task ports only within this sandbox (kill, stop or");
        sb_comment(g, "debug the agent or the user's other processes: refused)");
        sb_rule_everywhere(g, "deny signal", SBR_PROCESS);
        sbuf_add(&g->out, "(allow signal (target same-sandbox))\n");
        sb_rule_everywhere(g, "deny mach-priv-task-port", SBR_PROCESS);
        sbuf_add(&g->out, "(allow mach-priv-task-port (target same-sandbox))\n");
        /* Another process's environment and arguments hold tokens (`ps -Eww -p PID`, which
         * reads the sysctl kern.procargs2), its open files and its code signature say what the
         * user is doing. On Linux the sandbox has its own PID namespace and sees none of them.
         * The process-info operations (proc_pidinfo and its kin) take a target: allowed within
         * the sandbox (the command and its children). The sysctl has none, so it is refused
         * for every process, the sandbox's own included; the pid list stays (kern.proc lists
         * every process's name anyway). */
        sb_comment(g, "process information only within this sandbox; no process's arguments and");
        sb_comment(g, "environment (ps -E of the user's processes: refused)");
        sb_rule_everywhere(g, "deny process-info*", SBR_PROCESS);
        sbuf_add(&g->out, "(allow process-info* (target same-sandbox))\n");
        sbuf_add(&g->out, "(allow process-info-listpids)\n");
        sb_rule_begin(g, "deny sysctl-read", SBR_PROCESS);
        sbuf_add(&g->out, " (sysctl-name \"kern.procargs\") (sysctl-name \"kern.procargs2\"))\n");
}

#define MDNS_SOCKET "/var/run/mDNSResponder"

/* Unix sockets the command may connect to: allowUnixSockets, and with the network on, the DNS
 * resolver's. Each one a daemon acting on the command's behalf outside the sandbox, so none
 * but these (ssh-agent, docker.sock and the like stay refused). */
static int allow_unix_sockets(sb_gen *g, bool dns) {
        strv forms = { 0 };
        int r = dns ? sb_push_forms(g, &forms, MDNS_SOCKET, false) : 0;
        for (size_t i = 0; r >= 0 && i < g->policy->allow_unix_sockets.n; i++)
                r = sb_push_forms(g, &forms, g->policy->allow_unix_sockets.v[i], false);
        sb_add_disk_case(g, &forms);
        if (r >= 0 && forms.n > 0) {
                sb_comment(g, dns ? "Unix sockets: DNS (mDNSResponder) and allowUnixSockets"
                                  : "Unix sockets: allowUnixSockets");
                sb_rule(g, "allow network-outbound", SB_UNTAGGED, SB_ALLOW_LITERAL, &forms);
        }
        strv_done(&forms);
        return r;
}

/* A filter "(local unix-socket (subpath P))" (or remote) per spelling of TMPDIR. */
static void unix_socket_filters(sb_gen *g, const char *side, const strv *forms) {
        for (size_t i = 0; i < forms->n; i++) {
                if (g->out.err || !check_or_blame(g, forms->v[i]))
                        return;
                g->n_filters++;
                sbuf_addf(&g->out, "\n  (%s unix-socket (subpath ", side);
                sbpl_quote(&g->out, forms->v[i]);
                sbuf_add(&g->out, "))");
        }
}

/* The command's own Unix-socket servers in its private TMPDIR (a test suite's database, an
 * ssh ControlMaster, a language server, tmux): bound, accepted and connected to there. The
 * directory is the run's (0700, a random name, removed after it): a socket in it is the
 * command's, as on Linux, where the command connects to its own servers on the private /tmp. */
static int allow_tmpdir_sockets(sb_gen *g) {
        if (!g->params.tmpdir)
                return 0;
        strv forms = { 0 };
        int r = sb_push_forms(g, &forms, g->params.tmpdir, false);
        sb_add_disk_case(g, &forms);
        if (r >= 0) {
                sb_comment(g, "Unix sockets of the command's own servers in its TMPDIR");
                sb_rule_begin(g, "allow network-bind network-inbound", SB_UNTAGGED);
                unix_socket_filters(g, "local", &forms);
                sb_rule_end(g);
                sb_rule_begin(g, "allow network-outbound", SB_UNTAGGED);
                unix_socket_filters(g, "remote", &forms);
                sb_rule_end(g);
        }
        strv_done(&forms);
        return r;
}

/* docs/design/seatbelt.md: no destination but the session's proxy, which checks every host
 * against the allowlist. No loopback-wide allow (a local database or the agent's own server would
 * be reachable) and no Unix socket beyond the listed ones. */
static int section_network(sb_gen *g) {
        bool on = g->p->net.enabled;
        sb_comment(g, "");
        sb_comment(g, on ? "network: only the session's egress proxy on localhost, and DNS"
                         : "network: off (networkEnabled false); the proxy, if any, refuses all");
        sb_rule_everywhere(g, "deny network*", SBR_NETWORK);
        if (g->params.proxy_port > 0) {
                char hostport[32];
                (void) snprintf(hostport, sizeof(hostport), "localhost:%u",
                                (unsigned) g->params.proxy_port);
                sbuf_add(&g->out, "(allow network-outbound (remote tcp ");
                sbpl_quote(&g->out, hostport);
                sbuf_add(&g->out, "))\n");
        } else
                sb_comment(g, "no proxy port was given: every connection is refused");
        /* Off: no name lookups either, DNS queries can carry data out. */
        int r = allow_unix_sockets(g, on);
        return r < 0 ? r : allow_tmpdir_sockets(g);
}

static int generate(sb_gen *g) {
        section_header(g);
        section_processes(g);
        int r = section_network(g);
        if (r >= 0)
                r = sb_section_files(g);
        if (r >= 0)
                r = sb_section_exec(g);
        return r;
}

/* A string for a one-line message: control and non-ASCII bytes become '?' (the path may not be
 * UTF-8, and the message must stay one printable line). */
static void sanitize(char *s) {
        for (; *s; s++)
                if ((unsigned char) *s < 0x20 || (unsigned char) *s >= 0x7f)
                        *s = '?';
}

/* The tag's last word (sandbox-log.h): printable ASCII without blanks, quotes or backslashes
 * (policy ids are already; a caller's own must be too). */
static bool session_ok(const char *s) {
        if (!s[0] || strlen(s) > 256)
                return false;
        for (; *s; s++)
                if ((unsigned char) *s <= 0x20 || (unsigned char) *s >= 0x7f || *s == '"' ||
                    *s == '\\')
                        return false;
        return true;
}

int seatbelt_profile(const plan *p, const cordon_policy *policy, const seatbelt_params *params,
                     char **ret, cordon_error *err) {
        if (!p || !policy || !ret)
                return cordon_set_error(err, CORDON_POLICY_INVALID, EINVAL,
                                        "seatbelt_profile: no plan or policy");
        if (p->mode == CORDON_MODE_DANGER_FULL_ACCESS)
                return cordon_set_error(err, CORDON_POLICY_INVALID, EINVAL,
                                        "mode danger-full-access runs the command without a "
                                        "sandbox, so there is no Seatbelt profile; choose "
                                        "another mode");
        sb_gen g = { .p = p, .policy = policy };
        if (params)
                g.params = *params;
        if (!g.params.resolve)
                g.params.resolve = default_resolve;
        g.session = g.params.session            ? g.params.session
                    : policy->session_id && policy->session_id[0] ? policy->session_id
                                                               : SEATBELT_NO_SESSION;
        if (!session_ok(g.session))
                return cordon_set_error(err, CORDON_POLICY_INVALID, EINVAL,
                                        "the session id cannot tag a Seatbelt profile: it "
                                        "holds a blank, a quote or a control character");
        int r = generate(&g), written = 0;
        _cleanup_free_ char *text = sbuf_take(&g.out, &written); /* NULL when written < 0 */
        _cleanup_free_ char *bad = g.bad;
        if (r >= 0)
                r = written;
        if (bad && (r == -EINVAL || r == -EILSEQ)) {
                sanitize(bad);
                return cordon_set_error(err, CORDON_POLICY_UNENFORCEABLE, -r,
                                        "the path '%s' cannot be written into a Seatbelt "
                                        "profile: it %s; rename it or leave it out of the "
                                        "policy",
                                        bad, r == -EILSEQ ? "is not valid UTF-8"
                                                     : "holds a control character");
        }
        if (r < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, -r,
                                        "generating the Seatbelt profile: %s", strerror(-r));
        *ret = TAKE_PTR(text);
        return 0;
}
