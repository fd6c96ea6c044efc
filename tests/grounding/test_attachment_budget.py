"""Attachments over the prompt budget fill it: code whole, text compressed to the budget."""

from __future__ import annotations

from dreamcontext_council.engine.prompting.attachments import fit_attachments
from dreamcontext_council.engine.prompting.compression import find_fenced_blocks

BUDGET = 40_000


def prose(name: str, paragraphs: int) -> str:
    lines = [f"# {name}", ""]
    for i in range(paragraphs):
        lines += [f"{name} paragraph {i}: the replica lags when the nightly batch runs. " * 2, ""]
        if i == paragraphs // 2:
            lines += ["```sql", f"SELECT {i} FROM sessions;", "```", ""]
    return "\n".join(lines)


def code(name: str, lines: int) -> str:
    return "\n".join(f"def {name}_{i}(x):\n    return x + {i}\n" for i in range(lines))


def test_text_over_the_budget_is_compressed_to_fill_it_and_code_stays_whole() -> None:
    texts = {
        "design.md": prose("design", 600),
        "notes.txt": prose("notes", 150),
        "cache.py": code("cache", 60),
    }
    assert sum(len(t) for t in texts.values()) > 2 * BUDGET

    views = fit_attachments(texts, BUDGET)

    total = sum(len(v or "") for v in views.values())
    assert 0.9 * BUDGET <= total <= BUDGET
    assert views["cache.py"] == texts["cache.py"]  # a code file is never cut
    for name in ("design.md", "notes.txt"):
        view = views[name]
        assert view is not None and "lines compressed." in view
        for block in find_fenced_blocks(texts[name]):
            assert texts[name][block.start : block.end] in view
        assert view.startswith(f"# {name.split('.')[0]}")


def test_when_code_alone_exceeds_the_budget_code_files_are_kept_whole_or_left_out() -> None:
    texts = {
        "design.md": prose("design", 100),
        "big.py": code("big", 1500),
        "small.py": code("small", 40),
    }
    assert len(texts["big.py"]) > BUDGET

    views = fit_attachments(texts, BUDGET)

    assert views["big.py"] is None  # left out whole, never cut
    assert views["small.py"] == texts["small.py"]
    design = views["design.md"]
    assert design is not None and len(design) < 200  # the text keeps its marker and code
    assert "SELECT 50 FROM sessions;" in design
    assert sum(len(v or "") for v in views.values()) <= BUDGET


def test_under_the_budget_every_file_is_whole() -> None:
    texts = {"design.md": prose("design", 10), "cache.py": code("cache", 5)}
    assert fit_attachments(texts, BUDGET) == texts
