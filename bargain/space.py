"""The arena as a Hugging Face Space: what a Space with this repository and these variables will do.

`python -m bargain space-check` reads the README's header (the Space's configuration) and the
environment (the Space's variables and secrets; set them in your shell to check a plan), and says
line by line which hardware path the arena takes (ZeroGPU, a dedicated GPU, a remote vLLM server,
or the scripted tactics only), which model and adapters it loads, where the games are stored,
which secrets are present, and what is missing, without starting anything.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# GPU memory of the Space hardware choices (GB as sold; one GPU is used)
CARDS_GB = {
    "t4-small": 16,
    "t4-medium": 16,
    "l4x1": 24,
    "l4x4": 24,
    "a10g-small": 24,
    "a10g-large": 24,
    "a10g-largex2": 24,
    "a10g-largex4": 24,
    "l40sx1": 48,
    "l40sx4": 48,
    "l40sx8": 48,
    "a100-large": 80,
    "h100": 80,
    "h100x8": 80,
}
NO_STORAGE = (
    "This Space has no persistent storage: the games stored here are lost when it restarts or is rebuilt. "
    "Attach persistent storage in the Space's settings (the database then lives in /data), set "
    "BARGAIN_DB_URL to a database elsewhere, or keep a private copy on the Hub with BARGAIN_SYNC_TO_HUB."
)


def on_space(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether this runs on a Hugging Face Space (the Space sets SPACE_ID)."""
    return bool(environ.get("SPACE_ID"))


def storage_warning(db_url: str, environ: Mapping[str, str] = os.environ) -> str:
    """On a Space, a SQLite file outside the persistent /data disk is lost at the next restart: the admin's
    warning (empty when the games are safe, or off a Space)."""
    if not on_space(environ) or not db_url.startswith("sqlite:///"):
        return ""
    return "" if db_url.removeprefix("sqlite:///").startswith("/data/") else NO_STORAGE


def header(readme: Path) -> dict:
    """The YAML block between the README's first two `---` lines."""
    import yaml

    text = readme.read_text(encoding="utf-8")
    if not text.startswith("---"):
        return {}
    block = text.split("---", 2)[1]
    return yaml.safe_load(block) or {}


@dataclass(frozen=True)
class Line:
    """One finding: `ok`, `note` (worth knowing), `warning` (works, but loses something) or `missing` (breaks)."""

    status: str
    topic: str
    text: str

    def __str__(self) -> str:
        return f"{self.status:8s} {self.topic:9s} {self.text}"


def check(readme: Path, environ: Mapping[str, str], data_dir: bool, hardware: str | None = None) -> list[Line]:
    """What the Space will do. `data_dir`: whether persistent storage (/data) is attached; `hardware`: the Space
    hardware (default: the header's suggested_hardware)."""
    from bargain.agents.arms import BASE_MODEL

    config = header(readme)
    hardware = hardware or environ.get("SPACE_HARDWARE") or config.get("suggested_hardware") or "cpu-basic"
    backend = environ.get("BARGAIN_BACKEND", "none")
    model = environ.get("BARGAIN_MODEL") or BASE_MODEL
    return [
        *_header_lines(config),
        *_hardware_lines(environ, backend, hardware, model),
        *(_model_lines(environ, backend, model) if backend in ("hf", "vllm") else []),
        *_storage_lines(environ, data_dir),
        *_secret_lines(environ, data_dir),
    ]


def _hardware_lines(environ: Mapping[str, str], backend: str, hardware: str, model: str) -> list[Line]:
    """The hardware path the arena takes with `backend` on `hardware`: a remote vLLM server, ZeroGPU, a dedicated
    GPU, or the scripted tactics only."""
    from bargain.agents.backends.hardware import on_zero_gpu

    if backend == "vllm":
        return _remote_lines(environ)
    if backend == "hf" and (on_zero_gpu(environ) or hardware.startswith("zero")):
        has_spaces = importlib.util.find_spec("spaces") is not None
        return [
            Line(
                "ok",
                "hardware",
                f"ZeroGPU: {model} loads at start-up and each batch of generation runs "
                "with a GPU attached (up to 2 minutes a batch); games share batches",
            ),
            Line(
                "ok" if has_spaces else "note",
                "packages",
                "the `spaces` package is installed"
                if has_spaces
                else "needs the `spaces` package: Gradio Spaces come with it; elsewhere add it to requirements.txt",
            ),
        ]
    if backend == "hf":
        return _dedicated_lines(hardware, model)
    if backend == "none":
        return [
            Line(
                "note",
                "hardware",
                "BARGAIN_BACKEND is not set: only the scripted tactics can be played; "
                "set BARGAIN_BACKEND=hf (a GPU Space) or vllm (a remote server)",
            )
        ]
    return [Line("missing", "hardware", f"BARGAIN_BACKEND={backend!r}: use none, hf or vllm")]


def _remote_lines(environ: Mapping[str, str]) -> list[Line]:
    """A remote vLLM server: its URL, and the key sent to it."""
    url = environ.get("BARGAIN_BASE_URL")
    if not url:
        return [
            Line(
                "missing",
                "hardware",
                "BARGAIN_BACKEND=vllm needs BARGAIN_BASE_URL: the URL(s) of a "
                "vLLM server started with `python -m bargain serve --host 0.0.0.0`",
            )
        ]
    key = "BARGAIN_API_KEY" in environ
    return [
        Line(
            "ok",
            "hardware",
            f"remote vLLM at {url}: the Space itself needs no GPU (cpu-basic will do); capacity is the server's",
        ),
        Line(
            "ok" if key else "note",
            "secrets",
            "BARGAIN_API_KEY is set (sent to the server)"
            if key
            else "no BARGAIN_API_KEY: the server must accept requests without a key",
        ),
    ]


def _model_lines(environ: Mapping[str, str], backend: str, model: str) -> list[Line]:
    """Where the model and the adapters come from, for a model backend (hf or vllm)."""
    from bargain.agents.arms import ADAPTER_REPO

    where = (
        "served by the remote server, which has its weights (nothing is downloaded here)"
        if backend == "vllm"
        else "downloaded from the Hub at start-up"
    )
    lines = [Line("ok", "model", f"{model} (BARGAIN_MODEL)" if "BARGAIN_MODEL" in environ else f"{model}, {where}")]
    if backend == "vllm":
        return [*lines, Line("ok", "adapters", "the server's (`bargain serve` registers all eight)")]
    adapters = environ.get("BARGAIN_ADAPTERS_DIR")
    revision = environ.get("BARGAIN_ADAPTER_REVISION")
    source = f"from {adapters}" if adapters else f"the eight from {ADAPTER_REPO}" + (f"@{revision}" if revision else "")
    return [*lines, Line("ok", "adapters", source)]


def _header_lines(config: dict) -> list[Line]:
    import importlib.metadata

    installed = importlib.metadata.version("gradio")
    if not config:
        return [Line("missing", "header", "README.md has no YAML header: a Space reads its configuration there")]
    lines = []
    if config.get("sdk") != "gradio":
        lines.append(
            Line("missing", "header", f"sdk is {config.get('sdk')!r}: the arena is a Gradio app (sdk: gradio)")
        )
    version = str(config.get("sdk_version", ""))
    lines.append(
        Line(
            "ok" if version == installed else "warning",
            "header",
            f"sdk_version {version}" + ("" if version == installed else f", but Gradio {installed} is installed here"),
        )
    )
    app = config.get("app_file", "app.py")
    if not (ROOT / app).exists():
        lines.append(Line("missing", "header", f"app_file {app} does not exist"))
    return lines


def _dedicated_lines(hardware: str, model: str) -> list[Line]:
    from bargain.agents.arms import BASE_MODEL
    from bargain.agents.backends.hardware import plan
    from bargain.agents.tiny import qwen3_8b_config

    if hardware.startswith("cpu"):
        return [
            Line(
                "warning",
                "hardware",
                f"BARGAIN_BACKEND=hf on {hardware}: {model} would generate on the CPU, "
                "minutes per move; choose GPU hardware, ZeroGPU, or a remote vLLM server",
            )
        ]
    card = CARDS_GB.get(hardware)
    if card is None:
        return [Line("note", "hardware", f"dedicated GPU {hardware}: its memory is checked at start-up")]
    if model != BASE_MODEL:
        return [
            Line(
                "ok",
                "hardware",
                f"dedicated GPU {hardware} ({card} GB): the memory {model} needs is checked at start-up",
            )
        ]
    # Qwen3-8B in bf16 with the eight adapters (about 0.5 GB of LoRA weights in float32)
    memory = plan(qwen3_8b_config(), weights_bytes=int(16.9e9), dtype_bytes=2)
    free = int(card * 1e9 * 0.94)  # what CUDA and the driver leave
    games = memory.games(free)
    if games < 1:
        return [
            Line(
                "missing",
                "hardware",
                f"{hardware} ({card} GB) cannot hold Qwen3-8B in bf16 with one game: "
                "choose l4x1, a10g-small or larger, ZeroGPU, or a remote vLLM server",
            )
        ]
    return [
        Line(
            "ok",
            "hardware",
            f"dedicated GPU {hardware} ({card} GB): Qwen3-8B in bf16, about {min(games, 64)} "
            "games generated together (more wait for the next batch)",
        )
    ]


def _storage_lines(environ: Mapping[str, str], data_dir: bool) -> list[Line]:
    url = environ.get("BARGAIN_DB_URL")
    if url:
        shown = url.split("@")[-1] if "@" in url else url  # never echo a password
        return [Line("ok", "storage", f"games in the database BARGAIN_DB_URL names (…{shown[-60:]})")]
    if data_dir:
        return [Line("ok", "storage", "games in /data/bargain.db, on the Space's persistent storage")]
    line = Line("warning", "storage", NO_STORAGE)
    if environ.get("BARGAIN_SYNC_TO_HUB"):
        line = Line(
            "warning",
            "storage",
            "no persistent storage: games live in the Space until it restarts; the copy "
            f"kept in {environ['BARGAIN_SYNC_TO_HUB']} is what survives",
        )
    return [line]


def _secret_lines(environ: Mapping[str, str], data_dir: bool) -> list[Line]:
    lines = [
        Line("ok", "secrets", "BARGAIN_ADMIN_PASSWORD is set: the admin export is on")
        if environ.get("BARGAIN_ADMIN_PASSWORD")
        else Line("warning", "secrets", "no BARGAIN_ADMIN_PASSWORD: the export of all games is off")
    ]
    if not environ.get("BARGAIN_BROWSER_SECRET") and not data_dir and not environ.get("BARGAIN_DB_URL"):
        lines.append(
            Line(
                "warning",
                "secrets",
                "no BARGAIN_BROWSER_SECRET and no persistent storage: the key made at "
                "start-up changes at each restart, and people lose their game links",
            )
        )
    if environ.get("BARGAIN_SYNC_TO_HUB") and not environ.get("HF_TOKEN"):
        lines.append(
            Line(
                "missing",
                "secrets",
                f"BARGAIN_SYNC_TO_HUB needs HF_TOKEN (a token that can write to {environ['BARGAIN_SYNC_TO_HUB']})",
            )
        )
    if environ.get("BARGAIN_REMOTE_MODELS") and not environ.get("OPENAI_API_KEY"):
        lines.append(Line("missing", "secrets", "BARGAIN_REMOTE_MODELS needs OPENAI_API_KEY"))
    return lines


def main(readme: str | None = None, hardware: str | None = None) -> int:
    """The `space-check` command: the findings, one per line; 1 when something the Space needs is missing."""
    lines = check(Path(readme) if readme else ROOT / "README.md", os.environ, Path("/data").is_dir(), hardware)
    print("\n".join(str(line) for line in lines))
    missing = sum(line.status == "missing" for line in lines)
    print(f"\n{missing} missing" if missing else "\nnothing missing")
    return 1 if missing else 0
