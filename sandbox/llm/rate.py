"""Keeping to an endpoint's rate limits: requests and tokens per minute, and the server's `Retry-After`.

A `RateLimit` paces the calls to one endpoint with the generic cell rate algorithm (GCRA, the token bucket written
as a schedule): each limit is a rate of `per_minute / 60` a second and a burst of `burst_s` seconds' worth (none by
default: the calls go evenly spaced, so a server that counts by a bucket or a window of its own never sees them
come faster than its limit, whatever the network's jitter); a call reserves its place in the schedule (one request,
its estimated tokens) and sleeps until then. Reservations are
made under a thread lock, so one limit holds for every event loop and thread of the process; the calls go in the
order they asked. A call's tokens are estimated before it is sent (its prompt's characters / 4 and its
`max_tokens`, as providers count a request against a token limit) and corrected by the usage it reports.

When the server answers 429 anyway, `pause` holds every call to the endpoint until its `Retry-After` (seconds, or
an HTTP date: `retry_after_s`) has passed. `waiting()` says how many calls of the process wait for a limit now, for
the progress bar.
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["RateLimit", "estimate_tokens", "retry_after_s", "waiting"]

_waiting = [0]  # calls of this process asleep on a limit now
_waiting_lock = threading.Lock()


def waiting() -> int:
    """How many calls of this process wait for a rate limit now."""
    return _waiting[0]


def retry_after_s(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """The seconds a `Retry-After` header asks to wait (a number of seconds, or an HTTP date), None without one or
    with one that reads as neither; never below 0.

    >>> retry_after_s({"Retry-After": "2"})
    2.0
    >>> retry_after_s({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480.0)
    10.0
    >>> retry_after_s({}) is None, retry_after_s({"Retry-After": "soon"}) is None
    (True, True)
    """
    value = next((v for k, v in headers.items() if k.lower() == "retry-after"), None)
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    return max(0.0, seconds) if math.isfinite(seconds) else None


def estimate_tokens(payload: Mapping[str, object]) -> int:
    """A chat request's tokens before it is sent: its messages' characters / 4 (a common rule for English) and the
    output it may write (`max_tokens`, else 256).

    >>> estimate_tokens({"messages": [{"role": "user", "content": "x" * 400}], "max_tokens": 16})
    116
    """
    messages = payload.get("messages")
    chars = 0
    for message in messages if isinstance(messages, list) else []:
        if isinstance(message, Mapping):
            chars += len(str(message.get("content", "")))
    output = payload.get("max_tokens") or payload.get("max_completion_tokens") or 256
    return math.ceil(chars / 4) + (int(output) if isinstance(output, int | float | str) else 256)


@dataclass
class _Schedule:
    """GCRA for one limit: `rate` a second, a burst of `burst` units; `tat` the theoretical arrival time of the next
    unit (monotonic seconds)."""

    rate: float
    burst: float
    tat: float = 0.0

    def reserve(self, now: float, units: float, earliest: float) -> float:
        """When `units` may go (at least `earliest`); they are booked."""
        tolerance = max(self.burst - 1.0, 0.0) / self.rate  # the burst beyond the first unit, in seconds
        start = max(self.tat, now)
        at = max(start - tolerance, earliest)
        self.tat = max(start, at) + units / self.rate
        return at

    def settle(self, units: float) -> None:
        """Book `units` more (fewer, when negative) for a call already gone."""
        self.tat += units / self.rate


@dataclass
class RateLimit:
    """An endpoint's `requests_per_minute` and `tokens_per_minute` (None: no such limit), with bursts of
    `burst_s` seconds' worth (at least one unit: by default, none)."""

    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    burst_s: float = 0.0
    paused_until: float = 0.0  # monotonic: a 429's Retry-After holds every call until then
    waited_s: float = 0.0  # seconds calls have slept on this limit, summed
    rate_limited: int = 0  # 429 answers seen
    _requests: _Schedule | None = field(default=None, repr=False)
    _tokens: _Schedule | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _epoch: int = field(default=0, repr=False)

    def __post_init__(self) -> None:
        if self.requests_per_minute is not None:
            rate = self.requests_per_minute / 60
            self._requests = _Schedule(rate, max(1.0, rate * self.burst_s))
        if self.tokens_per_minute is not None:
            rate = self.tokens_per_minute / 60
            self._tokens = _Schedule(rate, max(1.0, rate * self.burst_s))

    @property
    def limited(self) -> bool:
        return self._requests is not None or self._tokens is not None

    def reserve(self, tokens: int, now: float | None = None) -> tuple[float, int]:
        """Book a call of `tokens` estimated tokens: the seconds it must wait before it is sent, and the booking's
        epoch (a pause begins a new one, and voids the bookings of the old)."""
        now = time.monotonic() if now is None else now
        with self._lock:
            at = max(now, self.paused_until)
            if self._requests is not None:
                at = self._requests.reserve(now, 1, at)
            if self._tokens is not None:
                # a call larger than the burst still goes, alone: the schedule makes the next calls wait for it
                at = self._tokens.reserve(now, tokens, at)
            return at - now, self._epoch

    def settle(self, estimated: int, used: int | None) -> None:
        """Correct a sent call's tokens by what it used (as the server reported), where the limit counts tokens."""
        if self._tokens is not None and used is not None:
            with self._lock:
                self._tokens.settle(used - estimated)

    def pause(self, seconds: float) -> None:
        """Hold every call for `seconds` from now (a 429's `Retry-After`): the schedules start again then, and the
        calls asleep on a booking book again when they wake (in the order they wake), so they do not all go at once
        when the pause ends."""
        with self._lock:
            self.rate_limited += 1
            until = time.monotonic() + seconds
            if until > self.paused_until:
                self.paused_until = until
                self._epoch += 1
                for schedule in (self._requests, self._tokens):
                    if schedule is not None:
                        schedule.tat = until

    async def wait(self, tokens: int) -> None:
        """Sleep until a call of `tokens` estimated tokens may go (booked in a schedule no pause has voided)."""
        while True:
            delay, epoch = self.reserve(tokens)
            if delay > 0:
                with _waiting_lock:
                    _waiting[0] += 1
                try:
                    await asyncio.sleep(delay)
                finally:
                    with _waiting_lock:
                        _waiting[0] -= 1
                self.waited_s += delay
            if epoch == self._epoch:
                return
