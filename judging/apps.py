from django.apps import AppConfig


class JudgingConfig(AppConfig):
    name = "judging"

    def ready(self) -> None:
        from judging import tasks  # noqa: F401 - registers the qrels upload
