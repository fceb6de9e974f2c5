"""tools/tadiff.py: npulint's torchair config rules against torchair's own config classes
(docs/internals.md, "The torchair config rules: the differential harness"). The harness is
checked on a small fake torchair tree written here (the real ones are Ascend/torchair's release
branches, which the tool reads from a mirror and this repository does not hold)."""

from conftest import load_tool

tadiff = load_tool("tadiff")

# the shape of torchair's configs: an OptionValue with an optional list, a strict NpuBaseConfig
# (its __setattr__ behind the tree's own pretty_error_msg, importing torch.distributed and the
# logger as the real modules do)
FAKE = {
    "_utils/error_code.py": "def pretty_error_msg(func):\n    return func\n",
    "configs/_option_base.py": '''
from torchair._utils.error_code import pretty_error_msg
class OptionValue:
    def __init__(self, default, optional=None):
        self.optional = optional
        self._value = self.default = default
    @property
    def value(self):
        return None if self._value is None else str(self._value)
    @value.setter
    def value(self, v):
        if isinstance(self.optional, list) and v not in self.optional:
            raise ValueError(f"Value {v!r} not in optional list")
        self._value = v
class NpuBaseConfig:
    def __init__(self):
        self._fixed_attrs = [k for k, v in self.__dict__.items() if isinstance(v, (OptionValue, NpuBaseConfig))]
    @pretty_error_msg
    def __setattr__(self, key, value):
        if hasattr(self, "_fixed_attrs"):
            if key not in self._fixed_attrs:
                raise ValueError(type(self).__name__ + " has no option " + key)
            if isinstance(getattr(self, key), OptionValue):
                getattr(self, key).value = value
                return
        super().__setattr__(key, value)
''',
    "configs/compiler_config.py": '''
import torch.distributed as dist
from torchair.core.utils import logger
from torchair.configs._option_base import OptionValue, NpuBaseConfig
class _DebugConfig(NpuBaseConfig):
    def __init__(self):
        self.run_eagerly = OptionValue(False, [True, False])
        super().__init__()
class CompilerConfig(NpuBaseConfig):
    def __init__(self):
        assert not dist.is_initialized()
        self.debug = _DebugConfig()
        self.mode = OptionValue("max-autotune", ["max-autotune", "reduce-overhead"])
        super().__init__()
''',
}


def fake_tree(tmp_path):
    for rel, text in FAKE.items():
        p = tmp_path / "python" / "torchair" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return str(tmp_path)


CASES = [["config.debug.run_eagerly = 'yes'"], ["config.debug.run_eagerly = 1"],
         ["config.mode = 'x'", "config.debug.run_eagerly = 2"], ["config.debug.nope = 1"],
         ["config.debug.run_eagerly += 1"]]


def test_oracle_runs_torchair_classes_from_the_tree(tmp_path):
    got = tadiff.oracle(fake_tree(tmp_path), CASES)
    assert set(got["schema"]) == {"debug", "debug.run_eagerly", "mode"}
    assert got["schema"]["debug.run_eagerly"]["optional"] == "[True, False]"
    raised = [c[:2] for c in got["cases"]]
    assert raised == [[0, "ValueError"], [-1, None], [0, "ValueError"], [0, "ValueError"], [0, "TypeError"]]


def finding(line, message, code="NPU204"):
    return {"line": line, "code": code, "message": message}


def test_compare_flags_a_wrong_claim_and_a_silent_raise(tmp_path):
    results = {"master": tadiff.oracle(fake_tree(tmp_path), CASES)}
    findings = {"master": {
        0: [finding(3, "`config.debug.run_eagerly` ... torchair raises ValueError at this assignment")],  # right
        1: [finding(3, "`config.debug.run_eagerly` ... torchair raises ValueError at this assignment")],  # FP
        # the second statement never runs: nothing said of it can be wrong
        2: [finding(4, "`config.debug.run_eagerly` ... torchair raises ValueError at this assignment")],
        3: [finding(3, "`config.debug.nope` ... so the value is stored and ignored", "NPU206")],  # FP
        4: [finding(3, "`config.debug.run_eagerly` ... Python raises AttributeError here", "NPU206")],  # FP
    }}
    fps, fns = tadiff.compare(results, findings, CASES)
    assert [f.split(": ")[1].split("]")[0] + "]" for f in fps] == [
        repr(CASES[1]), repr(CASES[3]), repr(CASES[4])]
    assert len(fns) == 1 and repr(CASES[2]) in fns[0]  # config.mode = 'x' raised, nothing said
    findings["master"] = {}
    assert len(tadiff.compare(results, findings, CASES)[1]) == 4  # each raise npulint is silent on


def test_named_releases():
    assert tadiff.named_releases("(torchair 7.2.0 to master)") == ["7.2.0", "7.3.0", "26.0.0", "master"]
    assert tadiff.named_releases("torchair 7.1.0, 26.0.0 has no option") == ["7.1.0", "26.0.0"]
    assert tadiff.named_releases("no release named") == list(tadiff.RELEASES)
