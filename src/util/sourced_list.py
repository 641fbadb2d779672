# SPDX-License-Identifier: Apache-2.0
"""The reader of cordon's data lists (data/egress/*.list, data/protected/names.list), shared by
the build-time generators (src/net/egress-lists-gen.py, src/plan/protected-names-gen.py).

The format both share: one entry per line; blank lines and '#' comment lines are ignored; every
entry carries a source, a "# source: ..." line in the comment block directly above it or a
"# source: ..." comment at the end of its own line (an entry nobody can trace back is an entry
nobody can review); no entry twice (as `key` folds it); the list is not empty. What an entry may
contain is each list's own `check`.
"""
import os
import re

SOURCE = re.compile(r"^#\s*source:\s*\S")


class ListError(Exception):
    pass


def read_sourced_list(path, check, key=lambda entry: entry):
    """[(entry, line number)] of the list at `path`; `check(path, number, entry)` raises
    ListError for an entry the list may not hold."""
    entries = []
    seen = {}
    sourced = False  # the comment block directly above names a source
    with open(path, "rb") as f:
        raw_lines = f.read().split(b"\n")
    for number, raw in enumerate(raw_lines, 1):
        try:
            line = raw.decode("utf-8").rstrip("\r").strip()
        except UnicodeDecodeError:
            raise ListError(f"{path}:{number}: not UTF-8")
        if not line:
            sourced = False
            continue
        if line.startswith("#"):
            sourced = sourced or bool(SOURCE.match(line))
            continue
        entry, hash_sign, comment = line.partition("#")
        entry = entry.strip()
        has_source = sourced or bool(hash_sign and SOURCE.match("#" + comment.strip()))
        sourced = False
        check(path, number, entry)
        if not has_source:
            raise ListError(f"{path}:{number}: '{entry}' has no '# source:' comment "
                            "(on the lines above it or at the end of its line)")
        k = key(entry)
        if k in seen:
            raise ListError(f"{path}:{number}: '{entry}' repeats line {seen[k]}")
        seen[k] = number
        entries.append((entry, number))
    if not entries:
        raise ListError(f"{path}: no entries")
    return entries


def write_atomically(path, text):
    """Writes `text` to `path` through a temporary file, so a failed build leaves no half file."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="ascii") as f:
        f.write(text)
    os.replace(tmp, path)
