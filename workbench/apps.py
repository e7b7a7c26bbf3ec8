from django.apps import AppConfig


class WorkbenchConfig(AppConfig):
    name = "workbench"
    verbose_name = "Test collections"

    def ready(self) -> None:
        # the console's upload kinds (topics, documents, runs) and their import jobs
        from workbench import tasks  # noqa: F401
