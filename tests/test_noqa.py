"""``--add-noqa``'s directives (npulint.noqa): nothing for what the engine reports about a file."""

from npulint.model import Finding
from npulint.noqa import add_noqa
from npulint.registry import engine_codes

TEXT = "import torch_npu\nx = 1\n"


def test_add_noqa_adds_nothing_for_the_engines_findings():
    assert engine_codes()
    for code in sorted(engine_codes()):
        assert add_noqa(TEXT, "python", [Finding("t.py", 2, 1, code, "m", 2, 1)]) == (TEXT, 0), code
    # the twin: a rule's finding on the same line gets its directive
    assert add_noqa(TEXT, "python", [Finding("t.py", 2, 1, "NPU103", "m", 2, 1)]) == \
        ("import torch_npu\nx = 1  # noqa: NPU103\n", 1)
