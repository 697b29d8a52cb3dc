"""The docs site, built as ``make docs`` builds it: no raw Sphinx role reaches a page, no page
loads anything from another host, and the home page's commands are the README's."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from types import ModuleType

import pytest
from support import ROOT

from unolab.shipped_configs import shipped_configs

RAW_ROLE = re.compile(r":(?:py:)?(?:func|class|mod|data|meth|attr|exc|obj|const):(?:<code>|`)")
"""A Sphinx role as Markdown leaves it in a page: ``:func:<code>name</code>``."""

OUTSIDE = re.compile(r"^\s*(?:https?:)?//", flags=re.I)
"""An address on another host (``https://...``, or ``//host/...``)."""

LOADED = {"src", "href", "srcset", "data", "poster"}
"""The attributes through which a tag makes the browser fetch something."""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built from the checkout with mkdocs.yml (``--strict``, as ``make docs``)."""
    out = tmp_path_factory.mktemp("site")
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(out)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    return out


def _pages(site: Path) -> dict[str, str]:
    pages = {p.relative_to(site).as_posix(): p.read_text("utf-8") for p in site.rglob("*.html")}
    assert "index.html" in pages and "api/agents/index.html" in pages
    return pages


class _Fetches(HTMLParser):
    """What a page makes the browser fetch from another host: tag attributes, the code of
    inline scripts and the CSS of inline styles."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self._inline: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if tag == "a" and name == "href":
                continue  # a link to follow, not something the page loads
            if name in LOADED and value and any(OUTSIDE.match(v) for v in value.split(",")):
                self.found.append(f"<{tag} {name}={value!r}>")
            if name == "style" and value and re.search(r"url\(\s*['\"]?(https?:)?//", value):
                self.found.append(f"<{tag} style={value!r}>")
        self._inline = tag if tag in ("script", "style") else None

    def handle_endtag(self, tag: str) -> None:
        self._inline = None

    def handle_data(self, data: str) -> None:
        if self._inline == "script" and re.search(r"['\"`](https?:)?//", data):
            self.found.append(f"<script> code with an address: {data.strip()[:120]!r}")
        if self._inline == "style" and re.search(r"(url\(|@import)\s*['\"]?(https?:)?//", data):
            self.found.append(f"<style> with an address: {data.strip()[:120]!r}")


def fetched_from_outside(page: str) -> list[str]:
    """Everything ``page`` loads from another host (links to follow are not loads)."""
    parser = _Fetches()
    parser.feed(page)
    parser.close()
    return parser.found


def test_the_checks_find_what_they_look_for() -> None:
    # The API pages as they looked when docstrings' roles reached them untouched.
    assert RAW_ROLE.findall("see :func:<code>make_agent</code> and :mod:`uno_env.rng`") == [
        ":func:<code>",
        ":mod:`",
    ]
    # The material theme's Google fonts, and nbconvert's mermaid loader from a CDN.
    head = (
        '<link rel="preconnect" href="https://fonts.gstatic.com" crossorigin>'
        '<link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Roboto">'
        '<script type="module">const m = await import("https://cdnjs.cloudflare.com/m.mjs");'
        "</script><img src='//example.org/a.png'>"
        '<style>@import url("https://example.org/a.css");</style>'
    )
    assert len(fetched_from_outside(head)) == 5
    local = (
        '<link rel="stylesheet" href="../assets/main.css"><script src="../bundle.js"></script>'
        '<a href="https://arxiv.org/abs/2406.04201">a paper</a><img src="web_table.png">'
        "<style>.x{background:url(\"data:image/svg+xml,<svg xmlns='http://www.w3.org/2000/svg'/>\")}"
        "</style>"
    )
    assert fetched_from_outside(local) == []


def test_no_page_shows_a_raw_sphinx_role(site: Path) -> None:
    roles = {
        name: RAW_ROLE.findall(page) for name, page in _pages(site).items() if RAW_ROLE.search(page)
    }
    assert roles == {}, f"raw Sphinx roles: { {n: len(r) for n, r in roles.items()} }"
    # The roles became links where the reference shows the object (a name resolved from the
    # docstring's imports, a re-exported name, a method), and plain code where it does not.
    agents = (site / "api" / "agents" / "index.html").read_text("utf-8")
    assert re.search(
        r'href="#unolab\.agents\.registry\.make_agent"><code>make_agent</code>', agents
    )
    assert re.search(r'href="../uno_env/#uno_env\.policy\.Policy"><code>Policy</code>', agents)
    assert re.search(r'href="#unolab\.agents\.progress\.Bar\.update"><code>', agents)
    core = (site / "api" / "core" / "index.html").read_text("utf-8")
    assert "<code>uno_env.core.events</code>" in core and "<autoref" not in core


def test_no_page_loads_anything_from_another_host(site: Path) -> None:
    loads = {
        name: found for name, page in _pages(site).items() if (found := fetched_from_outside(page))
    }
    assert loads == {}
    # The theme's bundle would fetch mermaid from a CDN for a diagram: the pages draw none.
    assert not [name for name, page in _pages(site).items() if 'class="mermaid"' in page]


def _commands(text: str) -> list[str]:
    return [
        " ".join(shlex.split(line.split("#")[0]))
        for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S)
        for line in block.splitlines()
        if line.startswith("uno-lab ")
    ]


def test_the_home_page_shows_the_readmes_commands_with_config_names() -> None:
    home = _commands((ROOT / "docs" / "index.md").read_text("utf-8"))
    readme = _commands((ROOT / "README.md").read_text("utf-8"))
    as_names = [re.sub(r"--config configs/(\S+)\.yaml", r"--config \1", c) for c in readme]
    assert home == as_names
    configs = [c.split("--config ")[1].split()[0] for c in home if "--config" in c]
    assert configs and set(configs) <= set(shipped_configs()), configs
    assert "](web_table.png)" in (ROOT / "docs" / "index.md").read_text("utf-8")


def _load_tool(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_role_resolves_in_its_docstrings_scope() -> None:
    from griffe import temporary_visited_package

    roles = _load_tool("griffe_sphinx_roles")
    files = {
        "__init__.py": "",
        "things.py": "class Thing:\n    def act(self) -> None: ...\n\ndef helper() -> None: ...\n",
        "user.py": "from pkg.things import helper\nLIMIT = 3\n",
    }
    with temporary_visited_package("pkg", files) as pkg:
        user, thing = pkg["user"], pkg["things"]["Thing"]
        text = roles.convert(
            user,
            ":func:`helper`, :data:`LIMIT`, :class:`~pkg.things.Thing`, :class:`OSError`, "
            ":func:`the helper <helper>`",
        )
        assert text == (
            '<autoref identifier="pkg.things.helper" optional>`helper`</autoref>, '
            '<autoref identifier="pkg.user.LIMIT" optional>`LIMIT`</autoref>, '
            '<autoref identifier="pkg.things.Thing" optional>`Thing`</autoref>, `OSError`, '
            '<autoref identifier="pkg.things.helper" optional>`the helper`</autoref>'
        )
        method = roles.convert(thing["act"], ":meth:`act` of :class:`Thing`")
        assert "pkg.things.Thing.act" in method and 'identifier="pkg.things.Thing"' in method
