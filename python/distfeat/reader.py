"""Feature records in Python: the feature topic (and the per-point topic) with
confluent-kafka, and ``distfeat embed --format arrow`` files, as pyarrow Tables and numpy
arrays."""

from __future__ import annotations

import os
import re
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.ipc

# Columns of a feature record before the family columns (docs/input-output.md).
RECORD_COLUMNS = ("set", "window_start", "window_end", "seq", "n", "spec_id")
# Columns of a per-point record before the marginal_transfer columns.
POINT_COLUMNS = ("set", "seq", "index", "spec_id")

_SPEC_ID = re.compile(r"^[0-9a-f]{16}$")


class SpecMismatchError(ValueError):
    """A record computed under another spec than the expected one."""


def expected_spec_id(spec: Any) -> str | None:
    """The spec_id to check records against: None (no check), a 16-hex spec_id, a
    distfeat.Spec, or anything distfeat.Spec accepts (dict, JSON, path)."""
    if spec is None:
        return None
    if isinstance(spec, str) and _SPEC_ID.match(spec):
        return spec
    from .core import Spec
    return (spec if isinstance(spec, Spec) else Spec(spec)).spec_id


def _check_table(t: pa.Table, want: str | None, where: str) -> None:
    if want is None or t.num_rows == 0:
        return
    ids = t.column("spec_id").unique().to_pylist()
    bad = [i for i in ids if i != want]
    if bad:
        raise SpecMismatchError(f"{where}: records of spec_id {bad[0]}, expected {want} (a worker or file under "
                                "another spec: models trained on one spec's features are wrong on another's)")


def read_arrow(source: Any, expected_spec: Any = None) -> pa.Table:
    """A whole Arrow IPC stream — an ``embed --format arrow`` (or ``--points``) file, or a
    record value — as a Table, its spec_id checked against expected_spec."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        t = pa.ipc.open_stream(pa.py_buffer(source)).read_all()
        where = "record"
    else:
        with pa.memory_map(os.fspath(source)) as f:
            t = pa.ipc.open_stream(f).read_all()
        where = os.fspath(source)
    _check_table(t, expected_spec_id(expected_spec), where)
    return t


def features_of(table: pa.Table, column: str) -> np.ndarray:
    """A fixed_size_list<float32>[D] column as an (n, D) float32 array (no copy when the
    column is one chunk without nulls)."""
    col = table.column(column)
    arr = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    if not pa.types.is_fixed_size_list(arr.type):
        raise ValueError(f"column {column!r} is {arr.type}, not a fixed-size list of features")
    d = arr.type.list_size
    vals = arr.flatten().to_numpy(zero_copy_only=False)
    return vals.reshape(len(arr), d)


def family_columns(table: pa.Table) -> list[str]:
    """The feature columns of a feature or per-point table, in order."""
    fixed = set(RECORD_COLUMNS) | set(POINT_COLUMNS)
    return [n for n in table.column_names if n not in fixed]


class FeatureBatch:
    """Records read in one poll: ``table`` (a pyarrow Table of every record's rows) and the
    Kafka messages they came from (for commit)."""

    def __init__(self, table: pa.Table, messages: list) -> None:
        self.table = table
        self.messages = messages

    def __len__(self) -> int:
        return self.table.num_rows

    def features(self, column: str | None = None) -> np.ndarray:
        """One column as (rows, D) float32, or (column None) every family column side by
        side in order — the layout distfeat.Embedder returns."""
        if column is not None:
            return features_of(self.table, column)
        return np.hstack([features_of(self.table, c) for c in family_columns(self.table)])

    def column(self, name: str) -> np.ndarray:
        return self.table.column(name).to_numpy()


class FeatureReader:
    """Reads the feature topic (or the per-point topic) of a worker group with
    confluent-kafka: ``read()`` returns a FeatureBatch; ``commit()`` commits the offsets of
    the batches returned so far (auto commit is off), so a batch is committed only after the
    caller processed it — at-least-once.

    expected_spec: the spec the consumer's model was trained on (dict, path, Spec or
    spec_id): a record of another spec raises SpecMismatchError, uncommitted."""

    def __init__(self, topic: str = "features", brokers: str = "127.0.0.1:9092", group: str = "distfeat-python",
                 expected_spec: Any = None, from_beginning: bool = True, config: dict | None = None) -> None:
        from confluent_kafka import Consumer
        conf = {"bootstrap.servers": brokers, "group.id": group, "enable.auto.commit": False,
                "auto.offset.reset": "earliest" if from_beginning else "latest"}
        conf.update(config or {})
        self.topic = topic
        self.expected = expected_spec_id(expected_spec)
        self._consumer = Consumer(conf)
        self._consumer.subscribe([topic])
        self._uncommitted: dict[tuple[str, int], int] = {}

    def read(self, max_records: int = 500, timeout: float = 1.0) -> FeatureBatch | None:
        """Up to max_records records (waiting up to timeout seconds for the first), or None."""
        from confluent_kafka import KafkaException
        msgs = self._consumer.consume(max_records, timeout)
        if not msgs:
            return None
        tables = []
        for m in msgs:
            if m.error():
                raise KafkaException(m.error())
            where = f"{m.topic()}/{m.partition()}@{m.offset()} (set {m.key()!r})"
            hdr = dict(m.headers() or [])
            sid = hdr.get("spec-id")
            if self.expected is not None and sid is not None and sid.decode() != self.expected:
                raise SpecMismatchError(f"{where}: spec-id {sid.decode()}, expected {self.expected}")
            t = pa.ipc.open_stream(pa.py_buffer(m.value())).read_all()
            _check_table(t, self.expected, where)
            tables.append(t)
        for m in msgs:
            self._uncommitted[(m.topic(), m.partition())] = m.offset() + 1
        return FeatureBatch(pa.concat_tables(tables), msgs)

    def commit(self) -> None:
        """Commit (synchronously) the positions after every record returned so far."""
        if not self._uncommitted:
            return
        from confluent_kafka import TopicPartition
        offs = [TopicPartition(t, p, o) for (t, p), o in self._uncommitted.items()]
        self._consumer.commit(offsets=offs, asynchronous=False)
        self._uncommitted.clear()

    def close(self, commit: bool = False) -> None:
        """Leave the group; with commit, first commit what was returned."""
        if commit:
            self.commit()
        self._consumer.close()

    def __enter__(self) -> "FeatureReader":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
