"""polyparse: models, trainers, evaluation and the command line (the top layer)."""
