"""Golden vectors: the encoder's bytes are pinned, and each vector decodes back exactly."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import amber
from tests.golden.cases import CASES, read_vectors, register, unregister
from tests.support.exact import assert_exact

VECTORS = read_vectors()


@pytest.fixture(autouse=True, scope="module")
def _registered() -> Iterator[None]:
    register()
    yield
    unregister()


def test_every_case_has_a_vector_and_back() -> None:
    assert sorted(VECTORS) == sorted(name for name, _, _ in CASES)


@pytest.mark.parametrize(("name", "make", "opts"), CASES, ids=[c[0] for c in CASES])
def test_vector(name: str, make: Any, opts: dict[str, Any]) -> None:
    value = make()
    assert amber.dumps(value, **opts).hex() == VECTORS[name].hex()
    decoded = amber.loads(VECTORS[name])
    if opts.get("identity"):
        # Shared structure: compare shapes and identities, not with == (cycles).
        assert type(decoded) is type(value)
        assert amber.dumps(decoded, **opts) == VECTORS[name]
    else:
        assert_exact(decoded, value)
