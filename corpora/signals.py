"""Stop signals (SIGINT, SIGTERM, SIGHUP) as an exception, so that a stopped run cleans up.

Python turns only SIGINT into an exception (:class:`KeyboardInterrupt`); SIGTERM (``kill``,
``timeout``, a batch scheduler) and SIGHUP (a closed terminal) end the process at once,
leaving the temporary file of :func:`~corpora.files.atomic_write` behind. Inside
:func:`stop_signals_raise` all three raise :class:`Stopped`, which unwinds the stack like
Ctrl-C: every ``with atomic_write(...)`` removes its temporary file and the file it would
have replaced stays as it was.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

#: The signals that ask a run to stop, as far as the platform has them.
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                     if hasattr(signal, name))


class Stopped(KeyboardInterrupt):
    """A stop signal arrived; a :class:`KeyboardInterrupt`, so code that cleans up after
    Ctrl-C does the same for SIGTERM and SIGHUP.

    Examples
    --------
    >>> Stopped(signal.SIGTERM).exit_status
    143
    >>> str(Stopped(signal.SIGTERM))
    'stopped by SIGTERM'
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_status(self) -> int:
        """``128 + signum``, as a shell reports a process ended by the signal."""
        return 128 + self.signum

    def __str__(self) -> str:
        return f"stopped by {signal.Signals(self.signum).name}"


GRACE = 0.5
"""Seconds a stop signal waits for the main thread to take it (:func:`stop_signals_raise`)
before the process ends without it."""


@contextmanager
def stop_signals_raise(clean_up: Callable[[], None] = lambda: None) -> Iterator[None]:
    """Within the block, a stop signal raises :class:`Stopped` in the main thread (every
    one: a first one swallowed by some library must not make the run deaf; clean-up that
    must not be cut short holds them back with :func:`block_stop_signals`). A signal that
    is ignored stays ignored (``nohup`` ignores SIGHUP, a shell ignores SIGINT in a
    background job). The previous handlers are restored on leaving. Outside the main
    thread (where Python cannot set handlers) this does nothing.

    Python runs a signal's handler only between two bytecodes of the main thread, so a
    main thread inside compiled code (HiGHS's branch and bound, which can run for
    minutes) would not take it until that code returns. A watchdog thread hears every
    signal too (:func:`signal.set_wakeup_fd`); when the main thread has not taken it
    within :data:`GRACE` seconds, the watchdog ends the run itself as the main thread
    would have: it calls ``clean_up`` (the command line's removes its unfinished output
    files, :func:`~corpora.files.remove_unfinished`), kills the worker processes, says
    so on standard error and exits with ``128 + signum``. It can do so because HiGHS (and
    every long numba kernel) releases the GIL while it computes.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    taken = threading.Event()

    def stop(signum: int, frame) -> None:
        taken.set()
        raise Stopped(signum)

    previous = {signum: signal.signal(signum, stop) for signum in STOP_SIGNALS
                if signal.getsignal(signum) is not signal.SIG_IGN}
    previous_fd = _live_wakeup_fd()
    hear, wake = socket.socketpair()
    wake.setblocking(False)
    signal.set_wakeup_fd(wake.fileno(), warn_on_full_buffer=False)
    watchdog = threading.Thread(target=_watch, args=(hear, taken, frozenset(previous), clean_up),
                                name="stop-watchdog", daemon=True)
    with stops_to_main_thread():
        watchdog.start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(previous_fd)
        wake.close()            # the watchdog reads the end of the stream and returns
        watchdog.join()
        hear.close()
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _live_wakeup_fd() -> int:
    """The signal wakeup fd set before (-1: none), unset; -1 too where it is stale: an
    event loop that set it and closed it without restoring it (the test suite met one)
    leaves a number that is closed, or since another file's, blocking. Restoring that
    would fail (and cut the clean-up of :func:`stop_signals_raise` short) or, once our
    own socket took the number, leave it stale again."""
    fd = signal.set_wakeup_fd(-1)
    try:
        return fd if fd < 0 or not os.get_blocking(fd) else -1
    except OSError:
        return -1


def _watch(hear: socket.socket, taken: threading.Event, handled: frozenset,
           clean_up: Callable[[], None]) -> None:
    """The watchdog of :func:`stop_signals_raise`: for each stop signal written to
    ``hear``, wait :data:`GRACE` seconds for the main thread's handler to set ``taken``,
    else end the process (:func:`_end_now`)."""
    while received := hear.recv(64):
        for signum in received:
            if signum not in handled:
                continue
            if not taken.wait(GRACE):
                _end_now(signum, clean_up)
            taken.clear()


def _end_now(signum: int, clean_up: Callable[[], None]) -> None:
    """End the process as a :class:`Stopped` reaching the command line would: cleaned
    up, no worker left running, the message, the status."""
    clean_up()
    for child in multiprocessing.active_children():
        child.kill()
    os.write(2, f"polyparse: {Stopped(signum)}\n".encode())
    os._exit(Stopped(signum).exit_status)


def stop_behind(error: BaseException) -> Stopped | None:
    """The :class:`Stopped` that caused ``error``, if any: a signal that arrives while
    compiled code calls back into Python (numba's dispatcher, for one) comes out as a
    ``SystemError`` whose cause is the :class:`Stopped`."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, Stopped):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


def block_stop_signals() -> object:
    """Hold back stop signals in this thread until :func:`unblock_stop_signals`; returns
    the mask to restore (None where the platform cannot block signals)."""
    if not hasattr(signal, "pthread_sigmask"):
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)


def unblock_stop_signals(mask: object) -> None:
    """Restore the mask returned by :func:`block_stop_signals`; a signal held back is
    handled now."""
    if mask is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


@contextmanager
def stops_to_main_thread() -> Iterator[None]:
    """Threads and processes started within the block hold back stop signals, so that the
    kernel delivers a stop signal sent to the process to the main thread alone.

    A signal sent to a process goes to any of its threads that does not block it; Python
    then runs its handler in the main thread at once, even where the main thread has
    blocked the signal with :func:`block_stop_signals`. With the helper threads of a
    process pool, a Ctrl-C could so land between creating a temporary output file and the
    ``try`` that removes it (seen in ``eval/faults.py``: stray files after SIGINT to
    ``parse --jobs 2``, never with one process). A thread inherits the signal mask of the
    thread that starts it, so the mask is set while the threads are started; a forked
    worker undoes it in :func:`in_worker`.
    """
    mask = block_stop_signals()
    try:
        yield
    finally:
        unblock_stop_signals(mask)


def in_worker() -> None:
    """Initializer of a worker process: Ctrl-C is ignored (the parent, in the same process
    group, handles it and ends the pool), SIGTERM and SIGHUP end the worker at once (how
    the parent's pool ends its workers), without a traceback. A worker writes no file.
    The stop signals the pool was started with held back (:func:`stops_to_main_thread`)
    are let through again."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    for signum in STOP_SIGNALS:
        if signum != signal.SIGINT:
            signal.signal(signum, signal.SIG_DFL)


#: Seconds :func:`end_pool` waits for ``Pool.terminate``.
POOL_END_TIMEOUT = 3.0


def end_pool(pool) -> None:
    """``pool.terminate()`` (a ``multiprocessing`` pool), but never hanging the process.

    When a run is stopped while tasks are in flight, ``Pool.terminate`` kills a worker
    that may be sending its result, holding the lock of the result queue; the pool's
    task thread then waits for that lock forever, and ``terminate`` with it (seen in
    ``eval/faults.py``: a stopped ``train --jobs 2`` hung for ten minutes). So terminate
    runs in a thread of its own; if it has not ended after :data:`POOL_END_TIMEOUT`
    seconds, the workers still alive are killed and the process goes on, leaving that
    thread (a daemon) behind.
    """
    ender = threading.Thread(target=pool.terminate, name="end_pool", daemon=True)
    with stops_to_main_thread():
        ender.start()
    ender.join(POOL_END_TIMEOUT)
    if ender.is_alive():
        workers = [child for child in multiprocessing.active_children()
                   if child.daemon]                 # pool workers are daemons
        for worker in workers:
            worker.kill()
        for worker in workers:
            worker.join(POOL_END_TIMEOUT)
