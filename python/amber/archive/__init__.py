"""`amber.Archive`: one zip file for a whole analysis result, read lazily, mapped, and safe to
open when it came from someone else. The layout is specified in `docs/spec/archive.md`."""

from __future__ import annotations

from amber.archive._archive import Archive, ArchiveMixin

__all__ = ["Archive", "ArchiveMixin"]
