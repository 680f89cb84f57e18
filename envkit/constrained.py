"""Constrained decoding with llguidance: the grammars of `envkit.grammar` enforced token by
token on a local model.

- `Decoder(hf_tokenizer)` wraps a Hugging Face fast tokenizer for llguidance (built once, about
  a second) and knows each tool name's token ids, so the grammar can require them whole.
- `Decoder.matcher(grammar)` compiles a grammar (one per state; 10-30 ms on a laptop-class
  CPU) into an llguidance matcher.
- `GrammarLogitsProcessor(decoder, matchers)` is a transformers `LogitsProcessor`: before each
  token it sets the logits of every token a row's grammar forbids to -inf, and after it feeds
  the sampled token to that row's matcher. Pass it to `model.generate(...,
  logits_processor=[...])`; a finished row allows only the end-of-sequence token.
- `FirstTokenTemperature(ratio)` divides the logits of a reply's first token by `ratio`: with
  the call's prefix in the prompt that token is the tool name's first (the decision), so
  `generate(..., decision_temperature=...)` samples the decision flatter than its arguments.
- `FirstTokenMixture(epsilon, tokens, temperature)` draws a reply's first token from the
  mixture `(1 - epsilon) * policy + epsilon * uniform(tokens)`: with `tokens` the decision tools'
  first tokens, `generate(..., decision_epsilon=..., decision_tokens=...)` explores the
  decision itself (an epsilon-greedy contextual bandit's exploration) however sure the policy is.
- `byte_decoder()` is a decoder over a 256-token byte-level tokenizer (no model needed): the
  test suite checks replies against a grammar with it.

llguidance and torch come with the `train` extra; they are imported when a decoder is built.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Any

import numpy as np

from memex.envkit.grammar import GrammarError


def _llguidance():
    import llguidance  # the train extra's; imported when a decoder is built

    return llguidance


def _byte_tokenizer_json() -> str:
    """A tokenizer.json whose 256 tokens are the bytes (and an end-of-sequence token)."""
    return json.dumps({
        "version": "1.0", "truncation": None, "padding": None, "normalizer": None,
        "pre_tokenizer": None, "post_processor": None, "decoder": {"type": "ByteFallback"},
        "added_tokens": [{"id": 256, "content": "</s>", "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True}],
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": False, "byte_fallback": True,
                  "vocab": {f"<0x{b:02X}>": b for b in range(256)}, "merges": []}})


class Decoder:
    """One tokenizer's view of the grammars: llguidance's tokenizer and each name's tokens."""

    def __init__(self, lltokenizer: Any, encode: Any, eos_token_id: int, vocab_size: int):
        self.lltokenizer = lltokenizer
        self._encode = encode
        self.eos_token_id = eos_token_id
        self.vocab_size = vocab_size

    @classmethod
    def from_hf(cls, tokenizer: Any) -> Decoder:
        """A decoder over a Hugging Face fast tokenizer."""
        import llguidance.hf  # the train extra's

        lltok = llguidance.hf.from_tokenizer(tokenizer)
        return cls(lltok, lambda text: tokenizer.encode(text, add_special_tokens=False),
                   tokenizer.eos_token_id, len(tokenizer))

    def name_tokens(self, names: Iterable[str]) -> dict[str, list[int]]:
        """Each name's token ids, as the tokenizer writes the name alone (after the prefix's
        opening quote): the grammar requires exactly these."""
        return {name: list(self._encode(name)) for name in names}

    def matcher(self, grammar: str) -> Any:
        """An llguidance matcher of `grammar` (Lark); `GrammarError` if it does not compile."""
        llg = _llguidance()
        matcher = llg.LLMatcher(self.lltokenizer, llg.LLMatcher.grammar_from_lark(grammar),
                                log_level=0)
        if matcher.is_error():
            raise GrammarError(matcher.get_error())
        return matcher

    def accepts(self, grammar: str, text: str) -> bool:
        """Whether `text` is a complete sentence of `grammar`."""
        matcher = self.matcher(grammar)
        tokens = self.lltokenizer.tokenize_str(text)
        return matcher.consume_tokens(tokens) and matcher.is_accepting()

    def allowed(self, matcher: Any) -> np.ndarray:
        """The tokens the matcher allows next, as a boolean vector over the vocabulary."""
        bits = np.frombuffer(matcher.compute_bitmask(), dtype=np.uint8)
        return np.unpackbits(bits, bitorder="little")[:self.vocab_size].astype(bool)


def byte_decoder() -> Decoder:
    """A decoder over a byte-level tokenizer: a reply's bytes are its tokens."""
    llg = _llguidance()
    return Decoder(llg.LLTokenizer(_byte_tokenizer_json(), eos_token=256),
                   lambda text: list(text.encode()), 256, 257)


class GrammarLogitsProcessor:
    """A transformers logits processor enforcing one matcher per row of the batch."""

    def __init__(self, decoder: Decoder, matchers: list[Any]):
        self.decoder = decoder
        self.matchers = matchers
        self._prompt_len: int | None = None
        self.mask_s = 0.0  # time spent computing masks (for the measurements)

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch  # the train extra's

        if self._prompt_len is None:
            self._prompt_len = input_ids.shape[1]
        else:  # feed each row's last sampled token to its matcher
            for row, matcher in enumerate(self.matchers):
                if not matcher.is_stopped() and not matcher.is_error():
                    matcher.consume_token(int(input_ids[row, -1]))
        t0 = time.perf_counter()
        mask = np.zeros((len(self.matchers), scores.shape[-1]), dtype=bool)
        for row, matcher in enumerate(self.matchers):
            if matcher.is_stopped() or matcher.is_error():
                mask[row, self.decoder.eos_token_id] = True
            else:
                allowed = self.decoder.allowed(matcher)
                mask[row, :allowed.shape[0]] = allowed[:scores.shape[-1]]
        self.mask_s += time.perf_counter() - t0
        return scores.masked_fill(~torch.from_numpy(mask).to(scores.device), float("-inf"))


class FirstTokenTemperature:
    """A transformers logits processor dividing the first generated position's logits by
    `ratio` (later positions pass through). transformers' own temperature warper divides every
    position by the sampling temperature T as well, so `ratio = T_first / T` samples the first
    token at T_first. A masked (-inf) logit stays masked."""

    def __init__(self, ratio: float):
        if ratio <= 0:
            raise ValueError(f"the first token's temperature ratio must be positive, not {ratio}")
        self.ratio = ratio
        self._first = True

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if not self._first:
            return scores
        self._first = False
        return scores / self.ratio


class FirstTokenMixture:
    """A transformers logits processor for the first generated position: the token is drawn
    from `(1 - epsilon) * p + epsilon * u`, where `p` is the distribution the sampler would
    draw from (the scores so far at `temperature`) and `u` is uniform over `tokens` that the
    scores allow (a masked token stays masked). transformers' temperature warper runs after the
    custom processors and divides by `temperature`, so the mixture's log-probabilities are
    returned multiplied by it. Later positions pass through. Put it after the grammar's mask."""

    def __init__(self, epsilon: float, tokens: Iterable[int], temperature: float = 1.0):
        if not 0 < epsilon <= 1:
            raise ValueError(f"the exploration share must be in (0, 1], not {epsilon}")
        if temperature <= 0:
            raise ValueError(f"the sampling temperature must be positive, not {temperature}")
        self.epsilon = epsilon
        self.tokens = sorted(set(tokens))
        if not self.tokens:
            raise ValueError("no tokens to explore")
        self.temperature = temperature
        self._first = True

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch  # the train extra's

        if not self._first:
            return scores
        self._first = False
        policy = torch.softmax(scores.float() / self.temperature, dim=-1)
        explore = torch.zeros_like(policy)
        tokens = torch.tensor(self.tokens, device=scores.device)
        allowed = torch.isfinite(scores[:, tokens]).float()
        explore[:, tokens] = allowed / allowed.sum(dim=-1, keepdim=True).clamp(min=1)
        # A row whose grammar allows none of the tokens keeps the policy alone.
        share = self.epsilon * (allowed.sum(dim=-1, keepdim=True) > 0)
        mixture = (1 - share) * policy + share * explore
        return (torch.log(mixture) * self.temperature).to(scores.dtype)


def generate(model: Any, decoder: Decoder, prompts: list[list[int]], grammars: list[str], *,
             temperature: float, max_new_tokens: int, pad_token_id: int,
             decision_temperature: float | None = None, decision_epsilon: float = 0.0,
             decision_tokens: Iterable[int] = ()) -> list[list[int]]:
    """One sampled completion per prompt (token ids, left-padded into one batch), each under
    its grammar; each cut after its end-of-sequence token. Sampling only: `decision_temperature`
    samples each reply's first token, the tool name's, at its own temperature
    (`FirstTokenTemperature`), and `decision_epsilon` draws it from a uniform choice among
    `decision_tokens` that share of the time (`FirstTokenMixture`). The model is put in eval
    mode for the call and back as it was."""
    import torch  # the train extra's

    processors: list[Any] = [GrammarLogitsProcessor(decoder, [decoder.matcher(g)
                                                              for g in grammars])]
    if temperature > 0 and decision_temperature is not None:
        processors.insert(0, FirstTokenTemperature(decision_temperature / temperature))
    if temperature > 0 and decision_epsilon > 0:
        processors.append(FirstTokenMixture(decision_epsilon, decision_tokens, temperature))
    width = max(map(len, prompts))
    device = next(model.parameters()).device
    input_ids = torch.tensor([[pad_token_id] * (width - len(p)) + p for p in prompts],
                             device=device)
    attention = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts],
                             device=device)
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            out = model.generate(input_ids=input_ids, attention_mask=attention,
                                 logits_processor=processors,
                                 do_sample=temperature > 0, temperature=temperature or None,
                                 top_p=None, top_k=None, max_new_tokens=max_new_tokens,
                                 pad_token_id=pad_token_id)
    finally:
        model.train(was_training)
    completions = []
    for row in out[:, width:].tolist():
        eos = decoder.eos_token_id
        completions.append(row[:row.index(eos) + 1] if eos in row else row)
    return completions
