"""`amber.ArchiveError` as the archive's Python code raises it: with its kind, entry and offset
set, as the Rust core's errors have them."""

from __future__ import annotations

from amber._native import ArchiveError


def archive_error(
    kind: str, msg: str, *, entry: str | None = None, offset: int | None = None
) -> ArchiveError:
    err = ArchiveError(msg)
    err.kind, err.entry, err.offset = kind, entry, offset  # type: ignore[assignment]
    return err
