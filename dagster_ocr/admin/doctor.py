"""``dagster-ocr doctor``: installation checks that say what is wrong and how to fix it.

Each check is a function returning ``Finding`` objects; none raises, so one broken part never
hides the report on the others. Status ``ok`` / ``warn`` (works, but not as a production
deployment should) / ``error`` (something will fail). Nothing here imports dagster: the Dagster
layer (assets/admin_cli.py) adds the checks that need a live instance.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import socket
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import duckdb

from dagster_ocr.ocr.settings import TransformersOcrSettings
from dagster_ocr.schema import LATEST_VERSION, current_version
from dagster_ocr.settings import Settings

Status = Literal["ok", "warn", "error"]

#: the repository's lock file (installed editable, so it sits next to the packages)
DEFAULT_LOCK = Path(__file__).resolve().parents[2] / "requirements.lock"
#: the JSON file of transformers engine settings (see dagster_ocr.ocr.speculative)
#: the environment variables ``assets.definitions`` builds a ``GpuOcrResource`` from
GPU_TARGET_ENV, GPU_DRAFT_ENV = "DAGSTER_OCR_GPU_TARGET", "DAGSTER_OCR_GPU_DRAFT"


@dataclass(frozen=True, slots=True)
class Finding:
    """One check's verdict: what was found and, unless ok, how to fix it."""

    check: str
    status: Status
    message: str
    fix: str = ""

    def line(self) -> str:
        mark = {"ok": "OK   ", "warn": "WARN ", "error": "ERROR"}[self.status]
        return f"{mark} {self.check}: {self.message}" + (f"\n      fix: {self.fix}" if self.fix else "")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_lock(text: str) -> dict[str, str]:
    """``name==version`` pins of a pip-freeze style lock (comments, URLs and editables skipped)."""
    pins = {}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if "==" in line and not line.startswith("-"):
            name, version = line.split("==", 1)
            pins[_norm(name.split("[", 1)[0])] = version.split(";", 1)[0].strip()
    return pins


def _installed(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def check_packages(
    lock: str | Path = DEFAULT_LOCK, installed: Callable[[str], str | None] = _installed
) -> list[Finding]:
    """Installed packages against the lock: a missing one is an error, another version a warning."""
    path = Path(lock)
    if not path.is_file():
        return [
            Finding(
                "packages", "warn", f"no lock file at {path}", "run from a checkout with requirements.lock"
            )
        ]
    pins = parse_lock(path.read_text())
    missing, wrong = [], []
    for name, want in sorted(pins.items()):
        have = installed(name)
        if have is None:
            missing.append(f"{name}=={want}")
        # a local label (torch 2.13.0+cpu or +cu128) is the build variant, not another release
        elif have.split("+", 1)[0] != want.split("+", 1)[0]:
            wrong.append(f"{name} {have} (lock: {want})")
    found = []
    fix = f"pip install -r {path} (from the project folder, in its virtual environment)"
    if missing:
        found.append(Finding("packages", "error", f"{len(missing)} missing: " + ", ".join(missing[:10]), fix))
    if wrong:
        found.append(
            Finding("packages", "warn", f"{len(wrong)} at another version: " + ", ".join(wrong[:10]), fix)
        )
    return found or [Finding("packages", "ok", f"{len(pins)} packages match {path.name}")]


def check_rapidocr_models(package_dir: str | Path | None = None) -> list[Finding]:
    """rapidocr's bundled detection, classification and recognition models are on disk.

    rapidocr downloads any model it does not find, which fails on an offline worker at the first
    scanned page rather than at start-up: better to find out here.
    """
    if package_dir is None:
        spec = importlib.util.find_spec("rapidocr")
        if spec is None or not spec.submodule_search_locations:
            return [
                Finding(
                    "ocr models",
                    "error",
                    "rapidocr is not installed: scanned pages cannot be read",
                    "pip install rapidocr==3.10.0 onnxruntime==1.32.0",
                )
            ]
        package_dir = list(spec.submodule_search_locations)[0]
    models = Path(package_dir) / "models"
    have = sorted(p.name for p in models.glob("*.onnx")) if models.is_dir() else []
    missing = [kind for kind in ("det", "cls", "rec") if not any(f"_{kind}" in n for n in have)]
    if missing:
        return [
            Finding(
                "ocr models",
                "error",
                f"rapidocr's bundled {'/'.join(missing)} model(s) missing from {models}",
                "reinstall the wheel, which ships them: "
                "pip install --force-reinstall --no-deps rapidocr==3.10.0",
            )
        ]
    return [Finding("ocr models", "ok", f"rapidocr models present: {', '.join(have)}")]


def check_ocr_runtime(settings: Settings, bf16_native: Callable[[], bool] | None = None) -> list[Finding]:
    """What runs the CPU OCR engine's models, and whether this CPU computes its bf16 parts in bf16.

    OpenVINO (``ocr.engine.runtime``, the default) reads at about half of onnxruntime's CPU; a
    missing package does not fail a page (the engine falls back to onnxruntime), so it is a warning.
    """
    from dagster_ocr.ocr.settings import RapidOcrSettings

    engine = settings.ocr.engine
    if not isinstance(engine, RapidOcrSettings):
        return []
    if engine.runtime == "onnxruntime":
        return [Finding("ocr runtime", "ok", "onnxruntime (ocr.engine.runtime)")]
    from dagster_ocr.ocr import openvino_runtime

    if not openvino_runtime.openvino_available():
        return [
            Finding(
                "ocr runtime",
                "warn",
                "ocr.engine.runtime is openvino but openvino is not installed: OCR falls back to "
                "onnxruntime, at about twice the CPU a page",
                "pip install -r requirements.lock (openvino is pinned there)",
            )
        ]
    bf16 = engine.openvino_bf16
    if bf16 == "none":
        return [Finding("ocr runtime", "ok", "OpenVINO, f32 throughout")]
    if (bf16_native or openvino_runtime.bf16_native)():
        return [Finding("ocr runtime", "ok", f"OpenVINO; {bf16} in bf16 (this CPU has bf16 instructions)")]
    return [
        Finding(
            "ocr runtime",
            "ok",
            f"OpenVINO; this CPU has no bf16 instructions, so {bf16} (openvino_bf16) computes in f32: "
            "the same reading as onnxruntime's, the recogniser at about twice the CPU of bf16",
        )
    ]


def check_cpu_numerics(settings: Settings) -> list[Finding]:
    """What this CPU lets the int8 and bf16 numerics use (``dagster_ocr.cpu``), as the engines act."""
    from dagster_ocr.cpu import has_int8_dot, has_native_bf16
    from dagster_ocr.ocr.quantize import weight_range
    from dagster_ocr.ocr.settings import RapidOcrSettings

    engine = settings.ocr.engine
    int8 = engine.int8_models if isinstance(engine, RapidOcrSettings) else "none"
    dot = "int8 dot-product instructions (VNNI/AMX)" if has_int8_dot() else "no int8 dot-product instructions"
    weights = (
        "8-bit weights" if weight_range() == "full" else "7-bit weights (reduce_range: no saturation on AVX2)"
    )
    bf16 = "native bf16" if has_native_bf16() else "no native bf16 (bf16 settings compute in f32)"
    return [Finding("cpu numerics", "ok", f"{dot}: int8 models ({int8}) built with {weights}; {bf16}")]


def configured_model_paths(settings: Settings, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Transformers checkpoint folders this installation is configured with: the settings'
    ``ocr.engine`` (kind transformers) and the GPU resource's environment variables."""
    env = os.environ if environ is None else environ
    paths: dict[str, str] = {}
    engine = settings.ocr.engine
    if isinstance(engine, TransformersOcrSettings):
        for role, value in (("target", engine.target_path), ("draft", engine.draft_path)):
            if value:
                paths[f"transformers {role} (ocr.engine)"] = value
    for role, name in (("target", GPU_TARGET_ENV), ("draft", GPU_DRAFT_ENV)):
        if env.get(name):
            paths[f"transformers {role} (${name})"] = env[name]
    return paths


def check_model_paths(paths: Mapping[str, str]) -> list[Finding]:
    """Each configured transformers checkpoint folder exists in save_pretrained layout."""
    found = []
    for role, raw in paths.items():
        p = Path(raw).expanduser()
        if not p.is_dir():
            found.append(
                Finding(
                    "model paths",
                    "error",
                    f"{role} model path {p} does not exist",
                    "copy the checkpoint there (save_pretrained layout), or correct the path in the "
                    "settings (ocr.engine.target_path / draft_path) or the GpuOcrResource "
                    f"(${GPU_TARGET_ENV} / ${GPU_DRAFT_ENV}); models are never downloaded at run time",
                )
            )
        elif not (p / "config.json").is_file():
            found.append(
                Finding(
                    "model paths",
                    "error",
                    f"{role} model path {p} has no config.json: not a save_pretrained folder",
                    "point the setting at the folder holding config.json, the weights and the tokenizer",
                )
            )
        elif not any(p.glob("*.safetensors")) and not any(p.glob("*.bin")):
            found.append(
                Finding(
                    "model paths",
                    "error",
                    f"{role} model path {p} has no weights (*.safetensors or *.bin)",
                    "copy the weight files; a Git LFS pointer checkout leaves them out (git lfs pull)",
                )
            )
        else:
            found.append(Finding("model paths", "ok", f"{role} model at {p}"))
    return found


def check_gpu(require: bool = False, probe: Callable[[], tuple[bool, str]] | None = None) -> list[Finding]:
    """Whether torch sees a CUDA GPU. On CPU that is reported, and only an error when ``require``."""
    if probe is None:

        def probe() -> tuple[bool, str]:
            import torch  # lazy: importing torch costs seconds

            if not torch.cuda.is_available():
                return False, f"torch {torch.__version__}, CUDA not available"
            props = torch.cuda.get_device_properties(0)
            return (
                True,
                f"{torch.cuda.device_count()} GPU(s); "
                f"cuda:0 {props.name}, {props.total_memory / 2**30:.0f} GiB",
            )

    try:
        available, detail = probe()
    except Exception as exc:  # a broken CUDA install raises from inside torch
        return [
            Finding(
                "gpu", "error" if require else "warn", f"torch could not probe CUDA: {exc}", "reinstall torch"
            )
        ]
    if available:
        return [Finding("gpu", "ok", detail)]
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    hint = (
        f"CUDA_VISIBLE_DEVICES={visible!r} hides devices; " if visible is not None else ""
    ) + "check the driver (`nvidia-smi`) and that torch is a CUDA build"
    if require:
        return [
            Finding("gpu", "error", f"no GPU visible ({detail}) but the OCR engine is set to use one", hint)
        ]
    return [Finding("gpu", "ok", f"no GPU visible ({detail}): OCR runs on the CPU")]


def check_schema_version(warehouse: str | Path) -> list[Finding]:
    """The warehouse file's schema version against the code's."""
    path = Path(warehouse)
    if not path.exists():
        return [
            Finding(
                "warehouse schema",
                "warn",
                f"{path} does not exist yet",
                "the first `dagster-ocr run` creates it",
            )
        ]
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error as exc:
        if "lock" in str(exc).lower():
            return [
                Finding(
                    "warehouse schema",
                    "warn",
                    f"{path} is locked by another process (a run writing, or an open session)",
                    "re-run doctor when the writer has finished",
                )
            ]
        return [
            Finding("warehouse schema", "error", f"{path} cannot be opened: {exc}", "restore it from backup")
        ]
    try:
        version = current_version(con)
    finally:
        con.close()
    migrate = f"back up {path}, then `dagster-ocr migrate --warehouse {path}` (idempotent)"
    if version is None:
        return [
            Finding("warehouse schema", "warn", f"{path} is empty", "the first `dagster-ocr run` fills it")
        ]
    if version == 0:
        return [
            Finding(
                "warehouse schema",
                "error",
                f"{path} has no schema version (made before versioning); "
                f"this code expects version {LATEST_VERSION}",
                migrate,
            )
        ]
    if version < LATEST_VERSION:
        return [
            Finding(
                "warehouse schema",
                "error",
                f"{path} is at schema version {version}; this code expects version {LATEST_VERSION}",
                migrate,
            )
        ]
    if version > LATEST_VERSION:
        return [
            Finding(
                "warehouse schema",
                "error",
                f"{path} is at schema version {version}, newer than this code's {LATEST_VERSION} "
                "(written by a later dagster-ocr)",
                "upgrade dagster-ocr on this machine, "
                "or restore the warehouse backup taken before the upgrade",
            )
        ]
    return [Finding("warehouse schema", "ok", f"{path} at schema version {version}")]


def check_snapshot(
    warehouse: str | Path, now: float | None = None, stale_after: float = 600
) -> list[Finding]:
    """Whether the analysts' snapshot lags writes that went quiet long ago (catch-up not running)."""
    from dagster_ocr.warehouse import Warehouse

    wh = Warehouse(warehouse)
    record = wh.snapshot_record()
    if not wh.path.exists() or record.published_at is None:
        return []  # no warehouse yet, or snapshots never used: nothing to say
    quiet = (now or time.time()) - (record.last_write_at or record.published_at)
    if record.pending_writes and quiet > stale_after:
        return [
            Finding(
                "snapshot",
                "warn",
                f"{wh.snapshot_path.name} lacks {record.pending_writes} document write(s), the last "
                f"{quiet / 60:.0f} min ago",
                f"run `dagster-ocr publish --warehouse {wh.path}`, or turn on the snapshot_sensor",
            )
        ]
    behind = f"{record.pending_writes} write(s) pending" if record.pending_writes else "current"
    return [Finding("snapshot", "ok", f"{wh.snapshot_path.name} {behind}")]


def check_lake(spec: str) -> list[Finding]:
    """A lake warehouse: its catalog answers read-only, its schema version, its snapshot and files."""
    from dagster_ocr.lake import LakeError, LakeWarehouse

    try:
        lake = LakeWarehouse(spec, read_only=True)
        with lake.connect(read_only=True) as con:
            version = current_version(con)
        snapshot = lake.snapshot_id()
    except (duckdb.Error, LakeError) as exc:
        return [
            Finding(
                "warehouse schema",
                "error",
                f"the lake {spec} cannot be attached: " + str(exc).splitlines()[0][:300],
                "check that PostgreSQL answers for that database (psql with the same keywords) "
                "and that the data path it records is reachable from here",
            )
        ]
    if version is None:
        return [
            Finding(
                "warehouse schema",
                "warn",
                f"the lake {spec} is empty",
                "the first `dagster-ocr run` fills it",
            )
        ]
    if version != LATEST_VERSION:
        newer = version > LATEST_VERSION
        return [
            Finding(
                "warehouse schema",
                "error",
                f"the lake is at schema version {version}; this code expects {LATEST_VERSION}",
                "upgrade dagster-ocr here"
                if newer
                else f"`dagster-ocr migrate --warehouse '{spec}'` (one process migrates; writers wait)",
            )
        ]
    return [
        Finding(
            "warehouse schema",
            "ok",
            f"lake at schema version {version}, snapshot {snapshot} (analysts attach it read-only; "
            "no snapshot copy)",
        )
    ]


def _env_refs(node: object) -> Iterable[str]:
    # dagster.yaml reads settings from the environment as {"env": NAME}
    if isinstance(node, dict):
        if set(node) == {"env"} and isinstance(node["env"], str):
            yield node["env"]
        for value in node.values():
            yield from _env_refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _env_refs(value)


def check_instance_storage(
    environ: Mapping[str, str] | None = None, connect_timeout_s: float = 2.0
) -> list[Finding]:
    """DAGSTER_HOME, its dagster.yaml, the environment variables it names, and Postgres reachable."""
    import yaml  # dagster depends on PyYAML

    env = os.environ if environ is None else environ
    home = env.get("DAGSTER_HOME")
    if not home:
        return [
            Finding(
                "instance storage",
                "warn",
                "DAGSTER_HOME is not set: runs, sensor cursors and document partitions are forgotten on exit",
                "export DAGSTER_HOME=/path/to/dagster_home and copy deploy/dagster.yaml there",
            )
        ]
    home_dir = Path(home)
    if not home_dir.is_dir():
        return [
            Finding("instance storage", "error", f"DAGSTER_HOME={home} is not a folder", f"mkdir -p {home}")
        ]
    config_file = home_dir / "dagster.yaml"
    if not config_file.is_file():
        return [
            Finding(
                "instance storage",
                "warn",
                f"no dagster.yaml in {home}: the instance uses SQLite files there (one machine only)",
                "copy deploy/dagster.yaml there for PostgreSQL storage",
            )
        ]
    try:
        config = yaml.safe_load(config_file.read_text()) or {}
    except yaml.YAMLError as exc:
        return [
            Finding("instance storage", "error", f"{config_file} is not valid YAML: {exc}", "fix the file")
        ]
    unset = sorted({name for name in _env_refs(config) if not env.get(name)})
    if unset:
        return [
            Finding(
                "instance storage",
                "error",
                f"{config_file} reads unset environment variable(s): {', '.join(unset)}",
                "set them in the environment of the webserver, the daemon and the run workers",
            )
        ]
    storage = config.get("storage") or {}
    if "postgres" not in storage:
        return [
            Finding("instance storage", "ok", f"{config_file}: storage {', '.join(storage) or 'default'}")
        ]
    db = (storage["postgres"] or {}).get("postgres_db") or {}

    def value(key: str, default: str) -> str:
        v = db.get(key, default)
        return env.get(v["env"], default) if isinstance(v, dict) and "env" in v else str(v)

    host, port = value("hostname", "localhost"), int(value("port", "5432"))
    try:
        with socket.create_connection((host, port), timeout=connect_timeout_s):
            pass
    except OSError as exc:
        return [
            Finding(
                "instance storage",
                "error",
                f"PostgreSQL at {host}:{port} is not reachable: {exc}",
                "start the database, or correct DAGSTER_PG_HOST / DAGSTER_PG_PORT",
            )
        ]
    return [Finding("instance storage", "ok", f"PostgreSQL at {host}:{port} reachable ({config_file})")]


def run_checks(
    settings: Settings,
    warehouse: str | Path | None = None,
    lock: str | Path = DEFAULT_LOCK,
    model_paths: Mapping[str, str] | None = None,
    require_gpu: bool = False,
    environ: Mapping[str, str] | None = None,
) -> list[Finding]:
    """Every core check, of an installation run with ``settings`` (the CLI passes the file it is
    given, or the defaults). ``model_paths`` defaults to the ones ``settings`` and the environment
    configure."""
    found = [*check_packages(lock), *check_rapidocr_models(), *check_ocr_runtime(settings)]
    found += check_cpu_numerics(settings)
    paths = configured_model_paths(settings, environ) if model_paths is None else dict(model_paths)
    found += check_model_paths(paths)
    found += check_gpu(require_gpu)
    if warehouse is not None and str(warehouse).startswith("ducklake:"):
        found += check_lake(str(warehouse))
    elif warehouse is not None:
        found += check_schema_version(warehouse)
        found += check_snapshot(warehouse)
    found += check_instance_storage(environ)
    return found


def report(findings: Sequence[Finding]) -> tuple[str, int]:
    """The printed report and the exit code (1 when any error)."""
    errors = sum(f.status == "error" for f in findings)
    warns = sum(f.status == "warn" for f in findings)
    text = "\n".join(f.line() for f in findings)
    text += f"\n\n{errors} error(s), {warns} warning(s)"
    return text, 1 if errors else 0
