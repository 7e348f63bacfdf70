"""The optional MiniLM encoder (register.verify.embeddings): hash-checked files, unit vectors, similarity."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from hri_core.judging import judge_profile_from_dict
from hri_core.offline_judge import OfflineJudge
from hri_core.vocabulary import Label
from register.verify import embeddings
from register.verify.embeddings import EncoderUnavailable, load_encoder
from tests.helpers.paths import REPO_ROOT

ROOT = REPO_ROOT


@pytest.fixture(scope="module")
def encoder():
    try:
        return load_encoder()
    except EncoderUnavailable as error:
        pytest.skip(f"MiniLM encoder not available: {error}")


def test_embeddings_are_unit_vectors_in_input_order_and_cached_consistently(encoder):
    nile = "The Nile is the longest river in Africa."
    texts = [nile, "Bananas are yellow.", nile]
    vectors = encoder.embed(texts)
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.allclose(vectors[0], vectors[2])
    assert np.allclose(encoder.embed(["Bananas are yellow."])[0], vectors[1])


def test_a_paraphrase_is_closer_than_an_unrelated_sentence(encoder):
    scores = encoder.similarity("The Nile is the longest river in Africa.",
                                ["Africa's longest river is the Nile.", "The stock market closed higher on Friday."])
    assert scores[0] > 0.8 > 0.3 > scores[1]
    assert encoder.similarity("anything", []) == []


def test_the_minilm_profile_judges_with_the_encoder(encoder):
    path = ROOT / "data" / "judge_profiles" / "offline-minilm.json"
    if not path.exists():
        pytest.skip("no MiniLM profile shipped")
    judge = OfflineJudge(judge_profile_from_dict(json.loads(path.read_text(encoding="utf-8"))), encoder.similarity)
    claim = "Justice William O. Douglas was born on October 16, 1898."
    assert judge.judge(claim, [claim]).label is Label.SUPPORTED
    assert judge.judge(claim, [claim.replace("1898", "1899")]).label is not Label.SUPPORTED


def test_a_tokenizer_with_another_hash_is_refused(tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tokenizers")
    tampered = tmp_path / "tokenizer.json"
    shutil.copy(embeddings.TOKENIZER_FILE, tampered)
    tampered.write_bytes(tampered.read_bytes().replace(b'"[UNK]"', b'"[UNQ]"', 1))
    monkeypatch.setenv("HRI_MINILM_TOKENIZER", str(tampered))
    try:
        embeddings._model_file()
    except EncoderUnavailable as error:
        pytest.skip(f"model package not installed: {error}")
    with pytest.raises(EncoderUnavailable, match="refused"):
        load_encoder()


def test_a_missing_model_file_is_named(tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tokenizers")
    monkeypatch.setenv("HRI_MINILM_MODEL", str(tmp_path / "model.onnx"))
    with pytest.raises(EncoderUnavailable, match="MiniLM model not found"):
        load_encoder()
