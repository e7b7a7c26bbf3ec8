from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "evaluation"

    def ready(self) -> None:
        from evaluation.reusability import ranking_agreement_rows, run_map_over
        from judging.extensions import (  # app registry: models load after ready()
            register_ranking_agreement,
            register_system_scores,
        )

        register_ranking_agreement(ranking_agreement_rows)
        register_system_scores(run_map_over)

    def warm_up(self) -> None:
        """What a server imports at start (``workbench.wsgi``) rather than on a visitor's first page."""
        import scipy.stats  # noqa: F401

        from evaluation import plots

        plots.warm_up()
