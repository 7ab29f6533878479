"""The ``planner`` command line (§12).

Exit codes: 0 ok, 1 infeasible or verification failed, 2 bad input (a bad
file, value or flag), 3 internal error (a bug: please report it with
``--debug``), 130 interrupted (Ctrl-C). Errors are one short message;
``--debug`` shows the traceback. Output files are checked before any solve
and written atomically. A closed pipe (``planner validate X | head -1``)
ends the command quietly.
"""

from __future__ import annotations

import os
import re
import signal
import sys
import traceback

from planner.cli.plans import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK
from planner.errors import InputError

EXIT_INTERNAL, EXIT_INTERRUPTED = 3, 130

from planner.cli.parser import build_parser  # noqa: E402

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


class SafeStream:
    """A text stream that prints control characters as escapes (``\\x1b``): a key or value from a
    file cannot clear the terminal, set its title or rewrite a line the planner printed. Newlines and
    tabs pass; progress bars write to ``raw``."""

    def __init__(self, raw) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        return self.raw.write(_CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text))

    def __getattr__(self, name: str):
        return getattr(self.raw, name)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code. Everything printed goes through :class:`SafeStream`."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeStream(out), SafeStream(err)
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = out, err


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse: bad usage is bad input
        return EXIT_BAD_INPUT if e.code not in (0, None) else EXIT_OK
    try:
        return int(args.func(args))
    except InputError as e:
        if args.debug:
            traceback.print_exc()
        print(f"error: {e.render()}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        raise
    except BrokenPipeError:
        raise
    except Exception as e:  # noqa: BLE001 - the CLI never shows a traceback unless asked
        from planner.errors import SolverFailure

        if isinstance(e, SolverFailure):
            if args.debug:
                traceback.print_exc()
            print(f"error: {e}", file=sys.stderr)
            return EXIT_FAILED
        if args.debug:
            traceback.print_exc()
        else:
            print(
                f"internal error: {type(e).__name__}: {str(e)[:300]} (run with --debug for the traceback; "
                "exit code 3)",
                file=sys.stderr,
            )
        return EXIT_INTERNAL


def _interrupted(_signum, _frame) -> None:
    """Ctrl-C at any moment: one line, exit 130. Writes are atomic, so nothing is left half-written."""
    try:
        os.write(2, b"\ninterrupted\n")
    finally:
        os._exit(EXIT_INTERRUPTED)


def entry() -> None:
    """Console-script entry point: Ctrl-C and closed pipes handled before anything heavy loads."""
    from planner.clock import RUN_STARTED, process_started

    RUN_STARTED[:] = [process_started()]
    signal.signal(signal.SIGINT, _interrupted)
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly (Python docs, "Note on SIGPIPE").
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        code = EXIT_OK
    except KeyboardInterrupt:
        _interrupted(None, None)
        return
    sys.exit(code)
