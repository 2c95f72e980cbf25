"""A local OpenSearch node: the engine the deployed search talks to, run on this machine.

The launcher (`infra/opensearch/node/`: a pom and one class) starts one node in one JVM from the
published server, module and k-NN plugin artifacts, bound to 127.0.0.1, security off. Maven builds
it once into a cache outside the checkout (`GROUNDCHAT_TOOLS_CACHE`, default
`~/.cache/groundchat`), where the jars stay for the next clone; the node's data lives under
`GROUNDCHAT_HOME/opensearch-<port>/`.

    python -m groundchat_cli.opensearch_node build    what `make opensearch-node` runs
    python -m groundchat_cli.opensearch_node prepare  what `make test` runs: a build that, where it
                                                      cannot build, says so and lets the tier skip
                                                      (except under CI=true, where it fails)
    python -m groundchat_cli.opensearch_node check    one line: ready, or what is missing

`groundchat serve` starts it when `GROUNDCHAT_SEARCH_BACKEND=opensearch` and no endpoint is set;
the contract tests and the retrieval figures start their own.
"""
from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]
LAUNCHER = REPO / "infra" / "opensearch" / "node"
# The core and the k-NN plugin must be the same release (the plugin checks it); 2.19 is the last
# line that runs on Java 17.
VERSION = "2.19.1"
# Beside the rest of the stack on a 2-core, shared machine: the corpus index needs far less.
HEAP = os.environ.get("GROUNDCHAT_OPENSEARCH_HEAP", "768m")
START_TIMEOUT = 120.0


class NodeUnavailable(RuntimeError):
    """The node cannot be built or started here; the message is the one line to show."""


def tools_cache() -> Path:
    root = os.environ.get("GROUNDCHAT_TOOLS_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "groundchat")
    return Path(root)


def node_dir() -> Path:
    return tools_cache() / f"opensearch-node-{VERSION}"


def _launcher_stamp() -> str:
    """The launcher's sources, so an edited pom or class is built again."""
    parts = [VERSION]
    for path in sorted([LAUNCHER / "pom.xml", *LAUNCHER.rglob("*.java")]):
        parts.append(f"{path.relative_to(LAUNCHER)}:{path.stat().st_mtime_ns}:{path.stat().st_size}")
    return "\n".join(parts)


def missing_tools() -> str | None:
    """What this machine lacks to build or run the node, in one line; None when it has it all."""
    lacking = [name for name in ("java", "mvn") if shutil.which(name) is None]
    if not lacking:
        return None
    return (f"the local OpenSearch node needs {' and '.join(lacking)} (Java 17 and Maven: "
            "`apt-get install openjdk-17-jdk-headless maven`)")


def is_built() -> bool:
    stamp = node_dir() / "built"
    return stamp.is_file() and stamp.read_text() == _launcher_stamp()


def build(say=print) -> Path:
    """Fetch the artifacts and build the launcher into the cache (once; reused while unchanged)."""
    if is_built():
        return node_dir()
    problem = missing_tools()
    if problem:
        raise NodeUnavailable(problem)
    target = node_dir()
    target.mkdir(parents=True, exist_ok=True)
    # Two test workers (or a stack and a test run) that find the launcher changed would otherwise
    # both run Maven into the same folder, each deleting the jars the other is copying.
    with (target.parent / f"{target.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if is_built():  # built by whoever held the lock before us
            return target
        return _build_locked(target, say)


def _build_locked(target: Path, say) -> Path:
    say(f"opensearch: building the local node {VERSION} into {target} (once; Maven fetches the jars)")
    for part in ("lib", "knn", "build"):
        shutil.rmtree(target / part, ignore_errors=True)
    done = subprocess.run(
        ["mvn", "-q", "-B", "-f", str(LAUNCHER / "pom.xml"), f"-Dnode.cache={target}", "package"],
        capture_output=True, text=True)
    if done.returncode != 0:
        tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
        raise NodeUnavailable("building the local OpenSearch node failed: " + " | ".join(tail))
    (target / "built").write_text(_launcher_stamp())
    return target


def classpath(target: Path) -> str:
    return os.pathsep.join([str(target / "groundchat-opensearch-node.jar"), str(target / "lib" / "*"),
                            str(target / "knn" / "*")])


class LocalOpenSearch:
    """One node process: started, waited for, stopped (SIGTERM, then a kill)."""

    def __init__(self, data_dir: Path, port: int, heap: str = HEAP, *,
                 extra_classpath: tuple[str, ...] = (), extra_plugins: tuple[str, ...] = ()) -> None:
        self.data_dir = Path(data_dir)
        self.port = port
        self.heap = heap
        # For a measurement that needs a plugin the served search does not (LocalNode's
        # groundchat.extraPlugins): its jars' classpath entries and its plugin classes.
        self.extra_classpath = tuple(extra_classpath)
        self.extra_plugins = tuple(extra_plugins)
        self.process: subprocess.Popen | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.data_dir / "node.log"

    @property
    def pid_path(self) -> Path:
        return self.data_dir / "node.pid"

    def start(self, say=print) -> "LocalOpenSearch":
        target = build(say)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._stop_orphan(say)
        ready = self.data_dir / "ready"
        ready.unlink(missing_ok=True)
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            ["java", f"-Xms{self.heap}", f"-Xmx{self.heap}", "-XX:+UseSerialGC",
             # The k-NN plugin and Lucene read these; without them the JDK warns on every start.
             "--add-opens=java.base/java.nio=ALL-UNNAMED", "-Dlog4j2.formatMsgNoLookups=true",
             *([f"-Dgroundchat.extraPlugins={','.join(self.extra_plugins)}"] if self.extra_plugins else []),
             "-cp", os.pathsep.join([classpath(target), *self.extra_classpath]),
             "groundchat.opensearch.LocalNode", str(self.data_dir), str(self.port)],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        self.pid_path.write_text(str(self.process.pid))
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise NodeUnavailable(f"the local OpenSearch node exited ({self.process.returncode}) while "
                                      f"starting: {self._last_error()} (log: {self.log_path})")
            if ready.exists() and self._answers():
                return self
            time.sleep(0.2)
        self.stop()
        raise NodeUnavailable(f"the local OpenSearch node did not start within {START_TIMEOUT:.0f} s "
                              f"(log: {self.log_path})")

    def _answers(self) -> bool:
        try:
            health = httpx.get(f"{self.endpoint}/_cluster/health", timeout=2).json()
        except (httpx.HTTPError, ValueError):
            return False
        return health.get("status") in ("green", "yellow")

    def _last_error(self) -> str:
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return "no log"
        errors = [line.strip() for line in lines if "Exception" in line or "ERROR" in line]
        return (errors or lines or ["no output"])[-1][:300]

    def _stop_orphan(self, say) -> None:
        """A node left running on this data by a stack that was killed (the node runs in a session of
        its own, so a kill -9 of its parent leaves it) holds the data's lock: it is ended first."""
        try:
            pid = int(self.pid_path.read_text())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError):
            return
        if b"groundchat.opensearch.LocalNode" not in cmdline or str(self.data_dir).encode() not in cmdline:
            return  # the pid is someone else's now
        say(f"opensearch: ending the node (pid {pid}) a previous stack left running on {self.data_dir}")
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        if Path(f"/proc/{pid}").exists():
            os.kill(pid, signal.SIGKILL)
            time.sleep(0.5)

    def stop(self, timeout: float = 30.0) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        self.pid_path.unlink(missing_ok=True)
        if process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    def __enter__(self) -> "LocalOpenSearch":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    command = (argv or sys.argv[1:] or ["check"])[0]
    if command == "build":
        try:
            path = build()
        except NodeUnavailable as exc:
            print(exc, file=sys.stderr)
            return 1
        print(f"opensearch: local node {VERSION} ready in {path}")
        return 0
    if command == "prepare":
        try:
            build()
        except NodeUnavailable as exc:
            if os.environ.get("CI") == "true":
                print(f"opensearch: {exc}; CI must run the OpenSearch tests", file=sys.stderr)
                return 1
            print(f"opensearch: {exc}; the OpenSearch tests will skip", file=sys.stderr)
        return 0
    if command == "check":
        problem = missing_tools()
        print(problem or (f"opensearch: local node {VERSION} built" if is_built() else
                          f"opensearch: local node {VERSION} not built yet (`make opensearch-node`)"))
        return 1 if problem else 0
    print("usage: python -m groundchat_cli.opensearch_node build|prepare|check", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
