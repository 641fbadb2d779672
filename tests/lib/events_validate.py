#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A JSON Schema (draft 2020-12) validator for the subset docs/events.schema.json uses, standard
library only. Any keyword outside the subset is an error, never silently ignored, so the schema
cannot grow a constraint this validator would skip.

Usage as a program: events_validate.py SCHEMA FILE  (each line of FILE is one instance; exit 1 on
the first invalid line, printing why)."""
import json
import re
import sys

ANNOTATIONS = {"$schema", "$id", "title", "description"}
KEYWORDS = {"type", "required", "properties", "additionalProperties", "enum", "const", "oneOf",
            "$ref", "$defs", "pattern", "minLength", "maxLength", "minimum", "maximum", "items",
            "minItems"}


def _type_ok(value, name):
    """Whether `value` has JSON type `name` (booleans are not numbers)."""
    checks = {
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
        "null": lambda v: v is None,
    }
    if name not in checks:
        raise ValueError(f"unsupported type {name!r}")
    return checks[name](value)


def _resolve(root, ref):
    """A local reference '#/$defs/name'."""
    if not ref.startswith("#/"):
        raise ValueError(f"unsupported $ref {ref!r}")
    node = root
    for part in ref[2:].split("/"):
        node = node[part]
    return node


def _object_errors(root, schema, value, path):
    """required, properties, additionalProperties."""
    errors = []
    props = schema.get("properties", {})
    for key in schema.get("required", []):
        if key not in value:
            errors.append(f"{path}: missing required {key!r}")
    for key, sub in value.items():
        if key in props:
            errors += errors_of(root, props[key], sub, f"{path}.{key}")
        elif schema.get("additionalProperties", True) is False:
            errors.append(f"{path}: unexpected property {key!r}")
        elif isinstance(schema.get("additionalProperties"), dict):
            errors += errors_of(root, schema["additionalProperties"], sub, f"{path}.{key}")
    return errors


def errors_of(root, schema, value, path="$"):
    """Every reason `value` does not match `schema` (empty list: valid)."""
    unknown = set(schema) - KEYWORDS - ANNOTATIONS
    if unknown:
        raise ValueError(f"unsupported keywords {sorted(unknown)} at {path}")
    if "$ref" in schema:
        return errors_of(root, _resolve(root, schema["$ref"]), value, path)
    if "oneOf" in schema:
        matches = [s for s in schema["oneOf"] if not errors_of(root, s, value, path)]
        if len(matches) != 1:
            return [f"{path}: matches {len(matches)} of the oneOf alternatives, not exactly 1"]
        return []
    if "type" in schema and not _type_ok(value, schema["type"]):
        return [f"{path}: {value!r} is not of type {schema['type']}"]
    errors = []
    if "const" in schema and value != schema["const"]:
        errors.append(f"{path}: {value!r} is not {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, str):
        if "pattern" in schema and not re.search(schema["pattern"], value):
            errors.append(f"{path}: {value!r} does not match {schema['pattern']!r}")
        if len(value) < schema.get("minLength", 0):
            errors.append(f"{path}: shorter than {schema['minLength']}")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append(f"{path}: longer than {schema['maxLength']}")
    if _type_ok(value, "number"):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{path}: {value} < {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{path}: {value} > {schema['maximum']}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            errors.append(f"{path}: fewer than {schema['minItems']} items")
        for i, item in enumerate(value):
            if "items" in schema:
                errors += errors_of(root, schema["items"], item, f"{path}[{i}]")
    if isinstance(value, dict):
        errors += _object_errors(root, schema, value, path)
    return errors


def validate_line(schema, line):
    """Parses one events line (one object, one trailing newline) and returns its errors."""
    if not line.endswith("\n") or "\n" in line[:-1]:
        return ["not exactly one line ending in a newline"]
    try:
        value = json.loads(line)
    except ValueError as e:
        return [f"not JSON: {e}"]
    return errors_of(schema, schema, value)


def main(argv):
    """events_validate.py SCHEMA FILE."""
    with open(argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    with open(argv[2], encoding="utf-8", newline="") as f:
        for n, line in enumerate(f, 1):
            errors = validate_line(schema, line)
            if errors:
                print(f"{argv[2]}:{n}: {'; '.join(errors)}")
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
