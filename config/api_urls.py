"""The REST API: one router, so that /api/ lists every collection."""

from rest_framework.routers import DefaultRouter

from annotation import api as annotation_api
from benchmarks import api as benchmarks_api
from evaluation import api as evaluation_api

router = DefaultRouter()
router.register("benchmarks", benchmarks_api.BenchmarkViewSet, basename="benchmark")
router.register("tools", benchmarks_api.ToolViewSet, basename="tool")
router.register("samples", benchmarks_api.SampleViewSet, basename="sample")
router.register("endpoints", evaluation_api.EndpointViewSet, basename="endpoint")
router.register("runs", evaluation_api.RunViewSet, basename="run")
router.register("predictions", evaluation_api.PredictionViewSet, basename="prediction")
router.register("campaigns", annotation_api.CampaignViewSet, basename="campaign")
router.register("agreement", annotation_api.AgreementViewSet, basename="agreement")

urlpatterns = router.urls
