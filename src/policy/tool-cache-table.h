/* SPDX-License-Identifier: Apache-2.0 */
/* The built-in tool caches (docs/design/tool-caches.md): which tools cordon points into the
 * sandbox-owned cache root, by which variables. Part of the policy language: toolCaches.extra may
 * not reuse a built-in tool's name or variable (policy-caches.c), and `cordon cache clear TOOL`
 * takes these names. The planner turns the table into environment variables
 * (src/plan/tool-caches-plan.c). */
#pragma once

#include <stdbool.h>

typedef struct tool_cache_builtin {
        const char *tool;   /* the tool's name: toolCaches, `cordon cache clear TOOL` */
        const char *env;    /* the variable the tool honours */
        const char *subdir; /* below the cache root */
        const char *prefix; /* the value is prefix + path (NULL: the path alone) */
        bool append;        /* appended to an inherited value, space-separated (MAVEN_OPTS) */
} tool_cache_builtin;

/* Terminated by an entry with tool == NULL. A tool may have several variables. */
extern const tool_cache_builtin policy_builtin_tool_caches[];

bool tool_cache_is_builtin_tool(const char *name);
bool tool_cache_is_builtin_env(const char *env);
