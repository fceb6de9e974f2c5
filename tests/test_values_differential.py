"""tools/pydiff.py: npulint's certain values against what CPython computes at the same
point of generated programs (RULES.md "General semantics": resolve what is certain, never
guess). A plain run checks the harness on two fixed programs; ``pytest --slow`` runs a
seeded batch of generated ones (docs/internals.md, "Differential testing of values")."""

import pytest

from conftest import load_tool

pydiff = load_tool("pydiff")

# pkg/a.py imports itself and stores into its own global through that import, and reads
# after a main guard that import skips: npulint named 1 and 8 here before the fixes
AGREE = {
    "pkg/__init__.py": "",
    "pkg/a.py": "import pkg.a as me\nZ = 1\nW = 2\nme.Z = 0.5\nif __name__ == '__main__':\n    W = 8\n"
                "probe(1, Z)\nprobe(2, W)\nprobe(3, W + 1)\n",
    "main.py": "import os\nimport pkg.a\nN = 3\nif os.environ.get('NPD_A'):\n    N = 4\nprobe(4, N)\n"
               "M = (N, 2)\nprobe(5, 7 // 2)\nprobe(6, [1, 2][0] + 1.5)\nprobe(7, pkg.a.W)\n",
}


def test_harness_reports_only_certain_values_python_disagrees_with(tmp_path):
    pydiff.write(AGREE, str(tmp_path))
    runs = pydiff.python_side(str(tmp_path))
    # what npulint calls certain (by probe id; the rest is unknown to it) is what CPython gives
    certain = pydiff.npulint_side(AGREE, str(tmp_path))
    assert certain == {5: 3, 6: 2.5}
    assert pydiff.compare(certain, runs) == []
    # every environment setting runs the program, and one run that gives another value is
    # enough: probe 4 is 3 or 4, as NPD_A is unset or set; 1 and 2 are 0.5 and 2 (import)
    assert pydiff.compare({4: 3, 1: 1, 2: 2, 5: 3}, runs) == [(4, 3, ["3", "4"]), (1, 1, ["0.5"])]


@pytest.mark.skipif("not config.getoption('--slow')")
def test_generated_programs_agree_with_cpython():
    bad = []
    for seed in range(40):
        files = pydiff.generate(seed, seed % 2 == 1)
        found = pydiff.check(files)
        if found:
            bad.append((seed, found))
    for name, files in pydiff.CASES.items():
        found = pydiff.check(files)
        if found:
            bad.append((name, found))
    assert bad == []
