/* SPDX-License-Identifier: Apache-2.0 */
#include "linux/landlock.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "util/uapi.h"

int landlock_abi(void) {
        static int cached = -1;
        if (cached < 0) {
                long v = syscall(__NR_landlock_create_ruleset, NULL, 0,
                                 LANDLOCK_CREATE_RULESET_VERSION);
                cached = v < 0 ? 0 : (int) v;
        }
        return cached;
}

uint64_t landlock_write_access(int abi) {
        uint64_t a = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
                     LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
                     LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                     LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
                     LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;
        if (abi >= 2)
                a |= LANDLOCK_ACCESS_FS_REFER; /* else cross-directory renames are refused */
        /* TRUNCATE (ABI 3) is deliberately not handled: Landlock then walks the path on every
         * open, read-only ones included, to precompute the file's truncate right (1.4x on opens
         * of existing files, measured). O_TRUNC opens still need WRITE_FILE, ftruncate needs a
         * writable fd, and the seccomp filter refuses path-based truncate(2). */
        (void) abi;
        return a;
}

static int add_path_rule(int ruleset, int fd, uint64_t access) {
        struct landlock_path_beneath_attr attr = { .allowed_access = access, .parent_fd = fd };
        if (syscall(__NR_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &attr, 0) < 0)
                return -errno;
        return 0;
}

static int add_plan_rules(int ruleset, const plan *p, uint64_t write, cordon_error *err) {
        for (size_t i = 0; i < p->n_landlock; i++) {
                if (!p->landlock[i].write)
                        continue;
                _cleanup_close_ int fd = open(p->landlock[i].path,
                                              O_PATH | O_CLOEXEC | O_DIRECTORY | O_NOFOLLOW);
                if (fd < 0 && errno == ENOENT)
                        continue; /* nothing there to write beneath */
                if (fd < 0)
                        return cordon_set_error(err, CORDON_LAUNCH_FAILED, errno,
                                                "landlock: cannot open %s: %s",
                                                p->landlock[i].path, strerror(errno));
                int r = add_path_rule(ruleset, fd, write);
                if (r < 0)
                        return cordon_set_error(err, CORDON_LAUNCH_FAILED, r,
                                                "landlock: cannot add a rule for %s: %s",
                                                p->landlock[i].path, strerror(-r));
        }
        return 0;
}

/* `cmd > out.log` then `echo x > /dev/stdout` inside must keep working, so the files on fds 0-2
 * get a rule — but only for the access they were opened with: reopening a read-only stdin
 * (`cordon run cmd < ~/.bashrc`) for writing through /proc/self/fd/0 must stay refused. Pipes and
 * sockets live on internal filesystems that Landlock does not restrict. */
static int add_stdio_rules(int ruleset) {
        for (int fd = 0; fd <= 2; fd++) {
                int fl = fcntl(fd, F_GETFL);
                struct stat st;
                if (fl < 0 || fstat(fd, &st) < 0)
                        continue;
                if ((fl & O_ACCMODE) == O_RDONLY)
                        continue;
                if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode))
                        continue;
                char path[32];
                (void) snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
                _cleanup_close_ int pfd = open(path, O_PATH | O_CLOEXEC);
                if (pfd < 0)
                        continue;
                int r = add_path_rule(ruleset, pfd, LANDLOCK_ACCESS_FS_WRITE_FILE);
                if (r < 0 && r != -EBADFD)
                        return r;
        }
        return 0;
}

int landlock_apply(const plan *p, cordon_error *err) {
        int abi = landlock_abi();
        if (abi < 1)
                return cordon_set_error(err, CORDON_SANDBOX_UNAVAILABLE, ENOSYS,
                                        "refusing to run the command unconfined: Landlock is not "
                                        "available on this kernel; hint: boot a kernel with "
                                        "CONFIG_SECURITY_LANDLOCK=y and lsm=...,landlock");
        uint64_t write = landlock_write_access(abi);
        struct cordon_landlock_ruleset_attr attr = { .handled_access_fs = write };
        /* Scoping (ABI 6): the command cannot connect to abstract Unix sockets created outside
         * (X11, D-Bus, ...) nor signal processes outside its domain (the supervisor, the host). */
        if (abi >= 6)
                attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
        size_t size = abi >= 6 ? sizeof(attr) : offsetof(struct cordon_landlock_ruleset_attr,
                                                          handled_access_net);
        _cleanup_close_ int ruleset = (int) syscall(__NR_landlock_create_ruleset, &attr, size, 0);
        if (ruleset < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, errno,
                                        "landlock: cannot create a ruleset: %s", strerror(errno));
        int r = add_plan_rules(ruleset, p, write, err);
        if (r < 0)
                return r;
        r = add_stdio_rules(ruleset);
        if (r < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, r,
                                        "landlock: cannot add a rule for fds 0-2: %s",
                                        strerror(-r));
        if (syscall(__NR_landlock_restrict_self, ruleset, 0) < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, errno,
                                        "landlock: cannot restrict the sandbox: %s",
                                        strerror(errno));
        return 0;
}

int landlock_confine_helper(void) {
        int abi = landlock_abi();
        if (abi < 1)
                return 0; /* nothing to add; the sandbox itself refuses to run without it */
        struct cordon_landlock_ruleset_attr attr = {
                .handled_access_fs = landlock_write_access(abi) | LANDLOCK_ACCESS_FS_EXECUTE,
        };
        if (abi >= 6)
                attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
        size_t size = abi >= 6 ? sizeof(attr) : offsetof(struct cordon_landlock_ruleset_attr,
                                                          handled_access_net);
        _cleanup_close_ int ruleset = (int) syscall(__NR_landlock_create_ruleset, &attr, size, 0);
        if (ruleset < 0)
                return -errno;
        /* No rule at all: no write and no execute anywhere. */
        if (syscall(__NR_landlock_restrict_self, ruleset, 0) < 0)
                return -errno;
        return 0;
}
