"""The AML world, at the bottom of the house: an immutable `Case` (public view + hidden ground
truth) from a `CaseSpec`, by `build(spec)`; the labels (difficulties, typologies, kinds) every
other room reads from here; the adversarial test split (`splits`)."""

from memex.scenarios.case import Case
from memex.scenarios.cases import build
from memex.scenarios.generator import (
    BENIGN_KINDS,
    DEFAULT_BENIGN_SHARE,
    KINDS,
    SPLITS,
    SUSPICIOUS_KINDS,
    generate,
    split_of,
)
from memex.scenarios.model import DIFFICULTIES, TYPOLOGIES, Difficulty, PublicCase, Typology
from memex.scenarios.spec import CaseSpec
from memex.scenarios.truth import GroundTruth

__all__ = [
    "BENIGN_KINDS",
    "DEFAULT_BENIGN_SHARE",
    "DIFFICULTIES",
    "KINDS",
    "SPLITS",
    "SUSPICIOUS_KINDS",
    "TYPOLOGIES",
    "Case",
    "CaseSpec",
    "Difficulty",
    "GroundTruth",
    "PublicCase",
    "Typology",
    "build",
    "generate",
    "split_of",
]
