"""A griffe extension for the docs site: Sphinx roles in docstrings become cross-references.

The docstrings name other objects the Sphinx way (``:func:`make_agent```,
``:class:`~uno_env.rules.Rules```, ``:mod:`uno_env.rng```), which Markdown would show raw.
Before mkdocstrings renders a docstring, each role becomes an autorefs cross-reference to
the object's full path, resolved in the docstring's scope (the object's members, its
module's names and imports): a link where the API reference shows that object, plain inline
code where it does not (a built-in, a private name, a module the reference leaves out), so a
``--strict`` build never fails on one. A ``~`` shows only the last part of the name, and
``title <target>`` shows the title.

mkdocs.yml loads it under the Python handler's ``extensions``. It is a tool of the docs site,
not part of the installed packages.
"""

from __future__ import annotations

import html
import re
from typing import Any

from griffe import Extension, GriffeLoader, Module, NameResolutionError, Object

ROLE = re.compile(
    r":(?:py:)?(?P<kind>func|class|mod|data|meth|attr|exc|obj|const):`(?P<body>[^`]+)`"
)
"""A Sphinx cross-reference role of the Python domain."""

EXPLICIT_TITLE = re.compile(r"(?P<title>.+?)\s*<(?P<target>[^<>]+)>", flags=re.S)
"""A role's ``title <target>`` form."""


def full_path(obj: Object, target: str) -> str | None:
    """The full dotted path ``target`` names as seen from ``obj``'s docstring, or None.

    The first part of the name is looked up in ``obj``'s scope (its members, then its
    parents' members, imports included); a name that is not found there is taken as a full
    path when it has dots (``uno_env.core.step``), and as unresolvable when it has none
    (``OSError``).
    """
    head, dot, rest = target.partition(".")
    try:
        base = obj.resolve(head)
    except NameResolutionError:
        return target if dot else None
    return f"{base}{dot}{rest}"


def cross_reference(obj: Object, match: re.Match[str]) -> str:
    """The Markdown for one role: an optional cross-reference around the name in code."""
    body = " ".join(match["body"].split())
    explicit = EXPLICIT_TITLE.fullmatch(body)
    target = (explicit["target"] if explicit else body).strip().lstrip("~.")
    if explicit:
        title = explicit["title"]
    elif body.startswith("~"):
        title = target.rsplit(".", 1)[-1]
    else:
        title = target
    code = f"`{title}`"
    path = full_path(obj, target)
    if path is None:
        return code
    # ``optional``: autorefs links it when the site shows the object and otherwise leaves
    # the code as it is, where a plain [title][path] reference would fail a --strict build.
    return f'<autoref identifier="{html.escape(path)}" optional>{code}</autoref>'


def convert(obj: Object, text: str) -> str:
    """``text`` (a docstring of ``obj``) with every Sphinx role made a cross-reference."""
    return ROLE.sub(lambda match: cross_reference(obj, match), text)


class SphinxRoles(Extension):
    """Rewrites the Sphinx roles of every docstring of a package once it is loaded."""

    def on_package(self, *, pkg: Module, loader: GriffeLoader, **kwargs: Any) -> None:
        """Convert the docstrings of ``pkg`` and of everything defined in it."""
        del loader, kwargs
        self._convert_tree(pkg)

    def _convert_tree(self, obj: Object) -> None:
        if obj.docstring is not None and ":" in obj.docstring.value:
            obj.docstring.value = convert(obj, obj.docstring.value)
        for member in obj.members.values():
            if not member.is_alias:  # an import: its docstring is converted where it is defined
                self._convert_tree(member)  # type: ignore[arg-type]
