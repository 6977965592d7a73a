"""Per-sentence state that a trainer keeps across epochs: a dual method's messages or
marginals (DLPW, Hazan-Urtasun, soft-BCFW; ``docs/algorithms.md`` section 5).

All sentences' states live in one flat float64 array, sentence ``i`` at
``offsets[i]:offsets[i + 1]``; with ``shared=True`` the array is an anonymous shared
mapping, so that processes forked later (``--jobs``) update the states the parent and
the next epoch see, and no state travels between processes.
"""

from __future__ import annotations

import mmap
from typing import Callable, Sequence

import numpy as np

from polyparse.decoders import Parts


class SentenceStates:
    """The states of a training set, sized once before the first epoch."""

    def __init__(self, offsets: np.ndarray, *, shared: bool = False) -> None:
        self.offsets = offsets
        total = int(offsets[-1])
        if shared and total:
            self._buffer = mmap.mmap(-1, total * 8)
            self.values = np.frombuffer(self._buffer, dtype=np.float64, count=total)
        else:
            self.values = np.zeros(total, dtype=np.float64)

    @classmethod
    def allocate(cls, examples: Sequence, size: Callable[[Parts], int] | None, *,
                 shared: bool = False) -> "SentenceStates":
        """Room for ``size(parts)`` floats per example, zeros (every dual method here
        starts from zero messages); none at all when ``size`` is None (a trainer
        without state), so that no example is built for it."""
        sizes = np.zeros(len(examples), dtype=np.int64)
        if size is not None:
            sizes[:] = [size(_parts(examples, i)) for i in range(len(examples))]
        return cls(np.concatenate([[0], np.cumsum(sizes)]), shared=shared)

    def __getitem__(self, i: int) -> np.ndarray:
        """Sentence ``i``'s state, a view to read and update in place."""
        return self.values[self.offsets[i]:self.offsets[i + 1]]

    @property
    def nbytes(self) -> int:
        return self.values.nbytes


def _parts(examples: Sequence, i: int) -> Parts:
    parts_of = getattr(examples, "parts", None)
    return parts_of(i) if parts_of is not None else examples[i].parts
