"""`council export`: one self-contained file in html, json (with a schema) or markdown."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from debate_story import invoke

from dreamcontext_council.actions.snapshot import load_snapshot
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.views.export import demote, export_json, fenced

from .conftest import REFERENCE_ID, REPO

SCHEMA = json.loads((REPO / "docs" / "export-schema.json").read_text(encoding="utf-8"))


def run(root: Root, *args: str) -> tuple[int, str, str]:
    return invoke(args, env={"DREAMCONTEXT_ROOT": str(root.path)})


# The few JSON Schema keywords docs/export-schema.json uses, for when jsonschema is absent.
_TYPES: dict[str, Any] = {
    "object": dict,
    "array": list,
    "string": str,
    "integer": int,
    "number": (int, float),
    "null": type(None),
    "boolean": bool,
}


def check(value: Any, schema: dict[str, Any], where: str = "$") -> None:
    if "$ref" in schema:
        schema = SCHEMA["$defs"][schema["$ref"].rsplit("/", 1)[1]]
    if "const" in schema:
        assert value == schema["const"], where
    if "type" in schema:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        assert any(
            isinstance(value, _TYPES[k])
            and not (k in ("integer", "number") and isinstance(value, bool))
            for k in kinds
        ), f"{where}: {value!r} is not {kinds}"
    if "pattern" in schema and isinstance(value, str):
        assert re.search(schema["pattern"], value), where
    if "minimum" in schema and isinstance(value, int):
        assert value >= schema["minimum"], where
    if "maximum" in schema and isinstance(value, int):
        assert value <= schema["maximum"], where
    if isinstance(value, dict):
        for key in schema.get("required", []):
            assert key in value, f"{where}: missing {key}"
        properties = schema.get("properties", {})
        if schema.get("additionalProperties") is False:
            assert set(value) <= set(properties), f"{where}: extra {set(value) - set(properties)}"
        for key, item in value.items():
            if key in properties:
                check(item, properties[key], f"{where}.{key}")
            elif isinstance(schema.get("additionalProperties"), dict):
                check(item, schema["additionalProperties"], f"{where}.{key}")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            check(item, schema["items"], f"{where}[{i}]")


def validate(document: Any) -> None:
    try:
        import jsonschema
    except ImportError:
        check(document, SCHEMA)
    else:
        jsonschema.validate(document, SCHEMA)


def test_the_json_export_follows_the_schema(reference_root: Root) -> None:
    code, out, _ = run(reference_root, "export", REFERENCE_ID, "--format", "json", "-o", "-")
    assert code == 0
    document = json.loads(out)
    validate(document)
    assert document["format"] == "dreamcontext-council-export" and document["version"] == 1
    assert document["board"]["convergence"] == 78 and document["board"]["leading"] == "A"
    assert [r["convergence"] for r in document["timeline"]] == [69, 78]
    assert document["verdicts"]["rounds"]["2"]["user-advocate"]["conviction"] == 40
    cfo = next(p for p in document["personas"] if p["slug"] == "growth-cfo")
    assert [p["title"] for p in cfo["panels"]] == [
        "Round 2 — Directives",
        "Round 2 — Cross-context loaded",
    ]
    assert [e["round"] for e in cfo["entries"]] == [1, 2]
    auditor = document["personas"][0]
    assert auditor["research"][0]["body"].startswith("Postgres 16 handles 40k")
    assert document["final_report"]["sections"][0]["title"] == "Verdict"
    assert document["knowledge"]["path"].startswith("knowledge/decision-")
    assert document["claims"] is None and document["usage"]["calls"] == 0


def test_the_schema_checker_notices_a_broken_export(reference_root: Root) -> None:
    document = export_json(load_snapshot(reference_root, REFERENCE_ID))
    del document["board"]["convergence"]
    with pytest.raises(Exception, match="convergence"):
        validate(document)


def test_the_json_export_with_engine_files_still_validates(reference_root: Root) -> None:
    folder = reference_root.debate(REFERENCE_ID).folder
    (folder / "usage.jsonl").write_text('{"provider": "anthropic", "cost_usd": 0.5}\n')
    (folder / "claims.json").write_text('{"claims": [], "dropped": [], "flags": []}')
    (folder / "reviews.json").write_text('{"1": {"risk-auditor": {"growth-cfo": 4}}}')
    validate(export_json(load_snapshot(reference_root, REFERENCE_ID)))


def test_the_html_export_needs_no_server_scripts_or_network(
    reference_root: Root, tmp_path: Path
) -> None:
    target = tmp_path / "debate.html"
    code, out, _ = run(
        reference_root, "export", REFERENCE_ID, "--format", "html", "-o", str(target)
    )
    assert code == 0 and str(target) in out
    html = target.read_text(encoding="utf-8")
    assert "<script" not in html.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "@import" not in html and "url(" not in html
    assert '<link rel="stylesheet"' not in html and "<style>" in html
    assert 'http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;;' in html
    assert 'href="/' not in html  # no links back to a server
    assert '<a href="#cell-risk-auditor-1" class="cite">risk-auditor R1</a>' in html
    assert 'id="cell-risk-auditor-1"' in html and "<details" in html
    assert "Migrate now (A). Confidence: medium." in html


def test_the_html_export_escapes_model_output(reference_root: Root) -> None:
    folder = reference_root.debate(REFERENCE_ID).folder
    report = folder / "final-report.md"
    report.write_text(
        report.read_text().replace(
            "Migrate now (A).",
            "<script>alert(1)</script> [x](javascript:alert(1)) Migrate now (A).",
        )
    )
    code, out, _ = run(reference_root, "export", REFERENCE_ID, "--format", "html", "-o", "-")
    assert code == 0
    assert "<script" not in out and "javascript:alert" not in out.split("[x](")[0]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out
    assert 'href="javascript' not in out


def test_the_markdown_export_is_the_whole_debate(reference_root: Root) -> None:
    code, out, _ = run(reference_root, "export", REFERENCE_ID, "--format", "md", "-o", "-")
    assert code == 0
    assert out.startswith("# Should we migrate the session store from Redis to Postgres?\n")
    for part in (
        "## Question",
        "**[Interlude R1]** Postgres is already run by the platform team",
        "CONVERGENCE ▓▓▓▓▓▓▓▓░░ 78% → A (Migrate now)",
        "| user-advocate | B 55 | B 40 |",
        "### Verdict",
        "### Appendix: per-agent per-round summaries",
        "### risk-auditor",
        "#### Round 2 — Directives",
        "#### Round 1 — 2026-11-30",
        "_Verdict: B · conviction 40 · user-advocate says B in R2_",
        "##### Executive Summary",
        "-- ## Round 9 fake heading inside a fence",
        "#### Research: postgres write throughput",
        "## Round log",
        "Round 2 complete — 2026-11-30",
    ):
        assert part in out, part
    # Every heading of the debate's files sits under the export's own top-level sections.
    assert re.findall(r"^# .*", out, re.MULTILINE) == [out.split("\n")[0]]


def test_fences_and_headings_survive_odd_text() -> None:
    assert fenced("a ``` b") == "````text\na ``` b\n````"
    assert demote("## A\n```\n## not a heading\n```\n###### deep", 2) == (
        "#### A\n```\n## not a heading\n```\n###### deep"
    )


def test_export_errors_are_plain_sentences(reference_root: Root) -> None:
    code, _, err = run(reference_root, "export", "council_00000000", "--format", "md", "-o", "-")
    assert code == 1 and "No debate council_00000000" in err
    code, _, err = run(reference_root, "export", "../../etc", "--format", "md", "-o", "-")
    assert code == 2 and "is not a debate id" in err
    code, _, err = run(reference_root, "export", REFERENCE_ID)
    assert code == 2 and "--format" in err
    code, _, err = run(reference_root, "export", REFERENCE_ID, "--format", "pdf")
    assert code == 2
