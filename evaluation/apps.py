from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "evaluation"

    def ready(self) -> None:
        from judging.extensions import (  # app registry: models load after ready()
            register_ranking_agreement,
            register_system_scores,
        )

        # the computations judging's pages call, imported when first called (they bring the engine: numpy, pandas);
        # the measure families register when the engine is first imported, the release bundle's files when a
        # bundle is first built (evaluation.release_parts)
        register_ranking_agreement(_ranking_agreement_rows)
        register_system_scores(_run_map_over)
        _recompute_boards_on_change()

    def warm_up(self) -> None:
        """What a server imports at start (``workbench.wsgi``) rather than on a visitor's first page. Not
        matplotlib: no page draws with it (:mod:`evaluation.plots`), only the curves' downloads."""
        import scipy.stats  # noqa: F401


def _ranking_agreement_rows(collection) -> list[dict]:
    from evaluation.reusability import ranking_agreement_rows

    return ranking_agreement_rows(collection)


def _run_map_over(collection, qrels_frame, topics: list) -> dict:
    from evaluation.reusability import run_map_over

    return run_map_over(collection, qrels_frame, topics)


def _recompute_boards_on_change() -> None:
    """A saved judgment, run or pool (or a deleted run) queues the collection's board job once the write is
    committed (:func:`evaluation.tasks.request_board`: one queued job per collection at most). A service that
    writes in bulk (no ``post_save``) sends :data:`workbench.collections.signals.collection_changed` instead."""
    from django.conf import settings
    from django.db import transaction
    from django.db.models.signals import post_delete, post_save

    from judging.models import Judgment
    from pooling.models import Pool
    from workbench.collections.signals import collection_changed
    from workbench.models import Run

    def changed(sender, instance, **kwargs) -> None:
        changed_in_bulk(sender, collection_id=getattr(instance, "collection_id", None))

    def changed_in_bulk(sender, collection_id: int | None, **kwargs) -> None:
        if not getattr(settings, "BOARD_ON_CHANGE", True) or collection_id is None:
            return

        def queue() -> None:
            from evaluation import board_files, tasks  # app registry: models load after ready()
            from workbench.models import Collection

            collection = Collection.objects.filter(pk=collection_id).first()
            if collection is not None:
                tasks.request_board(collection, board_files.known_policies(collection))

        transaction.on_commit(queue)

    for model in (Judgment, Run, Pool):
        post_save.connect(changed, sender=model, weak=False, dispatch_uid=f"board-on-save-{model.__name__}")
    post_delete.connect(changed, sender=Run, weak=False, dispatch_uid="board-on-delete-Run")
    collection_changed.connect(changed_in_bulk, weak=False, dispatch_uid="board-on-bulk-change")
