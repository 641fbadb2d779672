/* SPDX-License-Identifier: Apache-2.0 */
/* The egress ask mode's prompt on the controlling terminal (ask-prompt.c). */
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
