"""The guard the `hlsgen` command runs its CLI behind (hlsgen.__main__): a Ctrl-C or SIGTERM while the CLI loads
(a second or more: numpy, onnx, the compiler) or runs ends as during a build, one line, exit 130 (SIGTERM:
143), never a traceback; the tools' own children are stopped."""
from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable

from .children import adopt_orphans, stop_descendants
from .errors import INTERRUPTED_EXIT, STOPPED, TERMINATED_EXIT, Terminated


def guarded(load: Callable[[], Callable[[], int]]) -> None:
    """Run the CLI's main, which `load` returns (importing it: the slow part), behind the guard, and exit
    with its code; a Ctrl-C or SIGTERM, from the first instruction on, is one line and exit 130 (143)."""
    signal.signal(signal.SIGTERM, _terminate)
    try:
        adopt_orphans()  # inside the guard: the signal may arrive while ctypes loads
        try:
            main = load()
        except ImportError as error:  # a C extension's initialization turns the signal's exception into this
            raise _stop_behind(error) or error
        code = main()
        _hold_signals()  # the outcome stands: a signal from here on would only end it in a traceback
    except (KeyboardInterrupt, Terminated) as stop:  # while the CLI loads, or as main() returns
        _hold_signals()
        code = INTERRUPTED_EXIT if isinstance(stop, KeyboardInterrupt) else TERMINATED_EXIT
        print(STOPPED[code], file=sys.stderr)
    if code in STOPPED:
        stop_descendants()  # the tools' own children (g++ under make) outlive the tool Python killed
        # The cleanup already ran (the staging folder is gone). Leave at once: CPython can still kill an
        # interpreter that caught a Ctrl-C with SIGINT on its way out (its "unhandled KeyboardInterrupt"
        # flag races, python/cpython#128130), which a caller sees as a signal death instead of 130.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def _stop_behind(error: BaseException) -> BaseException | None:
    """The Ctrl-C or SIGTERM an import failed of (onnxruntime's module init, interrupted, raises
    "ImportError: initialization failed" from it), or None."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, (KeyboardInterrupt, Terminated)):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


def _hold_signals() -> None:
    """Ignore Ctrl-C and SIGTERM from here on, in every thread: blocking them in this one is not enough, as
    CPython's finalization resets the handlers it installed to the default and a signal then delivered to
    another thread (onnxruntime's pool) would kill the finished process (-15 rather than its exit code)."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})


def _terminate(signum, frame) -> None:
    """SIGTERM's default would end the process at once, leaving its staging folder for the next build."""
    raise Terminated()
