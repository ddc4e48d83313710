"""What the arena's page and a study's share: refusals in the project's own sentences, the caller's address, what a
browser keeps (signed), the admin's inline export, and the gate in front of every admin handler."""

from __future__ import annotations

import base64
import hashlib
import hmac
import io
import logging
import secrets
import shutil
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

import gradio as gr

from bargain.arena.inputs import ArenaError
from bargain.arena.limits import AdminGate

UNEXPECTED = "Something went wrong on the server. Your game is saved: try again, or reload the page."
EXPORT_PREFIX = "bargain-export-"  # the private folder an export is written in, for the moment it takes
# The admin's export arrives inside the answer to their own (password-checked) request, as base64: the browser makes
# it a file there. It is never a file on the server that an address could fetch.
EXPORT_JS = """
element.addEventListener('click', (event) => {
  const link = event.target.closest('a[data-export]');
  if (!link || !props.value) return;
  event.preventDefault();
  const bytes = Uint8Array.from(atob(props.value.data), (c) => c.charCodeAt(0));
  const url = URL.createObjectURL(new Blob([bytes], {type: 'application/zip'}));
  const save = document.createElement('a');
  save.href = url;
  save.download = props.value.name;
  save.click();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
});
"""
log = logging.getLogger(__name__)
T = TypeVar("T")


def sentence(text: object) -> str:
    """A refusal or notice as people read it: a sentence that starts with a capital (the controller words its
    refusals to follow a field's name, "the price must be a number", and a page shows them on their own)."""
    words = str(text)
    return words[:1].upper() + words[1:]


def told(text: object) -> str:
    """What the page has to say, in bold, as one sentence (`sentence`): the one place a refusal is shown."""
    return f"**{sentence(text)}**" if str(text) else ""


def refusal(text: str) -> gr.Error:
    """A refused request, as the person or program is told it: the project's own sentence, logged in one line (Gradio
    would print a traceback for each, and a flood of bad requests would fill the disk)."""
    log.info("refused: %s", text)
    return gr.Error(sentence(text), print_exception=False)


def client_address(request: gr.Request | None, trusted_proxies: int) -> str:
    """The caller's address, which rate limits count: what the outermost of `trusted_proxies` proxies saw.

    Each proxy appends the address that connected to it to X-Forwarded-For, so the last `trusted_proxies`
    entries are written by them and the one `trusted_proxies` from the right is the client's; anything to its left was
    sent by the client and may be made up, so it is never read. Several header lines count as one list, in
    order (a proxy may add its own line after the client's). With fewer entries than trusted proxies the request
    did not come through them all, and with none trusted the header is the caller's say-so: the connection's
    address is used then."""
    if request is None:
        return "unknown"
    if trusted_proxies > 0:
        headers = request.headers  # Starlette's; a plain dict (one line per name) where Gradio has copied the request
        getlist = getattr(headers, "getlist", lambda name: [headers.get(name) or ""])
        lines = getlist("x-forwarded-for")
        hops = [hop.strip() for line in lines for hop in line.split(",") if hop.strip()]
        if len(hops) >= trusted_proxies:
            return hops[-trusted_proxies]
    return request.client.host if request.client else "unknown"


# --- what a browser keeps -----------------------------------------------------------------------


def _signature(secret: str, player: str, game: str | None) -> str:
    return hmac.new(secret.encode(), f"{player}|{game or ''}".encode(), hashlib.sha256).hexdigest()


def kept(secret: str, saved: object) -> dict:
    """The player id and game id a browser kept, if the server signed them; else a new player and no game. With them,
    the id of a start with a person that was sent and not yet answered (`starting`), if any: unsigned, since it
    reaches only that player's own seats."""
    if isinstance(saved, dict) and isinstance(saved.get("player"), str) and isinstance(saved.get("sig"), str):
        player, game = saved["player"], saved.get("game") if isinstance(saved.get("game"), str) else None
        if hmac.compare_digest(saved["sig"], _signature(secret, player, game)):
            starting = saved.get("starting")
            return {"player": player, "game": game, **({"starting": starting} if isinstance(starting, str) else {})}
    return {"player": secrets.token_hex(8), "game": None}


def keep(secret: str, player: str, game: str | None, starting: str | None = None) -> dict:
    """What the browser keeps: the ids and the server's signature of them (the key never leaves the server); while a
    start with a person is sent and not answered, its start id, so that the start made again takes no second seat."""
    return {
        "player": player,
        "game": game,
        "sig": _signature(secret, player, game),
        **({"starting": starting} if starting else {}),
    }


# --- the admin's side ---------------------------------------------------------------------------


class AdminPage(Protocol):
    """A page with admin handlers: its password gate, and how many proxies stand in front of it."""

    admin: AdminGate
    trusted_proxies: int


def admin_only(handler: Callable[..., T]) -> Callable[..., T]:
    """A page's admin handler behind the admin password: it is called as `handler(password, request, *inputs)` and
    runs only once the password is checked (a wrong one refused in the project's sentence, as `admin.check` words
    it). Gradio runs it in a worker thread: the check may block."""

    def gated(page: AdminPage, given: str, request: gr.Request, *values: Any) -> T:
        try:
            page.admin.check(given, client_address(request, page.trusted_proxies))
        except ArenaError as exc:
            raise refusal(str(exc)) from None
        return handler(page, *values)

    # Named as the handler, but not wrapping it for inspect: Gradio reads the signature above (where the request goes).
    gated.__name__, gated.__doc__ = handler.__name__, handler.__doc__
    return gated


def private_export(write: Callable[[str], list[Path]], name: str) -> dict:
    """What `write` puts into a new private folder, as one zip archive for the admin's own answer (see EXPORT_JS):
    {"name", "size" (in words), "data" (base64)}. The folder (owner-only) is gone before the answer leaves, so
    nothing of an export stays on disk or can be fetched by address."""
    directory = Path(tempfile.mkdtemp(prefix=EXPORT_PREFIX))
    try:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in write(str(directory)):
                archive.write(path, Path(path).relative_to(directory).as_posix())
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    data = buffer.getvalue()
    return {
        "name": f"{name}.zip",
        "size": f"{len(data) / 1e6:.1f} MB" if len(data) >= 100_000 else f"{len(data) / 1e3:.0f} kB",
        "data": base64.b64encode(data).decode(),
    }


def export_link() -> gr.HTML:
    """Where an admin's export appears: a link that saves the archive in their browser."""
    return gr.HTML(
        None,
        js_on_load=EXPORT_JS,
        html_template="${value ? `<a href='#' data-export>Download ${value.name} (${value.size})</a>` : ''}",
    )


def sweep_exports(older_than_s: float = 60.0) -> None:
    """Remove what exports left in the temporary folder (a process killed mid-export, or an older version that
    kept them for minutes): called at start-up."""
    cutoff = time.time() - older_than_s
    for folder in Path(tempfile.gettempdir()).glob(f"{EXPORT_PREFIX}*"):
        if folder.is_dir() and folder.stat().st_mtime < cutoff:
            shutil.rmtree(folder, ignore_errors=True)
