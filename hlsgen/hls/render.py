"""The Jinja environment that prints every HLS artefact from `templates/hls/*.j2` (`hlsgen.templating`)."""
from __future__ import annotations

import functools

import jinja2

from ..templating import TemplateError, make_environment, render_with

__all__ = ["TemplateError", "chomp", "environment", "guarded", "render"]


SYNTHESIS_ONLY = ("#ifdef __SYNTHESIS__", "#endif")


def guarded(pragmas: list[str], indent: int) -> list[str]:
    """Pragma lines inside `#ifdef __SYNTHESIS__` (Vitis HLS defines it while it synthesizes), so that a
    plain C++ compiler never sees a pragma it does not know; nothing for no pragmas."""
    if not pragmas:
        return []
    pad = " " * indent
    return [pad + SYNTHESIS_ONLY[0], *(pad + p for p in pragmas), pad + SYNTHESIS_ONLY[1]]


def chomp(text: str) -> str:
    """Drop one trailing newline (a recursive macro's last line, printed where a line already ends)."""
    return text[:-1] if text.endswith("\n") else text


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    return make_environment("hls", filters={"chomp": chomp}, globals_={"guarded": guarded})


def render(template: str, **context) -> str:
    """Render `templates/hls/<template>` with `context`; every failure names the template."""
    return render_with(environment(), "hls", template, **context)
