"""One model worker process: load the checkpoint once, then answer named jobs until told to stop.

Started by serving/pool.py as `python -m serving.worker FD`, a fresh interpreter (no fork of a
process that already runs torch threads, and unlike multiprocessing's "spawn" it does not re-import
the caller's __main__, which for app.py would build a whole Gradio page in every worker). FD is
one end of a socket pair wrapped in a multiprocessing Connection. Messages (pickled; the results
are plain data such as a TranslationTrace, never weights):

    parent -> worker: {"sys_path", "checkpoint", "jobs": {name: "module:qualname"}, "threads", "device"}
    worker -> parent: ("ready", pid) | ("error", exception)
    parent -> worker: (job name, kwargs) ... or None to stop
    worker -> parent: ("ok", result) | ("error", exception)
"""

from __future__ import annotations

import importlib
import os
import pickle
import signal
import sys
import traceback
from multiprocessing.connection import Connection


def resolve(reference: str):
    """The function named "module:qualname"."""
    module_name, _, qualname = reference.partition(":")
    value = importlib.import_module(module_name)
    for part in qualname.split("."):
        value = getattr(value, part)
    return value


def portable(error: BaseException) -> BaseException:
    """The exception itself if it survives pickling, else a RuntimeError with its type and message.

    The worker's traceback travels as a note (shown in logs, not in str(error), so a page shows
    only the message).
    """
    error.add_note("in the model worker:\n" + "".join(traceback.format_exception(error)).rstrip())
    try:
        pickle.loads(pickle.dumps(error))
        return error
    except Exception:  # noqa: BLE001 - any exception that cannot cross the process boundary
        return RuntimeError(f"{type(error).__name__}: {error}")


def reply(conn: Connection, status: str, value: object) -> None:
    try:
        conn.send((status, value))
    except (pickle.PicklingError, TypeError, AttributeError) as error:  # a result that cannot be pickled
        conn.send(("error", portable(error)))


def serve(conn: Connection) -> int:
    init = conn.recv()
    sys.path[:] = init["sys_path"]  # the caller's import path, as multiprocessing's spawn does
    try:
        import torch

        torch.set_num_threads(init["threads"])  # several workers share the cores: one thread each
        torch.set_num_interop_threads(1)
        from model.checkpoints.checkpoint import load_checkpoint

        jobs = {name: resolve(reference) for name, reference in init["jobs"].items()}
        checkpoint = load_checkpoint(init["checkpoint"], device=init.get("device", "cpu"))
    except Exception as error:  # noqa: BLE001 - reported to the pool, which raises it to its caller
        reply(conn, "error", portable(error))
        return 1
    conn.send(("ready", os.getpid()))
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):  # the pool's process has gone: nothing left to serve
            return 0
        if message is None:
            return 0
        name, kwargs = message
        try:
            result = jobs[name](checkpoint, **kwargs)
        except Exception as error:  # noqa: BLE001 - the caller gets the same type and message
            reply(conn, "error", portable(error))
            continue
        reply(conn, "ok", result)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in a terminal is the pool's to handle
    with Connection(int(argv[0])) as conn:
        try:
            return serve(conn)
        except (BrokenPipeError, ConnectionResetError, EOFError):
            return 0


if __name__ == "__main__":
    sys.exit(main())
