/* SPDX-License-Identifier: Apache-2.0 */
/* cordon's secret store (src/secrets/) without a session bus: the file store's names, values,
 * modes and refusals (a group-writable directory, a file of another owner, a symbolic link
 * planted at .config/cordon, a NUL in a value), its atomic replace, and the cache of
 * secret_store_get (secret-cache.c): a value is read again only after SECRET_CACHE_SECONDS, a
 * set or rm in the process drops it, and a forked child holds no copy. Run as root and as
 * cordon-test (secrets-store-user). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "secrets/secret-cache.h"
#include "secrets/secret-dir.h"
#include "secrets/secret-store.h"
#include "tmptree.h"
#include "util/fork-gate.h"

static char *root; /* the test's home directory */
static uint64_t fake_now;

static uint64_t fake_clock(void) {
        return fake_now;
}

static int setup(void **state) {
        (void) state;
        root = tmptree_new();
        (void) unsetenv("DBUS_SESSION_BUS_ADDRESS"); /* the file store, whatever runs the test */
        secret_cache_set_clock(fake_clock);
        return 0;
}

static int teardown(void **state) {
        (void) state;
        secret_cache_forget(NULL, NULL);
        tmptree_remove(root);
        root = NULL;
        return 0;
}

static const char *store(const char *rel) {
        return tmptree_at(root, rel);
}

static void set_ok(const char *name, const char *value) {
        cordon_error err = { 0 };
        int r = secret_store_set(root, name, value, strlen(value), &err);
        if (r < 0)
                fail_msg("set %s: %s", name, err.message);
}

/* get through the file store directly: 0 and the value, or the negative errno */
static int file_get(const char *name, char *out, size_t size, cordon_error *err) {
        char *v = NULL;
        size_t n = 0;
        int r = secret_file_get(root, name, &v, &n, err);
        if (r >= 0) {
                assert_int_equal(strlen(v), n);
                (void) snprintf(out, size, "%s", v);
                secret_value_free(v, n);
        }
        return r;
}

static void names(void **state) {
        (void) state;
        const char *good[] = { "a", "GITHUB_TOKEN", "npm.registry-1", "x_9", NULL };
        const char *bad[] = { "", ".hidden", "-flag", "a/b", "..", "a b", "a\nb", "é", NULL };
        for (size_t i = 0; good[i]; i++)
                assert_true(secret_name_valid(good[i]));
        for (size_t i = 0; bad[i]; i++)
                assert_false(secret_name_valid(bad[i]));
        char longest[SECRET_NAME_MAX + 2];
        memset(longest, 'a', sizeof(longest));
        longest[SECRET_NAME_MAX] = '\0';
        assert_true(secret_name_valid(longest));
        longest[SECRET_NAME_MAX] = 'a';
        longest[SECRET_NAME_MAX + 1] = '\0';
        assert_false(secret_name_valid(longest));
        cordon_error err = { 0 };
        assert_int_equal(secret_store_set(root, "../x", "v", 1, &err), -EINVAL);
        assert_int_equal(err.code, CORDON_USAGE);
        assert_non_null(strstr(err.message, "not a secret name"));
}

static void set_get_rm_list(void **state) {
        (void) state;
        set_ok("beta", "two");
        set_ok("alpha", "one");
        char v[64];
        cordon_error err = { 0 };
        assert_int_equal(file_get("alpha", v, sizeof(v), &err), 0);
        assert_string_equal(v, "one");
        strv list = { 0 };
        assert_int_equal(secret_file_list(root, &list, &err), 0);
        assert_int_equal(list.n, 2);
        assert_string_equal(list.v[0], "alpha"); /* sorted */
        assert_string_equal(list.v[1], "beta");
        strv_done(&list);
        assert_int_equal(secret_store_remove(root, "alpha", &err), 0);
        assert_int_equal(file_get("alpha", v, sizeof(v), &err), -ENOENT);
        assert_int_equal(err.code, CORDON_USAGE);
        assert_non_null(strstr(err.message, "cordon secret set alpha"));
        assert_int_equal(secret_store_remove(root, "alpha", &err), -ENOENT);
        /* modes: the directories 0700, the file 0600 */
        struct stat st;
        assert_int_equal(stat(store(".config/cordon/secrets/store"), &st), 0);
        assert_int_equal(st.st_mode & 0777, 0700);
        assert_int_equal(stat(store(".config/cordon"), &st), 0);
        assert_int_equal(st.st_mode & 0777, 0700);
        assert_int_equal(stat(store(".config/cordon/secrets/store/beta"), &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);
        assert_int_equal(st.st_uid, geteuid());
}

static void values(void **state) {
        (void) state;
        cordon_error err = { 0 };
        assert_int_equal(secret_store_set(root, "n", "a\0b", 3, &err), -EINVAL);
        assert_int_equal(secret_store_set(root, "n", "", 0, &err), -EINVAL);
        char *big = malloc(SECRET_VALUE_MAX + 1);
        assert_non_null(big);
        memset(big, 'x', SECRET_VALUE_MAX + 1);
        assert_int_equal(secret_store_set(root, "n", big, SECRET_VALUE_MAX + 1, &err), -EINVAL);
        assert_int_equal(secret_store_set(root, "n", big, SECRET_VALUE_MAX, &err), 0);
        free(big);
        /* a NUL written into the file behind cordon's back is refused on read */
        tmptree_write(root, ".config/cordon/secrets/store/nul", "ab", 0600);
        FILE *f = fopen(store(".config/cordon/secrets/store/nul"), "wb");
        assert_non_null(f);
        assert_int_equal(fwrite("a\0b", 1, 3, f), 3);
        assert_int_equal(fclose(f), 0);
        char v[8];
        assert_int_equal(file_get("nul", v, sizeof(v), &err), -EINVAL);
        assert_non_null(strstr(err.message, "NUL"));
}

/* A replace is a rename: a reader holding the old file keeps reading the old value whole, the
 * new one appears whole, and no temporary file is left or listed. */
static void atomic_replace(void **state) {
        (void) state;
        set_ok("tok", "old-value");
        struct stat before, after;
        assert_int_equal(stat(store(".config/cordon/secrets/store/tok"), &before), 0);
        FILE *held = fopen(store(".config/cordon/secrets/store/tok"), "r");
        assert_non_null(held);
        set_ok("tok", "new");
        assert_int_equal(stat(store(".config/cordon/secrets/store/tok"), &after), 0);
        assert_int_not_equal(before.st_ino, after.st_ino);
        char buf[32] = { 0 };
        assert_int_equal(fread(buf, 1, sizeof(buf) - 1, held), 9);
        assert_string_equal(buf, "old-value");
        (void) fclose(held);
        char v[32];
        cordon_error err = { 0 };
        assert_int_equal(file_get("tok", v, sizeof(v), &err), 0);
        assert_string_equal(v, "new");
        strv list = { 0 };
        assert_int_equal(secret_file_list(root, &list, &err), 0);
        assert_int_equal(list.n, 1);
        strv_done(&list);
}

static void refusals_of_modes(void **state) {
        (void) state;
        set_ok("tok", "v");
        char v[8];
        cordon_error err = { 0 };
        /* the store directory group-writable: someone else could swap the values */
        assert_int_equal(chmod(store(".config/cordon/secrets/store"), 0770), 0);
        assert_int_equal(file_get("tok", v, sizeof(v), &err), -EPERM);
        assert_int_equal(err.code, CORDON_POLICY_INVALID);
        assert_non_null(strstr(err.message, "readable or writable by others"));
        assert_int_equal(secret_store_set(root, "tok", "w", 1, &err), -EPERM);
        assert_int_equal(chmod(store(".config/cordon/secrets/store"), 0700), 0);
        /* the file readable by others */
        assert_int_equal(chmod(store(".config/cordon/secrets/store/tok"), 0640), 0);
        assert_int_equal(file_get("tok", v, sizeof(v), &err), -EPERM);
        assert_non_null(strstr(err.message, "set it again"));
        assert_int_equal(chmod(store(".config/cordon/secrets/store/tok"), 0600), 0);
        assert_int_equal(file_get("tok", v, sizeof(v), &err), 0);
        /* a symbolic link where a secret file should be */
        tmptree_write(root, "elsewhere", "planted", 0600);
        assert_int_equal(symlink(store("elsewhere"), store(".config/cordon/secrets/store/ln")), 0);
        assert_int_equal(file_get("ln", v, sizeof(v), &err), -ELOOP);
        /* a file of another owner (only root can make one) */
        if (geteuid() == 0) {
                assert_int_equal(chown(store(".config/cordon/secrets/store/tok"), 65534, 65534), 0);
                assert_int_equal(file_get("tok", v, sizeof(v), &err), -EPERM);
                assert_non_null(strstr(err.message, "not a regular file of yours"));
                assert_int_equal(chown(store(".config/cordon/secrets/store"), 65534, 65534), 0);
                assert_int_equal(secret_store_set(root, "x", "v", 1, &err), -EPERM);
                assert_non_null(strstr(err.message, "not a directory of yours"));
        }
}

/* A link planted at .config/cordon (pointing at a directory the attacker reads) is refused by
 * the walk: no secret is written there, none read from there. */
static void planted_symlink(void **state) {
        (void) state;
        tmptree_mkdir(root, ".config");
        tmptree_mkdir(root, "attacker/secrets/store");
        assert_int_equal(chmod(store("attacker"), 0700), 0);
        assert_int_equal(chmod(store("attacker/secrets"), 0700), 0);
        assert_int_equal(chmod(store("attacker/secrets/store"), 0700), 0);
        tmptree_write(root, "attacker/secrets/store/tok", "chosen", 0600);
        tmptree_symlink(root, ".config/cordon", store("attacker"));
        cordon_error err = { 0 };
        /* O_NOFOLLOW | O_DIRECTORY on a link: ENOTDIR */
        assert_int_equal(secret_store_set(root, "tok", "mine", 4, &err), -ENOTDIR);
        assert_non_null(strstr(err.message, "symbolic link"));
        char v[16];
        assert_int_equal(file_get("tok", v, sizeof(v), &err), -ENOTDIR);
        FILE *f = fopen(store("attacker/secrets/store/tok"), "r");
        assert_non_null(f);
        assert_non_null(fgets(v, sizeof(v), f));
        (void) fclose(f);
        assert_string_equal(v, "chosen"); /* not overwritten */
        int fd = -1;
        static const char *const parts[] = { ".config", "cordon", "secrets" };
        assert_int_equal(secret_dir_open(root, parts, 3, true, &fd), -ENOTDIR);
        assert_int_equal(secret_dir_open("relative", parts, 3, true, &fd), -EINVAL);
}

static void get_value(const char *name, const char *want) {
        char *v = NULL;
        size_t n = 0;
        cordon_error err = { 0 };
        int r = secret_store_get(root, name, &v, &n, &err);
        if (r < 0)
                fail_msg("get %s: %s", name, err.message);
        assert_string_equal(v, want);
        secret_value_free(v, n);
}

/* Writes a value into the file store behind the cache's back (not through secret_store_set,
 * which would drop the cached one). */
static void write_behind(const char *name, const char *value) {
        cordon_error err = { 0 };
        assert_int_equal(secret_file_set(root, name, value, strlen(value), &err), 0);
}

static void cache_expires(void **state) {
        (void) state;
        fake_now = 1000000;
        set_ok("tok", "first");
        get_value("tok", "first");
        write_behind("tok", "second");
        fake_now += SECRET_CACHE_SECONDS * 1000 - 1;
        get_value("tok", "first"); /* cached: the store was not asked */
        fake_now += 1;
        get_value("tok", "second"); /* 30 s on: read again */
        /* removed behind the cache: still served until it expires, then gone */
        cordon_error err = { 0 };
        assert_int_equal(secret_file_remove(root, "tok", &err), 0);
        get_value("tok", "second");
        fake_now += SECRET_CACHE_SECONDS * 1000;
        char *v = NULL;
        size_t n = 0;
        assert_int_equal(secret_store_get(root, "tok", &v, &n, &err), -ENOENT);
        /* a failed read is not cached */
        write_behind("tok", "third");
        get_value("tok", "third");
}

static void cache_invalidated_by_set_and_rm(void **state) {
        (void) state;
        fake_now = 5000000;
        set_ok("tok", "one");
        get_value("tok", "one");
        set_ok("tok", "two"); /* the CLI's set in this process */
        get_value("tok", "two");
        cordon_error err = { 0 };
        assert_int_equal(secret_store_remove(root, "tok", &err), 0);
        char *v = NULL;
        size_t n = 0;
        assert_int_equal(secret_store_get(root, "tok", &v, &n, &err), -ENOENT);
        /* entries are per home: another home's secret of the same name is its own */
        char *other = tmptree_new();
        assert_int_equal(secret_file_set(other, "tok", "theirs", 6, &err), 0);
        assert_int_equal(secret_store_get(other, "tok", &v, &n, &err), 0);
        assert_string_equal(v, "theirs");
        secret_value_free(v, n);
        assert_int_equal(secret_store_get(root, "tok", &v, &n, &err), -ENOENT);
        tmptree_remove(other);
}

/* The child of a fork starts with no cached value: it reads the store itself. */
static void cache_wiped_in_fork_child(void **state) {
        (void) state;
        fake_now = 9000000;
        set_ok("tok", "parent");
        get_value("tok", "parent");
        write_behind("tok", "changed");
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                char *v = NULL;
                size_t n = 0;
                _exit(secret_cache_get(root, "tok", &v, &n) == -ENOENT ? 0 : 1);
        }
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        get_value("tok", "parent"); /* the parent's copy is untouched */
}

/* Threads reading, filling and dropping entries while the main thread forks: every child finds
 * the cache usable (its mutex free) and empty, and nobody deadlocks (the test's timeout would
 * say so). The threads are entered in the fork gate only inside the cache, as a caller's threads
 * would be. */
static atomic_bool stop;

static void *churn(void *arg) {
        const char *name = arg;
        /* Entered, as a library thread is: its allocations are never cut by a fork (a child's
         * malloc would then wait forever on a sanitizer's allocator lock). */
        fork_gate_enter();
        while (!atomic_load(&stop)) {
                secret_cache_put(root, name, "value", 5);
                char *v = NULL;
                size_t n = 0;
                if (secret_cache_get(root, name, &v, &n) == 0)
                        secret_value_free(v, n);
                secret_cache_forget(root, name);
                FORK_GATE_PAUSED((void) 0); /* let a fork through */
        }
        fork_gate_leave();
        return NULL;
}

static void cache_threads_and_fork(void **state) {
        (void) state;
        fake_now = 12000000;
        pthread_t t[3];
        static const char *const names[] = { "a", "b", "c" };
        atomic_store(&stop, false);
        for (size_t i = 0; i < 3; i++)
                assert_int_equal(pthread_create(&t[i], NULL, churn, (void *) names[i]), 0);
        for (int i = 0; i < 200; i++) {
                pid_t pid = fork();
                assert_true(pid >= 0);
                if (pid == 0) {
                        char *v = NULL;
                        size_t n = 0;
                        int bad = 0;
                        for (size_t k = 0; k < 3; k++)
                                bad |= secret_cache_get(root, names[k], &v, &n) != -ENOENT;
                        secret_cache_put(root, "child", "x", 1); /* the mutex is usable */
                        bad |= secret_cache_get(root, "child", &v, &n) != 0;
                        _exit(bad);
                }
                int status = 0;
                assert_int_equal(waitpid(pid, &status, 0), pid);
                assert_true(WIFEXITED(status));
                assert_int_equal(WEXITSTATUS(status), 0);
        }
        atomic_store(&stop, true);
        for (size_t i = 0; i < 3; i++)
                assert_int_equal(pthread_join(t[i], NULL), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(names, setup, teardown),
                cmocka_unit_test_setup_teardown(set_get_rm_list, setup, teardown),
                cmocka_unit_test_setup_teardown(values, setup, teardown),
                cmocka_unit_test_setup_teardown(atomic_replace, setup, teardown),
                cmocka_unit_test_setup_teardown(refusals_of_modes, setup, teardown),
                cmocka_unit_test_setup_teardown(planted_symlink, setup, teardown),
                cmocka_unit_test_setup_teardown(cache_expires, setup, teardown),
                cmocka_unit_test_setup_teardown(cache_invalidated_by_set_and_rm, setup, teardown),
                cmocka_unit_test_setup_teardown(cache_wiped_in_fork_child, setup, teardown),
                cmocka_unit_test_setup_teardown(cache_threads_and_fork, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
