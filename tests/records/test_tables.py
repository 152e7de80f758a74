"""The one table reader: format from the suffix, raw cells per column, one wording for what is wrong."""

from __future__ import annotations

import gzip
from pathlib import Path

import pandas as pd
import pytest

from stopwise.errors import FileFormatError, LimitError, ValidationError
from stopwise.records._tables import format_of, read_table


@pytest.mark.parametrize(
    ("name", "fmt"),
    [("a.csv", "csv"), ("a.CSV.gz", "csv"), ("a.jsonl", "jsonl"), ("a.ndjson.gz", "jsonl"), ("a.parquet", "parquet"), ("a.pq", "parquet")],
)
def test_the_format_follows_the_suffix(name: str, fmt: str) -> None:
    assert format_of(Path(name), None) == fmt


def test_every_format_gives_the_same_cells(tmp_path: Path) -> None:
    frame = pd.DataFrame({"task": ["t1", "t2"], "group": ["a", "b"]})
    frame.to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "t.csv.gz").write_bytes(gzip.compress((tmp_path / "t.csv").read_bytes()))
    frame.to_json(tmp_path / "t.jsonl", orient="records", lines=True)
    frame.to_parquet(tmp_path / "t.parquet", index=False)
    for name in ("t.csv", "t.csv.gz", "t.jsonl", "t.parquet"):
        cells = read_table(tmp_path / name, what="tasks file").cells
        assert {k: v.tolist() for k, v in cells.items()} == {"task": ["t1", "t2"], "group": ["a", "b"]}, name


def test_problems_name_the_file_and_what_it_should_be(tmp_path: Path) -> None:
    with pytest.raises(FileFormatError, match=r"none\.csv: no such file$"):
        read_table(tmp_path / "none.csv", what="tasks file")
    with pytest.raises(FileFormatError, match=r"is a directory, expected a tasks file$"):
        read_table(tmp_path, what="tasks file")
    (tmp_path / "e.jsonl").write_text("")
    with pytest.raises(FileFormatError, match=r"e\.jsonl: the file is empty; an outcome file needs a header and at least one row"):
        read_table(tmp_path / "e.jsonl", what="outcome file")
    (tmp_path / "b.jsonl").write_text("\n\n")
    with pytest.raises(FileFormatError, match="the file has no rows; a task list needs at least one JSON object"):
        read_table(tmp_path / "b.jsonl", what="task list")
    (tmp_path / "n.jsonl").write_text('{"task": "t", "tags": ["x"]}\n')
    with pytest.raises(ValidationError, match=r"n\.jsonl, row 1, field 'tags': must be a single value; got \['x'\]"):
        read_table(tmp_path / "n.jsonl")
    assert read_table(tmp_path / "n.jsonl", lists=("tags",)).cells["tags"].tolist() == [["x"]]
    (tmp_path / "x.txt").write_text("task\nt\n")
    with pytest.raises(FileFormatError, match="cannot tell the format from the file name"):
        read_table(tmp_path / "x.txt")
    assert read_table(tmp_path / "x.txt", format="csv").cells["task"].tolist() == ["t"]


def test_a_parquet_file_is_refused_past_its_decoded_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Dictionary and run-length encoding make 200,000 rows a file of a few KB; the decoded bytes are what count."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = pa.table({"system": ["A"] * 50_000, "task": ["t"] * 50_000, "outcome": [1.0] * 50_000})
    path = tmp_path / "o.parquet"
    with pq.ParquetWriter(path, rows.schema, compression="zstd") as writer:
        for _ in range(4):
            writer.write_table(rows)
    assert path.stat().st_size < 20_000
    decoded = read_table(path, what="outcome file").cells  # 200,000 rows, 2.6 MB decoded: inside the default limit
    assert len(decoded["system"]) == 200_000
    monkeypatch.setenv("STOPWISE_MAX_DECOMPRESSED_BYTES", "1000000")
    with pytest.raises(LimitError, match=r"o\.parquet \(decoded\): exceeds the limit of 1,000,000 bytes \(200,000 rows declared; STOPWISE_MAX_DECOMPRESSED_BYTES"):
        read_table(path, what="outcome file")
