"""Shared fixtures of the Python package's tests (run by `make test-python`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def spillway_tool() -> str:
    """The `spillway` tool that the package installed next to the interpreter."""
    tool = Path(sys.executable).parent / "spillway"
    if not tool.exists():
        pytest.fail(f"no {tool}: install the package with `pip install .` (make test-python does)")
    return str(tool)


def generate_lineitem(spillway_tool: str, directory: Path, scale: str) -> Path:
    """TPC-H lineitem at `scale` as `directory`/lineitem.parquet, made by `spillway generate`."""
    path = directory / "lineitem.parquet"
    subprocess.run([spillway_tool, "generate", "--table", "lineitem", "--scale", scale, "-o", str(path), "--quiet"],
                   check=True)
    return path


@pytest.fixture(scope="session")
def lineitem_parquet(tmp_path_factory: pytest.TempPathFactory, spillway_tool: str) -> Path:
    """TPC-H lineitem at scale 0.05 (about 300,000 rows) as a Parquet file."""
    return generate_lineitem(spillway_tool, tmp_path_factory.mktemp("lineitem"), "0.05")
