"""The Jinja plumbing every generator shares: one environment per template folder under `templates/`,
StrictUndefined (a variable the Python side forgot fails the build instead of printing nothing), and
template errors re-raised as `TemplateError` naming the template and line."""
from __future__ import annotations

from typing import Any, Callable

import jinja2

from .resources import data_dir


class TemplateError(Exception):
    """A template failed to render: a bug in hlsgen (a template and its Python side disagree)."""


def make_environment(folder: str, autoescape: bool = False, filters: dict[str, Callable] | None = None,
                     globals_: dict[str, Any] | None = None) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(data_dir("templates") / folder)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=autoescape,
    )
    env.filters.update(filters or {})
    env.globals.update(globals_ or {})
    return env


def render_with(env: jinja2.Environment, folder: str, template: str, **context) -> str:
    """Render `templates/<folder>/<template>`; every failure names the template (the innermost one)."""
    try:
        return env.get_template(template).render(**context)
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateError(f"templates/{folder}/{template}, line {exc.lineno}: {exc.message}") from exc
    except Exception as exc:  # undefined variables, and errors raised while an expression evaluates
        raise TemplateError(f"{_where(exc, folder, template)}: {type(exc).__name__}: {exc}") from exc


def _where(exc: Exception, folder: str, template: str) -> str:
    """The innermost template (an included one, if the error is there) and line the error came from."""
    where = f"templates/{folder}/{template}"
    tb = exc.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if name.endswith(".j2"):
            where = f"templates/{folder}/{name.rsplit('/', 1)[-1]}, line {tb.tb_lineno}"
        tb = tb.tb_next
    return where
