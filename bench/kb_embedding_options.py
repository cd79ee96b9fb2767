"""What could make the knowledge base's embeddings cheaper, measured on a parsed warehouse (issue 34).

The knowledge_base stage is ~99% all-MiniLM-L6-v2 on OpenVINO (f32). Three ways out, each measured
against the shipped embedder on the same chunks:

- ``tokens``: how many word pieces the stage embeds (chunk text, the context line before it, the
  Markdown of table chunks) against a plain ``get_text()`` of the same PDFs, and what caps would cut;
- ``ort-int8``: onnxruntime's dynamic int8 of the same model (exported to ONNX here), on report text;
- ``int8``: the product's int8 copy (``dagster_ocr/embeddings_int8.py``: NNCF, static int8 with
  SmoothQuant, calibrated on generated chunk-like text), timed and compared with f32 (and bf16) on
  the check report's (Tesla's) chunks: CPU seconds, cosine to the f32 vectors, overlap of each
  chunk's 5 nearest neighbours;
- ``static``: a model2vec static model distilled from the same bundled weights, run as the product's
  embedder through ``bench/kb_retrieval.py --reuse --rebuild-kb`` (recall and the stage's CPU; the
  naive MiniLM anchor stays on the real model).

model2vec is not a product dependency (nncf is); install it beside the venv for this bench only:

    .venv/bin/pip install --no-deps --target /tmp/kbx/site2 model2vec==0.10.0 skeletoken
    .venv/bin/python bench/kb_embedding_options.py tokens --warehouse /tmp/kb/base.duckdb
    .venv/bin/python bench/kb_embedding_options.py int8 --warehouse /tmp/kb/base.duckdb
    .venv/bin/python bench/kb_embedding_options.py ort-int8 --chunks 300
    .venv/bin/python bench/kb_embedding_options.py static --warehouse /tmp/kbx/static.duckdb \
        --site /tmp/kbx/site2 -- --reuse --rebuild-kb --json /tmp/kbx/static.json

``--warehouse`` is one that ``bench/kb_retrieval.py`` parsed. ``static`` rewrites that warehouse's
vectors: give it a copy, with ``kb_embeddings`` emptied (a kept vector of the same text would be
reused and mix the two models).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import types
from pathlib import Path

import duckdb
import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "bench")]

from dagster_ocr import embeddings, kb_search, kb_vectors  # noqa: E402


def chunk_inputs(warehouse: Path, file_like: str) -> list[str]:
    """What the stage embeds for each chunk of the matching documents (``kb_vectors.embed_input``)."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        ch = con.execute(
            "SELECT c.* FROM kb_chunks c JOIN documents d USING (doc_id) "
            "WHERE d.file_name LIKE ? ORDER BY c.doc_id, c.chunk_id",
            [file_like],
        ).df()
    return [kb_vectors.embed_input(ch, i) for i in range(len(ch))]


def tokens(args: argparse.Namespace) -> None:
    import pymupdf
    from kb_retrieval import find_shared

    n = embeddings.get_embedder().count_tokens
    inputs = chunk_inputs(args.warehouse, "%10k%")
    counts = np.array([n(t) for t in inputs])
    raw = 0
    for f in ("apple-10k-fy2024.pdf", "tesla-10k-fy2023.pdf"):
        with pymupdf.open(find_shared() / "reports" / f) as doc:
            raw += sum(n(p.get_text()) for p in doc)
    print(
        f"{len(inputs)} chunks; word pieces embedded (256 cap): {np.minimum(counts, 256).sum()}, "
        f"uncapped {counts.sum()}, chunks over 256: {(counts > 256).sum()}; plain get_text(): {raw}"
    )
    for cap in (192, 128):
        print(f"  capped at {cap}: {np.minimum(counts, cap).sum()}")


def cpu_embed(embedder: embeddings.Embedder, texts: list[str]) -> tuple[np.ndarray, float]:
    embedder.embed(texts[:32])  # warm: kernels for the first shapes
    c = time.process_time()
    return embedder.embed(texts), time.process_time() - c


def int8(args: argparse.Namespace) -> None:
    """The shipped int8 copy (``embeddings_int8.quantize``: NNCF, calibrated on generated text)
    against f32 (and bf16 where the CPU has it) on the check report's chunks."""
    import openvino as ov

    from dagster_ocr import embeddings_int8

    emb = embeddings.get_embedder(dtype="float32")
    core = ov.Core()
    model = core.read_model(str(embeddings._openvino_cache_path(ov.__version__)))
    qmodel = embeddings_int8.quantize(model, emb.encode)
    check = chunk_inputs(args.warehouse, "tesla%")[: args.chunks]
    variants = {
        "f32": core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"}),
        "int8": core.compile_model(qmodel, "CPU", {"INFERENCE_PRECISION_HINT": "f32"}),
    }
    if embeddings._openvino_runs("bfloat16"):  # a CPU with bf16 instructions ships bf16: time against it
        bf16 = embeddings._ov_precision("bfloat16")
        variants["bf16"] = core.compile_model(model, "CPU", bf16)
        variants["int8 + bf16"] = core.compile_model(qmodel, "CPU", bf16)
    out = {}
    for rnd in ("", " again"):  # two rounds, interleaved: the machine is noisy
        for name, compiled in variants.items():
            emb._ov = compiled
            out[name + rnd], cpu = cpu_embed(emb, check)
            print(f"{name}{rnd}: {cpu:.2f} CPU s for {len(check)} check chunks", flush=True)
    near = lambda v: np.argsort(-(v @ v.T), 1)[:, 1:6]  # noqa: E731
    for name in variants:
        if name == "f32":
            continue
        cos = (out["f32"] * out[name]).sum(1)
        overlap = np.mean(
            [len(set(a) & set(b)) / 5 for a, b in zip(near(out["f32"]), near(out[name]), strict=True)]
        )
        print(
            f"{name}: cosine to f32 min {cos.min():.4f}, p5 {np.percentile(cos, 5):.4f}, "
            f"mean {cos.mean():.4f}; 5-nearest overlap {overlap:.3f}"
        )


def static(args: argparse.Namespace, rest: list[str]) -> None:
    sys.path.append(str(args.site))
    from model2vec import StaticModel

    folder = args.model_dir
    if not (folder / "model.safetensors").exists():
        from model2vec.distill import distill_from_model
        from transformers import AutoModel, AutoTokenizer

        path = str(embeddings.model_dir())
        c = time.process_time()
        m = distill_from_model(
            AutoModel.from_pretrained(path),
            AutoTokenizer.from_pretrained(path),
            pca_dims=None,
            quantize_to="float32",
        )
        print(f"distilled in {time.process_time() - c:.0f} CPU s", flush=True)
        m.save_pretrained(str(folder))
    sm = StaticModel.from_pretrained(str(folder))

    class StaticEmbedder:
        def embed(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
            v = sm.encode(list(texts), max_length=None).astype(np.float32)
            return v / np.clip(np.linalg.norm(v, axis=1, keepdims=True), 1e-12, None)

    # the product's embedder only: the bench's naive MiniLM anchor keeps the real model
    shim = types.SimpleNamespace(
        **{k: getattr(embeddings, k) for k in dir(embeddings) if not k.startswith("__")}
    )
    shim.get_embedder = lambda *a, **k: StaticEmbedder()
    kb_vectors.embeddings = shim  # the chunks' vectors
    kb_search.embeddings = shim  # the questions' vectors
    import kb_retrieval

    sys.argv = ["kb_retrieval.py", "--warehouse", str(args.warehouse), *rest]
    kb_retrieval.main()


def ort_int8(args: argparse.Namespace) -> None:
    """onnxruntime's dynamic int8 (``quantize_dynamic``: MatMulInteger, weights int8 or uint8) against
    the shipped OpenVINO f32 embedder, on ``--chunks`` pieces of 900 characters of the two reports'
    plain text (no warehouse needed; onnx and onnxruntime are product dependencies already)."""
    import onnxruntime as ort
    import pymupdf
    import torch
    from kb_retrieval import find_shared
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoModel

    emb = embeddings.get_embedder()
    texts = []
    for f in ("apple-10k-fy2024.pdf", "tesla-10k-fy2023.pdf"):
        with pymupdf.open(find_shared() / "reports" / f) as doc:
            for page in doc:
                t = page.get_text()
                texts += [t[i : i + 900] for i in range(0, len(t), 900) if t[i : i + 900].strip()]
    texts = texts[::3][: args.chunks]
    work = args.model_dir.parent / "ort"
    work.mkdir(parents=True, exist_ok=True)
    f32 = work / "minilm.onnx"
    if not f32.exists():
        model = AutoModel.from_pretrained(str(embeddings.model_dir())).eval()

        class Hidden(torch.nn.Module):  # positional inputs: BertModel.forward's order has moved
            def __init__(self, m: torch.nn.Module) -> None:
                super().__init__()
                self.m = m

            def forward(self, input_ids, attention_mask, token_type_ids):  # noqa: ANN001
                return self.m(
                    input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
                ).last_hidden_state

        names = ["input_ids", "attention_mask", "token_type_ids"]
        ex = emb.encode(["a b c", "d"])
        torch.onnx.export(
            Hidden(model),
            tuple(torch.from_numpy(ex[n]) for n in names),
            str(f32),
            input_names=names,
            output_names=["hidden"],
            dynamic_axes={n: {0: "b", 1: "s"} for n in [*names, "hidden"]},
            opset_version=17,
            dynamo=False,
        )
    variants = {"onnxruntime f32": f32}
    for name, kw in {
        "int8 per-channel reduce_range": {"per_channel": True, "reduce_range": True},
        "int8 per-channel": {"per_channel": True, "reduce_range": False},
        "uint8 weights": {"per_channel": False, "reduce_range": False, "weight_type": QuantType.QUInt8},
    }.items():
        path = work / f"minilm.{re.sub(r'[^a-z0-9]+', '_', name)}.onnx"
        if not path.exists():
            quantize_dynamic(str(f32), str(path), **({"weight_type": QuantType.QInt8} | kw))
        variants[name] = path

    def run(sess: ort.InferenceSession, batch_texts: list[str]) -> np.ndarray:
        out = np.zeros((len(batch_texts), embeddings.DIM), np.float32)
        order = sorted(range(len(batch_texts)), key=lambda i: len(batch_texts[i]))
        for start in range(0, len(order), 32):
            idx = order[start : start + 32]
            b = emb.encode([batch_texts[i] for i in idx])
            hidden = sess.run(None, {k: b[k] for k in ("input_ids", "attention_mask", "token_type_ids")})[0]
            mask = b["attention_mask"][..., None].astype(np.float32)
            pooled = (hidden * mask).sum(1) / mask.sum(1)
            out[idx] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return out

    def nearest5(x: np.ndarray) -> np.ndarray:
        sim = x @ x.T
        np.fill_diagonal(sim, -1)
        return np.argsort(-sim, 1)[:, :5]

    ref, cpu = cpu_embed(emb, texts)
    print(f"{len(texts)} chunks; OpenVINO f32 (shipped): {cpu:.2f} CPU s")
    for name, path in variants.items():
        sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        run(sess, texts[:32])
        c = time.process_time()
        vec = run(sess, texts)
        cpu = time.process_time() - c
        cos = (vec * ref).sum(1)
        a, b = nearest5(ref), nearest5(vec)
        overlap = np.mean([len(set(a[i]) & set(b[i])) / 5 for i in range(len(a))])
        print(
            f"{name}: {cpu:.2f} CPU s; cosine to f32 min {cos.min():.4f} mean {cos.mean():.4f}; "
            f"5-NN {overlap:.3f}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("tokens", "int8", "ort-int8", "static"))
    ap.add_argument("--warehouse", type=Path, help="tokens, int8, static: a warehouse kb_retrieval.py parsed")
    ap.add_argument("--site", type=Path, help="where model2vec is installed (pip --target)")
    ap.add_argument("--chunks", type=int, default=300, help="int8: check chunks timed")
    ap.add_argument(
        "--model-dir", type=Path, default=Path("/tmp/kbx/m2v"), help="static: the distilled model"
    )
    args, rest = ap.parse_known_args()
    if args.what != "ort-int8" and args.warehouse is None:
        ap.error(f"{args.what} needs --warehouse")
    rest = [a for a in rest if a != "--"]
    {
        "tokens": lambda: tokens(args),
        "int8": lambda: int8(args),
        "ort-int8": lambda: ort_int8(args),
        "static": lambda: static(args, rest),
    }[args.what]()


if __name__ == "__main__":
    main()
