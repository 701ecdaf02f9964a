"""Tests of the code-base readers' pure parts, each expected figure worked
by hand beside it (the readers themselves run on the fetched mirrors:
make codebase-bench-data).

    python3 -m unittest discover -s tools/measure/codebases -p 'test_*.py'
"""

import unittest

# unittest discover -s tools/measure/codebases puts this folder first on sys.path.
import codebases_bench as cb  # noqa: E402


class NanotronFlopsTest(unittest.TestCase):
    def test_get_flops_per_token(self):
        # 1.34B: 16 layers, h 2,048, 32 heads, FFN 8,192, vocabulary
        # 131,072, sequence 4,096. A token's forward: 16 x (QKV 6h^2 =
        # 25,165,824 + attention 4sh = 33,554,432 + out 2h^2 = 8,388,608
        # + MLP 6h x 8,192 = 100,663,296) = 2,684,354,560, LM head 2h x
        # 131,072 = 536,870,912; x 3 = 9,663,676,416.
        self.assertEqual(cb.nanotron_flops_per_token(16, 2048, 32, 32, 8192, 131072, 4096), 9663676416)
        # 3.57B (28 layers, h 3,072, FFN 8,192): 28 x (56,623,104 +
        # 50,331,648 + 18,874,368 + 150,994,944) = 7,751,073,792, LM head
        # 805,306,368; x 3 = 25,669,140,480: the script's own comment,
        # 363.66 TFLOP/s at 14,167.25 tokens/s/GPU, is 25.669 GFLOP.
        self.assertEqual(cb.nanotron_flops_per_token(28, 3072, 32, 32, 8192, 131072, 4096), 25669140480)
        self.assertAlmostEqual(363.66e12 / 14167.25 / 1e9, 25.669, places=3)


class PartsTest(unittest.TestCase):
    def test_validation_rules(self):
        for got, want in (
            (cb.nanotron_part("3.57"), "validation"),
            (cb.nanotron_part("1.34"), "development"),
            (cb.nanotron_part("80.0"), "development"),
            (cb.fms_part("compile", "H100"), "validation"),
            (cb.fms_part("compile", "A100"), "development"),
            (cb.fms_part("eager", "H100"), "development"),
        ):
            self.assertEqual(got, want)


class TablesTest(unittest.TestCase):
    def test_md_tables_drops_separators(self):
        text = "# T\nsome words\n| a | b |\n|---|:-:|\n| 1 | 2 |\n\n| c |\n|---|\n| 3 |\n"
        tabs = cb.md_tables(text)
        self.assertEqual([t[2] for t in tabs], [[["a", "b"], ["1", "2"]], [["c"], ["3"]]])
        self.assertEqual(tabs[0][:2], ("T", "some words"))


if __name__ == "__main__":
    unittest.main()
