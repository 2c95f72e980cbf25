"""Which of the data's names a question means, however it spells them.

People do not type `signup-form` or `atlas-small`: they write "sign up form", "atlas small", "the
checkout", "cedar", "the big atlas model". The names come from the data (its models, contexts, tasks
and labels, whatever they are), so nothing here lists them; what is fixed is how a name may be
written:

- whole, with its parts joined by hyphens, spaces or nothing ("sign up form", "signup form",
  "round 2"), and in the plural ("product grids"); a number in it as a word ("round two") or as an
  ordinal before the rest ("the 2nd round", "the second round");
- by one of its parts that no other name has ("cedar" for `cedar-mini`, "checkout" for
  `checkout-flow`), unless that part is an everyday word in questions about the benchmark
  ("axe", "form", "small", "code");
- by a shared part with a word that tells the names apart ("big atlas" for `atlas-large`, since
  "big" says "large");
- by an everyday part followed by a word that makes it a name ("the axe one", "the axe context");
- a name of two parts by its parts joined by a word that adds one to the other, in either order
  ("guidelines plus the axe results", "axe + guidelines", "the guidelines and can run axe" for
  `guidelines-axe`);
- a round by its short forms ("r3", "rd 2" for `round-3`, `round-2`).

A facet with two names in one question pins neither: the question compares them.
"""
from __future__ import annotations

import re
from functools import lru_cache

Facets = dict[str, list[str]]

# Parts of names that are everyday words here: alone they name nothing.
EVERYDAY_PARTS = frozenset({
    "axe", "rule", "rules", "form", "forms", "page", "pages", "data", "article", "header", "grid", "table",
    "flow", "code", "pro", "mini", "small", "large", "big", "dialog", "round", "none", "product", "products",
    "pricing", "price", "guidelines", "context", "model", "task", "label", "run", "runs", "test", "base", "max",
    "plus", "lite", "fast", "new", "old", "one", "two", "three", "all", "the", "and", "with", "v1", "v2",
})
# Words that say which of two names sharing a part is meant.
_SAYS = {"big": "large", "bigger": "large", "biggest": "large", "larger": "large", "little": "small",
         "smaller": "small", "smallest": "small", "tiny": "mini"}
# After an everyday part, these make it a name: "the axe one", "the modal task".
_NAME_NOUNS = frozenset({"one", "context", "level", "tool", "variant", "version", "setting", "model", "task"})

_WORD = re.compile(r"[a-z0-9]+(?:\.[0-9]+)*")
# A number in a name as people write it: "round two", "the 2nd round", "the second round".
_CARDINALS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
_SUFFIXES = {1: "st", 2: "nd", 3: "rd"}  # then "th"
_ORDINAL = {**{w: str(i) for i, w in enumerate(_ORDINALS, 1)},
            **{f"{i}{_SUFFIXES.get(i, 'th')}": str(i) for i in range(1, 11)}}
_NUMBER = {**{w: str(i) for i, w in enumerate(_CARDINALS, 1)}, **_ORDINAL}
# Short forms of a word in a name, with the number after it: "r3", "rd 2", "rnd. 1" for a round.
_SHORT = {"r": "round", "rd": "round", "rnd": "round"}
_SHORT_WITH_NUMBER = re.compile(r"^(r|rd|rnd)(\d{1,3})$")
# Words that join a name's two parts when written apart: "guidelines plus the axe results",
# "guidelines and can run axe", "axe + guidelines" ("+" and "&" are not words, so nothing is
# between). At most _JOINED_GAP of them, and at least one that adds ("and", "plus", "with").
_JOINERS = frozenset({"and", "plus", "with", "together", "also", "the", "a", "an", "its", "their", "can", "may", "run",
                      "runs", "running", "use", "uses", "using", "results", "tool", "checker", "checks", "on", "top", "of"})
_ADDS = frozenset({"and", "plus", "with", "together", "also"})
_JOINED_GAP = 4


def parts(name: str) -> list[str]:
    return _WORD.findall(name.lower())


def _joined(name: str) -> str:
    return "".join(parts(name))


def find_names(question: str, names: list[str], all_names: list[str] | None = None, *,
               whole_only: bool = False) -> list[str]:
    """The names of one facet a question means, in the order it mentions them. `all_names` (every
    facet's names) decides which parts are unique; by default, this facet's. `whole_only`: only
    names written whole, however joined."""
    tokens = _WORD.findall(question.lower())
    found: dict[str, int] = {}
    taken: set[int] = set()

    def take(name: str, start: int, end: int) -> None:
        if not taken & set(range(start, end)):
            taken.update(range(start, end))
            found.setdefault(name, start)

    # Whole names first, longest first, so "guidelines axe" is not read as "guidelines". One pass
    # over the question's word windows, looked up by their joined spelling ("sign up form" ->
    # "signupform"); a name may be written in one word more than it has parts.
    by_joined: dict[str, list[str]] = {}
    for name in names:
        by_joined.setdefault(_joined(name), []).append(name)
    widest = max((len(parts(n)) for n in names), default=0) + 1
    matches = [(name, start, start + size) for start in range(len(tokens))
               for size in range(1, min(widest, len(tokens) - start) + 1)
               for written in _written(tokens[start:start + size])
               for name in _spelled(by_joined, written)]
    matches += _joined_apart(tokens, names)
    for name, start, end in sorted(matches, key=lambda m: (-len(parts(m[0])), m[1])):
        take(name, start, end)
    if whole_only:
        return sorted(found, key=found.__getitem__)
    part_owners = _part_owners(tuple(all_names or names))
    wanted = set(names)
    for i, token in enumerate(tokens):
        if i in taken:
            continue
        word = _singular(part_owners, token)
        owners = [n for n in part_owners.get(word, ()) if n in wanted]
        if len(owners) == 1 and (word not in EVERYDAY_PARTS or _named_by_noun(tokens, i)):
            take(owners[0], i, i + 1)
        elif len(owners) > 1:
            told = _told_apart(tokens, i, owners)
            if told:
                take(told, i, i + 1)
    return sorted(found, key=found.__getitem__)


def _joined_apart(tokens: list[str], names: list[str]) -> list[tuple[str, int, int]]:
    """Names of two parts written apart, their parts joined by words that add one to the other
    ("guidelines plus the axe results"), in either order; nothing but joiners between."""
    found = []
    for name in names:
        name_parts = parts(name)
        if len(name_parts) != 2 or name_parts[0] == name_parts[1]:
            continue
        for i, token in enumerate(tokens):
            if token not in name_parts:
                continue
            other = name_parts[1] if token == name_parts[0] else name_parts[0]
            for j in range(i + 1, min(len(tokens), i + _JOINED_GAP + 2)):
                if tokens[j] == other:
                    between = tokens[i + 1:j]
                    if all(w in _JOINERS for w in between) and (not between or _ADDS & set(between)):
                        found.append((name, i, j + 1))
                    break
                if tokens[j] not in _JOINERS:
                    break
    return found


def _written(window: list[str]) -> list[str]:
    """The ways a window of words may spell a name, joined: as written, with its numbers as digits
    ("round two" -> "round2") and, for an ordinal and one word, the other way round ("2nd round")."""
    out = ["".join(window)]
    short = [_SHORT_WITH_NUMBER.match(w) for w in window]
    if any(short):
        out.append("".join(_SHORT[m.group(1)] + m.group(2) if m else w for m, w in zip(short, window)))
    if len(window) == 2 and window[0] in _SHORT and window[1].isdigit():
        out.append(_SHORT[window[0]] + window[1])
    if any(w in _NUMBER for w in window):
        out.append("".join(_NUMBER.get(w, w) for w in window))
        if len(window) == 2 and window[0] in _ORDINAL:
            out.append(window[1] + _ORDINAL[window[0]])
    return out


def _singular(spellings: dict[str, list[str]], written: str) -> str:
    """`written` as the data spells it: itself, or for a plural its singular ("product grids", "the
    modals"), so that an everyday part stays everyday in the plural too ("tables", "headers")."""
    if written not in spellings and len(written) > 3 and written.endswith("s") and written[:-1] in spellings:
        return written[:-1]
    return written


def _spelled(spellings: dict[str, list[str]], written: str) -> list[str]:
    return spellings.get(_singular(spellings, written), [])


@lru_cache(maxsize=32)
def _part_owners(names: tuple[str, ...]) -> dict[str, list[str]]:
    """Which names each part belongs to (cached: the names change only when the data does)."""
    owners: dict[str, list[str]] = {}
    for name in names:
        for part in dict.fromkeys(parts(name)):
            if len(part) >= 3 and not part.isdigit():
                owners.setdefault(part, []).append(name)
    return owners


def _named_by_noun(tokens: list[str], i: int) -> bool:
    return i + 1 < len(tokens) and tokens[i + 1] in _NAME_NOUNS


def _told_apart(tokens: list[str], i: int, owners: list[str]) -> str | None:
    """A shared part ("atlas") with a nearby word that only one of its owners has ("large", "big")."""
    near = tokens[max(0, i - 3):i] + tokens[i + 1:i + 4]
    said = {_SAYS.get(w, w) for w in near}
    chosen = [n for n in owners if said & (set(parts(n)) - {tokens[i]})]
    return chosen[0] if len(chosen) == 1 else None


def pinned(question: str, facets: Facets) -> dict[str, str]:
    """One name per facet, where the question means exactly one."""
    every = [n for values in facets.values() for n in values]
    out: dict[str, str] = {}
    for facet, values in facets.items():
        found = find_names(question, values, every)
        if len(found) == 1:
            out[facet] = found[0]
    return out


__all__ = ["EVERYDAY_PARTS", "find_names", "parts", "pinned"]
