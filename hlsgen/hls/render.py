"""The one Jinja environment that prints every HLS artefact from `templates/hls/*.j2`.

StrictUndefined: a variable the Python side forgot fails the build instead of printing nothing. A template
error is re-raised as `TemplateError` naming the template (and the line, when Jinja knows it).
"""
from __future__ import annotations

import functools

import jinja2

from ..resources import data_dir


class TemplateError(Exception):
    """A template failed to render: a bug in hlsgen (a template and its Python side disagree)."""


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
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(data_dir("templates") / "hls")),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.globals["guarded"] = guarded
    env.filters["chomp"] = chomp
    return env


def render(template: str, **context) -> str:
    """Render `templates/hls/<template>` with `context`; every failure names the template."""
    try:
        return environment().get_template(template).render(**context)
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateError(f"templates/hls/{template}, line {exc.lineno}: {exc.message}") from exc
    except Exception as exc:  # undefined variables, and errors raised while an expression evaluates
        raise TemplateError(f"{_where(exc, template)}: {type(exc).__name__}: {exc}") from exc


def _where(exc: Exception, template: str) -> str:
    """The innermost template (an included one, if the error is there) and line the error came from."""
    where = f"templates/hls/{template}"
    tb = exc.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if name.endswith(".j2"):
            where = f"templates/hls/{name.rsplit('/', 1)[-1]}, line {tb.tb_lineno}"
        tb = tb.tb_next
    return where
