from django.apps import AppConfig


class PoolingConfig(AppConfig):
    """Nothing to set up at start-up: the strategies register when :mod:`pooling.strategies.registry` is first
    imported (the pool model's choices read it)."""

    name = "pooling"
