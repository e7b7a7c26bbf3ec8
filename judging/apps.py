from django.apps import AppConfig


class JudgingConfig(AppConfig):
    name = "judging"

    def ready(self) -> None:
        from judging import machine, tasks  # noqa: F401 - tasks registers the qrels upload

        machine.autodiscover()  # the machine judges' declarations (each its own module), registered once
