#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks every #include in src/cuda against src/cuda/LAYERS.txt.

Usage: check_layers.py [--root DIR]   check DIR/src/cuda (default: this repo)
       check_layers.py --self-test    check that bad includes are caught

Exit status 0 when every include is allowed; 1 with one line per broken rule
(file:line, the include, the rule) otherwise; 2 when LAYERS.txt itself is
wrong. Python 3 standard library only: it runs in CPU-only builds too.
"""

import argparse
import os
import re
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SOURCE_SUFFIXES = ('.h', '.cuh', '.cu', '.cpp', '.hpp', '.inl')


class LayersError(Exception):
    """LAYERS.txt cannot be read as a layer list."""


# In a rule, any primitive's entry header: <folder>/<folder>.h.
FRONT_DOOR = '<primitive>/<primitive>.h'


def is_front_door(target):
    """Whether target (a path relative to src/cuda) is a folder's entry header."""
    folder, _, name = target.partition('/')
    return name == folder + '.h'


def require_listed(where, who, targets, allowed, front_door_allowed):
    """Every target of a rule names a unit listed before it (so includes
    only go down), or is FRONT_DOOR where the rule may name it."""
    for target in targets:
        if front_door_allowed and target == FRONT_DOOR:
            continue
        unit = target.split('/', 1)[0]
        if unit not in allowed:
            raise LayersError(f'{where}: {who} names {target}, but {unit} is not a unit listed before it '
                              '(units go bottom up, so includes only go down)')


def read_layers(path):
    """Returns (allowed, parts, default): allowed[unit] = set of units and
    unit/file paths it may include (FRONT_DOOR: any primitive's entry
    header); parts[folder] = the unit that folder counts as; default = what
    a folder without a line of its own may include (None: no such folder)."""
    allowed, parts, default = {}, {}, None
    with open(path, encoding='utf-8') as f:
        for number, raw in enumerate(f, 1):
            line = raw.split('#', 1)[0].strip()
            if not line:
                continue
            match = re.fullmatch(r'primitives\s*:\s*(.*)', line)
            if match:
                if default is not None:
                    raise LayersError(f'{path}:{number}: "primitives:" is given twice')
                default = set(match.group(1).split())
                # No FRONT_DOOR here: a primitive calling another gets a line of its own.
                require_listed(f'{path}:{number}', 'primitives:', default, allowed, False)
                continue
            match = re.fullmatch(r'(unit|part)\s+([\w.]+)\s*:\s*(.*)', line)
            if not match:
                raise LayersError(f'{path}:{number}: not "unit NAME: ALLOWED...", "part FOLDER: UNIT" or '
                                  '"primitives: ALLOWED..."')
            kind, name, rest = match.group(1), match.group(2), match.group(3).split()
            if name in allowed or name in parts:
                raise LayersError(f'{path}:{number}: {name} is listed twice')
            if kind == 'part':
                if len(rest) != 1 or rest[0] not in allowed:
                    raise LayersError(f'{path}:{number}: part {name} must name one unit listed before it')
                parts[name] = rest[0]
                continue
            require_listed(f'{path}:{number}', name, rest, allowed, True)
            allowed[name] = set(rest)
    return allowed, parts, default


def unit_of(relative, parts):
    """The unit of a path relative to src/cuda: its top folder (or the file
    at the top), folders listed as a part mapped to their unit."""
    top = relative.split('/', 1)[0]
    return parts.get(top, top)


def resolve(include, including_dir, cuda_dir):
    """The included file as a path relative to src/cuda, or None when it lies
    outside src/cuda (core/, gpuprim/, system headers)."""
    if include.startswith('cuda/'):
        return include[len('cuda/'):]
    beside = os.path.normpath(os.path.join(including_dir, include))
    if os.path.exists(beside) and os.path.commonpath([beside, cuda_dir]) == cuda_dir:
        return os.path.relpath(beside, cuda_dir).replace(os.sep, '/')
    return None


def check_tree(root):
    """Returns the list of problems in root/src/cuda (empty: all allowed)."""
    cuda_dir = os.path.join(root, 'src', 'cuda')
    layers_path = os.path.join(cuda_dir, 'LAYERS.txt')
    allowed, parts, default = read_layers(layers_path)
    problems = []
    for directory, folders, files in os.walk(cuda_dir):
        folders.sort()
        for name in sorted(files):
            if not name.endswith(SOURCE_SUFFIXES):
                continue
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, cuda_dir).replace(os.sep, '/')
            shown = os.path.relpath(path, root).replace(os.sep, '/')
            unit = unit_of(relative, parts)
            rules = allowed.get(unit)
            if rules is None and default is not None and '/' in relative:
                rules = default  # a primitive's folder without a line: the "primitives:" rule
            if rules is None:
                problems.append(f'{shown}:1: {unit} is not a unit of src/cuda/LAYERS.txt (add its line there)')
                continue
            with open(path, encoding='utf-8', errors='replace') as f:
                for number, line in enumerate(f, 1):
                    match = INCLUDE.match(line)
                    if not match:
                        continue
                    target = resolve(match.group(1), directory, cuda_dir)
                    if target is None:
                        continue
                    if not os.path.isfile(os.path.join(cuda_dir, target)):
                        problems.append(f'{shown}:{number}: includes "{match.group(1)}", which does not exist')
                        continue
                    target_unit = unit_of(target, parts)
                    if target_unit == unit or target_unit in rules or target in rules or (
                            FRONT_DOOR in rules and is_front_door(target)):
                        continue
                    rule = ' '.join(sorted(rules)) or 'nothing outside itself'
                    problems.append(f'{shown}:{number}: includes "{match.group(1)}" ({target_unit}), but '
                                    f'LAYERS.txt lets {unit} include only: {rule}')
    return problems


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w', encoding='utf-8') as f:
        f.write(text)


def self_test():
    """Builds small trees and checks that the checker catches what it must."""
    layers = ('unit util:\n'
              'unit engine: util\n'
              'unit sort: engine util\n'
              'part sort_parts: sort\n'
              'unit topk: sort/sort.h engine util  # a comment\n')
    good = {
        'util/check.h': '#include <cuda_runtime.h>\n',
        'engine/bounds.cuh': '#include "cuda/util/check.h"\n#include "core/backend.h"\n',
        'sort/sort.h': '#include "cuda/engine/bounds.cuh"\n',
        'sort/radix.cuh': '#include "radix_tile.cuh"\n#include "cuda/sort_parts/agent.cuh"\n',
        'sort/radix_tile.cuh': '',
        'sort_parts/agent.cuh': '#include "cuda/sort/radix_tile.cuh"\n',
        'topk/topk.cu': '#include "cuda/sort/sort.h"\n#include "cuda/engine/bounds.cuh"\n',
    }
    cases = [
        # (what, extra files, layers override, text the report must contain)
        ('a good tree passes', {}, None, None),
        ('an engine including a primitive',
         {'engine/network.cu': '#include "cuda/util/check.h"\n#include "cuda/sort/sort.h"\n'}, None,
         'src/cuda/engine/network.cu:2: includes "cuda/sort/sort.h" (sort), but LAYERS.txt lets engine include only'),
        ('a primitive reaching past a front door',
         {'topk/select.cuh': '#include "cuda/sort/radix.cuh"\n'}, None,
         'src/cuda/topk/select.cuh:1: includes "cuda/sort/radix.cuh" (sort)'),
        ('a relative include across folders',
         {'util/bad.h': '#include "../engine/bounds.cuh"\n'}, None,
         'src/cuda/util/bad.h:1: includes "../engine/bounds.cuh" (engine)'),
        ('a folder missing from LAYERS.txt',
         {'select/select.cu': '#include "cuda/util/check.h"\n'}, None,
         'src/cuda/select/select.cu:1: select is not a unit'),
        ('an include of a file that does not exist',
         {'sort/old.cu': '#include "cuda/util/moved_away.cuh"\n'}, None,
         'src/cuda/sort/old.cu:1: includes "cuda/util/moved_away.cuh", which does not exist'),
        ('a rule naming a unit listed after it (a cycle could follow)', {}, layers + 'unit late: later\nunit later:\n',
         'later is not a unit listed before it'),
        ('a folder without a line takes the "primitives:" rule',
         {'select/select.cu': '#include "cuda/util/check.h"\n#include "cuda/engine/bounds.cuh"\n'},
         layers + 'primitives: engine util\n', None),
        ('a folder without a line calling a primitive',
         {'select/select.cu': '#include "cuda/util/check.h"\n#include "cuda/sort/sort.h"\n'},
         layers + 'primitives: engine util\n',
         'src/cuda/select/select.cu:2: includes "cuda/sort/sort.h" (sort), but LAYERS.txt lets select include only: '
         'engine util'),
        ('"primitives:" naming a unit not listed before it', {}, 'primitives: engine\n' + layers,
         'primitives: names engine, but engine is not a unit listed before it'),
        ('"primitives:" naming every front door (a primitive calling another gets its own line)', {},
         'unit util:\nunit engine: util\nprimitives: <primitive>/<primitive>.h util\n',
         'primitives: names <primitive>/<primitive>.h, but <primitive> is not a unit listed before it'),
        ('a top file through every front door, a folder without a line included',
         {'backend.cpp': '#include "cuda/topk/topk.h"\n#include "cuda/select/select.h"\n',
          'topk/topk.h': '', 'select/select.h': '#include "cuda/util/check.h"\n'},
         layers + 'primitives: engine util\nunit backend.cpp: <primitive>/<primitive>.h util\n', None),
        ('a top file past a front door',
         {'backend.cpp': '#include "cuda/topk/topk.h"\n#include "cuda/sort/radix.cuh"\n', 'topk/topk.h': ''},
         layers + 'unit backend.cpp: <primitive>/<primitive>.h util\n',
         'src/cuda/backend.cpp:2: includes "cuda/sort/radix.cuh" (sort)'),
    ]
    failures = 0
    for what, extra, layers_text, expected in cases:
        with tempfile.TemporaryDirectory() as root:
            write(os.path.join(root, 'src', 'cuda', 'LAYERS.txt'), layers_text or layers)
            for relative, text in {**good, **extra}.items():
                write(os.path.join(root, 'src', 'cuda', relative), text)
            try:
                report = '\n'.join(check_tree(root))
            except LayersError as error:
                report = str(error)
        ok = report == '' if expected is None else expected in report
        print(f'{"ok  " if ok else "FAIL"} {what}')
        if not ok:
            print(f'     expected {expected!r}; got:\n     ' + (report.replace('\n', '\n     ') or '(no problem)'))
            failures += 1
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    parser.add_argument('--root', default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        help='the repository root (default: the one holding this script)')
    parser.add_argument('--self-test', action='store_true', help='check that the checker catches bad includes')
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    try:
        problems = check_tree(args.root)
    except LayersError as error:
        print(f'check_layers: {error}', file=sys.stderr)
        return 2
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f'check_layers: {len(problems)} include(s) outside src/cuda/LAYERS.txt', file=sys.stderr)
        return 1
    print('check_layers: every include in src/cuda follows src/cuda/LAYERS.txt')
    return 0


if __name__ == '__main__':
    sys.exit(main())
