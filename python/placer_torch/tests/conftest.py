"""Each test file's groups: the pytest markers (pyproject.toml) by which
make runs the tests as groups, chosen here by the file's folder or name,
the first entry that matches. make test runs its two Python groups side by
side, balanced by their time (the Makefile, above
test-python-venv-tools): a file moved to another group moves that balance.
A test file that no entry names is an error, not a test no group runs."""

import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))

GROUPS = [
    ("test_imports.py", ("package", "debian")),
    ("test_groups.py", ("package", "debian")),
    ("profile/", ("package",)),
    ("exporter/", ("commands", "debian")),
    ("experts/", ("commands", "debian")),
    ("runner/test_runner.py", ("commands", "debian_runner")),
    ("runner/", ("debian",)),
    ("transformer/", ("debian",)),
]


def groups(rel):
    """The markers of the test file at rel (relative to tests/, with /),
    or None where no entry names it."""
    for prefix, marks in GROUPS:
        if rel == prefix or (prefix.endswith("/") and rel.startswith(prefix)):
            return marks
    return None


def pytest_ignore_collect(collection_path, config):
    """With -m naming one group (as make runs them), the test files of other
    groups are not imported at all: their imports (torch's modules, the
    other suites' helpers) cost a group time for tests it then deselects.
    Any other -m expression imports every file and deselects by markers."""
    want = config.getoption("markexpr")
    name = os.path.basename(str(collection_path))
    if want not in {m for _, marks in GROUPS for m in marks} or not (name.startswith("test_") and name.endswith(".py")):
        return None
    marks = groups(os.path.relpath(str(collection_path), HERE).replace(os.sep, "/"))
    return True if marks is not None and want not in marks else None


@pytest.hookimpl(tryfirst=True)  # before -m deselects by the markers
def pytest_collection_modifyitems(config, items):
    missing = set()
    for item in items:
        rel = os.path.relpath(str(item.path), HERE).replace(os.sep, "/")
        marks = groups(rel)
        if marks is None:
            missing.add(rel)
            continue
        for m in marks:
            item.add_marker(m)
    if missing:
        raise pytest.UsageError("tests/%s: in no group of tests/conftest.py's GROUPS" % ", tests/".join(sorted(missing)))
