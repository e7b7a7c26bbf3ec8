from django.apps import AppConfig


class JudgingConfig(AppConfig):
    """Nothing to set up at start-up: the machine judges register when :mod:`judging.machine` is first imported
    (by the pages, commands and jobs that read them), the qrels upload kind with the job kinds
    (:func:`workbench.jobs.kinds.discover`)."""

    name = "judging"
