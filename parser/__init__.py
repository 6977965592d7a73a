"""polyparse: models, trainers, evaluation and the command line (the top layer)."""

import polyparse.corpora.cache  # noqa: F401  (numba's cache folder, before any kernel)
