from django.urls import path

from benchmarks import views

app_name = "benchmarks"

urlpatterns = [
    # export (refined benchmarks out)
    path("benchmarks/<int:pk>/export/", views.benchmark_export_view, name="benchmark-export"),
    path("benchmarks/", views.home, name="home"),
    path("benchmarks/import/", views.import_page, name="import"),
    path("benchmarks/import/<int:job_id>/", views.import_job, name="import-job"),
    path("benchmarks/<int:benchmark_id>/", views.benchmark_detail, name="detail"),
    path(
        "benchmarks/<int:benchmark_id>/samples/<int:sample_id>/",
        views.sample_detail,
        name="sample",
    ),
]
