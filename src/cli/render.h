/* SPDX-License-Identifier: Apache-2.0 */
/* `cordon policy show` without --json: the library's JSON as indented "key: value" text. */
#pragma once

#include <stdio.h>

/* Writes `json` (a JSON document) to `out` as indented text. Returns 0, or -EINVAL when `json`
 * does not parse, -EIO when writing failed. */
int cli_render_json_text(const char *json, FILE *out);
