"""Hypothesis profiles for the fuzzers: short in CI, long with DREAMCONTEXT_FAULT_LONG=1."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "fuzz-ci",
    max_examples=150,
    deadline=None,  # a busy CI machine must not turn slow examples into failures
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
settings.register_profile(
    "fuzz-long",
    max_examples=3000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
LONG = os.environ.get("DREAMCONTEXT_FAULT_LONG") == "1"
PROFILE = "fuzz-long" if LONG else "fuzz-ci"
