#!/bin/sh
# tests/install/check-tree.sh: checks an installed cordon, as root and as the unprivileged
# cordon-test: every file where a distribution puts it, the library's soname, a C program built
# and linked through `pkg-config --cflags --libs cordon`, and the installed cordon confining a
# command. Used on a DESTDIR staging install (tests/install/install.sh, meson tests install-root
# and install-user) and on the installed Debian packages (tests/package/run.sh, with DESTDIR "").
#
#   check-tree.sh root|user DESTDIR PREFIX LIBDIR SYSCONFDIR ZSHDIR BASHDIR VERSION SCRATCH
#
# LIBDIR, SYSCONFDIR, ZSHDIR and BASHDIR are absolute (as installed, without DESTDIR); SCRATCH
# is a directory under /var/tmp (the sandbox has a private /tmp) that this script may fill.
# Prints "ok"/"not ok" lines and "N passed, N failed"; exits 1 on any failure.
set -u
who=$1 destdir=$2 prefix=$3 libdir=$4 sysconfdir=$5 zshdir=$6 bashdir=$7 version=$8 scratch=$9
here=$(cd "$(dirname "$0")" && pwd)
d=$destdir
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok - $who: $*"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $who: $*"; }
check() { # check DESCRIPTION CMD...: ok when CMD succeeds
        what=$1
        shift
        if "$@" > "$scratch/out" 2>&1; then ok "$what"; else
                sed 's/^/#   /' "$scratch/out" | head -n 20
                not_ok "$what"
        fi
}

# ---- the files (the same for root and the user, checked once) -------------------------------
if [ "$who" = root ]; then
        for f in "$prefix/bin/cordon" "$prefix/bin/cordond"; do
                check "$f is an executable" test -x "$d$f"
        done
        # The man pages as meson installs them, or compressed as a Debian package ships them.
        for f in "$prefix/share/man/man1/cordon.1" "$prefix/share/man/man8/cordond.8" \
                "$prefix/share/man/man5/cordon-policy.5" "$prefix/share/man/man5/cordon-settings.5"; do
                check "$f is installed and formats without warnings" sh -c \
                        'p=$1; [ -f "$p" ] || p=$1.gz; [ -f "$p" ] &&
                         [ -z "$(LC_ALL=C.UTF-8 man --warnings -l "$p" 2>&1 >/dev/null)" ]' sh "$d$f"
        done
        for f in "$prefix/include/cordon/cordon.h" "$libdir/pkgconfig/cordon.pc" \
                "$bashdir/cordon" "$zshdir/_cordon" \
                "$prefix/share/fish/vendor_completions.d/cordon.fish" \
                "$prefix/lib/systemd/user/cordond.service" "$prefix/lib/systemd/user/cordond.socket" \
                "$sysconfdir/apparmor.d/cordon"; do
                check "$f is installed" test -f "$d$f"
        done
        # The soname: libcordon.so.0 -> libcordon.so.0.N.M, and the .so for the linker.
        check "libcordon.so.0 is the library's soname" sh -c \
                'objdump -p "$1" | grep -qx "  SONAME *libcordon.so.0"' sh "$d$libdir/libcordon.so.0"
        check "libcordon.so points at libcordon.so.0 (the development symlink)" sh -c \
                '[ "$(readlink -f "$1")" = "$(readlink -f "$2")" ]' sh \
                "$d$libdir/libcordon.so" "$d$libdir/libcordon.so.0"
        check "cordond.service starts the installed cordond" \
                grep -qx "ExecStart=$prefix/bin/cordond" "$d$prefix/lib/systemd/user/cordond.service"
        check "the completions are the installed cordon's own" sh -c \
                '"$1" completion bash | cmp -s - "$2"' sh "$d$prefix/bin/cordon" "$d$bashdir/cordon"
        # Nothing installed may load from or point into the build tree: an attacker who can
        # write there (a build in a shared or agent-writable checkout) would otherwise get code
        # into every run of the installed cordon. meson drops the build-tree RUNPATH on install.
        for f in "$prefix/bin/cordon" "$prefix/bin/cordond" "$libdir/libcordon.so.0"; do
                check "$f has no RPATH or RUNPATH" sh -c \
                        '! objdump -p "$1" | grep -E "^ *R(UN)?PATH"' sh "$d$f"
        done
        check "no installed text file names the build tree" sh -c \
                '! grep -rlF "$1" "$2/share" "$3/pkgconfig" "$2/lib/systemd" "$4/apparmor.d"' sh \
                "${CORDON_BUILD_DIR:-/nonexistent-build}" "$d$prefix" "$d$libdir" "$d$sysconfdir"
fi

# ---- a C program against the installed tree, through pkg-config ------------------------------
# PKG_CONFIG_SYSROOT_DIR puts DESTDIR before the -I and -L paths the installed cordon.pc gives.
cat > "$scratch/hello.c" <<'C'
#include <cordon/cordon.h>
#include <stdio.h>
#include <string.h>
int main(void) {
        cordon_policy *p = NULL;
        cordon_error err = { 0 };
        if (cordon_policy_new(&p, &err) < 0) {
                fprintf(stderr, "cordon_policy_new: %s\n", err.message);
                return 1;
        }
        /* a well-formed document with a key the schema does not have: POLICY_INVALID */
        int r = cordon_policy_load_string(p, "{\"noSuchKey\": 1}", 15, "hello", &err);
        printf("%s %d %s\n", cordon_version(), r < 0, cordon_code_name(err.code));
        cordon_policy_free(p);
        return r < 0 ? 0 : 1;
}
C
pcdir=$d$libdir/pkgconfig
flags=$(PKG_CONFIG_LIBDIR="$pcdir" PKG_CONFIG_SYSROOT_DIR="$d" pkg-config --cflags --libs cordon)
# A sanitized tree (the ASan build) needs a sanitized program: the runtime must load first.
san=${CORDON_TEST_SANITIZE:-none}
[ "$san" = none ] && san_flags= || san_flags=-fsanitize=$san
if [ -n "$flags" ] && cc -Wall -Werror $san_flags -o "$scratch/hello" "$scratch/hello.c" $flags \
        2> "$scratch/cc.log"; then
        ok "cc hello.c \$(pkg-config --cflags --libs cordon): $flags"
else
        sed 's/^/#   /' "$scratch/cc.log"
        not_ok "cc hello.c \$(pkg-config --cflags --libs cordon) ('$flags')"
fi
out=$(LD_LIBRARY_PATH="$d$libdir" "$scratch/hello" 2>&1)
[ "$out" = "$version 1 POLICY_INVALID" ] && ok "the program runs against the installed libcordon" ||
        not_ok "the program prints '$out', not '$version 1 POLICY_INVALID'"
lib=$(LD_LIBRARY_PATH="$d$libdir" ldd "$scratch/hello" | awk '$1 == "libcordon.so.0" { print $3 }')
[ "$(readlink -f "$lib")" = "$(readlink -f "$d$libdir/libcordon.so.0")" ] &&
        ok "it loaded the installed $libdir/libcordon.so.0" ||
        not_ok "it loaded '$lib', not the installed $libdir/libcordon.so.0"

# ---- the installed cordon confines a command ---------------------------------------------------
cordon=$d$prefix/bin/cordon
check "$prefix/bin/cordon --version says $version" sh -c \
        '[ "$("$1" --version)" = "cordon $2" ]' sh "$cordon" "$version"
check "$prefix/bin/cordon probe" "$cordon" probe
work=$scratch/work
mkdir -p "$work"
out=$(cd "$work" && "$cordon" run -- /bin/sh -c 'echo inside > made-inside; cat made-inside' 2>&1)
[ "$out" = inside ] && [ -f "$work/made-inside" ] &&
        ok "cordon run: a command writes in its workspace" ||
        not_ok "cordon run: '$out' (expected 'inside' and $work/made-inside)"
# The attacker's side: outside the workspace nothing is writable, even where the user may write.
outside=$scratch/outside
mkdir -p "$outside"
(cd "$work" && "$cordon" run -- /bin/sh -c "echo x > '$outside/escaped'") > "$scratch/out" 2>&1
rc=$?
[ "$rc" -ne 0 ] && [ ! -e "$outside/escaped" ] &&
        ok "cordon run: a write outside the workspace is refused (exit $rc)" ||
        not_ok "cordon run: a write outside the workspace: exit $rc, file $(ls "$outside")"
# The landlock backend as well, where this host has it (partial: no PID namespace, ...).
if "$cordon" probe --json | python3 -c 'import json, sys
b = [b for b in json.load(sys.stdin)["backends"] if b["name"] == "landlock"]
sys.exit(0 if b and b[0]["status"] in ("full", "partial") else 1)' 2>/dev/null; then
        (cd "$work" && "$cordon" run --backend landlock -- /bin/sh -c \
                "echo ll > made-ll; echo x > '$outside/escaped-ll'") > "$scratch/out" 2>&1
        rc=$?
        [ "$rc" -ne 0 ] && [ -f "$work/made-ll" ] && [ ! -e "$outside/escaped-ll" ] &&
                ok "cordon run --backend landlock: the workspace yes, outside no" ||
                not_ok "cordon run --backend landlock: exit $rc, workspace $(ls "$work"), outside $(ls "$outside")"
else
        echo "# the landlock backend is unusable on this host: not run"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
