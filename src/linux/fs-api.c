/* SPDX-License-Identifier: Apache-2.0 */
/* The public policy-checked file operations (cordon_fs_*, cordon_session_fs_*: include/cordon/
 * cordon.h; docs/design/fs-ops.md): the policy planned for this one call, as a run's launch
 * plans it (launch_plan(), launch.c: the home and environment of the caller, plan_build()), then
 * the operation of fs-ops.c on that plan, its error and refusal handed back. The plan is built
 * per call, never kept: a protected path created since the last call (a .vscode the user made)
 * is a read-only bind in this plan, and the operation must see it. */
#include "linux/fs-ops.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "linux/session-handle.h"
#include "settings/settings.h"
#include "util/util.h"

extern char **environ;

/* One call: the plan it owns, and the context fs-ops.c fills. */
typedef struct fs_call {
        plan *plan;
        fs_ctx ctx;
} fs_call;

static void fs_call_done(fs_call *f) {
        plan_free(f->plan);
        f->plan = NULL;
}

/* A refusal the caller sees is one the policy made: POLICY_UNENFORCEABLE with an action. */
static void refusal_clear(cordon_fs_refusal *refusal) {
        if (refusal)
                *refusal = (cordon_fs_refusal) { .action = NULL };
}

static int fs_plan(fs_call *f, const cordon_policy *policy, const char *home, const char *cwd,
                   char *const *env) {
        if (!policy)
                return cordon_set_error(&f->ctx.err, CORDON_USAGE, EINVAL, "no policy");
        int r = plan_build(policy, home, cwd, env, &f->plan, &f->ctx.err);
        f->ctx.plan = f->plan;
        return r;
}

/* The caller's home, environment and directory, as cordon_run() without options takes them;
 * and, as at every launch, the administrator's managed settings over the caller's own policy
 * (settings-managed.c: not again over a policy cordon_settings_resolve() made): a harness's file
 * tools must not write where the administrator's rules keep its commands out. */
static int plan_for_caller(fs_call *f, const cordon_policy *policy, const char *cwd) {
        _cleanup_free_ char *home = home_dir_of(environ);
        _cleanup_free_ char *here = cwd ? strdup(cwd) : getcwd(NULL, 0);
        if (!home || !here)
                return cordon_set_error(&f->ctx.err, CORDON_LAUNCH_FAILED,
                                        errno ? errno : ENOENT,
                                        "cannot determine the %s directory",
                                        home ? "current" : "home");
        if (!policy)
                return cordon_set_error(&f->ctx.err, CORDON_USAGE, EINVAL, "no policy");
        cordon_policy *managed = NULL;
        int r = settings_managed_apply(policy, here, home, CORDON_BACKEND_AUTO, &managed,
                                       &f->ctx.err);
        if (r >= 0)
                r = fs_plan(f, managed ? managed : policy, home, here, environ);
        cordon_policy_free(managed);
        return r;
}

/* The session's own: the policy, home, directory and environment its sandbox was built from. */
static int plan_for_session(fs_call *f, cordon_session *s) {
        if (!s)
                return cordon_set_error(&f->ctx.err, CORDON_USAGE, EINVAL, "no session");
        /* A session whose sandbox is gone has no commands left to share the files with. */
        cordon_session_state st = cordon_session_get_state(s);
        if (st == CORDON_SESSION_DESTROYED || st == CORDON_SESSION_ERROR)
                return cordon_set_error(&f->ctx.err, CORDON_USAGE, ESRCH,
                                        "the session is %s: no file operations in it",
                                        cordon_session_state_to_string(st));
        return fs_plan(f, s->policy, s->home, s->cwd, s->env.v);
}

/* The call's answer: its return value, and on failure its error and, when the policy refused,
 * the refusal. */
static int fs_end(fs_call *f, int r, cordon_fs_refusal *refusal, cordon_error *err) {
        fs_call_done(f);
        if (r >= 0)
                return 0;
        if (f->ctx.err.code == CORDON_OK)
                (void) cordon_set_error(&f->ctx.err, CORDON_LAUNCH_FAILED, -r, "%s",
                                        strerror(-r));
        if (refusal && f->ctx.refusal.action && f->ctx.err.code == CORDON_POLICY_UNENFORCEABLE)
                *refusal = f->ctx.refusal;
        if (err)
                *err = f->ctx.err;
        return r;
}

static int no_result(cordon_error *err) {
        return cordon_set_error(err, CORDON_USAGE, EINVAL, "no result to fill");
}

/* ---- the policy's --------------------------------------------------------------------------- */

int cordon_fs_read(const cordon_policy *policy, const char *cwd, const char *path,
                   uint64_t offset, uint64_t length, cordon_fs_data *ret,
                   cordon_fs_refusal *refusal, cordon_error *err) {
        refusal_clear(refusal);
        if (!ret)
                return no_result(err);
        *ret = (cordon_fs_data) { .data = NULL };
        _cleanup_(fs_call_done) fs_call f = { 0 };
        int r = plan_for_caller(&f, policy, cwd);
        if (r >= 0)
                r = fs_read(&f.ctx, path, offset, length, ret);
        return fs_end(&f, r, refusal, err);
}

int cordon_fs_write(const cordon_policy *policy, const char *cwd, const char *path,
                    const void *data, size_t len, cordon_fs_written *ret,
                    cordon_fs_refusal *refusal, cordon_error *err) {
        refusal_clear(refusal);
        if (!ret)
                return no_result(err);
        *ret = (cordon_fs_written) { .created = false };
        _cleanup_(fs_call_done) fs_call f = { 0 };
        int r = plan_for_caller(&f, policy, cwd);
        if (r >= 0)
                r = fs_write(&f.ctx, path, data, len, ret);
        return fs_end(&f, r, refusal, err);
}

int cordon_fs_edit(const cordon_policy *policy, const char *cwd, const char *path,
                   const char *old_text, size_t old_len, const char *new_text, size_t new_len,
                   cordon_fs_written *ret, cordon_fs_refusal *refusal, cordon_error *err) {
        refusal_clear(refusal);
        if (!ret)
                return no_result(err);
        *ret = (cordon_fs_written) { .created = false };
        _cleanup_(fs_call_done) fs_call f = { 0 };
        int r = plan_for_caller(&f, policy, cwd);
        if (r >= 0)
                r = fs_edit(&f.ctx, path, old_text, old_len, new_text, new_len, ret);
        return fs_end(&f, r, refusal, err);
}

int cordon_fs_stat(const cordon_policy *policy, const char *cwd, const char *path,
                   cordon_fs_entry *ret, cordon_fs_refusal *refusal, cordon_error *err) {
        refusal_clear(refusal);
        if (!ret)
                return no_result(err);
        *ret = (cordon_fs_entry) { .name = NULL };
        _cleanup_(fs_call_done) fs_call f = { 0 };
        int r = plan_for_caller(&f, policy, cwd);
        if (r >= 0)
                r = fs_stat(&f.ctx, path, ret);
        return fs_end(&f, r, refusal, err);
}

int cordon_fs_list(const cordon_policy *policy, const char *cwd, const char *path,
                   cordon_fs_entry **ret, size_t *ret_n, bool *ret_truncated,
                   cordon_fs_refusal *refusal, cordon_error *err) {
        refusal_clear(refusal);
        if (!ret || !ret_n || !ret_truncated)
                return no_result(err);
        *ret = NULL;
        *ret_n = 0;
        *ret_truncated = false;
        _cleanup_(fs_call_done) fs_call f = { 0 };
        int r = plan_for_caller(&f, policy, cwd);
        if (r >= 0)
                r = fs_list(&f.ctx, path, ret, ret_n, ret_truncated);
        return fs_end(&f, r, refusal, err);
}

/* ---- a session's ---------------------------------------------------------------------------- */

int cordon_session_fs_read(cordon_session *s, const char *path, uint64_t offset,
                           uint64_t length, cordon_fs_data *ret, cordon_fs_refusal *refusal,
                           cordon_error *err) {
        refusal_clear(refusal);
        if (!ret)
                return no_result(err);
        *ret = (cordon_fs_data) { .data = NULL };
        _cleanup_(fs_call_done) fs_call f = { 0 };
        int r = plan_for_session(&f, s);
        if (r >= 0)
                r = fs_read(&f.ctx, path, offset, length, ret);
        return fs_end(&f, r, refusal, err);
}

int cordon_session_fs_write(cordon_session *s, const char *path, const void *data, size_t len,
                            cordon_fs_written *ret, cordon_fs_refusal *refusal,
                            cordon_error *err) {
        refusal_clear(refusal);
        if (!ret)
                return no_result(err);
        *ret = (cordon_fs_written) { .created = false };
        _cleanup_(fs_call_done) fs_call f = { 0 };
        int r = plan_for_session(&f, s);
        if (r >= 0)
                r = fs_write(&f.ctx, path, data, len, ret);
        return fs_end(&f, r, refusal, err);
}

int cordon_session_fs_edit(cordon_session *s, const char *path, const char *old_text,
                           size_t old_len, const char *new_text, size_t new_len,
                           cordon_fs_written *ret, cordon_fs_refusal *refusal,
                           cordon_error *err) {
        refusal_clear(refusal);
        if (!ret)
                return no_result(err);
        *ret = (cordon_fs_written) { .created = false };
        _cleanup_(fs_call_done) fs_call f = { 0 };
        int r = plan_for_session(&f, s);
        if (r >= 0)
                r = fs_edit(&f.ctx, path, old_text, old_len, new_text, new_len, ret);
        return fs_end(&f, r, refusal, err);
}

int cordon_session_fs_stat(cordon_session *s, const char *path, cordon_fs_entry *ret,
                           cordon_fs_refusal *refusal, cordon_error *err) {
        refusal_clear(refusal);
        if (!ret)
                return no_result(err);
        *ret = (cordon_fs_entry) { .name = NULL };
        _cleanup_(fs_call_done) fs_call f = { 0 };
        int r = plan_for_session(&f, s);
        if (r >= 0)
                r = fs_stat(&f.ctx, path, ret);
        return fs_end(&f, r, refusal, err);
}

int cordon_session_fs_list(cordon_session *s, const char *path, cordon_fs_entry **ret,
                           size_t *ret_n, bool *ret_truncated, cordon_fs_refusal *refusal,
                           cordon_error *err) {
        refusal_clear(refusal);
        if (!ret || !ret_n || !ret_truncated)
                return no_result(err);
        *ret = NULL;
        *ret_n = 0;
        *ret_truncated = false;
        _cleanup_(fs_call_done) fs_call f = { 0 };
        int r = plan_for_session(&f, s);
        if (r >= 0)
                r = fs_list(&f.ctx, path, ret, ret_n, ret_truncated);
        return fs_end(&f, r, refusal, err);
}
