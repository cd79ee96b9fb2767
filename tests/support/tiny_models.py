"""Tiny random TrOCR-style checkpoints for tests and CPU benchmarks (no download, no GPU).

``build_tiny_target`` writes a ``VisionEncoderDecoderModel`` (ViT encoder, TrOCR decoder), a
character-level tokenizer and a ``preprocessor_config.json`` with ``save_pretrained`` into a
folder, exactly the layout of a real local checkpoint, so the speculative engine loads it through
its real loading code. Drafts are derived from a target:

* ``exact`` copy: every draft token is the target's own argmax, acceptance is 1.0;
* ``noisy`` copy: the decoder's weights perturbed, 0 < acceptance < 1;
* ``shallow`` draft: the target's first decoder layers only. Paired with a target built with
  ``damp_deep_layers`` (its deeper layers' residual contributions scaled down) this makes a draft
  that is several times cheaper than the target and still agrees with it most of the time, the
  shape of a real distilled draft, with random weights.

Independent random models agree on almost nothing, which is why drafts are derived, not random.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

#: characters of the tiny tokenizer; ids 0-3 are the special tokens below
CHARSET = "abcdefghijklmnopqrstuvwxyz0123456789 .,:;-$%/"
SPECIALS = ("<s>", "<pad>", "</s>", "<unk>")


def _save_tokenizer(path: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {tok: i for i, tok in enumerate(SPECIALS)}
    for ch in CHARSET:
        vocab[ch] = len(vocab)
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")  # one token per character
    tok.decoder = decoders.Fuse()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", pad_token="<pad>", eos_token="</s>", unk_token="<unk>"
    )
    fast.save_pretrained(path)


def build_tiny_target(
    path: str | Path,
    *,
    seed: int = 0,
    image_size: int = 32,
    d_model: int = 32,
    decoder_layers: int = 2,
    encoder_layers: int = 1,
    init_std: float = 0.3,
    damp_deep_layers: float | None = None,
    keep_layers: int = 1,
    emit_eos: bool = True,
) -> Path:
    """Write a random tiny TrOCR-style checkpoint (model, tokenizer, preprocessor) to ``path``.

    Like an OCR model it writes text: its output layer's rows for ``<s>``, ``<pad>`` and ``<unk>``
    (and for ``</s>`` unless ``emit_eos``: fixed-length benchmarks) are zero, so the argmax of
    the other random logits, almost always above zero, wins; its decoded text then holds every
    token it emitted, which is what page-text drafts of "the text it reads" need.

    ``init_std`` is large on purpose: with the usual 0.02 a random decoder repeats one token,
    which makes any draft look perfect. ``damp_deep_layers`` scales the output projections of
    decoder layers ``keep_layers..`` so the target stays close to its shallow truncation.
    """
    import torch
    from transformers import (
        TrOCRConfig,
        TrOCRForCausalLM,
        VisionEncoderDecoderConfig,
        VisionEncoderDecoderModel,
        ViTConfig,
        ViTModel,
    )

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    vocab = len(SPECIALS) + len(CHARSET)
    enc_cfg = ViTConfig(
        image_size=image_size,
        patch_size=8,
        num_channels=3,
        hidden_size=d_model,
        num_hidden_layers=encoder_layers,
        num_attention_heads=2,
        intermediate_size=2 * d_model,
    )
    dec_cfg = TrOCRConfig(
        vocab_size=vocab,
        d_model=d_model,
        decoder_layers=decoder_layers,
        decoder_attention_heads=max(2, d_model // 32),
        decoder_ffn_dim=4 * d_model,
        max_position_embeddings=512,
        cross_attention_hidden_size=d_model,
        init_std=init_std,
        bos_token_id=0,
        pad_token_id=1,
        eos_token_id=2,
        decoder_start_token_id=0,
        tie_word_embeddings=False,  # the output rows zeroed below must not zero the embeddings
    )
    cfg = VisionEncoderDecoderConfig.from_encoder_decoder_configs(enc_cfg, dec_cfg)
    cfg.decoder_start_token_id, cfg.pad_token_id, cfg.eos_token_id = 0, 1, 2
    model = VisionEncoderDecoderModel(cfg, encoder=ViTModel(enc_cfg), decoder=TrOCRForCausalLM(dec_cfg))
    if damp_deep_layers is not None:
        with torch.no_grad():
            for layer in model.decoder.model.decoder.layers[keep_layers:]:
                for mod in (layer.self_attn.out_proj, layer.encoder_attn.out_proj, layer.fc2):
                    mod.weight.mul_(damp_deep_layers)
                    mod.bias.mul_(damp_deep_layers)
    with torch.no_grad():
        for tok_id in (0, 1, 3) if emit_eos else (0, 1, 2, 3):
            model.decoder.output_projection.weight[tok_id] = 0.0
    model.generation_config.decoder_start_token_id = 0
    model.generation_config.bos_token_id = 0
    model.generation_config.pad_token_id = 1
    model.generation_config.eos_token_id = 2
    model.save_pretrained(path)
    _save_tokenizer(path)
    (path / "preprocessor_config.json").write_text(
        json.dumps(
            {
                "size": {"height": image_size, "width": image_size},
                "do_rescale": True,
                "rescale_factor": 1 / 255,
                "do_normalize": True,
                "image_mean": [0.5, 0.5, 0.5],
                "image_std": [0.5, 0.5, 0.5],
            }
        )
    )
    return path


def derive_draft(
    target_path: str | Path,
    draft_path: str | Path,
    *,
    kind: str = "exact",
    noise: float = 0.05,
    keep_layers: int = 1,
    seed: int = 1,
) -> Path:
    """Write a draft derived from the target at ``target_path``: ``exact``, ``noisy`` or ``shallow``.

    ``noise`` is the perturbation of each decoder weight in units of that tensor's std (``noisy``);
    ``keep_layers`` is how many decoder layers a ``shallow`` draft keeps.
    """
    import torch
    from transformers import VisionEncoderDecoderModel

    target = VisionEncoderDecoderModel.from_pretrained(target_path)
    draft = copy.deepcopy(target)
    if kind == "noisy":
        gen = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for p in draft.decoder.parameters():
                if p.numel() > 1:
                    p.add_(torch.randn(p.shape, generator=gen) * p.std() * noise)
    elif kind == "shallow":
        layers = draft.decoder.model.decoder.layers
        del layers[keep_layers:]
        draft.config.decoder.decoder_layers = keep_layers
        draft.decoder.config.decoder_layers = keep_layers
    elif kind != "exact":
        raise ValueError(f"unknown draft kind {kind!r}")
    draft_path = Path(draft_path)
    draft.save_pretrained(draft_path)
    _save_tokenizer(draft_path)
    (draft_path / "preprocessor_config.json").write_text(
        (Path(target_path) / "preprocessor_config.json").read_text()
    )
    return draft_path


def train_to_read(
    model,
    pixel_values,
    token_ids: list[list[int]],
    *,
    eos: int = 2,
    steps: int = 250,
    lr: float = 3e-3,
    target_loss: float = 0.05,
    seed: int = 0,
) -> int:
    """Train a tiny ``VisionEncoderDecoderModel`` in place, for seconds, to read ``pixel_values``
    (N, 3, H, W) as ``token_ids`` (N lists): a target that copies the text it sees, for tests of
    drafts taken from a page's own text. Returns the steps taken; leaves the model in eval mode."""
    import torch

    torch.manual_seed(seed)
    width = max(len(t) for t in token_ids) + 1
    labels = torch.full((len(token_ids), width), -100, dtype=torch.long)
    for i, ids in enumerate(token_ids):
        labels[i, : len(ids) + 1] = torch.tensor([*ids, eos])
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    taken = 0
    with torch.enable_grad():
        while taken < steps:
            taken += 1
            loss = model(pixel_values=pixel_values, labels=labels).loss
            opt.zero_grad()
            loss.backward()
            opt.step()
            if loss.item() < target_loss:
                break
    model.eval()
    return taken
