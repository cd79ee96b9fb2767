"""What cheaper embeddings of the same model cost in retrieval (issue 34's KB stage at 0.15 CPU s a page).

    .venv/bin/python bench/kb_embed_variants.py --warehouse W --variant tokens=128 [--json OUT]

``W`` is a warehouse ``bench/kb_retrieval.py`` parsed (its chunks and naive anchors are reused, on a copy).
Every chunk is embedded again with the variant (CPU s a page, the two reports and all documents), then
``bench/kb_retrieval.py --reuse`` scores the product's searches with the variant's vectors and queries.
Variants: ``tokens=N`` (the word pieces of a chunk the model reads), ``layers=N`` (the first N of the six
transformer layers; the query is embedded by the same cut model), ``int8`` (the int8 copy of
``dagster_ocr/embeddings_int8.py``). The runtime and precision are the
product's defaults on this CPU (OpenVINO; bfloat16 where the CPU has native bf16 instructions).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from dagster_ocr import embeddings, kb  # noqa: E402
from dagster_ocr.cpu import has_native_bf16  # noqa: E402
from dagster_ocr.kb_settings import KbSettings  # noqa: E402
from dagster_ocr.warehouse import Warehouse  # noqa: E402


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def build(variant: str) -> embeddings.Embedder:
    """The product's embedder, changed as ``variant`` says."""
    name, _, value = variant.partition("=")
    dtype = "bfloat16" if has_native_bf16() else "float32"
    if name == "tokens":
        return embeddings.Embedder(
            embeddings.model_dir(), max_tokens=int(value), dtype=dtype, runtime="openvino"
        )
    if name == "layers":
        import openvino as ov

        e = embeddings.Embedder(embeddings.model_dir(), dtype="float32", runtime="torch")
        e.model.encoder.layer = e.model.encoder.layer[: int(value)]
        e.model.config.num_hidden_layers = int(value)
        example = e.tokenizer(["a b", "c"], padding=True, return_tensors="pt")
        converted = ov.convert_model(e.model, example_input=dict(example))
        e._ov = ov.Core().compile_model(converted, "CPU", embeddings._ov_precision(dtype))
        e.runtime, e.dtype = "openvino", dtype
        return e
    if name == "int8":  # the int8 copy the product builds on CPUs with VNNI or AMX (embeddings_int8)
        import openvino as ov

        from dagster_ocr import embeddings_int8

        e = embeddings.Embedder(embeddings.model_dir(), dtype=dtype, runtime="openvino")
        f32_xml = embeddings._openvino_cache_path(ov.__version__)
        path = embeddings_int8.ensure_int8(f32_xml, e.encode, embeddings._save_atomically)
        e._ov = ov.Core().compile_model(str(path), "CPU", embeddings._ov_precision(dtype))
        e.dtype = "int8"
        return e
    raise SystemExit(f"unknown variant {variant!r}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--warehouse", type=Path, required=True)
    ap.add_argument("--variant", required=True, help="tokens=N or layers=N")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    embedder = build(args.variant)
    embeddings.get_embedder = lambda *a, **k: embedder  # the chunks' and the questions' vectors
    src = args.warehouse.resolve()
    with tempfile.TemporaryDirectory(dir=src.parent) as tmp:
        copy = Path(tmp) / src.name
        for suffix in ("", ".wal", ".naive_minilm.npz"):
            if Path(str(src) + suffix).exists():
                shutil.copyfile(str(src) + suffix, str(copy) + suffix)
        wh = Warehouse(copy)
        wh.write(lambda con: con.execute("DELETE FROM kb_embeddings"))
        docs = wh.query("SELECT doc_id, file_name, n_pages FROM documents WHERE status = 'parsed'")
        embedder.embed(["warm up"] * 4)
        figures: dict[str, Any] = {
            "variant": args.variant,
            "runtime": embedder.runtime,
            "dtype": embedder.dtype,
        }
        total = reports = pages = report_pages = 0.0
        for doc_id, name, n_pages in docs.itertuples(index=False):
            start = cpu_seconds()
            kb.embed_document(wh, doc_id, settings=KbSettings())
            spent = cpu_seconds() - start
            total, pages = total + spent, pages + n_pages
            if name.startswith(("apple-", "tesla-")):
                reports, report_pages = reports + spent, report_pages + n_pages
        figures["embed_cpu_s_per_page"] = round(total / max(pages, 1), 3)
        figures["reports_embed_cpu_s_per_page"] = round(reports / max(report_pages, 1), 3)
        print(json.dumps(figures), flush=True)
        import kb_retrieval

        out = Path(tmp) / "retrieval.json"
        sys.argv = [
            "kb_retrieval.py",
            "--warehouse",
            str(copy),
            "--reuse",
            "--no-kb-stage",
            "--json",
            str(out),
        ]
        kb_retrieval.main()
        figures["retrieval"] = json.loads(out.read_text())
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
