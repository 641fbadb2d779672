/* SPDX-License-Identifier: Apache-2.0 */
/* landlock_plan_build(): the landlock backend's two Landlock layers (see landlock-plan.h).
 *
 * Carving: to keep rights R off a set of paths X (secrets for reads, existing protected paths
 * for writes) while granting R beneath a directory D, every ancestor of an element of X below D
 * gets nothing, and every other entry of those ancestors gets R (a directory: R beneath it; a
 * file: R on it). The entries are those on disk when the plan is made: an entry created later in
 * a carved directory gets nothing (unreadable, unwritable), which fails closed. Symlinks get no
 * rule: Landlock checks the file they lead to. Elements of X may be globs (denyRead entries):
 * each component is matched against directory entries, so a match created later is covered too
 * (it is a new entry in a carved directory). */
#include "plan/landlock-plan.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/landlock.h>
#include <stdio.h>
#include <sys/stat.h>

#include "plan/plan-internal.h"
#include "util/uapi.h"

#define FS_READ_FILES (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_EXECUTE)
#define FS_WRITE_FILES (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE)
#define FS_WRITE_DIRS                                                                             \
        (LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |                         \
         LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |  \
         LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |                             \
         LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_REFER)
/* The rights a rule on a non-directory may carry (the kernel refuses others: EINVAL). */
#define FS_FILE_RIGHTS                                                                            \
        (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE | \
         LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)

const char *const landlock_plan_dev_nodes[] = {
        "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", NULL,
};

/* ---- rules ---------------------------------------------------------------------------------- */

static int add_rule(ll_layer *l, const char *path, uint64_t access, bool is_dir, cordon_error *err) {
        if (!is_dir)
                access &= FS_FILE_RIGHTS;
        if (access == 0)
                return 0;
        if (l->n_rules >= LANDLOCK_PLAN_MAX_RULES)
                return cordon_set_error(err, CORDON_POLICY_UNENFORCEABLE, E2BIG,
                                        "the landlock backend would need more than %u Landlock "
                                        "rules (near %s): a directory that holds a secret or a "
                                        "protected path has too many entries; hint: use the "
                                        "native backend, or move the secret",
                                        LANDLOCK_PLAN_MAX_RULES, path);
        char *c = strdup(path);
        ll_rule *n = c ? realloc(l->rules, (l->n_rules + 1) * sizeof(*n)) : NULL;
        if (!n) {
                free(c);
                return -ENOMEM;
        }
        l->rules = n;
        l->rules[l->n_rules++] = (ll_rule) { c, access };
        return 0;
}

/* ---- exclusion patterns --------------------------------------------------------------------- */

typedef struct excl {
        strv comp;     /* the components of an absolute path ("/" has none) */
        bool literal;  /* bytes match themselves only (a real path found on disk) */
} excl;

typedef struct excl_set {
        excl *v;
        size_t n;
} excl_set;

static void excl_set_done(excl_set *s) {
        for (size_t i = 0; i < s->n; i++)
                strv_done(&s->v[i].comp);
        free(s->v);
        *s = (excl_set) { 0 };
}

static int split_path(const char *path, strv *ret) {
        _cleanup_free_ char *copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        char *save = NULL;
        for (char *t = strtok_r(copy, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
                int r = strv_push(ret, t);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int excl_add(excl_set *s, const char *path, bool literal) {
        if (!path_is_absolute(path))
                return 0;
        excl e = { .literal = literal };
        int r = split_path(path, &e.comp);
        excl *n = r >= 0 ? realloc(s->v, (s->n + 1) * sizeof(*n)) : NULL;
        if (!n) {
                strv_done(&e.comp);
                return r < 0 ? r : -ENOMEM;
        }
        s->v = n;
        s->v[s->n++] = e;
        return 0;
}

static bool comp_matches(const excl *e, size_t i, const char *name) {
        const char *pat = e->comp.v[i];
        if (e->literal || !strpbrk(pat, "*?["))
                return strcmp(pat, name) == 0;
        return fnmatch(pat, name, 0) == 0;
}

/* ---- carving -------------------------------------------------------------------------------- */

typedef struct carver {
        ll_layer *layer;
        uint64_t access;
        const excl_set *x;
        strv *carved;        /* directories entered (not granted whole) */
        cordon_error *err;
} carver;

/* What an entry named `name` of a directory at depth `depth` is to the active exclusions: 2 when
 * one of them is the entry itself (or a glob matching it), 1 when one lies beneath it (*sub gets
 * the indices to pass down), 0 when none concerns it. */
static int classify(const carver *c, const size_t *active, size_t n_active, size_t depth,
                    const char *name, size_t *sub, size_t *n_sub) {
        int verdict = 0;
        *n_sub = 0;
        for (size_t i = 0; i < n_active; i++) {
                const excl *e = &c->x->v[active[i]];
                if (depth >= e->comp.n || !comp_matches(e, depth, name))
                        continue;
                if (depth + 1 == e->comp.n)
                        return 2;
                sub[(*n_sub)++] = active[i];
                verdict = 1;
        }
        return verdict;
}

static int carve_dir(const carver *c, const char *dir, size_t depth, const size_t *active,
                     size_t n_active);

static int carve_entry(const carver *c, const char *dir, int dfd, const struct dirent *de,
                       size_t depth, const size_t *active, size_t n_active, size_t *sub) {
        size_t n_sub = 0;
        int kind = classify(c, active, n_active, depth, de->d_name, sub, &n_sub);
        if (kind == 2)
                return 0; /* the excluded path itself: no right here, nor beneath */
        unsigned char type = de->d_type;
        if (type == DT_UNKNOWN) {
                struct stat st;
                if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        return errno == ENOENT ? 0 : -errno;
                type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
        }
        if (type == DT_LNK)
                return 0; /* checked where it leads */
        _cleanup_free_ char *path = path_join(dir, de->d_name);
        if (!path)
                return -ENOMEM;
        if (kind == 1 && type == DT_DIR)
                return carve_dir(c, path, depth + 1, sub, n_sub);
        return add_rule(c->layer, path, c->access, type == DT_DIR, c->err);
}

static int list_error(const carver *c, const char *dir, int e) {
        return cordon_set_error(c->err, CORDON_POLICY_UNENFORCEABLE, e,
                                "cannot list %s (%s): it holds a path the landlock backend must "
                                "keep out of reach, and Landlock can only grant the other "
                                "entries one by one; hint: make it readable, or use the native "
                                "backend", dir, strerror(e));
}

static int carve_dir(const carver *c, const char *dir, size_t depth, const size_t *active,
                     size_t n_active) {
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : list_error(c, dir, errno); /* gone: nothing granted */
        DIR *d = fdopendir(fd);
        if (!d) {
                int e = errno;
                (void) close(fd);
                return -e;
        }
        _cleanup_free_ size_t *sub = calloc(n_active ? n_active : 1, sizeof(size_t));
        int r = sub ? strv_push(c->carved, dir) : -ENOMEM;
        for (struct dirent *de; r >= 0 && (errno = 0, de = readdir(d));) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                r = carve_entry(c, dir, fd, de, depth, active, n_active, sub);
        }
        if (r >= 0 && errno != 0)
                r = list_error(c, dir, errno);
        (void) closedir(d);
        return r;
}

/* Grants c->access beneath `root` (a directory) minus the exclusions. */
static int carve(const carver *c, const char *root) {
        strv rc = { 0 };
        int r = split_path(root, &rc);
        _cleanup_free_ size_t *active = calloc(c->x->n ? c->x->n : 1, sizeof(size_t));
        if (r < 0 || !active) {
                strv_done(&rc);
                return r < 0 ? r : -ENOMEM;
        }
        size_t n_active = 0;
        bool excluded = false;
        for (size_t i = 0; i < c->x->n; i++) {
                const excl *e = &c->x->v[i];
                size_t k = 0;
                while (k < rc.n && k < e->comp.n && comp_matches(e, k, rc.v[k]))
                        k++;
                if (k == e->comp.n && k <= rc.n)
                        excluded = true; /* root is (beneath) an excluded path: grant nothing */
                else if (k == rc.n)
                        active[n_active++] = i; /* lies beneath root */
        }
        size_t depth = rc.n;
        strv_done(&rc);
        bool is_dir = false;
        if (excluded || !path_exists(root, &is_dir))
                return 0;
        if (n_active == 0 || !is_dir)
                return add_rule(c->layer, root, c->access, is_dir, c->err);
        return carve_dir(c, root, depth, active, n_active);
}

/* ---- the two layers ------------------------------------------------------------------------- */

static int add_dev_nodes(ll_layer *l, uint64_t access, cordon_error *err) {
        for (size_t i = 0; landlock_plan_dev_nodes[i]; i++) {
                struct stat st;
                if (lstat(landlock_plan_dev_nodes[i], &st) < 0 || S_ISLNK(st.st_mode))
                        continue;
                int r = add_rule(l, landlock_plan_dev_nodes[i], access, false, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The secret set as patterns: each entry as written (defused literals, globs) and resolved. */
static int secret_patterns(const plan *p, excl_set *x) {
        for (size_t i = 0; i < p->paths.secrets.n; i++) {
                const char *s = p->paths.secrets.v[i];
                int r = excl_add(x, s, false);
                if (r < 0)
                        return r;
                if (path_is_glob(s))
                        continue;
                _cleanup_free_ char *resolved = NULL;
                r = path_resolve_lenient(s, &resolved);
                if (r == -ENOMEM)
                        return r;
                if (r >= 0 && strcmp(resolved, s) != 0 && (r = excl_add(x, resolved, false)) < 0)
                        return r;
        }
        return 0;
}

/* What must keep its content: the protected paths and secrets that exist now, as found on disk
 * (globs expanded). Those that do not exist cannot come into existence: the supervisor refuses
 * to create them. */
static int existing_protected(const plan *p, excl_set *x, cordon_error *err) {
        const strv *lists[] = { &p->paths.protect, &p->paths.secrets };
        strv found = { 0 };
        int r = 0;
        for (size_t l = 0; r >= 0 && l < ELEMENTSOF(lists); l++)
                for (size_t i = 0; r >= 0 && i < lists[l]->n; i++) {
                        r = path_expand_existing(lists[l]->v[i], &found);
                        if (r == -E2BIG)
                                r = cordon_set_error(err, CORDON_POLICY_INVALID, E2BIG,
                                                     "the deny pattern '%s' matches more than "
                                                     "%u paths; narrow it", lists[l]->v[i],
                                                     POLICY_MAX_LIST);
                }
        for (size_t i = 0; r >= 0 && i < found.n; i++)
                r = excl_add(x, found.v[i], true);
        strv_done(&found);
        return r;
}

/* Read and execute: everywhere but the secrets, the host's /tmp (shared with every process; the
 * run has its own TMPDIR) and /dev (a few nodes only). Then the binds, TMPDIR and the bundle
 * directory of TLS inspection, which may lie
 * under /tmp, each carved around the secrets beneath it. Listing directories (READ_DIR) is
 * granted everywhere: Landlock cannot grant it on an ancestor without granting it beneath. */
static int plan_reads(const plan *p, const landlock_plan_options *o, landlock_plan *lp,
                      cordon_error *err) {
        excl_set x = { 0 };
        int r = secret_patterns(p, &x);
        carver c = { &lp->monitor, FS_READ_FILES, &x, &lp->carved_read, err };
        /* TMPDIR and the binds first: they may lie under /tmp, excluded from "/" below. */
        if (r >= 0 && o->tmpdir)
                r = carve(&c, o->tmpdir);
        /* Read only: no write rule ever names it (plan_writes), so the bundle the clients trust
         * cannot be replaced by the command. */
        if (r >= 0 && o->ca_dir)
                r = carve(&c, o->ca_dir);
        for (size_t i = 0; r >= 0 && i < p->paths.n_binds; i++)
                r = carve(&c, p->paths.binds[i].resolved);
        /* Read narrowing (plan-reads.c): the allowRead entries inside the narrowed directories
         * like the binds, and the directories themselves left out of "/". */
        for (size_t i = 0; r >= 0 && i < p->paths.read_exceptions.n; i++)
                r = carve(&c, p->paths.read_exceptions.v[i]);
        for (size_t i = 0; r >= 0 && i < p->paths.narrowed.n; i++)
                r = excl_add(&x, p->paths.narrowed.v[i], true);
        if (r >= 0 && (r = excl_add(&x, "/tmp", true)) >= 0 && (r = excl_add(&x, "/dev", true)) >= 0)
                r = carve(&c, "/");
        if (r >= 0)
                r = add_rule(&lp->monitor, "/", LANDLOCK_ACCESS_FS_READ_DIR, true, err);
        excl_set_done(&x);
        return r;
}

/* Writes. The monitor layer: every write right beneath the writable roots and TMPDIR (the
 * supervisor creates files there for the command and must be able to open what it created).
 * The command layer: file writes carved around what exists of the protected set. */
static int plan_writes(const plan *p, const landlock_plan_options *o, landlock_plan *lp,
                       cordon_error *err) {
        excl_set x = { 0 };
        int r = existing_protected(p, &x, err);
        carver c = { &lp->command, FS_WRITE_FILES, &x, &lp->carved_write, err };
        for (size_t i = 0; r >= 0 && i <= p->writable_roots.n; i++) {
                const char *root = i < p->writable_roots.n ? p->writable_roots.v[i] : o->tmpdir;
                if (!root)
                        continue;
                bool is_dir = false;
                if (!path_exists(root, &is_dir))
                        continue; /* gone since planning: nothing to write beneath */
                r = add_rule(&lp->monitor, root, FS_WRITE_FILES | FS_WRITE_DIRS, is_dir, err);
                if (r >= 0)
                        r = carve(&c, root);
        }
        if (r >= 0)
                r = add_dev_nodes(&lp->monitor, FS_READ_FILES | FS_WRITE_FILES, err);
        if (r >= 0)
                r = add_dev_nodes(&lp->command, FS_WRITE_FILES, err);
        excl_set_done(&x);
        return r;
}

static void layer_init(ll_layer *l, const char *name, uint64_t handled_fs) {
        *l = (ll_layer) {
                .name = name,
                .handled_fs = handled_fs,
                .scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL,
                .stdio_access = handled_fs & (LANDLOCK_ACCESS_FS_READ_FILE | FS_WRITE_FILES),
        };
}

int landlock_plan_build(const plan *p, const landlock_plan_options *o, landlock_plan **ret,
                        cordon_error *err) {
        if (o->abi < LANDLOCK_PLAN_MIN_ABI)
                return cordon_set_error(err, CORDON_SANDBOX_UNAVAILABLE, ENOTSUP,
                                        "refusing to run the command unconfined: the landlock "
                                        "backend needs Landlock ABI %d (Linux 6.12: signal "
                                        "scoping), this kernel has %d; hint: enable user "
                                        "namespaces for the native backend, or use a newer kernel",
                                        LANDLOCK_PLAN_MIN_ABI, o->abi);
        landlock_plan *lp = calloc(1, sizeof(*lp));
        if (!lp)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, ENOMEM, "out of memory");
        layer_init(&lp->monitor, "monitor", FS_READ_FILES | LANDLOCK_ACCESS_FS_READ_DIR |
                                                    FS_WRITE_FILES | FS_WRITE_DIRS);
        lp->monitor.handled_net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
        memcpy(lp->monitor.connect_ports, o->proxy_ports, sizeof(lp->monitor.connect_ports));
        layer_init(&lp->command, "command", FS_WRITE_FILES);
        int r = plan_reads(p, o, lp, err);
        if (r >= 0)
                r = plan_writes(p, o, lp, err);
        if (r < 0) {
                landlock_plan_free(lp);
                if (err && err->code == CORDON_OK)
                        return cordon_set_error(err, CORDON_LAUNCH_FAILED, r,
                                                "planning the Landlock rules: %s", strerror(-r));
                return r;
        }
        *ret = lp;
        return 0;
}

static void layer_done(ll_layer *l) {
        for (size_t i = 0; i < l->n_rules; i++)
                free(l->rules[i].path);
        free(l->rules);
}

void landlock_plan_free(landlock_plan *lp) {
        if (!lp)
                return;
        layer_done(&lp->monitor);
        layer_done(&lp->command);
        strv_done(&lp->carved_read);
        strv_done(&lp->carved_write);
        free(lp);
}
