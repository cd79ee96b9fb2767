"""Stopping a run when told: SIGTERM (Kubernetes, systemd, ``timeout``) and Ctrl-C.

Why signals went unheard: Dagster's ``execute_in_process`` installs its own SIGINT handler for the
run's length and maps SIGTERM onto it (``dagster._utils.interrupts``). Inside a step the handler
raises ``DagsterExecutionInterruptedError``; a step with a ``RetryPolicy`` turns that into a
retry (``op_execution_error_boundary``: "respect retry policy when interrupts occur"), so the text
stage started again 10-40 s later; and with ``raise_on_error=False`` an interrupt that does end a
run only fails that run, so the CLI went on to the next document. Outside a step the handler
only sets a flag the in-process executor never reads, and the flag is cleared when the run ends.

Two mechanisms, one per way a run is driven:

- ``dagster-ocr run`` owns the signals (:class:`GracefulStop`): each document's run executes on
  a worker thread, where Dagster installs no handlers, and the main thread's handler decides. The
  first SIGTERM or Ctrl-C stops the loop taking documents; the document in flight is abandoned at
  its next page (:meth:`GracefulStop.listener` raises :class:`StopRequested` from the text stage's
  progress report; OCR worker processes are terminated, see ``dagster_ocr.ocr_workers``) or at
  the end of its stage (:meth:`GracefulStop.hook`); once it is being loaded into the warehouse it
  is finished. A second signal, or the grace period running out, exits at once. Nothing is
  half-written either way: each warehouse write is one DuckDB transaction (a process that dies
  mid-write leaves only its last commit), and the OCR checkpoints are written page by page,
  atomically. :class:`ResumeLedger` makes running the same
  command again skip the documents the stopped run finished.
- A Dagster run (the UI, a sensor, a backfill) is the run worker's: Dagster's handler raises in
  the step, and :func:`stop_not_retry` makes the stages with a ``RetryPolicy`` end the run instead
  of retrying it.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

#: exit status of a run stopped by a signal: 128 + the signal's number, as a shell reports it
EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}
#: seconds from the first signal to a hard exit when the document in flight has not let go by then
GRACE_SECONDS = 8.0

#: the step that loads a document into the warehouse: from there on a stopped run finishes it...
WAREHOUSE_STEP = "duckdb_tables"
#: ...up to its chunks (BM25 search has it then). Its vectors (kb_vectors: the embedding model, tens
#: of seconds on a long report) are not waited for: a resume re-does the document
CHUNKS_STEP = "knowledge_base"

F = TypeVar("F", bound=Callable[..., Any])


class StopRequested(BaseException):
    """The run was told to stop: raised inside the document in flight to abandon it.

    A ``BaseException``, like ``KeyboardInterrupt``: the core turns an ``Exception`` escaping a
    page into a failed document (which would then be loaded as failed), and Dagster retries both
    an ``Exception`` and an interrupt under a ``RetryPolicy``; a plain ``BaseException`` only fails
    the step, so its downstream stages are skipped and the run ends.
    """


class GracefulStop:
    """SIGTERM / Ctrl-C handling for ``dagster-ocr run`` (see the module's docstring).

    Use as a context manager around the run (main thread only): it installs its handlers and puts
    the previous ones back. ``on_hard_exit`` is called (from the handler) just before a hard exit,
    to print what was done.
    """

    def __init__(self, grace_s: float = GRACE_SECONDS, on_hard_exit: Callable[[int], None] | None = None):
        self.grace_s = grace_s
        self.on_hard_exit = on_hard_exit
        self.signum: int | None = None  # the first signal received
        self.at: float | None = None  # when (time.monotonic)
        self.abandoned = False  # StopRequested was raised inside the document in flight
        self.loading = False  # the document in flight has reached its warehouse load
        self.chunked = False  # ... and its knowledge-base chunks: only its vectors are left
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> GracefulStop:
        if threading.current_thread() is threading.main_thread():
            for signum in EXIT_CODES:
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()

    @property
    def requested(self) -> bool:
        return self.signum is not None

    @property
    def exit_code(self) -> int:
        return EXIT_CODES.get(self.signum, 1) if self.signum is not None else 0

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name if self.signum is not None else ""

    def overdue(self) -> bool:
        """Whether the grace period after the first signal is over."""
        return self.at is not None and time.monotonic() - self.at >= self.grace_s

    def _handle(self, signum: int, _frame: object) -> None:
        if self.signum is None:
            self.signum, self.at = signum, time.monotonic()
            print(
                f"\n{signal.Signals(signum).name}: stopping: no new documents; the one in flight is "
                f"abandoned at its next page or finished within {self.grace_s:.0f}s "
                "(Ctrl-C again to stop at once)",
                file=sys.stderr,
                flush=True,
            )
            return
        print(f"\n{signal.Signals(signum).name} again: stopping at once", file=sys.stderr, flush=True)
        self.hard_exit(EXIT_CODES.get(signum, 1))

    def listener(self, _progress: object) -> None:
        """A ``dagster_ocr.progress`` listener: abandons the document in flight once told to stop.

        The text stage reports after every page (every ~2 s while OCR workers run), so a document
        in its longest stage lets go within a page of the signal.
        """
        if self.signum is not None:
            self.abandoned = True
            raise StopRequested(f"stopped by {self.name}")

    def check(self) -> None:
        """A ``dagster_ocr.progress`` stop check (work without pages: the embedding's batches)."""
        if self.signum is not None:
            self.abandoned = True
            raise StopRequested(f"stopped by {self.name}")

    def start_document(self) -> None:
        self.abandoned = self.loading = self.chunked = False

    def hook(self) -> Any:
        """A Dagster success hook for the job: once told to stop, the run ends after the stage
        that just finished (the rest are not started), up to the warehouse load. From the load on
        the document is finished up to its chunks (its checks and chunks take about a second), so
        the warehouse never holds a document loaded without its knowledge-base chunks; its vectors
        are left to a resume (embedding a report takes longer than the grace period, and a hard
        exit in its middle would leave the same, less cleanly)."""
        import dagster as dg

        @dg.success_hook(name="stop_between_stages")
        def stop_between_stages(context: dg.HookContext) -> None:
            step = context.step_key.split("[")[0]
            if step == WAREHOUSE_STEP:
                self.loading = True
            elif step == CHUNKS_STEP:
                self.loading, self.chunked = False, True
            if self.signum is not None and not self.loading:
                self.abandoned = True
                raise StopRequested(f"stopped by {self.name} after {context.step_key}")

        return stop_between_stages

    def hard_exit(self, code: int) -> None:
        """Exit now: OCR workers terminated, what was done printed, no clean-up waited for (a page
        being OCR'd on a thread, a run's teardown). The warehouse keeps its last commit."""
        terminate_children()
        if self.on_hard_exit is not None:
            with contextlib.suppress(Exception):
                self.on_hard_exit(code)
        exit_now(code)


def terminate_children() -> None:
    """Terminate this process's multiprocessing children (OCR workers): they would otherwise
    finish the page ranges they hold, minutes of OCR nobody waits for."""
    for child in multiprocessing.active_children():
        with contextlib.suppress(Exception):
            child.terminate()


def exit_now(code: int) -> None:
    """Flush and leave without the interpreter's shutdown, which joins every thread pool's threads
    (a page of OCR still running on one): the exit must come within seconds of the signal."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def run_on_thread(work: Callable[[], Any], stop: GracefulStop, name: str) -> tuple[Any, bool]:
    """Run ``work`` on a worker thread while the main thread stays free for signal handlers.

    Returns (what ``work`` returned, True) or (None, False) when the grace period after a signal
    ran out first (the thread is a daemon: it is left behind for the hard exit). An exception in
    ``work`` is raised here.
    """
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = work()
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            box["error"] = exc

    thread = threading.Thread(target=target, name=name, daemon=True)
    thread.start()
    while thread.is_alive():
        thread.join(0.1)  # returns to run the handlers: Python runs them on the main thread only
        if stop.overdue() and thread.is_alive():
            return None, False
    if "error" in box:
        error = box["error"]
        if isinstance(error, StopRequested):
            return None, True  # raised outside a step (Dagster catches it inside one)
        raise error
    return box.get("result"), True


def stop_not_retry(fn: F) -> F:
    """For a stage with a ``RetryPolicy``: an interrupt (the run terminated from the UI, its pod
    sent SIGTERM) fails the step for good instead of retrying it 10 s later, so the run ends.
    Keeps ``fn``'s signature (Dagster reads its parameters) and its being a generator or not.

    The interrupt is also remembered (:func:`_heard_interrupts`): Dagster's handler raises wherever
    the main thread is, and where that is a ``__del__`` or a weakref callback (PyMuPDF's pages and
    documents are collected all through the text stage) Python prints "Exception ignored" and goes
    on: the step then finished and the run went on to its end (one clean-clone CI run in many).
    Remembered, the interrupt is raised again at the stage's next progress report or stop point,
    and at its end at the latest."""
    import inspect

    import dagster as dg

    def stopped(exc: BaseException) -> dg.Failure:
        return dg.Failure(
            description=f"interrupted ({type(exc).__name__}): the run was told to stop; not retried "
            "(a re-run resumes from the OCR checkpoints)",
            allow_retries=False,
        )

    interrupts = (dg.DagsterExecutionInterruptedError, KeyboardInterrupt)
    if inspect.isgeneratorfunction(fn):

        @functools.wraps(fn)
        def generator(*args: Any, **kwargs: Any) -> Any:
            try:
                with _heard_interrupts() as heard:
                    result = yield from fn(*args, **kwargs)
                    heard()
                return result
            except interrupts as exc:
                raise stopped(exc) from exc

        return generator  # type: ignore[return-value]

    @functools.wraps(fn)
    def function(*args: Any, **kwargs: Any) -> Any:
        try:
            with _heard_interrupts() as heard:
                result = fn(*args, **kwargs)
                heard()
            return result
        except interrupts as exc:
            raise stopped(exc) from exc

    return function  # type: ignore[return-value]


@contextlib.contextmanager
def _heard_interrupts() -> Iterator[Callable[[], None]]:
    """Inside a Dagster step on the main thread: note every SIGINT / SIGTERM before handing it to
    the handler Dagster installed (which raises), and raise ``DagsterExecutionInterruptedError``
    again at every progress report and stop point of the core (:mod:`dagster_ocr.progress`) once
    one was noted, in case the first raise was swallowed. Yields that check. Elsewhere (the CLI
    runs a document on a worker thread and owns the signals: :class:`GracefulStop`) it does
    nothing."""
    import dagster as dg

    from dagster_ocr import progress

    heard: list[int] = []

    def check(*_report: object) -> None:
        if heard:
            raise dg.DagsterExecutionInterruptedError(f"{signal.Signals(heard[0]).name} heard")

    if threading.current_thread() is not threading.main_thread():
        yield check
        return
    # only the signals a Python handler (Dagster's) takes: a default action (terminate) stays so
    previous = {s: h for s in EXIT_CODES if callable(h := signal.getsignal(s))}

    def note(signum: int, frame: Any) -> None:
        heard.append(signum)
        previous[signum](signum, frame)

    for signum in previous:
        signal.signal(signum, note)
    try:
        with progress.listen(check), progress.stoppable(check):
            yield check
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


class ResumeLedger:
    """The documents a run of ``dagster-ocr run`` finished, so that the same command run again
    after a stop re-does only the rest.

    One JSON file in the data folder, rewritten (atomically) after every document and removed when
    the run ends with every document done: its presence means "a run of this command was stopped"
    (by a signal, or killed outright). ``key`` names the command (inbox, warehouse, settings file
    and its content, overrides, engine): a different command starts afresh, and re-runs everything
    as an ordinary re-run does (idempotent: every document's rows are replaced).
    """

    def __init__(self, data_dir: Path, key: str):
        self.path = Path(data_dir) / "stopped_run.json"
        self.key = key
        self.done: list[str] = []
        try:
            saved = json.loads(self.path.read_text())
            if saved.get("key") == key:
                self.done = list(saved.get("done", []))
        except (OSError, ValueError, AttributeError):
            pass  # none, or unreadable: nothing to resume
        self.resumed = list(self.done)  # done by the stopped run(s) before this one

    @staticmethod
    def command_key(*parts: object, settings_file: str | None = None) -> str:
        text = json.dumps([str(p) for p in parts])
        if settings_file:
            with contextlib.suppress(OSError):
                text += hashlib.sha256(Path(settings_file).read_bytes()).hexdigest()
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def mark_done(self, doc_id: str) -> None:
        if doc_id not in self.done:
            self.done.append(doc_id)
        self._write()

    def start(self) -> None:
        self._write()

    def finish(self) -> None:
        self.path.unlink(missing_ok=True)

    def _write(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".part")
        tmp.write_text(json.dumps({"key": self.key, "done": self.done}, indent=1))
        os.replace(tmp, self.path)


@contextlib.contextmanager
def nothing() -> Iterator[None]:
    """A context manager that does nothing (a listener not registered)."""
    yield


def names(items: Sequence[Any], attr: str = "file_name", limit: int = 20) -> str:
    """``a.pdf, b.pdf`` (at most ``limit``, then how many more)."""
    shown = [str(getattr(i, attr)) for i in items[:limit]]
    more = len(items) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")
