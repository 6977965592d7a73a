"""Parsing and training on a Dask cluster (``--dask ADDRESS``): past one machine.

The model goes to every worker once, as a worker plugin carrying the bytes of its model
file (numpy arrays plus JSON, :mod:`parser.model_file`), loaded and warmed up on the
worker when the plugin is set up. A plugin rather than ``client.scatter(...,
broadcast=True)``: the scheduler keeps it and sets it up again on a worker that joins
later or that its nanny restarts after a crash, whereas scattered data is only where it
was put (and, unless replicated, lost with its worker); and the worker keeps the loaded
parser, with numba's kernels compiled, for every task, where a scattered model would be
unpickled per task or kept as a Python object graph.

Tasks are pure functions of their arguments and of the plugin: a chunk of sentences
(:func:`parser.workers.parse_counted`, the code of ``--jobs``), or one shard's epoch of
iterative parameter mixing from the mixed weights (:func:`learning.mixing.shard_epoch`).
When a worker dies, the scheduler runs its tasks again on another (up to
``distributed.scheduler.allowed-failures`` times, 3 by default): it costs time, never
data, and the result is the same to the last bit.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Callable, Sequence, TypeVar

from polyparse.corpora.sentence import Sentence
from polyparse.learning.examples import Examples
from polyparse.learning.mixing import ShardEpoch, SparseWeights, shard_epoch, shard_members

from .config import config_decoder
from . import parser_file
from .analysis import ParseOptions
from .workers import ChunkParser, collect, parse_counted

try:
    from distributed.diagnostics.plugin import WorkerPlugin
except ImportError:                 # Dask is optional: connect() says how to install it
    WorkerPlugin = object

log = logging.getLogger("polyparse")

INSTALL = "--dask needs Dask's distributed scheduler: pip install 'polyparse[dask]'"
"""What to do when ``distributed`` is not installed."""

T = TypeVar("T")

CONNECT_TIMEOUT = 5.0
"""Seconds to reach a scheduler before giving up (before any work)."""


class ClusterError(Exception):
    """The cluster cannot be used: Dask is not installed, the scheduler cannot be
    reached, or the workers cannot load the model (one line, shown as is)."""


def check_address(address: str) -> int | None:
    """The number of workers of ``local:N`` (None for a scheduler's address), checked
    before any work with Dask's presence: :class:`ClusterError` if Dask is missing or
    ``N`` is not a positive number."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise ClusterError(INSTALL) from None
    if not address.startswith("local:"):
        return None
    try:
        workers = int(address.removeprefix("local:"))
        if workers < 1:
            raise ValueError
    except ValueError:
        raise ClusterError(f"--dask local:N needs a positive number of workers, not "
                           f"{address!r}") from None
    return workers


@contextlib.contextmanager
def connect(address: str, *, timeout: float | None = None) -> Iterator:
    """A Dask ``Client`` of the scheduler at ``address`` (``tcp://host:port``, or
    ``host:port``), or with ``local:N`` of a cluster of ``N`` worker processes of one
    thread each started on this machine, bound to 127.0.0.1 and closed at the end.

    :class:`ClusterError` if Dask is missing, ``N`` is not a positive number, or the
    scheduler does not answer within ``timeout`` seconds (default
    :data:`CONNECT_TIMEOUT`).
    """
    timeout = CONNECT_TIMEOUT if timeout is None else timeout
    workers = check_address(address)
    from distributed import Client, LocalCluster

    with contextlib.ExitStack() as stack:
        if workers is not None:
            import dask

            # Dask's own log lines (workers starting, connections closing) are not the
            # user's business on a cluster started for one command: errors only
            stack.enter_context(_quiet(logging.getLogger("distributed")))
            # The scheduler's HTTP server (status and dashboard) starts whatever
            # dashboard_address says (None still starts it, on port 8787): a free port on
            # the loopback, as everything else of a local cluster.
            # No statistical profiler sampling the workers' stacks every 10 ms: it slows
            # pure-Python parsing by several percent and nobody looks at it here
            with dask.config.set({"distributed.worker.profile.enabled": False,
                                  "logging.distributed": "error"}):
                cluster = stack.enter_context(LocalCluster(
                    n_workers=workers, threads_per_worker=1, processes=True,
                    host="127.0.0.1", dashboard_address="127.0.0.1:0",
                    silence_logs=logging.ERROR))
            client = stack.enter_context(Client(cluster))
        else:
            try:
                client = stack.enter_context(Client(address, timeout=timeout))
            except Exception as error:      # refused, timed out, or not a Dask scheduler
                detail = str(error).splitlines()[0] if str(error) else type(error).__name__
                raise ClusterError(f"cannot reach the Dask scheduler at {address} within "
                                   f"{timeout:g} s: {detail}") from None
        yield client


@contextlib.contextmanager
def _quiet(logger: logging.Logger) -> Iterator[None]:
    """``logger`` at level ERROR for the block."""
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _threads(client) -> int:
    """The threads of the cluster's workers: how many tasks run at once."""
    return max(1, sum(client.nthreads().values()))


def model_bytes(parser: ChunkParser) -> bytes:
    """The model file of ``parser`` as it is in memory (:meth:`Parser.save`), as bytes."""
    with tempfile.TemporaryDirectory(prefix="polyparse-") as folder:
        path = Path(folder) / "model.npz"
        parser.save(path)
        return path.read_bytes()


_LOADED: dict[str, object] = {}
"""On a worker: what the plugins set up there, by name."""


def _from_bytes(data: bytes, folder: str, read: Callable[[Path], T]) -> T:
    """``read`` of the model file whose bytes are ``data``, written for it into
    ``folder`` and removed after."""
    path = Path(folder) / f"polyparse-{hashlib.sha256(data).hexdigest()[:16]}.npz"
    path.write_bytes(data)
    try:
        return read(path)
    finally:
        path.unlink()


def _worker_folder(worker) -> str:
    return getattr(worker, "local_directory", None) or tempfile.gettempdir()


class _ModelPlugin(WorkerPlugin):
    """A worker plugin carrying a model file's bytes (and the parser's class, the decoder
    to parse with, and whether the UD rules are enforced): on each worker, once, the
    parser is loaded and its kernels warmed up."""

    def __init__(self, name: str, parser_class: type, data: bytes, decoder,
                 use_ud_rules: bool) -> None:
        self.name = name
        self.parser_class = parser_class
        self.data = data
        self.decoder = decoder
        self.use_ud_rules = use_ud_rules

    def setup(self, worker=None) -> None:
        parser = _from_bytes(self.data, _worker_folder(worker), self.parser_class.load)
        parser.decoder = self.decoder
        parser.use_ud_rules = self.use_ud_rules
        # load the compiled tagging and parsing kernels now, before the chunks come
        parser.parse_chunk([Sentence.from_words(["Go", "."])],
                           ParseOptions(retag=parser.tagger is not None))
        _LOADED[self.name] = parser

    def teardown(self, worker=None) -> None:
        _LOADED.pop(self.name, None)


@contextlib.contextmanager
def _plugin(client, plugin) -> Iterator[float]:
    """``plugin`` set up on every worker for the block; yields the seconds it took to
    ship and set up."""
    began = time.perf_counter()
    try:
        answers = client.register_plugin(plugin, name=plugin.name) or {}
    except Exception as error:       # e.g. a worker without polyparse, or another version
        answers = {"a worker": {"status": "error", "exception_text": repr(error)}}
    for worker, answer in answers.items():
        if isinstance(answer, dict) and answer.get("status") == "error":
            raise ClusterError(f"{worker} could not load the model (is the same polyparse "
                               f"installed on the workers?): "
                               f"{answer.get('exception_text') or answer}")
    try:
        yield time.perf_counter() - began
    finally:
        with contextlib.suppress(Exception):
            client.unregister_worker_plugin(plugin.name)


@contextlib.contextmanager
def _workers_dying() -> Iterator[None]:
    """A task whose workers kept dying (``distributed.scheduler.allowed-failures`` times,
    3 by default) as a :class:`ClusterError`: beyond that it is not a passing crash."""
    from distributed import KilledWorker

    try:
        yield
    except KilledWorker as error:
        raise ClusterError(f"the workers running a task died again and again, so Dask gave "
                           f"it up (distributed.scheduler.allowed-failures): {error}"
                           .splitlines()[0]) from None


def _parse_task(name: str, chunk: list[Sentence], options: ParseOptions):
    return parse_counted(_LOADED[name], chunk, options)


class ShippingTimes:
    """Seconds spent sending the model and weights to the workers and getting weights
    back (what ``eval/scale.py`` reports)."""

    def __init__(self) -> None:
        self.model = 0.0
        self.weights = 0.0


def parse_on_cluster(parser: ChunkParser, chunks: Iterator[list[Sentence]], client,
                     options: ParseOptions, *,
                     in_flight: int | None = None,
                     times: ShippingTimes | None = None) -> Iterator[Sentence]:
    """The parsed sentences of ``chunks``, in input order, each chunk parsed on a worker
    of ``client`` as :meth:`Parser.parse_chunk` does for ``options``; the workers'
    certificate counts are added to ``parser.decodings``.

    Streams: at most ``in_flight`` chunks (default: twice the workers' threads) are out
    or waiting to be handed on in order, whatever the length of the input. The model
    goes to each worker once (:class:`_ModelPlugin`), before the first chunk.
    """
    from distributed import as_completed

    data = model_bytes(parser)
    name = f"polyparse-parser-{hashlib.sha256(data).hexdigest()[:16]}-{id(parser):x}"
    limit = in_flight or 2 * _threads(client)
    plugin = _ModelPlugin(name, type(parser), data, parser.decoder, parser.use_ud_rules)
    with _plugin(client, plugin) as seconds:
        if times is not None:
            times.model += seconds
        running = as_completed()
        index: dict = {}            # future -> chunk number
        done: dict[int, list[Sentence]] = {}
        submitted = handed = 0
        chunks = iter(chunks)
        more = True
        try:
            while more or handed < submitted:
                while more and submitted - handed < limit:
                    chunk = next(chunks, None)
                    if chunk is None:
                        more = False
                        break
                    future = client.submit(_parse_task, name, chunk, options, pure=False)
                    index[future] = submitted
                    running.add(future)
                    submitted += 1
                if handed == submitted:
                    break
                while handed not in done:
                    future = next(running)
                    with _workers_dying():
                        done[index.pop(future)] = collect(parser, future.result())
                    future.release()
                yield from done.pop(handed)
                handed += 1
        finally:
            for future in index:
                future.cancel()


class _TrainingPlugin(WorkerPlugin):
    """A worker plugin carrying what the shards of a parameter-mixing run need: the
    model file of the parser being trained (feature map, labels, pruner; its weights
    are not used), the training sentences as the parser sees them, and the settings."""

    def __init__(self, name: str, data: bytes, sentences: list[Sentence], config) -> None:
        self.name = name
        self.data = data
        self.sentences = sentences
        self.config = config

    def setup(self, worker=None) -> None:
        _LOADED[self.name] = _ShardData(_from_bytes(self.data, _worker_folder(worker),
                                                    parser_file.read).model,
                                        config_decoder(self.config), self.sentences,
                                        self.config)

    def teardown(self, worker=None) -> None:
        _LOADED.pop(self.name, None)


class _ShardData:
    """On a worker: the model and decoder of a run, and the examples of each shard it
    has run (their candidate arcs kept across epochs)."""

    def __init__(self, model, decoder, sentences, config) -> None:
        self.model = model
        self.decoder = decoder
        self.sentences = sentences
        self.config = config
        self.examples: dict[int, Examples] = {}

    def shard(self, shard: int) -> Examples:
        if shard not in self.examples:
            members = shard_members(len(self.sentences), self.config.shards, shard)
            self.examples[shard] = Examples(self.model, [self.sentences[i] for i in members])
        return self.examples[shard]


def _shard_task(name: str, shard: int, epoch: int, start: SparseWeights) -> ShardEpoch:
    data = _LOADED[name]
    config = data.config
    return shard_epoch(config.trainer, config.trainer_options, config.seed,
                       data.shard(shard), data.model, data.decoder, start, epoch, shard)


class DaskShards:
    """The shards of a parameter-mixing run on the workers of a Dask ``client``
    (:data:`learning.mixing.ShardRunner`), a context manager: the model and the
    sentences go to each worker once (:class:`_TrainingPlugin`), and each epoch the mixed
    weights once (``client.scatter(..., broadcast=True)``), the shards' weights coming
    back as two vectors each, all as :class:`~learning.mixing.SparseWeights` (indices
    and float64 values of the nonzero weights: exact, and a few percent of the dense
    size).

    Attributes
    ----------
    times:
        :class:`ShippingTimes`: seconds to ship the model and sentences, and the
        weights both ways (scatter, then the wait for results beyond the slowest
        shard's own time).
    """

    def __init__(self, client, parser: ChunkParser, sentences: Sequence[Sentence]) -> None:
        self.client = client
        self.config = parser.config
        self.shards = parser.config.shards
        data = model_bytes(parser)
        self.name = f"polyparse-training-{hashlib.sha256(data).hexdigest()[:16]}-{id(self):x}"
        self.plugin = _TrainingPlugin(self.name, data, list(sentences),
                                                     parser.config)
        self.times = ShippingTimes()
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> "DaskShards":
        self.times.model += self._stack.enter_context(_plugin(self.client, self.plugin))
        return self

    def __exit__(self, *exc) -> None:
        self._stack.close()

    def submit(self, epoch: int, start: SparseWeights) -> list:
        """The futures of every shard's epoch from ``start``, in shard order."""
        began = time.perf_counter()
        weights = self.client.scatter(start, broadcast=True, hash=False)
        self.times.weights += time.perf_counter() - began
        return [self.client.submit(_shard_task, self.name, k, epoch, weights, pure=False)
                for k in range(self.shards)]

    def collect(self, futures: list) -> list[ShardEpoch]:
        """The shards' results, in shard order."""
        began = time.perf_counter()
        with _workers_dying():
            results = self.client.gather(futures)
        waited = time.perf_counter() - began
        self.times.weights += max(0.0, waited - max(r.seconds for r in results))
        return results

    def __call__(self, epoch: int, start: SparseWeights) -> list[ShardEpoch]:
        return self.collect(self.submit(epoch, start))
