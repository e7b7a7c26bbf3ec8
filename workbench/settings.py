"""Settings of the workbench: every knob comes from the environment.

Small typed helpers read each variable and fail loudly on a bad value, so a typo in a
deployment is an error at start-up rather than a silent default.
"""

from __future__ import annotations

import importlib.util
import os
import secrets
import tempfile
from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str | None = None) -> str | None:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use 1/0, true/false, yes/no, on/off)")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


DEBUG = env_bool("DEBUG", False)

# Where the workbench keeps its SQLite database and other local state.
VAR_DIR = Path(env_str("WORKBENCH_VAR_DIR", str(BASE_DIR / "var")))


def _local_secret_key(path: Path) -> str:
    """The key kept in ``VAR_DIR/secret_key`` (mode 0600), made once: local use needs no setting, while a
    deployment on several machines sets SECRET_KEY so that every machine signs alike. The file appears
    whole or not at all (written aside, then linked into place), so processes starting together agree."""
    try:
        key = path.read_text().strip()
        if key:
            return key
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise ImproperlyConfigured(f"SECRET_KEY is not set and {path} cannot be read: {exc.strerror}") from None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor, aside = tempfile.mkstemp(dir=path.parent, prefix=".secret_key.")  # mode 0600
        with os.fdopen(descriptor, "w") as handle:
            handle.write(secrets.token_urlsafe(50) + "\n")
        try:
            os.link(aside, path)
        except FileExistsError:  # another process made it first: use theirs
            pass
        finally:
            os.unlink(aside)
        return path.read_text().strip()
    except OSError as exc:
        raise ImproperlyConfigured(f"SECRET_KEY is not set and {path} cannot be written: {exc.strerror}") from None


SECRET_KEY = env_str("SECRET_KEY") or _local_secret_key(VAR_DIR / "secret_key")

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_tasks",
    "workbench.worker",  # before django_tasks_db: its db_worker (heartbeat, sweep of dead jobs) is the one run
    "django_tasks_db",
    "axes",
    "csp",
    "workbench",
    "pooling",
    "judging",
    "evaluation",
    "answers",
    "participation",
]

# Two libraries are not installed apps, because Django imports every installed app's package in
# django.setup(), which every command pays: django-ninja (the HTTP API: pydantic and its endpoints' machinery)
# and django-tables2 (the console's tables: its columns import django.contrib.postgres and psycopg). What an
# app brings is named here instead, from their package folders (found, not imported): their templates, their
# static files (the API docs' Swagger UI, served from this site, not a CDN: workbench.api.core) and
# django-tables2's template tags, imported with the first page that renders a template.
_PACKAGES = {name: Path(importlib.util.find_spec(name).submodule_search_locations[0])
             for name in ("ninja", "django_tables2")}

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # static files from the application server itself (gunicorn with DEBUG=0 serves none otherwise, and the
    # job pages' progress script would 404); a web server in front may still serve STATIC_ROOT instead
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    # before the CSRF check reads the form: an upload over the limits answers a plain page, not a debug one
    "workbench.collections.uploads.UploadLimitsMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # a query parameter holding a NUL answers a page naming it (PostgreSQL refuses NUL in any text: a 500)
    "workbench.console.addresses.NulInAddressMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # a person starting more than JOB_STARTS_PER_MINUTE jobs gets a 429 page
    "workbench.jobs.lifecycle.JobStartLimitMiddleware",
    # a view the database could not serve (locked past SQLITE_BUSY_TIMEOUT, unreachable) answers 503 "busy, try again"
    "workbench.jobs.busy.DatabaseBusyMiddleware",
    # last: turns a refused login into the lock-out page
    "axes.middleware.AxesMiddleware",
]

# Background jobs (Django's tasks API through django-tasks): the database backend, run by
# `manage.py db_worker`, so the embedded default needs no broker and several machines' workers can share
# a PostgreSQL database.
TASKS = {"default": {"BACKEND": env_str("TASKS_BACKEND", "django_tasks_db.DatabaseBackend"),
                     "QUEUES": ["default"]}}

# Uploads: every file goes straight to a temporary file on disk (never held in memory, whatever its size),
# under VAR_DIR so that staging it for a job is a rename, not a copy.
FILE_UPLOAD_HANDLERS = ["django.core.files.uploadhandler.TemporaryFileUploadHandler"]
FILE_UPLOAD_TEMP_DIR = str(VAR_DIR / "uploads" / "tmp")
try:
    Path(FILE_UPLOAD_TEMP_DIR).mkdir(parents=True, exist_ok=True)
except OSError as exc:
    raise ImproperlyConfigured(f"cannot make the upload directory {FILE_UPLOAD_TEMP_DIR}: {exc.strerror}") from None
#: most files one upload may carry (Django's default, 100, is fewer than a track's runs); the forms state it
DATA_UPLOAD_MAX_NUMBER_FILES = env_int("UPLOAD_MAX_FILES", 1000)
# Folders on this machine whose corpus files (or BEIR folders) the console may use by reference (comma-separated);
# empty: the console refuses paths and only irds:ID and the add_corpus / import_dataset commands point to corpora.
CORPUS_DIRS = env_list("CORPUS_DIRS", [])

#: import the pages' heavier libraries (scipy.stats) when a server starts rather than on first use
SERVER_WARM_UP = env_bool("SERVER_WARM_UP", False)

#: a running job without progress for this long is shown as failed (its worker was killed or died)
JOB_STALE_AFTER_SECONDS = env_int("JOB_STALE_AFTER_SECONDS", 600)

#: how much a db_worker lowers its CPU priority at start (Unix niceness, 0-19): imports, boards and every other
#: job yield the processor to the web server's requests, so assessors' pages stay fast while a track imports
WORKER_NICE = env_int("WORKER_NICE", 10)

ROOT_URLCONF = "workbench.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates", *(folder / "templates" for folder in _PACKAGES.values())],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
            "libraries": {"django_tables2": "django_tables2.templatetags.django_tables2"},
        },
    },
]

WSGI_APPLICATION = "workbench.wsgi.application"


def _database() -> dict:
    url = env_str("DATABASE_URL")
    if not url:
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        url = f"sqlite:///{VAR_DIR / 'workbench.sqlite3'}"
    try:
        # a connection kept for a minute (checked before reuse): opening one per request cost 15 ms of a
        # PostgreSQL server's time and 4 ms of SQLite's pragmas, a third of a judgment's (docs/benchmarks.md)
        config = dj_database_url.parse(url, conn_max_age=env_int("DB_CONN_MAX_AGE", 60), conn_health_checks=True)
    except ValueError as exc:
        raise ImproperlyConfigured(f"DATABASE_URL is not a database URL: {exc}") from None
    if config["ENGINE"] == "django.db.backends.sqlite3":
        # WAL lets readers work while an assessor's judgment is written; the busy timeout makes
        # concurrent writers wait instead of failing with "database is locked".
        config["OPTIONS"] = {
            "timeout": env_int("SQLITE_BUSY_TIMEOUT", 20),
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
                            f"PRAGMA busy_timeout={env_int('SQLITE_BUSY_TIMEOUT', 20) * 1000};",
        }
    return config


DATABASES = {"default": _database()}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
    {"NAME": "workbench.access.people.NotOnlyWhitespaceValidator"},
]

# Login throttling (django-axes): after AXES_FAILURE_LIMIT wrong passwords for one user name from one
# address, that pair is locked out for AXES_COOLOFF_MINUTES. Locking the pair rather than the address
# keeps a lab of assessors behind one NAT address working while one of them is locked out, and an
# attacker cannot lock everyone out by guessing at every name. Attempts and lock-outs are listed in the
# admin (Access attempts, Access logs); `manage.py axes_reset_username NAME` unlocks a user.
AUTHENTICATION_BACKENDS = [
    "workbench.access.authentication.LoginThrottleBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_ENABLED = env_bool("AXES_ENABLED", True)
AXES_FAILURE_LIMIT = env_int("AXES_FAILURE_LIMIT", 10)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("AXES_COOLOFF_MINUTES", 60))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
# Behind a reverse proxy every request comes from the proxy's address; name the header in which the
# proxy passes the client's address (e.g. X-Real-IP), so that lock-outs are per client, not per proxy.
CLIENT_IP_HEADER = env_str("CLIENT_IP_HEADER", "") or ""
AXES_CLIENT_IP_CALLABLE = "workbench.access.authentication.client_ip_address"

LANGUAGE_CODE = "en-us"
LOCALE_PATHS = [_PACKAGES["django_tables2"] / "locale"]  # its words, as an installed app's locale folder would give
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATICFILES_DIRS = [folder / "static" for folder in _PACKAGES.values()]  # as their app folders would give them
# serve straight from the apps' static folders too, so a deployment works before (or without) collectstatic
WHITENOISE_USE_FINDERS = True
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise warns on every start while collectstatic has not run

# Files that outlive a request (uploads staged for jobs, participants' run files, job outputs) go through
# Django's storage API (workbench.collections.files): the local disk under VAR_DIR by default; with S3_BUCKET set, an
# S3-compatible store (django-storages), so that workers on machines without the web server's disk run any job.
# WORK_DIR: this machine's scratch folder where a worker unpacks a job's files (default VAR_DIR/work).
S3_BUCKET = env_str("S3_BUCKET", "")
WORK_DIR = Path(env_str("WORK_DIR", "") or VAR_DIR / "work")
# the stored leaderboards and results figures (evaluation.board_store): where they live when files are on the local
# disk; with S3_BUCKET they live in the bucket and this is the process's own cache of those it read
BOARD_DIR = Path(env_str("BOARD_DIR", "") or VAR_DIR / "boards")
# Long jobs (the full evaluation) split into this many parts that any worker claims (workbench.jobs.subjobs); 1: not split.
JOB_PARTS = env_int("JOB_PARTS", 1)
# near-duplicate detection is split only with at least this many documents a part (workbench.corpora.duplicate_tasks)
DUPLICATES_PART_MIN = env_int("DUPLICATES_PART_MIN", 5000)
STORAGES = {
    "default": {"BACKEND": "workbench.collections.files.LocalStorage"} if not S3_BUCKET else {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {"bucket_name": S3_BUCKET, "endpoint_url": env_str("S3_ENDPOINT_URL") or None,
                    "access_key": env_str("S3_ACCESS_KEY_ID") or None, "secret_key": env_str("S3_SECRET_ACCESS_KEY") or None,
                    "region_name": env_str("S3_REGION", "us-east-1"), "location": env_str("S3_PREFIX", ""),
                    "file_overwrite": True, "default_acl": None, "querystring_auth": True}},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"


# Largest number of documents a run may hold per topic unless a collection says otherwise.
WORKBENCH_DEFAULT_MAX_DEPTH = env_int("WORKBENCH_DEFAULT_MAX_DEPTH", 1000)

# HTTPS. Off by default so that `make demo` works over plain http on 127.0.0.1; a deployment behind
# HTTPS turns them on (the README's "Production settings"), after which `check --deploy` is clean.
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", False)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", False)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)


def _proxy_ssl_header(name: str) -> tuple[str, str] | None:
    """``X-Forwarded-Proto`` -> ``("HTTP_X_FORWARDED_PROTO", "https")``: the header in which the HTTPS
    proxy says the client's request was secure. Set it only behind a proxy that sets (and strips) it."""
    header = env_str(name, "") or ""
    if not header.strip():
        return None
    return "HTTP_" + header.strip().upper().replace("-", "_"), "https"


SECURE_PROXY_SSL_HEADER = _proxy_ssl_header("SECURE_PROXY_SSL_HEADER")

# E-mail (optional): with EMAIL_HOST set, invitations are also e-mailed; without it, organizers copy the
# set-password link the people page shows.
EMAIL_HOST = env_str("EMAIL_HOST", "") or ""
EMAIL_PORT = env_int("EMAIL_PORT", 587)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "") or ""
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "") or ""
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", True)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "workbench@localhost") or "workbench@localhost"

# Content Security Policy (django-csp): scripts, styles, images and fetches only from this site; no
# inline script. Inline styles stay allowed: the templates and matplotlib's inline SVG figures use them.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, "'unsafe-inline'"],
        "img-src": [SELF, "data:"],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "WARNING")},
}

# What a file may cost, whatever it claims to be (workbench.formats.limits; the README's "Limits"). Each
# reader refuses a file with one line as soon as it passes a limit: the size of a file once decompressed,
# per kind; how much a compressed file may expand (after its first 16 MB); one document's size; a run's
# ir_metadata header (size; YAML aliases are refused, nesting and values are bounded).
MAX_RUN_FILE_MB = env_int("MAX_RUN_FILE_MB", 2048)
MAX_QRELS_FILE_MB = env_int("MAX_QRELS_FILE_MB", 2048)
MAX_TOPICS_FILE_MB = env_int("MAX_TOPICS_FILE_MB", 512)
MAX_DOCUMENTS_FILE_MB = env_int("MAX_DOCUMENTS_FILE_MB", 1024 * 1024)
MAX_COMPRESSION_RATIO = env_int("MAX_COMPRESSION_RATIO", 100)
MAX_DOCUMENT_MB = env_int("MAX_DOCUMENT_MB", 16)
MAX_RUN_METADATA_KB = env_int("MAX_RUN_METADATA_KB", 64)
for _name in ("MAX_RUN_FILE_MB", "MAX_QRELS_FILE_MB", "MAX_TOPICS_FILE_MB", "MAX_DOCUMENTS_FILE_MB",
              "MAX_COMPRESSION_RATIO", "MAX_DOCUMENT_MB", "MAX_RUN_METADATA_KB"):
    if globals()[_name] < 1:
        raise ImproperlyConfigured(f"{_name}={globals()[_name]} must be at least 1")


def _configure_file_limits() -> None:
    from workbench.formats import limits

    mb = 1 << 20
    limits.configure()  # the defaults first, then these settings over them
    limits.configure(max_bytes={"runs": MAX_RUN_FILE_MB * mb, "qrels": MAX_QRELS_FILE_MB * mb,
                                "topics": MAX_TOPICS_FILE_MB * mb, "documents": MAX_DOCUMENTS_FILE_MB * mb},
                     max_ratio=float(MAX_COMPRESSION_RATIO), max_document=MAX_DOCUMENT_MB * mb,
                     max_metadata=MAX_RUN_METADATA_KB * 1024)


_configure_file_limits()

# The participants' portal: the largest run file one submission may upload, and how much a team's kept
# files (accepted and replaced submissions) may hold in all; a refused file is removed at once.
PORTAL_MAX_UPLOAD_MB = env_int("PORTAL_MAX_UPLOAD_MB", 1024)
TEAM_STORAGE_QUOTA_MB = env_int("TEAM_STORAGE_QUOTA_MB", 10 * 1024)
# Most background jobs one user may start per minute (submissions, evaluations, bundles, imports); more
# answer 429 with a page saying when to try again.
JOB_STARTS_PER_MINUTE = env_int("JOB_STARTS_PER_MINUTE", 10)
# Most requests one API token may make per minute (workbench.access.tokens; 0: no limit); more answer 429 + Retry-After.
API_REQUESTS_PER_MINUTE = env_int("API_REQUESTS_PER_MINUTE", 600)

# Machine judges' chat endpoints are the deployment's (workbench.access.endpoints): organizers choose one by name, its key
# goes to it alone. A reply longer than JUDGE_REPLY_MAX_BYTES is refused; JUDGE_REQUEST_DEADLINE (seconds) bounds
# a whole request (connect, send, read), whatever the endpoint's pace.
from workbench.access.endpoints import judge_endpoints, positive  # noqa: E402 - Django-free, beside the settings it reads

JUDGE_ENDPOINTS = judge_endpoints("JUDGE_ENDPOINTS", env_str("JUDGE_ENDPOINTS", ""))
JUDGE_REPLY_MAX_BYTES = int(positive("JUDGE_REPLY_MAX_BYTES", env_str("JUDGE_REPLY_MAX_BYTES", ""), 1 << 20))
JUDGE_REQUEST_DEADLINE = positive("JUDGE_REQUEST_DEADLINE", env_str("JUDGE_REQUEST_DEADLINE", ""), 120.0)
