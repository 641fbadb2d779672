# shellcheck shell=sh
# SPDX-License-Identifier: Apache-2.0
# Sourced by suite.sh: what the default policy bounds without being asked (the process ceiling,
# the private tmpfs sizes), and the quiet answer to glibc's name-service lookups. Each check runs
# as root and as the unprivileged user, on the native and the landlock backend (run.sh).

# A field of the last run's --json summary ($1: a Python expression over `d`).
json_field() {
        /usr/bin/python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$JSON" "$1" 2>/dev/null
}

# How the default ceiling is enforced here: the probe's answer (it tries a memory+pids cgroup;
# the default needs only pids, which every host with both controllers offers as well).
t_default_limits() {
        mech=$(limits_mechanism)
        ev=$IT_TMP/log/default-pids.jsonl
        if [ "$mech" = cgroup ]; then
                sb --events "$ev" -- "$ATTACK" forkbomb 2048
                judge_attack "defaults: a fork bomb stops at the default ceiling (cgroup pids.max)"
                if grep -q '"action":"resource-limit","target":"pids"' "$ev"; then
                        ok "defaults: the ceiling reached is reported (resource-limit pids)"
                else
                        not_ok "defaults: the ceiling reached is reported" "$(tail -n 3 "$ev")"
                fi
        elif [ "$(id -u)" -ne 0 ] && [ "$BACKEND" != landlock ]; then
                sb -- "$ATTACK" forkbomb 2048
                judge_attack "defaults: a fork bomb stops at the default ceiling (RLIMIT_NPROC in the sandbox's user namespace)"
        else
                # Not run: unbounded, it would fork 8192 processes on the host.
                known_gap "defaults: a fork bomb stops at the default ceiling" \
                        "no cgroup here, and RLIMIT_NPROC binds neither root nor, without a user namespace, only the command (SECURITY.md)"
        fi
        # A parallel build under the default: make -j8 over 48 compiler jobs.
        mk=$WS/pbuild
        mkdir -p "$mk"
        : > "$mk/Makefile"
        for i in $(seq 1 48); do
                printf 'int f%s(void) { return %s; }\n' "$i" "$i" > "$mk/f$i.c"
                printf 'f%s.o: f%s.c\n\tcc -O1 -c f%s.c -o f%s.o\n' "$i" "$i" "$i" "$i" >> "$mk/Makefile"
        done
        printf 'all:' > "$mk/Makefile.all"
        for i in $(seq 1 48); do printf ' f%s.o' "$i" >> "$mk/Makefile.all"; done
        printf '\n' >> "$mk/Makefile.all"
        cat "$mk/Makefile" >> "$mk/Makefile.all"
        SB_DIR=$mk sb -- make -s -j8 -f Makefile.all all
        if [ "$LAST_STATUS" -eq 0 ] && [ -f "$mk/f48.o" ]; then
                ok "defaults: make -j8 of 48 compiles works under the default ceiling"
        else
                not_ok "defaults: make -j8 of 48 compiles works under the default ceiling" \
                        "status $LAST_STATUS: $(tail -n 3 "$LAST_ERR")"
        fi
        rm -rf "$mk"
        if [ "$BACKEND" = landlock ]; then
                echo "# defaults: the landlock backend has no private /tmp or /dev/shm to bound"
                return 0
        fi
        sb -- sh -c 'test "$(df -k /tmp | awk "NR == 2 { print \$2 }")" -le 2097152 &&
                test "$(df -k /dev/shm | awk "NR == 2 { print \$2 }")" -le 262144'
        if [ "$LAST_STATUS" -eq 0 ]; then ok "defaults: /tmp and /dev/shm are bounded (2G, 256M at most)"
        else not_ok "defaults: /tmp and /dev/shm are bounded" "status $LAST_STATUS"; fi
        ev=$IT_TMP/log/tmp-full.jsonl
        sb --tmp-size 16M --events "$ev" -- sh -c \
                'dd if=/dev/zero of=/tmp/fill bs=1M count=64 2>/dev/shm/dd.err; grep -q "No space left" /dev/shm/dd.err'
        if [ "$LAST_STATUS" -eq 0 ] &&
                grep -q '"action":"resource-limit","target":"/tmp".*limits.tmpSize (16777216 bytes)' "$ev"; then
                ok "defaults: dd into a 16M /tmp gets ENOSPC and the full tmpfs is reported"
        else
                not_ok "defaults: dd into a 16M /tmp gets ENOSPC and is reported" \
                        "status $LAST_STATUS, events: $(grep violation "$ev" | head -n 2)"
        fi
        # Charged where a cgroup exists: /tmp's pages count against limits.memory, so a /tmp
        # larger than the memory limit still cannot hold more than it.
        if [ "$mech" = cgroup ]; then
                ev=$IT_TMP/log/tmp-charged.jsonl
                sb --memory 64M --tmp-size 512M --events "$ev" -- \
                        dd if=/dev/zero of=/tmp/fill bs=1M count=256
                if [ "$LAST_STATUS" -eq 125 ] && grep -q '"type":"killed".*"reason":"oom"' "$ev"; then
                        ok "defaults: /tmp's pages are charged to the run's memory cgroup (killed oom)"
                else
                        not_ok "defaults: /tmp's pages are charged to the run's memory cgroup" \
                                "status $LAST_STATUS, last event $(tail -n 1 "$ev")"
                fi
        fi
        sb --shm-size 4M -- sh -c 'head -c 8388608 /dev/zero > /dev/shm/fill 2>/dev/null; test "$(stat -c %s /dev/shm/fill)" -le 4194304'
        if [ "$LAST_STATUS" -eq 0 ]; then ok "defaults: --shm-size bounds /dev/shm"
        else not_ok "defaults: --shm-size bounds /dev/shm" "status $LAST_STATUS"; fi
}

# glibc's NSS lookups (nscd, systemd-userdb) are neither printed nor counted; a real connect to
# a host Unix socket still is.
t_nss_quiet() {
        JSON=$IT_TMP/log/nss.json
        # shellcheck disable=SC2016
        sb --json="$JSON" -- sh -c 'ls -l / >/dev/null && id >/dev/null && whoami >/dev/null &&
                getent passwd root >/dev/null &&
                /usr/bin/python3 -c "import getpass; getpass.getuser()" &&
                { ! command -v node >/dev/null || node -e "require(\"os\").userInfo()"; }'
        if [ "$LAST_STATUS" -eq 0 ] && [ "$(json_field 'len(d["violations"])')" = 0 ] &&
                [ "$(json_field 'd["status"]')" = ok ]; then
                ok "nss: ls -l, id, whoami, getent, getpass, os.userInfo(): zero refusals in the summary"
        else
                not_ok "nss: ls -l, id, whoami, getent, getpass, os.userInfo(): zero refusals" \
                        "status $LAST_STATUS, $(cat "$JSON" 2>/dev/null | head -c 400)"
        fi
        # On a terminal (where denial lines are printed): nothing but the command's output.
        if ! command -v script >/dev/null; then
                not_ok "nss: no 'cordon: denied' line on a terminal" "script(1) is missing"
                return 0
        fi
        run_in "$WS" script -qec "$CORDON run -- sh -c 'ls -l / >/dev/null; id >/dev/null'" /dev/null
        if [ "$LAST_STATUS" -eq 0 ] && ! grep -q 'cordon: denied' "$LAST_OUT" "$LAST_ERR"; then
                ok "nss: no 'cordon: denied' line for ls -l and id on a terminal"
        else
                not_ok "nss: no 'cordon: denied' line for ls -l and id on a terminal" \
                        "$(grep -h 'cordon: denied' "$LAST_OUT" "$LAST_ERR" | head -n 2)"
        fi
        # The attacker's twin: the same socket(AF_UNIX) + connect aimed at a host service.
        sock=$OUTSIDE/nss-twin.sock
        JSON=$IT_TMP/log/nss-twin.json
        run_in "$WS" "$ATTACK" host-listen "unix:$sock" -- \
                "$CORDON" run --json="$JSON" -- "$ATTACK" unix-connect "$sock"
        judge_attack "nss: a connect to a host Unix socket is still refused"
        if [ "$(json_field '[v["target"] for v in d["violations"] if v["action"] == "network-outbound"]')" = "['$sock']" ]; then
                ok "nss: ... and reported with the socket's path"
        else
                not_ok "nss: the refused host socket is reported" "$(head -c 400 "$JSON")"
        fi
        rm -f "$sock"
        # Exactly the NSS paths are quiet: a socket the command binds at nscd's path's twin in
        # the workspace (not /var/run/nscd/socket) is refused and reported as any other.
        JSON=$IT_TMP/log/nss-path.json
        run_in "$WS" "$ATTACK" host-listen "unix:$WS/socket" -- \
                "$CORDON" run --json="$JSON" -- "$ATTACK" unix-connect "$WS/socket"
        judge_attack "nss: a host socket named like nscd's elsewhere is refused"
        if [ "$(json_field 'len(d["violations"])')" = 1 ]; then
                ok "nss: ... and reported"
        else
                not_ok "nss: a host socket named like nscd's elsewhere is reported" "$(head -c 400 "$JSON")"
        fi
        rm -f "$WS/socket"
        # Now that every run may create AF_UNIX sockets: on the landlock backend (the host's
        # network namespace) an abstract name the command binds would be one host clients look
        # up (X11, D-Bus); refused and reported. Native runs bind in their own namespace.
        if [ "$BACKEND" = landlock ]; then
                JSON=$IT_TMP/log/abstract-bind.json
                sb --json="$JSON" -- /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.bind("\0cordon-it-squat"); s.listen(1)
except PermissionError:
    sys.exit(0)
print("bound an abstract name the host shares", file=sys.stderr); sys.exit(1)'
                judge_attack "landlock: no abstract Unix socket name bound in the host's namespace"
                if [ "$(json_field '[v["syscall"] for v in d["violations"]]')" = "['bind']" ]; then
                        ok "landlock: ... and the refused bind is reported"
                else
                        not_ok "landlock: the refused abstract bind is reported" "$(head -c 400 "$JSON")"
                fi
        fi
}
