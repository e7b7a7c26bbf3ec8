from django.apps import AppConfig


class WorkbenchConfig(AppConfig):
    """What every process sets up: the signal that removes a deleted corpus reference's index. The rest is found
    when first asked for, so that a command pays only for what it uses: the HTTP API (every app's ``api.py``)
    when the URLconf is loaded (:mod:`workbench.api.v1`); the job kinds and the upload kinds (every app's
    ``tasks.py``) when a page, the docs or the sweep reads them (:func:`workbench.jobs.kinds.discover`); the
    home page's sections (:mod:`workbench.home_sections`) when a page shows them."""

    name = "workbench"
    verbose_name = "Test collections"

    def ready(self) -> None:
        from django.db.models.signals import post_delete

        from workbench.jobs import kinds  # noqa: F401 - gives the sweep its plans (discovered when it first sweeps)
        from workbench.models import CorpusReference

        # a reference deleted with its collection (or in the admin) leaves no index file behind
        post_delete.connect(_index_removed, sender=CorpusReference, weak=False, dispatch_uid="corpus-index-removed")


def _index_removed(sender, instance, **kwargs) -> None:
    """:func:`workbench.corpora.corpus.index_removed`, imported when a reference is deleted (it brings the
    corpus readers, pyarrow)."""
    from workbench.corpora.corpus import index_removed

    index_removed(sender, instance=instance, **kwargs)
