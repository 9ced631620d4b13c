"""The one settings module. Everything that differs between machines comes from the environment.

DATABASE_URL   PostgreSQL only (psycopg 3), e.g. postgres://user@127.0.0.1:5432/toolevals
REDIS_URL      the Celery broker, e.g. redis://127.0.0.1:6379/0
SECRET_KEY     required when DEBUG is off: long and random (config.secrets)
FIELD_ENCRYPTION_KEY  required when DEBUG is off: encrypts the endpoints' keys (config.secrets)
DEBUG          "1"/"true" to turn on; off by default
ALLOWED_HOSTS  comma-separated

When DATABASE_URL / REDIS_URL are unset, `config.devstack.ensure_env()` (called by manage.py,
the Celery entry point and the test suite) starts the embedded PostgreSQL and Redis under
.data/ and sets them before this module is read.
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from config.secrets import (
    DEV_FIELD_ENCRYPTION_KEY,
    INSECURE_DEV_SECRET_KEY,
    encryption_keys_problem,
    fernet_key_problem,
    secret_key_problem,
)

BASE_DIR = Path(__file__).resolve().parent.parent

# Every variable this module reads, so that nothing else can be pointed at one of them (an
# endpoint's key variable naming SECRET_KEY would send it to the endpoint: evaluation.credentials).
_READ: set[str] = set()


def env(name: str, default: str = "") -> str:
    _READ.add(name)
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    value = env(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    return [part.strip() for part in env(name, default).split(",") if part.strip()]


DEBUG = env_bool("DEBUG")
# SECRET_KEY signs; FIELD_ENCRYPTION_KEY (comma-separated: the first encrypts, each decrypts, so
# a new key goes first and the old one stays until `manage.py rotate_endpoint_keys` has run)
# encrypts the endpoints' keys at rest. With DEBUG off both must be real (config.secrets: long,
# random, not the public development ones, not each other), or nothing starts; with DEBUG on
# the development ones stand in for what is unset.
SECRET_KEY = env("SECRET_KEY", "")
FIELD_ENCRYPTION_KEYS = env_list("FIELD_ENCRYPTION_KEY")
if DEBUG:
    SECRET_KEY = SECRET_KEY or INSECURE_DEV_SECRET_KEY
    FIELD_ENCRYPTION_KEYS = FIELD_ENCRYPTION_KEYS or [DEV_FIELD_ENCRYPTION_KEY]
    _problem = next(
        (
            f"FIELD_ENCRYPTION_KEY {problem}."
            for problem in map(fernet_key_problem, FIELD_ENCRYPTION_KEYS)
            if problem
        ),
        "",
    )
else:
    _problem = secret_key_problem(SECRET_KEY) or encryption_keys_problem(
        FIELD_ENCRYPTION_KEYS, SECRET_KEY
    )
if _problem:
    raise ImproperlyConfigured(_problem + ("" if DEBUG else " (DEBUG is off)"))

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]" if DEBUG else "")

INSTALLED_APPS = [
    # The admin, finding the apps' admin modules when first needed (not at every start-up).
    "config.adminsite.AdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "django_htmx",
    "template_partials",
    "benchmarks",
    "evaluation",
    "annotation",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Content-Security-Policy on every response: the app's own files only (config.csp).
    "config.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    # Query parameters and form fields with characters no view (or database) can take: 400.
    "config.http.UntrustedInputMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Who may open which page: one table, config.access.ACCESS (the API: TableAccess below).
    "config.access.AccessMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "config.access.context",
            ],
            # Filters every app's pages use to show tool-use data ({% load display %}).
            "libraries": {"display": "config.display"},
        },
    },
]

_database_url = env("DATABASE_URL", "")
if not _database_url:
    raise ImproperlyConfigured(
        "DATABASE_URL is not set. Run through `make run` / `make test` (they start the embedded "
        "PostgreSQL), or set DATABASE_URL=postgres://USER@HOST:PORT/DB."
    )
_db = dj_database_url.parse(_database_url, conn_max_age=60, conn_health_checks=True)
if _db["ENGINE"] != "django.db.backends.postgresql":
    raise ImproperlyConfigured(
        f"DATABASE_URL must point at PostgreSQL (postgres://...), not {_db['ENGINE']!r}."
    )
# Django's backend with a health check that needs no round trip on a healthy idle connection.
_db["ENGINE"] = "config.db"
# DATABASE_PREPARED_STATEMENTS=1: parameters sent apart from the statement's text
# (server-side binding), so that psycopg prepares a statement it has sent 5 times on a
# connection and PostgreSQL stops parsing and planning it at each request (the connections
# persist, CONN_MAX_AGE). perf/request_cost.py measured PostgreSQL's CPU per studio request
# (a submit bringing the next item, 15 statements) at 4.5 ms prepared against 8.2 ms re-planned
# (disturbed machine). Off by default, as in Django: a statement bound on the server takes at
# most 65,535 parameters (PostgreSQL's protocol), and Django 5.2 does not split a longer
# `__in` list, as reads of a large run or benchmark may send (`in_bulk` of its samples); a prepared
# statement may also be given a generic plan after its fifth run (plan_cache_mode), which
# config/dbstats.py's plan-proof reads do not assume; and behind a pooler in transaction mode
# (PgBouncer before 1.21) a prepared statement may be on another server connection.
if env_bool("DATABASE_PREPARED_STATEMENTS", False):
    _db.setdefault("OPTIONS", {}).update(server_side_binding=True, prepare_threshold=5)
DATABASES = {"default": _db}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env("STATIC_ROOT") or BASE_DIR / "staticfiles")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

# Sessions are in PostgreSQL only, never in Redis: signing in and annotating depend on the
# database alone, and a session ended (logout) while Redis is unreachable stays ended.
SESSION_ENGINE = "django.contrib.sessions.backends.db"

# The first reads a session's user with a statement written once (config/auth.py); ModelBackend
# stays for sessions that name it (signed in before it was added).
AUTHENTICATION_BACKENDS = [
    "config.auth.SessionUserBackend",
    "django.contrib.auth.backends.ModelBackend",
]

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

# Security: strict unless DEBUG. Behind a TLS-terminating proxy set SECURE_PROXY_SSL_HEADER.
if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(env("SECURE_HSTS_SECONDS", "31536000"))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_CONTENT_TYPE_NOSNIFF = True
    if env_bool("BEHIND_TLS_PROXY"):
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Proxies in front of the app that append the address they were reached from to
# X-Forwarded-For: the client's address is that many entries from the right (config.address);
# 0 (no proxy) reads REMOTE_ADDR and ignores the header.
TRUSTED_PROXY_COUNT = int(env("TRUSTED_PROXY_COUNT", "0"))
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")
X_FRAME_OPTIONS = "DENY"
# A URL typed without a scheme is taken as https (Django 6's default, chosen now).
FORMS_URLFIELD_ASSUME_HTTPS = True

# The studio's access rule asks the annotation app which campaign a URL names for a user in a
# role (config.access imports no app; this setting wires it).
ACCESS_CAMPAIGN_LOOKUP = "annotation.selectors.campaign_get_for_user"

# Inputs the papers' analyses read beyond a run's own records that a layer evaluation may not
# import gives (name: dotted path of an evaluation.analyses.InputProvider), imported when an
# analysis first asks: the human labels of a run's outputs (WTU-Eval's error types).
ANALYSIS_INPUTS = {"human_labels": "annotation.analysis_inputs.PROVIDER"}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.BasicAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["config.access.TableAccess"],
    # Every ApplicationError a service raises answers 400 with what is wrong and where.
    "EXCEPTION_HANDLER": "config.errors.api_exception_handler",
    # The API takes JSON bodies only (a form cannot say a nested object, which answers are),
    # through one bounded reader (size, depth, storable text, finite numbers): config.http.
    "DEFAULT_PARSER_CLASSES": ["config.http.BoundedJSONParser"],
    # ?limit= at most 1000 (config.http.BoundedLimitOffsetPagination), ?offset=.
    "DEFAULT_PAGINATION_CLASS": "config.http.BoundedLimitOffsetPagination",
    "PAGE_SIZE": 50,
    # drf-spectacular's, with every operation's refusals (400, 401, 403, 404, 429).
    "DEFAULT_SCHEMA_CLASS": "config.apischema.ApiSchema",
    "DEFAULT_THROTTLE_CLASSES": ["config.throttle.OneTripThrottle"],
    "DEFAULT_THROTTLE_RATES": {
        # A person annotating answers at most every few seconds; these stop scripts.
        "annotation": env("THROTTLE_ANNOTATION", "600/min"),
        "annotation-submit": env("THROTTLE_ANNOTATION_SUBMIT", "240/min"),
    },
}

# How long a request waits on Redis (connecting, then each reply) before it goes on without
# it: the cache and the throttles then count in the process's memory (config.cache), and a page
# that queues work says the queue is unreachable (config.queue).
REDIS_SOCKET_TIMEOUT = float(env("REDIS_SOCKET_TIMEOUT", "0.5"))
# One cache for every process (throttles count across web workers): the broker's Redis, under
# its own key prefix.
CACHES = {
    "default": {
        "BACKEND": "config.cache.RedisCache",
        "LOCATION": env("REDIS_URL", ""),
        "KEY_PREFIX": "toolevals-cache",
        "OPTIONS": {
            "socket_connect_timeout": REDIS_SOCKET_TIMEOUT,
            "socket_timeout": REDIS_SOCKET_TIMEOUT,
        },
    }
}
# Failed logins per user name and per address before a pause (config.login).
LOGIN_MAX_FAILURES = int(env("LOGIN_MAX_FAILURES", "10"))
LOGIN_LOCKOUT_SECONDS = int(env("LOGIN_LOCKOUT_SECONDS", "300"))
SPECTACULAR_SETTINGS = {
    "TITLE": "Tool-use evaluation platform API",
    "DESCRIPTION": "Benchmarks, tools and samples; endpoints, runs and predictions; "
    "annotation campaigns, their next item and submitting answers.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["config.access.TableAccess"],
    "ENUM_NAME_OVERRIDES": {
        "SampleKindEnum": "benchmarks.models.Sample.Kind",
    },
}

# Benchmark files uploaded on /benchmarks/import/ wait here, one folder per import job, until
# their import ends (a worker on another machine needs the same folder: shared storage). An
# upload larger than BENCHMARK_UPLOAD_MAX_BYTES (all its files together) is refused.
BENCHMARK_UPLOAD_DIR = Path(env("BENCHMARK_UPLOAD_DIR") or BASE_DIR / ".data" / "uploads")
BENCHMARK_UPLOAD_MAX_BYTES = int(env("BENCHMARK_UPLOAD_MAX_BYTES", str(100 << 20)))

# Celery: JSON only, late acks so that a killed worker's task is redelivered, global limits.
CELERY_BROKER_URL = env("REDIS_URL", "")
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A worker keeps its database connection from one task to the next: Celery's Django fixup
# would otherwise close it after every task, and each chunk would pay a new server backend
# (a fork, authentication, cold catalog caches). config.celery closes it between tasks as
# Django does between requests: when older than CONN_MAX_AGE, or broken.
CELERY_DB_REUSE_MAX = 1_000_000
CELERY_TASK_TIME_LIMIT = int(env("CELERY_TASK_TIME_LIMIT", "1800"))
CELERY_TASK_SOFT_TIME_LIMIT = int(env("CELERY_TASK_SOFT_TIME_LIMIT", "1740"))
CELERY_TASK_DEFAULT_QUEUE = "default"
# Named queues: inference talks to model endpoints, judging to judge endpoints, reports are CPU.
CELERY_TASK_QUEUES_NAMES = ("default", "inference", "judging", "reports")
# Redis redelivers an unacked task after the visibility timeout; keep it above the time limit.
# A publish waits at most a few seconds on a broker that stopped answering (kombu's default is
# for ever); pages check the broker answers before they save work (config.queue).
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": CELERY_TASK_TIME_LIMIT + 600,
    "socket_connect_timeout": 2.0,
    "socket_timeout": 5.0,
}
CELERY_TASK_ALWAYS_EAGER = False
CELERY_TASK_ROUTES = {
    "evaluation.tasks.run_chunk": {"queue": "inference"},
    "evaluation.tasks.run_intervals": {"queue": "reports"},
    "evaluation.tasks.run_analyses_compute": {"queue": "reports"},
    "evaluation.tasks.run_compare_counts": {"queue": "reports"},
    "evaluation.tasks.judge_chunk": {"queue": "judging"},
    "annotation.tasks.agreement_report_compute": {"queue": "reports"},
    "annotation.tasks.calibration_report_compute": {"queue": "reports"},
}
# Background work (config.background): whatever a worker works on (a run's items, an import, a
# report) is held under a lease it renews every third of it; a killed worker's is taken back
# when the lease runs out, by the sweep every worker runs as it starts and beat runs every
# RECOVERY_INTERVAL_SECONDS (`make run` embeds beat in its worker, the Procfile runs it alone).
EVALUATION_LEASE_SECONDS = float(env("EVALUATION_LEASE_SECONDS", "60"))
# An endpoint's concurrency slot outlives its last refresh by the request's timeout and this
# margin (a loop that stalls): a dead worker's slots come back that long after its last request
# began (evaluation.work.engine.endpoint_slots).
EVALUATION_SLOT_MARGIN_SECONDS = float(env("EVALUATION_SLOT_MARGIN_SECONDS", "30"))
RECOVERY_INTERVAL_SECONDS = float(env("RECOVERY_INTERVAL_SECONDS", "60"))
# The sweep is the project's own task, not an app's (autodiscovery finds those): a worker
# imports config.recovery with the app.
CELERY_IMPORTS = ("config.recovery",)
CELERY_BEAT_SCHEDULE = {
    "recover-lost-work": {
        "task": "config.recovery.recover_lost_work",
        "schedule": RECOVERY_INTERVAL_SECONDS,
    },
}

# Runs. Chunks of items are the unit of work a worker takes.
EVALUATION_CHUNK_SIZE = int(env("EVALUATION_CHUNK_SIZE", "100"))
# Items one execution may take from the rest of its run before it lets the queue decide again.
EVALUATION_EXECUTION_MAX_ITEMS = int(env("EVALUATION_EXECUTION_MAX_ITEMS", "1000"))
EVALUATION_BOOTSTRAP_RESAMPLES = int(env("EVALUATION_BOOTSTRAP_RESAMPLES", "1000"))
# Agreement reports: bootstrap resamples per interval, and the size (current labels x
# questions) up to which a page computes a report at once instead of queueing it for a worker.
AGREEMENT_BOOTSTRAP_RESAMPLES = int(env("AGREEMENT_BOOTSTRAP_RESAMPLES", "1000"))
AGREEMENT_INLINE_ANSWERS = int(env("AGREEMENT_INLINE_ANSWERS", "20000"))
# Calibration reports: a judge whose versions judged up to this many items (all versions
# together: the report carries the trend across them) has its report computed when a page asks;
# a larger one's is a worker's (the reports queue) while the page shows progress.
CALIBRATION_INLINE_UNITS = int(env("CALIBRATION_INLINE_UNITS", "1000"))
# Run analyses (the papers' breakdowns): runs of up to this many predictions are analysed when a
# page asks; larger ones by a worker on the reports queue while the page shows progress. Measured
# on the 2-core dev machine (a generic run, one analysis): 1,000 predictions 0.13 s, 5,000 0.9 s,
# 20,000 3.5 s; reading stored analyses back 5-70 ms.
ANALYSES_INLINE_ITEMS = int(env("ANALYSES_INLINE_ITEMS", "5000"))
# Comparisons: when a run finishes, a worker on the reports queue counts its items against each
# of this many of its task's newest done runs (0: none), so that the comparison of two runs of a
# million items (about 1.5 s of counting each) shows its counts at once.
COMPARE_COUNTS_AHEAD = int(env("COMPARE_COUNTS_AHEAD", "5"))

# The virtual API server (StableToolBench section 3.1). The simulator is an endpoint's model
# (by name; default the embedded local model's). Real APIs are called only on these hosts
# (empty: never). Clients of POST /virtual/ give one of these keys as toolbench_key.
VIRTUAL_API_SIMULATOR = env("VIRTUAL_API_SIMULATOR", "")
# Tokens a simulated response may take ("around 100 to 200 words", StableToolBench's prompt).
VIRTUAL_API_SIMULATOR_MAX_TOKENS = int(env("VIRTUAL_API_SIMULATOR_MAX_TOKENS", "512"))
VIRTUAL_API_ALLOWED_HOSTS = env_list("VIRTUAL_API_ALLOWED_HOSTS")
VIRTUAL_API_KEYS = env_list("VIRTUAL_API_KEYS")


# Import limits (see benchmarks.kit.base, which reads the same variables): a field longer
# than this is refused, and JSON nested deeper than this is refused, both with the file and line
# named; so is a record (a line, a row, an element of a JSON file) larger than this, before it is
# parsed, and one holding more values than this.
IMPORT_MAX_FIELD_BYTES = int(env("IMPORT_MAX_FIELD_BYTES", str(1 << 20)))
IMPORT_MAX_RECORD_BYTES = int(env("IMPORT_MAX_RECORD_BYTES", str(4 << 20)))
IMPORT_MAX_RECORD_ITEMS = int(env("IMPORT_MAX_RECORD_ITEMS", "200000"))

# The environment variables an endpoint's (or a real API's) key may be read from instead of a key
# entered in the platform, stored encrypted (evaluation.credentials): only these, never a
# variable this module reads. Empty by default: every key is entered.
ENDPOINT_KEY_VARIABLES = env_list("ENDPOINT_KEY_VARIABLES")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", "INFO")},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        # One line per HTTP request to a model endpoint would drown a run's log (and slow it).
        "httpx": {"level": "WARNING"},
        "httpx2": {"level": "WARNING"},
        "openai": {"level": "WARNING"},
    },
}

# The variables read above (and by the dev stack and the processes' own start-up): never an
# endpoint's key variable.
ENVIRONMENT_VARIABLES = frozenset(
    {*_READ, "DJANGO_SETTINGS_MODULE", "DEVSTACK_DATA_DIR", "PORT", "TEST_REDIS_DB"}
)
