"""The workbench's ``db_worker``: django-tasks' worker, plus a heartbeat for the job it runs and a sweep of
jobs whose worker died (see :func:`workbench.jobs.lifecycle.sweep_dead_jobs`). Listed before ``django_tasks_db`` in
``INSTALLED_APPS`` so that its ``db_worker`` command is the one ``manage.py`` runs."""
