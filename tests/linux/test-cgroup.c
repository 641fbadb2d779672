/* SPDX-License-Identifier: Apache-2.0 */
/* linux/cgroup.c: the parsers on real-world texts, the limit files on a stand-in directory, the
 * choice of a parent on a made-up host, and, when this host lets us (root, or a delegated
 * subtree), the whole life of a real run cgroup: limits in force, a child moved in, an OOM kill
 * counted, the cgroup removed. Which hierarchy the host offers is printed, not assumed. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "linux/cgroup.h"
#include "util/util.h"

static const char mountinfo_hybrid[] =
        "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
        "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n"
        "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory\n"
        "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
        "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw,nsdelegate\n"
        "42 31 0:39 /sub /mnt/partial rw - cgroup2 cgroup2 rw\n";

static const char self_hybrid[] =
        "9:name=systemd:/user.slice\n"
        "8:pids:/\n"
        "4:memory:/process_api/abc\n"
        "2:cpu,cpuacct:/x\n"
        "0::/user.slice/session-1.scope\n";

static void test_parse_self(void **state) {
        (void) state;
        char *p = NULL;
        assert_int_equal(cgroup_parse_self(self_hybrid, NULL, &p), 0);
        assert_string_equal(p, "/user.slice/session-1.scope");
        free(p);
        assert_int_equal(cgroup_parse_self(self_hybrid, "memory", &p), 0);
        assert_string_equal(p, "/process_api/abc");
        free(p);
        assert_int_equal(cgroup_parse_self(self_hybrid, "cpuacct", &p), 0);
        assert_string_equal(p, "/x");
        free(p);
        assert_int_equal(cgroup_parse_self(self_hybrid, "pids", &p), 0);
        assert_string_equal(p, "/");
        free(p);
        /* "name=systemd" is not the controller "systemd"; a v1-only host has no "0::" line. */
        assert_int_equal(cgroup_parse_self(self_hybrid, "systemd", &p), -ENOENT);
        assert_int_equal(cgroup_parse_self("8:pids:/\n", NULL, &p), -ENOENT);
        assert_int_equal(cgroup_parse_self("garbage\n0:x\n", NULL, &p), -ENOENT);
}

static void test_parse_mount(void **state) {
        (void) state;
        char *p = NULL;
        assert_int_equal(cgroup_parse_mount(mountinfo_hybrid, NULL, &p), 0);
        assert_string_equal(p, "/sys/fs/cgroup/unified");
        free(p);
        assert_int_equal(cgroup_parse_mount(mountinfo_hybrid, "memory", &p), 0);
        assert_string_equal(p, "/sys/fs/cgroup/memory");
        free(p);
        assert_int_equal(cgroup_parse_mount(mountinfo_hybrid, "cpuacct", &p), 0);
        assert_string_equal(p, "/sys/fs/cgroup/cpu,cpuacct");
        free(p);
        assert_int_equal(cgroup_parse_mount(mountinfo_hybrid, "blkio", &p), -ENOENT);
        /* A mount of part of the hierarchy (root "/sub") does not count; escapes decode. */
        assert_int_equal(cgroup_parse_mount("42 31 0:39 /sub /mnt/p rw - cgroup2 cgroup2 rw\n",
                                            NULL, &p), -ENOENT);
        assert_int_equal(cgroup_parse_mount("1 0 0:1 / /a\\040b rw - cgroup2 none rw\n", NULL, &p),
                         0);
        assert_string_equal(p, "/a b");
        free(p);
}

static void test_parse_key(void **state) {
        (void) state;
        uint64_t v = 7;
        const char ev[] = "low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 1\n";
        assert_int_equal(cgroup_parse_key(ev, "oom_kill", &v), 0);
        assert_int_equal(v, 2);
        assert_int_equal(cgroup_parse_key(ev, "oom", &v), 0);
        assert_int_equal(v, 3);
        assert_int_equal(cgroup_parse_key("oom_kill_disable 0\nunder_oom 0\noom_kill 5\n",
                                          "oom_kill", &v), 0);
        assert_int_equal(v, 5);
        assert_int_equal(cgroup_parse_key(ev, "nope", &v), -ENOENT);
        assert_int_equal(cgroup_parse_key("oom_kill x\n", "oom_kill", &v), -EINVAL);
}

/* ---- a stand-in directory ------------------------------------------------------------------ */

static char tmp[PATH_MAX];

static void touch(const char *rel, const char *content) {
        char p[PATH_MAX + 64];
        snprintf(p, sizeof(p), "%s/%s", tmp, rel);
        FILE *f = fopen(p, "w");
        assert_non_null(f);
        fputs(content, f);
        fclose(f);
}

static char *slurp(const char *rel) {
        char p[PATH_MAX + 64];
        snprintf(p, sizeof(p), "%s/%s", tmp, rel);
        char *s = NULL;
        assert_int_equal(read_file_at(AT_FDCWD, p, 4096, 0, &s, NULL), 0);
        return s;
}

static int setup_tmp(void **state) {
        (void) state;
        snprintf(tmp, sizeof(tmp), "%s/cordon-cg-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        return mkdtemp(tmp) ? 0 : -1;
}

static int teardown_tmp(void **state) {
        (void) state;
        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
        return system(cmd) == 0 ? 0 : -1;
}

/* The files and values: v2 memory.max, no swap, the whole group on OOM, pids.max; v1 both
 * memory limits, pids.max. A missing swap file (no swap accounting) is no error. */
static void test_limit_files(void **state) {
        (void) state;
        /* Empty stand-ins: a cgroup file takes the whole value per write, a plain file does not
         * truncate. */
        touch("memory.max", "");
        touch("memory.swap.max", "");
        touch("memory.oom.group", "");
        touch("pids.max", "");
        cgroup_limits lim = { .memory_bytes = 64ULL << 20, .pids = 32 };
        assert_int_equal(cgroup_write_limits(CGROUP_V2, tmp, NULL, &lim), 0);
        char *s;
        assert_string_equal((s = slurp("memory.max")), "67108864");
        free(s);
        assert_string_equal((s = slurp("memory.swap.max")), "0");
        free(s);
        assert_string_equal((s = slurp("memory.oom.group")), "1");
        free(s);
        assert_string_equal((s = slurp("pids.max")), "32");
        free(s);
        char p[PATH_MAX + 64];
        snprintf(p, sizeof(p), "%s/memory.swap.max", tmp);
        unlink(p);
        assert_int_equal(cgroup_write_limits(CGROUP_V2, tmp, NULL, &lim), 0);
        snprintf(p, sizeof(p), "%s/pids.max", tmp);
        unlink(p);
        assert_int_equal(cgroup_write_limits(CGROUP_V2, tmp, NULL, &lim), -ENOENT);
        touch("memory.limit_in_bytes", "");
        touch("memory.memsw.limit_in_bytes", "");
        touch("pids.max", "");
        assert_int_equal(cgroup_write_limits(CGROUP_V1, tmp, "memory", &lim), 0);
        assert_string_equal((s = slurp("memory.memsw.limit_in_bytes")), "67108864");
        free(s);
        assert_int_equal(cgroup_write_limits(CGROUP_V1, tmp, "pids", &lim), 0);
        assert_string_equal((s = slurp("pids.max")), "32");
        free(s);
        assert_int_equal(cgroup_write_limits(CGROUP_V1, tmp, "cpu", &lim), -EINVAL);
}

/* A made-up v2 host: the own cgroup hands nothing down, its parent hands down memory only, the
 * root both: the run's cgroup goes below the root. (A plain directory has no limit files, so
 * creation fails there with ENOENT and leaves nothing behind: the attempt shows the choice.) */
static void test_parent_choice(void **state) {
        (void) state;
        char d[PATH_MAX + 64], mi[PATH_MAX + 128];
        snprintf(d, sizeof(d), "%s/cg/a/b", tmp);
        char cmd[PATH_MAX + 96];
        snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", d);
        assert_int_equal(system(cmd), 0);
        touch("cg/cgroup.controllers", "cpu memory pids\n");
        touch("cg/cgroup.subtree_control", "memory pids\n");
        touch("cg/cgroup.procs", "");
        touch("cg/a/cgroup.subtree_control", "memory\n");
        touch("cg/a/cgroup.procs", "");
        touch("cg/a/b/cgroup.subtree_control", "\n");
        touch("cg/a/b/cgroup.procs", "1\n");
        snprintf(mi, sizeof(mi), "1 0 0:1 / %s/cg rw - cgroup2 cgroup2 rw\n", tmp);
        cgroup_host h = { .mountinfo = mi, .self_cgroup = "0::/a/b\n" };
        cgroup_limits lim = { .memory_bytes = 1 << 20, .pids = 8 };
        run_cgroup *cg = NULL;
        /* memory alone: /a is taken (its subtree_control lists memory). */
        cgroup_limits mem = { .memory_bytes = 1 << 20 };
        assert_int_equal(cgroup_create(&h, &mem, &cg), -ENOENT);
        assert_int_equal(cgroup_create(&h, &lim, &cg), -ENOENT);
        /* Nothing left behind anywhere. */
        snprintf(cmd, sizeof(cmd), "test -z \"$(find '%s/cg' -name 'cordon-*')\"", tmp);
        assert_int_equal(system(cmd), 0);
        /* No parent hands down pids: no cgroup (and no v1 hierarchy either): -ENOTSUP. */
        touch("cg/cgroup.subtree_control", "memory\n");
        assert_int_equal(cgroup_create(&h, &lim, &cg), -ENOTSUP);
        /* Not offered at the root at all. */
        touch("cg/cgroup.controllers", "cpu memory\n");
        assert_int_equal(cgroup_create(&h, &lim, &cg), -ENOTSUP);
        assert_int_equal(cgroup_create(&h, &(cgroup_limits) { 0 }, &cg), -EINVAL);
}

/* ---- the real thing, where this host allows it ------------------------------------------- */

static void test_real_run_cgroup(void **state) {
        (void) state;
        char detail[256];
        cgroup_kind k = cgroup_probe(detail, sizeof(detail));
        print_message("this host, as uid %u: %s\n", (unsigned) geteuid(), detail);
        run_cgroup *cg = NULL;
        cgroup_limits lim = { .memory_bytes = 32ULL << 20, .pids = 16 };
        int r = cgroup_create(NULL, &lim, &cg);
        if (k == CGROUP_NONE) {
                assert_int_equal(r, -ENOTSUP);
                skip();
        }
        assert_int_equal(r, 0);
        assert_int_equal(cgroup_get_kind(cg), k);
        cgroup_procs procs;
        assert_int_equal(cgroup_procs_open(cg, &procs), 0);
        int go[2];
        assert_int_equal(pipe(go), 0);
        pid_t c = fork();
        assert_true(c >= 0);
        if (c == 0) {
                char b;
                if (read(go[0], &b, 1) != 1)
                        _exit(3);
                for (int i = 0; i < 256; i++) { /* 256 MiB, far over the limit */
                        char *m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
                                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                        if (m == MAP_FAILED)
                                _exit(4);
                        memset(m, 1, 1 << 20);
                }
                _exit(0);
        }
        assert_int_equal(cgroup_procs_attach(&procs, c), 0);
        cgroup_procs_close(&procs);
        assert_int_equal(write(go[1], "g", 1), 1);
        int st;
        assert_int_equal(waitpid(c, &st, 0), c);
        assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
        assert_true(cgroup_oom_kills(cg) >= 1);
        short ev = 0;
        assert_true(cgroup_oom_fd(cg, &ev) >= 0);
        cgroup_oom_ack(cg);
        char *path = strdup(cgroup_get_path(cg));
        cgroup_destroy(cg);
        struct stat sb;
        assert_int_equal(stat(path, &sb), -1);
        free(path);
        close(go[0]);
        close(go[1]);
}

/* Whether a pids-only cgroup can be made here (the default ceiling needs nothing more). */
static bool pids_cgroup_possible(void) {
        run_cgroup *cg = NULL;
        if (cgroup_create(NULL, &(cgroup_limits) { .pids = 64 }, &cg) < 0)
                return false;
        cgroup_destroy(cg);
        return true;
}

/* The choice a run makes: a cgroup, else rlimits, except limits.pids as root. */
static void test_for_limits(void **state) {
        (void) state;
        run_cgroup *cg = (run_cgroup *) 1;
        cordon_error err = { 0 };
        uint64_t none = 0, pids = 32;
        assert_int_equal(cgroup_for_limits(0, &none, false, &cg, &err), 0);
        assert_null(cg);
        char detail[256];
        bool cgroups = cgroup_probe(detail, sizeof(detail)) != CGROUP_NONE;
        bool pids_cg = pids_cgroup_possible();
        /* The built-in ceiling: a cgroup where one can be made, RLIMIT_NPROC for a user, and
         * nothing (never a refusal) for root without a cgroup. */
        uint64_t def = 2048;
        assert_int_equal(cgroup_for_limits(0, &def, true, &cg, &err), 0);
        assert_int_equal(cg != NULL, pids_cg);
        assert_int_equal(def, pids_cg || geteuid() != 0 ? 2048 : 0);
        cgroup_destroy(cg);
        if (pids_cg != cgroups)
                skip(); /* a pids hierarchy without a memory one: the cases below assume both */
        int r = cgroup_for_limits(0, &pids, false, &cg, &err);
        if (cgroups) {
                assert_int_equal(r, 0);
                assert_non_null(cg);
                cgroup_destroy(cg);
        } else if (geteuid() == 0) {
                assert_int_equal(r, -ENOTSUP);
                assert_int_equal(err.code, CORDON_POLICY_UNENFORCEABLE);
                assert_non_null(strstr(err.message, "RLIMIT_NPROC does not apply to root"));
        } else {
                assert_int_equal(r, 0);
                assert_null(cg); /* RLIMIT_NPROC stands in */
        }
        r = cgroup_for_limits(64ULL << 20, &none, false, &cg, &err);
        assert_int_equal(r, 0);
        assert_int_equal(cg != NULL, cgroups);
        cgroup_destroy(cg);
}

/* pids.max reached: forks fail with EAGAIN, the cgroup counts them (pids.events "max"), and
 * cgroup_pids_hits() reads that count for the run's report. */
static void test_pids_hits(void **state) {
        (void) state;
        run_cgroup *cg = NULL;
        if (cgroup_create(NULL, &(cgroup_limits) { .pids = 8 }, &cg) < 0)
                skip();
        assert_int_equal(cgroup_pids_hits(cg), 0);
        cgroup_procs procs;
        assert_int_equal(cgroup_procs_open(cg, &procs), 0);
        int go[2];
        assert_int_equal(pipe(go), 0);
        pid_t c = fork();
        assert_true(c >= 0);
        if (c == 0) {
                char b;
                int failed = 0;
                if (read(go[0], &b, 1) != 1)
                        _exit(3);
                close(go[1]); /* the children see EOF once the test closes its end */
                for (int i = 0; i < 32; i++) { /* children that wait: 8 tasks at most */
                        pid_t k = fork();
                        if (k == 0) {
                                (void) !read(go[0], &b, 1); /* EOF when the test closes it */
                                _exit(0);
                        }
                        failed += k < 0 && errno == EAGAIN;
                }
                _exit(failed >= 24 ? 0 : 5);
        }
        assert_int_equal(cgroup_procs_attach(&procs, c), 0);
        cgroup_procs_close(&procs);
        assert_int_equal(write(go[1], "g", 1), 1);
        close(go[1]);
        int st;
        assert_int_equal(waitpid(c, &st, 0), c);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
        assert_true(cgroup_pids_hits(cg) >= 24);
        cgroup_destroy(cg);
        close(go[0]);
}

/* A process that enters the cgroup itself (init's way, sandbox.c): it is inside, and so is
 * everything it forks from then on, with the limits in force; the launcher stays outside. */
static void test_enter_self(void **state) {
        (void) state;
        run_cgroup *cg = NULL;
        if (cgroup_create(NULL, &(cgroup_limits) { .pids = 8 }, &cg) < 0)
                skip();
        cgroup_procs procs;
        assert_int_equal(cgroup_procs_open_self(cg, &procs), 0);
        int go[2];
        assert_int_equal(pipe(go), 0);
        pid_t c = fork();
        assert_true(c >= 0);
        if (c == 0) {
                char b;
                int failed = 0;
                close(go[1]); /* the children see EOF once the test closes its end */
                if (cgroup_procs_enter_self(&procs) < 0)
                        _exit(3);
                cgroup_procs_close(&procs);
                for (int i = 0; i < 32; i++) { /* children that wait: 8 tasks at most */
                        pid_t k = fork();
                        if (k == 0) {
                                (void) !read(go[0], &b, 1);
                                _exit(0);
                        }
                        failed += k < 0 && errno == EAGAIN;
                }
                _exit(failed >= 24 ? 0 : 5);
        }
        cgroup_procs_close(&procs);
        close(go[1]);
        int st;
        assert_int_equal(waitpid(c, &st, 0), c);
        close(go[0]);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
        assert_true(cgroup_pids_hits(cg) >= 24);
        /* The test process itself never moved. */
        char self[4096] = "";
        int fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_true(read(fd, self, sizeof(self) - 1) > 0);
        close(fd);
        const char *base = strrchr(cgroup_get_path(cg), '/');
        assert_non_null(base);
        assert_null(strstr(self, base));
        cgroup_destroy(cg);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_self),
                cmocka_unit_test(test_parse_mount),
                cmocka_unit_test(test_parse_key),
                cmocka_unit_test_setup_teardown(test_limit_files, setup_tmp, teardown_tmp),
                cmocka_unit_test_setup_teardown(test_parent_choice, setup_tmp, teardown_tmp),
                cmocka_unit_test(test_real_run_cgroup),
                cmocka_unit_test(test_pids_hits),
                cmocka_unit_test(test_enter_self),
                cmocka_unit_test(test_for_limits),
        };
        return cmocka_run_group_tests_name("cgroup", tests, NULL, NULL);
}
