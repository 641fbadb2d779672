#!/bin/sh
# Installs the Debian packages cordon needs to build, test and benchmark, when any is missing.
# Used by `make demo`, `make check` and .ci/run; safe to run again.
set -eu
pkgs="build-essential meson ninja-build pkg-config libjansson-dev libseccomp-dev libcmocka-dev
      clang libclang-rt-14-dev bubblewrap util-linux passwd git python3 make curl"
# libcrypto (SHA-256 of project settings files for the trust store, docs/settings.md).
pkgs="$pkgs libssl-dev"
# libnftnl and libmnl (the transparent-egress rules in the sandbox's network namespace,
# src/linux/intercept.c: the netfilter project's own libraries for nf_tables and netlink).
pkgs="$pkgs libnftnl-dev libmnl-dev"
# The network suite (tests/net/it): clients inside the sandbox and the loopback servers they talk
# to (sshd for git over ssh, nc for GIT_SSH_COMMAND's SOCKS5 ProxyCommand, openssl for the test
# certificate, pip against a local index).
pkgs="$pkgs openssl openssh-client openssh-server netcat-openbsd python3-pip"
# A database client that knows nothing of proxies, against its own server on loopback (the
# transparent-egress tests: redis-cli to redis-server through the interception).
pkgs="$pkgs redis-server redis-tools"
# A JVM client through the interception (java runs its single source file without a build step).
pkgs="$pkgs openjdk-17-jdk-headless"
# The compatibility suite (tests/compat): python3 -m venv, npm and npx. Node and npm are taken
# from Debian unless the machine has them already from elsewhere (NodeSource's nodejs bundles
# npm; Debian's npm package would conflict with it).
pkgs="$pkgs python3-venv"
command -v node >/dev/null 2>&1 || pkgs="$pkgs nodejs"
command -v npm >/dev/null 2>&1 || pkgs="$pkgs npm"
# Installing (README.md "Install"): pandoc turns docs/ into the man pages at build time, man-db
# and groff check them, bash/zsh/fish run the completion tests (tests/install/); debhelper,
# dh-apparmor and lintian build and check the Debian package (tests/package/run.sh).
pkgs="$pkgs pandoc man-db groff-base bash-completion zsh fish debhelper dh-apparmor lintian"
# The microvm backend (docs/design/microvm.md): qemu's microvm machine as the VMM.
pkgs="$pkgs qemu-system-x86"
# cordon's secret store (docs/design/secrets.md): sd-bus's header (libsystemd.so.0 itself is
# loaded at run time, only when a secret is needed), and for its tests a real Secret Service on
# a private session bus: gnome-keyring, dbus (dbus-daemon, dbus-run-session, dbus-send) and
# libsecret-tools (secret-tool, to check what cordon stored).
pkgs="$pkgs libsystemd-dev gnome-keyring dbus libsecret-tools"
missing=""
for p in $pkgs; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
                || missing="$missing $p"
done
# The cordond clients (clients/): Node.js (18 or later) with npm for their tests and `npm pack`.
# A Node.js installed from elsewhere (NodeSource's bundles npm and conflicts with Debian's npm
# package) is used as it is: only a missing command brings Debian's package.
command -v node >/dev/null 2>&1 || missing="$missing nodejs"
command -v npm >/dev/null 2>&1 || missing="$missing npm"
if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
if [ -n "$missing" ]; then
        echo "installing:$missing" >&2
        $sudo apt-get update -q >/dev/null
        # shellcheck disable=SC2086
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends \
                $missing >/dev/null
fi
# The microvm backend's guest kernel where the host has none in /boot (the default of meson's
# microvm_kernel_dir): Debian's current linux-image-amd64 kernel, unpacked rather than installed
# (installing would run update-initramfs and add a boot entry on the host). Its modules/ holds
# the virtio-mmio, 9p and virtio-console modules the guest loads.
kdir=/usr/local/lib/cordon/microvm-kernel
if [ ! -f "$kdir/vmlinuz" ] || [ ! -d "$kdir/modules/kernel" ]; then
        kpkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/{print $2; exit}')
        [ -n "$kpkg" ] || { apt-get update -q >/dev/null &&
                kpkg=$(apt-cache depends linux-image-amd64 |
                       awk '/Depends: linux-image-/{print $2; exit}'); }
        echo "unpacking $kpkg into $kdir" >&2
        tmp=$(mktemp -d)
        chmod 755 "$tmp" # apt-get download fetches as the _apt user
        (cd "$tmp" && apt-get download -q "$kpkg" >/dev/null)
        dpkg-deb -x "$tmp"/*.deb "$tmp/root"
        kver=${kpkg#linux-image-}
        $sudo mkdir -p "$kdir"
        $sudo rm -rf "$kdir/modules"
        $sudo cp "$tmp/root/boot/vmlinuz-$kver" "$kdir/vmlinuz"
        $sudo cp -a "$tmp/root/lib/modules/$kver" "$kdir/modules"
        rm -rf "$tmp"
fi
