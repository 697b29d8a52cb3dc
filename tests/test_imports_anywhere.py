"""Every module of the lab imports on a system without POSIX-only modules (Windows).

The POSIX-only modules are hidden (an import of them fails as on Windows) in a fresh
interpreter, which then imports every module of both installed roots.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

HIDDEN = ("fcntl", "resource", "termios", "tty", "pty", "grp", "pwd")

SCRIPT = textwrap.dedent(
    """
    import importlib, pkgutil, sys
    for name in {hidden!r}:
        sys.modules[name] = None  # "import fcntl" raises ImportError, as on Windows
    import uno_env, unolab
    failed = []
    for root in (uno_env, unolab):
        for info in pkgutil.walk_packages(root.__path__, root.__name__ + "."):
            if info.name.rsplit(".", 1)[-1] == "__main__" or ".precompiled" in info.name:
                continue
            try:
                importlib.import_module(info.name)
            except ImportError as err:
                failed.append(f"{{info.name}}: {{err}}")
    print("\\n".join(failed) or "ok")
    """
)


def test_every_module_imports_without_posix_only_modules() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(hidden=HIDDEN)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok", done.stdout


def test_the_hidden_modules_really_fail_to_import() -> None:
    """The test above proves something only if hiding a module makes its import fail."""
    script = "import sys; sys.modules['fcntl'] = None\ntry:\n import fcntl\nexcept ImportError:\n print('hidden')"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.stdout.strip() == "hidden"
