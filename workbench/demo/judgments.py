"""The demo's pre-made relevance judgments: topics 7-30, every document of the demo's depth-10 pool.

How they were made. The demo's organizer judges part of the pool before the assessors start, so that
``make demo`` can show a leaderboard at once. Here the organizer's part was done by an AI assistant
(Claude, working as a helper on this project) acting as that organizer: for each of topics 7-30 it read
the topic's title, description and narrative (``workbench/demo/topics.py``), then the title and text of
every pooled document of the topic, listed in docno order with no run, rank or score shown, and gave each
a grade. Grades never came from run scores, ranks or a retrieval model. :data:`workbench.demo.ANSWER_KEY`
(the topic writer's seed list) was only compared afterwards as a sanity check: every seed document that
is in the pool is judged relevant, and many relevant documents are not in the seed list.

The pool is the one ``make demo`` builds: the top 10 documents per topic of the five contributing runs
(``bm25-title``, ``bm25-desc``, ``bm25-rm3``, ``tfidf-title``, ``tfidf-desc``). ``ql-dir`` does not
contribute, so the documents only it retrieves are left unjudged, as they would be in a real pooled
collection. Topics 1-6 are not judged here: they are left to the demo's assessors in the browser.

Scale (the demo collection's): 0 = Not relevant, 1 = Relevant, 2 = Highly relevant.

- 2: the document by itself answers the narrative's need (``csv.reader`` for "read CSV file").
- 1: relevant but partial or indirect: one step of the task (``smtplib.SMTP.ehlo``), a related tool the
  narrative names (``fnmatch.fnmatch`` for finding files), or what the narrative calls "marginally
  relevant" (``list.count`` when counting every distinct item).
- 0: otherwise, including what the narrative excludes, and near misses that share the query's words
  (``shutil.move`` for copying a tree, ``random.randint`` for sampling from a list).

Docnos are object paths from Python 3.11.7's standard library (the build ``make demo`` was made on).
Another Python build may lack a few of these documents; :func:`write_qrels` then skips them when given
the docnos that exist (``known=``), and a document it adds is simply unjudged.

>>> sum(len(docs) for docs in JUDGMENTS.values())
428
>>> JUDGMENTS["19"]["zipfile.ZipFile.write"], JUDGMENTS["19"]["tarfile"]
(2, 0)
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Final

#: The topics judged here; topics 1-6 are left to the demo's assessors.
JUDGED_TOPICS: Final[tuple[str, ...]] = tuple(str(q) for q in range(7, 31))


def write_qrels(path: str | Path, *, known: Collection[str] | None = None) -> int:
    """Write :data:`JUDGMENTS` as TREC qrels (``qid 0 docno grade``, sorted by qid then docno as strings,
    as :func:`workbench.formats.write_qrels` does) and return how many lines were written.

    ``known``: the docnos that exist in the collection being loaded; judgments of other documents are
    skipped (another Python build may lack a few). ``None`` writes every judgment.
    """
    import pandas as pd

    from workbench.formats import write_qrels as write_frame

    rows = [(qid, docno, grade) for qid, docs in JUDGMENTS.items() for docno, grade in docs.items()
            if known is None or docno in known]
    frame = pd.DataFrame(rows, columns=["qid", "docno", "rel"])
    write_frame(frame, Path(path))
    return len(frame)


# Grades per topic, docnos in alphabetical order (the order they were read in).
JUDGMENTS: Final[dict[str, dict[str, int]]] = {
    "7": {
        "bdb.Bdb.do_clear": 0, "bdb.Breakpoint": 0, "importlib.resources.path": 0, "tempfile": 2,
        "tempfile.NamedTemporaryFile": 2, "tempfile.SpooledTemporaryFile": 1,
        "tempfile.TemporaryDirectory": 2, "tempfile.TemporaryFile": 2, "tempfile.gettempprefix": 0,
        "tempfile.gettempprefixb": 0, "tempfile.mkdtemp": 1, "tempfile.mkstemp": 1, "tempfile.mktemp": 0,
        "urllib.request.urlcleanup": 0, "urllib.request.urlretrieve": 0,
    },
    "8": {
        "asyncio.Barrier": 0, "asyncio.BaseEventLoop.run_until_complete": 0, "asyncio.all_tasks": 0,
        "asyncio.create_task": 0, "asyncio.get_running_loop": 0, "asyncio.to_thread": 1,
        "concurrent.futures": 2, "concurrent.futures.Executor.map": 2, "concurrent.futures.Future.running": 0,
        "concurrent.futures.Future.set_running_or_notify_cancel": 0,
        "concurrent.futures.ProcessPoolExecutor": 2, "concurrent.futures.ProcessPoolExecutor.map": 2,
        "concurrent.futures.ThreadPoolExecutor": 2, "queue.Queue.task_done": 0,
        "threading.Thread.is_alive": 0, "threading.Thread.start": 0, "threading.setprofile": 0,
        "threading.settrace": 0,
    },
    "9": {
        "concurrent.futures": 0, "concurrent.futures.Future": 0, "decimal.Context.power": 0,
        "dis.stack_effect": 0, "hashlib": 2, "hashlib.file_digest": 2, "hashlib.sha1": 1, "hashlib.sha256": 2,
        "hashlib.sha3_224": 1, "hashlib.sha3_256": 1, "hashlib.sha3_384": 1, "hashlib.sha3_512": 1,
        "hashlib.shake_256": 1, "logging.handlers.TimedRotatingFileHandler.computeRollover": 0, "map": 0,
        "math.log1p": 0, "platform.node": 0, "wsgiref.handlers.BaseHandler.set_content_length": 0, "zlib": 1,
        "zlib.adler32": 2, "zlib.crc32": 2,
    },
    "10": {
        "csv": 2, "csv.Dialect": 1, "csv.Sniffer": 1, "csv.excel": 1, "csv.excel_tab": 1,
        "csv.get_dialect": 1, "csv.list_dialects": 1, "csv.reader": 2, "csv.register_dialect": 1,
        "csv.unix_dialect": 1, "csv.unregister_dialect": 0, "csv.writer": 0, "logging.Logger": 0,
        "os.read": 0,
    },
    "11": {
        "urllib.parse.parse_qs": 2, "urllib.parse.parse_qsl": 2, "urllib.parse.urldefrag": 1,
        "urllib.parse.urlencode": 0, "urllib.parse.urljoin": 0, "urllib.parse.urlparse": 2,
        "urllib.parse.urlsplit": 2, "urllib.parse.urlunparse": 0, "urllib.parse.urlunsplit": 0,
        "urllib.request.pathname2url": 0, "urllib.request.url2pathname": 0,
        "urllib.robotparser.RobotFileParser.can_fetch": 0, "wsgiref.handlers.BaseHandler.get_scheme": 0,
        "wsgiref.util.application_uri": 0, "wsgiref.util.request_uri": 0, "xml.dom.minidom.parseString": 0,
    },
    "12": {
        "decimal.Context.rotate": 0, "email.message_from_file": 0,
        "http.server.BaseHTTPRequestHandler.log_error": 0,
        "http.server.BaseHTTPRequestHandler.log_message": 0, "logging.FileHandler": 2, "logging.Formatter": 0,
        "logging.Handler": 0, "logging.LogRecord": 0, "logging.LogRecord.getMessage": 0,
        "logging.LoggerAdapter.process": 0, "logging.config.BaseConfigurator": 0,
        "logging.config.DictConfigurator": 0, "logging.config.DictConfigurator.configure_handler": 0,
        "logging.getLogRecordFactory": 0, "logging.handlers.BaseRotatingHandler": 1,
        "logging.handlers.BaseRotatingHandler.rotate": 1,
        "logging.handlers.BaseRotatingHandler.rotation_filename": 1, "logging.handlers.NTEventLogHandler": 0,
        "logging.handlers.NTEventLogHandler.emit": 0, "logging.handlers.NTEventLogHandler.getMessageID": 0,
        "logging.handlers.RotatingFileHandler": 2, "logging.handlers.RotatingFileHandler.doRollover": 1,
        "logging.handlers.TimedRotatingFileHandler": 2,
        "logging.handlers.TimedRotatingFileHandler.getFilesToDelete": 0, "mailbox.Message": 0,
        "unittest.TestCase.assertLogs": 0,
    },
    "13": {
        "collections.defaultdict.copy": 0, "compileall": 0, "contextvars.Context.copy": 0, "copy": 0,
        "copy.copy": 0, "decimal.Context.copy_decimal": 0, "dict.copy": 0, "frozenset.copy": 0,
        "glob.glob": 0, "list.copy": 0, "os.walk": 0, "shutil": 1, "shutil.copy": 0, "shutil.copy2": 1,
        "shutil.copytree": 2, "shutil.move": 0, "tabnanny.check": 0,
        "xml.etree.ElementTree.ElementTree.getroot": 0, "xml.etree.ElementTree.ElementTree.iter": 0,
        "zipfile.PyZipFile.writepy": 0,
    },
    "14": {
        "datetime.datetime.time": 0, "datetime.time.replace": 0, "math.acos": 0, "math.asin": 0,
        "math.atan": 0, "math.atan2": 0, "math.cos": 0, "math.sin": 0, "math.tan": 0,
        "multiprocessing.set_executable": 0, "statistics.correlation": 0, "time.sleep": 0, "timeit": 2,
        "timeit.Timer": 2, "timeit.Timer.timeit": 2,
    },
    "15": {
        "bisect.insort": 1, "bisect.insort_left": 1, "dict.get": 0, "dict.keys": 0,
        "email.message.Message.get_all": 0, "email.message.Message.items": 0, "email.message.Message.keys": 0,
        "heapq.merge": 1, "heapq.nlargest": 1, "heapq.nsmallest": 1, "ipaddress.get_mixed_type_key": 1,
        "list.sort": 2, "pstats.Stats": 0, "sorted": 2, "tracemalloc.Snapshot.statistics": 0,
    },
    "16": {
        "asyncio.PriorityQueue": 2, "asyncio.Queue.empty": 0, "asyncio.Queue.get": 0,
        "asyncio.Queue.maxsize": 0, "asyncio.Queue.qsize": 0, "heapq": 2,
        "logging.handlers.SysLogHandler.encodePriority": 0, "os.nice": 0, "os.sched_get_priority_max": 0,
        "os.sched_get_priority_min": 0, "os.sched_param": 0, "queue.LifoQueue": 0, "queue.PriorityQueue": 2,
        "sched": 0, "sched.scheduler.enterabs": 0, "sched.scheduler.queue": 0,
    },
    "17": {
        "decimal.Context.quantize": 2, "decimal.Context.to_integral_exact": 1, "decimal.Decimal.copy_abs": 0,
        "decimal.Decimal.copy_negate": 0, "decimal.Decimal.copy_sign": 0, "decimal.Decimal.exp": 0,
        "decimal.Decimal.fma": 0, "decimal.Decimal.ln": 0, "decimal.Decimal.log10": 0,
        "decimal.Decimal.quantize": 2, "decimal.Decimal.radix": 0, "decimal.Decimal.sqrt": 0,
        "decimal.Decimal.to_integral_exact": 1, "decimal.Decimal.to_integral_value": 1,
        "unittest.TestCase.assertAlmostEqual": 0, "unittest.TestCase.assertNotAlmostEqual": 0,
    },
    "18": {
        "csv.Sniffer.sniff": 0, "random": 1, "random.SystemRandom.getstate": 0,
        "random.SystemRandom.random": 0, "random.SystemRandom.seed": 0, "random.choice": 2,
        "random.choices": 2, "random.getrandbits": 0, "random.randint": 0, "random.random": 0,
        "random.sample": 2, "random.shuffle": 1, "random.uniform": 0, "statistics.NormalDist.from_samples": 0,
        "statistics.NormalDist.samples": 0,
    },
    "19": {
        "shutil.make_archive": 2, "tarfile": 0, "zipfile.PyZipFile": 1, "zipfile.ZipFile.comment": 0,
        "zipfile.ZipFile.infolist": 0, "zipfile.ZipFile.mkdir": 1, "zipfile.ZipFile.namelist": 0,
        "zipfile.ZipFile.printdir": 0, "zipfile.ZipFile.write": 2, "zipfile.ZipFile.writestr": 2,
        "zipfile.ZipInfo": 0, "zipfile.ZipInfo.is_dir": 0, "zipimport": 0, "zipimport.zipimporter": 0,
    },
    "20": {
        "asyncio.AbstractChildWatcher.remove_child_handler": 0, "contextvars.Context.items": 0,
        "getpass.getuser": 0, "os.fork": 0, "os.get_exec_path": 0, "os.getenv": 2, "os.getenvb": 2,
        "os.putenv": 2, "os.wait": 0, "time.tzset": 0, "urllib.request.getproxies": 0,
        "venv.EnvBuilder.install_scripts": 0, "venv.EnvBuilder.replace_variables": 0,
        "venv.EnvBuilder.setup_python": 0, "wsgiref.handlers.BaseHandler.add_cgi_vars": 0,
        "wsgiref.handlers.BaseHandler.setup_environ": 0, "wsgiref.util.setup_testing_defaults": 0,
    },
    "21": {
        "collections.defaultdict": 0, "contextvars.Context.get": 0, "dataclasses.asdict": 1,
        "dataclasses.astuple": 1, "dataclasses.dataclass": 2, "dataclasses.field": 2, "dataclasses.fields": 1,
        "dataclasses.is_dataclass": 1, "dataclasses.make_dataclass": 1, "dataclasses.replace": 1,
        "dict.get": 0, "dict.setdefault": 0, "email.headerregistry.HeaderRegistry": 0,
        "email.policy.EmailPolicy": 0, "inspect.get_annotations": 0, "symtable.Class.get_methods": 0,
        "typing.dataclass_transform": 0,
    },
    "22": {
        "array.ArrayType.count": 1, "asyncio.Queue.join": 0, "bytearray.append": 0, "bytearray.count": 1,
        "bytearray.replace": 0, "collections.Counter": 2, "collections.Counter.most_common": 2,
        "collections.abc.Sequence.count": 1, "collections.deque.count": 1, "dict.items": 0, "list.count": 1,
        "logging.handlers.TimedRotatingFileHandler": 0, "operator.countOf": 1, "queue.Queue.join": 0,
        "range.count": 0, "re.Pattern.sub": 0, "re.Pattern.subn": 0, "str.count": 1,
    },
    "23": {
        "email": 0, "logging.handlers.SMTPHandler": 1, "logging.handlers.SMTPHandler.emit": 0,
        "logging.handlers.SMTPHandler.getSubject": 0, "smtplib": 2, "smtplib.SMTP.close": 0,
        "smtplib.SMTP.data": 1, "smtplib.SMTP.docmd": 0, "smtplib.SMTP.ehlo": 1, "smtplib.SMTP.expn": 0,
        "smtplib.SMTP.helo": 1, "smtplib.SMTP.help": 0, "smtplib.SMTP.login": 2, "smtplib.SMTP.mail": 1,
        "smtplib.SMTP.noop": 0, "smtplib.SMTP.putcmd": 0, "smtplib.SMTP.rcpt": 1,
        "smtplib.SMTP.send_message": 2, "smtplib.SMTP.sendmail": 2, "smtplib.SMTP.starttls": 2,
        "smtplib.SMTP.verify": 0, "smtplib.SMTPDataError": 0, "smtplib.SMTPServerDisconnected": 0,
    },
    "24": {
        "ast.MatchClass": 0, "ast.MatchMapping": 0, "ast.match_case": 0, "ast.pattern": 0,
        "fnmatch.fnmatch": 1, "glob.glob": 2, "glob.iglob": 2, "imaplib.IMAP4.list": 0,
        "imaplib.IMAP4.lsub": 0, "pathlib.Path.glob": 2, "pathlib.Path.rglob": 2, "pathlib.PurePath.match": 1,
        "re": 0, "re.Pattern.finditer": 0, "re.findall": 0, "re.finditer": 0, "re.fullmatch": 0,
        "re.match": 0, "re.search": 0,
    },
    "25": {
        "http.client.HTTPConnection.close": 0, "http.client.HTTPConnection.putrequest": 1,
        "http.client.HTTPConnection.request": 1, "http.client.HTTPResponse.getcode": 0,
        "http.client.HTTPResponse.geturl": 0, "http.client.HTTPResponse.info": 0,
        "http.client.HTTPSConnection.connect": 1, "http.cookiejar.CookieJar": 0,
        "logging.handlers.HTTPHandler": 0, "urllib.error.ContentTooShortError": 0,
        "urllib.error.HTTPError": 0, "urllib.parse.urldefrag": 0, "urllib.request": 2,
        "urllib.request.URLopener.http_error": 0, "urllib.request.urlopen": 2,
        "urllib.robotparser.RobotFileParser.can_fetch": 0, "urllib.robotparser.RobotFileParser.set_url": 0,
        "webbrowser.open_new": 0, "wsgiref.util.guess_scheme": 0,
    },
    "26": {
        "ast.Compare": 0, "decimal.Context.compare_total": 0, "decimal.Context.compare_total_mag": 0,
        "decimal.Decimal.compare_total": 0, "difflib": 2, "difflib.Differ": 2, "difflib.Differ.compare": 2,
        "difflib.restore": 1, "doctest.OutputChecker": 0, "filecmp.cmpfiles": 1, "frozenset.difference": 0,
        "frozenset.symmetric_difference": 0, "hash": 0, "locale.strcoll": 0, "tracemalloc.Statistic": 0,
        "unittest.TestCase.assertAlmostEqual": 0, "unittest.TestCase.assertNotAlmostEqual": 0,
    },
    "27": {
        "abc.get_cache_token": 0, "bdb.Bdb.runcall": 0, "bdb.Bdb.user_call": 0, "ctypes.CFUNCTYPE": 0,
        "filecmp": 0, "filecmp.cmp": 0, "functools.cache": 2, "functools.lru_cache": 2,
        "importlib.invalidate_caches": 0, "inspect.formatargvalues": 0, "itertools.repeat": 0,
        "linecache.checkcache": 0, "linecache.getline": 0, "linecache.lazycache": 0, "os.DirEntry.stat": 0,
        "pkgutil.get_importer": 0, "platform.uname_result": 0, "timeit.Timer.repeat": 0, "timeit.repeat": 0,
        "unittest.TestCase.addCleanup": 0, "zoneinfo.ZoneInfo.no_cache": 0,
    },
    "28": {
        "sqlite3": 2, "sqlite3.Connection.backup": 0, "sqlite3.Connection.close": 1,
        "sqlite3.Connection.commit": 1, "sqlite3.Connection.deserialize": 0,
        "sqlite3.Connection.executescript": 2, "sqlite3.Connection.getlimit": 0,
        "sqlite3.Connection.iterdump": 0, "sqlite3.Connection.serialize": 0, "sqlite3.connect": 2,
        "sqlite3.register_adapter": 1, "sqlite3.register_converter": 1,
    },
    "29": {
        "email.generator": 0, "email.generator.Generator.clone": 0, "email.utils.make_msgid": 1,
        "enum.unique": 0, "id": 0, "logging.handlers.NTEventLogHandler.getMessageID": 0, "os.getppid": 0,
        "poplib.POP3.uidl": 0, "pstats.Stats.get_sort_arg_defs": 0, "random.SystemRandom.getstate": 0,
        "random.SystemRandom.seed": 0, "random.getrandbits": 0, "random.random": 0, "secrets": 2,
        "threading.Thread.native_id": 0, "threading.get_native_id": 0, "time.pthread_getcpuclockid": 0,
        "tokenize.generate_tokens": 0, "tokenize.tokenize": 0, "types.GeneratorType.close": 0,
        "typing.NewType": 0, "uuid.uuid1": 2, "xml.dom.minidom.Attr.isId": 0,
    },
    "30": {
        "asyncio.AbstractEventLoop.run_until_complete": 1, "asyncio.AbstractServer.serve_forever": 0,
        "asyncio.AbstractServer.wait_closed": 0, "asyncio.BaseEventLoop.is_running": 0,
        "asyncio.BaseEventLoop.run_until_complete": 1, "asyncio.Condition.notify": 0, "asyncio.Event.set": 0,
        "asyncio.Future": 0, "asyncio.Runner.run": 1, "asyncio.Semaphore.release": 0, "asyncio.Task": 1,
        "asyncio.ensure_future": 1, "asyncio.get_event_loop": 0, "asyncio.iscoroutine": 0, "asyncio.run": 1,
        "asyncio.run_coroutine_threadsafe": 0, "asyncio.sleep": 0, "asyncio.wait_for": 1,
        "concurrent.futures.Future.cancel": 0, "concurrent.futures.Future.running": 0, "types.coroutine": 0,
    },
}
