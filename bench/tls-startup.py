#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The start-up cost of TLS inspection (BENCHMARKS.md, "TLS inspection"): whole-process wall
time of `cordon run [--backend B] [--policy RULES] -- /bin/true`, interleaved, the order rotated
each round, medians and p90 per configuration:

  none       no request rules: no CA, no bundle
  rules      one ruled host: the session CA, the merged bundle and (when the host has a JDK's
             /etc/ssl/certs/java/cacerts) the Java truststore
  rules-nojdk  the same with /etc/ssl/certs/java hidden by an empty tmpfs in a private mount
             namespace (`unshare -m`; root only): the bundle without the truststore, so the
             difference to `rules` is the truststore's cost

  bench/tls-startup.py --cordon build/cordon [--rounds 40] [--backend native|landlock]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def run(argv):
    t = time.perf_counter_ns()
    r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    ms = (time.perf_counter_ns() - t) / 1e6
    if r.returncode != 0:
        sys.exit(f"{' '.join(argv)}: status {r.returncode}: {r.stderr.decode()[-400:]}")
    return ms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cordon", required=True)
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--backend", default="native")
    a = ap.parse_args()
    cordon = os.path.abspath(a.cordon)
    d = tempfile.mkdtemp(prefix="cordon-tls-startup-")
    rules = os.path.join(d, "rules.json")
    with open(rules, "w") as f:
        json.dump({"egressRules": [{"host": "api.example.test", "methods": ["GET"],
                                    "action": "allow"}]}, f)
    base = [cordon, "run", "--backend", a.backend]
    configs = {"none": base + ["--", "/bin/true"],
               "rules": base + ["--policy", rules, "--", "/bin/true"]}
    if os.geteuid() == 0 and os.path.isdir("/etc/ssl/certs/java"):
        # Every configuration through the same wrapper, so that its cost cancels out.
        def wrap(argv, hide):
            pre = "mount -t tmpfs none /etc/ssl/certs/java && " if hide else ""
            return ["unshare", "-m", "sh", "-c", pre + 'exec "$@"', "sh"] + argv
        configs = {"none": wrap(configs["none"], False),
                   "rules": wrap(configs["rules"], False),
                   "rules-nojdk": wrap(configs["rules"], True)}
    names = list(configs)
    for n in names:  # warm-up, untimed
        run(configs[n])
    times = {n: [] for n in names}
    for i in range(a.rounds):
        order = names[i % len(names):] + names[:i % len(names)]
        for n in order:
            times[n].append(run(configs[n]))
    os.unlink(rules)
    os.rmdir(d)
    print(f"backend {a.backend}, {a.rounds} rounds, load average {os.getloadavg()[0]:.1f}")
    print("| configuration | median | p90 |")
    print("|---|---|---|")
    for n in names:
        v = sorted(times[n])
        print(f"| {n} | {statistics.median(v):.1f} ms | {v[int(len(v) * 0.9) - 1]:.1f} ms |")


if __name__ == "__main__":
    main()
