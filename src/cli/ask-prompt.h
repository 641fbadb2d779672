/* SPDX-License-Identifier: Apache-2.0 */
/* The prompts on the controlling terminal (ask-prompt.c): the egress ask mode's, and the
 * command policy's approval. */
#pragma once

#include "cordon/cordon.h"

typedef struct cli_ask {
        int tty; /* /dev/tty, or -1 */
} cli_ask;

/* Opens the controlling terminal; -errno when the process has none (then there is no prompt). */
int cli_ask_open(cli_ask *a);
void cli_ask_close(cli_ask *a);
/* A cordon_egress_ask_fn; userdata is the cli_ask. */
cordon_egress_answer cli_ask_prompt(void *userdata, const cordon_egress_question *q);
/* A cordon_command_ask_fn; userdata is the cli_ask. */
cordon_command_answer cli_ask_command(void *userdata, const cordon_command_question *q);
