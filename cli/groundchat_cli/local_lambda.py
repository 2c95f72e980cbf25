"""A packaged function run the way Lambda runs it, here: the artifacts of `make package` under /opt
and /var/task, the Python runtime's environment, the real Lambda Web Adapter where the template
gives the function the adapter layer, and the real runtime interface emulator in front.

Each local Lambda gets a private mount namespace (`unshare --mount`), in which its own directories
are bind-mounted, read-only as in Lambda, over /opt (the layers: the core layer's python/ and, for
the chat function, the adapter layer's bootstrap and extensions/lambda-adapter), /var/task (the
function), /var/runtime (what the managed python3.12 runtime has there: its bootstrap and the
runtime interface client) and /var/lang (the interpreter). So the emulator finds the adapter in
/opt/extensions and starts it as an extension, the runtime's bootstrap runs the exec wrapper
(AWS_LAMBDA_EXEC_WRAPPER=/opt/bootstrap), and that runs the handler, run.sh, as Lambda does; the
other functions' handlers run under awslambdaric. Several local Lambdas run side by side, each
seeing only its own /opt and /var/task. That needs root (the mount points /var/task, /var/runtime
and /var/lang are created, empty, on the host).

What the function is given (handler, runtime, layers, memory, timeout, environment) is read from
template.yaml; only the values the template takes from the stack (a !Ref, a !Sub) need a local
value, and a test or `make run-lambda` passes those.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from groundchat_cli import lambda_tools

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO / "template.yaml"
ADAPTER_LAYER = re.compile(r":layer:LambdaAdapterLayer(X86|Arm64):\d+")
MOUNTED = ("/opt", "/var/task", "/var/runtime", "/var/lang")
INVOKE_PATH = "/2015-03-31/functions/function/invocations"
# The hosts a local Lambda runs under: the runtime interface emulator (buffers a streamed response,
# its issue #175), or cargo-lambda's emulator, which streams it. cargo-lambda serves the runtime API
# under /.rt beside the invoke API, and names a function it does not build `_`.
HOSTS = ("rie", "cargo-lambda")
CARGO_LAMBDA_INVOKE_PATH = "/2015-03-31/functions/_/invocations"
# `cargo lambda watch` reads a Cargo project's metadata even when it starts no function: an empty one.
CARGO_PROJECT = '[package]\nname = "function"\nversion = "0.0.0"\nedition = "2021"\n\n[[bin]]\nname = "function"\npath = "main.rs"\n'
START_SECONDS = 60.0

# The managed python3.12 runtime's start, as played here: its bootstrap runs the runtime interface
# client on the handler, or, when AWS_LAMBDA_EXEC_WRAPPER is set, the wrapper with that command line.
RUNTIME_BOOTSTRAP = """#!/bin/sh
PYTHONPATH=/var/runtime:/opt/python/lib/python3.12/site-packages:/opt/python
export PYTHONPATH
if [ -n "$AWS_LAMBDA_EXEC_WRAPPER" ]; then
  exec "$AWS_LAMBDA_EXEC_WRAPPER" /var/lang/bin/python3.12 -m awslambdaric "$_HANDLER"
fi
exec /var/lang/bin/python3.12 -m awslambdaric "$_HANDLER"
"""


def load_template(path: Path = TEMPLATE) -> dict[str, Any]:
    """The template as CloudFormation reads it (short tags as Fn:: forms), plain dicts."""
    from cfnlint.decode import decode

    parsed, problems = decode(str(path))
    if problems:
        raise ValueError(f"{path}: {problems}")
    return json.loads(json.dumps(parsed))


@dataclass(frozen=True)
class FunctionConfig:
    """One function's runtime settings as SAM merges them (Globals, then the function's own)."""
    logical: str
    handler: str
    runtime: str
    code_uri: str
    memory: int
    timeout: int
    environment: dict[str, Any]
    layers: list[Any]

    @property
    def adapter_layer(self) -> bool:
        return any(ADAPTER_LAYER.search(json.dumps(layer)) for layer in self.layers)

    @property
    def artifact(self) -> str:
        return Path(self.code_uri).name  # build/functions/<name>

    def stack_made(self) -> list[str]:
        """The variables whose value the stack makes (a !Ref, !Sub, !If): unset locally unless given."""
        return sorted(n for n, v in self.environment.items() if not isinstance(v, (str, int, float)))

    def resolved_environment(self, local: dict[str, str]) -> dict[str, str]:
        """The template's plain variables as written, `local` over them and in place of the
        stack-made ones (those without a local value are left unset: the app's defaults hold)."""
        out = {n: str(v) for n, v in self.environment.items() if isinstance(v, (str, int, float))}
        out.update(local)
        return out


def function_config(template: dict[str, Any], logical: str) -> FunctionConfig:
    globals_ = template.get("Globals", {}).get("Function", {})
    own = template["Resources"][logical]["Properties"]
    environment = dict(globals_.get("Environment", {}).get("Variables", {}))
    environment.update(own.get("Environment", {}).get("Variables", {}))
    # SAM appends a function's layers to the Globals' ones.
    layers = list(globals_.get("Layers", [])) + list(own.get("Layers", []))
    return FunctionConfig(logical, own["Handler"], own.get("Runtime", globals_.get("Runtime")), own["CodeUri"],
                          int(own.get("MemorySize", globals_.get("MemorySize", 128))),
                          int(own.get("Timeout", globals_.get("Timeout", 3))), environment, layers)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LambdaToolsMissing(RuntimeError):
    pass


def require_tools() -> lambda_tools.Tools:
    tools = lambda_tools.present()
    if tools.missing:
        raise LambdaToolsMissing("missing " + ", ".join(tools.missing) + " (make lambda-tools builds them)")
    if os.geteuid() != 0 or not shutil.which("unshare"):
        raise LambdaToolsMissing("a local Lambda mounts its /opt and /var/task in a private mount namespace: "
                                 "run as root with util-linux's unshare")
    return tools


def _link_tree(sources: list[Path], target: Path) -> None:
    """`target` holding every entry of each source (later sources win), as symlinks: the layers'
    python/ folders merged the way Lambda extracts layers into one /opt."""
    target.mkdir(parents=True, exist_ok=True)
    for source in sources:
        for entry in source.iterdir():
            if entry.name == ".complete":
                continue
            link = target / entry.name
            if link.is_symlink() or link.exists():
                link.unlink()
            link.symlink_to(entry.resolve())


@dataclass
class LocalLambda:
    """One function of the template, started from the artifacts in `build` (infra/package.py's
    output: functions/<name> and layer/python)."""
    config: FunctionConfig
    build: Path
    workdir: Path
    local_env: dict[str, str] = field(default_factory=dict)
    host: str = "rie"
    port: int = 0
    process: subprocess.Popen | None = None
    emulator: subprocess.Popen | None = None  # cargo-lambda's, outside the function's session
    output: list[str] = field(default_factory=list)

    @property
    def invoke_path(self) -> str:
        return CARGO_LAMBDA_INVOKE_PATH if self.host == "cargo-lambda" else INVOKE_PATH

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.invoke_path}"

    def _lay_out(self, tools: lambda_tools.Tools) -> Path:
        root = self.workdir / "root"
        shutil.rmtree(root, ignore_errors=True)
        opt, runtime, lang = root / "opt", root / "var" / "runtime", root / "var" / "lang" / "bin"
        # The core layer is our groundchat package (code only) with its requirements, built once for
        # Lambda's platform in the tools cache, as one python/ folder the way the layer's zip has it.
        # The model layer: its runtime from the tools cache, the model's files from the build.
        _link_tree([tools.layer_deps, tools.model_deps, self.build / "layer" / "python",
                    self.build / "model" / "python"], opt / "python")
        if self.config.adapter_layer:
            (opt / "extensions").mkdir(parents=True)
            shutil.copy2(tools.adapter, opt / "extensions" / "lambda-adapter")
            shutil.copy2(lambda_tools.adapter_layer_bootstrap(), opt / "bootstrap")
        _link_tree([tools.runtime_client], runtime)
        (runtime / "bootstrap").write_text(RUNTIME_BOOTSTRAP)
        (runtime / "bootstrap").chmod(0o755)
        lang.mkdir(parents=True)
        for name in ("python3.12", "python3", "python"):
            (lang / name).symlink_to(Path(tools.python).resolve())
        return root

    def environment(self) -> dict[str, str]:
        cfg = self.config
        lambda_env = {
            # What Lambda sets for a python3.12 function.
            "PATH": "/var/lang/bin:/usr/local/bin:/usr/bin/:/bin:/opt/bin",
            "LANG": "en_US.UTF-8", "TZ": ":UTC",
            "LD_LIBRARY_PATH": "/var/lang/lib:/lib64:/usr/lib64:/var/runtime:/var/runtime/lib:/var/task:/var/task/lib:/opt/lib",
            "LAMBDA_TASK_ROOT": "/var/task", "LAMBDA_RUNTIME_DIR": "/var/runtime", "PYTHONPATH": "/var/runtime",
            "AWS_EXECUTION_ENV": f"AWS_Lambda_{cfg.runtime}",
            "AWS_LAMBDA_FUNCTION_NAME": f"groundchat-local-{cfg.artifact}",
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(cfg.memory), "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
            "AWS_LAMBDA_FUNCTION_TIMEOUT": str(cfg.timeout),
            "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/groundchat-local-{cfg.artifact}",
            "AWS_LAMBDA_LOG_STREAM_NAME": "local", "AWS_LAMBDA_INITIALIZATION_TYPE": "on-demand",
            "_HANDLER": cfg.handler,
            "AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "eu-west-1",
            "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
        }
        function_env = cfg.resolved_environment(self.local_env)
        for name in [n for n in function_env if n in lambda_env and n.startswith(("AWS_REGION", "AWS_ACCESS", "AWS_SECRET"))]:
            lambda_env[name] = function_env.pop(name)
        return {**lambda_env, **function_env}

    def start(self) -> "LocalLambda":
        if self.host not in HOSTS:
            raise ValueError(f"unknown local Lambda host {self.host!r}; known: {', '.join(HOSTS)}")
        if self.host == "cargo-lambda" and not self.config.adapter_layer:
            # awslambdaric opens http.client.HTTPConnection(AWS_LAMBDA_RUNTIME_API): a host and port,
            # never the /.rt path under which cargo-lambda serves the runtime API.
            raise ValueError(f"{self.config.logical} runs under awslambdaric, which cannot reach cargo-lambda's "
                             "runtime API (served under /.rt): run it under the runtime interface emulator")
        tools = require_tools()
        root = self._lay_out(tools)
        self.port = free_port()
        for mount_point in MOUNTED:
            Path(mount_point).mkdir(parents=True, exist_ok=True)
        mounts = {"/opt": root / "opt", "/var/task": self.build / "functions" / self.config.artifact,
                  "/var/runtime": root / "var" / "runtime", "/var/lang": root / "var" / "lang"}
        script = ["set -e"]
        for target, source in mounts.items():
            script += [f"mount --bind '{source}' {target}", f"mount -o remount,bind,ro {target}"]
        script.append("cd /var/task")
        environment = self.environment()
        if self.host == "rie":
            runtime_api = f"127.0.0.1:{free_port()}"
            script.append(f"exec '{tools.rie}' --log-level info --runtime-interface-emulator-address 127.0.0.1:{self.port} "
                          f"--runtime-api-address {runtime_api} /var/runtime/bootstrap")
        else:
            self._start_cargo_lambda(tools)
            # What Lambda does at init, which cargo-lambda leaves to whoever starts the function:
            # each extension of /opt/extensions started, then the runtime's bootstrap.
            script += ['for extension in /opt/extensions/*; do if [ -x "$extension" ]; then "$extension" & fi; done',
                       "exec /var/runtime/bootstrap"]
            # The adapter's runtime client parses this as a URI: with a path it needs the scheme. Its
            # extension registration puts "http://" in front again and fails (a panic in its own
            # task, logged); the adapter serves on, and cargo-lambda waits for no extension.
            environment["AWS_LAMBDA_RUNTIME_API"] = f"http://127.0.0.1:{self.port}/.rt"
        self.process = subprocess.Popen(
            ["unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", "\n".join(script)],
            env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        threading.Thread(target=self._read_output, args=(self.process,), daemon=True).start()
        self._wait_listening(self.process if self.host == "rie" else self.emulator)
        return self

    def _start_cargo_lambda(self, tools: lambda_tools.Tools) -> None:
        if tools.cargo_lambda is None or not shutil.which("cargo"):
            raise LambdaToolsMissing("cargo-lambda's emulator needs its binary (make lambda-tools) and cargo on the PATH")
        project = self.workdir / "cargo-lambda"
        project.mkdir(parents=True, exist_ok=True)
        (project / "Cargo.toml").write_text(CARGO_PROJECT)
        (project / "main.rs").write_text("fn main() {}\n")
        self.emulator = subprocess.Popen(
            [str(tools.cargo_lambda), "lambda", "watch", "--only-lambda-apis", "--invoke-address", "127.0.0.1",
             "--invoke-port", str(self.port), "--timeout", str(self.config.timeout), "--color", "never"],
            cwd=project, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True)
        threading.Thread(target=self._read_output, args=(self.emulator,), daemon=True).start()
        self._wait_listening(self.emulator)

    def _wait_listening(self, process: subprocess.Popen) -> None:
        deadline = time.monotonic() + START_SECONDS
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the emulator stopped: {self.log()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the emulator did not listen: {self.log()}")
                time.sleep(0.05)

    def _read_output(self, process: subprocess.Popen) -> None:
        assert process.stdout
        for line in iter(process.stdout.readline, b""):
            self.output.append(line.decode(errors="replace").rstrip("\n"))

    def log(self) -> str:
        return "\n".join(self.output[-80:])

    def reports(self, expected: int = 0, within_s: float = 10.0) -> list[dict[str, float]]:
        """The emulator's REPORT lines: {duration_ms, init_duration_ms?} per invocation. The emulator
        writes an invocation's line after its response, and a thread reads it: with `expected`, wait
        (up to within_s) until that many have been read."""
        deadline = time.monotonic() + within_s
        while len(self._reports()) < expected and time.monotonic() < deadline:
            time.sleep(0.05)
        return self._reports()

    def _reports(self) -> list[dict[str, float]]:
        out = []
        for line in self.output:
            if line.startswith("REPORT RequestId:"):
                report = {"duration_ms": float(re.search(r"\tDuration: ([\d.]+) ms", line).group(1))}
                init = re.search(r"Init Duration: ([\d.]+) ms", line)
                if init:
                    report["init_duration_ms"] = float(init.group(1))
                out.append(report)
        return out

    def stop(self) -> None:
        """Ends the emulator and everything it started. The emulator puts the adapter and the app's
        server in process groups of their own, so a signal to its group alone left them running:
        the whole session this function was started in (its own) is signalled instead."""
        for process in (self.process, self.emulator):
            if process is not None:
                _end_session(process)


def _end_session(process: subprocess.Popen) -> None:
    """Every live process of the session `process` leads: SIGTERM, then SIGKILL to what stays."""
    session = process.pid
    for signum, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
        for pid in session_members(session):
            try:
                os.kill(pid, signum)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait
        while session_members(session) and time.monotonic() < deadline:
            if process.poll() is None:
                try:
                    process.wait(0.1)
                except subprocess.TimeoutExpired:
                    pass
            else:
                time.sleep(0.05)
        if not session_members(session):
            break
    if process.poll() is None:
        process.wait(5)


def session_members(session: int) -> list[int]:
    """The live processes of a session (Linux /proc), zombies left to their parents."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        if int(fields[3]) == session and fields[0] != "Z":
            out.append(int(stat.parent.name))
    return out


def invoke(function: LocalLambda, event: dict[str, Any], timeout: float = 60) -> Any:
    """A buffered invocation: the function's result, parsed as JSON."""
    import httpx

    response = httpx.post(function.url, content=json.dumps(event), timeout=timeout)
    response.raise_for_status()
    return response.json()
