"""placer reads the config.json files transformers writes (hfconfigs.py):
every model type placer names, built by transformers' own config class
and written by its save_pretrained, read by bin/placer ($PLACER) as the
model it was built as; and the files committed for the Go tests
(graph/transformer/testdata/hf5) are what this transformers writes."""

import os
import tempfile
import unittest

import hfconfigs

HERE = os.path.dirname(os.path.abspath(__file__))
TESTDATA = os.path.join(HERE, "..", "..", "..", "graph", "transformer", "testdata", "hf5")


class HFConfigsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import transformers

        cls.version = transformers.__version__
        cls.tmp = tempfile.TemporaryDirectory()
        cls.paths = hfconfigs.save_all(cls.tmp.name)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_transformers_5(self):
        self.assertEqual(self.version.split(".")[0], "5", "the Makefile pins transformers 5.x (PY_TEST_PINS)")

    def test_every_model_type(self):
        # The model types placer reads, each written (the list is
        # placer's: graph/transformer's HFModelTypes, as its refusal of
        # an unknown model_type names them).
        names = {f.split("-")[0] for f in self.paths}
        for t in ("llama", "mistral", "mixtral", "qwen2", "qwen3", "qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3",
                  "gpt_oss", "gemma3", "gemma3_text", "nemotron", "nemotron_h", "glm4_moe", "llama4", "llama4_text",
                  "qwen3_next"):
            self.assertIn(t, names)

    def test_placer_reads_them(self):
        placer = os.environ.get("PLACER")
        if not placer:
            self.skipTest("PLACER (the placer binary) not set")
        bad = hfconfigs.check(placer, self.paths)
        self.assertEqual(bad, [], "\n".join(bad))

    def test_committed_files_are_transformers(self):
        for f, p in self.paths.items():
            committed = os.path.join(TESTDATA, f + ".json")
            with open(p) as a, open(committed) as b:
                got, want = a.read(), b.read()
            if f'"transformers_version": "{self.version}"' not in want:
                self.skipTest(f"{committed} was written by another transformers than {self.version}")
            self.assertEqual(got, want, f"{committed}: not what transformers {self.version} writes now (hfconfigs.py --testdata)")


if __name__ == "__main__":
    unittest.main()
