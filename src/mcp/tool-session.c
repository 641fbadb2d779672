/* SPDX-License-Identifier: Apache-2.0 */
/* The session tools: warm sessions of cordon_session_launch() kept by the server, by id
 * (session_create, session_list, session_destroy), and the slot each call holds while it uses
 * one, so that no session is destroyed under a call that is using its handle. */
#include "mcp/mcp-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/fork-gate.h"

static mcp_slot *slot_find(mcp_server *srv, const char *id) {
        for (size_t i = 0; i < MCP_SESSIONS_MAX; i++)
                if (srv->slots[i].session && !srv->slots[i].doomed &&
                    strcmp(srv->slots[i].id, id) == 0)
                        return &srv->slots[i];
        return NULL;
}

mcp_slot *mcp_slot_acquire(mcp_server *srv, const char *id, json_t **ret_result) {
        pthread_mutex_lock(&srv->lock);
        mcp_slot *slot = slot_find(srv, id);
        if (slot)
                slot->busy++;
        pthread_mutex_unlock(&srv->lock);
        if (!slot)
                *ret_result = mcp_result_fail("no session '%.127s': session_list shows the "
                                              "sessions, session_create makes one", id);
        return slot;
}

void mcp_slot_release(mcp_server *srv, mcp_slot *slot) {
        pthread_mutex_lock(&srv->lock);
        slot->busy--;
        pthread_cond_broadcast(&srv->changed);
        pthread_mutex_unlock(&srv->lock);
}

/* Takes a free slot for a session being created (busy, so that nothing else takes it), or
 * NULL when all are in use. */
static mcp_slot *slot_reserve(mcp_server *srv) {
        mcp_slot *slot = NULL;
        pthread_mutex_lock(&srv->lock);
        for (size_t i = 0; !slot && i < MCP_SESSIONS_MAX; i++)
                if (!srv->slots[i].session && !srv->slots[i].busy)
                        slot = &srv->slots[i];
        if (slot)
                slot->busy = 1;
        pthread_mutex_unlock(&srv->lock);
        return slot;
}

static json_t *create_done(mcp_server *srv, mcp_slot *slot, cordon_session *s, char *cwd) {
        pthread_mutex_lock(&srv->lock);
        bool taken = slot_find(srv, cordon_session_id(s)) != NULL;
        if (!taken) {
                slot->session = s;
                (void) snprintf(slot->id, sizeof(slot->id), "%s", cordon_session_id(s));
                slot->cwd = cwd;
                slot->execs = 0;
                slot->doomed = false;
        }
        slot->busy = 0;
        pthread_cond_broadcast(&srv->changed);
        pthread_mutex_unlock(&srv->lock);
        if (taken) {
                /* The policy sets sessionId: every session would have the same id. */
                json_t *r = mcp_result_fail("session '%.127s' exists already: the policy sets "
                                            "sessionId, so only one session can be kept",
                                            cordon_session_id(s));
                cordon_session_destroy(s);
                free(cwd);
                return r;
        }
        char text[256];
        (void) snprintf(text, sizeof(text), "session %s ready", slot->id);
        return mcp_result(json_pack("{s:s, s:s, s:o}", "sessionId", slot->id, "state",
                                    cordon_session_state_to_string(cordon_session_get_state(s)),
                                    "cwd", mcp_json_text(cwd)),
                          text, false);
}

json_t *mcp_tool_session_create(mcp_call *c) {
        /* A session is built by the native backend, or by the microvm one (its VM booted once,
         * in the native sandbox, under the accelerator the server's policy allows: without
         * the TCG opt-in a host whose KVM cannot boot the guest refuses the launch). A server
         * told to run its commands on another backend (or none) must not have sessions that
         * quietly run otherwise. */
        cordon_backend b = c->srv->cfg->backend;
        if (b != CORDON_BACKEND_AUTO && b != CORDON_BACKEND_NATIVE && b != CORDON_BACKEND_MICROVM)
                return mcp_result_fail("sessions run on the native or microvm backend only, and "
                                       "this server runs its commands on the %s backend: use "
                                       "shell", cordon_backend_to_string(b));
        const char *cwd_arg = json_string_value(json_object_get(c->args, "cwd"));
        char *cwd = mcp_abs_path(c->srv, cwd_arg ? cwd_arg : c->srv->cfg->cwd);
        if (!cwd)
                return NULL;
        mcp_slot *slot = slot_reserve(c->srv);
        if (!slot) {
                free(cwd);
                return mcp_result_fail("%u sessions exist already, the most one server keeps: "
                                       "destroy one first (session_destroy)", MCP_SESSIONS_MAX);
        }
        cordon_session_options so;
        cordon_session_options_init(&so);
        so.backend = b;
        so.cwd = cwd;
        cordon_session *s = NULL;
        cordon_error err = { 0 };
        if (cordon_session_launch(c->srv->cfg->policy, &so, &s, &err) < 0) {
                pthread_mutex_lock(&c->srv->lock);
                slot->busy = 0;
                pthread_mutex_unlock(&c->srv->lock);
                free(cwd);
                return mcp_result_cordon(&err, NULL, NULL);
        }
        return create_done(c->srv, slot, s, cwd);
}

/* Marks the slot doomed, kills what runs in it, waits for every call to let go; returns the
 * session, which the caller destroys outside the lock, and the slot's cwd, which it frees.
 * The caller is out of the fork gate from before it takes the lock to after it lets go: a
 * thread waiting here keeps no fork waiting, and resumes holding no lock. */
static cordon_session *slot_take(mcp_server *srv, mcp_slot *slot, char **ret_cwd) {
        slot->doomed = true;
        for (mcp_call *k = srv->calls; k; k = k->next)
                if (k->slot == slot) {
                        k->destroyed = true;
                        if (k->proc)
                                (void) cordon_process_kill(k->proc, NULL);
                }
        while (slot->busy > 0)
                pthread_cond_wait(&srv->changed, &srv->lock);
        cordon_session *s = slot->session;
        slot->session = NULL;
        *ret_cwd = slot->cwd;
        slot->cwd = NULL;
        slot->doomed = false;
        return s;
}

json_t *mcp_tool_session_destroy(mcp_call *c) {
        const char *id = json_string_value(json_object_get(c->args, "sessionId"));
        char *cwd = NULL;
        unsigned gate = fork_gate_pause();
        pthread_mutex_lock(&c->srv->lock);
        mcp_slot *slot = slot_find(c->srv, id);
        cordon_session *s = slot ? slot_take(c->srv, slot, &cwd) : NULL;
        pthread_mutex_unlock(&c->srv->lock);
        fork_gate_resume(gate);
        free(cwd);
        if (!s)
                return mcp_result_fail("no session '%.127s': session_list shows the sessions", id);
        cordon_session_destroy(s);
        char text[256];
        (void) snprintf(text, sizeof(text), "session %s destroyed", id);
        return mcp_result(json_pack("{s:s, s:s}", "sessionId", id, "state", "destroyed"), text,
                          false);
}

json_t *mcp_tool_session_list(mcp_call *c) {
        json_t *list = json_array();
        char *text = strdup("");
        pthread_mutex_lock(&c->srv->lock);
        for (size_t i = 0; list && text && i < MCP_SESSIONS_MAX; i++) {
                mcp_slot *sl = &c->srv->slots[i];
                if (!sl->session || sl->doomed)
                        continue;
                const char *state = cordon_session_state_to_string(cordon_session_get_state(sl->session));
                (void) json_array_append_new(list, json_pack("{s:s, s:s, s:o, s:I}", "sessionId",
                                                             sl->id, "state", state, "cwd",
                                                             mcp_json_text(sl->cwd),
                                                             "execs", (json_int_t) sl->execs));
                char *more = NULL;
                if (asprintf(&more, "%s%s %s %s\n", text, sl->id, state, sl->cwd) < 0)
                        more = NULL;
                free(text);
                text = more;
        }
        pthread_mutex_unlock(&c->srv->lock);
        json_t *r = text ? mcp_result(json_pack("{s:o}", "sessions", list), text[0] ? text : "no sessions\n", false)
                         : (json_decref(list), NULL);
        free(text);
        return r;
}

void mcp_sessions_end(mcp_server *srv) {
        for (size_t i = 0; i < MCP_SESSIONS_MAX; i++) {
                char *cwd = NULL;
                unsigned gate = fork_gate_pause();
                pthread_mutex_lock(&srv->lock);
                cordon_session *s = srv->slots[i].session
                                            ? slot_take(srv, &srv->slots[i], &cwd) : NULL;
                pthread_mutex_unlock(&srv->lock);
                fork_gate_resume(gate);
                free(cwd);
                cordon_session_destroy(s);
        }
}
