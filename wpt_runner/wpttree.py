"""Locating a WPT tree: a checkout / extracted tree, or a bare git directory
from which the needed top-level directories are extracted into a cache."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

EXTRACT_DIRS = ("webnn", "resources", "interfaces", "common")


def cache_root() -> str:
    return os.path.join(os.path.expanduser("~"), ".cache", "pywebnn", "wpt")


def is_tree(path: str) -> bool:
    return os.path.isfile(os.path.join(path, "resources", "testharness.js"))


def is_bare_git(path: str) -> bool:
    return (os.path.isfile(os.path.join(path, "HEAD"))
            and os.path.isdir(os.path.join(path, "objects"))
            and os.path.isdir(os.path.join(path, "refs")))


def _git(git_dir: str, *args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "--git-dir", git_dir, *args], check=True, **kw)


def short_commit(git_dir: str) -> str:
    out = _git(git_dir, "rev-parse", "--short=7", "HEAD", capture_output=True, text=True)
    return out.stdout.strip()


def extract(git_dir: str, cache: str | None = None, dirs=EXTRACT_DIRS, log=None) -> str:
    """Extract ``dirs`` of HEAD into ``<cache>/<short-commit>/`` (once).

    Each directory is archived on its own: archiving the whole tree fails
    on partial clones with missing blobs.
    """
    cache = cache or cache_root()
    dest = os.path.join(cache, short_commit(git_dir))
    if is_tree(dest):
        return dest
    os.makedirs(cache, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".extract-", dir=cache)
    try:
        for d in dirs:
            if log:
                log(f"extracting {d}/ from {git_dir} ...")
            archive = subprocess.Popen(
                ["git", "--git-dir", git_dir, "archive", f"--prefix={d}/", f"HEAD:{d}"],
                stdout=subprocess.PIPE)
            untar = subprocess.run(["tar", "-x", "-C", tmp], stdin=archive.stdout)
            archive.stdout.close()
            if archive.wait() != 0 or untar.returncode != 0:
                raise RuntimeError(f"could not extract {d}/ from {git_dir}")
        if os.path.exists(dest):  # an incomplete earlier attempt
            shutil.rmtree(dest)
        os.replace(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest


def newest_cached(cache: str | None = None) -> str | None:
    cache = cache or cache_root()
    try:
        entries = [os.path.join(cache, n) for n in os.listdir(cache) if not n.startswith(".")]
    except FileNotFoundError:
        return None
    trees = [p for p in entries if is_tree(p)]
    return max(trees, key=os.path.getmtime) if trees else None


def resolve(path: str | None, log=None) -> str:
    """Turn ``--wpt`` (or its defaults) into the root of a served tree."""
    if not path:
        path = os.environ.get("WPT_DIR") or newest_cached()
        if not path:
            raise FileNotFoundError(
                "no WPT tree: pass --wpt PATH, set WPT_DIR, or extract one into "
                f"{cache_root()}/<commit>/")
    path = os.path.abspath(os.path.expanduser(path))
    if is_tree(path):
        return path
    if is_bare_git(path):
        return extract(path, log=log)
    git_dir = os.path.join(path, ".git")
    if os.path.isdir(git_dir) and is_bare_git(git_dir):
        # a checkout without resources/ in its work tree (sparse): extract
        return extract(git_dir, log=log)
    raise FileNotFoundError(f"{path} is neither a WPT tree (no resources/testharness.js) "
                            "nor a bare git directory")
