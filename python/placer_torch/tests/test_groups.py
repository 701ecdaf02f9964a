"""tests/conftest.py's groups: each test file's make groups by its folder
or name, and none for a file that no entry names (an error there, not a
test that no group runs)."""

import unittest

from .conftest import groups


class GroupsTest(unittest.TestCase):
    def test_groups(self):
        for rel, want in (
                ("test_imports.py", ("package", "debian")),
                ("test_groups.py", ("package", "debian")),
                ("profile/test_fp8.py", ("package",)),
                ("exporter/test_moe.py", ("commands", "debian")),
                ("experts/test_experts.py", ("commands", "debian")),
                ("runner/test_runner.py", ("commands", "debian_runner")),  # the file before its folder
                ("runner/test_torchplan.py", ("debian",)),
                ("transformer/test_megatron.py", ("debian",)),
                ("newfolder/test_x.py", None),
                ("test_other.py", None),
                ("runnerx/test_x.py", None),  # a folder's name, not a prefix of it
        ):
            with self.subTest(rel=rel):
                self.assertEqual(groups(rel), want)
