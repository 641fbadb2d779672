#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The layers' include views hold: a file of a layer cannot include a header of a layer it may not
use (docs/design/architecture.md, "Layers").

Each case compiles a one-line file with the exact flags the build gives a source of that layer's
library (from the build tree's compile_commands.json, -o/-MD/-MF/-MQ dropped, -fsyntax-only added)
and checks the outcome: a forbidden include must fail *because the header is not found*, an
allowed one must compile. If the views ever stop restricting (a global -iquote of src/ comes back,
a symlink too many in src/layers/), the forbidden cases compile and this test fails.

Usage: check-includes.py BUILD_ROOT"""
import json
import os
import shlex
import subprocess
import sys
import tempfile

# (layer, line, expected): "ok", or "missing" (the header must not be found).
CASES = [
    ("util", '#include "policy/policy.h"', "missing"),  # util is a leaf
    ("util", '#include "util/util.h"', "ok"),
    ("report", '#include "linux/sandbox.h"', "missing"),
    ("policy", '#include "net/egress.h"', "missing"),  # policy knows no proxy
    ("policy", '#include "plan/plan.h"', "missing"),  # nor the plan
    ("policy", '#include "util/host.h"', "ok"),
    ("plan", '#include "linux/cgroup.h"', "missing"),  # the planner knows no backend
    ("plan", '#include "net/proxy.h"', "missing"),
    ("plan", '#include "settings/settings.h"', "missing"),
    ("plan", '#include "policy/policy.h"', "ok"),
    # Not linux/landlock.h or linux/seccomp.h: a quoted include falls back to the system
    # directories, where the kernel's headers of those names are (check-layers.py refuses them).
    ("seatbelt", '#include "linux/sandbox.h"', "missing"),
    ("seatbelt", '#include "run/events.h"', "ok"),  # macOS ends a run through the run core
    ("seatbelt", '#include "settings/settings.h"', "ok"),  # macOS cordon_run: managed settings
    ("run", '#include "plan/plan.h"', "missing"),    # the run core knows no plan or backend
    ("run", '#include "linux/launch.h"', "missing"),
    ("net", '#include "linux/process.h"', "missing"),  # the proxy does not start processes
    ("net", '#include "plan/plan.h"', "missing"),
    ("net", '#include "report/report.h"', "ok"),
    # The launch applies the managed settings (src/settings/settings-managed.c).
    ("linux", '#include "settings/settings.h"', "ok"),
    ("linux", '#include "explain/explain.h"', "missing"),
    ("linux", '#include "seatbelt/seatbelt.h"', "missing"),
    ("linux", '#include "net/proxy.h"', "ok"),
    ("settings", '#include "linux/probe.h"', "missing"),  # settings is platform-neutral
    ("explain", '#include "run/events.h"', "missing"),
    ("cli", '#include "linux/sandbox.h"', "missing"),
    ("cli", '#include "cordon/cordon.h"', "ok"),
    ("cli", '#include "mcp/mcp.h"', "ok"),
    # The MCP server is a consumer of the public API: no backend, no policy internals.
    ("mcp", '#include "linux/sandbox.h"', "missing"),
    ("mcp", '#include "policy/policy.h"', "missing"),
    ("mcp", '#include "cli/args.h"', "missing"),
    ("mcp", '#include "util/utf8.h"', "ok"),
    ("daemon", '#include "explain/explain.h"', "missing"),
    ("daemon", '#include "linux/sandbox.h"', "ok"),
    # Why the views are -iquote and never -I: the kernel's header, not src/linux/seccomp.h.
    ("linux", "#include <linux/seccomp.h>\n#ifndef _LINUX_SECCOMP_H\n"
              "#error <linux/seccomp.h> is not the kernel header\n#endif", "ok"),
]

# The static library whose sources carry a layer's flags (meson.build, src/cli/, src/daemon/,
# src/mcp/).
LIBRARY = {"cli": "libcordon-cli.a.p/", "daemon": "libcordond.a.p/", "mcp": "libcordon-mcp.a.p/"}


def layer_command(db, layer):
    """The compiler and flags of one source of the layer's library, without its input/outputs."""
    lib = LIBRARY.get(layer, "libcordon-%s.a.p/" % layer)
    for e in db:
        if lib in e["output"] and e["file"].endswith(".c"):
            break
    else:
        sys.exit("no source of library %s in compile_commands.json" % lib)
    args = shlex.split(e["command"])
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in ("-o", "-MQ", "-MF", "-c"):
            skip = True
        elif a != "-MD" and a != e["file"]:
            out.append(a)
    return e["directory"], out


def main():
    build = sys.argv[1]
    with open(os.path.join(build, "compile_commands.json")) as f:
        db = json.load(f)
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, (layer, line, expected) in enumerate(CASES):
            cwd, cmd = layer_command(db, layer)
            src = os.path.join(tmp, "probe-%d-%s.c" % (i, layer))
            with open(src, "w") as f:
                f.write(line + "\nint layer_probe(void);\n")
            r = subprocess.run(cmd + ["-fsyntax-only", src], cwd=cwd, capture_output=True,
                               text=True)
            header = line.split('"')[1] if '"' in line else None
            if expected == "ok":
                good = r.returncode == 0
            else:
                good = (r.returncode != 0 and "No such file or directory" in r.stderr and
                        header in r.stderr)
            print("%s %-8s %-40s expected %s, compiler exit %d" %
                  ("ok  " if good else "FAIL", layer, line.split("\n")[0], expected, r.returncode))
            if not good:
                failed += 1
                sys.stdout.write(r.stderr)
    print("%d of %d cases failed" % (failed, len(CASES)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
