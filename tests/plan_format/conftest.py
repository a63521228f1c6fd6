"""Fixtures shared by the plan-format tests."""

from __future__ import annotations

import pytest

from utp_env.dataset import Dataset, dataset_of
from utp_env.tools.database import Database


@pytest.fixture(scope="module")
def dataset(mini_db_path: object) -> Dataset:
    """The mini sandbox's dataset (its queries and reference plans), opened once per module."""
    return dataset_of(Database.open(mini_db_path))  # type: ignore[arg-type]
