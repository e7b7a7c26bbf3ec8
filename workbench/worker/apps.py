from django.apps import AppConfig


class WorkerConfig(AppConfig):
    name = "workbench.worker"
    label = "workbench_worker"
    verbose_name = "Background worker"
