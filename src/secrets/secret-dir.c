/* SPDX-License-Identifier: Apache-2.0 */
/* The O_NOFOLLOW walk of secret-dir.h. */
#include "secrets/secret-dir.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

int secret_dir_open(const char *home, const char *const *parts, size_t n, bool create, int *ret) {
        if (!home || home[0] != '/')
                return -EINVAL;
        int dfd = open(home, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        for (size_t i = 0; i < n; i++) {
                if (create && mkdirat(dfd, parts[i], 0700) < 0 && errno != EEXIST) {
                        int e = -errno;
                        (void) close(dfd);
                        return e;
                }
                int next = openat(dfd, parts[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                int e = -errno;
                (void) close(dfd);
                if (next < 0)
                        return e;
                dfd = next;
        }
        *ret = dfd;
        return 0;
}
