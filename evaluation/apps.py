from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "evaluation"

    def ready(self) -> None:
        from evaluation.reusability import ranking_agreement_rows
        from judging.extensions import register_ranking_agreement  # app registry: models load after ready()

        register_ranking_agreement(ranking_agreement_rows)

    def warm_up(self) -> None:
        """What a server imports at start (``workbench.wsgi``) rather than on a visitor's first page."""
        import scipy.stats  # noqa: F401

        from evaluation import plots

        plots.warm_up()
