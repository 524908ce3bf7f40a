"""A pool of OpenAI-compatible endpoints behind one `openai:` model: spread, limited, failed over.

`openai:MODEL@URL1,URL2,...` (or `models.<role>.endpoints`) names several
servers of one model (vLLM replicas, llama.cpp servers, a provider). Each
call goes to the healthy endpoint with the fewest calls in flight, under a
per-endpoint concurrency limit. An endpoint that answers with a transient
failure (HTTP 429 or 5xx, a dropped connection) or is slower than
`slow_after_s` is set aside for a cool-down that doubles with each failure in
a row, and the call goes to the next endpoint at once; only when every
endpoint has failed the call does its error reach the retry wrapper, which
backs off and asks again. A client error (HTTP 4xx) is the request's fault
and fails at once, wherever it is sent.

Rate limits (`requests_per_minute`, `tokens_per_minute`, per endpoint) are kept
by pacing the calls in this process (`sandbox.llm.rate`). A 429 is the endpoint
answering, over its limit, not failing: every call to it waits for the answer's
`Retry-After` (seconds or an HTTP date; without one, 0.5 s doubling with each
429 the call met, up to `COOLDOWN_CAP_S`) and the call
is asked again, counted in the endpoint's `rate_limited`, never as a failure
toward failover (after `MAX_RATE_LIMITED` in a row for one call, its 429 goes
on to the retry wrapper).

The requests are plain JSON over one aiohttp session per event loop. The
openai SDK is not on this path: its request transform and its HTTP pool's
scan of connections cost about 13 ms of CPU per call, where this path costs
well under 2 ms (`sandbox bench scai`).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

import orjson

from sandbox.llm.rate import RateLimit, estimate_tokens, retry_after_s

__all__ = ["Endpoint", "EndpointPool", "EndpointSpec", "parse_endpoints", "status_error"]

COOLDOWN_CAP_S = 60.0  # the longest an endpoint is set aside, however many failures in a row

# Options after `?` at the end of the endpoint list, e.g. `openai:m@http://a/v1,http://b/v1?per_endpoint=16`.
OPTIONS = {
    "per_endpoint": "concurrent calls per endpoint (default: no limit beyond the run's concurrency)",
    "slow_after_s": "seconds after which an endpoint counts as slow and the call goes elsewhere (default 120)",
    "cooldown_s": "first cool-down of a failed endpoint, doubling with each failure in a row (default 2)",
    "structured": "how a server enforces structured output: none (OpenAI), vllm (guided decoding), llamacpp (grammar)",
    "requests_per_minute": "requests a minute each endpoint takes, paced by this process (default: no limit)",
    "tokens_per_minute": "tokens (prompt and output) a minute each endpoint takes, paced by this process (default: no limit)",
}
MAX_RATE_LIMITED = 30  # 429 answers one call waits out before its error reaches the retry wrapper


@dataclass(frozen=True)
class EndpointSpec:
    """What `openai:MODEL@URL1,URL2?OPTIONS` says: the model, the base URLs and the pool's options."""

    model: str
    urls: tuple[str, ...] = ()
    per_endpoint: int | None = None
    slow_after_s: float = 120.0
    cooldown_s: float = 2.0
    structured: str = "none"
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None


def parse_endpoints(argument: str) -> EndpointSpec:
    """Read the argument of an `openai:` spec; `ValueError` naming what is wrong.

    >>> spec = parse_endpoints("gpt-4o-mini")
    >>> spec.model, spec.urls, spec.per_endpoint, spec.requests_per_minute
    ('gpt-4o-mini', (), None, None)
    >>> parse_endpoints("gpt-4o-mini?requests_per_minute=500").requests_per_minute  # OpenAI's own, paced
    500.0
    >>> spec = parse_endpoints("m@http://a:8000/v1,http://b:8000/v1?per_endpoint=8&structured=vllm")
    >>> spec.urls, spec.per_endpoint, spec.structured
    (('http://a:8000/v1', 'http://b:8000/v1'), 8, 'vllm')
    """
    head, _, query = argument.partition("?")
    model, sep, listing = head.partition("@")
    if not model.strip():
        raise ValueError(f"openai:{argument}: name the model before @")
    urls = tuple(u.strip().rstrip("/") for u in listing.split(",") if u.strip())
    if sep and not urls:
        raise ValueError(f"openai:{argument}: name at least one endpoint URL after @")
    for url in urls:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"openai:{argument}: endpoint {url!r} is not an http(s) URL")
    options: dict[str, Any] = {}
    for key, value in parse_qsl(query, keep_blank_values=True):
        if key not in OPTIONS:
            raise ValueError(f"openai:{argument}: unknown option {key!r} (known: {', '.join(OPTIONS)})")
        try:
            options[key] = {
                "per_endpoint": int,
                "slow_after_s": float,
                "cooldown_s": float,
                "structured": str,
                "requests_per_minute": float,
                "tokens_per_minute": float,
            }[key](value)
        except ValueError:
            raise ValueError(f"openai:{argument}: {key}={value!r} is not a number") from None
    if options.get("per_endpoint", 1) < 1 or options.get("slow_after_s", 1) <= 0 or options.get("cooldown_s", 0) < 0:
        raise ValueError(f"openai:{argument}: per_endpoint >= 1, slow_after_s > 0 and cooldown_s >= 0")
    for key in ("requests_per_minute", "tokens_per_minute"):
        if key in options and not (options[key] > 0 and options[key] < float("inf")):
            raise ValueError(f"openai:{argument}: {key} is a number of a minute above 0")
    if options.get("structured", "none") not in ("none", "vllm", "llamacpp"):
        raise ValueError(f"openai:{argument}: structured is none, vllm or llamacpp")
    return EndpointSpec(model=model.strip(), urls=urls, **options)


def _rate_backoff(times: int) -> float:
    """The pause after a call's `times`-th 429 that gave no `Retry-After`: 0.5 s, doubling, capped.

    >>> [_rate_backoff(k) for k in (1, 2, 3)]
    [0.5, 1.0, 2.0]
    """
    return min(COOLDOWN_CAP_S, 0.5 * 2 ** (times - 1))


def status_error(status: int, body: bytes, url: str) -> Exception:
    """The openai SDK's exception for an HTTP error status (what callers and the retry wrapper know)."""
    import httpx
    import openai

    try:
        data: Any = json.loads(body)
    except ValueError:
        data = body.decode("utf-8", "replace")
    message = (data.get("error") or {}).get("message") if isinstance(data, dict) else None
    response = httpx.Response(status, request=httpx.Request("POST", url), content=body)
    classes = {
        400: openai.BadRequestError,
        401: openai.AuthenticationError,
        403: openai.PermissionDeniedError,
        404: openai.NotFoundError,
        409: openai.ConflictError,
        422: openai.UnprocessableEntityError,
        429: openai.RateLimitError,
    }
    cls = classes.get(status, openai.InternalServerError if status >= 500 else openai.APIStatusError)
    return cls(f"Error code: {status} - {message or data}", response=response, body=data)  # type: ignore[arg-type]  # openai's stubs name its vendored httpx


def _transient(error: BaseException) -> bool:
    """A failure another endpoint (or a later try) may not have: 429, 5xx, a timeout, a dropped connection."""
    import aiohttp
    import openai

    if isinstance(error, openai.APIStatusError):
        return error.status_code == 429 or error.status_code >= 500
    if isinstance(error, aiohttp.InvalidURL):
        return False
    return isinstance(
        error,
        (
            asyncio.TimeoutError,
            TimeoutError,
            ConnectionError,
            OSError,
            aiohttp.ClientConnectionError,
            aiohttp.ClientPayloadError,
        ),
    )


async def _first(steps: AsyncIterator[None]) -> None:
    """Run an async generator to its first yield (a coroutine, which `create_task` takes)."""
    await steps.__anext__()


async def _closer(session: Any) -> AsyncIterator[None]:
    """Closes `session` when its event loop shuts down: `asyncio.run` ends by closing every async generator
    the loop has started (`loop.shutdown_asyncgens`), this one among them, which runs its `finally`."""
    try:
        yield  # never resumed: it waits here for the loop's shutdown
    finally:
        if not session.closed:
            await session.close()


@dataclass
class Endpoint:
    """One server of the pool, and what the pool knows of it."""

    url: str
    in_flight: int = 0
    calls: int = 0
    failures: int = 0
    failures_in_a_row: int = 0
    down_until: float = 0.0
    last_failure: float = -1.0
    limit: RateLimit = field(default_factory=RateLimit)  # its requests and tokens a minute, and 429s' pauses
    _semaphores: dict[Any, asyncio.Semaphore] = field(default_factory=dict, repr=False)

    def semaphore(self, limit: int | None) -> asyncio.Semaphore | None:
        if limit is None:
            return None
        loop = asyncio.get_running_loop()
        semaphore = self._semaphores.get(loop)
        if semaphore is None:
            for old in [old for old in self._semaphores if old.is_closed()]:  # a finished `asyncio.run`'s
                del self._semaphores[old]
            semaphore = self._semaphores[loop] = asyncio.Semaphore(limit)
        return semaphore

    def failed(self, started: float, cooldown_s: float) -> None:
        """Count a failure of a call started at `started`; calls that were already in flight when an earlier
        failure was seen count once, so a burst of failures is one failure, not one per call."""
        self.failures += 1
        if started <= self.last_failure:
            return
        self.last_failure = time.monotonic()
        self.failures_in_a_row += 1
        self.down_until = self.last_failure + min(COOLDOWN_CAP_S, cooldown_s * 2 ** (self.failures_in_a_row - 1))

    def answered(self) -> None:
        self.failures_in_a_row = 0
        self.down_until = 0.0


class EndpointPool:
    """Sends chat requests to a pool of endpoints (one endpoint is a pool of one)."""

    def __init__(self, spec: EndpointSpec, *, api_key: str, timeout_s: float) -> None:
        self.spec = spec
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.endpoints = [
            Endpoint(url, limit=RateLimit(spec.requests_per_minute, spec.tokens_per_minute)) for url in spec.urls
        ]
        self._sessions: dict[Any, tuple[Any, Any]] = {}  # event loop -> (its session, the session's closer)
        self._guard = threading.Lock()
        self._urls: dict[str, Any] = {}  # each address parsed once (`yarl.URL`), not once a call
        self._timeout_object: Any = None

    def _url(self, address: str) -> Any:
        url = self._urls.get(address)
        if url is None:
            from yarl import URL

            url = self._urls[address] = URL(address)
        return url

    @property
    def _timeout(self) -> Any:
        """The calls' `aiohttp.ClientTimeout` (one object, made once)."""
        if self._timeout_object is None:
            import aiohttp

            self._timeout_object = aiohttp.ClientTimeout(total=min(self.spec.slow_after_s, self.timeout_s))
        return self._timeout_object

    def _session(self) -> Any:
        """This event loop's session, made on first use; it closes when the loop shuts down (see `_closer`)."""
        import aiohttp

        loop = asyncio.get_running_loop()
        with self._guard:
            held = self._sessions.get(loop)
            if held is None or held[0].closed:
                for old in [old for old in self._sessions if old.is_closed()]:  # finished loops: let them go
                    del self._sessions[old]
                connector = aiohttp.TCPConnector(limit=0, ttl_dns_cache=300)  # the sandbox's wrappers limit calls
                session = aiohttp.ClientSession(
                    connector=connector,
                    json_serialize=json.dumps,
                    headers={"Authorization": f"Bearer {self.api_key}", "Content-Type": "application/json"},
                )
                closer = _closer(session)
                loop.create_task(_first(closer))  # noqa: RUF006 started, so the loop tracks it as an async generator
                held = self._sessions[loop] = (session, closer)
            return held[0]

    async def aclose(self) -> None:
        """Close this event loop's session (its connections) now."""
        held = self._sessions.pop(asyncio.get_running_loop(), None)
        if held is not None:
            await held[0].close()

    def _choose(self, tried: set[str]) -> Endpoint:
        now = time.monotonic()
        candidates = [e for e in self.endpoints if e.url not in tried]
        healthy = [e for e in candidates if e.down_until <= now] or candidates
        # an endpoint paused by a 429 is healthy, only busy: the others first while it waits
        return min(healthy, key=lambda e: (e.down_until > now, e.limit.paused_until > now, e.in_flight, e.calls))

    async def post(self, path: str, payload: dict[str, Any]) -> tuple[dict[str, Any], str, list[str]]:
        """POST `payload` as JSON to `path` of an endpoint; return (the answer's JSON, the endpoint that answered,
        the endpoints that failed this call first)."""

        body = orjson.dumps(payload)  # encoded once, and by orjson: the request's JSON is a call's largest
        tokens = estimate_tokens(payload)
        failed: list[str] = []
        last: BaseException | None = None
        rate_limited = 0
        while len(failed) < len(self.endpoints):
            endpoint = self._choose(set(failed))
            semaphore = endpoint.semaphore(self.spec.per_endpoint)
            url = endpoint.url + path
            endpoint.in_flight += 1
            started = time.monotonic()
            try:
                await endpoint.limit.wait(tokens)
                endpoint.calls += 1
                if semaphore is not None:
                    await semaphore.acquire()
                try:
                    async with self._session().post(self._url(url), data=body, timeout=self._timeout) as response:
                        data = await response.read()
                        if response.status == 429 and rate_limited < MAX_RATE_LIMITED:
                            # the endpoint answers, over its limit: wait as it says, and ask it again (no failure)
                            rate_limited += 1
                            told = retry_after_s(response.headers)
                            endpoint.limit.pause(told if told is not None else _rate_backoff(rate_limited))
                            continue
                        if response.status >= 400:
                            raise status_error(response.status, data, url)
                        answer = orjson.loads(data)
                finally:
                    if semaphore is not None:
                        semaphore.release()
            except Exception as error:
                if not _transient(error):
                    raise
                endpoint.failed(started, self.spec.cooldown_s)
                failed.append(endpoint.url)
                last = error
                continue
            finally:
                endpoint.in_flight -= 1
            endpoint.answered()
            usage = answer.get("usage") if isinstance(answer, dict) else None
            endpoint.limit.settle(tokens, usage.get("total_tokens") if isinstance(usage, dict) else None)
            return answer, endpoint.url, failed
        assert last is not None
        import openai

        from sandbox.llm.errors import TransientLLMError

        if isinstance(last, asyncio.TimeoutError):
            limit = min(self.spec.slow_after_s, self.timeout_s)
            last = TimeoutError(f"every endpoint took longer than {limit:g} s: {', '.join(failed)}")
        elif not isinstance(last, (openai.APIStatusError, TimeoutError)):  # a connection error: the retry wrapper's
            cause = last
            last = TransientLLMError(f"no endpoint answered ({type(cause).__name__}: {cause}): {', '.join(failed)}")
            last.__cause__ = cause
        setattr(last, "endpoint_failures", failed)  # noqa: B010 the retry wrapper carries them on (any error's)
        raise last

    def stats(self) -> list[dict[str, Any]]:
        """Calls and failures per endpoint so far."""
        return [
            {
                "endpoint": e.url,
                "calls": e.calls,
                "failures": e.failures,
                "rate_limited": e.limit.rate_limited,
                "waited_s": round(e.limit.waited_s, 3),
            }
            for e in self.endpoints
        ]
