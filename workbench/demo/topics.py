"""The 30 demo topics, written by hand: everyday programming tasks whose answers are in the stdlib docs.

Each topic has a TREC-style ``title`` (what a programmer types into a search box), ``description``
(the question in one sentence) and ``narrative`` (what an assessor counts as relevant). The documents
are docstrings, so "relevant" means: the docstring describes an object a programmer would use to do
the task, or explains how to do it.

:data:`ANSWER_KEY` lists, per topic, documents the topic's author read and judged relevant: a seed for
the demo's judgments, not the complete set of relevant documents.
"""

from __future__ import annotations

from typing import Final


def _topic(qid: int, title: str, description: str, narrative: str) -> dict[str, str]:
    return {"qid": str(qid), "title": title, "description": description, "narrative": narrative}


TOPICS: Final[list[dict[str, str]]] = [
    _topic(
        1, "parse command line arguments",
        "How do I define the options and positional arguments my script accepts and parse them from the "
        "command line?",
        "A relevant document describes a parser for a program's command-line arguments (options, flags, "
        "positional arguments, help messages) or a way to declare one argument. Documents that only split "
        "a shell command string or only mention sys.argv are not relevant.",
    ),
    _topic(
        2, "read gzip compressed file",
        "How can I open a .gz file and read its decompressed contents?",
        "A relevant document describes opening, reading or decompressing gzip data (a gzip file object, "
        "gzip.open, decompressing a gzip stream). Documents about other compression formats (bz2, lzma, "
        "zip) or about writing archives only are not relevant.",
    ),
    _topic(
        3, "datetime time zone conversion",
        "How do I attach a time zone to a datetime and convert it to another time zone?",
        "A relevant document describes time-zone-aware datetimes: tzinfo objects, UTC offsets, converting "
        "between zones (astimezone), the IANA zone database. Documents about naive local time, clocks or "
        "timers without zones are not relevant.",
    ),
    _topic(
        4, "subprocess timeout",
        "How do I run an external command and stop waiting for it after a number of seconds?",
        "A relevant document describes running a child process with a timeout or the exception raised when "
        "the timeout expires. Documents about running commands without any timeout, or timeouts of sockets "
        "or threads, are not relevant.",
    ),
    _topic(
        5, "serialize object to JSON",
        "How do I convert a Python object such as a dict into a JSON string or write it to a file?",
        "A relevant document describes encoding Python objects as JSON text (dump, dumps, the encoder and "
        "how to extend it for custom types). Documents that only decode JSON, or serialise to other "
        "formats (pickle, marshal, plist), are not relevant.",
    ),
    _topic(
        6, "regular expression match string",
        "How do I check whether a string matches a regular expression pattern and get the matched groups?",
        "A relevant document describes matching or searching text with a regular expression, compiling "
        "a pattern, or reading groups from a match object. Documents about shell-style wildcards (fnmatch, "
        "glob) or plain substring search are not relevant.",
    ),
    _topic(
        7, "create temporary file",
        "How can I create a temporary file or directory that is removed automatically?",
        "A relevant document describes creating temporary files or directories safely (with a unique "
        "name, deleted when closed). Documents that only return the temporary directory's name or the "
        "prefix used are marginally relevant at best; documents about ordinary files are not relevant.",
    ),
    _topic(
        8, "thread pool run tasks concurrently",
        "How do I run many function calls in parallel on a pool of worker threads and collect the results?",
        "A relevant document describes a pool of workers (threads or processes) that executes submitted "
        "calls, mapping a function over inputs, or waiting for the futures it returns. Documents about "
        "starting one thread by hand or about locks only are not relevant.",
    ),
    _topic(
        9, "compute file checksum",
        "How do I compute the SHA-256 (or another hash or CRC) checksum of a file's contents?",
        "A relevant document describes computing a message digest or checksum of data or of a file: hash "
        "object constructors (sha256, md5, new), feeding data and reading the (hex) digest, CRC-32 or "
        "Adler-32 checksums. Keyed digests (HMAC) are marginally relevant. Documents about hash() of "
        "Python objects, hash tables or password prompts are not relevant.",
    ),
    _topic(
        10, "read CSV file",
        "How do I read rows from a comma-separated values file, handling quoting and different dialects?",
        "A relevant document describes reading CSV data: a reader object, dialects, sniffing a file's "
        "format, the csv module itself. Documents about writing CSV only, or about other tabular formats, "
        "are not relevant.",
    ),
    _topic(
        11, "parse URL query string",
        "How do I split a URL into scheme, host, path and query, and decode its query parameters?",
        "A relevant document describes splitting a URL into components or parsing a query string into "
        "parameters. Documents about fetching URLs over the network, or only about quoting special "
        "characters, are not relevant.",
    ),
    _topic(
        12, "log messages to a file",
        "How do I configure logging so that messages are written to a log file, possibly rotated?",
        "A relevant document describes sending log records to a file: file handlers, rotating handlers, "
        "basic configuration with a filename. Documents about logging to the console, e-mail or sockets "
        "only are not relevant.",
    ),
    _topic(
        13, "copy directory tree",
        "How do I recursively copy a whole directory with all its files and subdirectories?",
        "A relevant document describes copying a directory tree recursively, or copying files together with "
        "their metadata as part of it. Documents about moving, deleting or listing directories are not "
        "relevant.",
    ),
    _topic(
        14, "measure execution time",
        "How do I measure how long a piece of Python code takes to run?",
        "A relevant document describes timing code: benchmarking small snippets, high-resolution "
        "performance counters, or profiling where time is spent. Documents about the current date, "
        "sleeping or timeouts are not relevant.",
    ),
    _topic(
        15, "sort list by key function",
        "How do I sort a list of records by one of their fields or by a custom key?",
        "A relevant document describes sorting with a key function or a comparison, or building key "
        "functions that pick an item or attribute. Documents about ordering in heaps or bisection only are "
        "marginally relevant; documents about sort order of locales are not relevant.",
    ),
    _topic(
        16, "priority queue",
        "How do I keep a collection where I can always take out the smallest (highest-priority) item first?",
        "A relevant document describes a priority queue or heap: pushing items and popping the smallest, "
        "heap invariants, thread-safe or asyncio priority queues. Documents about FIFO or LIFO queues only, "
        "or about process scheduling priorities, are not relevant.",
    ),
    _topic(
        17, "decimal money rounding",
        "How do I do exact decimal arithmetic for money and round amounts to two decimal places?",
        "A relevant document describes decimal fixed-point arithmetic or rounding a Decimal to a given "
        "exponent or precision (quantize, contexts, rounding modes). Rounding a Decimal to an integer is "
        "marginally relevant. Documents about binary floats, fractions or integer division only are not "
        "relevant.",
    ),
    _topic(
        18, "random sample from list",
        "How do I pick random elements from a sequence, with or without replacement?",
        "A relevant document describes choosing random elements from a population: one element, a sample "
        "without replacement, weighted choices with replacement, shuffling. Documents about random numbers "
        "from distributions only are not relevant.",
    ),
    _topic(
        19, "create zip archive",
        "How do I write several files into a new ZIP archive?",
        "A relevant document describes creating or writing ZIP archives (opening one for writing, adding "
        "files or data to it, making an archive of a directory). Documents about reading or extracting "
        "archives only, or about tar files, are not relevant.",
    ),
    _topic(
        20, "environment variables",
        "How do I read, set or remove environment variables, and pass them to a child process?",
        "A relevant document describes getting or changing the process environment, or passing an "
        "environment to a child process. Documents about virtual environments, WSGI environ dictionaries "
        "or Python's own configuration are not relevant.",
    ),
    _topic(
        21, "dataclass default values",
        "How do I declare a data class whose fields have default values or default factories?",
        "A relevant document describes data classes: the decorator, declaring fields with defaults or "
        "default factories, inspecting fields. Documents about named tuples or ordinary classes are not "
        "relevant.",
    ),
    _topic(
        22, "count occurrences of items",
        "How do I count how many times each distinct item occurs in a list and find the most common ones?",
        "A relevant document describes counting hashable items (a counter, most common elements, "
        "multiset operations). Documents that count the occurrences of a single value in a sequence are "
        "marginally relevant; documents about reference counts or bit counts are not relevant.",
    ),
    _topic(
        23, "send email SMTP",
        "How do I send an e-mail message through an SMTP server, with login and TLS?",
        "A relevant document describes sending mail via SMTP: connecting, logging in, starting TLS, "
        "sending a message. Documents about reading mailboxes (IMAP, POP3, mbox) or parsing e-mail only "
        "are not relevant.",
    ),
    _topic(
        24, "find files matching pattern",
        "How do I list all files in a directory tree whose names match a wildcard pattern like *.txt?",
        "A relevant document describes finding files by a shell-style pattern (glob, recursive glob, "
        "fnmatch) or walking a directory tree. Documents about regular expressions, structural pattern "
        "matching or reading file contents are not relevant.",
    ),
    _topic(
        25, "fetch URL over HTTP",
        "How do I download the content of a web page, given its URL, over HTTP or HTTPS?",
        "A relevant document describes opening a URL or sending an HTTP request and reading the response "
        "body as a client. Documents about writing HTTP servers, or only about parsing URLs, are not "
        "relevant.",
    ),
    _topic(
        26, "compare two texts differences",
        "How do I compute and display the differences between two texts or two lists of lines?",
        "A relevant document describes computing differences or similarity between sequences of lines or "
        "strings (unified or context diffs, side-by-side HTML, close matches). Documents about comparing "
        "files or directories for equality only are marginally relevant; set differences are not relevant.",
    ),
    _topic(
        27, "cache function results",
        "How do I memoize a function so that repeated calls with the same arguments are not recomputed?",
        "A relevant document describes caching the results of function or method calls (memoization, LRU "
        "caches, cached properties) or clearing such a cache. Documents about caches of other things (line "
        "caches, import caches, DNS) are not relevant.",
    ),
    _topic(
        28, "SQLite database query",
        "How do I connect to an SQLite database file and run SQL queries from Python?",
        "A relevant document describes using an SQLite database from Python: connecting, executing "
        "statements, fetching rows, committing. Documents about other storage (shelve, dbm, pickle) are "
        "not relevant.",
    ),
    _topic(
        29, "generate unique ID",
        "How do I generate a unique ID or an unguessable random token, for example for a session?",
        "A relevant document describes generating universally unique identifiers or secure random tokens. "
        "Documents about object identity (id()), thread or process ids, or non-cryptographic random "
        "numbers are not relevant.",
    ),
    _topic(
        30, "run coroutines concurrently asyncio",
        "How do I start several asyncio coroutines at the same time and wait until all of them finish?",
        "A relevant document describes running coroutines concurrently and waiting for them: creating "
        "tasks, gathering, waiting with or without a timeout, the event loop entry point. Documents about "
        "threads or synchronous code only are not relevant.",
    ),
]

# Documents the topic author read and judged relevant (a seed, not every relevant document).
ANSWER_KEY: Final[dict[str, tuple[str, ...]]] = {
    "1": ("argparse", "argparse.ArgumentParser", "argparse.ArgumentParser.add_argument", "argparse.Action",
          "getopt", "getopt.getopt", "getopt.gnu_getopt", "optparse.OptionParser",
          "optparse.OptionParser.parse_args"),
    "2": ("gzip", "gzip.open", "gzip.GzipFile", "gzip.decompress"),
    "3": ("datetime.datetime.astimezone", "datetime.timezone", "datetime.timezone.fromutc", "datetime.tzinfo",
          "datetime.tzinfo.utcoffset", "zoneinfo.ZoneInfo.utcoffset", "zoneinfo.ZoneInfo.fromutc",
          "zoneinfo.available_timezones"),
    "4": ("subprocess.run", "subprocess.call", "subprocess.TimeoutExpired", "subprocess.Popen.communicate",
          "subprocess.Popen.wait", "subprocess.check_output"),
    "5": ("json", "json.dumps", "json.dump", "json.JSONEncoder", "json.JSONEncoder.default",
          "json.JSONEncoder.encode", "json.JSONEncoder.iterencode"),
    "6": ("re", "re.match", "re.search", "re.fullmatch", "re.compile", "re.findall", "re.finditer",
          "re.Match.group"),
    "7": ("tempfile", "tempfile.NamedTemporaryFile", "tempfile.TemporaryFile", "tempfile.TemporaryDirectory",
          "tempfile.SpooledTemporaryFile", "tempfile.mkstemp", "tempfile.mkdtemp"),
    "8": ("concurrent.futures", "concurrent.futures.ThreadPoolExecutor", "concurrent.futures.ProcessPoolExecutor",
          "concurrent.futures.Executor.submit", "concurrent.futures.Executor.map",
          "concurrent.futures.as_completed", "concurrent.futures.wait"),
    "9": ("hashlib", "hashlib.new", "hashlib.sha256", "hashlib.md5", "hashlib.file_digest",
          "hashlib.blake2b.hexdigest", "zlib.crc32", "zlib.adler32"),
    "10": ("csv", "csv.reader", "csv.Sniffer", "csv.Sniffer.sniff", "csv.Dialect", "csv.excel"),
    "11": ("urllib.parse.urlparse", "urllib.parse.urlsplit", "urllib.parse.parse_qs", "urllib.parse.parse_qsl"),
    "12": ("logging.FileHandler", "logging.basicConfig", "logging.handlers.BaseRotatingHandler",
           "logging.handlers.RotatingFileHandler", "logging.handlers.TimedRotatingFileHandler",
           "logging.handlers.WatchedFileHandler"),
    "13": ("shutil", "shutil.copytree", "shutil.copy2", "shutil.ignore_patterns"),
    "14": ("timeit", "timeit.timeit", "timeit.repeat", "timeit.Timer", "timeit.Timer.timeit", "timeit.Timer.repeat",
           "time.perf_counter_ns", "cProfile", "cProfile.Profile"),
    "15": ("sorted", "list.sort", "operator.itemgetter", "operator.attrgetter", "functools.cmp_to_key"),
    "16": ("heapq", "heapq.heappush", "heapq.heappop", "heapq.heapify", "queue.PriorityQueue",
           "asyncio.PriorityQueue"),
    "17": ("decimal.Decimal", "decimal.Decimal.quantize", "decimal.Context.quantize", "decimal.localcontext"),
    "18": ("random.sample", "random.choice", "random.choices", "random.shuffle"),
    "19": ("zipfile", "zipfile.ZipFile", "zipfile.ZipFile.write", "zipfile.ZipFile.writestr",
           "shutil.make_archive"),
    "20": ("os.getenv", "os.getenvb", "os.putenv", "subprocess.Popen"),
    "21": ("dataclasses.dataclass", "dataclasses.field", "dataclasses.fields", "dataclasses.make_dataclass"),
    "22": ("collections.Counter", "collections.Counter.most_common", "collections.Counter.update"),
    "23": ("smtplib", "smtplib.SMTP", "smtplib.SMTP.send_message", "smtplib.SMTP.sendmail", "smtplib.SMTP.login",
           "smtplib.SMTP.starttls"),
    "24": ("glob.glob", "glob.iglob", "pathlib.Path.glob", "pathlib.Path.rglob", "fnmatch.fnmatch",
           "fnmatch.filter", "os.walk"),
    "25": ("urllib.request", "urllib.request.urlopen", "http.client.HTTPConnection.request",
           "http.client.HTTPConnection.getresponse", "http.client.HTTPResponse.read"),
    "26": ("difflib", "difflib.Differ", "difflib.Differ.compare", "difflib.unified_diff", "difflib.context_diff",
           "difflib.ndiff", "difflib.SequenceMatcher", "difflib.HtmlDiff", "difflib.get_close_matches"),
    "27": ("functools.lru_cache", "functools.cache"),
    "28": ("sqlite3", "sqlite3.connect", "sqlite3.Cursor.fetchall", "sqlite3.Connection.commit",
           "sqlite3.Connection.executescript"),
    "29": ("uuid", "uuid.UUID", "uuid.uuid1", "secrets", "secrets.token_bytes", "secrets.token_hex",
           "secrets.token_urlsafe"),
    "30": ("asyncio.gather", "asyncio.wait", "asyncio.wait_for", "asyncio.create_task", "asyncio.ensure_future",
           "asyncio.as_completed", "asyncio.run"),
}
