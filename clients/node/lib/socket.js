// SPDX-License-Identifier: Apache-2.0
'use strict';
// Finding cordond's socket (docs/protocol.md, "Connecting") and connecting to it only when no
// other user could have put it there.
const fs = require('fs');
const net = require('net');
const path = require('path');
const { DaemonConnectionError } = require('./errors');

/**
 * The daemon's default socket: $XDG_RUNTIME_DIR/cordon/cordond.sock (an absolute
 * XDG_RUNTIME_DIR only), else /run/user/cordon-UID/cordond.sock when /run/user is writable, else
 * /tmp/cordon-UID/cordond.sock: the same rule as cordond and `cordon` (src/daemon/main.c).
 */
function defaultSocketPath(env = process.env) {
  const rt = env.XDG_RUNTIME_DIR;
  if (rt && rt[0] === '/') return `${rt}/cordon/cordond.sock`;
  let base = '/tmp';
  try {
    fs.accessSync('/run/user', fs.constants.W_OK);
    base = '/run/user';
  } catch (_) {
    // not writable: /tmp, as the daemon does
  }
  return `${base}/cordon-${process.getuid()}/cordond.sock`;
}

/**
 * Opens the socket's directory without following a symlink and checks it as cordond checks its
 * own (src/daemon/server.c, check_private_dir): a directory owned by our effective uid with no
 * group or other permission bits. A socket in any other directory could have been bound by
 * another user (a /tmp/cordon-UID created before ours exists), who would then receive every
 * request, policies included, and could forge an exec's output and exit status. Node has no
 * SO_PEERCRED, so this is the check that stops that impersonation; the daemon's own peer check
 * still refuses other uids on its side. Returns the directory's fd: the caller connects through
 * /proc/self/fd/FD so that the directory checked is the one connected to (no rename race).
 */
function openPrivateDir(socketPath) {
  const dir = path.dirname(socketPath);
  const flags = fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW;
  let fd;
  try {
    fd = fs.openSync(dir, flags);
  } catch (e) {
    throw new DaemonConnectionError(connectHint(socketPath, e.code === 'ELOOP' || e.code === 'ENOTDIR'
      ? 'its directory is a symlink or not a directory' : e.message));
  }
  const st = fs.fstatSync(fd);
  const euid = process.geteuid();
  if (!st.isDirectory() || st.uid !== euid || (st.mode & 0o077) !== 0) {
    fs.closeSync(fd);
    throw new DaemonConnectionError(
      `refusing to talk to cordond at '${socketPath}': its directory is owned by uid ${st.uid} ` +
      `with mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}, not a private directory of ` +
      `ours (uid ${euid}, 0700): another user could have planted the socket`);
  }
  return fd;
}

function connectHint(socketPath, why) {
  return `cannot connect to cordond at '${socketPath}': ${why}; start it with 'cordond' (or ` +
    `'systemctl --user start cordond.socket'), or give socketPath`;
}

/** The socket file inside the pinned directory must be a socket of ours too. */
function checkSocketFile(pinned, socketPath) {
  let st;
  try {
    st = fs.lstatSync(pinned);
  } catch (e) {
    throw new DaemonConnectionError(connectHint(socketPath, e.code === 'ENOENT'
      ? 'No such file or directory' : e.message));
  }
  if (!st.isSocket() || st.uid !== process.geteuid())
    throw new DaemonConnectionError(
      `refusing to talk to cordond at '${socketPath}': it is not a socket owned by uid ` +
      `${process.geteuid()}`);
}

/** Connects to cordond's socket after the checks above; resolves to a net.Socket. */
function connectSocket(socketPath) {
  if (typeof socketPath !== 'string' || socketPath[0] !== '/')
    return Promise.reject(new DaemonConnectionError(
      `socketPath must be an absolute path, not ${JSON.stringify(socketPath)}`));
  let fd;
  try {
    fd = openPrivateDir(socketPath);
    const pinned = `/proc/self/fd/${fd}/${path.basename(socketPath)}`;
    checkSocketFile(pinned, socketPath);
    return new Promise((resolve, reject) => {
      const sock = net.connect({ path: pinned });
      const done = (err) => {
        sock.removeAllListeners('connect');
        sock.removeAllListeners('error');
        fs.closeSync(fd);
        if (err) {
          sock.destroy();
          reject(new DaemonConnectionError(connectHint(socketPath, err.message)));
        } else {
          resolve(sock);
        }
      };
      sock.once('connect', () => done(null));
      sock.once('error', done);
    });
  } catch (e) {
    if (fd !== undefined) fs.closeSync(fd);
    return Promise.reject(e);
  }
}

module.exports = { defaultSocketPath, connectSocket };
