#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The public header's constructors and serializers keep the one shape each that
include/cordon/cordon.h promises in its opening comment:

  - a constructor -- any CORDON_PUBLIC function named cordon_*_new*, and any that hands out an
    opaque object (a `cordon_X **` parameter, cordon_X declared `typedef struct cordon_X
    cordon_X;` without a body) -- is `int f(..., cordon_X **ret, cordon_error *err)`;
  - a serializer -- any CORDON_PUBLIC function cordon_X_to_FORMAT whose first parameter points to
    an opaque object -- is `int cordon_X_to_FORMAT(const cordon_X *x, ..., char **ret,
    cordon_error *err)`, its X the object's type;
  - the only other `_to_` functions are the enums' names, `const char *cordon_E_to_string(cordon_E
    value)`, which return static storage and cannot fail.

Before checking the header, the checker checks itself on declarations that break each rule, so
a parser that stopped seeing them fails here instead of passing everything.

Usage: check-api-shape.py HEADER"""
import re
import sys

OPAQUE = re.compile(r"\btypedef\s+struct\s+(cordon_\w+)\s+(\w+)\s*;")
PUBLIC = re.compile(r"\bCORDON_PUBLIC\s+([^;{}()]*?)\b(cordon_\w+)\s*\(([^;{}]*)\)\s*;")
CONSTRUCTOR_NAME = re.compile(r"^cordon_\w+_new(_\w+)?$")
TO = re.compile(r"^(cordon_\w+?)_to_([a-z][a-z0-9_]*)$")


def strip(text):
    """The header without comments and preprocessor lines (with their continuations)."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)
    return text


def norm(t):
    """A type spelled one way: single spaces, none before or after '*'."""
    t = re.sub(r"\s+", " ", t).strip()
    return re.sub(r"\s*\*\s*", "*", t)


def param(p):
    """'const cordon_policy *p' -> ('const cordon_policy*', 'p'); 'void' -> None."""
    p = re.sub(r"\s+", " ", p).strip()
    if p == "void":
        return None
    m = re.fullmatch(r"(.*?)\b(\w+)\s*(\[[^\]]*\])?", p)
    if not m or not m.group(1).strip():
        return (norm(p), "")
    return (norm(m.group(1) + ("*" if m.group(3) is not None else "")), m.group(2))


def declarations(text):
    text = strip(text)
    opaque = {a for a, b in OPAQUE.findall(text) if a == b}
    decls = []
    for ret, name, params in PUBLIC.findall(text):
        ps = [q for q in (param(p) for p in params.split(",")) if q is not None]
        decls.append((norm(ret), name, ps))
    return opaque, decls


def show(t):
    """A normalized type as the header spells it: 'char**' -> 'char **'."""
    return re.sub(r"(?<!\*)\*", " *", t).replace("* ", "*")


def spell(ret, name, ps):
    """A declaration as the header would spell it, for messages."""
    args = ", ".join(show(t) + ("" if show(t).endswith("*") else " ") + n for t, n in ps)
    r = show(ret)
    return "%s%s%s(%s)" % (r, "" if r.endswith("*") else " ", name, args or "void")


def check_constructor(ret, name, ps, obj, problems):
    want = "int f(..., %s **ret, cordon_error *err)" % obj
    if ret != "int" or len(ps) < 2 or ps[-2] != (obj + "**", "ret") or \
            ps[-1] != ("cordon_error*", "err"):
        problems.append("%s: a constructor is %s" % (spell(ret, name, ps), want))


def check(text):
    """The problems with the header's text, one line each; and how many calls each rule saw."""
    opaque, decls = declarations(text)
    problems, seen = [], {"constructor": 0, "serializer": 0, "enum name": 0}
    for ret, name, ps in decls:
        made = [t[:-2] for t, _ in ps if t.endswith("**") and t[:-2] in opaque]
        if CONSTRUCTOR_NAME.match(name) or made:
            seen["constructor"] += 1
            obj = made[0] if made else None
            if obj is None:
                problems.append("%s: a constructor hands out its object as `cordon_X **ret`"
                                % spell(ret, name, ps))
            else:
                check_constructor(ret, name, ps, obj, problems)
        m = TO.match(name)
        if not m:
            continue
        first = ps[0] if ps else ("void", "")
        obj = re.fullmatch(r"(?:const )?(cordon_\w+)\*", first[0])
        if obj and obj.group(1) in opaque:
            seen["serializer"] += 1
            o = obj.group(1)
            want = "int %s(const %s *x, ..., char **ret, cordon_error *err)" % (name, o)
            if m.group(1) != o or ret != "int" or first[0] != "const %s*" % o or \
                    len(ps) < 3 or ps[-2] != ("char**", "ret") or \
                    ps[-1] != ("cordon_error*", "err"):
                problems.append("%s: a serializer is %s" % (spell(ret, name, ps), want))
        elif m.group(2) == "string" and ret == "const char*" and len(ps) == 1 and \
                ps[0][0] == m.group(1):
            seen["enum name"] += 1
        else:
            problems.append("%s: a `_to_` call is a serializer of an object (int ..., char **ret, "
                            "cordon_error *err) or an enum's name (const char *cordon_E_to_string("
                            "cordon_E value))" % spell(ret, name, ps))
    return problems, seen, len(decls)


# Each breaks one rule; the checker must report every one of them.
SELF_TEST = """
typedef struct cordon_thing cordon_thing;
typedef enum cordon_kind { CORDON_KIND_A } cordon_kind;
CORDON_PUBLIC cordon_thing *cordon_thing_new(void);
CORDON_PUBLIC int cordon_thing_new_copy(const cordon_thing *t, cordon_thing **ret);
CORDON_PUBLIC int cordon_thing_open(cordon_error *err, cordon_thing **ret);
CORDON_PUBLIC char *cordon_thing_to_json(const cordon_thing *t);
CORDON_PUBLIC int cordon_thing_to_yaml(cordon_thing *t, char **ret, cordon_error *err);
CORDON_PUBLIC int cordon_other_to_json(const cordon_thing *t, char **ret, cordon_error *err);
CORDON_PUBLIC int cordon_kind_to_string(cordon_kind k, char **ret);
"""
SELF_TEST_BAD = 7  # every declaration above but the typedefs
SELF_TEST_GOOD = """
typedef struct cordon_thing cordon_thing;
typedef enum cordon_kind { CORDON_KIND_A } cordon_kind;
/* CORDON_PUBLIC char *cordon_thing_to_json(const cordon_thing *t); in a comment */
#define CORDON_THING_MACRO(x) \\
        CORDON_PUBLIC char *cordon_thing_to_yaml(x);
CORDON_PUBLIC int cordon_thing_new(cordon_thing **ret, cordon_error *err);
CORDON_PUBLIC int cordon_thing_to_json(const cordon_thing *t, unsigned flags,
                                       char *const *environ, char **ret, cordon_error *err);
CORDON_PUBLIC const char *cordon_kind_to_string(cordon_kind kind);
CORDON_PUBLIC int cordon_thing_run(const char *const argv[], cordon_thing **ret,
                                   cordon_error *err);
"""


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    status = 0
    bad, _, _ = check(SELF_TEST)
    good, _, n_good = check(SELF_TEST_GOOD)
    if len(bad) != SELF_TEST_BAD or good or n_good != 4:
        print("not ok - the checker checks itself: %d of %d bad declarations reported, %d good "
              "ones refused, %d of 4 found" % (len(bad), SELF_TEST_BAD, len(good), n_good))
        for p in bad + good:
            print("#   " + p)
        return 1
    print("ok - the checker reports each of %d bad declarations and none of 4 good ones"
          % SELF_TEST_BAD)
    with open(sys.argv[1]) as f:
        problems, seen, n = check(f.read())
    for p in problems:
        print("not ok - " + p)
        status = 1
    # Too few found means the parser missed the header's declarations, not that they are fine.
    if n < 50 or min(seen.values()) == 0:
        print("not ok - too few declarations found in %s: %d public, %s" % (sys.argv[1], n, seen))
        status = 1
    if status == 0:
        print("ok - %s: %d constructors, %d serializers and %d enum names of %d public functions "
              "have their shape" % (sys.argv[1], seen["constructor"], seen["serializer"],
                                    seen["enum name"], n))
    return status


if __name__ == "__main__":
    sys.exit(main())
