from django.urls import path

from pooling import views

app_name = "pooling"

urlpatterns = [
    path("", views.pools, name="pools"),
]
