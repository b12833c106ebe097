#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ctest's entry to the Python package tests: the package's source
(python/gpuprim) on the library just built (GPUPRIM_LIBRARY, set by CMake).
Exits 77 (skipped, with the reason) when numpy or pytest is missing.
Arguments: test files to run instead of the whole folder (the distributed
tests under mpirun run one file; without mpi4py they are skipped: 77)."""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))


def skip(reason):
    """Exits 77 (ctest's "skipped"), the reason also in ctest's note file."""
    print(reason)
    note = os.environ.get("GPUPRIM_TEST_SKIP_NOTE")
    if note:
        os.makedirs(os.path.dirname(note), exist_ok=True)
        with open(note, "w") as file:
            file.write(reason + "\n")
    sys.exit(77)


missing = []
for module in ("numpy", "pytest"):
    try:
        __import__(module)
    except ImportError:
        missing.append(module)
if missing:
    skip(f"python package tests skipped: {', '.join(missing)} not installed for {sys.executable} "
         f"(python3 -m pip install {' '.join(missing)})")
targets = [a for a in sys.argv[1:] if a.endswith(".py")]
options = [a for a in sys.argv[1:] if not a.endswith(".py")]
if targets and any("distributed" in t for t in targets):
    try:
        __import__("mpi4py")
    except ImportError:
        skip(f"distributed Python tests skipped: mpi4py not installed for {sys.executable} "
             "(python3 -m pip install mpi4py)")
sys.path.insert(0, os.path.dirname(here))  # python/, for the gpuprim package's source
extension_dir = os.environ.get("GPUPRIM_EXTENSION_DIR")
if not extension_dir or not os.path.isdir(extension_dir) or not any(
        name.startswith("_ext.") for name in os.listdir(extension_dir)):
    skip("python package tests skipped: the package's compiled layer (gpuprim._ext) was not built: "
         "CMake found no nanobind or no Python >= 3.10 with its headers (python3 -m pip install "
         "nanobind, then configure again)")
import pytest  # noqa: E402

# A test that hangs prints every thread's traceback after 240 s instead of
# dying silently at ctest's timeout.
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "-o", "faulthandler_timeout=240",
                      "--rootdir", here] + (targets or [here]) + options))
