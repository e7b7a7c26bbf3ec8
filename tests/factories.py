"""Small, readable test data: collections, topic files, documents and run files."""

from __future__ import annotations

from pathlib import Path

from workbench.collections.services import collection_create
from workbench.models import Collection, Document, Topic

TOPICS = {
    "301": ("International Organized Crime", "Identify organizations that participate in international crime."),
    "302": ("Poliomyelitis and Post-Polio", "Is the disease of Poliomyelitis (polio) under control?"),
    "303": ("Hubble Telescope Achievements", "Identify positive accomplishments of the Hubble telescope."),
}


def collection_with_topics(slug: str = "robust", grades: list[dict] | None = None) -> Collection:
    collection = collection_create(slug=slug, name="Robust sample", scale=grades)
    for qid, (title, description) in TOPICS.items():
        Topic.objects.create(collection=collection, qid=qid, title=title, description=description)
    return collection


def add_documents(collection: Collection, docnos) -> None:
    Document.objects.bulk_create(
        Document(collection=collection, docno=d, title=f"Title of {d}", text=f"Text of {d}") for d in docnos)


def run_lines(tag: str, ranking: dict[str, list[str]]) -> str:
    """A well-formed TREC run: scores decrease with rank."""
    lines = []
    for qid, docnos in ranking.items():
        for rank, docno in enumerate(docnos, start=1):
            lines.append(f"{qid} Q0 {docno} {rank} {100 - rank:.4f} {tag}")
    return "\n".join(lines) + "\n"


def write_runs(directory: Path) -> list[Path]:
    rankings = {
        "alpha": {"301": ["d1", "d2", "d3"], "302": ["d4", "d5"], "303": ["d6"]},
        "beta": {"301": ["d3", "d7"], "302": ["d5", "d8", "d9"]},
    }
    paths = []
    for tag, ranking in rankings.items():
        path = directory / f"{tag}.run"
        path.write_text(run_lines(tag, ranking))
        paths.append(path)
    return paths
