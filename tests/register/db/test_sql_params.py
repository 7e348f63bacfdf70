"""The one SQL parameter builder (``register.db.sql.Params``): named placeholders, equal scalars bound
once, and generated SELECTs that share one builder joined in one statement without renaming."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from hri_core import default_profile, profile_from_dict
from hri_core.synthetic import generate_responses
from register import SYSTEM
from register.db.sql import Params, file_literal
from register.ingest.importer import import_path
from register.scoring.scorer import score_query, score_select


def test_placeholders_are_named_in_order_and_equal_scalars_share_one():
    p = Params()
    at = datetime(2026, 1, 1, tzinfo=UTC)
    assert [p(1), p("a"), p(1), p(at), p("a"), p(at)] == ["$p1", "$p2", "$p1", "$p3", "$p2", "$p3"]
    assert p.values == {"p1": 1, "p2": "a", "p3": at}


def test_equal_values_of_other_types_and_lists_get_their_own_placeholder():
    p = Params()
    assert [p(1), p(True), p(1.0), p([1]), p([1])] == ["$p1", "$p2", "$p3", "$p4", "$p5"]
    assert [type(v) for v in p.values.values()] == [int, bool, float, list, list]


def test_in_list_binds_each_value(store):
    p = Params()
    sql = f"SELECT count(*) FROM (VALUES ('a'), ('b'), ('c')) t(x) WHERE x IN {p.in_list(['a', 'c', 'a'])}"
    assert sql.endswith("IN ($p1, $p2, $p1)")
    assert store.scalar(sql, p.values) == 2


def test_a_copy_file_name_is_one_quoted_literal(store, tmp_path):
    path = tmp_path / "it's; DROP TABLE x; '.csv"
    with store.cursor() as cur:
        cur.execute(f"COPY (SELECT 1 AS x) TO {file_literal(path)} (FORMAT csv, HEADER)")
    assert path.read_text() == "x\n1\n"
    with pytest.raises(ValueError, match="NUL"):
        file_literal("a\x00b.csv")


def test_two_scorer_selects_sharing_a_builder_run_as_one_statement(store, tmp_path):
    source = tmp_path / "responses.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in generate_responses(40, seed=5)), encoding="utf-8")
    import_path(store, SYSTEM, source, score=False)
    as_of = datetime(2026, 6, 1, tzinfo=UTC)
    other = profile_from_dict({"weights": {"F": 0.4, "C": 0.1, "U": 0.1, "O": 0.1, "S": 0.1, "P": 0.1, "H": 0.1}},
                              base=default_profile())
    p = Params()
    first, second = score_select(default_profile(), as_of, p), score_select(other, as_of, p)
    joined = store.frame(f"SELECT a.response_id, a.score AS a_score, b.score AS b_score FROM ({first}) a "
                         f"JOIN ({second}) b USING (response_id, revision) ORDER BY a.response_id", p.values)
    alone = {}
    for name, profile in (("a_score", default_profile()), ("b_score", other)):
        sql, params = score_query(profile, as_of)
        alone[name] = store.frame(f"SELECT response_id, score FROM ({sql}) ORDER BY response_id", params)
    assert len(joined) == len(alone["a_score"]) == 40
    assert joined["a_score"].tolist() == alone["a_score"]["score"].tolist()
    assert joined["b_score"].tolist() == alone["b_score"]["score"].tolist()
    assert joined["a_score"].tolist() != joined["b_score"].tolist()  # the two profiles really differ
