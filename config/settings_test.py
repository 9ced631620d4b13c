"""The test override of config.settings (pytest and the workers tests start use it).

The broker moves to its own Redis database, so a worker of `make run` on the same Redis never
takes a test's tasks (nor a test worker a real one's); leases are short, so a test that kills a
worker sees its items taken back in seconds; the bootstrap resamples less.
"""

import os
from urllib.parse import urlsplit, urlunsplit

from config.settings import *  # noqa: F403
from config.settings import CELERY_BEAT_SCHEDULE, CELERY_BROKER_URL

# Two test sessions at once (say, two checkouts) each name their own with TEST_REDIS_DB. The
# processes of one parallel session (pytest-xdist's gw0, gw1, ...: `make test` runs two) take the
# databases below it, one each, as each takes its own test database (pytest-django's suffix), so
# that no process's queues, slots or cache are another's; the workers a test starts inherit the
# variable and with it the same database.
_XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
TEST_REDIS_DB = int(os.environ.get("TEST_REDIS_DB", "15")) - (
    int(_XDIST_WORKER[2:]) if _XDIST_WORKER.startswith("gw") else 0
)
if not 0 <= TEST_REDIS_DB <= 15:
    raise ValueError(f"TEST_REDIS_DB with PYTEST_XDIST_WORKER={_XDIST_WORKER} gives {TEST_REDIS_DB}")


def _with_db(url: str, db: int) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{db}"))


CELERY_BROKER_URL = _with_db(CELERY_BROKER_URL, TEST_REDIS_DB)
CACHES = {
    "default": {
        **CACHES["default"],  # noqa: F405
        "LOCATION": CELERY_BROKER_URL,
        "KEY_PREFIX": "toolevals-test-cache",
    }
}
EVALUATION_LEASE_SECONDS = 3.0
# A killed test worker's endpoint slots come back a request's timeout and 2 s after its last
# request began (30 s otherwise: the tests that kill workers waited that long).
EVALUATION_SLOT_MARGIN_SECONDS = 2.0
# A test worker started with beat (-B) sweeps every other second.
RECOVERY_INTERVAL_SECONDS = 2.0
CELERY_BEAT_SCHEDULE = {
    name: {**entry, "schedule": RECOVERY_INTERVAL_SECONDS}
    for name, entry in CELERY_BEAT_SCHEDULE.items()
}
EVALUATION_BOOTSTRAP_RESAMPLES = 200
AGREEMENT_BOOTSTRAP_RESAMPLES = 200
