from django.apps import AppConfig


class WorkbenchConfig(AppConfig):
    name = "workbench"
    verbose_name = "Test collections"

    def ready(self) -> None:
        from django.db.models.signals import post_delete

        from workbench import tasks  # noqa: F401 - the console's upload kinds (topics, documents, runs), their jobs
        from workbench.corpora.corpus import index_removed
        from workbench.models import CorpusReference

        # a reference deleted with its collection (or in the admin) leaves no index file behind
        post_delete.connect(index_removed, sender=CorpusReference, weak=False, dispatch_uid="corpus-index-removed")
        # every app's api.py adds its endpoints to the one API (workbench.api.core); api_console adds the organizers'
        # console endpoints to workbench.api.core's router
        from workbench import home_sections  # noqa: F401
        from workbench.api import console as api_console  # noqa: F401
        from workbench.api.core import autodiscover
        from workbench.jobs import kinds as job_kinds  # noqa: F401

        autodiscover()
        job_kinds.autodiscover()  # every app's tasks.py declares its job kinds (JOB_KINDS): registered once, here
        home_sections.autodiscover()  # every app's home.py adds its task links to the home page (HOME_SECTIONS)
