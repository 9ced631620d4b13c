from django.urls import path

from benchmarks import views

app_name = "benchmarks"

urlpatterns = [
    path("", views.home, name="home"),
    # export (issue 17: refined benchmarks out)
    path("benchmarks/<int:pk>/export/", views.benchmark_export_view, name="benchmark-export"),
]
