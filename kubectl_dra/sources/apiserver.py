"""HTTP access to the API server: credentials from kubeconfig or the pod, raw JSON in and out.

kubernetes-asyncio does the credential work (TLS, tokens, exec plugins, in-cluster); requests go
through its ApiClient with `_preload_content=False`, so responses are read as raw JSON (its models
are several times slower and drop fields newer than the client). Imported only when a command
talks to a cluster: the library takes most of a second to import.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import re
import ssl
import urllib.parse
from typing import AsyncIterator, cast

from allocator import paused_gc
from kubectl_dra import kubeconfig
from kubectl_dra.errors import ClusterError, InputError
from kubectl_dra.kubeconfig import in_cluster, kubeconfig_paths, read_kubeconfig

CONNECT_TIMEOUT_S = 30.0
REQUEST_READ_TIMEOUT_S = 30.0
"""A request whose answer stops arriving for this long fails ("timed out") rather than hanging on
a stopped or black-holed apiserver (--request-timeout bounds the whole request besides)."""
_URL_USER = re.compile(r"//[^/@\s]*@")


@dataclasses.dataclass
class ConnectOptions:
    kubeconfig: str | None = None
    context: str | None = None
    request_timeout: float | None = None
    """Seconds for one non-watch request; None or 0 waits as long as it takes (like kubectl)."""


class StreamIdle(ClusterError):
    """A stream (a watch) sent nothing for its read timeout: the connection may be dead, or the
    server had nothing to say; only a new request tells which."""


class ApiStatusError(Exception):
    """The API server answered with an error status (403, 404, 410, 500...)."""

    def __init__(self, status: int, reason: str, message: str, path: str) -> None:
        super().__init__(f"{status} {reason}: {message}" if message else f"{status} {reason}")
        self.status = status
        self.reason = reason
        self.message = message
        self.path = path


@dataclasses.dataclass(frozen=True)
class Target:
    """Which cluster a connection goes to, without credentials."""

    context: str | None
    server: str
    namespace: str


def load_client_library() -> None:
    """Import the API client library (hundreds of modules) now, where ApiServer.connect would:
    processes forked after this (a fleet's readers) share it instead of each importing it."""
    import aiohttp  # noqa: F401
    from kubernetes_asyncio import client, config  # noqa: F401


class ApiServer:
    """One ApiClient in the running event loop. Use `async with await ApiServer.connect(...)`."""

    def __init__(self, api_client, target: Target, request_timeout: float | None) -> None:
        self._api = api_client
        self.target = target
        self._request_timeout = request_timeout

    @classmethod
    async def connect(cls, options: ConnectOptions) -> ApiServer:
        from kubernetes_asyncio import client, config

        configuration = client.Configuration()
        paths = kubeconfig_paths(options.kubeconfig)
        _quiet_client_logs()
        if paths:
            context = read_kubeconfig(paths).resolve(options.context)
            where = f'kubeconfig context "{context.name}"'
            try:
                loader = await config.load_kube_config(
                    config_file=":".join(paths), context=context.name,
                    client_configuration=configuration, persist_config=False)
            except Exception as error:  # the library raises assorted types for broken entries
                raise InputError(f"{where}: {_library_problem(error)}") from None
            _refresh_exec_tokens(configuration, loader, where)
            _token_over_url_credentials(configuration)
            # the client types host optional; the loader has set it
            target = Target(context.name, _public_url(cast(str, configuration.host)), context.namespace or "default")
        elif in_cluster():
            if options.context:
                raise InputError(f'--context {options.context}: no kubeconfig found (running in a pod)')
            directory = kubeconfig.SERVICE_ACCOUNT_DIR
            try:
                config.load_incluster_config(client_configuration=configuration,
                                             token_filename=os.path.join(directory, "token"),
                                             cert_filename=os.path.join(directory, "ca.crt"))
            except Exception as error:
                raise ClusterError(f"in-cluster configuration: {_first_line(error)}") from None
            target = Target(None, _public_url(cast(str, configuration.host)), _pod_namespace())
        else:
            raise InputError("no kubeconfig found (checked --kubeconfig, $KUBECONFIG and ~/.kube/config) "
                             "and not running in a pod; use --demo or --from FILE to work offline")
        try:
            api_client = client.ApiClient(configuration=configuration)  # loads the TLS files
        except (ssl.SSLError, OSError, ValueError) as error:
            where = f'kubeconfig context "{target.context}"' if target.context else "in-cluster configuration"
            raise InputError(f"{where}: cannot load its TLS certificates or key: {_first_line(error)}") from None
        return cls(api_client, target, options.request_timeout)

    async def __aenter__(self) -> ApiServer:
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def close(self) -> None:
        await self._api.close()

    async def get_json(self, path: str, query: dict | None = None) -> dict:
        """GET a JSON document; raises ApiStatusError or ClusterError."""
        response = await self._request(path, query, self._timeout())
        try:
            body = await response.read()
        except (asyncio.TimeoutError, OSError) as error:
            raise self._unreachable(error, f"GET {path}") from None
        finally:
            response.release()
        return decode_json(body, path)

    async def probe(self, timeout_s: float) -> None:
        """GET /readyz, the lightest request every identity may make: returns once the server
        answered within `timeout_s`; raises ClusterError when it did not (stopped, hung,
        unreachable) and ApiStatusError when it answered with an error (500: not ready)."""
        import aiohttp

        response = await self._request("/readyz", None, aiohttp.ClientTimeout(total=timeout_s))
        try:
            await response.read()
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as error:
            raise self._unreachable(error) from None
        finally:
            response.release()

    async def send_json(self, method: str, path: str, query: dict | None = None, body: dict | None = None,
                        content_type: str | None = None) -> dict:
        """A write request (PATCH, DELETE...) with a JSON answer ({} when empty); raises
        ApiStatusError or ClusterError, like get_json."""
        import aiohttp

        headers = {"Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        try:
            response = await self._api.call_api(
                path, method, query_params=list((query or {}).items()), header_params=headers, body=body,
                auth_settings=["BearerToken"], _preload_content=False, _request_timeout=self._timeout())
            data = await response.read()
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError, ValueError) as error:
            raise self._unreachable(error) from None
        if response.status >= 400:
            raise status_error(response.status, response.reason or "", data, path)
        return decode_json(data, path) if data else {}

    @contextlib.asynccontextmanager
    async def stream(self, path: str, query: dict, read_timeout: float) -> AsyncIterator[AsyncIterator[bytes]]:
        """A streaming GET (a watch): yields an iterator over its non-empty lines once the server
        accepted the request; the connection is closed when the block ends."""
        import aiohttp

        timeout = aiohttp.ClientTimeout(sock_connect=CONNECT_TIMEOUT_S, sock_read=read_timeout)
        response = await self._request(path, query, timeout)
        try:
            yield self._lines(response)
        finally:
            response.close()

    async def _lines(self, response) -> AsyncIterator[bytes]:
        import aiohttp

        while True:
            try:
                line = await response.content.readline()
            except asyncio.TimeoutError:
                raise StreamIdle(f"no data from {self.target.server} for the stream's read timeout") from None
            except (aiohttp.ClientError, OSError, ValueError) as error:
                raise self._unreachable(error) from None
            if not line:
                return
            if line.strip():
                yield line

    def _timeout(self):
        import aiohttp

        if self._request_timeout:
            return aiohttp.ClientTimeout(total=self._request_timeout, sock_connect=CONNECT_TIMEOUT_S,
                                         sock_read=REQUEST_READ_TIMEOUT_S)
        return aiohttp.ClientTimeout(sock_connect=CONNECT_TIMEOUT_S, sock_read=REQUEST_READ_TIMEOUT_S)

    async def _request(self, path: str, query: dict | None, timeout):
        import aiohttp

        query_params = [(k, str(v).lower() if isinstance(v, bool) else str(v)) for k, v in (query or {}).items()]
        try:
            response = await self._api.call_api(
                path, "GET", query_params=query_params, header_params={"Accept": "application/json"},
                auth_settings=["BearerToken"], _preload_content=False, _request_timeout=timeout)
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError, ValueError) as error:  # ValueError: a URL aiohttp refuses
            raise self._unreachable(error, f"GET {path}") from None
        if response.status >= 400:
            try:
                body = await response.read()
            except (aiohttp.ClientError, asyncio.TimeoutError, OSError):
                body = b""
            finally:
                response.release()
            raise status_error(response.status, response.reason or "", body, path)
        return response

    def _unreachable(self, error: BaseException, request: str | None = None) -> ClusterError:
        """`request` ("GET /apis/..."): which request failed, so a timeout says what was waited for."""
        import aiohttp

        context = f" (context {self.target.context})" if self.target.context else ""
        detail = _first_line(error) or type(error).__name__
        if isinstance(error, asyncio.TimeoutError):
            detail = f"timed out after {self._request_timeout:g}s (--request-timeout)" if self._request_timeout \
                else "timed out"
        elif isinstance(error, aiohttp.InvalidURL):
            detail = f"invalid URL {detail} (the cluster's server or proxy-url)"
        detail = _URL_USER.sub("//", detail)  # a proxy-url's user:password never reaches the screen
        request = f"{request}: " if request else ""
        return ClusterError(f"cannot reach the cluster at {self.target.server}{context}: {request}{detail}")


def decode_json(body: bytes, path: str) -> dict:
    """An API answer (a list, one object, a watch event line), decoded once from the bytes read."""
    from kubectl_dra.json_codec import NOT_DECODED, decode_json_bytes

    with paused_gc():
        decoded = decode_json_bytes(body)
        if decoded is not NOT_DECODED:
            return decoded
        try:
            return json.loads(body)
        except ValueError as error:
            raise ClusterError(f"GET {path}: the server sent invalid JSON: {error}") from None


def status_error(status: int, reason: str, body: bytes, path: str) -> ApiStatusError:
    message = ""
    try:
        document = json.loads(body)
        if isinstance(document, dict):
            message = str(document.get("message") or "")
            reason = str(document.get("reason") or reason)
    except ValueError:
        message = body[:200].decode("utf-8", "replace").strip()
    return ApiStatusError(status, reason, " ".join(message.split()), path)


def _refresh_exec_tokens(configuration, loader, where: str) -> None:
    """Exec-plugin tokens expire (EKS: 15 minutes); re-run the plugin when they do. A plugin that
    fails then is one line (ClusterError), as it is when the command starts."""
    user = getattr(loader, "_user", None)
    if not user or "exec" not in user:
        return

    async def refresh(_configuration) -> None:
        try:
            await loader.load_from_exec_plugin()  # returns at once while the token is still valid
        except Exception as error:
            raise ClusterError(f"{where}: {_library_problem(error)}") from None
        if getattr(loader, "token", None):
            configuration.api_key["BearerToken"] = loader.token

    configuration.refresh_api_key_hook = refresh


def _token_over_url_credentials(configuration) -> None:
    """A server URL may carry user:password@. With a token (or exec plugin) as well, the token is
    used and the URL's user dropped, as kubectl does (Go's HTTP client sends a URL's user only
    when no Authorization header is set); aiohttp would refuse the request with both."""
    parts = urllib.parse.urlsplit(configuration.host)
    if (parts.username or parts.password) and (configuration.api_key.get("BearerToken")
                                               or configuration.refresh_api_key_hook):
        configuration.host = _public_url(configuration.host)


def _quiet_client_logs() -> None:
    """kubernetes-asyncio logs an exec plugin's failure before raising it; the raised error is
    printed once, as the one error line, so its log record goes nowhere."""
    import logging

    library = logging.getLogger("kubernetes_asyncio")
    if not library.handlers:
        library.addHandler(logging.NullHandler())
        library.propagate = False


def _library_problem(error: BaseException) -> str:
    """One line for what the client library raised about a kubeconfig entry; its bare asserts
    say nothing, so say what they check."""
    return _first_line(error) or (f"incomplete entry ({type(error).__name__} in the client library): "
                                  "check its cluster's server and its user's credentials")


def _public_url(url: str) -> str:
    """The server URL without user:password, should a kubeconfig carry them in the URL."""
    parts = urllib.parse.urlsplit(url)
    if parts.username or parts.password:  # then the URL has a host too
        parts = parts._replace(netloc=cast(str, parts.hostname) + (f":{parts.port}" if parts.port else ""))
    return urllib.parse.urlunsplit(parts)


def _pod_namespace() -> str:
    try:
        with open(os.path.join(kubeconfig.SERVICE_ACCOUNT_DIR, "namespace"), encoding="utf-8") as f:
            return f.read().strip() or "default"
    except OSError:
        return "default"


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else ""
