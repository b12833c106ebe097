#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Prints the longest functions of the C++/CUDA sources under a folder.

usage: tools/longest_functions.py [--top N] [--kind global|device|host|gpu] [--max LINES] [folder ...]

A function's length runs from the line of its name to the line of its
closing brace (a template <...> line above is not counted); a lambda or a
local struct counts towards the function that holds it. Kinds: global
(__global__ kernels), device (__device__ or GPUPRIM_HD functions, methods of
device structs included), host (the rest); gpu is global and device
together. --max makes the exit status 1 when a listed function is longer.
Default: the top 10 of every kind under src/cuda.

The scan is a simple brace matcher over the text with comments, strings and
preprocessor lines blanked: enough for this code base's style, not a parser.
"""

import argparse
import os
import re
import sys

SOURCE_ENDINGS = (".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc")
CONTROL_WORDS = re.compile(r"^\s*(if|for|while|switch|catch|do|else|return)\b")
NOT_A_NAME = {"__launch_bounds__", "alignas", "__align__", "decltype", "noexcept", "sizeof", "alignof",
              "__attribute__", "static_assert"}


def blank_comments_and_strings(text):
    """The text with comments, string and character literals and
    preprocessor lines replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#":  # a preprocessor line (with its continuations)
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        if c == "\n":
            out.append(c)
            at_line_start = True
            i += 1
            continue
        if not c.isspace():
            at_line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:end]))
            i = end
        elif c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):  # not a digit separator
            quote = c
            out.append(" ")
            i += 1
            while i < n and text[i] != quote:
                if text[i] == "\\":
                    out.append(" ")
                    i += 1
                out.append("\n" if i < n and text[i] == "\n" else " ")
                i += 1
            out.append(" ")
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def function_name(header):
    """The name before the parameter list of a function header, or None."""
    for match in re.finditer(r"(~?[A-Za-z_][A-Za-z_0-9]*(?:::~?[A-Za-z_][A-Za-z_0-9]*)*)\s*\(", header):
        name = match.group(1)
        if name.split("::")[-1] in NOT_A_NAME:
            continue
        return name
    return None


def classify(header):
    """'scope' (namespace, struct...), 'function', or 'block' for a brace
    opened outside any function (an initializer, say)."""
    stripped = re.sub(r"\s+", " ", header).strip()
    if re.search(r"\bnamespace\b|^extern\b", stripped):
        return "scope"
    keyword = re.search(r"\b(struct|class|union|enum)\b", stripped)
    if keyword and "(" not in re.sub(r"alignas\s*\([^)]*\)", "", stripped[keyword.end():]):
        return "scope"
    if CONTROL_WORDS.match(stripped):
        return "block"
    ends_like_function = re.search(r"\)\s*((const|noexcept|override|final|mutable)\s*)*(->.*)?$", stripped)
    if ends_like_function and function_name(stripped):
        return "function"
    return "block"


def kind_of(header, device_scope):
    if "__global__" in header:
        return "global"
    if "__device__" in header or "GPUPRIM_HD" in header or device_scope:
        return "device"
    return "host"


def scan_file(path):
    """(length, first line, name, kind) of every function of the file."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = blank_comments_and_strings(f.read())
    found = []
    # Stack entries: (kind of brace, start line, name, kind of function, device scope).
    stack = []
    header_start = 0
    line = 1
    line_of = []  # line number of each character
    for ch in text:
        line_of.append(line)
        if ch == "\n":
            line += 1
    in_function = 0
    for i, ch in enumerate(text):
        if ch == "{":
            if in_function:
                stack.append(("inner", 0, None, None, False))
                in_function += 1
            else:
                header = text[header_start:i]
                what = classify(header)
                device_scope = any(entry[4] for entry in stack)
                if what == "function":
                    # The header's first line, past a template <...> prefix.
                    body = re.sub(r"^\s*template\s*<[^{;]*?>\s*(?=[A-Za-z_])", "", header, count=1, flags=re.S)
                    offset = header_start + (len(header) - len(body)) + (len(body) - len(body.lstrip()))
                    name = function_name(header)
                    stack.append(("function", line_of[min(offset, i)], name, kind_of(header, device_scope),
                                  device_scope))
                    in_function = 1
                elif what == "scope":
                    # Methods of a struct inside device code are device functions.
                    stack.append(("scope", 0, None, None, device_scope))
                else:
                    stack.append(("block", 0, None, None, device_scope))
                    in_function = 1  # skip its contents like a function body
            header_start = i + 1
        elif ch == "}":
            if not stack:
                header_start = i + 1
                continue
            what, start, name, kind, _ = stack.pop()
            if what == "function":
                found.append((line_of[i] - start + 1, start, name, kind))
                in_function = 0
            elif what == "block":
                in_function = 0
                continue  # an initializer: the header goes on (a constructor's, say)
            elif what == "inner":
                in_function -= 1
            header_start = i + 1
        elif ch == ";" and not in_function:
            header_start = i + 1
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*", default=["src/cuda"])
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--kind", choices=["global", "device", "host", "gpu", "all"], default="all")
    parser.add_argument("--max", type=int, default=0, help="exit 1 if a listed function is longer")
    args = parser.parse_args()
    rows = []
    for folder in args.folders:
        for root, _, files in os.walk(folder):
            for name in sorted(files):
                if name.endswith(SOURCE_ENDINGS):
                    path = os.path.join(root, name)
                    rows.extend((length, path, start, fname, kind) for length, start, fname, kind in scan_file(path))
    kinds = {"all": ("global", "device", "host"), "gpu": ("global", "device")}.get(args.kind, (args.kind,))
    rows = sorted((r for r in rows if r[4] in kinds), key=lambda r: (-r[0], r[1], r[2]))
    for length, path, start, name, kind in rows[: args.top]:
        print(f"{length:5d}  {kind:6s}  {path}:{start}  {name}")
    if args.max and rows and rows[0][0] > args.max:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
