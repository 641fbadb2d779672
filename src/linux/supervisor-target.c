/* SPDX-License-Identifier: Apache-2.0 */
/* The task behind a notification: its /proc/<tid>, its memory (copied once), its identity.
 *
 * Order matters (docs/design/creation-rules.md, "per notification"): everything that names the
 * task (/proc/<tid>, a pidfd, the memory copies, the status) is obtained first, then
 * SECCOMP_IOCTL_NOTIF_ID_VALID proves the task was still blocked in this very syscall, so none
 * of it can belong to a process that reused the tid. Only then does the supervisor act. */
#include "linux/supervisor-internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>

/* ---- The supervisor thread's own identity ---------------------------------------------------- */

static int sys_capget(struct __user_cap_data_struct data[2]) {
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
        return syscall(SYS_capget, &h, data) < 0 ? -errno : 0;
}

/* capset with pid 0 changes the calling thread only: other workers keep their own sets. */
static int sys_capset_thread(const struct __user_cap_data_struct data[2]) {
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
        return syscall(SYS_capset, &h, data) < 0 ? -errno : 0;
}

static int cmp_gid(const void *a, const void *b) {
        gid_t x = *(const gid_t *) a, y = *(const gid_t *) b;
        return x < y ? -1 : x > y;
}

static int own_userns(int proc_fd, dev_t *ret_dev, ino_t *ret_ino) {
        struct stat st;
        if (fstatat(proc_fd, "thread-self/ns/user", &st, 0) < 0)
                return -errno;
        *ret_dev = st.st_dev;
        *ret_ino = st.st_ino;
        return 0;
}

int worker_creds_init(worker_creds *c, int proc_fd) {
        *c = (worker_creds) { 0 };
        /* setfsuid() with an invalid id changes nothing and returns the current one. */
        c->fsuid = (uid_t) setfsuid((uid_t) -1);
        c->fsgid = (gid_t) setfsgid((gid_t) -1);
        int n = getgroups(0, NULL);
        if (n < 0)
                return -errno;
        c->groups = calloc((size_t) n + 1, sizeof(gid_t));
        if (!c->groups)
                return -ENOMEM;
        c->n_groups = getgroups(n, c->groups);
        if (c->n_groups < 0)
                return -errno;
        qsort(c->groups, (size_t) c->n_groups, sizeof(gid_t), cmp_gid);
        int r = sys_capget(c->caps);
        if (r < 0)
                return r;
        c->eff_now = c->caps[0].effective | (uint64_t) c->caps[1].effective << 32;
        c->umask_now = -1;
        return own_userns(proc_fd, &c->userns_dev, &c->userns_ino);
}

void worker_creds_done(worker_creds *c) {
        free(c->groups);
        c->groups = NULL;
}

/* ---- Reading /proc/<tid>/status ----------------------------------------------------------------- */

typedef struct target_status {
        bool have_umask, have_tgid, have_uid, have_gid, have_groups, have_caps;
        mode_t umask;
        pid_t tgid;
        uid_t fsuid;
        gid_t fsgid;
        gid_t groups[128];
        int n_groups; /* -1: more than fit, treated as a mismatch (fails closed) */
        uint64_t cap_eff;
        unsigned sid_index; /* in: which NSsid field is the sandbox's (0: do not parse) */
        pid_t sid;    /* NSsid in the sandbox's namespace; 0: none there */
} target_status;

/* "NSsid:\t1\t7": the session id in each PID namespace from procfs's down to the task's. The
 * one at `index` is the number in the sandbox's namespace, where a warm session's init numbers
 * its execs (session-host.c attributes by it). A task above that namespace has no such field:
 * 0, no attribution. */
static pid_t parse_nssid(const char *v, unsigned index) {
        for (unsigned i = 0;; i++) {
                char *end;
                errno = 0;
                unsigned long x = strtoul(v, &end, 10);
                if (end == v || errno || x > INT32_MAX)
                        return 0;
                if (i == index)
                        return (pid_t) x;
                v = end;
        }
}

/* One number of a status field: blanks, then digits in `base` (8, 10 or 16) up to `max`.
 * Strict where sscanf() is lenient (no sign, no "0x", no locale): anything unexpected fails the
 * field, and a missing field fails the request closed. */
static bool parse_number(const char **cursor, unsigned base, unsigned long long max,
                         unsigned long long *ret) {
        const char *v = *cursor;
        while (*v == ' ' || *v == '\t')
                v++;
        unsigned long long x = 0;
        const char *digits = v;
        for (;; v++) {
                unsigned d = *v >= '0' && *v <= '9'                ? (unsigned) (*v - '0')
                             : base == 16 && *v >= 'a' && *v <= 'f' ? (unsigned) (*v - 'a' + 10)
                                                                   : base;
                if (d >= base)
                        break;
                if (x > (max - d) / base)
                        return false;
                x = x * base + d;
        }
        if (v == digits)
                return false;
        *cursor = v;
        *ret = x;
        return true;
}

/* "Uid:\t0\t0\t0\t0": real, effective, saved, filesystem. */
static bool parse_fs_id(const char *v, unsigned *ret) {
        unsigned long long id = 0;
        for (unsigned i = 0; i < 4; i++)
                if (!parse_number(&v, 10, UINT32_MAX, &id))
                        return false;
        *ret = (unsigned) id;
        return true;
}

static bool parse_groups(const char *v, target_status *t) {
        t->n_groups = 0;
        for (char *end;; v = end) {
                while (*v == ' ' || *v == '\t')
                        v++;
                if (*v == '\n' || *v == '\0')
                        break;
                errno = 0;
                unsigned long g = strtoul(v, &end, 10);
                if (end == v || errno || g > UINT32_MAX)
                        return false;
                if (t->n_groups < 0 || t->n_groups == (int) ELEMENTSOF(t->groups))
                        t->n_groups = -1;
                else
                        t->groups[t->n_groups++] = (gid_t) g;
        }
        if (t->n_groups > 0)
                qsort(t->groups, (size_t) t->n_groups, sizeof(gid_t), cmp_gid);
        return true;
}

/* `line` starts with `key` (a literal, colon included): *ret_value is what follows. */
#define STATUS_KEY(line, key, ret_value) \
        (strncmp((line), (key), sizeof(key) - 1) == 0 && ((*(ret_value) = (line) + sizeof(key) - 1), true))

/* One line of /proc/<tid>/status, newline-terminated (a cut line is never parsed: its field
 * stays missing). Dispatched on the first byte: the file has about 60 lines and we need 7. */
static void parse_status_line(const char *line, target_status *t) {
        const char *v;
        unsigned long long x = 0;
        switch (line[0]) {
        case 'U':
                if (STATUS_KEY(line, "Umask:", &v)) {
                        t->have_umask = parse_number(&v, 8, 0777, &x);
                        t->umask = (mode_t) x;
                } else if (STATUS_KEY(line, "Uid:", &v))
                        t->have_uid = parse_fs_id(v, &t->fsuid);
                break;
        case 'T':
                if (STATUS_KEY(line, "Tgid:", &v)) {
                        t->have_tgid = parse_number(&v, 10, INT32_MAX, &x) && x > 0;
                        t->tgid = (pid_t) x;
                }
                break;
        case 'G':
                if (STATUS_KEY(line, "Gid:", &v))
                        t->have_gid = parse_fs_id(v, &t->fsgid);
                else if (STATUS_KEY(line, "Groups:", &v))
                        t->have_groups = parse_groups(v, t);
                break;
        case 'C':
                if (STATUS_KEY(line, "CapEff:", &v)) {
                        t->have_caps = parse_number(&v, 16, UINT64_MAX, &x);
                        t->cap_eff = x;
                }
                break;
        case 'N':
                if (t->sid_index && STATUS_KEY(line, "NSsid:", &v))
                        t->sid = parse_nssid(v, t->sid_index);
                break;
        default:
                break;
        }
}

/* Each field's parser stops at the line's '\n'. */
static void parse_status(const char *buf, target_status *t) {
        for (const char *line = buf, *nl; (nl = strchr(line, '\n')); line = nl + 1)
                parse_status_line(line, t);
}

static bool status_complete(const target_status *t) {
        return t->have_umask && t->have_tgid && t->have_uid && t->have_gid && t->have_groups &&
               t->have_caps;
}

/* procfs generates the whole status text at the first read and hands as much of it as fits, so
 * one read is normally the whole file. pread() from offset 0 makes procfs generate it afresh from
 * the task as it is now, also through an fd opened at an earlier request. Should a kernel hand
 * out less, the rest is read and everything parsed again. -ESRCH: the fd's task is gone. */
static int read_status_fd(int fd, unsigned sid_index, target_status *t) {
        char buf[8192];
        ssize_t n;
        do
                n = pread(fd, buf, sizeof(buf) - 1, 0);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        buf[n] = '\0';
        *t = (target_status) { .sid_index = sid_index };
        parse_status(buf, t);
        while (!status_complete(t) && n > 0 && (size_t) n < sizeof(buf) - 1) {
                ssize_t more = pread(fd, buf + n, sizeof(buf) - 1 - (size_t) n, n);
                if (more < 0 && errno == EINTR)
                        continue;
                if (more <= 0)
                        break;
                n += more;
                buf[n] = '\0';
                *t = (target_status) { .sid_index = sid_index };
                parse_status(buf, t);
        }
        if (!status_complete(t))
                return -EPERM; /* cannot tell who the caller is: act for nobody */
        return 0;
}

static int read_status(int tid_fd, unsigned sid_index, target_status *t) {
        _cleanup_close_ int fd = openat(tid_fd, "status", O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return errno == ENOENT ? -ESRCH : -errno;
        return read_status_fd(fd, sid_index, t);
}

/* ---- The callers' /proc handles, kept across notifications ----------------------------------- */

/* Why a kept pair names the caller. Both fds are bound to one struct pid (procfs inodes hold it),
 * never to a number. A status read through them succeeds only while that struct pid has a task;
 * while it has one, it holds its number, and no other live task can hold the same number in the
 * same PID namespace. The caller of the notification holds its tid from RECV until it is
 * answered, and NOTIF_ID_VALID, later, proves it still does. So a successful read of the kept
 * status for the caller's tid is a read of the caller's own task, as a fresh open of /proc/<tid>
 * after RECV would be. A read that fails with ESRCH means that task is gone and the tid may name
 * another task now: the pair is closed and /proc/<tid> opened again. An exec by a non-leader
 * thread moves the leader's struct pid to that thread (de_thread): the pair then names it, the
 * thread that now has the tid, and its status is what is read. Nothing read is kept: the umask,
 * identity and capabilities are the task's at this request. */

void caller_handles_init(caller_handles *hs) {
        *hs = (caller_handles) { .next = 0 };
        for (unsigned i = 0; i < CALLER_HANDLES; i++)
                hs->h[i] = (caller_handle) { .tid = 0, .tid_fd = -1, .status_fd = -1 };
}

static void handle_drop(caller_handle *h) {
        h->tid_fd = safe_close(h->tid_fd);
        h->status_fd = safe_close(h->status_fd);
        h->tid = 0;
}

void caller_handles_done(caller_handles *hs) {
        for (unsigned i = 0; i < CALLER_HANDLES; i++)
                handle_drop(&hs->h[i]);
}

static caller_handle *handle_new(caller_handles *hs, pid_t tid, int proc_fd) {
        caller_handle *h = NULL;
        for (unsigned i = 0; i < CALLER_HANDLES && !h; i++)
                if (hs->h[i].tid == 0)
                        h = &hs->h[i];
        if (!h) {
                h = &hs->h[hs->next];
                hs->next = (hs->next + 1) % CALLER_HANDLES;
                handle_drop(h);
        }
        char name[32];
        (void) snprintf(name, sizeof(name), "%d", tid);
        h->tid_fd = openat(proc_fd, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (h->tid_fd >= 0)
                h->status_fd = openat(h->tid_fd, "status", O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (h->tid_fd < 0 || h->status_fd < 0) {
                int e = errno;
                handle_drop(h);
                errno = e;
                return NULL;
        }
        h->tid = tid;
        return h;
}

/* The caller's status, read through its kept handles (opened now if there are none, or if the
 * task they named is gone); sets r->tid_fd. */
static int caller_status(request *r, target_status *t) {
        pid_t tid = (pid_t) r->n->pid;
        caller_handles *hs = r->handles;
        for (unsigned i = 0; i < CALLER_HANDLES; i++) {
                caller_handle *h = &hs->h[i];
                if (h->tid != tid)
                        continue;
                int e = read_status_fd(h->status_fd, r->s->sid_index, t);
                if (e != -ESRCH) {
                        r->tid_fd = h->tid_fd;
                        return e;
                }
                handle_drop(h); /* its task is gone: the tid may name another task now */
                break;
        }
        caller_handle *h = handle_new(hs, tid, r->s->proc_fd);
        if (!h)
                return errno == ENOENT ? -ESRCH : -errno;
        r->tid_fd = h->tid_fd;
        return read_status_fd(h->status_fd, r->s->sid_index, t);
}

/* ---- Identity: the supervisor must never be a stronger opener than the caller ----------------- */

static bool same_groups(const worker_creds *c, const target_status *t) {
        return t->n_groups == c->n_groups &&
               memcmp(t->groups, c->groups, sizeof(gid_t) * (size_t) c->n_groups) == 0;
}

static int same_userns(const request *r) {
        struct stat st;
        if (fstatat(r->tid_fd, "ns/user", &st, 0) < 0)
                return -errno;
        return st.st_dev == r->creds->userns_dev && st.st_ino == r->creds->userns_ino;
}

/* A caller that changed its file-system identity (setfsuid, setuid to another user, dropped
 * groups) would otherwise have files created and opened with the supervisor's, older identity:
 * fail closed. Capabilities are lowered per thread instead, because dropping them is routine
 * (cordon's own init does it) and the result must not depend on which side dropped first. */
static int adopt_identity(request *r, const target_status *t) {
        worker_creds *c = r->creds;
        if (t->fsuid != c->fsuid || t->fsgid != c->fsgid || !same_groups(c, t)) {
                r->refusal = "caller changed its uid/gid/groups: the supervisor cannot act as it";
                return -EPERM;
        }
        uint64_t started = c->caps[0].effective | (uint64_t) c->caps[1].effective << 32;
        uint64_t want = started & t->cap_eff;
        if (want != 0) {
                /* Capabilities held in another user namespace are not comparable bit by bit: an
                 * ancestor namespace's CAP_DAC_OVERRIDE reaches further than the caller's. */
                int same = same_userns(r);
                if (same < 0)
                        return same;
                if (!same)
                        want = 0;
        }
        if (want == c->eff_now)
                return 0;
        struct __user_cap_data_struct d[2] = { c->caps[0], c->caps[1] };
        d[0].effective = (uint32_t) want;
        d[1].effective = (uint32_t) (want >> 32);
        int e = sys_capset_thread(d);
        if (e < 0)
                return e;
        c->eff_now = want;
        return 0;
}

int target_open(request *r) {
        target_status t;
        int e = caller_status(r, &t);
        if (e < 0) {
                if (e == -EPERM)
                        r->refusal = "caller's /proc status unreadable";
                return e;
        }
        r->tgid = t.tgid;
        r->umask = t.umask;
        r->sid = t.sid;
        return adopt_identity(r, &t);
}

int supervisor_sid_index(int proc_fd, unsigned *ret) {
        char buf[8192];
        _cleanup_close_ int fd = openat(proc_fd, "thread-self/status", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ssize_t n = read_full(fd, buf, sizeof(buf) - 1);
        if (n < 0)
                return (int) n;
        buf[n] = '\0';
        const char *v = strstr(buf, "\nNSpid:");
        if (!v)
                return -ENOTSUP;
        /* Our own NSpid has one field per level from procfs's namespace down to ours: the
         * sandbox's namespace, one below ours, is the next field. */
        unsigned levels = 0;
        for (v += strlen("\nNSpid:"); *v && *v != '\n';) {
                while (*v == ' ' || *v == '\t')
                        v++;
                if (*v >= '0' && *v <= '9')
                        levels++;
                while (*v >= '0' && *v <= '9')
                        v++;
                if (*v && *v != '\n' && *v != ' ' && *v != '\t')
                        return -EBADMSG;
        }
        if (levels == 0)
                return -EBADMSG;
        *ret = levels;
        return 0;
}

pid_t supervisor_caller_sid(const supervisor *s, const struct seccomp_notif *n) {
        if (!s->sid_index)
                return 0;
        char name[32];
        (void) snprintf(name, sizeof(name), "%u", n->pid);
        _cleanup_close_ int tid_fd = openat(s->proc_fd, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
        target_status t = { 0 };
        if (tid_fd < 0 || read_status(tid_fd, s->sid_index, &t) == -ESRCH)
                return 0;
        uint64_t id = n->id;
        if (ioctl(s->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0)
                return 0; /* the caller is gone: the tid may name another task now */
        return t.sid; /* read_status() parsed every line even when it refused the caller */
}

/* ---- Memory ------------------------------------------------------------------------------------- */

/* process_vm_readv transfers whole iovec elements only, so the remote range is split at page
 * boundaries: a string that ends just before an unmapped page is still read. */
static ssize_t read_remote(request *r, uint64_t addr, void *buf, size_t len) {
        const size_t page = (size_t) getpagesize();
        struct iovec remote[PATH_MAX / 4096 + 2], local = { buf, len };
        size_t n = 0;
        for (size_t off = 0; off < len && n < ELEMENTSOF(remote); n++) {
                size_t chunk = page - (size_t) ((addr + off) % page);
                if (chunk > len - off)
                        chunk = len - off;
                remote[n] = (struct iovec) { (void *) (uintptr_t) (addr + off), chunk };
                off += chunk;
        }
        ssize_t got = process_vm_readv((pid_t) r->n->pid, &local, 1, remote, n, 0);
        if (got < 0) {
                if (errno == EPERM || errno == EACCES)
                        r->refusal = "caller's memory unreadable (non-dumpable process?)";
                return errno == EPERM || errno == EACCES ? -EPERM : -errno;
        }
        return got;
}

int target_copy_string(request *r, uint64_t addr, char *buf, size_t size) {
        if (addr == 0)
                return -EFAULT;
        if (size > PATH_MAX)
                size = PATH_MAX;
        ssize_t got = read_remote(r, addr, buf, size);
        if (got < 0)
                return (int) got;
        if (memchr(buf, '\0', (size_t) got))
                return 0;
        /* Unterminated within PATH_MAX: the kernel says ENAMETOOLONG; cut short by an unmapped
         * page: EFAULT. Never act on a partial string. */
        return (size_t) got == size ? -ENAMETOOLONG : -EFAULT;
}

int target_copy_mem(request *r, uint64_t addr, void *buf, size_t len) {
        if (len == 0)
                return 0;
        ssize_t got = read_remote(r, addr, buf, len);
        if (got < 0)
                return (int) got;
        return (size_t) got == len ? 0 : -EFAULT;
}

int target_dup_fd(request *r, int fd) {
        /* PIDFD_THREAD (6.9) names the calling thread, whose descriptor table the syscall used;
         * older kernels only take a thread-group leader. */
        int pidfd = (int) syscall(SYS_pidfd_open, r->n->pid, PIDFD_THREAD);
        if (pidfd < 0 && errno == EINVAL)
                pidfd = (int) syscall(SYS_pidfd_open, r->tgid, 0);
        if (pidfd < 0)
                return errno == ESRCH ? -ESRCH : -EPERM;
        int copy = (int) syscall(SYS_pidfd_getfd, pidfd, fd, 0);
        int e = errno;
        (void) close(pidfd);
        if (copy < 0)
                return e == EBADF ? -EBADF : -EPERM;
        r->sock_fd = copy; /* pidfd_getfd sets O_CLOEXEC */
        return 0;
}

int target_validate(request *r) {
        uint64_t id = r->n->id;
        if (ioctl(r->s->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0)
                return -ESRCH; /* the caller is gone or was interrupted: nothing to do */
        /* umask() is per fs_struct; every worker unshared CLONE_FS, so this is private. Using the
         * real umask instead of pre-masking the mode keeps default ACLs working. Nothing but
         * this changes the worker's umask, so a call is needed only when the value differs from
         * the last one set. */
        if ((int) r->umask != r->creds->umask_now) {
                (void) umask(r->umask);
                r->creds->umask_now = (int) r->umask;
        }
        r->validated = true;
        return 0;
}

void target_close(request *r) {
        r->tid_fd = -1; /* borrowed from r->handles */
        r->sock_fd = safe_close(r->sock_fd);
}

int request_refuse_as(request *r, const char *action, const char *path, const char *rule) {
        supervisor_report_refusal(r->s, &(supervisor_report) { .action = action,
                                                              .syscall = r->syscall_name,
                                                              .target = path, .rule = rule,
                                                              .sid = request_sid(r) },
                                  r->syscall_name, rule);
        return -EACCES;
}

int request_refuse(request *r, const char *path, const char *rule) {
        return request_refuse_as(r, "file-create-name", path, rule);
}
