"""Where the released adapters are on this machine: downloaded on demand, or a local copy.

`snapshot_download` fetches only the requested subfolders of the adapter repository (and
honours HF_HOME, HF_HUB_OFFLINE and HF_TOKEN); `--adapters-dir` points at a directory holding
`<name>/adapter_config.json` per adapter, for machines without the Hub.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from bargain.agents.arms import ADAPTER_REPO, ArmError


def adapter_paths(
    names: Iterable[str], adapters_dir: str | Path | None = None, repo: str = ADAPTER_REPO, revision: str | None = None
) -> dict[str, Path]:
    """The directory of each named adapter, downloading what is missing unless a local copy is given."""
    names = list(dict.fromkeys(names))
    if not names:
        return {}
    if adapters_dir is not None:
        root = Path(adapters_dir)
    else:
        from huggingface_hub import snapshot_download

        try:
            root = Path(snapshot_download(repo, revision=revision, allow_patterns=[f"{n}/*" for n in names]))
        except Exception as exc:  # offline, gated, unknown revision: all mean "no adapters from the Hub"
            raise ArmError(
                f"could not get adapters {', '.join(names)} from {repo} ({type(exc).__name__}: {exc}); "
                "check the network and HF_TOKEN, or copy them here and pass --adapters-dir"
            ) from exc
    paths = {name: root / name for name in names}
    missing = [name for name, path in paths.items() if not (path / "adapter_config.json").is_file()]
    if missing:
        raise ArmError(f"no adapter {', '.join(missing)} in {root}: expected {root}/<name>/adapter_config.json")
    return paths
