"""MkDocs hook: the configuration table, from the environment variables the code reads.

The variables are found in the source (``env_str``/``env_int``/``env_bool``/``env_list`` calls and
``os.environ.get``/``setdefault``/``os.getenv``, read with ``ast``), with their defaults where the code
gives a literal; the meanings are the ``MEANINGS`` below. A variable the code reads that ``MEANINGS``
does not describe is a warning, so ``mkdocs build --strict`` (``make docs``) fails until it is
documented. The table replaces the line ``<!-- configuration-table -->`` of a page.
"""

from __future__ import annotations

import ast
import logging
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ["workbench", "pooling", "judging", "evaluation", "answers", "participation", "manage.py"]
PLACEHOLDER = "<!-- configuration-table -->"
_ENV_HELPERS = {"env_str": "text", "env_int": "integer", "env_bool": "0 or 1", "env_list": "comma-separated"}
#: read by the code but not a setting of the deployment
_INTERNAL = {"DJANGO_SETTINGS_MODULE"}
log = logging.getLogger("mkdocs.plugins.configuration")

#: section -> variable -> (default as written here, or None for the code's literal; meaning). Variables
#: marked "library" are read by a library, not by the workbench's code, and are listed all the same.
MEANINGS: dict[str, dict[str, tuple[str | None, str]]] = {
    "Server": {
        "DATABASE_URL": ("SQLite in `VAR_DIR/workbench.sqlite3`", "e.g. `postgres://user@host:5432/track`"),
        "DB_CONN_MAX_AGE": (None, "seconds a database connection is kept open between requests (0: one per request)"),
        "SECRET_KEY": ("made once, kept in `VAR_DIR/secret_key` (mode 0600)",
                       "Django's secret key; set it (50+ random characters), the same on every machine of a track"),
        "DEBUG": ("`0` (the `make` targets set `1`)", "development mode"),
        "ALLOWED_HOSTS": ("`127.0.0.1,localhost` with `DEBUG=1`, else none", "comma-separated host names"),
        "CSRF_TRUSTED_ORIGINS": ("none", "comma-separated origins (`https://track.example.org`) allowed to post forms"),
        "WORKBENCH_VAR_DIR": ("`var/`", "where the SQLite database, the generated secret key and local files live"),
        "SQLITE_BUSY_TIMEOUT": (None, "seconds a writer waits for the SQLite lock"),
        "SERVER_WARM_UP": (None, "`1`: a web server imports scipy.stats at start, so the first significance "
                                 "page does not wait for it (matplotlib is left to the curves' downloads)"),
        "ARROW_DEFAULT_MEMORY_POOL": (None, "set by `manage.py` and `workbench/wsgi.py` unless given: Arrow's "
                                            "buffers from the C library's allocator, which gives memory back"),
        "OPENBLAS_NUM_THREADS": (None, "set to `1` by `manage.py` for the file commands (`trec_eval`, `curves`, "
                                       "...) unless given: numpy's OpenBLAS then starts no thread per core"),
        "LOG_LEVEL": (None, "level of the log written to standard error"),
        "WORKBENCH_DEFAULT_MAX_DEPTH": (None, "most documents a run may hold per topic unless the collection says "
                                              "otherwise"),
    },
    "Jobs and files": {
        "TASKS_BACKEND": (None, "where background jobs are queued (run by `manage.py db_worker`); "
                                "`django_tasks.backends.immediate.ImmediateBackend` runs them in the request (tests)"),
        "JOB_PARTS": (None, "split long jobs (run imports, new depth-k pools, full evaluations, board jobs, machine "
                            "judging, near-duplicate detection) into this many parts any worker claims"),
        "DUPLICATES_PART_MIN": (None, "near-duplicate detection is split only with this many documents per part"),
        "WORKER_NICE": (None, "how much each `db_worker` lowers its CPU priority at start (Unix niceness, 0-19): "
                              "jobs yield the processor to the web server, so judging stays fast during an import "
                              "(0: same priority)"),
        "JOB_STALE_AFTER_SECONDS": (None, "a running job without a heartbeat for this long is retried once or "
                                          "failed (its worker died)"),
        "CORPUS_DIRS": ("none", "comma-separated folders whose files may be used as corpora by reference; a path "
                                "elsewhere is refused"),
        "IR_DATASETS_HOME": ("library: `~/.ir_datasets`", "where ir_datasets finds its local copies (`irds:ID` "
                                                           "corpora); nothing is downloaded"),
        "S3_BUCKET": ("none (files under `VAR_DIR`)", "keep uploads, participants' runs, boards and job outputs "
                                                       "in this S3 bucket (django-storages)"),
        "S3_ENDPOINT_URL": ("none (AWS)", "the S3-compatible server"),
        "S3_ACCESS_KEY_ID": ("none", "the bucket's access key"),
        "S3_SECRET_ACCESS_KEY": ("none", "the bucket's secret key"),
        "S3_REGION": (None, "the bucket's region"),
        "S3_PREFIX": ("none", "a folder inside the bucket"),
        "BOARD_DIR": ("`VAR_DIR/boards`", "stored leaderboards and results figures; with `S3_BUCKET`, this "
                                          "process's cache of those it has read"),
        "WORK_DIR": ("`VAR_DIR/work`", "where a worker unpacks a job's files fetched from the bucket"),
        "EMBEDDING_THREADS": (None, "threads of the `embedding` machine judge's model"),
    },
    "Machine judges": {
        "JUDGE_ENDPOINTS": ("none", "JSON object: endpoint name → `{\"base_url\": \"https://host/v1\", "
                                    "\"models\": [...], \"key_env\": \"VAR\"}`; organizers choose an endpoint "
                                    "and a model, never a URL or a key"),
        "JUDGE_REPLY_MAX_BYTES": ("`1048576` (1 MiB)", "a larger reply from an endpoint is refused"),
        "JUDGE_REQUEST_DEADLINE": ("`120`", "seconds: the overall deadline of one request to an endpoint"),
        "OPENAI_API_KEY": ("none", "the key `machine_judge --base-url` sends (command line only)"),
    },
    "Login and HTTPS": {
        "AXES_ENABLED": (None, "login throttling (django-axes)"),
        "AXES_FAILURE_LIMIT": (None, "wrong passwords for one user name from one address before that pair is "
                                     "locked out"),
        "AXES_COOLOFF_MINUTES": (None, "how long a lock-out lasts"),
        "CLIENT_IP_HEADER": ("none (the connection's address)", "behind a reverse proxy: the header carrying "
                                                                "the client's address (`X-Real-IP`)"),
        "SESSION_COOKIE_SECURE": (None, "send the session cookie over HTTPS only (production: `1`)"),
        "CSRF_COOKIE_SECURE": (None, "send the CSRF cookie over HTTPS only (production: `1`)"),
        "SECURE_SSL_REDIRECT": (None, "redirect http to https (production: `1`)"),
        "SECURE_PROXY_SSL_HEADER": ("none", "behind an HTTPS proxy: the header saying the request came over "
                                            "HTTPS (`X-Forwarded-Proto`); only if the proxy sets it"),
        "SECURE_HSTS_SECONDS": (None, "Strict-Transport-Security max-age (production: `31536000`)"),
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": (None, "HSTS covers subdomains (production: `1`)"),
        "SECURE_HSTS_PRELOAD": (None, "allow the domain into browsers' preload lists (production: `1`)"),
    },
    "E-mail": {
        "EMAIL_HOST": ("none", "an SMTP server: invitations are then also e-mailed; without it organizers copy "
                               "the set-password link"),
        "EMAIL_PORT": (None, "the SMTP port"),
        "EMAIL_HOST_USER": ("none", "SMTP user"),
        "EMAIL_HOST_PASSWORD": ("none", "SMTP password"),
        "EMAIL_USE_TLS": (None, "STARTTLS"),
        "DEFAULT_FROM_EMAIL": (None, "the sender of invitations"),
    },
    "Limits": {
        "UPLOAD_MAX_FILES": (None, "files in one console upload (the upload page states it)"),
        "MAX_RUN_FILE_MB": (None, "a run file, once decompressed"),
        "MAX_QRELS_FILE_MB": (None, "a qrels file, once decompressed"),
        "MAX_TOPICS_FILE_MB": (None, "a topics file, once decompressed"),
        "MAX_DOCUMENTS_FILE_MB": (None, "a documents file, once decompressed (1 TB; documents are streamed)"),
        "MAX_COMPRESSION_RATIO": (None, "how many times a compressed file may expand (checked after 16 MB)"),
        "MAX_DOCUMENT_MB": (None, "one document"),
        "MAX_RUN_METADATA_KB": (None, "a run's ir_metadata header (no YAML aliases, 20 levels, 10,000 values)"),
        "PORTAL_MAX_UPLOAD_MB": (None, "the largest run file the participants' portal takes"),
        "TEAM_STORAGE_QUOTA_MB": (None, "files a team's submissions may keep"),
        "JOB_STARTS_PER_MINUTE": (None, "jobs one person may start per minute; one more answers 429 with "
                                        "`Retry-After` (0: no limit)"),
        "API_REQUESTS_PER_MINUTE": (None, "requests one API token may make per minute (each server process counts "
                                          "its own); one more answers 429 with `Retry-After` (0: no limit)"),
    },
}
_LIBRARY = {"IR_DATASETS_HOME"}


def _arithmetic(node: ast.AST) -> int | None:
    """``1024 * 1024`` and the like: products and sums of integer constants, else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Add)):
        left, right = _arithmetic(node.left), _arithmetic(node.right)
        if left is not None and right is not None:
            return left * right if isinstance(node.op, ast.Mult) else left + right
    return None


def _literal(node: ast.AST | None, kind: str) -> str | None:
    """The default as a reader would type it, when the code gives a literal; None otherwise."""
    if node is None:
        return None
    try:
        value = ast.literal_eval(node)
    except ValueError:
        value = _arithmetic(node)
        if value is None:
            return None
    if isinstance(value, bool):
        return f"`{int(value)}`"
    if value in ("", [], None):
        return "none"
    if isinstance(value, list):
        return "`" + ",".join(map(str, value)) + "`"
    return f"`{value}`"


def _wrappers(tree: ast.AST) -> set[str]:
    """Functions that read the variable named by their first parameter (``_proxy_ssl_header(name)``)."""
    found = set()
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef) or not func.args.args:
            continue
        param = func.args.args[0].arg
        for node in ast.walk(func):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _ENV_HELPERS
                    and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == param):
                found.add(func.name)
    return found


def _read_call(node: ast.Call, wrappers: set[str] = frozenset()) -> tuple[str, str, ast.AST | None] | None:
    """(name, kind, default node) when ``node`` reads an environment variable by a literal name."""
    func = node.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    if not node.args or not isinstance(node.args[0], ast.Constant) or not isinstance(node.args[0].value, str):
        return None
    default = node.args[1] if len(node.args) > 1 else None
    if name in _ENV_HELPERS:
        return node.args[0].value, _ENV_HELPERS[name], default
    if name in wrappers:
        return node.args[0].value, "text", None
    text = ast.unparse(func)
    if text in ("os.environ.get", "os.environ.setdefault", "os.getenv", "environ.get"):
        return node.args[0].value, "text", default
    return None


def read_variables(root: Path = ROOT) -> dict[str, tuple[str, str | None, str]]:
    """Every environment variable the code reads: name -> (kind, default as a literal or None, file)."""
    found: dict[str, tuple[str, str | None, str]] = {}
    for source in SOURCES:
        base = root / source
        paths = sorted(base.rglob("*.py")) if base.is_dir() else [base]
        for path in paths:
            if "migrations" in path.parts:
                continue
            text = path.read_text()
            if "environ" not in text and "env_" not in text and "getenv" not in text:
                continue  # reads nothing from the environment: not worth parsing
            tree = ast.parse(text, str(path))
            wrappers = _wrappers(tree)
            for node in ast.walk(tree):
                read = isinstance(node, ast.Call) and _read_call(node, wrappers)
                if read and read[0] not in _INTERNAL and read[0] not in found:
                    found[read[0]] = (read[1], _literal(read[2], read[1]), str(path.relative_to(root)))
    return found


def configuration_tables(found: dict[str, tuple[str, str | None, str]]) -> str:
    described = {name for section in MEANINGS.values() for name in section}
    for name in sorted(set(found) - described):
        log.warning("the code reads %s (%s) but docs/hooks/configuration.py's MEANINGS does not describe it",
                    name, found[name][2])
    parts = []
    for section, variables in MEANINGS.items():
        rows = []
        for name, (default, meaning) in variables.items():
            kind, literal, _ = found.get(name, ("text", None, ""))
            if name not in found and name not in _LIBRARY:
                log.info("configuration: %s is described but not read by the code (yet)", name)
            rows.append(f"| `{name}` | {default or literal or 'none'} | {kind} | {meaning} |")
        parts.append(f"### {section}\n\n| variable | default | type | meaning |\n|---|---|---|---|\n"
                     + "\n".join(rows) + "\n")
    return "\n".join(parts)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if PLACEHOLDER not in markdown:
        return markdown
    return markdown.replace(PLACEHOLDER, configuration_tables(read_variables()))
