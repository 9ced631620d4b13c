from django.urls import path

from annotation import home, setup_views, views
from annotation.agreement import views as agreement_views
from annotation.calibration import views as calibration_views

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
    path(
        "campaigns/<int:campaign_id>/agreement/labels-hf.zip",
        agreement_views.agreement_labels_hf,
        name="agreement-labels-hf",
    ),
    # a judge version's calibration against the humans (annotation.calibration)
    path(
        "judges/<int:judge_id>/v<int:number>/calibration/",
        calibration_views.calibration,
        name="calibration",
    ),
    path(
        "judges/<int:judge_id>/v<int:number>/calibration.csv",
        calibration_views.calibration_csv,
        name="calibration-csv",
    ),
    path(
        "judges/<int:judge_id>/v<int:number>/calibration/campaign/",
        calibration_views.calibration_campaign,
        name="calibration-campaign",
    ),
    path("review/<int:campaign_id>/", views.review, name="review"),
    path("review/<int:campaign_id>/<int:label_id>/", views.review_submit, name="review-submit"),
    path("adjudicate/<int:campaign_id>/", views.adjudicate, name="adjudicate"),
    path(
        "adjudicate/<int:campaign_id>/<int:item_id>/",
        views.adjudicate_submit,
        name="adjudicate-submit",
    ),
    # --- the researcher's campaigns and their setup flow (annotation.setup_views) ---
    path("campaigns/", setup_views.campaign_overview, name="campaign-overview"),
    path("campaigns/new/", setup_views.campaign_new, name="setup-new"),
    path(
        "campaigns/guidelines-preview/",
        setup_views.guidelines_preview,
        name="setup-guidelines-preview",
    ),
    path("campaigns/<int:campaign_id>/setup/", setup_views.setup_details, name="setup-details"),
    path(
        "campaigns/<int:campaign_id>/setup/questions/",
        setup_views.setup_questions,
        name="setup-questions",
    ),
    path("campaigns/<int:campaign_id>/setup/items/", setup_views.setup_items, name="setup-items"),
    path(
        "campaigns/<int:campaign_id>/setup/members/",
        setup_views.setup_members,
        name="setup-members",
    ),
    path(
        "campaigns/<int:campaign_id>/setup/preview/",
        setup_views.setup_preview,
        name="setup-preview",
    ),
    path("campaigns/<int:campaign_id>/setup/open/", setup_views.setup_open, name="setup-open"),
]
