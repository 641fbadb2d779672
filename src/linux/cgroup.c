/* SPDX-License-Identifier: Apache-2.0 */
/* A cgroup per run for limits.memory and limits.pids (see cgroup.h).
 *
 * Why a cgroup and not only rlimits: RLIMIT_AS limits address space, not memory (a program that
 * reserves much and touches little fails; one that forks many small children escapes it), and
 * RLIMIT_NPROC is ignored for uid 0 (copy_process() exempts INIT_USER), so a fork bomb run by
 * root is not contained by it at all. A cgroup counts every page and every task of the tree.
 *
 * Where: the unified (v2) hierarchy when it has every controller the limits need, else the legacy
 * (v1) hierarchies of those controllers. In each, the new cgroup goes below the first cgroup,
 * from this process's own cgroup upwards, where one can be created with the controllers on: a
 * delegated subtree for an unprivileged user, any cgroup for root. v2 forbids processes in a
 * cgroup whose controllers are handed down, so a parent is only taken when its
 * cgroup.subtree_control already lists them; cordon never changes a parent's configuration. */
#include "linux/cgroup.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>

#include "util/util.h"

#define CGROUP_FILE_MAX (64 * 1024)  /* /proc/self/mountinfo, cgroup.procs: read at most this */
#define DESTROY_WAIT_MS 2000

struct run_cgroup {
        cgroup_kind kind;
        char *dirs[2];   /* v2: [0]; v1: [0] memory, [1] pids; either may be NULL */
        int oom_fd;      /* v2: memory.events; v1: an eventfd registered for OOM notifications */
        int oom_src_fd;  /* v1: memory.oom_control (read for oom_kill; keeps the event alive) */
};

/* ---- parsing ----------------------------------------------------------------------------------- */

static bool list_has(const char *list, char sep, const char *word) {
        size_t n = strlen(word);
        for (const char *p = list; p && *p;) {
                const char *end = strchr(p, sep);
                size_t len = end ? (size_t) (end - p) : strlen(p);
                if (len == n && strncmp(p, word, n) == 0)
                        return true;
                p = end ? end + 1 : NULL;
        }
        return false;
}

int cgroup_parse_self(const char *text, const char *controller, char **ret) {
        for (const char *line = text; line && *line;) {
                const char *nl = strchr(line, '\n');
                size_t len = nl ? (size_t) (nl - line) : strlen(line);
                _cleanup_free_ char *l = strndup(line, len);
                line = nl ? nl + 1 : NULL;
                if (!l)
                        return -ENOMEM;
                char *c1 = strchr(l, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
                if (!c2 || c2[1] != '/')
                        continue;
                *c2 = '\0';
                bool match = controller ? list_has(c1 + 1, ',', controller)
                                        : strcmp(l, "0:") == 0 && c1[1] == '\0';
                if (!match)
                        continue;
                *ret = strdup(c2 + 1);
                return *ret ? 0 : -ENOMEM;
        }
        return -ENOENT;
}

/* mountinfo escapes blanks as \040 and so on; decodes in place. */
static void unescape_octal(char *s) {
        char *o = s;
        for (char *p = s; *p; p++) {
                if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
                    p[3] >= '0' && p[3] <= '7') {
                        *o++ = (char) ((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
                        p += 3;
                } else
                        *o++ = *p;
        }
        *o = '\0';
}

/* "36 25 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory": the mount point when the line
 * mounts the whole hierarchy of `controller` (NULL: cgroup2). */
static char *mount_line_match(char *l, const char *controller) {
        char *f[6] = { 0 }, *save = NULL, *tok = strtok_r(l, " ", &save);
        size_t n = 0;
        for (; tok && n < ELEMENTSOF(f); tok = strtok_r(NULL, " ", &save))
                f[n++] = tok;
        while (tok && strcmp(tok, "-") != 0) /* optional fields up to the separator */
                tok = strtok_r(NULL, " ", &save);
        char *fstype = tok ? strtok_r(NULL, " ", &save) : NULL;
        char *source = fstype ? strtok_r(NULL, " ", &save) : NULL;
        char *super = source ? strtok_r(NULL, " ", &save) : NULL;
        if (n < 5 || !fstype || strcmp(f[3], "/") != 0)
                return NULL;
        if (controller ? strcmp(fstype, "cgroup") != 0 || !list_has(super, ',', controller)
                       : strcmp(fstype, "cgroup2") != 0)
                return NULL;
        return f[4];
}

int cgroup_parse_mount(const char *text, const char *controller, char **ret) {
        for (const char *line = text; line && *line;) {
                const char *nl = strchr(line, '\n');
                size_t len = nl ? (size_t) (nl - line) : strlen(line);
                _cleanup_free_ char *l = strndup(line, len);
                line = nl ? nl + 1 : NULL;
                if (!l)
                        return -ENOMEM;
                char *mp = mount_line_match(l, controller);
                if (!mp)
                        continue;
                unescape_octal(mp);
                *ret = strdup(mp);
                return *ret ? 0 : -ENOMEM;
        }
        return -ENOENT;
}

int cgroup_parse_key(const char *text, const char *key, uint64_t *ret) {
        size_t n = strlen(key);
        for (const char *line = text; line && *line;) {
                if (strncmp(line, key, n) == 0 && line[n] == ' ') {
                        char *end;
                        errno = 0;
                        unsigned long long v = strtoull(line + n + 1, &end, 10);
                        if (errno || end == line + n + 1)
                                return -EINVAL;
                        *ret = v;
                        return 0;
                }
                const char *nl = strchr(line, '\n');
                line = nl ? nl + 1 : NULL;
        }
        return -ENOENT;
}

static bool streq_(const char *a, const char *b) {
        return strcmp(a, b) == 0;
}

/* ---- small file helpers ------------------------------------------------------------------------- */

static int write_at(const char *dir, const char *name, const char *value) {
        _cleanup_free_ char *p = path_join(dir, name);
        if (!p)
                return -ENOMEM;
        _cleanup_close_ int fd = open(p, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        ssize_t n = write(fd, value, strlen(value));
        return n < 0 ? -errno : 0;
}

static int read_at(const char *dir, const char *name, char **ret) {
        _cleanup_free_ char *p = path_join(dir, name);
        if (!p)
                return -ENOMEM;
        return read_file_at(AT_FDCWD, p, CGROUP_FILE_MAX, 0, ret, NULL);
}

static int host_text(const char *given, const char *path, char **ret) {
        if (given) {
                *ret = strdup(given);
                return *ret ? 0 : -ENOMEM;
        }
        return read_file_at(AT_FDCWD, path, CGROUP_FILE_MAX, 0, ret, NULL);
}

/* ---- finding a parent and creating the run's cgroup ------------------------------------------------ */

/* Cuts the last component: "/a/b" → "/a", "/a" → "/". False at "/". */
static bool parent_of(char *path) {
        char *slash = strrchr(path, '/');
        if (!slash || (slash == path && path[1] == '\0'))
                return false;
        if (slash == path)
                slash[1] = '\0';
        else
                *slash = '\0';
        return true;
}

/* v2: `base` hands `needed` down and we may move processes below it (cgroup.procs writable: the
 * kernel checks the common ancestor of source and destination, which is `base`). v1: no such
 * rule, any cgroup whose directory we may write. */
static bool usable_parent(const char *base, const char *const *needed, bool v2) {
        _cleanup_free_ char *procs = path_join(base, "cgroup.procs");
        if (!procs || access(procs, W_OK) < 0)
                return false;
        if (!v2)
                return true;
        _cleanup_free_ char *ctl = NULL;
        if (read_at(base, "cgroup.subtree_control", &ctl) < 0)
                return false;
        ctl[strcspn(ctl, "\n")] = '\0';
        for (size_t i = 0; needed[i]; i++)
                if (!list_has(ctl, ' ', needed[i]))
                        return false;
        return true;
}

static atomic_uint name_seq;

/* mkdir "cordon-<pid>-<n>" below the first usable cgroup from `own` upwards. */
static int make_child(const char *mount, const char *own, const char *const *needed, bool v2,
                      char **ret_dir) {
        _cleanup_free_ char *cand = strdup(own);
        if (!cand)
                return -ENOMEM;
        do {
                _cleanup_free_ char *base = path_join(mount, cand);
                if (!base)
                        return -ENOMEM;
                if (!usable_parent(base, needed, v2))
                        continue;
                for (unsigned tries = 0; tries < 16; tries++) {
                        char name[64];
                        (void) snprintf(name, sizeof(name), "cordon-%d-%u", (int) getpid(),
                                        atomic_fetch_add(&name_seq, 1));
                        char *dir = path_join(base, name);
                        if (!dir)
                                return -ENOMEM;
                        if (mkdir(dir, 0755) == 0) {
                                *ret_dir = dir;
                                return 0;
                        }
                        int e = errno;
                        free(dir);
                        if (e != EEXIST)
                                break; /* EACCES, EROFS...: try the next cgroup up */
                }
        } while (parent_of(cand));
        return -ENOTSUP;
}

static int set_u64(const char *dir, const char *name, uint64_t v) {
        char buf[32];
        (void) snprintf(buf, sizeof(buf), "%llu", (unsigned long long) v);
        return write_at(dir, name, buf);
}

/* v2 memory: no swap to spill into (ENOENT: no swap accounting), and an OOM kill takes the whole
 * cgroup (memory.oom.group, 4.19): "killed oom" then means the run, not one random process. */
static int limit_v2(const char *dir, const cgroup_limits *lim) {
        int r = 0;
        if (lim->memory_bytes) {
                r = set_u64(dir, "memory.max", lim->memory_bytes);
                if (r == 0 && (r = write_at(dir, "memory.swap.max", "0")) == -ENOENT)
                        r = 0;
                if (r == 0 && (r = write_at(dir, "memory.oom.group", "1")) == -ENOENT)
                        r = 0;
        }
        if (r == 0 && lim->pids)
                r = set_u64(dir, "pids.max", lim->pids);
        return r;
}

/* v1 memory: memsw (memory + swap) after the memory limit (it must stay >= it); ENOENT without
 * swap accounting. */
static int limit_v1_memory(const char *dir, uint64_t bytes) {
        int r = set_u64(dir, "memory.limit_in_bytes", bytes);
        if (r == 0 && (r = set_u64(dir, "memory.memsw.limit_in_bytes", bytes)) == -ENOENT)
                r = 0;
        return r;
}

static void cgroup_free(run_cgroup *cg) {
        if (!cg)
                return;
        safe_close(cg->oom_fd);
        safe_close(cg->oom_src_fd);
        free(cg->dirs[0]);
        free(cg->dirs[1]);
        free(cg);
}

static int watch_oom_v2(run_cgroup *cg) {
        _cleanup_free_ char *p = path_join(cg->dirs[0], "memory.events");
        if (!p)
                return -ENOMEM;
        cg->oom_fd = open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        return cg->oom_fd < 0 ? -errno : 0;
}

/* v1: an eventfd the kernel signals on every OOM event of the memory cgroup. */
static int watch_oom_v1(run_cgroup *cg) {
        _cleanup_free_ char *p = path_join(cg->dirs[0], "memory.oom_control");
        if (!p)
                return -ENOMEM;
        cg->oom_src_fd = open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (cg->oom_src_fd < 0)
                return -errno;
        cg->oom_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (cg->oom_fd < 0)
                return -errno;
        char reg[32];
        (void) snprintf(reg, sizeof(reg), "%d %d", cg->oom_fd, cg->oom_src_fd);
        return write_at(cg->dirs[0], "cgroup.event_control", reg);
}

int cgroup_write_limits(cgroup_kind kind, const char *dir, const char *controller,
                        const cgroup_limits *lim) {
        if (kind == CGROUP_V2)
                return limit_v2(dir, lim);
        if (kind == CGROUP_V1 && controller && streq_(controller, "memory"))
                return lim->memory_bytes ? limit_v1_memory(dir, lim->memory_bytes) : 0;
        if (kind == CGROUP_V1 && controller && streq_(controller, "pids"))
                return lim->pids ? set_u64(dir, "pids.max", lim->pids) : 0;
        return -EINVAL;
}

static int create_v2(const char *mount, const char *own, const cgroup_limits *lim,
                     run_cgroup *cg) {
        const char *needed[3] = { NULL };
        size_t n = 0;
        if (lim->memory_bytes)
                needed[n++] = "memory";
        if (lim->pids)
                needed[n++] = "pids";
        int r = make_child(mount, own, needed, true, &cg->dirs[0]);
        if (r < 0)
                return r;
        cg->kind = CGROUP_V2;
        r = cgroup_write_limits(CGROUP_V2, cg->dirs[0], NULL, lim);
        return r == 0 && lim->memory_bytes ? watch_oom_v2(cg) : r;
}

static int create_v1(const char *mountinfo, const char *self, const cgroup_limits *lim,
                     run_cgroup *cg) {
        static const char *const ctl[2] = { "memory", "pids" };
        const uint64_t want[2] = { lim->memory_bytes, lim->pids };
        cg->kind = CGROUP_V1;
        for (size_t i = 0; i < 2; i++) {
                if (!want[i])
                        continue;
                _cleanup_free_ char *mount = NULL, *own = NULL;
                if (cgroup_parse_mount(mountinfo, ctl[i], &mount) < 0 ||
                    cgroup_parse_self(self, ctl[i], &own) < 0)
                        return -ENOTSUP;
                const char *none[] = { NULL };
                int r = make_child(mount, own, none, false, &cg->dirs[i]);
                if (r < 0)
                        return r;
        }
        int r = 0;
        if (lim->memory_bytes && (r = cgroup_write_limits(CGROUP_V1, cg->dirs[0], "memory",
                                                          lim)) == 0)
                r = watch_oom_v1(cg);
        if (r == 0 && lim->pids)
                r = cgroup_write_limits(CGROUP_V1, cg->dirs[1], "pids", lim);
        return r;
}

/* Whether the unified hierarchy offers every controller the limits need (at its root). */
static bool v2_has(const char *mount, const cgroup_limits *lim) {
        _cleanup_free_ char *ctl = NULL;
        if (read_at(mount, "cgroup.controllers", &ctl) < 0)
                return false;
        ctl[strcspn(ctl, "\n")] = '\0';
        return (!lim->memory_bytes || list_has(ctl, ' ', "memory")) &&
               (!lim->pids || list_has(ctl, ' ', "pids"));
}

static void remove_dirs(run_cgroup *cg) {
        for (size_t i = 0; i < 2; i++)
                if (cg->dirs[i])
                        (void) rmdir(cg->dirs[i]); /* freshly made and empty: cannot be busy */
}

int cgroup_create(const cgroup_host *host, const cgroup_limits *lim, run_cgroup **ret) {
        cgroup_host none = { 0 };
        const cgroup_host *h = host ? host : &none;
        if (!lim->memory_bytes && !lim->pids)
                return -EINVAL;
        _cleanup_free_ char *mountinfo = NULL, *self = NULL, *mount2 = NULL, *own2 = NULL;
        int r = host_text(h->mountinfo, "/proc/self/mountinfo", &mountinfo);
        if (r == 0)
                r = host_text(h->self_cgroup, "/proc/self/cgroup", &self);
        if (r < 0)
                return r == -ENOENT ? -ENOTSUP : r;
        run_cgroup *cg = calloc(1, sizeof(*cg));
        if (!cg)
                return -ENOMEM;
        cg->oom_fd = cg->oom_src_fd = -1;
        if (cgroup_parse_mount(mountinfo, NULL, &mount2) == 0 &&
            cgroup_parse_self(self, NULL, &own2) == 0 && v2_has(mount2, lim))
                r = create_v2(mount2, own2, lim, cg);
        else
                r = -ENOTSUP;
        if (r == -ENOTSUP) {
                remove_dirs(cg);
                cgroup_free(cg);
                if (!(cg = calloc(1, sizeof(*cg))))
                        return -ENOMEM;
                cg->oom_fd = cg->oom_src_fd = -1;
                r = create_v1(mountinfo, self, lim, cg);
        }
        if (r < 0) {
                remove_dirs(cg);
                cgroup_free(cg);
                return r;
        }
        *ret = cg;
        return 0;
}

cgroup_kind cgroup_get_kind(const run_cgroup *cg) {
        return cg ? cg->kind : CGROUP_NONE;
}

const char *cgroup_get_path(const run_cgroup *cg) {
        return !cg ? NULL : cg->dirs[0] ? cg->dirs[0] : cg->dirs[1];
}

/* ---- while the run lasts -------------------------------------------------------------------------- */

int cgroup_oom_fd(const run_cgroup *cg, short *ret_events) {
        if (!cg || cg->oom_fd < 0)
                return -1;
        *ret_events = cg->kind == CGROUP_V2 ? POLLPRI : POLLIN;
        return cg->oom_fd;
}

void cgroup_oom_ack(const run_cgroup *cg) {
        uint64_t n;
        if (cg && cg->kind == CGROUP_V1 && cg->oom_fd >= 0)
                (void) !read(cg->oom_fd, &n, sizeof(n)); /* EAGAIN: nothing pending */
}

uint64_t cgroup_oom_kills(const run_cgroup *cg) {
        int fd = !cg ? -1 : cg->kind == CGROUP_V2 ? cg->oom_fd : cg->oom_src_fd;
        char buf[1024];
        if (fd < 0)
                return 0;
        ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
        if (n <= 0)
                return 0;
        buf[n] = '\0';
        uint64_t v = 0;
        return cgroup_parse_key(buf, "oom_kill", &v) == 0 ? v : 0;
}

uint64_t cgroup_pids_hits(const run_cgroup *cg) {
        const char *dir = !cg ? NULL : cg->kind == CGROUP_V2 ? cg->dirs[0] : cg->dirs[1];
        _cleanup_free_ char *text = NULL;
        uint64_t v = 0;
        if (!dir || read_at(dir, "pids.events", &text) < 0)
                return 0;
        return cgroup_parse_key(text, "max", &v) == 0 ? v : 0;
}

static void kill_listed(const char *dir) {
        _cleanup_free_ char *procs = NULL;
        if (!dir || read_at(dir, "cgroup.procs", &procs) < 0)
                return;
        for (char *p = procs, *end; *p; p = end) {
                long pid = strtol(p, &end, 10);
                if (end == p)
                        break;
                if (pid > 0)
                        (void) kill((pid_t) pid, SIGKILL); /* ESRCH: gone already */
        }
}

void cgroup_kill(const run_cgroup *cg) {
        if (!cg)
                return;
        /* cgroup.kill (5.14) kills the whole tree atomically: no fork can outrun it. */
        if (cg->kind == CGROUP_V2 && write_at(cg->dirs[0], "cgroup.kill", "1") == 0)
                return;
        kill_listed(cg->dirs[0]);
        kill_listed(cg->dirs[1]);
}


/* A PID namespace's processes are killed when its init exits, but they leave the cgroup only as
 * they finish dying: rmdir says EBUSY until then. */
void cgroup_destroy(run_cgroup *cg) {
        if (!cg)
                return;
        int64_t deadline = monotonic_ms() + DESTROY_WAIT_MS;
        for (unsigned round = 0;; round++) {
                bool busy = false;
                for (size_t i = 0; i < 2; i++)
                        if (cg->dirs[i] && rmdir(cg->dirs[i]) < 0 && errno == EBUSY)
                                busy = true;
                        else if (cg->dirs[i]) {
                                free(cg->dirs[i]);
                                cg->dirs[i] = NULL;
                        }
                if (!busy || monotonic_ms() >= deadline)
                        break;
                if (round % 25 == 0)
                        cgroup_kill(cg);
                (void) nanosleep(&(struct timespec) { .tv_nsec = 2 * 1000 * 1000 }, NULL);
        }
        cgroup_free(cg);
}

/* ---- the monitor's side ------------------------------------------------------------------------- */

/* `self`: the files through which a process moves itself (v1's per-thread `tasks`), else the
 * ones through which it moves another process by pid (`cgroup.procs`). */
static int procs_open(const run_cgroup *cg, bool self, cgroup_procs *ret) {
        *ret = (cgroup_procs) CGROUP_PROCS_INIT;
        const char *name = self && cg && cg->kind == CGROUP_V1 ? "tasks" : "cgroup.procs";
        for (size_t i = 0; cg && i < 2; i++) {
                if (!cg->dirs[i])
                        continue;
                _cleanup_free_ char *p = path_join(cg->dirs[i], name);
                if (!p) {
                        cgroup_procs_close(ret);
                        return -ENOMEM;
                }
                ret->fd[i] = open(p, O_WRONLY | O_CLOEXEC | O_NOCTTY);
                if (ret->fd[i] < 0) {
                        int e = -errno;
                        cgroup_procs_close(ret);
                        return e;
                }
        }
        return 0;
}

int cgroup_procs_open(const run_cgroup *cg, cgroup_procs *ret) {
        return procs_open(cg, false, ret);
}

int cgroup_procs_open_self(const run_cgroup *cg, cgroup_procs *ret) {
        return procs_open(cg, true, ret);
}

static int procs_write(const cgroup_procs *procs, const char *buf, size_t len) {
        for (size_t i = 0; i < 2; i++)
                if (procs->fd[i] >= 0 && write(procs->fd[i], buf, len) != (ssize_t) len)
                        return -errno;
        return 0;
}

int cgroup_procs_attach(const cgroup_procs *procs, pid_t pid) {
        char buf[32];
        int len = snprintf(buf, sizeof(buf), "%d", (int) pid);
        return procs_write(procs, buf, (size_t) len);
}

/* "0" names the writer. On v1 the `tasks` file moves the one calling thread, and the kernel then
 * skips the global cgroup_threadgroup_rwsem (cgroup_procs_write_start(): only a write naming
 * another task, or a whole thread group, needs it stable). Taking that lock for writing is what
 * costs a migration by pid: it waits for an RCU grace period, 6-16 ms on the machines of
 * BENCHMARKS.md, on the critical path of every start. A single-threaded caller has no other
 * thread to leave behind, and what it forks from then on is born inside. */
int cgroup_procs_enter_self(const cgroup_procs *procs) {
        return procs_write(procs, "0", 1);
}

void cgroup_procs_close(cgroup_procs *procs) {
        for (size_t i = 0; i < 2; i++)
                procs->fd[i] = safe_close(procs->fd[i]);
}

/* ---- probe ----------------------------------------------------------------------------------------- */

cgroup_kind cgroup_probe(char *detail, size_t size) {
        run_cgroup *cg = NULL;
        cgroup_limits lim = { .memory_bytes = 64ULL << 20, .pids = 64 };
        int r = cgroup_create(NULL, &lim, &cg);
        if (r == -ENOTSUP) {
                (void) snprintf(detail, size, "no cgroup with the memory and pids controllers "
                                              "can be created here (no delegated subtree)");
                return CGROUP_NONE;
        }
        if (r < 0) {
                (void) snprintf(detail, size, "creating a cgroup failed: %s", strerror(-r));
                return CGROUP_NONE;
        }
        cgroup_kind k = cg->kind;
        _cleanup_free_ char *p0 = cg->dirs[0] ? strdup(cg->dirs[0]) : NULL;
        _cleanup_free_ char *p1 = cg->dirs[1] ? strdup(cg->dirs[1]) : NULL;
        if (p0)
                (void) parent_of(p0);
        if (p1)
                (void) parent_of(p1);
        if (k == CGROUP_V2)
                (void) snprintf(detail, size, "cgroup v2 (memory, pids) below %s", p0 ? p0 : "?");
        else
                (void) snprintf(detail, size, "cgroup v1: memory below %s, pids below %s",
                                p0 ? p0 : "?", p1 ? p1 : "?");
        cgroup_destroy(cg);
        return k;
}

/* ---- choosing between a cgroup and rlimits for a run ------------------------------------------------ */

int cgroup_for_limits(uint64_t memory_bytes, uint64_t *pids_io, bool pids_default,
                      run_cgroup **ret, cordon_error *err) {
        uint64_t pids = *pids_io;
        *ret = NULL;
        if (!memory_bytes && !pids)
                return 0;
        cgroup_limits lim = { .memory_bytes = memory_bytes, .pids = pids };
        int r = cgroup_create(NULL, &lim, ret);
        if (r == 0)
                return 0;
        if (pids_default && !memory_bytes) {
                /* Only the built-in ceiling was at stake: RLIMIT_NPROC where it binds (not root),
                 * nothing otherwise (docs/design/architecture.md, "Limits"). */
                if (geteuid() == 0)
                        *pids_io = 0;
                return 0;
        }
        if (r != -ENOTSUP)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, -r,
                                        "cannot create a cgroup for limits.memory/limits.pids: "
                                        "%s", strerror(-r));
        /* The rlimit stand-ins: RLIMIT_AS for memory works for everyone; RLIMIT_NPROC is ignored
         * for uid 0 (copy_process() exempts the root user), so a root fork bomb would run free:
         * fail closed rather than pretend (docs/design/backends.md). */
        if (pids && geteuid() == 0 && pids_default) {
                *pids_io = 0; /* the built-in ceiling, not asked for: see above */
                return 0;
        }
        if (pids && geteuid() == 0)
                return cordon_set_error(err, CORDON_POLICY_UNENFORCEABLE, ENOTSUP,
                                        "limits.pids cannot be enforced: no cgroup with the pids "
                                        "controller can be created here, and RLIMIT_NPROC does not "
                                        "apply to root; hint: run cordon in a cgroup v2 tree with "
                                        "the pids controller delegated (see 'cordon probe'), or "
                                        "drop --pids");
        return 0;
}
