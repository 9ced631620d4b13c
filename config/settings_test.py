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
# processes of one parallel session (pytest-xdist's gw0, gw1, ...: `make test` runs two) take one
# each, as each takes its own test database (pytest-django's suffix): gw0 TEST_REDIS_DB, the
# others the databases below it, passing over 12-14, which the perf scripts the tests run flush
# (agreement_speed.py 12, annotate_load.py and request_cost.py 13, eval_overhead.py 14). The
# workers a test starts inherit the variable and with it the same database.
PERF_REDIS_DBS = (12, 13, 14)
_XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
_FIRST_REDIS_DB = int(os.environ.get("TEST_REDIS_DB", "15"))
_PROCESS = int(_XDIST_WORKER[2:]) if _XDIST_WORKER.startswith("gw") else 0
_FREE = [_FIRST_REDIS_DB] + [
    db for db in range(_FIRST_REDIS_DB - 1, -1, -1) if db not in PERF_REDIS_DBS
]
if len(_FREE) <= _PROCESS:
    raise ValueError(
        f"TEST_REDIS_DB={_FIRST_REDIS_DB} leaves no Redis database for {_XDIST_WORKER}"
    )
TEST_REDIS_DB = _FREE[_PROCESS]


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
