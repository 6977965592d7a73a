"""polyparse.learning: the linear model over part features, loss-augmented inference,
weight vectors, per-sentence dual state and the trainers.

The layer between :mod:`polyparse.features` (and :mod:`polyparse.decoders`) and the
application (:mod:`polyparse.parser`): it imports nothing from the application, and a
training run's data flow one way through it (examples in, weights and per-epoch reports
out).
"""

import polyparse.corpora.cache  # noqa: F401  (numba's cache folder, before any kernel)
