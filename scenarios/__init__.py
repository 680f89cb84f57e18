"""The AML world: an immutable `Case` (public view + hidden ground truth) from a seed."""

from memex.scenarios.case import Case
from memex.scenarios.generator import (
    BENIGN_KINDS,
    DEFAULT_BENIGN_SHARE,
    KINDS,
    SPLITS,
    SUSPICIOUS_KINDS,
    generate,
    split_of,
)
from memex.scenarios.model import DIFFICULTIES, PublicCase
from memex.scenarios.truth import GroundTruth

__all__ = [
    "BENIGN_KINDS",
    "DEFAULT_BENIGN_SHARE",
    "DIFFICULTIES",
    "KINDS",
    "SPLITS",
    "SUSPICIOUS_KINDS",
    "Case",
    "GroundTruth",
    "PublicCase",
    "generate",
    "split_of",
]
