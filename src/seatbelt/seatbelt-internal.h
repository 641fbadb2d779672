/* SPDX-License-Identifier: Apache-2.0 */
/* Shared between the files of the Seatbelt generator (seatbelt.c: the profile and its
 * non-file sections; seatbelt-fs.c: the file and exec sections). */
#pragma once

#include "seatbelt/sandbox-log.h"
#include "seatbelt/sbpl-escape.h"
#include "seatbelt/seatbelt.h"

typedef struct sb_gen {
        const plan *p;
        const cordon_policy *policy;
        seatbelt_params params; /* resolve filled in */
        sbuf out;
        const char *session; /* what every deny's message ends with (sandbox-log.h) */
        char *bad;      /* the first string a profile could not hold (for the message) */
        unsigned n_filters; /* in the rule being written */
        unsigned depth;     /* filters open inside it (require-all ...), for indentation */
} sb_gen;

/* How a path becomes a filter. Allows match the exact string; denies go through the case-blind
 * regex translator (sbpl_glob_regex): where the volume ignores case, any spelling of a denied
 * path names the same file and must be caught, while an allow that misses a spelling only
 * refuses something. */
typedef enum sb_filter {
        SB_ALLOW_SUBPATH,     /* (subpath "P"): P and beneath, exactly as spelled */
        SB_ALLOW_LITERAL,     /* (literal "P"): P only */
        SB_DENY_SUBPATH,      /* (regex ...): path P and beneath, any case; every byte literal */
        SB_DENY_EXACT,        /* (regex ...): path P only, any case; every byte literal */
        SB_DENY_GLOB_SUBPATH, /* (regex ...): what path glob P matches, and beneath, any case */
        SB_DENY_GLOB_EXACT,   /* (regex ...): what path glob P matches, any case */
        SB_DENY_NAME,         /* (regex ...): any path whose last component matches glob P */
} sb_filter;

/* A comment line (static text only: nothing from a policy or the filesystem goes into one); ""
 * gives a blank line. */
void sb_comment(sb_gen *g, const char *text);
/* Allow rules take no tag. */
#define SB_UNTAGGED ((seatbelt_rule) -1)
/* "(action-and-operations" ... ")". A rule without filters would apply to every path, so
 * sb_rule_end() fails the profile if none was added; callers skip empty sets. A deny carries
 * `(with message "cordon-deny RULE SESSION")`, how its refusals are read back from the system
 * log (sandbox-log.h); a deny without a rule fails the profile. */
void sb_rule_begin(sb_gen *g, const char *head, seatbelt_rule rule);
/* A rule without filters, on purpose: "(deny signal (with message ...))". */
void sb_rule_everywhere(sb_gen *g, const char *head, seatbelt_rule rule);
void sb_filter_add(sb_gen *g, sb_filter kind, const char *path);
/* A raw filter expression built by the caller from sb_* pieces (require-all ...). */
void sb_filter_open(sb_gen *g, const char *head);
void sb_filter_close(sb_gen *g);
void sb_rule_end(sb_gen *g);
/* One rule with one filter per string of `items` (sorted); nothing when `items` is empty. */
void sb_rule(sb_gen *g, const char *head, seatbelt_rule rule, sb_filter kind, const strv *items);

/* Pushes `path` and its resolved spelling to `out`, each once; a `glob` keeps its pattern and
 * only its leading directory is resolved. -ENOMEM only: a path without a resolved form is kept
 * as written. The plan's deny sets are globs by the planner's convention (docs/policy.md: an entry
 * with '*' or '?'; a '[' or '\' of a real name is defused to '?'); binds and the other paths
 * here are names. */
int sb_push_forms(sb_gen *g, strv *out, const char *path, bool glob);
/* The spelling on disk of absolute `path`: each component as the directory lists it, found
 * ignoring ASCII case when not spelled exactly and the volume folds case (`folds`: the caller
 * says so, as tests simulating macOS do; otherwise only where the spelling as written names an
 * entry); from the first component not found, the rest as written. Allows match the exact
 * string, and where the volume ignores case a writable root the policy spells `~/Project` is
 * `~/project` to the kernel. Returns 0 or -ENOMEM. */
int sb_disk_case(const char *path, bool folds, char **ret);
/* Adds the on-disk spelling of each of `forms` (allow sets only: denies ignore case anyway)
 * and sorts; a failure fails the profile. */
void sb_add_disk_case(sb_gen *g, strv *forms);
/* Sorts a strv in place (byte order) for deterministic output. */
void sb_sort(strv *s);
bool sb_is_glob(const char *path);

/* seatbelt-fs.c: reads, writes, renames, creation-time names, exec. */
int sb_section_files(sb_gen *g);
int sb_section_exec(sb_gen *g);
