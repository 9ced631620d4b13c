"""The project's URLs and one more that no access rule names (test_access)."""

from django.http import HttpResponse
from django.urls import path

from config.urls import urlpatterns as project


def unruled(request):  # pragma: no cover - the access layer refuses it first
    return HttpResponse("should never be served")


urlpatterns = [*project, path("unruled/", unruled, name="unruled")]
