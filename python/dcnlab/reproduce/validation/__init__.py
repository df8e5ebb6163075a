"""Validation against independent simulators on the same scenarios: `experiments/validation/README.md`
says what each compares, what the other simulator reports, what we measure and the tolerance."""

from __future__ import annotations

from typing import Callable

from . import ns3_ecn_sharp

TITLE = "Validation against independent simulators"

EXPERIMENTS: dict[str, Callable] = {
    "ns3_ecn_sharp": ns3_ecn_sharp.section,
}
