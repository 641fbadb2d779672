#!/bin/sh
# clients/run.sh: the tests of the cordond clients (meson suite clients), each against a real
# cordond the test starts on a socket in a private directory of its own.
#
#   run.sh root|user node|python CORDOND     the client's tests, as root or as cordon-test
#   run.sh root node-types CORDOND           tsc --strict over index.d.ts and test/types.ts
#   run.sh root node-pack CORDOND            `npm pack` makes a package that installs and loads
#   run.sh root python-package CORDOND       pyproject.toml builds a wheel that installs and loads
#
# As root, `user` runs the tests through setpriv as cordon-test (created when missing, as
# tests/run-all.sh does) on a copy of the clients, the daemon's header and README.md in a tree
# that account may read under /var/tmp, as tests/daemon/run.sh does. Exit: the tests' (0 ok),
# 77 when skipped; with CORDON_TEST_MUST_WORK=1 a skip is a failure.
set -u

who=${1:?root|user}
what=${2:?node|python|node-types|node-pack}
cordond=${3:?cordond}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
test_user=cordon-test

skip() {
        echo "1..0 # SKIP $*"
        if [ "${CORDON_TEST_MUST_WORK:-0}" = 1 ]; then
                echo "CORDON_TEST_MUST_WORK=1: a skip is a failure"
                exit 1
        fi
        exit 77
}

[ -x "$cordond" ] || skip "no binary $cordond"
case $what in
node | node-types | node-pack) command -v node >/dev/null || skip "node is missing" ;;
python | python-package) [ -x /usr/bin/python3 ] || skip "/usr/bin/python3 is missing" ;;
*) echo "usage: run.sh root|user node|python|node-types|node-pack|python-package CORDOND" >&2
        exit 2 ;;
esac

tmp=$(mktemp -d /var/tmp/cordon-clients-test.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
chmod 755 "$tmp"

# run_tests TREE CORDOND: the client's tests in TREE (a source tree), against CORDOND.
run_tests() {
        case $what in
        node) CORDOND=$2 CORDON_SOURCE_DIR=$1 node --test "$1"/clients/node/test/*.test.js \
                "$1"/clients/node/test/*.test.mjs ;;
        python) cd "$1/clients/python" && CORDOND=$2 CORDON_SOURCE_DIR=$1 \
                        /usr/bin/python3 -m unittest discover -s tests -t . -v ;;
        esac
}

# tsc from the lock file's devDependencies (`npm ci` against the npm registry), in a copy: the
# source tree gets no node_modules.
node_types() {
        command -v npm >/dev/null || skip "npm is missing"
        cp -r "$here/node" "$tmp/node" && rm -rf "$tmp/node/node_modules"
        (cd "$tmp/node" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) ||
                { echo "npm ci failed"; exit 1; }
        (cd "$tmp/node" && ./node_modules/.bin/tsc -p .) && echo "tsc: index.d.ts and test/types.ts check"
}

# The package `npm pack` makes: exactly the runtime files, installable, loading without any
# dependency, speaking the protocol version of its major version.
node_pack() {
        command -v npm >/dev/null || skip "npm is missing"
        (cd "$here/node" && npm pack --pack-destination "$tmp" --loglevel=error >/dev/null) ||
                { echo "npm pack failed"; exit 1; }
        tgz=$(ls "$tmp"/cordon-client-*.tgz) || exit 1
        files=$(tar -tzf "$tgz" | sort | tr '\n' ' ')
        want="package/README.md package/index.d.ts package/index.js package/lib/client.js package/lib/errors.js package/lib/exec.js package/lib/socket.js package/package.json "
        [ "$files" = "$want" ] || { echo "npm pack: files [$files], expected [$want]"; exit 1; }
        mkdir -p "$tmp/app/node_modules/cordon-client"
        tar -xzf "$tgz" -C "$tmp/app/node_modules/cordon-client" --strip-components=1
        (cd "$tmp/app" && node -e '
const c = require("cordon-client");
const pkg = require("cordon-client/package.json");
if (Object.keys(pkg.dependencies || {}).length) throw new Error("runtime dependencies");
if (Number(pkg.version.split(".")[0]) !== c.PROTOCOL_VERSION) throw new Error("version");
if (typeof c.connect !== "function" || !(new c.KilledError("x") instanceof c.CordonError))
        throw new Error("exports");
console.log("npm pack: " + pkg.name + "@" + pkg.version + " loads; protocol " + c.PROTOCOL_VERSION);')
}

# The wheel pyproject.toml builds (Debian's pip and setuptools, offline, in a copy: the build
# leaves build/ and *.egg-info behind): exactly the package's files, no dependency, installable,
# its major version the protocol version.
python_package() {
        { /usr/bin/python3 -c 'import setuptools' && /usr/bin/python3 -m pip --version; } \
                >/dev/null 2>&1 || skip "pip or setuptools (python3-pip) is missing"
        cp -r "$here/python" "$tmp/src" && rm -rf "$tmp/src/build" "$tmp/src"/*.egg-info
        /usr/bin/python3 -m pip wheel --quiet --no-deps --no-build-isolation --no-index \
                -w "$tmp/dist" "$tmp/src" || { echo "pip wheel failed"; exit 1; }
        whl=$(ls "$tmp"/dist/cordon_client-*.whl) || exit 1
        /usr/bin/python3 - "$whl" <<'PY' || exit 1
import sys, zipfile
names = sorted(n for n in zipfile.ZipFile(sys.argv[1]).namelist() if not ".dist-info/" in n)
want = ["cordon_client/__init__.py", "cordon_client/_wire.py", "cordon_client/aio.py",
        "cordon_client/client.py", "cordon_client/errors.py", "cordon_client/py.typed"]
meta = [n for n in zipfile.ZipFile(sys.argv[1]).namelist() if n.endswith("/METADATA")][0]
text = zipfile.ZipFile(sys.argv[1]).read(meta).decode()
if names != want or "Requires-Dist" in text:
    sys.exit(f"wheel: files {names} (expected {want}); dependencies: {'Requires-Dist' in text}")
PY
        /usr/bin/python3 -m pip install --quiet --root-user-action=ignore --no-deps --no-index --target "$tmp/site" "$whl" ||
                { echo "pip install failed"; exit 1; }
        (cd / && PYTHONPATH="$tmp/site" /usr/bin/python3 -c '
import cordon_client as c
assert c.__file__.startswith("'"$tmp/site"'"), c.__file__
assert int(c.__version__.split(".")[0]) == c.PROTOCOL_VERSION, c.__version__
assert issubclass(c.KilledError, c.CordonError) and callable(c.AsyncClient.connect)
print("wheel: cordon_client", c.__version__, "loads; protocol", c.PROTOCOL_VERSION)')
}

as_user() {
        setpriv --reuid="$test_user" --regid="$test_user" --clear-groups "$@"
}

ensure_user() {
        command -v setpriv >/dev/null || return 1
        id -u "$test_user" >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin "$test_user"
}

case $who:$what in
root:node-types) node_types ;;
root:node-pack) node_pack ;;
root:python-package) python_package ;;
root:*)
        [ "$(id -u)" -eq 0 ] || skip "not root"
        run_tests "$src" "$cordond"
        ;;
user:node | user:python)
        if [ "$(id -u)" -ne 0 ]; then
                run_tests "$src" "$cordond"
                exit $?
        fi
        ensure_user || skip "setpriv (util-linux) is missing or $test_user cannot be created"
        mkdir -p "$tmp/bin" "$tmp/src" "$tmp/work"
        cp "$cordond" "$tmp/bin/"
        for lib in "$(dirname "$cordond")"/libcordon.so*; do
                [ -e "$lib" ] && cp -P "$lib" "$tmp/bin/"
        done
        tar -C "$src" --exclude=node_modules -cf - clients README.md src/daemon/protocol.h |
                tar -C "$tmp/src" -xf -
        chmod -R a+rX "$tmp/bin" "$tmp/src"
        chown "$test_user:" "$tmp/work"
        # A clean environment without XDG_RUNTIME_DIR: every test gives its daemon a socket.
        as_user env -i PATH="/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin" HOME="$tmp/work" \
                LC_ALL=C.UTF-8 CORDON_TEST_TMP="$tmp/work" \
                CORDON_TEST_MUST_WORK="${CORDON_TEST_MUST_WORK:-0}" \
                ASAN_OPTIONS="${ASAN_OPTIONS:-}" UBSAN_OPTIONS="${UBSAN_OPTIONS:-}" \
                LD_LIBRARY_PATH="$tmp/bin" \
                sh "$tmp/src/clients/run.sh" user-staged "$what" \
                "$tmp/bin/$(basename "$cordond")" "$tmp/src"
        ;;
# The second half of `user` as root: already cordon-test, in the staged tree.
user-staged:*) run_tests "${4:?tree}" "$cordond" ;;
*)
        echo "usage: run.sh root|user node|python|node-types|node-pack CORDOND" >&2
        exit 2
        ;;
esac
