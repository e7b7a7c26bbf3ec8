from django.apps import AppConfig


class PoolingConfig(AppConfig):
    name = "pooling"

    def ready(self):
        from pooling.strategies import registry

        registry.autodiscover()  # the strategies' declarations (each its own module), registered once
