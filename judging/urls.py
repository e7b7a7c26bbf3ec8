from django.urls import path

from judging import dataset_views, duplicate_views, machine_views, organizer_views, views, workspace_views

app_name = "judging"

urlpatterns = [
    path("", views.queue, name="queue"),
    path("next/", views.next_document, name="next"),
    path("item/<int:item_id>/", views.item, name="item"),
    path("topic/<int:assignment_id>/", workspace_views.my_judgments, name="my_judgments"),
    path("finished/<int:done_id>/next/<int:next_id>/", workspace_views.boundary, name="boundary"),
    path("organize/<slug:slug>/", organizer_views.dashboard, name="dashboard"),
    path("organize/<slug:slug>/assign/", organizer_views.assign, name="assign"),
    path("organize/<slug:slug>/assignments/<int:assignment_id>/", organizer_views.assignment_change,
         name="assignment_change"),
    path("organize/<slug:slug>/dataset/", dataset_views.dataset, name="dataset"),
    path("organize/<slug:slug>/agreement/", organizer_views.agreement, name="agreement"),
    path("organize/<slug:slug>/duplicates/", duplicate_views.duplicates, name="duplicates"),
    path("organize/<slug:slug>/duplicates/find/", duplicate_views.duplicates_find, name="duplicates_find"),
    path("organize/<slug:slug>/duplicates/<int:class_id>/", duplicate_views.duplicate_class, name="duplicate_class"),
    path("organize/<slug:slug>/machine/", machine_views.machine_console, name="machine"),
    path("organize/<slug:slug>/machine/route/", machine_views.machine_route, name="machine_route"),
    path("organize/<slug:slug>/machine/jobs/<int:job_id>/cancel/", machine_views.machine_cancel,
         name="machine_cancel"),
    path("organize/<slug:slug>/machine/<slug:name>/agreement/", machine_views.machine_agreement_page,
         name="machine_agreement"),
    path("organize/<slug:slug>/machine/<slug:name>/verdicts/", machine_views.machine_verdicts,
         name="machine_verdicts"),
]
