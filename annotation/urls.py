from django.urls import path

from annotation import home, views
from annotation.agreement import views as agreement_views

app_name = "annotation"

urlpatterns = [
    # "/" (before benchmarks' urls, which config/urls.py includes after these)
    path("", home.home, name="home"),
    path("annotate/", views.campaign_index, name="campaign-list"),
    path("annotate/<int:campaign_id>/", views.annotate, name="annotate"),
    path("annotate/<int:campaign_id>/submit/<int:assignment_id>/", views.submit, name="submit"),
    path("annotate/<int:campaign_id>/skip/<int:assignment_id>/", views.skip, name="skip"),
    path("annotate/<int:campaign_id>/undo/", views.undo, name="undo"),
    path("annotate/<int:campaign_id>/guidelines/", views.guidelines, name="guidelines"),
    path("campaigns/<int:campaign_id>/progress/", views.campaign_progress, name="progress"),
    path(
        "annotate/<int:campaign_id>/refine/<int:assignment_id>/",
        views.refine_edit,
        name="refine-edit",
    ),
    path("campaigns/<int:campaign_id>/agreement/", agreement_views.agreement, name="agreement"),
    path(
        "campaigns/<int:campaign_id>/agreement/summary.csv",
        agreement_views.agreement_summary_csv,
        name="agreement-summary-csv",
    ),
    path(
        "campaigns/<int:campaign_id>/agreement/labels.csv",
        agreement_views.agreement_labels_csv,
        name="agreement-labels-csv",
    ),
    path("review/<int:campaign_id>/", views.review, name="review"),
    path("review/<int:campaign_id>/<int:label_id>/", views.review_submit, name="review-submit"),
    path("adjudicate/<int:campaign_id>/", views.adjudicate, name="adjudicate"),
    path(
        "adjudicate/<int:campaign_id>/<int:item_id>/",
        views.adjudicate_submit,
        name="adjudicate-submit",
    ),
]
