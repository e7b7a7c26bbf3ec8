"""The fixed list of standard-library modules whose docstrings make the demo documents.

Chosen to be commonly used, importable on a stock Linux CPython 3.11 (including Debian's split packages:
no tkinter, curses, readline, dbm or idlelib) and silent on import (no ``this``, ``antigravity``,
``test.*``). Order matters: it is the document order, and a docstring seen twice is kept only the first
time, so keep the list as it is and append new modules at the end.
"""

from __future__ import annotations

MODULES: tuple[str, ...] = tuple(
    """
    builtins abc argparse array ast asyncio base64 binascii bisect bz2 calendar cmath cmd code codecs
    collections collections.abc colorsys compileall concurrent.futures configparser contextlib contextvars
    copy copyreg csv ctypes dataclasses datetime decimal difflib dis doctest email email.message
    email.parser email.utils enum errno filecmp fileinput fnmatch fractions ftplib functools gc getopt
    getpass gettext glob graphlib gzip hashlib heapq hmac html html.parser http http.client http.cookies
    http.server imaplib importlib importlib.metadata importlib.resources inspect io ipaddress itertools json
    keyword linecache locale logging logging.config logging.handlers lzma mailbox math mimetypes
    multiprocessing numbers operator os os.path pathlib pdb pickle pickletools pkgutil platform plistlib
    poplib pprint profile pstats queue quopri random re reprlib sched secrets selectors shelve shlex shutil
    signal smtplib socket socketserver sqlite3 ssl stat statistics string stringprep struct subprocess
    symtable sys tabnanny tarfile tempfile textwrap threading time timeit token tokenize tomllib trace
    traceback tracemalloc types typing unicodedata unittest unittest.mock urllib.error urllib.parse
    urllib.request urllib.robotparser uuid warnings wave weakref webbrowser wsgiref.simple_server
    wsgiref.util xml.dom.minidom xml.etree.ElementTree xml.sax xmlrpc.client zipapp zipfile zipimport zlib
    zoneinfo
    atexit bdb cProfile codeop email.charset email.generator email.header email.headerregistry email.policy
    ensurepip faulthandler http.cookiejar marshal mmap modulefinder netrc optparse py_compile pyclbr runpy
    select urllib.response venv wsgiref.handlers wsgiref.validate xml.sax.handler xml.sax.saxutils
    """.split()
)

# A small subset for fast tests: enough for the JSON, CSV, gzip and subprocess topics to have answers.
SMALL_MODULES: tuple[str, ...] = (
    "argparse", "csv", "datetime", "gzip", "heapq", "json", "random", "re", "shutil", "subprocess",
    "tempfile", "zipfile",
)
