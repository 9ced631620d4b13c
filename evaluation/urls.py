from django.urls import path

from evaluation import analysis_views, setup_views, views
from evaluation.virtualapi import views as virtual_views

app_name = "evaluation"

urlpatterns = [
    path("runs/", views.run_index, name="run-list"),
    path("runs/new/", views.run_new, name="run-new"),
    path("runs/compare/", views.run_compare, name="run-compare"),
    path("runs/compare/counts/", views.run_compare_counts, name="run-compare-counts"),
    path("runs/<int:pk>/", views.run_detail, name="run-detail"),
    path("runs/<int:pk>/predictions.csv", views.run_predictions_csv, name="run-csv"),
    path("runs/<int:pk>/predictions-hf.zip", views.run_predictions_hf, name="run-hf"),
    # --- run analyses (the papers' breakdowns); before run-control, whose <action> would match
    path("runs/<int:pk>/analyses/", analysis_views.run_analyses, name="run-analyses"),
    path("runs/<int:pk>/golds/", views.run_golds, name="run-golds"),
    path(
        "runs/<int:pk>/analyses/<slug:name>.csv",
        analysis_views.run_analysis_csv,
        name="run-analysis-csv",
    ),
    path("runs/analyses/", analysis_views.runs_analyses, name="runs-analyses"),
    path(
        "runs/analyses/<slug:name>.csv",
        analysis_views.runs_analysis_csv,
        name="runs-analysis-csv",
    ),
    # --- end of run analyses
    path(
        "runs/<int:pk>/<str:action>/",
        views.run_control,
        name="run-control",
    ),
    path("virtual/", virtual_views.virtual_call, name="virtual"),
    path("judging/", views.job_index, name="job-list"),
    path("judging/new/", views.job_new, name="job-new"),
    path("judging/<int:pk>/", views.job_detail, name="job-detail"),
    path("judging/<int:pk>/<str:action>/", views.job_control, name="job-control"),
    # --- endpoints and judges (evaluation.setup_views)
    path("endpoints/", setup_views.endpoint_index, name="endpoint-list"),
    path("endpoints/new/", setup_views.endpoint_new, name="endpoint-new"),
    path("endpoints/<int:pk>/", setup_views.endpoint_edit, name="endpoint-edit"),
    path("endpoints/<int:pk>/check/", setup_views.endpoint_check_view, name="endpoint-check"),
    path("judges/", setup_views.judge_index, name="judge-list"),
    path("judges/new/", setup_views.judge_new, name="judge-new"),
    path("judges/<int:pk>/", setup_views.judge_detail, name="judge-detail"),
    # --- end of endpoints and judges
    path("leaderboard/<int:benchmark_id>/", views.overall_leaderboard, name="overall"),
    path(
        "leaderboard/<int:benchmark_id>/overall.csv",
        views.overall_leaderboard_csv,
        name="overall-csv",
    ),
    path(
        "leaderboard/<int:benchmark_id>/<str:task>/",
        views.run_leaderboard,
        name="leaderboard",
    ),
]
