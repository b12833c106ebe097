#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compares two `cuobjdump -sass` dumps function by function.

Usage: compare_sass.py BEFORE.sass AFTER.sass [OLD=NEW ...]

For checking that a change only moved code: dump the library (or its CUDA
objects) before and after, e.g.
    cuobjdump -sass build/libgpuprim.a > after.sass
and compare. Functions are matched by demangled name with anonymous
namespaces dropped (nvcc names a file's anonymous namespace after its path,
so a moved file, or the same file built from another directory, renames
its kernels) and with each OLD=NEW type rename applied; their instructions
must be identical. Exit status 0 when every function matches, 1 otherwise.
Needs c++filt (binutils); python3 standard library otherwise.

No GPU or full toolkit is needed for the dumps: where the CUDA toolkit has
nvcc but no cuobjdump (this project's VMs), the PyPI wheels
nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm (13.5) carry both programs
(`pip download --no-deps` them, unzip, put nvidia/cu13/bin on PATH); they
read the cubins nvcc 13.0 makes.
"""

import collections
import re
import subprocess
import sys

ANONYMOUS = re.compile(r'\d+_GLOBAL__N__[0-9a-f]+_\d+_\w+?_[0-9a-f]{8}')


def functions(path):
    """Mangled name -> list of instruction texts (one per definition)."""
    with open(path, encoding='utf-8', errors='replace') as f:
        text = f.read()
    found = collections.defaultdict(list)
    for chunk in re.split(r'\n\s*Function : ', text)[1:]:
        name, _, body = chunk.partition('\n')
        # Instructions and their encodings only: the dump's headers between
        # files and functions are not code.
        found[name.strip()].append('\n'.join(line for line in body.split('\n') if '/*' in line))
    return found


def demangled(names, renames):
    result = subprocess.run(['c++filt'], input='\n'.join(names), capture_output=True, text=True, check=True)
    out = {}
    for name, plain in zip(names, result.stdout.split('\n')):
        plain = plain.replace('(anonymous namespace)::', '')
        for old, new in renames:
            plain = re.sub(r'\b%s\b' % re.escape(old), new, plain)
        out[name] = plain
    return out


def by_plain_name(found, renames):
    plain = demangled(sorted(found), renames)
    grouped = collections.defaultdict(list)
    for name, bodies in found.items():
        grouped[plain[name]].extend(ANONYMOUS.sub('ANON', body) for body in bodies)
    return {name: sorted(bodies) for name, bodies in grouped.items()}


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    renames = [tuple(pair.split('=', 1)) for pair in sys.argv[3:]]
    before, after = functions(sys.argv[1]), functions(sys.argv[2])
    count = lambda found: sum(map(len, found.values()))
    print(f'functions: before {count(before)}, after {count(after)}')
    only_before, only_after = set(before) - set(after), set(after) - set(before)
    hash_only = sum((collections.Counter(ANONYMOUS.sub('ANON', n) for n in only_before)
                     & collections.Counter(ANONYMOUS.sub('ANON', n) for n in only_after)).values())
    print(f'mangled names changed: {len(only_before)} ({hash_only} by the anonymous namespace\'s name alone, '
          f'{len(only_before) - hash_only} by a renamed or moved type)')
    plain_before, plain_after = by_plain_name(before, renames), by_plain_name(after, renames)
    problems = 0
    for name in sorted(set(plain_before) ^ set(plain_after)):
        print(('only before: ' if name in plain_before else 'only after:  ') + name)
        problems += 1
    for name in sorted(set(plain_before) & set(plain_after)):
        if plain_before[name] != plain_after[name]:
            print('SASS differs: ' + name)
            problems += 1
    matched = len(set(plain_before) & set(plain_after))
    print(f'{matched} functions compared by name: '
          + ('all identical' if problems == 0 else f'{problems} differ or are missing'))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
