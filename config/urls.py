from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from config.login import ThrottledLoginView

# A path no route matches under /api/ is answered in JSON, as the API's schema says.
handler404 = "config.http.not_found"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", ThrottledLoginView.as_view(), name="login"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/", include("config.api_urls")),
    path("", include("annotation.urls")),
    path("", include("evaluation.urls")),
    path("", include("benchmarks.urls")),
]
