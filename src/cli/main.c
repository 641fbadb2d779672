/* SPDX-License-Identifier: Apache-2.0 */
/* cordon: a thin command-line consumer of libcordon. Everything happens in cli_main(). */
#include "cli/commands.h"

int main(int argc, char *argv[]) {
        return cli_main(argc, argv);
}
