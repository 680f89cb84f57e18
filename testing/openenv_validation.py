"""`openenv validate` at its runtime level without a container runtime: a named test double of
OpenEnv's Docker validation provider that serves the package as a local process.

OpenEnv's runtime level (`openenv.validation.runner.run_validation`, `--level runtime`) builds
the package's image, starts it, plays the manifest's probe plan (`validation.execution`,
`validation/runtime.json`) over `/ws` and grades the raw envelopes: rewards finite and in the
declared range, observations matching `/schema`, the state contract. Where the suite runs there
is no Docker daemon, so `LocalProcessProvider` stands in for the container runtime only: its
"build" fingerprints the package source (an image reference of OpenEnv's form), its "start"
runs the server the image would run (the same module as the Dockerfile's `CMD`) on a free
port, and waits for `/health`. Everything after that — the collection and every grader — is
OpenEnv's own. It enforces no resource limits or network policy (a container would), declares
only the `public` network mode and no `network_policy` capability, so the checks that need
those are skipped by OpenEnv, not passed.

    .venv/bin/python -m memex.testing.openenv_validation --out runs/openenv_runtime.json
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from openenv.validation.manifest import ExecutionDeclaration
from openenv.validation.providers import ExecResult, ProviderError, StartupError
from openenv.validation.report import write_report
from openenv.validation.runner import run_validation, source_digest
from openenv.validation.runtime.contracts import LaunchSpec
from openenv.validation.types import Level, ProviderCapability

from memex.envkit.servers import Server, serve

ROOT = Path(__file__).resolve().parents[1]
# The package and the server module its image runs (its Dockerfile's CMD).
PACKAGES = {"memex": (ROOT, "memex.openenv_server")}


class LocalRunningSubject:
    """A started server process (OpenEnv's `RunningSubject` protocol)."""

    def __init__(self, server: Server, stop: Callable[[], None]):
        self.base_url = server.url
        self._server = server
        self._stop = stop

    def inspect(self) -> dict:
        return {"pid": self._server.process.pid,
                "running": self._server.process.poll() is None, "limits": None}

    def logs(self, max_bytes: int = 65536) -> str:
        return self._server.log()[-max_bytes:]

    def exec(self, argv: list[str], timeout_s: float) -> ExecResult:
        raise ProviderError("the local-process provider offers no exec")

    def stop(self) -> None:
        self._stop()


class LocalProcessProvider:
    """OpenEnv's `ValidationProvider` protocol, a process in place of a container (module
    docstring): `server_module` is what the image's `CMD` runs."""

    name = "local-process (test double of docker)"
    capabilities = frozenset({ProviderCapability.IMAGE_BUILD})
    supported_network_modes = frozenset({"public"})

    def __init__(self, server_module: str, *, startup_timeout_s: float = 300.0):
        self.server_module = server_module
        self.startup_timeout_s = startup_timeout_s

    def build(self, root: Path, execution: ExecutionDeclaration) -> str:
        if not (root / execution.dockerfile).is_file():
            raise ProviderError(f"no {execution.dockerfile} in the package")
        return "sha256:" + hashlib.sha256(source_digest(root).encode()).hexdigest()

    def start(self, spec: LaunchSpec) -> LocalRunningSubject:
        context = serve(self.server_module, "--host", "127.0.0.1", "--log-level", "warning",
                        timeout_s=min(self.startup_timeout_s, spec.startup_timeout_s * 10),
                        env=dict(spec.env_vars))
        try:
            server = context.__enter__()
        except (RuntimeError, TimeoutError) as exc:
            raise StartupError(str(exc)[:1024]) from None
        return LocalRunningSubject(server, lambda: context.__exit__(None, None, None))


def validate_runtime(package: str = "memex", out: Path | None = None):
    """Run OpenEnv's validation up to the runtime level on a copy of `package`'s tracked
    files (so no local state is read), with the local-process provider; the report."""
    root, module = PACKAGES[package]
    tracked = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                             cwd=root, capture_output=True, text=True, check=True).stdout
    with tempfile.TemporaryDirectory(prefix="openenv-validate-") as tmp:
        copy = Path(tmp) / root.name
        for rel in tracked.split("\n"):
            src = root / rel
            if rel and src.is_file() and not src.is_symlink():
                (copy / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(src, copy / rel)
        report = run_validation(copy, max_level=Level.RUNTIME,
                                provider=LocalProcessProvider(module))
    if out is not None:
        write_report(report, out)
    return report


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="openenv validate --level runtime, served as a "
                                            "local process instead of a container.")
    p.add_argument("package", nargs="?", default="memex", choices=sorted(PACKAGES))
    p.add_argument("--out", type=Path, default=None, help="write the JSON report here")
    args = p.parse_args(argv)
    report = validate_runtime(args.package, args.out)
    for check in report.results:
        print(f"{check.status.value:5} {check.check_id}: {'; '.join(check.evidence)[:160]}")
    print(f"verdict: {report.verdict.value}")
    return 0 if report.verdict.value != "fail" else 1


if __name__ == "__main__":
    sys.exit(main())
