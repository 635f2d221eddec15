"""Every `\u00a7` citation in the code and docs resolves: to a section of docs/sources.md, or to a docs/ file.

A citation is a document name followed by section ids: `docs/sources.md \u00a7A.4`, `(docs/sources.md \u00a7A.1,
\u00a7A.6)`. A section id with no document before it, or after a document that is not in the repository (the
old "shared reference"), fails; so does a `docs/<name>.md` path to a file that does not exist.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.factories import REPO

SECTION = "\u00a7"
SOURCES = REPO / "docs" / "sources.md"
CITATION = re.compile(SECTION + r"([A-Z]{1,2}\d*(?:\.\d+)*|\d+(?:\.\d+)*)")
DOCUMENT = re.compile(r"[\w./-]*[\w-]\.md\b")
DOCS_PATH = re.compile(r"(?<![\w./-])docs/[\w./-]*[\w-]\.md\b")
# What may stand between a document's name and its section ids: more ids, separators, closing quotes.
BETWEEN = re.compile(r"""^(?:\s|[,;"'`\-–]|and\b|item \d+|#|""" + SECTION + r"""[A-Z]{0,2}\d*(?:\.\d+)*)*$""")
SKIP_DIRS = {".git", "venv", ".venv", "node_modules", "__pycache__"}
# docs/ pages written on other branches of the same issue. tests/test_readme.py expects their links to fail
# (strict xfail) until they arrive; the integrator then empties this set.
PENDING_PAGES: set[str] = set()

# Files whose citations still name the shared reference outside the repository. The integrator rewrites them
# (see the report of the docs branch) and then empties this set: the xfail is strict, so a file that resolves
# fails here until it is removed from the set.
KNOWN_UNRESOLVED: set[str] = set()


def source_ids(text: str) -> set[str]:
    """Section ids defined by the headings of docs/sources.md (`### \u00a7A.4 ...`)."""
    return {match.group(1) for match in re.finditer(r"^#{2,4} " + SECTION + r"(\S+)", text, re.MULTILINE)}


def resolve(document: str, citing: Path) -> Path | None:
    for base in (REPO, citing.parent):
        candidate = (base / document).resolve()
        if candidate.is_file() and REPO in candidate.parents:
            return candidate
    return None


def citation_problems(text: str, citing: Path, ids: set[str]) -> list[str]:
    """One message per citation that does not resolve, with its line number."""
    problems = []
    for match in CITATION.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        where = f"{citing.relative_to(REPO) if citing.is_relative_to(REPO) else citing.name}:{line}"
        documents = [
            d
            for d in DOCUMENT.finditer(text, max(0, match.start() - 200), match.start())
            if BETWEEN.match(text[d.end() : match.start()])
        ]
        if not documents:
            problems.append(
                f"{where}: {SECTION}{match.group(1)} names no document in the repository; "
                f"write `docs/sources.md {SECTION}{match.group(1)}`"
            )
            continue
        target = resolve(documents[-1].group(0), citing)
        if target is None:
            problems.append(
                f"{where}: {SECTION}{match.group(1)} cites {documents[-1].group(0)}, which is not in the repository"
            )
        elif target == SOURCES.resolve() and match.group(1) not in ids:
            problems.append(f"{where}: {SECTION}{match.group(1)} is not a section of docs/sources.md")
    for path in DOCS_PATH.finditer(text):
        if not (REPO / path.group(0)).is_file() and path.group(0) not in PENDING_PAGES:
            line = text.count("\n", 0, path.start()) + 1
            problems.append(f"{citing.name}:{line}: {path.group(0)} does not exist")
    return problems


def cited_files() -> list[str]:
    files = [
        p
        for pattern in ("*.py", "*.md")
        for p in REPO.rglob(pattern)
        if not SKIP_DIRS.intersection(p.relative_to(REPO).parts) and p not in (SOURCES, Path(__file__))
    ]
    return sorted(
        str(p.relative_to(REPO)) for p in files if SECTION in (text := p.read_text(encoding="utf-8")) or DOCS_PATH.search(text)
    )


IDS = source_ids(SOURCES.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.xfail(strict=True, reason="cites the shared reference; integrator rewrites"))
        if name in KNOWN_UNRESOLVED
        else name
        for name in cited_files()
    ],
)
def test_every_citation_in_the_file_resolves(name: str) -> None:
    path = REPO / name
    assert citation_problems(path.read_text(encoding="utf-8"), path, IDS) == []


def test_a_citation_of_a_sources_section_resolves() -> None:
    assert citation_problems(f"(docs/sources.md {SECTION}A.1, {SECTION}A.6)", REPO / "x.py", IDS) == []


def test_a_citation_of_the_shared_reference_names_no_document() -> None:
    problems = citation_problems(f"(shared reference {SECTION}H.7)", REPO / "x.py", IDS)
    assert problems == [f"x.py:1: {SECTION}H.7 names no document in the repository; write `docs/sources.md {SECTION}H.7`"]


def test_a_citation_of_a_document_outside_the_repository_fails() -> None:
    problems = citation_problems(f'("vllm-kubernetes-facts.md" {SECTION}A)', REPO / "x.py", IDS)
    assert problems == [f"x.py:1: {SECTION}A cites vllm-kubernetes-facts.md, which is not in the repository"]


def test_a_section_missing_from_the_sources_fails() -> None:
    problems = citation_problems(f"docs/sources.md {SECTION}Z.9", REPO / "x.py", IDS)
    assert problems == [f"x.py:1: {SECTION}Z.9 is not a section of docs/sources.md"]


def test_a_path_to_a_missing_docs_file_fails() -> None:
    assert citation_problems("see docs/readme-kubernetes.md", REPO / "x.py", IDS) == [
        "x.py:1: docs/readme-kubernetes.md does not exist"
    ]
