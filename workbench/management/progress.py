"""How far a command is, shown one way by every command that runs a job's work: a bar (tqdm, on standard error)
when the output is a terminal, else a line on standard output each time another tenth of the work is done (or,
when the total is unknown, every ``EVERY`` seconds); the command ends with one line of what it did."""

from __future__ import annotations

import time

__all__ = ["EVERY", "Shown"]

#: seconds between two lines when the total is not known
EVERY = 10.0


class Shown:
    """Progress of ``total`` units (None: unknown). ``update(n)`` adds n done (a service's ``progress`` callback);
    ``report(line, done, total)`` says where it is, in words (a job's ``watch``)."""

    def __init__(self, command, total: int | None, unit: str, desc: str) -> None:
        self.command, self.total, self.unit, self.desc = command, total, unit, desc
        self.terminal = command.stdout.isatty()
        self.done, self.tenth, self.bar, self.said = 0, 0, None, time.monotonic()

    def __enter__(self) -> Shown:
        return self

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.close()

    def update(self, n: int = 1) -> None:
        self.report("", self.done + n, self.total)

    def report(self, line: str, done: int, total: int | None = None) -> None:
        self.done, self.total = done, total if total is not None else self.total
        if self.terminal:
            self._bar()
            return
        line = line or (f"{self.desc}: {done:,} of {self.total:,} {self.unit}s" if self.total
                        else f"{self.desc}: {done:,} {self.unit}s")
        if self.total:
            tenth = 10 * min(done, self.total) // self.total
            if tenth > self.tenth:
                self.tenth = tenth
                self.command.stdout.write(f"{100 * min(done, self.total) // self.total}% {line}")
        elif time.monotonic() - self.said >= EVERY:
            self.said = time.monotonic()
            self.command.stdout.write(line)

    def _bar(self) -> None:
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=self.total, unit=self.unit, desc=self.desc, leave=False)
        if self.total is not None and self.bar.total != self.total:
            self.bar.total = self.total
        self.bar.update(self.done - self.bar.n)
