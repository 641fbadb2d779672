/* SPDX-License-Identifier: Apache-2.0 */
/* The parts of the macOS backend that are plain POSIX, run on Linux: the sandbox-exec runner
 * against a stand-in that checks its arguments and then runs the command as sandbox-exec would,
 * the private TMPDIR and its symlink-proof removal, and the probe's verdicts for macOS and for
 * platforms without a native sandbox. */
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "sb-harness.h"
#include "seatbelt/probe-portable.h"
#include "seatbelt/seatbelt-exec.h"

static char *T;

static const char *at(const char *rel) {
        return sbt_at(T, rel);
}

static void write_file(const char *path, const char *content, mode_t mode) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        assert_true(fd >= 0);
        assert_int_equal(write_all(fd, content, strlen(content)), (ssize_t) strlen(content));
        close(fd);
}

static char *slurp(const char *path) {
        char *s = NULL;
        return read_file_at(AT_FDCWD, path, 1 << 20, 0, &s, NULL) < 0 ? NULL : s;
}

/* A stand-in for /usr/bin/sandbox-exec: refuses anything but `-p PROFILE -- CMD...`, keeps the
 * profile, then runs CMD in place, as sandbox-exec does after applying the profile. */
static const char stand_in[] =
        "#!/bin/sh\n"
        "[ \"$1\" = -p ] && [ \"$3\" = -- ] || { echo bad-args >&2; exit 99; }\n"
        "printf '%s' \"$2\" > \"$SB_OUT/profile\"\n"
        "shift 3\n"
        "exec \"$@\"\n";

static seatbelt_exec_params params(char *const *argv, char *const *envp) {
        return (seatbelt_exec_params) { .sandbox_exec = at("sandbox-exec"),
                                        .profile = "(version 1)\n(allow default)\n\"q\"",
                                        .argv = argv, .envp = envp, .workdir = at("state") };
}

static void test_runs_under_stand_in(void **state) {
        char out[PATH_MAX + 8], path_env[] = "PATH=/usr/bin:/bin", script[512];
        snprintf(out, sizeof(out), "SB_OUT=%s", T);
        char *envp[] = { out, path_env, (char *) "ONLY=this", NULL };
        int leaked = open("/dev/null", O_RDONLY); /* not close-on-exec: must not reach it */
        assert_true(leaked >= 3);
        /* What the command gets: cwd, environment, descriptors, its own session. */
        snprintf(script, sizeof(script),
                 "r=clean; [ -e /proc/$$/fd/%d ] && r=leaked; echo $r > \"$SB_OUT/fds\"; "
                 "pwd > \"$SB_OUT/pwd\"; env > \"$SB_OUT/env\"; "
                 "[ \"$(cut -d' ' -f6 /proc/$$/stat)\" = $$ ] && exit 7; exit 8",
                 leaked);
        char *argv[] = { (char *) "sh", (char *) "-c", script, NULL };
        seatbelt_exec_params x = params(argv, envp);
        seatbelt_exec_result res;
        cordon_error err = { 0 };
        assert_int_equal(seatbelt_exec_run(&x, &res, &err), 0);
        close(leaked);
        assert_true(WIFEXITED(res.wait_status));
        assert_int_equal(WEXITSTATUS(res.wait_status), 7); /* a session leader */
        assert_false(res.timed_out);
        char *s = slurp(at("profile"));
        assert_string_equal(s, x.profile);
        free(s);
        s = slurp(at("pwd"));
        assert_string_equal(s, sbt_at(T, "state\n"));
        free(s);
        s = slurp(at("env"));
        assert_non_null(strstr(s, "ONLY=this\n"));
        assert_null(strstr(s, "HOME="));             /* only what envp holds */
        assert_null(strstr(s, "CORDON_BUILD_DIR=")); /* the test's own environment */
        free(s);
        s = slurp(at("fds"));
        assert_string_equal(s, "clean\n");
        free(s);
}

static void test_status_and_signals(void **state) {
        char out[PATH_MAX + 8];
        snprintf(out, sizeof(out), "SB_OUT=%s", T);
        char *envp[] = { out, (char *) "PATH=/usr/bin:/bin", NULL };
        char *kill_self[] = { (char *) "sh", (char *) "-c", (char *) "kill -TERM $$", NULL };
        seatbelt_exec_params x = params(kill_self, envp);
        seatbelt_exec_result res;
        cordon_error err = { 0 };
        assert_int_equal(seatbelt_exec_run(&x, &res, &err), 0);
        assert_true(WIFSIGNALED(res.wait_status));
        assert_int_equal(WTERMSIG(res.wait_status), SIGTERM);
        /* A command name that looks like an option reaches the command, not sandbox-exec. */
        char *dash[] = { (char *) "-x", NULL };
        x = params(dash, envp);
        assert_int_equal(seatbelt_exec_run(&x, &res, &err), 0);
        assert_true(WIFEXITED(res.wait_status));
        assert_int_equal(WEXITSTATUS(res.wait_status), 127); /* exec "-x": not found */
}

/* The timeout kills the command and what it started in its session. */
static void test_timeout_kills_group(void **state) {
        char out[PATH_MAX + 8];
        snprintf(out, sizeof(out), "SB_OUT=%s", T);
        char *envp[] = { out, (char *) "PATH=/usr/bin:/bin", NULL };
        char *argv[] = { (char *) "sh", (char *) "-c",
                         (char *) "sleep 30 & echo $! > \"$SB_OUT/bg\"; sleep 30", NULL };
        seatbelt_exec_params x = params(argv, envp);
        x.timeout_ms = 300;
        seatbelt_exec_result res;
        cordon_error err = { 0 };
        assert_int_equal(seatbelt_exec_run(&x, &res, &err), 0);
        assert_true(res.timed_out);
        assert_true(WIFSIGNALED(res.wait_status));
        char *bg = slurp(at("bg"));
        assert_non_null(bg);
        pid_t pid = (pid_t) atoi(bg);
        free(bg);
        /* Killed: gone, or a zombie waiting for its reaper. */
        for (int i = 0; i < 100 && kill(pid, 0) == 0; i++) {
                char stat[64], st[512] = "";
                snprintf(stat, sizeof(stat), "/proc/%d/stat", (int) pid);
                FILE *f = fopen(stat, "r");
                if (f && fgets(st, sizeof(st), f) && strstr(st, ") Z "))
                        pid = 0;
                if (f)
                        fclose(f);
                if (!pid)
                        break;
                usleep(10000);
        }
        assert_true(pid == 0 || kill(pid, 0) < 0);
}

static void test_exec_failures(void **state) {
        char *envp[] = { (char *) "PATH=/usr/bin:/bin", NULL };
        char *argv[] = { (char *) "true", NULL };
        seatbelt_exec_params x = params(argv, envp);
        x.sandbox_exec = at("no-such-sandbox-exec");
        seatbelt_exec_result res;
        cordon_error err = { 0 };
        assert_true(seatbelt_exec_run(&x, &res, &err) < 0);
        assert_int_equal(err.code, CORDON_EXEC_FAILED);
        assert_non_null(strstr(err.message, "no-such-sandbox-exec"));
        assert_non_null(strstr(err.message, "cordon probe"));
        x = params(argv, envp);
        x.workdir = at("no-such-dir");
        assert_true(seatbelt_exec_run(&x, &res, &err) < 0);
        assert_int_equal(err.code, CORDON_LAUNCH_FAILED);
        /* Unconfined (explicitly asked for): the command itself, found in its own PATH. */
        x = (seatbelt_exec_params) { .argv = argv, .envp = envp };
        assert_int_equal(seatbelt_exec_run(&x, &res, &err), 0);
        assert_true(WIFEXITED(res.wait_status) && WEXITSTATUS(res.wait_status) == 0);
        char *missing[] = { (char *) "no-such-command-here", NULL };
        x.argv = missing;
        assert_true(seatbelt_exec_run(&x, &res, &err) < 0);
        assert_int_equal(err.code, CORDON_EXEC_FAILED);
        char *empty[] = { (char *) "", NULL };
        x.argv = empty;
        assert_true(seatbelt_exec_run(&x, &res, &err) < 0);
        assert_int_equal(err.code, CORDON_USAGE);
}

/* What the command leaves in TMPDIR is removed; nothing a symlink there points to is. */
typedef struct watch_state {
        int fd;
        const char *gate;
        unsigned calls;
        char got[64];
        size_t len;
        bool released;
} watch_state;

/* Reads what the command sent; once it has all of it, opens the gate the command waits on. */
static bool on_watch(void *userdata) {
        watch_state *w = userdata;
        w->calls++;
        ssize_t n = read(w->fd, w->got + w->len, sizeof(w->got) - 1 - w->len);
        if (n <= 0)
                return false;
        w->len += (size_t) n;
        w->got[w->len] = '\0';
        if (!w->released && strchr(w->got, '\n')) {
                int g = open(w->gate, O_WRONLY | O_CLOEXEC); /* the command has it open */
                assert_true(g >= 0);
                close(g); /* EOF: its cat returns */
                w->released = true;
        }
        return true;
}

/* The watched descriptor is read while the command runs, from the caller's thread: the command
 * writes a line to one FIFO, then waits on another that only the callback opens, so the run can
 * only end after the callback has read the line. Without a timeout too. */
static void test_watch_fd(void **state) {
        char fifo[PATH_MAX], gate[PATH_MAX], script[3 * PATH_MAX];
        snprintf(fifo, sizeof(fifo), "%s", at("watch.fifo"));
        snprintf(gate, sizeof(gate), "%s", at("gate.fifo"));
        assert_int_equal(mkfifo(fifo, 0600), 0);
        assert_int_equal(mkfifo(gate, 0600), 0);
        int fd = open(fifo, O_RDWR | O_NONBLOCK | O_CLOEXEC);
        assert_true(fd >= 0);
        snprintf(script, sizeof(script), "echo refused > '%s'; cat '%s' > /dev/null; exit 3",
                 fifo, gate);
        char out[PATH_MAX + 8], path_env[] = "PATH=/usr/bin:/bin";
        snprintf(out, sizeof(out), "SB_OUT=%s", T);
        char *envp[] = { out, path_env, NULL };
        char *argv[] = { (char *) "sh", (char *) "-c", script, NULL };
        watch_state w = { .fd = fd, .gate = gate };
        seatbelt_exec_params x = params(argv, envp);
        x.on_watch = on_watch;
        x.watch_userdata = &w;
        x.watch_fd = fd;
        seatbelt_exec_result res;
        cordon_error err = { 0 };
        assert_int_equal(seatbelt_exec_run(&x, &res, &err), 0);
        assert_true(WIFEXITED(res.wait_status));
        assert_int_equal(WEXITSTATUS(res.wait_status), 3);
        assert_true(w.released);
        assert_string_equal(w.got, "refused\n");
        assert_true(w.calls >= 1);
        close(fd);
        unlink(fifo);
        unlink(gate);
}

static void test_tmpdir(void **state) {
        char *dir = NULL;
        assert_int_equal(seatbelt_tmpdir_create(at("tmp"), &dir), 0);
        struct stat st;
        assert_int_equal(stat(dir, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0700);
        assert_true(strncmp(dir, at("tmp/cordon-"), strlen(at("tmp/cordon-"))) == 0);
        write_file(at("home/alice/precious"), "keep", 0644);
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "%s/a", dir);
        assert_int_equal(mkdir(p, 0755), 0);
        snprintf(p, sizeof(p), "%s/a/b", dir);
        assert_int_equal(mkdir(p, 0755), 0);
        snprintf(p, sizeof(p), "%s/a/b/file", dir);
        write_file(p, "x", 0644);
        snprintf(p, sizeof(p), "%s/to-home", dir);
        assert_int_equal(symlink(at("home/alice"), p), 0);
        snprintf(p, sizeof(p), "%s/a/to-file", dir);
        assert_int_equal(symlink(at("home/alice/precious"), p), 0);
        assert_int_equal(seatbelt_tmpdir_remove(dir), 0);
        assert_true(lstat(dir, &st) < 0 && errno == ENOENT);
        assert_int_equal(stat(at("home/alice/precious"), &st), 0);
        assert_int_equal(stat(at("home/alice/.ssh/id_ed25519"), &st), 0);
        /* A symlink given as the directory itself is not followed either. */
        assert_int_equal(symlink(at("home/alice"), at("tmp/link")), 0);
        assert_true(seatbelt_tmpdir_remove(at("tmp/link")) < 0);
        assert_int_equal(stat(at("home/alice/precious"), &st), 0);
        assert_int_equal(seatbelt_tmpdir_remove(at("tmp/gone")), 0);
        assert_int_equal(seatbelt_tmpdir_create("relative", &dir), -EINVAL);
        free(dir);
}

static void test_probe_verdicts(void **state) {
        portable_facts mac = { "Darwin", "24.1.0", true, true };
        portable_backend b[PORTABLE_N_BACKENDS];
        portable_probe_evaluate(&mac, b);
        assert_string_equal(b[0].status, "partial");
        assert_true(b[0].fs && b[0].name_rules && b[0].network);
        assert_false(b[0].pid || b[0].syscalls);
        assert_int_equal(portable_default_backend(b), CORDON_BACKEND_NATIVE);
        char *text = portable_probe_text(&mac, b);
        assert_non_null(strstr(text, "default backend: native"));
        assert_non_null(strstr(text, "/usr/bin/sandbox-exec"));
        free(text);

        mac.sandbox_exec = false;
        portable_probe_evaluate(&mac, b);
        assert_string_equal(b[0].status, "unusable");
        assert_non_null(strstr(b[0].hint, "check /usr/bin/sandbox-exec"));
        assert_int_equal(portable_default_backend(b), -1);

        portable_facts bsd = { "FreeBSD", "14.1", false, false };
        portable_probe_evaluate(&bsd, b);
        assert_string_equal(b[0].status, "unusable");
        assert_non_null(strstr(b[0].hint, "no native sandbox on this platform"));
        for (size_t i = 0; i < 3; i++) /* nothing confining claims to work */
                assert_string_equal(b[i].status, "unusable");
        assert_string_equal(b[3].status, "full"); /* none: explicit opt-out only */
        assert_int_equal(portable_default_backend(b), -1);
        text = portable_probe_text(&bsd, b);
        assert_non_null(strstr(text, "none usable (cordon run refuses"));
        free(text);
        char *js = portable_probe_json(&bsd, b);
        json_error_t je;
        json_t *root = json_loads(js, 0, &je);
        assert_non_null(root);
        assert_true(json_is_null(json_object_get(root, "defaultBackend")) ||
                    !json_object_get(root, "defaultBackend"));
        json_t *native = json_array_get(json_object_get(root, "backends"), 0);
        assert_string_equal(json_string_value(json_object_get(native, "status")), "unusable");
        json_decref(root);
        free(js);
}

static int setup(void **state) {
        T = sbt_tree();
        write_file(at("sandbox-exec"), stand_in, 0755);
        return 0;
}

static int teardown(void **state) {
        sbt_remove(T);
        T = NULL;
        return 0;
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_runs_under_stand_in),
                cmocka_unit_test(test_status_and_signals),
                cmocka_unit_test(test_timeout_kills_group),
                cmocka_unit_test(test_exec_failures),
                cmocka_unit_test(test_watch_fd),
                cmocka_unit_test(test_tmpdir),
                cmocka_unit_test(test_probe_verdicts),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
