"""Trainers: each module registers its trainer with :func:`.base.register`; importing
the package imports them all, so a new trainer plugs in by adding one module."""

import importlib
import pkgutil

from .base import (TRAINERS, EpochStats, OnlineTrainer, Trainer, TrainReport, make_trainer,
                   register, trainer_class)

for _module in pkgutil.iter_modules(__path__):
    if _module.name != "base" and not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["TRAINERS", "EpochStats", "OnlineTrainer", "Trainer", "TrainReport",
           "make_trainer", "register", "trainer_class"]
