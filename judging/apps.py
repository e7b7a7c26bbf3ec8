from django.apps import AppConfig


class JudgingConfig(AppConfig):
    name = "judging"

    def ready(self) -> None:
        # adaptive pools (pooling, the layer below) learn from judgments and queue what they add for assessors
        from judging import queueing, tasks  # noqa: F401 - tasks registers the qrels upload
        from pooling import extensions

        extensions.register_judged_documents(queueing.judged_documents)
        extensions.document_offered.connect(queueing.queue_offered_document, dispatch_uid="judging.queue_offered")
