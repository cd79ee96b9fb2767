"""Batched lossless speculative decoding: a batch of regions drafts and verifies together.

transformers' assisted generation is batch size 1 only (transformers#32165), so a page's regions
would decode one at a time when they speculate and lose to plain batched decoding. This loop keeps
the whole batch together:

1. the target prefills every row (one batched pass) and picks each row's first token;
2. each round a *drafter* proposes up to K tokens per row (another model, or a continuation looked
   up in text the page already has: ``TextDrafter``);
3. the target verifies all rows' drafts in ONE forward of K+1 tokens per row; each row accepts its
   own longest prefix of drafts equal to the target's argmax, plus the target's next token (so the
   output is, token for token, the target's own greedy output whatever the draft proposed);
4. rows that emitted EOS or reached their budget leave the batch (their cache rows are dropped).

Caches (the justified equivalent of trimming them per sequence): rows accept different numbers of
tokens, so one rectangular KV cache cannot be cut at one length. Rejected entries are instead
*masked out* per row in the attention mask (a hole in that row), and every token is given its
logical position explicitly (``position_ids``; 3-D M-RoPE ids for Qwen2-VL; a forward hook on the
positional embedding of TrOCR/MBart decoders, which take no ``position_ids``), so a masked hole is
exactly as if the entry had never been written. ``compact`` gathers each row's live entries when
holes pile up, bounding memory. Masked keys get zero attention weight, so the arithmetic is the
same as a cropped cache up to floating-point summation order.
"""

from __future__ import annotations

import bisect
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

logger = logging.getLogger(__name__)


def _torch() -> Any:
    import torch

    return torch


# ------------------------------------------------------------------------------------- runners


class _Runner:
    """One model's batched incremental decoding state: KV cache, per-row mask and logical lengths."""

    def __init__(self, model: Any):
        self.model = model
        self.cache: Any = None
        self.mask: Any = None  # (B, P) long: 1 where the cache slot holds a live entry
        self.lengths: Any = None  # (B,) long: live entries per row (= next logical position)
        self.forwards = 0

    # model specific
    def _forward(self, tokens: Any, positions: Any) -> Any:  # -> logits (B, T, V)
        raise NotImplementedError

    def _select_extra(self, idx: Any) -> None:
        pass

    def extend(self, tokens: Any, valid: Any) -> Any:
        """Feed ``tokens`` (B, T); ``valid`` (B, T) bool marks real ones (others become holes).

        Returns the logits (B, T, V); rows' outputs at invalid positions are meaningless.
        """
        torch = _torch()
        v = valid.long()
        positions = self.lengths[:, None] + torch.cumsum(v, dim=1) - v
        self.mask = torch.cat([self.mask, v], dim=1)
        self.lengths = self.lengths + v.sum(dim=1)
        self.forwards += 1
        return self._forward(tokens, positions)

    def drop_last(self, n: Any) -> None:
        """Turn each row's last ``n[b]`` live entries into holes (rejected draft tokens)."""
        torch = _torch()
        if not bool((n > 0).any()):
            return
        from_right = torch.flip(torch.cumsum(torch.flip(self.mask, [1]), dim=1), [1])
        self.mask = self.mask * ~((from_right <= n[:, None]) & (self.mask > 0))
        self.lengths = self.lengths - n

    def select(self, idx: Any) -> None:
        """Keep only the rows ``idx`` (a 1-D long tensor), in that order."""
        self.cache.batch_select_indices(idx)
        self.mask = self.mask[idx]
        self.lengths = self.lengths[idx]
        self._select_extra(idx)

    def holes(self) -> int:
        return int(self.mask.shape[1] - int(self.lengths.max()))

    def compact(self) -> None:
        """Gather each row's live entries to the right end of a shorter cache (pads on the left)."""
        torch = _torch()
        width = int(self.lengths.max())
        if width == self.mask.shape[1]:
            return
        live = self.mask.bool()
        # for each row, the physical slots of its live entries in order, right-aligned
        order = torch.argsort((~live).long(), dim=1, stable=True)[:, :width]
        counts = self.lengths
        shift = width - counts  # left pads per row
        ar = torch.arange(width, device=self.mask.device)[None, :]
        src = torch.where(ar >= shift[:, None], torch.gather(order, 1, (ar - shift[:, None]).clamp(min=0)), 0)
        new_mask = (ar >= shift[:, None]).long()
        for layer in _self_attention_layers(self.cache):
            b, h, _, d = layer.keys.shape
            gi = src[:, None, :, None].expand(b, h, width, d)
            layer.keys = torch.gather(layer.keys, 2, gi)
            layer.values = torch.gather(layer.values, 2, gi)
        self.mask = new_mask


def _self_attention_layers(cache: Any) -> list[Any]:
    inner = getattr(cache, "self_attention_cache", cache)
    layers = list(inner.layers)
    for layer in layers:
        if getattr(layer, "is_sliding", False) or not hasattr(layer, "keys"):
            raise ValueError("batched speculation needs full-attention dynamic cache layers")
    return layers


class EncoderDecoderRunner(_Runner):
    """A ``VisionEncoderDecoderModel`` (TrOCR, Donut, Nougat style) decoding from encoder states."""

    def __init__(self, model: Any, encoder_hidden: Any):
        super().__init__(model)
        self.hidden = encoder_hidden  # (B, S, D)
        self._positions: Any = None
        emb = _positional_embedding(model.decoder)
        self._hook = emb.register_forward_hook(self._position_hook)
        self._emb = emb

    def close(self) -> None:
        self._hook.remove()

    def _position_hook(self, module: Any, args: Any, output: Any) -> Any:
        torch = _torch()
        pos = self._positions
        if hasattr(module, "offset") and hasattr(module, "weight"):  # learned (TrOCR, MBart/Donut)
            return torch.nn.functional.embedding(pos + module.offset, module.weight)
        weights = module.weights.to(output.device)  # sinusoidal TrOCR: ids start after padding_idx
        return (
            weights.index_select(0, (pos + module.padding_idx + 1).view(-1))
            .view(*pos.shape, -1)
            .to(output.dtype)
        )

    def prefill(self, prompt: Any) -> Any:
        """Feed the decoder prompt (B, T0), the same length for every row. Returns last logits (B, V)."""
        torch = _torch()
        from transformers.cache_utils import DynamicCache, EncoderDecoderCache

        b, t0 = prompt.shape
        self.cache = EncoderDecoderCache(DynamicCache(), DynamicCache())
        self.mask = torch.zeros((b, 0), dtype=torch.long, device=prompt.device)
        self.lengths = torch.zeros((b,), dtype=torch.long, device=prompt.device)
        return self.extend(prompt, torch.ones_like(prompt, dtype=torch.bool))[:, -1]

    def _forward(self, tokens: Any, positions: Any) -> Any:
        from transformers.modeling_outputs import BaseModelOutput

        self._positions = positions
        out = self.model(
            encoder_outputs=BaseModelOutput(last_hidden_state=self.hidden),
            decoder_input_ids=tokens,
            decoder_attention_mask=self.mask,
            cache=self.cache,
            use_cache=True,
        )
        self.cache = out.cache
        return out.logits

    def _select_extra(self, idx: Any) -> None:
        self.hidden = self.hidden[idx]


def _positional_embedding(decoder: Any) -> Any:
    found = [m for name, m in decoder.named_modules() if name.endswith("embed_positions")]
    if len(found) != 1:
        raise ValueError(
            f"batched speculation: cannot find the decoder's positional embedding in {type(decoder).__name__}"
        )
    return found[0]


class DecoderOnlyRunner(_Runner):
    """A decoder-only vision-language model (Qwen2-VL / Qwen2.5-VL family) from a left-padded prompt."""

    def __init__(self, model: Any):
        super().__init__(model)
        self.rope_deltas: Any = None  # (B, 1) for M-RoPE models, None for plain 1-D positions

    def prefill(self, inputs: dict[str, Any]) -> Any:
        """Feed the processor's batch (input_ids, attention_mask, pixel_values, ...). Returns (B, V)."""
        inner = getattr(self.model, "model", None)
        if inner is not None and hasattr(inner, "rope_deltas"):
            inner.rope_deltas = None  # stale deltas of an earlier batch must not be reused
        out = self.model(**inputs, use_cache=True, logits_to_keep=1)
        self.forwards += 1
        self.cache = out.cache
        self.mask = inputs["attention_mask"].long()
        self.lengths = self.mask.sum(dim=1)
        deltas = getattr(inner, "rope_deltas", None) if inner is not None else None
        self.rope_deltas = deltas.to(self.mask.device).view(-1, 1) if deltas is not None else None
        _self_attention_layers(self.cache)  # fail early on caches this loop cannot hole-punch
        return out.logits[:, -1]

    def _forward(self, tokens: Any, positions: Any) -> Any:
        pos = positions
        if self.rope_deltas is not None:
            pos = (positions + self.rope_deltas)[None].expand(3, -1, -1)
        out = self.model(
            input_ids=tokens, attention_mask=self.mask, position_ids=pos, cache=self.cache, use_cache=True
        )
        self.cache = out.cache
        return out.logits

    def _select_extra(self, idx: Any) -> None:
        if self.rope_deltas is not None:
            self.rope_deltas = self.rope_deltas[idx]


# ------------------------------------------------------------------------------------- drafters


class ModelDrafter:
    """Draft tokens from a smaller model sharing the target's tokenizer (its own runner and cache)."""

    kind = "draft_model"

    def __init__(self, runner: _Runner):
        self.runner = runner
        self.todo: list[list[int]] = []  # per row: committed tokens not yet in the draft's cache
        self._k = 0
        self._drafts: Any = None

    def start(self, first_tokens: list[int]) -> None:
        """After both prefills: each row's first token (the target's) is the draft's next input."""
        self.todo = [[t] for t in first_tokens]

    def propose(self, histories: Sequence[list[int]], k: int) -> list[list[int]]:
        torch = _torch()
        r = self.runner
        dev = r.mask.device
        width = max(len(t) for t in self.todo)
        block = torch.zeros((len(self.todo), width), dtype=torch.long, device=dev)
        valid = torch.zeros((len(self.todo), width), dtype=torch.bool, device=dev)
        for i, todo in enumerate(self.todo):  # right-aligned: the last column is every row's newest
            block[i, width - len(todo) :] = torch.tensor(todo, device=dev)
            valid[i, width - len(todo) :] = True
        nxt = r.extend(block, valid)[:, -1].argmax(-1)
        drafts = [nxt]
        ones = torch.ones((len(self.todo), 1), dtype=torch.bool, device=dev)
        for _ in range(k - 1):
            nxt = r.extend(nxt[:, None], ones)[:, -1].argmax(-1)
            drafts.append(nxt)
        self._k = k
        self._drafts = torch.stack(drafts, dim=1)
        return self._drafts.tolist()

    def commit(self, accepted: Sequence[int], bonus: Sequence[int]) -> None:
        """Rows accepted ``accepted[b]`` drafts, then the target's ``bonus[b]``: fix the cache."""
        torch = _torch()
        k = self._k
        keep = [min(a, k - 1) for a in accepted]
        drop = torch.tensor([(k - 1) - c for c in keep], device=self.runner.mask.device)
        self.runner.drop_last(drop)
        drafts = self._drafts.tolist()
        self.todo = [([drafts[i][k - 1]] if a == k else []) + [bonus[i]] for i, a in enumerate(accepted)]

    def select(self, rows: Sequence[int], idx: Any) -> None:
        self.runner.select(idx)
        self.todo = [self.todo[i] for i in rows] if self.todo else []

    def compact(self, max_holes: int) -> None:
        if self.runner.holes() > max_holes:
            self.runner.compact()


@dataclass
class _Reference:
    tokens: list[int]
    index: dict[tuple[int, ...], list[int]] = field(default_factory=dict)  # n-gram -> positions after it
    cursor: int = 0  # where the row is believed to be reading in the reference


class TextDrafter:
    """Drafts looked up in text the page already has (prompt lookup, HSD style): no second model.

    Each row has a reference token sequence (its line's text from the CPU OCR engine, or the page's
    text layer). A row's draft is what follows, in the reference, the longest n-gram (up to
    ``max_ngram``) that ends its output so far, preferring the occurrence after where it last
    matched (reading order). A row with no reference or no match proposes nothing and decodes
    plainly in the same batched forward: speculation costs it nothing.
    """

    kind = "page_text"

    def __init__(self, references: Sequence[Sequence[int] | None], max_ngram: int = 3):
        self.max_ngram = max_ngram
        self.refs: list[_Reference | None] = []
        for ref in references:
            if not ref:
                self.refs.append(None)
                continue
            r = _Reference(tokens=list(ref))
            for n in range(1, max_ngram + 1):
                for end in range(n, len(r.tokens) + 1):
                    r.index.setdefault(tuple(r.tokens[end - n : end]), []).append(end)
            self.refs.append(r)
        self._starts: list[int] = []

    def start(self, first_tokens: list[int]) -> None:
        pass

    def propose(self, histories: Sequence[list[int]], k: int) -> list[list[int]]:
        out: list[list[int]] = []
        self._starts = []
        for ref, hist in zip(self.refs, histories, strict=True):
            start = self._lookup(ref, hist) if ref is not None else None
            self._starts.append(-1 if start is None else start)
            out.append([] if start is None else ref.tokens[start : start + k])  # type: ignore[union-attr]
        return out

    def _lookup(self, ref: _Reference, hist: list[int]) -> int | None:
        for n in range(min(self.max_ngram, len(hist)), 0, -1):
            found = ref.index.get(tuple(hist[-n:]))
            if not found:
                continue
            i = bisect.bisect_left(found, ref.cursor)
            pos = found[i] if i < len(found) else found[0]
            if pos < len(ref.tokens):
                return pos
        return None

    def commit(self, accepted: Sequence[int], bonus: Sequence[int]) -> None:
        for ref, start, a in zip(self.refs, self._starts, accepted, strict=True):
            if ref is not None and start >= 0:
                ref.cursor = start + a

    def select(self, rows: Sequence[int], idx: Any) -> None:
        self.refs = [self.refs[i] for i in rows]

    def compact(self, max_holes: int) -> None:
        pass


# ------------------------------------------------------------------------------------- the loop


@dataclass
class BatchResult:
    """Per row: generated token ids (EOS included when emitted) and the mean log-probability of
    those tokens under the target; and the batch's counts."""

    tokens: list[list[int]]
    mean_logprob: list[float]
    target_forwards: int = 0  # per-row verification rounds, prefill included (summed over rows)
    drafted: int = 0
    accepted: int = 0
    batch_forwards: int = 0  # batched target forwards (what the device executes)
    row_accepted: list[int] = field(default_factory=list)
    row_drafted: list[int] = field(default_factory=list)


def speculative_greedy(
    target: _Runner,
    first_logits: Any,
    drafter: ModelDrafter | TextDrafter | None,
    *,
    k: int,
    max_new_tokens: int,
    eos: set[int],
    max_holes: int = 64,
) -> BatchResult:
    """Greedy decode every row of ``target`` (already prefilled; ``first_logits`` (B, V) its last
    logits), verifying ``drafter``'s proposals; ``drafter=None`` or ``k=0`` is plain batched greedy.

    The returned tokens are exactly the target's greedy tokens for each row (lossless): a draft
    token is kept only where it equals the target's argmax at that position.
    """
    torch = _torch()
    b = first_logits.shape[0]
    dev = first_logits.device
    logp0 = torch.log_softmax(first_logits.float(), dim=-1)
    first = logp0.argmax(-1)
    first_lp = logp0.gather(1, first[:, None])[:, 0].tolist()
    first_list = first.tolist()
    out: list[list[int]] = [[t] for t in first_list]
    lp_sum = list(first_lp)
    res = BatchResult(
        tokens=out,
        mean_logprob=[0.0] * b,
        target_forwards=b,
        batch_forwards=1,
        row_accepted=[0] * b,
        row_drafted=[0] * b,
    )
    alive = [i for i in range(b) if not (first_list[i] in eos or max_new_tokens <= 1)]
    pending = {i: first_list[i] for i in alive}
    if len(alive) < b:
        _select(target, drafter, alive, list(range(b)), dev)
    if drafter is not None and k > 0 and alive:
        drafter.start([pending[i] for i in alive])
    while alive:
        budget = [max_new_tokens - len(out[i]) for i in alive]  # tokens each row may still add
        kk = min(k, max(budget) - 1) if drafter is not None else 0
        drafts: list[list[int]] = [[] for _ in alive]
        if kk > 0:
            assert drafter is not None
            proposed = drafter.propose([out[i] for i in alive], kk)
            drafts = [p[: max(0, bud - 1)] for p, bud in zip(proposed, budget, strict=True)]
        width = 1 + max((len(d) for d in drafts), default=0)
        block = torch.zeros((len(alive), width), dtype=torch.long)
        valid = torch.zeros((len(alive), width), dtype=torch.bool)
        for r, i in enumerate(alive):
            row = [pending[i], *drafts[r]]
            block[r, : len(row)] = torch.tensor(row)
            valid[r, : len(row)] = True
        logits = target.extend(block.to(dev), valid.to(dev))
        res.batch_forwards += 1
        logp = torch.log_softmax(logits.float(), dim=-1)
        best = logp.argmax(-1)
        best_lp = logp.gather(2, best[..., None])[..., 0]
        best_l, best_lp_l = best.tolist(), best_lp.tolist()
        accepted, bonus, reject = [], [], []
        still: list[int] = []
        for r, i in enumerate(alive):
            d = drafts[r]
            a = 0
            while a < len(d) and d[a] == best_l[r][a]:
                a += 1
            new = d[:a] + [best_l[r][a]]
            lps = best_lp_l[r][: a + 1]
            used = len(d)  # drafts past the row's end (EOS, budget) were never needed: not counted
            for j, tok in enumerate(new):  # stop at EOS or the budget
                out[i].append(tok)
                lp_sum[i] += lps[j]
                if j < a:
                    res.accepted += 1
                    res.row_accepted[i] += 1
                if tok in eos or len(out[i]) >= max_new_tokens:
                    used = min(len(d), j + 1)
                    break
            else:
                still.append(r)
            res.drafted += used
            res.row_drafted[i] += used
            res.target_forwards += 1
            accepted.append(a)
            bonus.append(new[-1])
            reject.append(len(d) - a)
            pending[i] = new[-1]
        target.drop_last(torch.tensor(reject, device=dev))
        if drafter is not None and kk > 0:
            drafter.commit(accepted, bonus)
        if len(still) < len(alive):
            _select(target, drafter, still, alive, dev)
            alive = [alive[r] for r in still]
        if alive and target.holes() > max_holes:
            target.compact()
        if alive and drafter is not None:
            drafter.compact(max_holes)
    res.mean_logprob = [lp_sum[i] / len(out[i]) for i in range(b)]
    return res


def _select(target: _Runner, drafter: Any, rows: list[int], alive: list[int], dev: Any) -> None:
    """Keep the batch rows at positions ``rows`` (of the current ``alive`` order)."""
    torch = _torch()
    if not rows:
        return
    idx = torch.tensor(rows, dtype=torch.long, device=dev)
    target.select(idx)
    if drafter is not None:
        drafter.select(rows, idx)
