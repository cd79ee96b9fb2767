"""A tiny random Qwen2-VL-style OCR checkpoint for tests and CPU benchmarks (no download, no GPU).

``build_tiny_vlm`` writes what a real decoder-only OCR VLM folder holds (olmOCR, Nanonets-OCR and
their like are Qwen2/2.5-VL fine-tunes): ``Qwen2VLForConditionalGeneration`` weights and config, a
tokenizer with Qwen's special tokens, a ``Qwen2VLImageProcessor`` and a chat template, all through
``save_pretrained``, so the engine loads it through ``AutoModelForImageTextToText`` and
``AutoProcessor`` exactly as it would load a real checkpoint. ``derive_vlm_draft`` writes an
``exact`` copy (acceptance 1.0), a ``noisy`` copy (0 < acceptance < 1) or a ``shallow`` draft (the
target's first text layers) sharing the tokenizer and processor.
"""

from __future__ import annotations

import copy
from pathlib import Path

from support.tiny_models import CHARSET

#: Qwen2-VL's special tokens, in the order their ids are given after the character vocabulary
QWEN_SPECIALS = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
)
#: the shape of Qwen2-VL's own chat template, reduced to one user turn with images and text
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}{% if part['type'] == 'image' %}"
    "<|vision_start|><|image_pad|><|vision_end|>{% elif part['type'] == 'text' %}{{ part['text'] }}"
    "{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _save_processor(path: Path, *, patch: int = 14, max_pixels: int = 56 * 56 * 4) -> None:
    """Tokenizer (chat template inside) and image processor, the files a Qwen2-VL folder holds."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    vocab = {ch: i for i, ch in enumerate(CHARSET + "\n")}
    for tok in QWEN_SPECIALS:
        vocab[tok] = len(vocab)
    vocab["<unk>"] = len(vocab)
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")
    tok.decoder = decoders.Fuse()
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in QWEN_SPECIALS])
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>", unk_token="<unk>"
    )
    fast.padding_side = "left"  # batched decoder-only prompts are left-padded
    image_processor = Qwen2VLImageProcessorPil(
        patch_size=patch,
        merge_size=2,
        temporal_patch_size=2,
        min_pixels=patch * patch * 4,
        max_pixels=max_pixels,
    )
    # tokenizer (with the chat template) and image processor saved apart: Qwen2VLProcessor itself
    # insists on a video processor, which needs torchvision; the engine expands image tokens itself
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(path)
    image_processor.save_pretrained(path)


def build_tiny_vlm(
    path: str | Path,
    *,
    seed: int = 0,
    hidden: int = 64,
    layers: int = 2,
    vision_depth: int = 1,
    init_std: float = 0.3,
    damp_deep_layers: float | None = None,
    keep_layers: int = 1,
    max_pixels: int = 56 * 56 * 4,
    vocab_size: int | None = None,
    intermediate: int | None = None,
    kv_heads: int | None = None,
    head_dim: int = 32,
    emit_eos: bool = True,
    save_dtype: str | None = None,
) -> Path:
    """Write a random tiny Qwen2-VL-style checkpoint (model, tokenizer, processor, chat template).

    Special tokens get zero logits (EOS too unless ``emit_eos``) so that, like an OCR model, it
    writes text. ``vocab_size`` above the tokenizer's (about 60 characters and specials) gives a benchmark the
    output-layer cost of a real vocabulary (Qwen2-VL: 151,936); the extra ids are never emitted.
    """
    import torch
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    _save_processor(path, max_pixels=max_pixels)
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    ids = {t: tok.convert_tokens_to_ids(t) for t in QWEN_SPECIALS}
    torch.manual_seed(seed)
    heads = max(2, hidden // head_dim)
    q = (hidden // heads) // 16
    section = [2 * q, 3 * q, 3 * q]
    cfg = Qwen2VLConfig(
        text_config={
            "vocab_size": max(vocab_size or 0, len(tok)),
            "hidden_size": hidden,
            "intermediate_size": intermediate or 2 * hidden,
            "num_hidden_layers": layers,
            "num_attention_heads": heads,
            "num_key_value_heads": kv_heads or heads,
            "max_position_embeddings": 4096,
            "initializer_range": init_std,
            # M-RoPE splits each head's rotary half into temporal, height and width sections
            "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": section},
            "bos_token_id": ids["<|im_start|>"],
            "eos_token_id": ids["<|im_end|>"],
            "pad_token_id": ids["<|endoftext|>"],
            "tie_word_embeddings": False,
        },
        vision_config={
            "depth": vision_depth,
            "embed_dim": 32,
            "hidden_size": hidden,
            "num_heads": 2,
            "mlp_ratio": 2,
            "patch_size": 14,
            "spatial_merge_size": 2,
            "temporal_patch_size": 2,
            "in_channels": 3,
            "initializer_range": 0.02,
        },
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    )
    model = Qwen2VLForConditionalGeneration(cfg)
    if damp_deep_layers is not None:
        with torch.no_grad():
            for layer in model.model.language_model.layers[keep_layers:]:
                layer.self_attn.o_proj.weight.mul_(damp_deep_layers)
                layer.mlp.down_proj.weight.mul_(damp_deep_layers)
    with torch.no_grad():
        # an OCR model writes text: zero logits for the special tokens (EOS aside) keep a random
        # model from emitting them (the max of ~50 random logits is almost always above zero)
        for t in (*QWEN_SPECIALS, "<unk>"):
            if t != "<|im_end|>" or not emit_eos:
                model.lm_head.weight[tok.convert_tokens_to_ids(t)] = 0.0
        model.lm_head.weight[len(tok) :] = 0.0  # ids past the tokenizer's: never emitted
    gc = model.generation_config
    if save_dtype is not None:  # a 2B-parameter benchmark target in bf16 halves disk and load time
        model.to({"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[save_dtype])
    gc.eos_token_id, gc.pad_token_id, gc.bos_token_id = (
        ids["<|im_end|>"],
        ids["<|endoftext|>"],
        ids["<|im_start|>"],
    )
    model.save_pretrained(path)
    return path


def derive_vlm_draft(
    target_path: str | Path,
    draft_path: str | Path,
    *,
    kind: str = "exact",
    noise: float = 0.05,
    keep_layers: int = 1,
    seed: int = 1,
) -> Path:
    """A draft sharing the target's tokenizer and processor: ``exact``, ``noisy`` or ``shallow``."""
    import torch
    from transformers import Qwen2VLForConditionalGeneration

    target = Qwen2VLForConditionalGeneration.from_pretrained(target_path)
    draft = copy.deepcopy(target)
    if kind == "noisy":
        gen = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for p in draft.model.language_model.parameters():
                if p.numel() > 1:
                    p.add_(torch.randn(p.shape, generator=gen) * p.std() * noise)
    elif kind == "shallow":
        del draft.model.language_model.layers[keep_layers:]
        draft.config.text_config.num_hidden_layers = keep_layers
        draft.config.text_config.layer_types = draft.config.text_config.layer_types[:keep_layers]
    elif kind != "exact":
        raise ValueError(f"unknown draft kind {kind!r}")
    draft_path = Path(draft_path)
    draft.save_pretrained(draft_path)
    _save_processor(draft_path)
    return draft_path
