"""What the demo gives the Evidence page: RAGChecker results for some answers and review decisions to fit from.

* **RAGChecker results** (``write_ragchecker_results``): ``RAG_QUERIES`` customer-support questions checked as
  RAGChecker's ``checking_outputs.json`` holds them, drawn from ``hri_core.synthetic``'s help-centre facts with a
  seeded generator: the retrieved chunks are the knowledge-base sentences with the true value, the target answer
  states it, and each response claim is right and grounded, right but ungrounded (self-knowledge), wrong against
  the target or the context, or unsupported. The file is imported through the ordinary importer
  (``register.ingest.rag_files``), so its answers carry both the HRI (from the labels ``hri_core.rag_import``
  derives) and RAGChecker's metrics: the "HRI against RAG metrics" panel has pairs to correlate.
* **Review decisions** (``record_factcheck_reviews``): a reviewer decides the Factcheck-GPT answers by the
  dataset's own human annotations (``data/demo/factcheck_gpt.jsonl``): block when an annotator found a claim
  contradicted by the evidence, release when every claim was found supported (an answer with other findings is
  left undecided). Recorded through ``register.console.review.record_decision``, they are the register's
  outcomes (``register.scoring.calibration.outcome_pairs``) a weight fit reads.

Called by ``register.demo.seed_demo``.
"""

from __future__ import annotations

import json
from pathlib import Path
from random import Random

from hri_core.synthetic import USE_CASES
from register.access.permissions import Permission, authorize
from register.console.review import record_decision
from register.db.store import Actor, Store
from register.ingest.importer import import_path, scan_file
from register.ingest.rag_files import RagOptions

__all__ = ["RAG_FILE", "RAG_OPTIONS", "RAG_QUERIES", "import_ragchecker_results", "record_factcheck_reviews",
           "write_ragchecker_results"]

RAG_QUERIES = 60
RAG_SEED = 38
RAG_FILE = "ragchecker-customer-support.json"
# the answers a team evaluated with RAGChecker: a slice of its customer-support traffic (created in its window)
RAG_OPTIONS = RagOptions(id_prefix="rag:", use_case="customer-support", model="rag-v4",
                         created_at="2026-09-15T10:00:00Z")
# how a response claim relates to the target and the chunks, with its share: (kind, weight)
_CLAIM_KINDS = (("grounded", 0.6), ("self-knowledge", 0.08), ("wrong", 0.14), ("against-context", 0.06),
                ("unsupported", 0.12))
E, N, C = "Entailment", "Neutral", "Contradiction"
MISSED_PASSAGE = 0.2  # the share of facts whose passage the retriever misses


def _query(rng: Random, index: int) -> dict:
    """One checked query over the customer-support facts: 2-4 facts, each a chunk, a target claim and a response
    claim of a drawn kind (a troubled answer draws more wrong ones: the share of wrong claims varies by answer)."""
    use_case = next(u for u in USE_CASES if u.name == "customer-support")
    context = rng.choice(use_case.context)
    facts = rng.sample(use_case.facts, rng.randint(2, 4))
    troubled = rng.random() < 0.3
    weights = [w * (3.0 if troubled and kind != "grounded" else 1.0) for kind, w in _CLAIM_KINDS]
    chunks, targets, claims, kinds, found = [], [], [], [], []
    for j, fact in enumerate(facts):
        truth = rng.randrange(len(fact.values))
        wrong = (truth + 1 + rng.randrange(len(fact.values) - 1)) % len(fact.values)
        # the retriever misses a fact's passage now and then (claim recall below 1): a passage of another article
        retrieved = rng.random() >= MISSED_PASSAGE
        passage = fact if retrieved else rng.choice([f for f in use_case.facts if f not in facts])
        chunks.append({"doc_id": f"{passage.doc}-2026#{j}", "text": passage.span.format_map(
            {**context, "v": passage.values[truth % len(passage.values)]})})
        targets.append(fact.claim.format_map({**context, "v": fact.values[truth]}))
        kind = rng.choices([k for k, _ in _CLAIM_KINDS], weights)[0]
        if not retrieved and kind in ("grounded", "against-context"):  # no passage to ground or contradict it
            kind = "self-knowledge" if kind == "grounded" else "unsupported"
        found.append(retrieved)
        value = fact.values[wrong] if kind in ("wrong", "against-context", "unsupported") else fact.values[truth]
        claims.append(fact.claim.format_map({**context, "v": value}))
        kinds.append(kind)
    k = len(chunks)
    # per response claim: the target's verdict and each chunk's (only the chunk of its own fact speaks to it)
    target_says = {"grounded": E, "self-knowledge": E, "wrong": C, "against-context": C, "unsupported": N}
    chunk_says = {"grounded": E, "self-knowledge": N, "wrong": N, "against-context": C, "unsupported": N}
    question = rng.choice(use_case.questions).format_map(context)
    return {
        "query_id": str(index), "query": question, "gt_answer": " ".join(targets), "response": " ".join(claims),
        "retrieved_context": chunks,
        "response_claims": claims, "gt_answer_claims": targets,
        "answer2response": [target_says[kind] for kind in kinds],
        # the target's claims as the response states them: entailed where the response's claim is right
        "response2answer": [target_says[kind] for kind in kinds],
        "retrieved2response": [[chunk_says[kind] if c == i else N for c in range(k)] for i, kind in enumerate(kinds)],
        "retrieved2answer": [[E if c == j and found[j] else N for c in range(k)] for j in range(k)],
    }


def write_ragchecker_results(folder: Path, queries: int = RAG_QUERIES, seed: int = RAG_SEED) -> Path:
    """``queries`` seeded checked queries as RAGChecker writes ``checking_outputs.json``, in ``folder``."""
    rng = Random(seed)
    path = folder / RAG_FILE
    path.write_text(json.dumps({"results": [_query(rng, i) for i in range(queries)]}, indent=2), encoding="utf-8")
    return path


def import_ragchecker_results(store: Store, actor: Actor, folder: Path) -> int:
    """Import the demo's RAGChecker results (``write_ragchecker_results``) unless a finished import batch already
    holds the same file (as the demo's other files); returns the answers accepted."""
    authorize(store, actor, Permission.IMPORT, entity_type="demo")  # first: a refused account learns nothing
    path = write_ragchecker_results(folder)
    sha256, _ = scan_file(path, "json")
    if store.scalar("SELECT count(*) FROM import_batches WHERE finished_at IS NOT NULL AND source_sha256 = ?",
                    [sha256]):
        return 0
    return import_path(store, actor, path, rag=RAG_OPTIONS).accepted


def _factcheck_verdicts(path: Path) -> list[tuple[str, str, str]]:
    """(response id, decision, reason) of each Factcheck-GPT answer the annotators settled: block when a claim was
    contradicted by the evidence, release when every claim was supported."""
    verdicts = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            labels = [label for claim in record.get("claims") or [] for label in claim.get("labels") or []]
            if "CONTRADICTED" in labels:
                verdicts.append((record["response_id"], "block", "Factcheck-GPT annotators found a claim "
                                                                  "contradicted by the evidence"))
            elif labels and all(label == "SUPPORTED" for label in labels):
                verdicts.append((record["response_id"], "release", "Factcheck-GPT annotators found every claim "
                                                                    "supported by the evidence"))
    return verdicts


def record_factcheck_reviews(store: Store, actor: Actor, path: Path) -> int:
    """Record a review decision on each settled Factcheck-GPT answer not decided yet; returns how many."""
    authorize(store, actor, Permission.REVIEW_DECIDE, entity_type="demo")
    if not path.is_file():
        return 0
    decided = {r for (r,) in store.query("SELECT DISTINCT response_id FROM review_decisions")}
    current = dict(store.query("SELECT response_id, revision FROM responses WHERE is_current AND response_id LIKE "
                               "'fcgpt-%'"))
    made = 0
    for response_id, decision, reason in _factcheck_verdicts(path):
        if response_id in current and response_id not in decided:
            record_decision(store, actor, response_id, current[response_id], decision, reason)
            made += 1
    return made
