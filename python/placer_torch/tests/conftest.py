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
