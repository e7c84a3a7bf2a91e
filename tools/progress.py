"""Progress for the project's long commands (`./dev bench`, `./dev fuzz`, the runtime download).

On a terminal: a `rich` progress bar on stderr, with log lines printed above it.
Not on a terminal (CI, pipes, tests): no bar and no escape codes; log lines still go
to stderr as plain text. `rich` is in requirements-dev.txt; without it the commands
behave as if stderr were not a terminal.

    with Progress() as progress:
        task = progress.add("start-up rounds", total=5)
        ...
        progress.advance(task)
        progress.log("round 1: ...")

(`./dev wpt` has its own bar with pass counts: wpt_runner/cli.py.)
"""
from __future__ import annotations

import sys


def _rich_bar(stream, bytes_: bool):
    if not stream.isatty():
        return None
    try:
        from rich.console import Console
        from rich.progress import (BarColumn, DownloadColumn, MofNCompleteColumn, Progress as Bar,
                                   SpinnerColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn,
                                   TransferSpeedColumn)
    except ImportError:
        return None
    count = [DownloadColumn(), TransferSpeedColumn()] if bytes_ else [MofNCompleteColumn()]
    return Bar(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), *count,
               TimeElapsedColumn(), TimeRemainingColumn(), console=Console(file=stream), transient=True)


class Progress:
    """A bar per task on a terminal; plain log lines everywhere. `bytes_=True` counts bytes
    (downloads: size and speed columns) instead of steps."""

    def __init__(self, stream=None, bytes_: bool = False, prefix: str = ""):
        self.stream = stream if stream is not None else sys.stderr
        self.prefix = prefix
        self.bar = _rich_bar(self.stream, bytes_)

    @property
    def active(self) -> bool:
        """True when a bar is drawn (stderr is a terminal and rich is installed)."""
        return self.bar is not None

    def __enter__(self):
        if self.bar:
            self.bar.start()
        return self

    def __exit__(self, *exc):
        if self.bar:
            self.bar.stop()

    def add(self, description: str, total: float | None = None):
        """A task; `total=None` is an indeterminate one (a spinner: e.g. a pip download)."""
        return self.bar.add_task(description, total=total) if self.bar else None

    def advance(self, task, amount: float = 1) -> None:
        if self.bar and task is not None:
            self.bar.update(task, advance=amount)

    def update(self, task, **fields) -> None:
        """rich's update: completed=, total=, description=."""
        if self.bar and task is not None:
            self.bar.update(task, **fields)

    def done(self, task) -> None:
        if self.bar and task is not None:
            self.bar.remove_task(task)

    def log(self, message: str) -> None:
        """A line above the bar on a terminal, a plain stderr line otherwise."""
        text = f"{self.prefix}{message}"
        if self.bar:
            self.bar.console.print(text, markup=False, highlight=False)
        else:
            print(text, file=self.stream, flush=True)
