from django.urls import path

from judging import organizer_views, views

app_name = "judging"

urlpatterns = [
    path("", views.queue, name="queue"),
    path("next/", views.next_document, name="next"),
    path("item/<int:item_id>/", views.item, name="item"),
    path("organize/<slug:slug>/", organizer_views.dashboard, name="dashboard"),
    path("organize/<slug:slug>/assign/", organizer_views.assign, name="assign"),
    path("organize/<slug:slug>/agreement/", organizer_views.agreement, name="agreement"),
]
