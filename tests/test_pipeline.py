"""The pipeline's guarantees: one traversal for all rules, a crashing rule becomes NPU000
without losing other findings or files, the prefilter skips parsing, rules load from a
source checkout too."""

import os
import re
import subprocess
import sys
import types

import libcst as cst
import pytest

from conftest import REPO, codes
from npulint import analyse as analyse_module, inputs, pipeline, project, registry, workers
from npulint.core import analyse_file
from npulint.checker import Checker
from npulint.config import Settings, enabled_codes
from npulint.model import Rule

PREFETCH_CLASH = """\
from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope
with npu_weight_prefetch_scope():
    pass
with npu_weight_prefetch_scope(0, 1024):
    pass
"""

BOOM = Rule(code="NPU999", name="boom", severity="error", summary="s", explanation="e", source="test")


class Boom(Checker):
    rules = (BOOM,)
    tokens = (("npu_weight_prefetch_scope",),)

    def visit_With(self, node):
        raise ValueError("kaboom")


class CountingChecker(Checker):
    rules = (Rule(code="NPU998", name="count", severity="error", summary="s", explanation="e", source="t"),)
    tokens = ()
    visits = 0

    def visit_Module(self, node):
        type(self).visits += 1


def _run(tmp_path, files, extra=(), select=None):
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    rules, checkers = registry.load()
    all_rules = list(rules) + [r for c in extra for r in c.rules]
    enabled = enabled_codes(all_rules, select, [], [])
    paths = [(str(tmp_path / n), "python", True) for n in sorted(files)]
    return pipeline.run(paths, Settings(root=str(tmp_path)), list(checkers) + list(extra), enabled)


def test_crashing_rule_is_reported_and_other_rules_and_files_go_on(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = _run(tmp_path, {"a.py": PREFETCH_CLASH, "b.py": PREFETCH_CLASH}, extra=[Boom])
    assert codes(result.findings) == ["NPU000", "NPU101", "NPU000", "NPU101"]
    internal = result.findings[0]
    assert "Boom" in internal.message and "ValueError: kaboom" in internal.message
    assert (internal.line, internal.column) == (2, 1)


def test_every_enabled_checker_shares_one_traversal(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    parses = []
    real_parse = cst.parse_module
    monkeypatch.setattr(pipeline.cst, "parse_module", lambda text: parses.append(1) or real_parse(text))
    CountingChecker.visits = 0
    _run(tmp_path, {"a.py": PREFETCH_CLASH}, extra=[CountingChecker])
    assert parses == [1]
    assert CountingChecker.visits == 1


def test_prefilter_skips_parsing_files_without_relevant_names(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    parses = []
    real_parse = cst.parse_module
    monkeypatch.setattr(pipeline.cst, "parse_module", lambda text: parses.append(1) or real_parse(text))
    result = _run(tmp_path, {"plain.py": "import os\nprint(os.getcwd())\n", "broken.py": "def (:\n"})
    assert parses == []
    assert result.findings == [] and result.parsed == 0 and result.files == 2


def test_disabled_rules_do_not_parse(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    parses = []
    real_parse = cst.parse_module
    monkeypatch.setattr(pipeline.cst, "parse_module", lambda text: parses.append(1) or real_parse(text))
    result = _run(tmp_path, {"a.py": PREFETCH_CLASH}, select=["NPU4"])
    assert parses == [] and result.findings == []


def test_rules_load_from_a_source_checkout_without_installing():
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import npulint, os; "
        "assert os.path.dirname(npulint.__file__) == os.path.join(sys.argv[1], 'npulint'), npulint.__file__; "
        "from npulint import registry; engine = registry.engine_codes(); rules, checkers = registry.load(); "
        "print(len(rules), len(checkers), len(engine))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(REPO)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    n_rules, n_checkers, n_engine = map(int, out.stdout.split())
    assert n_rules == len(registry.load()[0]) and n_checkers == len(registry.load()[1])
    assert n_engine == len(registry.engine_codes()) > 0


def test_a_warm_run_reports_unused_noqa_without_libcst_or_the_checkers(cli_run, project):
    # NPU003 is made on every run (suppression), from the cached directives: its class comes
    # from rules/engine.py alone; and its fix (remove the code) is resolved without the rule
    # table (a fix carries its rule's applicability)
    args = [".", "--extend-select", "NPU003"]
    root = project({"a.py": "import torch_npu\nx = 1  # noqa: NPU101\n"})
    assert cli_run(args, root).stdout.startswith("a.py:2:8: NPU003 ")
    code = ("import sys\nfrom npulint.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "heavy = sorted(m for m in sys.modules if m == 'libcst' or m == 'npulint.lintrule'\n"
            "               or (m.startswith('npulint.rules.') and m != 'npulint.rules.engine'))\n"
            "print('HEAVY', heavy, file=sys.stderr)\n")
    r = subprocess.run([sys.executable, "-c", code, *args], cwd=str(root), capture_output=True, text=True, timeout=120)
    assert r.stdout.startswith("a.py:2:8: NPU003 "), r.stdout + r.stderr
    assert "HEAVY []" in r.stderr, r.stderr


def test_display_paths_are_relative_under_cwd(tmp_path):
    assert pipeline.display_path(str(tmp_path / "a" / "b.py"), str(tmp_path)) == os.path.join("a", "b.py")
    assert pipeline.display_path("/elsewhere/x.py", str(tmp_path)) == "/elsewhere/x.py"


LAYERS = ("import torch\nimport torchair as tng\nclass Layer(torch.nn.Module):\n    def __init__(self):\n"
          "        super().__init__()\n        self.ev = tng.ops.npu_create_tagged_event(tag='x')\n")


def _count_parses(monkeypatch, tmp_path) -> list:
    """Run in *tmp_path*, counting LibCST parses (one entry per parse)."""
    monkeypatch.chdir(tmp_path)
    parses = []
    real_parse = cst.parse_module
    monkeypatch.setattr(pipeline.cst, "parse_module", lambda text: parses.append(1) or real_parse(text))
    return parses


def test_follow_up_parses_a_skipped_file_once_for_cross_file_facts(tmp_path, monkeypatch):
    # run.py mentions no torchair API, but it instantiates the Layer whose __init__ creates a
    # tagged event: the follow-up phase parses it (once) so NPU306 sees both instances.
    parses = _count_parses(monkeypatch, tmp_path)
    result = _run(tmp_path, {"layers.py": LAYERS, "run.py": "from layers import Layer\na = Layer()\nb = Layer()\n",
                             "other.py": "print('unrelated')\n"})
    assert codes(result.findings) == ["NPU306"]
    assert len(parses) == 2 and result.parsed == 2



def test_follow_up_names_match_as_whole_words(tmp_path, monkeypatch):
    """A follow-up name that is an identifier (the class Layer) selects a skipped file only
    where it stands as a whole word: `LayerNorm` and `MyLayer` do not name it."""
    parses = _count_parses(monkeypatch, tmp_path)
    result = _run(tmp_path, {"layers.py": LAYERS, "norm.py": "class LayerNorm: pass\nclass MyLayer: pass\n",
                             "run.py": "import layers\na = layers.Layer()\nb = layers.Layer()\n"})
    assert codes(result.findings) == ["NPU306"]
    assert len(parses) == 2 and result.parsed == 2  # layers.py and run.py, not norm.py
    assert project._token_pattern(["Layer", ".apply"]).search("x = (f).apply(y)")


def test_follow_up_wants_a_class_with_its_module(tmp_path, monkeypatch):
    """A class can be instantiated elsewhere only where its module is imported: a file that
    says `Layer` but never names the module `layers` is not parsed for it; one that imports
    the module's package and takes the module from it is."""
    parses = _count_parses(monkeypatch, tmp_path)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    result = _run(tmp_path, {"pkg/layers.py": LAYERS,
                             "pkg/other.py": "class Layer: pass\na = Layer()\nb = Layer()\n",
                             "pkg/run.py": "from pkg import layers\na = layers.Layer()\nb = layers.Layer()\n"})
    assert codes(result.findings) == ["NPU306"]
    assert len(parses) == 2 and result.parsed == 2  # layers.py and run.py, not other.py


def test_follow_up_skips_classes_no_other_file_can_import(tmp_path, monkeypatch):
    """A class defined in a function cannot be imported: its name selects no other file."""
    parses = _count_parses(monkeypatch, tmp_path)
    local = ("import torchair as tng\ndef make():\n    class Layer:\n        def __init__(self):\n"
             "            self.ev = tng.ops.npu_create_tagged_event(tag='x')\n    return Layer()\n")
    result = _run(tmp_path, {"layers.py": local, "run.py": "class Layer: pass\nLayer()\nLayer()\n"})
    assert codes(result.findings) == []
    assert len(parses) == 1 and result.parsed == 1


AUTOGRAD_MODEL = """\
import torch


class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x


class M(torch.nn.Module):
    def forward(self, x):
        return F.apply(x)
"""
AMO_LAUNCH = "torchrun --nproc_per_node 8 pretrain_gpt.py --adaptive-memory-optimization\n"


def _run_files(tmp_path, files):
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    rules, checkers = registry.load()
    enabled = enabled_codes(rules, None, [], [])
    paths = [(str(tmp_path / n), "shell" if n.endswith(".sh") else "python", True) for n in sorted(files)]
    # the launches combine AMO with recompute/swap flags: a conflict on the core_r0.8.0-era
    # MindSpeed releases (their legacy validator)
    settings = Settings(root=str(tmp_path), releases={"mindspeed": ("2.0.0_core_r0.8.0", "2.1.0_core_r0.8.0")})
    return pipeline.run(paths, settings, checkers, enabled)


def test_autograd_apply_is_parsed_only_in_a_run_that_enables_amo(tmp_path, monkeypatch):
    """`.apply` and `autograd` are common (model.apply(init), custom Functions): NPU503 needs
    them only when some launch enables AMO, so without one such files are not parsed."""
    monkeypatch.chdir(tmp_path)
    result = _run_files(tmp_path, {"model.py": AUTOGRAD_MODEL, "run.sh": "torchrun pretrain_gpt.py --bf16\n"})
    assert result.findings == [] and result.parsed == 1  # the launch script only
    result = _run_files(tmp_path, {"model.py": AUTOGRAD_MODEL, "run.sh": AMO_LAUNCH})
    assert [(f.path, f.code) for f in result.findings] == [("model.py", "NPU503")]
    assert result.parsed == 2


def test_autograd_apply_joins_a_file_parsed_for_another_rule(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    model = AUTOGRAD_MODEL.replace("import torch\n", "import torch\nimport torchair as tng\n"
                                   "with tng.scope.npu_stream_switch('1', 0):\n    pass\n")
    result = _run_files(tmp_path, {"model.py": model, "run.sh": AMO_LAUNCH})
    assert [(f.path, f.code) for f in result.findings] == [("model.py", "NPU503")]


def test_launch_lists_select_a_file_only_when_they_can_matter(tmp_path, monkeypatch):
    """`subprocess`/`sys.argv` are everywhere; a launch list matters only when it names a
    training entry or enables AMO, or when `sys.argv` is set in the entry script itself."""
    monkeypatch.chdir(tmp_path)
    tool = ("import subprocess, sys\nsubprocess.run(['python', 'tool.py', '--swap-attention'])\n"
            "sys.argv = ['tool.py', '--recompute-in-bubble']\n")
    result = _run_files(tmp_path, {"tool.py": tool})
    assert result.findings == [] and result.parsed == 0
    bad = "'--adaptive-memory-optimization', '--swap-attention'"
    for name, text in {
        "a.py": f"import subprocess\nsubprocess.run(['torchrun', 'pretrain_gpt.py', {bad}])\n",
        "b.py": f"import os\nos.execv('/bin/python', ['python', 'finetune_x.py', {bad}])\n",
        # (an entry script judged by Megatron's rules: it uses Megatron's parser)
        "posttrain_gpt.py": f"import sys\nfrom megatron.training import pretrain\nsys.argv = ['prog', {bad}]\n",
    }.items():
        result = _run_files(tmp_path, {name: text})
        assert [(f.path, f.code) for f in result.findings] == [(name, "NPU501")], name
        assert result.parsed == 1
        (tmp_path / name).unlink()


def test_entry_prefixes_cover_every_training_entry():
    from npulint.rules.mindspeed import ENTRY_PREFIXES
    from npulint.rules.mindspeed_catalog import TRAINING_ENTRIES

    alternatives = re.match(r"\(([a-z|]+)\)_", TRAINING_ENTRIES).group(1).split("|")
    assert sorted(p + "_" for p in alternatives) == sorted(ENTRY_PREFIXES)


def test_shell_scripts_without_a_training_entry_or_amo_are_not_parsed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = _run_files(tmp_path, {"convert.sh": "python convert_ckpt.py --swap-attention --recompute-in-bubble\n"})
    assert result.findings == [] and result.parsed == 0
    result = _run_files(tmp_path, {"train.sh": "ENTRY=pretrain_gpt.py\npython $ENTRY --swap-attention "
                                               "--adaptive-memory-optimization\n"})
    assert [(f.path, f.code) for f in result.findings] == [("train.sh", "NPU501")] and result.parsed == 1


def test_findings_at_one_place_come_in_the_same_order_whatever_the_hash_seed(tmp_path):
    """Two requirements of one flag give two NPU504s at one token; their order must not
    depend on string hashing (the findings pass through a set)."""
    (tmp_path / "pyproject.toml").write_text('[tool.npulint.releases]\nmindspeed-llm = "2.0.0"\n')
    (tmp_path / "train.sh").write_text("torchrun pretrain_gpt.py --moe-router-load-balancing-type group_limited_greedy\n")
    # the four children run at once (they share nothing but the files they read)
    children = [subprocess.Popen([sys.executable, "-m", "npulint", "--no-cache", "train.sh"], cwd=str(tmp_path),
                                 env=dict(os.environ, PYTHONHASHSEED=seed), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True) for seed in ("1", "2", "3", "4")]
    outs = set()
    try:
        for child in children:
            out, err = child.communicate(timeout=120)
            assert out.count("NPU504") >= 2, out + err
            outs.add(out)
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.communicate()
    assert len(outs) == 1


def test_parse_skips_node_validation_only_while_parsing():
    """analyse._parse builds the tree without LibCST's per-node validation (the parser's
    nodes come from accepted source); the tree is the one a validated parse gives, and every
    node built afterwards, also after a failed parse, is validated again."""
    text = "import torchair as tng\nwith tng.scope.npu_stream_switch('1', 3):\n    x = f(a, *b, k=1)  # c\n"
    assert analyse_module._parse(text, True).deep_equals(cst.parse_module(text))
    with pytest.raises(cst.CSTValidationError):
        cst.Name("two words")
    with pytest.raises(cst.ParserSyntaxError):
        analyse_module._parse("x = (\n", False)
    with pytest.raises(cst.CSTValidationError):
        cst.Name("two words")


def test_display_paths_outside_cwd_and_unnormalized_paths():
    """The lexical shortcut for paths outside the working folder, and relpath where the
    path is not normalized."""
    assert pipeline.display_path("/a/bc/x.py", "/a/b") == "/a/bc/x.py"
    assert pipeline.display_path("/a/x/../b/y.py", "/a/b") == "y.py"
    assert pipeline.display_path("/a/b", "/a/b") == "."


_NO_CYCLE = {
    "a config and its backends": (
        "import torchair\nimport torch\nconfig = torchair.CompilerConfig()\n"
        "config.mode = 'reduce-overhead'\nbackend = torchair.get_npu_backend(compiler_config=config)\n"
        "model = torch.compile(model, backend=backend)\n"
        "with torchair.scope.npu_stream_switch('1', 3):\n    y = f(x)\n"),
    # a fix that finds its node's path (checker._path_to: NPU202's removal)
    "a fix": (
        "import torch\nimport torchair\nconfig = torchair.CompilerConfig()\nconfig.mode = 'reduce-overhead'\n"
        "config.aclgraph_config.use_custom_pool = torch.npu.graph_pool_handle()\n"
        "config.debug.aclgraph.disable_mempool_reuse_in_same_fx = False\n"
        "backend = torchair.get_npu_backend(compiler_config=config)\n"),
    # a module class's construction (StreamsAnalysis._held and its nested functions)
    "a module class": (
        "import torch\nimport torchair as tng\nclass M(torch.nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.ev = tng.ops.npu_create_tagged_event(tag='a')\n"
        "    def forward(self, x):\n        tng.ops.npu_tagged_event_wait(self.ev)\n        return x\n"),
}


@pytest.mark.parametrize("case", sorted(_NO_CYCLE))
def test_a_linted_file_leaves_no_cycle_holding_its_tree(case):
    """Each file's tree is freed by reference counting when the file is done: a cycle
    through a checker's records (a config and its backends point at each other), a class made
    per call or nested functions that call themselves would keep the whole tree alive until a
    full collection, and the run's collections cost seconds."""
    import gc

    text = _NO_CYCLE[case]
    rules, checkers = registry.load()
    enabled = {r.code for r in rules}
    gc.collect()
    gc.disable()
    try:
        result = analyse_file("/t/m.py", "m.py", "python", text, Settings(root="/t"), checkers, enabled)
        assert result.parsed and (result.facts or result.findings)  # the file was analysed
        if case == "a fix":
            assert any(f.fix is not None for f in result.findings)
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        # the tree's nodes, and npulint's own functions (nested ones that call themselves hold
        # what they close over: the binding table)
        left = [o for o in gc.garbage if isinstance(o, cst.CSTNode) or (
            isinstance(o, types.FunctionType) and o.__module__.startswith("npulint"))]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert left == []


def test_a_launch_script_analysis_leaves_no_cycle():
    """A script's words compute their spans lazily; what they hold must not lead back to the
    script (whose commands hold the words), or every script's analysis waits for the cyclic
    collector, which was half of the time spent on MindSpeed-LLM's 415 launch scripts."""
    import gc

    from npulint import shell

    text = 'ARGS="--tensor-model-parallel-size 2 --bf16"\ntorchrun --nproc_per_node 8 pretrain_gpt.py $ARGS\n'
    gc.collect()
    gc.disable()
    try:
        script, error = shell.parse_script(text)
        assert error is None and script.commands and script.commands[0].words[-1].span is not None
        del script
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        left = [o for o in gc.garbage if isinstance(o, (shell.Script, shell.Arg, shell.Command))]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert left == []


def test_the_collector_is_off_within_a_file_and_back_on_after_it(tmp_path, monkeypatch):
    import gc

    states = []

    def analyse(result, text, settings, active, enabled, module=None):
        states.append(gc.isenabled())
        raise RuntimeError("boom")

    monkeypatch.setattr(analyse_module, "_analyse", analyse)
    inp = inputs._Input(str(tmp_path / "m.py"), "m.py", "python", True, Settings(root=str(tmp_path)), set())
    assert gc.isenabled()
    with pytest.raises(RuntimeError):
        workers._task(inp, "x = 1\n", [])
    assert states == [False] and gc.isenabled()


def test_the_prefilter_looks_for_each_token_once_per_file():
    """The checkers asked about one file share what was found: a token already looked for is
    not looked for again (here a planted answer is taken as given)."""
    rules, checkers = registry.load()
    by_name = {c.__name__: c for c in checkers}
    present = {}
    assert not by_name["ApiSignatureMismatch"].wants("x = 1\n", "m.py", present)
    assert present and not any(present.values())  # every token it asked about, recorded
    assert by_name["ApiSignatureMismatch"].wants("x = 1\n", "m.py", {"npu_init": True})
    assert by_name["AdaptMemWrapperMisuse"].wants("x = 1\n", "m.py", {"adapt_mem_func_wrapper": True})


def test_a_failing_shared_analysis_silences_its_rules_and_names_their_codes(lint, monkeypatch):
    """A rule must not judge from a half-built analysis: when the analysis raises, NPU000 names
    the codes of the rules that read it, and none of them reports anything for the file."""
    from npulint.rules.prefetch import PrefetchAnalysis

    def broken(self):
        raise RuntimeError("boom")

    monkeypatch.setattr(PrefetchAnalysis, "finish", broken)
    src = ("from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope\n"
           "with npu_weight_prefetch_scope(buffer_pool_id=-1):\n    pass\n")
    found = lint(src)
    assert [f.code for f in found] == ["NPU000"]
    assert "PrefetchAnalysis (NPU101, NPU102, NPU103, NPU104, NPU105)" in found[0].message


def test_the_analysis_phase_freezes_the_heap_once_and_never_walks_it_to_ask(monkeypatch):
    """``_gc_tuned`` freezes what was allocated before, once: a nested phase (a forked worker's
    share, inside the parent's) neither freezes again nor unfreezes the outer phase's heap, and
    none asks the collector how much is frozen (that walks the whole frozen heap)."""
    import gc

    def walks(*_):
        raise AssertionError("gc.get_freeze_count() walks the frozen heap")

    assert gc.get_freeze_count() == 0
    monkeypatch.setattr(gc, "get_freeze_count", walks)
    frozen = []
    real_freeze, real_unfreeze = gc.freeze, gc.unfreeze
    monkeypatch.setattr(gc, "freeze", lambda: (frozen.append("freeze"), real_freeze()))
    monkeypatch.setattr(gc, "unfreeze", lambda: (frozen.append("unfreeze"), real_unfreeze()))
    with workers._gc_tuned():
        with workers._gc_tuned():
            pass
        assert frozen == ["freeze"]
    assert frozen == ["freeze", "unfreeze"]
    monkeypatch.undo()
    assert gc.get_freeze_count() == 0
