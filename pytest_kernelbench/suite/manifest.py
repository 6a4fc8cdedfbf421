"""The problem manifest: tags and per-problem tolerance overrides, read from <problems>/manifest.yaml."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

MANIFEST_NAME = "manifest.yaml"


@dataclass(frozen=True)
class Entry:
    tags: tuple[str, ...] = ()
    atol: float | None = None
    rtol: float | None = None


def load_manifest(problems_dir: Path) -> dict[tuple[int, int], Entry]:
    """Entries keyed by (level, id); an empty dict when the folder has no manifest."""
    import yaml

    path = problems_dir / MANIFEST_NAME
    if not path.is_file():
        return {}
    entries = {}
    for raw in yaml.safe_load(path.read_text()) or []:
        tolerance = raw.get("tolerance") or {}
        entries[(int(raw["level"]), int(raw["id"]))] = Entry(
            tags=tuple(raw.get("tags") or ()),
            atol=tolerance.get("atol"),
            rtol=tolerance.get("rtol"),
        )
    return entries
