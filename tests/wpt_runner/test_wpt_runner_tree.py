"""Unit tests: resolving --wpt (tree, bare git extraction, cache default)."""

import os
import subprocess

import pytest

from wpt_runner import wpttree


def git(*args, cwd=None):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("WPT_DIR", raising=False)
    return tmp_path / "home"


def test_tree_is_used_in_place(fixture_tree, home):
    assert wpttree.resolve(fixture_tree) == os.path.abspath(fixture_tree)


def test_bare_git_is_extracted_to_cache(tmp_path, home):
    work = tmp_path / "work"
    for d in ("webnn", "resources", "interfaces", "common", "css"):
        (work / d).mkdir(parents=True)
        (work / d / "f.txt").write_text(d)
    (work / "resources" / "testharness.js").write_text("// th")
    git("init", "-q", str(work))
    git("add", ".", cwd=work)
    git("commit", "-q", "-m", "x", cwd=work)
    bare = tmp_path / "bare.git"
    git("clone", "-q", "--bare", str(work), str(bare))

    root = wpttree.resolve(str(bare))
    short = wpttree.short_commit(str(bare))
    assert root == os.path.join(str(home), ".cache", "pywebnn", "wpt", short)
    assert sorted(os.listdir(root)) == ["common", "interfaces", "resources", "webnn"]
    assert (open(os.path.join(root, "webnn", "f.txt")).read()) == "webnn"
    # second time: reuse; and the newest cached tree is the default
    assert wpttree.resolve(str(bare)) == root
    assert wpttree.resolve(None) == root


def test_env_and_errors(fixture_tree, home, monkeypatch, tmp_path):
    with pytest.raises(FileNotFoundError):
        wpttree.resolve(None)
    monkeypatch.setenv("WPT_DIR", fixture_tree)
    assert wpttree.resolve(None) == os.path.abspath(fixture_tree)
    with pytest.raises(FileNotFoundError):
        wpttree.resolve(str(tmp_path))
