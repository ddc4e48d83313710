"""What the GPU check needs on the GPU machine we can get, carried there as wheels, and a rehearsal of it here.

That machine has Python 3.12 with torch and the Hugging Face stack but none of the app's own packages, and no
network: whatever the check imports beyond its package set travels with the repository as wheels, and is
installed there offline into a folder of its own. `bundle` gathers those wheels (for Python 3.12, manylinux
x86_64, each package once, dependencies the machine already has left out) into an ignored folder of the
repository, enforces the size budget of what travels, and gives the one command line to run there.
`rehearse` builds a Python 3.12 virtual environment here holding only the machine's package set, installs the
bundle the same way, and runs the check's dry run of the parts that run there: a missing package is found on a
CPU, not on the GPU.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUDGET_MIB = 40.0  # the bundle and the repository together (the machine takes 64 MiB a call)
PYTHON = "3.12"
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")
# The GPU machine's Python packages (what its image holds), with the versions the check depends on pinned as
# they are there. The rehearsal installs exactly these; the bundle never carries one of them.
MACHINE_PINS = {
    "torch": "2.11.0",
    "transformers": "5.17.0",
    "tokenizers": "0.23.2",
    "safetensors": "0.8.0",
    "huggingface-hub": "1.33.0",
    "accelerate": "1.15.0",
    "numpy": "2.5.2",
    "peft": None,
    "pandas": None,
    "pyarrow": None,
    "pyyaml": None,
    "httpx": None,
    "tqdm": None,
    "matplotlib": None,
    "scipy": None,
    "tabulate": None,
    "attrs": None,
    "jinja2": None,
    "regex": None,
    "requests": None,
    "rich": None,
    "psutil": None,
    "typing-extensions": None,
    "pytest": None,
    "hypothesis": None,
}
MACHINE_HAS = set(MACHINE_PINS) | {  # the rest of its image that a carried wheel might depend on
    "anyio",
    "certifi",
    "charset-normalizer",
    "click",
    "filelock",
    "fsspec",
    "h11",
    "httpcore",
    "idna",
    "markupsafe",
    "packaging",
    "pillow",
    "pygments",
    "python-dateutil",
    "six",
    "sympy",
    "urllib3",
    "protobuf",
    "msgpack",
    "uvloop",
    "werkzeug",
    "aiohttp",
    "xxhash",
    "multidict",
    "yarl",
    "setuptools",
    "wheel",
    "pip",
}
# What the parts that run there import and the machine lacks (`rehearse` finds any other): the arena's store
# (SQLAlchemy, and Alembic, which brings its schema up to date when it opens) and the claim checker it runs when a
# game ends.
NEEDED = ("sqlalchemy", "alembic", "price-parser", "text2num")


class BundleError(RuntimeError):
    """The bundle cannot be made as asked (the message says why and what to do)."""


@dataclass(frozen=True)
class Bundle:
    folder: Path
    wheels: tuple[Path, ...]
    left_out: tuple[str, ...]  # dependencies the machine already has
    repository_bytes: int

    @property
    def bytes(self) -> int:
        return sum(w.stat().st_size for w in self.wheels)

    def command(
        self, python: str = "python3", target: str = "/tmp/site", check: str = '--out "${OUT:-.}/gpu_check"'
    ) -> str:
        """The line that installs the wheels offline into `target` and runs the check (from the repository root)."""
        folder = shlex.quote(
            os.path.relpath(self.folder, ROOT) if self.folder.is_relative_to(ROOT) else str(self.folder)
        )
        return (
            f"{python} -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target {target} "
            f"{folder}/*.whl && PYTHONUNBUFFERED=1 PYTHONPATH={target} {python} benchmarks/gpu_check.py {check}"
        )


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins() -> dict[str, str]:
    """requirements.txt's exact pins, by canonical name: the bundle carries the versions the project runs."""
    found = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        match = re.match(r"\s*([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?==([^\s#;]+)", line)
        if match:
            found[canonical(match.group(1))] = match.group(2)
    return found


def requirements_of(wheel: Path) -> list[str]:
    """A wheel's own dependencies on Linux x86_64 under Python 3.12 (extras left out)."""
    from packaging.requirements import Requirement

    environment = {
        "python_version": PYTHON,
        "python_full_version": f"{PYTHON}.3",
        "sys_platform": "linux",
        "platform_system": "Linux",
        "platform_machine": "x86_64",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "os_name": "posix",
        "extra": "",
    }
    with zipfile.ZipFile(wheel) as archive:
        metadata = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        lines = archive.read(metadata).decode().splitlines()
    needed = []
    for line in lines:
        if line.startswith("Requires-Dist:"):
            requirement = Requirement(line.split(":", 1)[1].strip())
            if requirement.marker is None or requirement.marker.evaluate(environment):
                needed.append(str(requirement).split(";")[0].strip())
    return needed


def download(requirement: str, folder: Path) -> Path:
    """One wheel for the GPU machine (no dependencies), into `folder`; its path."""
    before = set(folder.glob("*.whl"))
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--quiet",
        "--disable-pip-version-check",
        "--no-deps",
        "--only-binary=:all:",
        "--python-version",
        PYTHON,
        "--implementation",
        "cp",
        "--abi",
        f"cp{PYTHON.replace('.', '')}",
        *(arg for p in PLATFORMS for arg in ("--platform", p)),
        "--dest",
        str(folder),
        requirement,
    ]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise BundleError(
            f"pip found no Python {PYTHON} manylinux wheel of {requirement} (is the package index "
            f"reachable?): {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ''}"
        )
    new = set(folder.glob("*.whl")) - before
    name = canonical(re.split(r"[<>=!~ \[]", requirement, maxsplit=1)[0])
    return next(iter(new)) if new else next(w for w in folder.glob("*.whl") if canonical(w.name.split("-")[0]) == name)


def repository_bytes() -> int:
    """What travels besides the bundle: tracked files and untracked ones git does not ignore."""
    listed = (
        subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    return sum((ROOT / p).stat().st_size for p in listed if p and (ROOT / p).is_file())


def ignored(folder: Path) -> bool:
    """Whether git ignores what `folder` holds (asked of a file in it: it may not exist yet)."""
    done = subprocess.run(["git", "check-ignore", "-q", str(folder / "any.whl")], cwd=ROOT)
    return done.returncode == 0


def bundle(folder: Path, budget_mib: float = BUDGET_MIB, inside_repository: bool = True) -> Bundle:
    """Gather into `folder` (emptied first) the wheels of NEEDED and of their dependencies the GPU machine lacks,
    each once, at requirements.txt's versions where it pins them; refuse a bundle over the budget."""
    folder = folder.resolve()
    if inside_repository and not (folder.is_relative_to(ROOT) and ignored(folder)):
        raise BundleError(
            f"{folder} must be a folder of the repository that git ignores (it travels as a carried "
            f"path): e.g. --out .gpu_bundle"
        )
    repository = repository_bytes() if inside_repository else 0
    if repository / 2**20 > budget_mib:  # said before any download
        raise BundleError(
            f"the repository alone ({repository / 2**20:.1f} MiB) is over the {budget_mib:.0f} MiB budget of what "
            "travels to the GPU machine"
        )
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    pinned, queue, seen, left_out, wheels = pins(), list(NEEDED), set(), [], []
    while queue:
        requirement = queue.pop(0)
        name = canonical(re.split(r"[<>=!~ \[]", requirement, maxsplit=1)[0])
        if name in seen:
            continue
        seen.add(name)
        if name in MACHINE_HAS:
            left_out.append(name)
            continue
        wheel = download(f"{name}=={pinned[name]}" if name in pinned else requirement, folder)
        wheels.append(wheel)
        queue.extend(requirements_of(wheel))
    names = [canonical(w.name.split("-")[0]) for w in wheels]
    if len(set(names)) != len(names):
        raise BundleError(f"two wheels of one package in {folder}: {sorted(names)}")
    made = Bundle(folder, tuple(wheels), tuple(sorted(left_out)), repository)
    total = (made.bytes + made.repository_bytes) / 2**20
    if total > budget_mib:
        raise BundleError(
            f"the bundle ({made.bytes / 2**20:.1f} MiB) and the repository "
            f"({made.repository_bytes / 2**20:.1f} MiB) come to {total:.1f} MiB, over the "
            f"{budget_mib:.0f} MiB budget of what travels to the GPU machine"
        )
    return made


def describe(made: Bundle) -> str:
    lines = [f"{w.name}  {w.stat().st_size / 2**20:.2f} MiB" for w in made.wheels]
    total = (made.bytes + made.repository_bytes) / 2**20
    return "\n".join(
        [
            *lines,
            f"bundle {made.bytes / 2**20:.1f} MiB + repository {made.repository_bytes / 2**20:.1f} "
            f"MiB = {total:.1f} MiB of {BUDGET_MIB:.0f} MiB; left to the machine: "
            f"{', '.join(made.left_out) or 'nothing'}",
            f"carry {os.path.relpath(made.folder, ROOT)} and run, in the repository's root:",
            made.command(),
        ]
    )


def python312() -> str:
    """A Python 3.12 interpreter here (the GPU machine's version)."""
    candidates = [shutil.which(f"python{PYTHON}"), *sorted(Path.home().glob(f".pyenv/versions/{PYTHON}*/bin/python"))]
    for candidate in candidates:
        if candidate and subprocess.run([str(candidate), "-c", "import venv"], capture_output=True).returncode == 0:
            return str(candidate)
    raise BundleError(f"no Python {PYTHON} here to rehearse with: install one (e.g. `pyenv install {PYTHON}`)")


def rehearse(parts: str, keep: Path | None = None) -> int:
    """A Python 3.12 virtual environment of the machine's package set plus the bundle, and the check's dry run of
    `parts` in it, from the repository's root; the dry run's exit status. The environment (about 5 GB) is deleted
    afterwards unless `keep` names where to build it."""
    with tempfile.TemporaryDirectory(prefix="gpu-rehearsal-") as scratch:
        venv = keep or Path(scratch) / "venv"
        print(f"[rehearse] a Python {PYTHON} environment of the GPU machine's packages in {venv}", flush=True)
        subprocess.run([python312(), "-m", "venv", "--clear", str(venv)], check=True)
        python = str(venv / "bin" / "python")
        machine = [f"{name}=={version}" if version else name for name, version in MACHINE_PINS.items()]
        subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *machine], check=True)
        made = bundle(Path(scratch) / "bundle", inside_repository=False)
        print(f"[rehearse] bundle: {', '.join(w.name for w in made.wheels)}", flush=True)
        line = made.command(
            python=python,
            target=str(Path(scratch) / "site"),
            check=f"--dry-run --parts {parts} --out {Path(scratch) / 'out'}",
        )
        print(f"[rehearse] {line}", flush=True)
        done = subprocess.run(
            line,
            shell=True,
            cwd=ROOT,
            env={k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")},
        )
        print(
            f"[rehearse] the dry run {'passed' if done.returncode == 0 else f'FAILED ({done.returncode})'}", flush=True
        )
        return done.returncode
