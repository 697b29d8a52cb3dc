"""A local Ray for the tests of this folder: ``ray.init(num_cpus=2)`` once per test module.

The Ray tests skip on a machine without Ray and fail in CI (``support.optional.require``).
"""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType

import pytest
from support.optional import require


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[ModuleType]:
    """A local two-CPU Ray, started for the module and shut down after it."""
    ray = require("ray", "the Ray backend of tournaments, evaluations and sweeps runs on it")
    assert isinstance(ray, ModuleType)
    ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING", log_to_driver=False)
    yield ray
    ray.shutdown()
