"""What a process does when Lambda SnapStart resumes it from a snapshot.

Every environment restored from one snapshot starts with the same memory: the same state of Python's
`random`, and whatever connections were open when the snapshot was taken (their peers long gone).
`after_restore()` reseeds `random` from the operating system and runs what each holder of a
connection registered with `on_restore` (the DynamoDB clients drop theirs and make new ones on next
use). The init opens no connection on purpose, so a snapshot holds none to begin with; this is for
whatever changed that. Tokens, ids and salts come from `secrets`/`os.urandom`, which a restore does
not repeat.

Who calls it: under the Python runtime, its SnapStart hook (`snapshot_restore_py`, present in the
managed runtime); under the Lambda Web Adapter, the adapter's after-restore request to the chat app
(AWS_LWA_SNAPSTART_AFTER_RESTORE_PATH in template.yaml).
"""
from __future__ import annotations

import logging
import random
import threading
import weakref
from typing import Callable

log = logging.getLogger("groundchat.lifecycle")

_CALLBACKS: "weakref.WeakSet[_Callback]" = weakref.WeakSet()
_STRONG: list[Callable[[], None]] = []
_LOCK = threading.Lock()
_restores = 0


class _Callback:
    def __init__(self, fn: Callable[[], None]) -> None:
        self.fn = fn


def on_restore(fn: Callable[[], None], *, owner: object | None = None) -> None:
    """Run `fn` after a restore. With `owner`, only while the owner lives (a store's clients go
    with the store), so registering never keeps an object alive."""
    with _LOCK:
        if owner is None:
            _STRONG.append(fn)
            return
        callback = _Callback(fn)
        _CALLBACKS.add(callback)
        # The owner keeps its callback alive; when the owner goes, the weak set forgets it.
        holders = owner.__dict__.setdefault("_restore_callbacks", [])
        holders.append(callback)


def after_restore() -> int:
    """Reseeds `random` and runs every registered callback; returns how many ran. A callback that
    fails is logged and the others still run: a restore serves traffic right after."""
    global _restores
    random.seed()  # from os.urandom: each restored environment draws its own sequence
    with _LOCK:
        callbacks = [*_STRONG, *(c.fn for c in list(_CALLBACKS))]
        _restores += 1
    ran = 0
    for fn in callbacks:
        try:
            fn()
            ran += 1
        except Exception:  # noqa: BLE001 (one holder's failure must not keep the others stale)
            log.exception("after-restore callback %r failed", fn)
    log.info("after restore: random reseeded, %d connection holders reset", ran)
    return ran


def restores() -> int:
    """How many restores this process has seen (the status page and the tests read it)."""
    return _restores


def register_with_python_runtime() -> bool:
    """Registers `after_restore` with the managed Python runtime's SnapStart hooks, where they exist
    (not locally, not under the Web Adapter, whose process is not the runtime's)."""
    try:
        from snapshot_restore_py import register_after_restore  # type: ignore[import-not-found]
    except ImportError:
        return False
    register_after_restore(after_restore)
    return True
