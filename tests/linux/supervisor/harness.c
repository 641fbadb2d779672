/* SPDX-License-Identifier: Apache-2.0 */
#include "harness.h"

#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "linux/fdpass.h"
#include "linux/seccomp.h"
#include "linux/supervisor.h"
#include "plan/name-rules.h"

bool sup_is_root(void) {
        return geteuid() == 0;
}

static int push_rel(strv *s, const char *root, const char *rel) {
        char buf[2 * PATH_MAX];
        snprintf(buf, sizeof(buf), "%s/%s", root, rel);
        return strv_push(s, buf);
}

int sup_env_new(sup_env **ret) {
        sup_env *env = calloc(1, sizeof(*env));
        if (!env)
                return -ENOMEM;
        const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
        char templ[PATH_MAX];
        snprintf(templ, sizeof(templ), "%s/cordon-sup-XXXXXX", tmp);
        if (!mkdtemp(templ) || !realpath(templ, env->root)) {
                free(env);
                return -errno;
        }
        static const char *const protected[] = { ".git/hooks", ".git/config", ".bashrc", "HEAD",
                                                 ".vscode", ".claude/settings*.json" };
        static const char *const names[] = { ".env", ".env.*", "*.pem", "*.key" };
        for (size_t i = 0; i < sizeof(protected) / sizeof(protected[0]); i++)
                if (push_rel(&env->rules.protected, env->root, protected[i]) < 0)
                        abort();
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (strv_push(&env->rules.deny_names, names[i]) < 0)
                        abort();
        pthread_mutex_init(&env->lock, NULL);
        *ret = env;
        return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st, (void) flag, (void) ftw;
        (void) remove(path);
        return 0;
}

void sup_env_free(sup_env *env) {
        if (!env)
                return;
        (void) chmod(env->root, 0755);
        (void) nftw(env->root, rm_entry, 32, FTW_DEPTH | FTW_PHYS);
        strv_done(&env->rules.protected);
        strv_done(&env->rules.deny_names);
        strv_done(&env->preexisting);
        strv_done(&env->violations);
        strv_done(&env->reports);
        pthread_mutex_destroy(&env->lock);
        free(env);
}

static void record_report(void *userdata, const supervisor_report *rep) {
        sup_env *env = userdata;
        char buf[PATH_MAX + 1024];
        pthread_mutex_lock(&env->lock);
        snprintf(buf, sizeof(buf), "%s %s %s %s", rep->action, rep->syscall, rep->target,
                 rep->rule ? rep->rule : "(null)");
        if (rep->repeats > 0) {
                size_t l = strlen(buf);
                snprintf(buf + l, sizeof(buf) - l, " x%llu", (unsigned long long) rep->repeats);
        }
        if (strv_push(&env->reports, buf) < 0)
                abort();
        if (strcmp(rep->action, "file-create-name") == 0) {
                snprintf(buf, sizeof(buf), "%s %s %s", rep->syscall, rep->target,
                         rep->rule ? rep->rule : "(null)");
                for (uint64_t i = 0; i < (rep->repeats ? rep->repeats : 1) && i < 100000; i++)
                        if (strv_push(&env->violations, buf) < 0)
                                abort();
        }
        pthread_mutex_unlock(&env->lock);
}

uint64_t sup_reports(sup_env *env, const char *needle) {
        uint64_t n = 0;
        pthread_mutex_lock(&env->lock);
        for (size_t i = 0; i < env->reports.n; i++) {
                const char *r = env->reports.v[i];
                if (needle && !strstr(r, needle))
                        continue;
                const char *x = strrchr(r, ' ');
                unsigned long long rep = 0;
                n += x && sscanf(x, " x%llu", &rep) == 1 && rep > 0 ? rep : 1;
        }
        pthread_mutex_unlock(&env->lock);
        return n;
}

size_t sup_violations(sup_env *env, const char *needle) {
        size_t n = 0;
        pthread_mutex_lock(&env->lock);
        for (size_t i = 0; i < env->violations.n; i++)
                if (!needle || strstr(env->violations.v[i], needle))
                        n++;
        pthread_mutex_unlock(&env->lock);
        return n;
}

/* ---- The confined child ------------------------------------------------------------------------ */

static _Noreturn void child_main(sup_env *env, scenario_fn fn, void *arg, int sock) {
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
                perror("no_new_privs");
                _exit(90);
        }
        seccomp_options o = { .notify_creates = true, .unix_connect = env->unix_allow != NULL };
        int listener = -1;
        int r = seccomp_install_sandbox_filter(&o, &listener);
        if (r < 0) {
                fprintf(stderr, "seccomp_install_sandbox_filter: %s\n", strerror(-r));
                _exit(91);
        }
        if (fd_send(sock, listener) < 0)
                _exit(92);
        close(listener); /* a listener kept here could answer CONTINUE to itself */
        char go;
        if (read(sock, &go, 1) != 1)
                _exit(93);
        close(sock);
        if (chdir(env->root) < 0)
                _exit(94);
        _exit(fn(env, arg));
}

static int wait_child(pid_t pid, unsigned kill_after_ms) {
        struct timespec start;
        clock_gettime(CLOCK_MONOTONIC, &start);
        for (;;) {
                int st;
                pid_t w = waitpid(pid, &st, WNOHANG);
                if (w == pid)
                        return st;
                struct timespec now;
                clock_gettime(CLOCK_MONOTONIC, &now);
                long ms = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
                if ((kill_after_ms && ms >= (long) kill_after_ms) || ms > 90 * 1000)
                        kill(pid, SIGKILL);
                usleep(2000);
        }
}

static int run(sup_env *env, scenario_fn fn, void *arg, unsigned kill_after_ms) {
        int sp[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
                return -errno;
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                close(sp[0]);
                child_main(env, fn, arg, sp[1]);
        }
        close(sp[1]);
        int listener = fd_recv(sp[0]);
        int proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
        supervisor *s = NULL;
        supervisor_config cfg = { .listener_fd = listener, .proc_fd = proc_fd, .rules = &env->rules,
                                  .on_report = record_report, .userdata = env,
                                  .workers = env->workers, .unix_allow = env->unix_allow };
        int r = listener < 0 || proc_fd < 0 ? -EBADF : supervisor_start(&cfg, &s);
        if (r < 0) {
                fprintf(stderr, "supervisor_start: %s\n", strerror(-r));
                kill(pid, SIGKILL);
        } else if (write(sp[0], "g", 1) != 1)
                kill(pid, SIGKILL);
        int st = wait_child(pid, kill_after_ms);
        supervisor_stop(s);
        close(proc_fd);
        close(sp[0]);
        return r < 0 ? r : st;
}

long sup_run_stop_live(sup_env *env, scenario_fn fn, void *arg) {
        int ready[2], sp[2];
        if (pipe2(ready, O_CLOEXEC) < 0)
                return -errno;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
                return -errno;
        env->ready_fd = ready[1];
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                close(sp[0]);
                close(ready[0]);
                child_main(env, fn, arg, sp[1]);
        }
        close(sp[1]);
        close(ready[1]);
        env->ready_fd = -1;
        int listener = fd_recv(sp[0]);
        int proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
        supervisor *s = NULL;
        supervisor_config cfg = { .listener_fd = listener, .proc_fd = proc_fd, .rules = &env->rules,
                                  .on_report = record_report, .userdata = env,
                                  .workers = env->workers };
        long r = listener < 0 || proc_fd < 0 ? -EBADF : supervisor_start(&cfg, &s);
        char c;
        if (r == 0 && (write(sp[0], "g", 1) != 1 || read(ready[0], &c, 1) != 1))
                r = -EIO; /* the scenario failed before it was ready */
        if (r == 0) {
                struct timespec a, b;
                clock_gettime(CLOCK_MONOTONIC, &a);
                supervisor_stop(s); /* the child lives: its filter has users */
                clock_gettime(CLOCK_MONOTONIC, &b);
                r = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
                s = NULL;
        }
        kill(pid, SIGKILL);
        (void) wait_child(pid, 0);
        supervisor_stop(s);
        close(proc_fd);
        close(sp[0]);
        close(ready[0]);
        return r;
}

int sup_run(sup_env *env, scenario_fn fn, void *arg) {
        return run(env, fn, arg, 0);
}

int sup_run_killed(sup_env *env, scenario_fn fn, void *arg, unsigned kill_after_ms) {
        return run(env, fn, arg, kill_after_ms);
}

/* ---- Host-side checks ------------------------------------------------------------------------------ */

static sup_env *walk_env;
static char walk_hit[PATH_MAX];

static int check_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st, (void) flag, (void) ftw;
        const char *rel = path + strlen(walk_env->root);
        if (*rel == '/')
                rel++;
        if (!*rel || strv_contains(&walk_env->preexisting, rel))
                return 0;
        /* Exact bytes, as the supervisor decides on this test's (non-casefolding) filesystem. */
        if (name_rules_check(&walk_env->rules, NAME_CHECK_CREATE, path, NAME_CHECK_EXACT_BYTES, NULL) !=
            NAME_ALLOWED) {
                snprintf(walk_hit, sizeof(walk_hit), "%s", rel);
                return 1;
        }
        return 0;
}

const char *sup_first_denied(sup_env *env) {
        walk_env = env;
        walk_hit[0] = '\0';
        return nftw(env->root, check_entry, 32, FTW_PHYS) == 1 ? walk_hit : NULL;
}

static void note_preexisting(sup_env *env, const char *path, const char *rel) {
        if (name_rules_check_create(&env->rules, path, NULL) != NAME_ALLOWED &&
            strv_push(&env->preexisting, rel) < 0)
                abort();
}

void sup_host_dir(sup_env *env, const char *rel) {
        char path[2 * PATH_MAX];
        snprintf(path, sizeof(path), "%s/%s", env->root, rel);
        if (mkdir(path, 0755) < 0)
                abort();
        note_preexisting(env, path, rel);
}

void sup_host_file(sup_env *env, const char *rel, const char *content) {
        char path[2 * PATH_MAX];
        snprintf(path, sizeof(path), "%s/%s", env->root, rel);
        int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, content, strlen(content)) != (ssize_t) strlen(content))
                abort();
        close(fd);
        note_preexisting(env, path, rel);
}
