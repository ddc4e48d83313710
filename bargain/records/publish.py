"""Copies of the data on the Hugging Face Hub, as private dataset repositories.

Two ways, one set of rules: `push_to_hub` uploads a folder once (`python -m bargain export --to-hub`), and
`HubSync` keeps a folder in step while the app runs (`app.py --sync-to-hub`): on a Space without persistent
storage the database goes when the Space is rebuilt, and the last synced copy is what remains. Both upload
only the files `allow_patterns` names, so that files meant to stay on the researcher's machine (a study's
payment files, which carry the recruiting platform's ids) are never published, and both make the repository
private when they create it.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable
from pathlib import Path

import httpx
from huggingface_hub import CommitScheduler, HfApi, get_token

log = logging.getLogger(__name__)


class PublishError(RuntimeError):
    """A copy that cannot be made (offline, no token, refused by the Hub); the message says why in one line."""


def _refused(repo_id: str, exc: Exception, where: str) -> PublishError:
    """The one-line error for a failed Hub call."""
    reason = " ".join(str(exc).split())
    return PublishError(f"cannot push to the Hub dataset {repo_id}: {reason}; {where}")


def _check_token(repo_id: str, where: str) -> None:
    """Refuse early, with what to do, when no Hugging Face token is configured."""
    if get_token() is None:
        raise PublishError(
            f"cannot push to the Hub dataset {repo_id}: no Hugging Face token (run `hf auth login` or "
            f"set HF_TOKEN); {where}"
        )


def push_to_hub(folder: str | Path, repo_id: str, allow_patterns: list[str]) -> str:
    """Upload the files of `folder` that `allow_patterns` names to the private dataset `repo_id` (made if missing);
    returns its URL. The files stay in `folder` whatever happens."""
    where = f"the files are in {folder}"
    _check_token(repo_id, where)
    try:
        api = HfApi()
        url = api.create_repo(repo_id, repo_type="dataset", private=True, exist_ok=True)
        api.upload_folder(
            repo_id=repo_id,
            folder_path=folder,
            repo_type="dataset",
            allow_patterns=allow_patterns,
            commit_message="Export (bargain)",
        )
    except (OSError, httpx.HTTPError, ValueError) as exc:  # offline, unreachable, refused, a malformed id
        raise _refused(repo_id, exc, where) from exc
    return str(url)


class HubSync(CommitScheduler):
    """Every `every_minutes` (and once at start), `write(folder)` writes a fresh copy of the data into a private
    folder and the files `allow_patterns` names that changed are committed to the private dataset `repo_id`.

    The writing and the commit run in huggingface_hub's worker thread, never on the app's event loop; a failed
    round is logged by huggingface_hub and the next one tries again. Creating the repository happens at once,
    so a missing token or an unreachable Hub stops the app at start with a PublishError rather than later.
    """

    def __init__(
        self,
        repo_id: str,
        write: Callable[[Path], object],
        every_minutes: float,
        allow_patterns: list[str],
        api: HfApi | None = None,
    ):
        self._write = write  # before the scheduler's thread starts, which pushes at once
        where = "start the app without --sync-to-hub, or fix the above"
        if api is None:
            _check_token(repo_id, where)
        try:
            super().__init__(
                repo_id=repo_id,
                folder_path=tempfile.mkdtemp(prefix="bargain-sync-"),
                every=every_minutes,
                repo_type="dataset",
                private=True,
                allow_patterns=allow_patterns,
                hf_api=api,
            )
        except (OSError, httpx.HTTPError) as exc:
            raise _refused(repo_id, exc, where) from exc
        except ValueError as exc:  # a malformed repository id, or `every` not positive
            raise PublishError(f"cannot sync to the Hub dataset {repo_id}: {exc}") from exc

    def push_to_hub(self):
        """Write a fresh copy, keep in the folder only the files whose bytes changed (huggingface_hub commits the
        files changed since its last commit, by time of change), then commit them; nothing changed, no commit."""
        with tempfile.TemporaryDirectory(dir=self.folder_path.parent, prefix="bargain-sync-new-") as fresh:
            self._write(Path(fresh))
            for path in sorted(Path(fresh).rglob("*")):
                kept = self.folder_path / path.relative_to(fresh)
                if path.is_file() and not (kept.is_file() and kept.read_bytes() == path.read_bytes()):
                    kept.parent.mkdir(parents=True, exist_ok=True)
                    path.replace(kept)
        return super().push_to_hub()
