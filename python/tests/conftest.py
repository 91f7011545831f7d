"""Shared fixtures: the repository, the distfeat binary (make build), the embedded broker
and workers. Waits are on progress (a process's output, a topic's records), with a stall
limit only to turn a hang into a failure."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Seconds without progress after which a wait fails (the machine may be loaded: generous).
STALL = float(os.environ.get("PYDISTFEAT_STALL", "90"))


def repo_path(*parts: str) -> str:
    return os.path.join(REPO, *parts)


@pytest.fixture(scope="session")
def distfeat_bin() -> str:
    b = os.environ.get("PYDISTFEAT_BIN") or repo_path("bin", "distfeat")
    if not os.path.exists(b):
        pytest.fail(f"{b} not found: run `make build` (the dev build: the tests start its embedded broker)")
    return b


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Proc:
    """A child process whose output goes to a file (shown when a test fails)."""

    def __init__(self, args: list[str], env: dict | None = None, log: str = "") -> None:
        self.log = log
        self._f = open(log, "wb")
        self.p = subprocess.Popen(args, env=env, stdout=self._f, stderr=subprocess.STDOUT)

    def output(self) -> str:
        with open(self.log, "rb") as f:
            return f.read().decode(errors="replace")[-4000:]

    def alive(self) -> bool:
        return self.p.poll() is None

    def stop(self) -> None:
        if self.alive():
            self.p.terminate()
            try:
                self.p.wait(30)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self._f.close()


class Broker:
    def __init__(self, binary: str, tmp: str) -> None:
        self.addr = f"127.0.0.1:{free_port()}"
        self.topics = ["points", "features", "points.dlq", "points.features"]
        self.proc = Proc([binary, "broker", "--addr", self.addr, "--partitions", "2", "--topics", ",".join(self.topics)],
                         log=os.path.join(tmp, "broker.log"))
        from confluent_kafka.admin import AdminClient
        admin = AdminClient({"bootstrap.servers": self.addr})
        last = time.monotonic()
        while True:
            if not self.proc.alive():
                pytest.fail("distfeat broker exited:\n" + self.proc.output())
            try:
                md = admin.list_topics(timeout=2)
                if all(t in md.topics for t in self.topics):
                    break
            except Exception:
                pass
            if time.monotonic() - last > STALL:
                pytest.fail("distfeat broker not answering:\n" + self.proc.output())
            time.sleep(0.1)



@pytest.fixture(scope="session")
def broker(distfeat_bin, tmp_path_factory):
    b = Broker(distfeat_bin, str(tmp_path_factory.mktemp("broker")))
    yield b
    b.proc.stop()


class Workers:
    """Starts workers against the broker; each test uses its own group and topics."""

    def __init__(self, binary: str, broker: Broker, tmp: str) -> None:
        self.binary, self.broker, self.tmp, self.procs = binary, broker, tmp, []

    def start(self, spec: str | None = None, group: str | None = None, **env: str) -> Proc:
        e = dict(os.environ)
        e.update({"DISTFEAT_BROKERS": self.broker.addr, "DISTFEAT_GROUP": group or "w-" + uuid.uuid4().hex[:8],
                  "DISTFEAT_METRICS_ADDR": f"127.0.0.1:{free_port()}", "DISTFEAT_COMMIT_INTERVAL": "200ms",
                  "DISTFEAT_LOG_LEVEL": "warn"})
        if spec:
            e["DISTFEAT_SPEC"] = spec
        e.update({"DISTFEAT_" + k.upper(): v for k, v in env.items()})
        p = Proc([self.binary, "worker"], env=e, log=os.path.join(self.tmp, f"worker{len(self.procs)}.log"))
        self.procs.append(p)
        return p

    def stop(self) -> None:
        for p in self.procs:
            p.stop()


@pytest.fixture
def workers(distfeat_bin, broker, tmp_path):
    w = Workers(distfeat_bin, broker, str(tmp_path))
    yield w
    w.stop()


def produce_sets(brokers: str, topic: str, sets, ids, chunk: int = 500) -> None:
    """Publish each set as JSON records keyed by its ID (murmur2, like the worker's
    producers), the last with end=true."""
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": brokers, "partitioner": "murmur2_random", "linger.ms": 20,
                  "message.max.bytes": 1000000})
    for sid, s in zip(ids, sets):
        pts = s.tolist()
        for at in range(0, max(len(pts), 1), chunk):
            part = pts[at:at + chunk]
            rec = {"set": sid, "points": part, "end": at + chunk >= len(pts)}
            while True:
                try:
                    p.produce(topic, key=sid.encode(), value=json.dumps(rec).encode())
                    break
                except BufferError:
                    p.poll(0.1)
        p.poll(0)
    left = p.flush(STALL)
    assert left == 0, f"{left} records not delivered"


def read_n(reader, n: int, workers: list | None = None):
    """Read until n records arrived (failing after STALL seconds without a new one or when a
    worker died); returns the batches, uncommitted."""
    batches, got, last = [], 0, time.monotonic()
    while got < n:
        b = reader.read(max_records=1000, timeout=0.5)
        if b is not None:
            batches.append(b)
            got += len(b)
            last = time.monotonic()
            continue
        for w in workers or []:
            if not w.alive():
                pytest.fail("worker exited:\n" + w.output())
        if time.monotonic() - last > STALL:
            logs = "\n".join(w.output() for w in workers or [])
            pytest.fail(f"{got} of {n} records after {STALL}s without progress\n{logs}")
    return batches


def new_topics(broker: Broker, *names: str, partitions: int = 2) -> dict[str, str]:
    """Creates fresh topics for one test (name → unique topic), so tests sharing the broker
    never read each other's records."""
    from confluent_kafka.admin import AdminClient, NewTopic
    tag = uuid.uuid4().hex[:8]
    topics = {n: f"{n}-{tag}" for n in names}
    admin = AdminClient({"bootstrap.servers": broker.addr})
    for f in admin.create_topics([NewTopic(t, partitions, 1) for t in topics.values()]).values():
        f.result(STALL)
    return topics


def worker_topics(broker: Broker, points_features: bool = False) -> tuple[dict[str, str], dict[str, str]]:
    """Fresh input/output/DLQ (and per-point) topics and the worker variables naming them."""
    names = ["points", "features", "dlq"] + (["pointfeatures"] if points_features else [])
    t = new_topics(broker, *names)
    env = {"input_topic": t["points"], "output_topic": t["features"], "dlq_topic": t["dlq"]}
    if points_features:
        env["point_features_topic"] = t["pointfeatures"]
    return t, env
