"""A service built when it is first reached for, then kept: what a tool's context holds where
building the service costs something a request may never need (the search index loads a model,
the rule table reads its data). Typed as what it builds, so a reader of `get()` is checked."""
from __future__ import annotations

from typing import Callable, Generic, TypeVar

T = TypeVar("T")


class Lazy(Generic[T]):
    def __init__(self, build: Callable[[], T]) -> None:
        self._build = build
        self._built: tuple[T] | None = None  # a 1-tuple once built: a service may itself be falsy

    def get(self) -> T:
        if self._built is None:
            self._built = (self._build(),)
        return self._built[0]


def resolved(value: T | Lazy[T] | None) -> T | None:
    """The service itself: built now if it was given as a `Lazy`; None where it is absent."""
    if isinstance(value, Lazy):
        # T may itself be a Lazy, so the checker cannot rule out Lazy[Unknown] here; it is this Lazy[T].
        return value.get()  # pyright: ignore[reportUnknownVariableType]
    return value
