"""CHANGELOG.md follows the version policy it states: its newest released section
is the version in py/webnn_core/__init__.py, and the spec table names it."""
import re
from pathlib import Path

import webnn_core

ROOT = Path(__file__).resolve().parents[2]


def released_versions(text: str) -> list[str]:
    return re.findall(r"^## \[(\d+\.\d+\.\d+(?:-[\w.]+)?)\]", text, re.M)


def test_released_versions_parse():
    assert released_versions("## [Unreleased]\n## [1.2.0] - x\n## [1.1.0-rc.1]\n") == ["1.2.0", "1.1.0-rc.1"]


def test_newest_release_is_the_package_version():
    text = (ROOT / "CHANGELOG.md").read_text()
    assert "## [Unreleased]" in text
    assert released_versions(text)[0] == webnn_core.__version__


def test_spec_table_names_every_release():
    text = (ROOT / "CHANGELOG.md").read_text()
    table = set(re.findall(r"^\| (\d+\.\d+\.\d+(?:-[\w.]+)?) \|", text, re.M))
    assert table == set(released_versions(text))
