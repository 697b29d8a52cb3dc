"""MkDocs hooks of the docs site (mkdocs.yml ``hooks:``): every page is self-contained.

The notebooks' pages come from nbconvert's template, which adds a loader for mermaid diagrams
that imports mermaid from a CDN when a page has one. The notebooks draw no mermaid diagram,
and a page of this site loads nothing from another host, so the loader is left out.
"""

from __future__ import annotations

import re
from typing import Any

MERMAID_LOADER = re.compile(
    r'<script type="module">\s*document\.addEventListener\("DOMContentLoaded", async \(\) => \{'
    r'\s*const diagrams = document\.querySelectorAll\("\.jp-Mermaid.*?</script>',
    flags=re.S,
)
"""nbconvert's ``mermaid_js`` script (share/jupyter/nbconvert/templates/lab/mermaidjs.html.j2)."""


def on_post_page(output: str, **kwargs: Any) -> str:
    """The page without nbconvert's mermaid loader."""
    del kwargs
    return MERMAID_LOADER.sub("", output)
