from django.urls import path

from pooling import views

app_name = "pooling"

urlpatterns = [
    path("", views.pools, name="pools"),
    path("<int:pool_id>/stop-topic", views.topic_stop, name="topic_stop"),
]
