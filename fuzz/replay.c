/* SPDX-License-Identifier: Apache-2.0 */
/* The seed-corpus replayer shared by every fuzz target's plain build (fuzz/replay.h). Test code:
 * it prints, and its exit status is the verdict. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "replay.h"
#include "util/util.h"

/* libFuzzer's optional start-up hook: a weak reference, NULL in a target that does not define it. */
extern int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

typedef struct tally {
        unsigned seeds, unexpected;
} tally;

bool fuzz_named_verdict(const char *name, int r, const char *why) {
        if (strncmp(name, "valid-", 6) == 0 && r < 0) {
                fprintf(stderr, "%s: expected to be accepted, refused (%d): %s\n", name, r,
                        why ? why : "");
                return false;
        }
        if (strncmp(name, "invalid-", 8) == 0 && r >= 0) {
                fprintf(stderr, "%s: expected to be refused, but it was accepted\n", name);
                return false;
        }
        return true;
}

/* Reads path into a buffer of exactly its size, so that the target cannot read past the seed
 * unnoticed. Returns 0 or -errno (-EFBIG above FUZZ_REPLAY_MAX). */
static int read_seed(const char *path, uint8_t **ret, size_t *ret_len) {
        char *buf = NULL;
        size_t len = 0;
        int r = read_file_at(AT_FDCWD, path, FUZZ_REPLAY_MAX, 0, &buf, &len);
        if (r < 0)
                return r;
        /* Shrinking cannot fail in glibc, but a NULL would lose buf: keep it then. */
        char *exact = realloc(buf, len ? len : 1);
        *ret = (uint8_t *) (exact ? exact : buf);
        *ret_len = len;
        return 0;
}

static void replay_file(const char *path, const char *name, tally *t) {
        uint8_t *data = NULL;
        size_t len = 0;
        int r = read_seed(path, &data, &len);
        t->seeds++;
        if (r < 0) {
                fprintf(stderr, "%s: cannot read: %s\n", path, strerror(-r));
                t->unexpected++;
                return;
        }
        if (!fuzz_replay_seed(name, data, len)) {
                fprintf(stderr, "%s: not what its name says\n", path);
                t->unexpected++;
        }
        free(data);
}

/* A directory's seeds in name order, so that a failing run reads the same every time. */
static int replay_dir(const char *dir, tally *t) {
        struct dirent **list = NULL;
        int n = scandir(dir, &list, NULL, alphasort);
        if (n < 0)
                return -errno;
        for (int i = 0; i < n; i++) {
                if (list[i]->d_name[0] != '.') {
                        _cleanup_free_ char *path = path_join(dir, list[i]->d_name);
                        if (path)
                                replay_file(path, list[i]->d_name, t);
                        else
                                t->unexpected++;
                }
                free(list[i]);
        }
        free(list);
        return 0;
}

static int replay_arg(const char *arg, tally *t) {
        struct stat st;
        if (stat(arg, &st) < 0)
                return -errno;
        if (S_ISDIR(st.st_mode))
                return replay_dir(arg, t);
        const char *slash = strrchr(arg, '/');
        replay_file(arg, slash ? slash + 1 : arg, t);
        return 0;
}

int main(int argc, char *argv[]) {
        const char *self = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
        tally t = { 0 };
        bool failed = false;
        if (LLVMFuzzerInitialize)
                (void) LLVMFuzzerInitialize(&argc, &argv); /* like libFuzzer, which ignores it */
        for (int i = 1; i < argc; i++) {
                int r = replay_arg(argv[i], &t);
                if (r < 0) {
                        fprintf(stderr, "%s: %s\n", argv[i], strerror(-r));
                        failed = true;
                }
        }
        printf("%s: %u seeds, %u unexpected\n", self, t.seeds, t.unexpected);
        return failed || t.unexpected > 0 || t.seeds == 0;
}
