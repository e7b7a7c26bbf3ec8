"""Settings come from the environment and fail loudly on bad values."""

import subprocess
import sys
from pathlib import Path

from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


def load_settings(env: dict) -> subprocess.CompletedProcess:
    code = ("import os; os.environ['DJANGO_SETTINGS_MODULE']='workbench.settings';"
            "from django.conf import settings; d=settings.DATABASES['default'];"
            "print(d['ENGINE'], d['NAME'], settings.DEBUG, settings.ALLOWED_HOSTS)")
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={"PATH": "/usr/bin:/bin", **env},
                          capture_output=True, text=True)


def test_without_secret_key_a_private_key_is_made_once_in_the_var_directory(tmp_path):
    show_key = ("import os; os.environ['DJANGO_SETTINGS_MODULE']='workbench.settings';"
                "from django.conf import settings; print(settings.SECRET_KEY)")

    def key(env):
        result = subprocess.run([sys.executable, "-c", show_key], cwd=ROOT, capture_output=True, text=True,
                                env={"PATH": "/usr/bin:/bin", **env})
        assert result.returncode == 0, result.stderr
        return result.stdout.strip()

    first = key({"WORKBENCH_VAR_DIR": str(tmp_path)})
    path = tmp_path / "secret_key"
    assert len(first) >= 50 and path.read_text().strip() == first
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert key({"WORKBENCH_VAR_DIR": str(tmp_path)}) == first  # kept: sessions survive a restart
    assert key({"WORKBENCH_VAR_DIR": str(tmp_path), "SECRET_KEY": "s3cret"}) == "s3cret"


def test_sqlite_under_var_is_the_default_database(tmp_path):
    result = load_settings({"DEBUG": "1", "WORKBENCH_VAR_DIR": str(tmp_path)})
    assert result.stdout.split()[:2] == ["django.db.backends.sqlite3", str(tmp_path / "workbench.sqlite3")]


def test_database_url_selects_postgresql():
    result = load_settings({"DEBUG": "1", "DATABASE_URL": "postgres://u@db.example:5433/track"})
    assert result.stdout.split()[:2] == ["django.db.backends.postgresql", "track"]


def test_a_bad_boolean_fails_loudly():
    result = load_settings({"DEBUG": "maybe"})
    assert result.returncode != 0 and "DEBUG='maybe' is not a boolean" in result.stderr


def test_allowed_hosts_is_a_comma_separated_list():
    result = load_settings({"SECRET_KEY": "x", "ALLOWED_HOSTS": "track.example.org, 10.0.0.5"})
    assert "['track.example.org', '10.0.0.5']" in result.stdout


def test_sqlite_runs_in_wal_mode_with_a_busy_timeout(db):
    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA busy_timeout")
        assert cursor.fetchone()[0] >= 5000
        cursor.execute("PRAGMA journal_mode")
        # the test database lives in memory, where SQLite reports "memory"; files get "wal"
        assert cursor.fetchone()[0] in {"wal", "memory"}


def test_a_database_file_runs_in_wal_mode(tmp_path):
    code = ("import os, django; os.environ['DJANGO_SETTINGS_MODULE']='workbench.settings'; django.setup();"
            "from django.db import connection; c=connection.cursor(); c.execute('PRAGMA journal_mode');"
            "print(c.fetchone()[0])")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                            env={"PATH": "/usr/bin:/bin", "DEBUG": "1", "WORKBENCH_VAR_DIR": str(tmp_path)})
    assert result.stdout.strip() == "wal", result.stderr


def show_settings(env: dict, *names: str) -> subprocess.CompletedProcess:
    code = ("import os; os.environ['DJANGO_SETTINGS_MODULE']='workbench.settings';"
            f"from django.conf import settings; print(*[repr(getattr(settings, n)) for n in {list(names)!r}], sep='|')")
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={"PATH": "/usr/bin:/bin", **env},
                          capture_output=True, text=True)


def test_https_settings_are_off_locally_and_read_from_the_environment(tmp_path):
    names = ("SESSION_COOKIE_SECURE", "SECURE_SSL_REDIRECT", "SECURE_HSTS_SECONDS", "SECURE_PROXY_SSL_HEADER")
    local = show_settings({"WORKBENCH_VAR_DIR": str(tmp_path)}, *names)
    assert local.stdout.strip() == "False|False|0|None", local.stderr
    production = show_settings({"WORKBENCH_VAR_DIR": str(tmp_path), "SESSION_COOKIE_SECURE": "1",
                                "SECURE_SSL_REDIRECT": "yes", "SECURE_HSTS_SECONDS": "31536000",
                                "SECURE_PROXY_SSL_HEADER": "X-Forwarded-Proto"}, *names)
    assert production.stdout.strip() == "True|True|31536000|('HTTP_X_FORWARDED_PROTO', 'https')", production.stderr


def test_login_throttling_reads_its_limit_and_cool_off_from_the_environment(tmp_path):
    result = show_settings({"WORKBENCH_VAR_DIR": str(tmp_path), "AXES_FAILURE_LIMIT": "5",
                            "AXES_COOLOFF_MINUTES": "15"}, "AXES_FAILURE_LIMIT", "AXES_COOLOFF_TIME")
    assert result.stdout.strip() == "5|datetime.timedelta(seconds=900)", result.stderr
    bad = show_settings({"WORKBENCH_VAR_DIR": str(tmp_path), "AXES_FAILURE_LIMIT": "ten"}, "AXES_FAILURE_LIMIT")
    assert bad.returncode != 0 and "AXES_FAILURE_LIMIT='ten' is not an integer" in bad.stderr
