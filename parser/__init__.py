"""polyparse: the application (training runs, parsing, model files, evaluation, the
command line): the top layer."""

import polyparse.corpora.cache  # noqa: F401  (numba's cache folder, before any kernel)
