"""Compacting the local stack's state log while it serves, off the request path.

Every DynamoDB request takes one lock (`dynamodb_log.REQUEST_LOCK`); a compaction that read
moto's state and wrote the new file under it froze every request, `/healthz` included, for as long
as the state is large (8-17 s with the sample's data). Here the lock is taken twice, briefly:

1. to note where the log ends (`upto`, a record boundary: every append happens under the lock);
2. after the snapshot is built, to copy the records appended since `upto` behind it, and swap
   the files (an atomic rename), then append to the new one.

In between, with the lock free, another process replays the log's first `upto` bytes into its own
moto and writes the snapshot of that state to its standard output, which is written to
`<log>.compacting` and fsync'd. A separate process, not a thread: the snapshot is of the log, not
of the live state, so nothing the server holds is read or copied while it serves, and its work
does not take the server's interpreter lock. snapshot(state at upto) + the records after upto
replays to the state the server holds at the swap, so nothing is lost.

Crash-safe at every point (kill -9): until the rename the log is whole and untouched, and the
partial `.compacting` file is removed at the next start (`discard_leftovers`); the rename is
atomic; the tail is copied under the lock, so no acknowledged write falls between the copy and the
swap. A builder that outlives a killed server dies on its next write to the closed pipe, having
written no file of its own.

    python -m groundchat_cli.log_compaction LOG UPTO   (the builder: the snapshot on stdout)
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Callable

from groundchat_cli import dynamodb_log

SUFFIX = ".compacting"
_CHUNK = 1 << 20

# (log path, upto, file to write) -> records written to it, fsync'd.
Builder = Callable[[Path, int, Path], int]


class CompactionFailed(Exception):
    """The snapshot could not be built; the log is as it was (the next sweep tries again)."""


def compacting_path(log_path: Path) -> Path:
    return Path(log_path).with_name(Path(log_path).name + SUFFIX)


def discard_leftovers(log_path: Path) -> None:
    """A compaction's file left by a process killed before its rename: never the state."""
    compacting_path(log_path).unlink(missing_ok=True)


def build_in_subprocess(log_path: Path, upto: int, out: Path) -> int:
    """Run the builder in another Python process; its output, written to `out` and fsync'd."""
    command = [sys.executable, "-m", "groundchat_cli.log_compaction", str(log_path), str(upto)]
    records = 0
    with open(out, "wb") as f, subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as child:
        assert child.stdout is not None and child.stderr is not None
        for line in child.stdout:
            f.write(line)
            records += 1
        error = child.stderr.read().decode("utf-8", "replace")
        if child.wait() != 0:
            raise CompactionFailed(f"the snapshot builder exited with {child.returncode}: {error.strip()[-2000:]}")
        f.flush()
        os.fsync(f.fileno())
    return records


def compact_live(log: dynamodb_log.WriteLog, build: Builder = build_in_subprocess) -> int | None:
    """Rewrite the open log as a snapshot of its state, requests going on meanwhile. The records
    the new log holds, or None when the log is closed or broken (nothing done)."""
    with log.compaction:
        with dynamodb_log.REQUEST_LOCK:
            if log.closed or log.broken:
                return None
            upto, forgotten = log.offset(), log.forgotten
        out = compacting_path(log.path)
        try:
            records = build(log.path, upto, out)
            with dynamodb_log.REQUEST_LOCK:
                if log.closed:
                    return None
                records += _append_tail(log.path, upto, out)
                os.replace(out, log.path)
                dynamodb_log.fsync_dir(log.path.parent)
                log.reopen()
                # Writes that forgot something after `upto` are still in the new log's tail.
                log.forgotten -= forgotten
            return records
        finally:
            out.unlink(missing_ok=True)


def _append_tail(log_path: Path, upto: int, out: Path) -> int:
    """The records appended after `upto`, copied behind the snapshot; how many."""
    lines = 0
    with open(log_path, "rb") as source, open(out, "ab") as target:
        source.seek(upto)
        while chunk := source.read(_CHUNK):
            target.write(chunk)
            lines += chunk.count(b"\n")
        target.flush()
        os.fsync(target.fileno())
    return lines


def write_snapshot(log_path: Path, upto: int, stream) -> None:
    """The builder's work: the state of the log's first `upto` bytes, as compacted records."""
    from groundchat_cli.moto_store import make_moto_faithful

    make_moto_faithful()  # the same moto the server replays into
    dynamodb_log.reset_moto_dynamodb()
    records = dynamodb_log.read_records(log_path, upto)
    replayed = dynamodb_log.replay(records)
    if replayed.failed:
        raise CompactionFailed(f"{replayed.failed} of {replayed.records} records did not replay")
    for record in dynamodb_log.snapshot(records):
        stream.write(dynamodb_log.encode(record))
    stream.flush()


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m groundchat_cli.log_compaction LOG UPTO", file=sys.stderr)
        return 2
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "local")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "local")
    write_snapshot(Path(argv[0]), int(argv[1]), sys.stdout.buffer)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
