"""python manage.py serve_local_model [--port N] [--threads N]

Serves the embedded models (Gemma 3 270M, a base model, and SmolLM2 135M Instruct with native
tool calls) through one llama.cpp OpenAI-compatible server on loopback and registers them as
the endpoints "local-gemma-3-270m" (completion style) and "local-smollm2-135m" (chat style).
The first time it builds llama.cpp (about five minutes); meanwhile the endpoints show as
"building", then "starting", then "ready" on the Endpoints page, and "down" after this command
stops. Once ready, it launches the demo's native run on SmolLM2 if the demo data is there and
no such run exists. It is for trying the platform offline, not for research numbers.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import time
import urllib.error
import urllib.request
from types import FrameType
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from config import devstack, localmodel
from evaluation.models import LOCAL_TOOLS_ENDPOINT, Endpoint
from evaluation.services import (
    RunError,
    demo_native_run_ensure,
    endpoint_register_local,
    endpoint_set_status,
)

READY_TIMEOUT = 180.0


class Stop(Exception):
    pass


def _on_signal(signum: int, frame: FrameType | None) -> None:
    raise Stop(signal.Signals(signum).name)


class Command(BaseCommand):
    help = __doc__.split("\n\n")[1].replace("\n", " ")

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--port", type=int, default=None)
        parser.add_argument("--threads", type=int, default=None)

    def handle(self, *args: Any, **options: Any) -> None:
        signal.signal(signal.SIGTERM, _on_signal)
        signal.signal(signal.SIGINT, _on_signal)
        port = options["port"] or devstack.pick_port("local_model_port")
        endpoints = [
            endpoint_register_local(port=port, model=localmodel.MODEL_ALIAS),
            endpoint_register_local(
                port=port,
                model=localmodel.TOOLS_MODEL_ALIAS,
                name=LOCAL_TOOLS_ENDPOINT,
                style=Endpoint.Style.CHAT,
            ),
        ]
        server: subprocess.Popen[bytes] | None = None
        try:
            if not localmodel.installed():
                self.status(endpoints, Endpoint.Status.BUILDING, "building llama.cpp (first run)")
                console = self.console
                localmodel.install(
                    log=console,
                    progress=[
                        # The console every 10%, the admin's status every 1%.
                        localmodel.BuildReporter(console, every=10),
                        localmodel.BuildReporter(
                            lambda step: self.status(endpoints, Endpoint.Status.BUILDING, step),
                            every=1,
                        ),
                    ],
                )
            self.status(endpoints, Endpoint.Status.STARTING, f"starting on port {port}")
            command = localmodel.server_command(port, options["threads"])
            log_path = devstack.data_dir() / "local-model.log"
            with open(log_path, "ab") as log:
                # Its own environment: our caller's PORT (the web server's) must not reach it.
                server = subprocess.Popen(
                    command,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=localmodel.server_env(port),
                )
            self.wait_ready(server, port, log_path)
            for endpoint in endpoints:
                self.status([endpoint], Endpoint.Status.READY, f"{endpoint.model} on port {port}")
            self.stdout.write(f"local model ready: http://127.0.0.1:{port}/v1 (log: {log_path})")
            self.demo_native_run()
            code = server.wait()
            self.status(endpoints, Endpoint.Status.FAILED, f"the server exited with status {code}")
            raise CommandError(f"the llama.cpp server exited with status {code}; see {log_path}")
        except Stop:
            self.status(endpoints, Endpoint.Status.DOWN, "stopped")
        except (RuntimeError, OSError, ValueError) as exc:
            self.status(endpoints, Endpoint.Status.FAILED, str(exc))
            raise CommandError(f"local model: {exc}") from None
        finally:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            if server is not None and server.poll() is None:
                server.terminate()
                try:
                    server.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    server.kill()
                    server.wait()

    def console(self, line: str) -> None:
        self.stdout.write(f"local model: {line}")
        self.stdout.flush()

    def status(self, endpoints: list[Endpoint], status: str, detail: str) -> None:
        for endpoint in endpoints:
            endpoint_set_status(endpoint_id=endpoint.pk, status=status, detail=detail)

    def demo_native_run(self) -> None:
        """The demo's native run on SmolLM2 (once; a failure to launch it is reported, and the
        model goes on serving)."""
        try:
            run = demo_native_run_ensure()
        except RunError as exc:
            self.console(f"the demo's native run was not launched: {exc}")
            return
        if run is not None:
            self.console(f"launched the demo's native run #{run.pk} ({run.name})")

    def wait_ready(self, server: subprocess.Popen[bytes], port: int, log_path: Any) -> None:
        deadline = time.monotonic() + READY_TIMEOUT
        url = f"http://127.0.0.1:{port}/v1/models"
        while time.monotonic() < deadline:
            if server.poll() is not None:
                raise RuntimeError(f"the server exited with {server.returncode}; see {log_path}")
            with (
                contextlib.suppress(urllib.error.URLError, OSError),
                urllib.request.urlopen(url, timeout=2) as response,
            ):
                if response.status == 200:
                    return
            time.sleep(0.25)
        raise RuntimeError(f"the server did not answer within {READY_TIMEOUT:.0f}s; see {log_path}")
