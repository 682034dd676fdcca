"""Fixtures shared by amber.proto's test modules: the conformance messages compiled by amber, the
classes Google's protobuf makes from the same files, and the shop schema."""

from __future__ import annotations

from typing import Any

import pytest

import amber.proto as P
from tests.proto.oracle import CONF, FILES, SHOP, google_pool


@pytest.fixture(scope="module")
def conf() -> P.Namespace:
    return P.load(*FILES, include=[CONF])


@pytest.fixture(scope="module")
def google(conf: P.Namespace) -> dict[str, Any]:
    pytest.importorskip("google.protobuf")
    from google.protobuf import message_factory

    pool = google_pool(conf)
    return {
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(name))
        for name in [
            "protobuf_test_messages.proto3.TestAllTypesProto3",
            "protobuf_test_messages.proto2.TestAllTypesProto2",
            "protobuf_test_messages.editions.TestAllTypesEdition2023",
        ]
    }


@pytest.fixture(scope="module")
def shop() -> Any:
    return P.load_text(SHOP, name="shop.proto").shop
