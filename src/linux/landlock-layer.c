/* SPDX-License-Identifier: Apache-2.0 */
#include "linux/landlock-layer.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "util/uapi.h"

/* Rights a rule on a non-directory may carry (the kernel refuses others with EINVAL). */
#define FILE_RIGHTS                                                                               \
        (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE | \
         LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)

uint64_t landlock_layer_handled_fs(const ll_layer *l, int abi) {
        uint64_t fs = l->handled_fs;
        if (abi < 2)
                fs &= ~(uint64_t) LANDLOCK_ACCESS_FS_REFER;
        if (abi < 3)
                fs &= ~(uint64_t) LANDLOCK_ACCESS_FS_TRUNCATE;
        if (abi < 5)
                fs &= ~(uint64_t) LANDLOCK_ACCESS_FS_IOCTL_DEV;
        return fs;
}

static int sys_add_path(int ruleset, int fd, uint64_t access) {
        struct landlock_path_beneath_attr a = { .allowed_access = access, .parent_fd = fd };
        return syscall(__NR_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &a, 0) < 0
                       ? -errno
                       : 0;
}

static int sys_add_port(int ruleset, uint64_t access, uint16_t port) {
        struct cordon_landlock_net_port_attr a = { .allowed_access = access, .port = port };
        return syscall(__NR_landlock_add_rule, ruleset, CORDON_LANDLOCK_RULE_NET_PORT, &a, 0) < 0
                       ? -errno
                       : 0;
}

static int open_rule_path(const char *path) {
        struct open_how how = { .flags = O_PATH | O_CLOEXEC,
                                .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
        int fd = (int) syscall(__NR_openat2, AT_FDCWD, path, &how, sizeof(how));
        return fd < 0 ? -errno : fd;
}

static int add_path_rules(int ruleset, const ll_layer *l, uint64_t handled, cordon_error *err) {
        for (size_t i = 0; i < l->n_rules; i++) {
                const ll_rule *rule = &l->rules[i];
                _cleanup_close_ int fd = open_rule_path(rule->path);
                /* Gone, or a symlink swapped in since planning: no rule, so no access. */
                if (fd == -ENOENT || fd == -ELOOP || fd == -ENOTDIR)
                        continue;
                if (fd < 0)
                        return cordon_set_error(err, CORDON_LAUNCH_FAILED, -fd,
                                                "landlock: cannot open %s: %s", rule->path,
                                                strerror(-fd));
                struct stat st;
                if (fstat(fd, &st) < 0)
                        return cordon_set_error(err, CORDON_LAUNCH_FAILED, errno,
                                                "landlock: cannot stat %s: %s", rule->path,
                                                strerror(errno));
                uint64_t access = rule->access & handled;
                if (!S_ISDIR(st.st_mode))
                        access &= FILE_RIGHTS; /* a directory replaced by a file since */
                if (access == 0)
                        continue;
                int r = sys_add_path(ruleset, fd, access);
                if (r < 0)
                        return cordon_set_error(err, CORDON_LAUNCH_FAILED, -r,
                                                "landlock: cannot add a rule for %s: %s",
                                                rule->path, strerror(-r));
        }
        return 0;
}

/* `cmd > out.log` then `echo x > /dev/stdout` inside: the file on fd 1 needs a rule, with the
 * access it was opened with only (a read-only stdin must not become writable by a reopen). Pipes
 * and sockets live on internal filesystems Landlock does not restrict; a directory on fds 0-2 is
 * refused before launch (launch-fds.c). */
static int add_stdio_rules(int ruleset, uint64_t allowed) {
        for (int fd = 0; fd <= 2; fd++) {
                int fl = fcntl(fd, F_GETFL);
                struct stat st;
                if (fl < 0 || fstat(fd, &st) < 0 || S_ISDIR(st.st_mode))
                        continue;
                if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode))
                        continue;
                uint64_t access = 0;
                if ((fl & O_ACCMODE) != O_WRONLY)
                        access |= LANDLOCK_ACCESS_FS_READ_FILE;
                if ((fl & O_ACCMODE) != O_RDONLY)
                        access |= LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE;
                access &= allowed;
                char path[32];
                (void) snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
                _cleanup_close_ int pfd = open(path, O_PATH | O_CLOEXEC);
                if (access == 0 || pfd < 0)
                        continue;
                int r = sys_add_path(ruleset, pfd, access);
                if (r < 0 && r != -EBADFD)
                        return r;
        }
        return 0;
}

static int add_port_rules(int ruleset, const ll_layer *l) {
        for (size_t i = 0; i < ELEMENTSOF(l->connect_ports); i++) {
                if (l->connect_ports[i] == 0)
                        continue;
                int r = sys_add_port(ruleset, LANDLOCK_ACCESS_NET_CONNECT_TCP, l->connect_ports[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

int landlock_layer_apply(const ll_layer *l, int abi, cordon_error *err) {
        struct cordon_landlock_ruleset_attr attr = {
                .handled_access_fs = landlock_layer_handled_fs(l, abi),
                .handled_access_net = abi >= 4 ? l->handled_net : 0,
                .scoped = abi >= 6 ? l->scoped : 0,
        };
        if ((l->handled_net && abi < 4) || (l->scoped && abi < 6))
                return cordon_set_error(err, CORDON_SANDBOX_UNAVAILABLE, ENOTSUP,
                                        "landlock: the %s layer needs Landlock ABI %d, this "
                                        "kernel has %d", l->name, l->scoped ? 6 : 4, abi);
        _cleanup_close_ int ruleset = (int) syscall(__NR_landlock_create_ruleset, &attr,
                                                    sizeof(attr), 0);
        if (ruleset < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, errno,
                                        "landlock: cannot create the %s ruleset: %s", l->name,
                                        strerror(errno));
        int r = add_path_rules(ruleset, l, attr.handled_access_fs, err);
        if (r < 0)
                return r;
        if ((r = add_stdio_rules(ruleset, l->stdio_access & attr.handled_access_fs)) < 0 ||
            (r = attr.handled_access_net ? add_port_rules(ruleset, l) : 0) < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, -r,
                                        "landlock: cannot add the %s layer's fd or port rules: %s",
                                        l->name, strerror(-r));
        if (syscall(__NR_landlock_restrict_self, ruleset, 0) < 0)
                return cordon_set_error(err, CORDON_LAUNCH_FAILED, errno,
                                        "landlock: cannot restrict the %s: %s", l->name,
                                        strerror(errno));
        return 0;
}
