"""Build the machine code that ships with the wheel: ``python tools/precompile.py``.

The engine is compiled by numba on first use, which takes minutes. The wheel carries the
compiled code of its own sources for a portable CPU level, so that a first start on a
common machine loads it instead (:mod:`uno_env.jit`). This compiles everything
``uno-lab warmup`` compiles, in a child process told to generate code for the level rather
than for this machine (``NUMBA_CPU_NAME``), into a fresh cache, and copies that cache into
``uno_env/precompiled/<level>/<digest>/`` with a ``manifest.json`` naming what it was built
for and the CPU features a machine needs to run it. Older digests of the level are removed.

Run it after any change to the compiled sources (a test says so when the shipped code no
longer matches them). It must run on Linux x86-64 with the CPython the wheel targets.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRECOMPILED = ROOT / "uno_env" / "precompiled"

LEVELS: dict[str, list[str]] = {
    # x86-64-v3 (Haswell, 2013, and Zen, 2017, onwards), as LLVM names the features.
    "x86-64-v3": [
        "cmov", "cx8", "fxsr", "mmx", "sse", "sse2",
        "cx16", "sahf", "popcnt", "sse3", "sse4.1", "sse4.2", "ssse3",
        "avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe", "xsave",
    ],
    # x86-64-v4 (AVX-512: Skylake-X and Zen 4 onwards): the engine's mask loops run about
    # 1.6x faster than on v3 where the CPU has it.
    "x86-64-v4": [
        "cmov", "cx8", "fxsr", "mmx", "sse", "sse2",
        "cx16", "sahf", "popcnt", "sse3", "sse4.1", "sse4.2", "ssse3",
        "avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe", "xsave",
        "avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl",
    ],
}  # fmt: skip
"""The CPU levels built, with the features a machine needs for each."""

_CHILD = """
import json, sys
from numba.core.registry import cpu_target
from unolab.warmup import warm_up
from uno_env import jit_cache
warm_up()
magic = cpu_target.target_context.codegen().magic_tuple()
json.dump({"cache": jit_cache.CACHE_DIR, "magic": list(magic)}, sys.stdout)
"""


def build(level: str) -> Path:
    """Compile everything for ``level`` and install it under ``uno_env/precompiled``."""
    with tempfile.TemporaryDirectory(prefix="uno-lab-precompile-") as scratch:
        env = dict(os.environ)
        env.update(
            UNO_LAB_CACHE_DIR=scratch,
            UNO_LAB_NO_PRECOMPILED="1",  # compile everything, load nothing shipped
            NUMBA_CPU_NAME=level,
            NUMBA_CPU_FEATURES="",  # the level's own features, not this machine's
        )
        started = time.monotonic()
        print(f"compiling for {level} (a few minutes)...", flush=True)
        child = subprocess.run(
            [sys.executable, "-c", _CHILD], env=env, cwd=ROOT, capture_output=True, text=True
        )
        if child.returncode != 0:
            sys.exit(f"precompile: compiling for {level} failed:\n{child.stderr}")
        built = json.loads(child.stdout.strip().splitlines()[-1])
        cache = Path(built["cache"])
        triple, cpu_name, cpu_features = built["magic"]
        if cpu_name != level or cpu_features != "":
            sys.exit(f"precompile: numba generated code for {cpu_name!r} {cpu_features!r}")
        digest = cache.name
        target = PRECOMPILED / level
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        shutil.copytree(
            cache, target / digest, ignore=shutil.ignore_patterns("warm", "*.tmp", "tmp*")
        )
        import numba

        manifest = {
            "digest": digest,
            "numba": numba.__version__,
            "python": f"{sys.version_info.major}.{sys.version_info.minor}",
            "triple": triple,
            "cpu_name": cpu_name,
            "cpu_features": cpu_features,
            "requires": LEVELS[level],
        }
        (target / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
        files = sum(1 for path in (target / digest).rglob("*") if path.is_file())
        size = sum(path.stat().st_size for path in (target / digest).rglob("*") if path.is_file())
        print(
            f"{level}: {files} files, {size / 2**20:.1f} MiB in {target / digest} "
            f"({time.monotonic() - started:.0f} s)"
        )
        return target


def main() -> None:
    """Build every level (or the ones named)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("levels", nargs="*", metavar="LEVEL", help=f"default: {list(LEVELS)}")
    levels = parser.parse_args().levels or list(LEVELS)
    unknown = [level for level in levels if level not in LEVELS]
    if unknown:
        parser.error(f"unknown level {unknown[0]!r}: choose from {', '.join(LEVELS)}")
    for level in levels:
        build(level)


if __name__ == "__main__":
    main()
