"""The release model (RULES.md "Releases"): releases configured, inferred from the project, or
every known one; release-dependent checks report only what every release in effect rejects."""

import json

import pytest

from conftest import codes
from npulint import releases
from npulint.config import Settings

TA = "import torch\nimport torchair as tng\n"


def _compiled(body: str, mode: str = "max-autotune") -> str:
    set_mode = f"cfg.mode = {mode!r}\n" if mode != "max-autotune" else ""
    return (TA + "class M(torch.nn.Module):\n    def forward(self, x):\n" + body +
            "        return x\n" + "cfg = tng.CompilerConfig()\n" + set_mode +
            "model = torch.compile(M(), backend=tng.get_npu_backend(compiler_config=cfg))\n")


RECORD_ONLY = _compiled("        tng.ops.npu_tagged_event_record(EV)\n").replace(
    "class M", "EV = make_event()\nclass M")
CREATED = _compiled("        tng.ops.npu_tagged_event_record(self.ev)\n").replace(
    "    def forward", "    def __init__(self):\n        super().__init__()\n"
                      "        self.ev = tng.ops.npu_create_tagged_event(tag='a')\n    def forward")


def _releases_config(**by_framework) -> str:
    lines = "".join(f"{fw} = {json.dumps(v)}\n" for fw, v in by_framework.items())
    return "[tool.npulint.releases]\n" + lines


# -- torchair: NPU303 holds from 7.2.0 on (7.1.0's GE converters drop the tagged-event ops) --


def test_npu303_release_pair(lint):
    assert codes(lint(CREATED, select=["NPU303"], config=_releases_config(torchair="master"))) == ["NPU303"]
    assert lint(CREATED, select=["NPU303"], config=_releases_config(torchair="7.1.0")) == []


def test_npu303_message_names_the_releases_and_the_upstream_line(lint):
    (f,) = lint(CREATED, select=["NPU303"], config=_releases_config(torchair=["7.3.0", "master"]))
    assert "torchair 7.2.0 to master" in f.message
    assert "Ascend/torchair@fced8842 python/torchair/ops/_tagged_event.py:80,96,125" in f.message


def test_npu303_default_every_release_the_code_can_run_on(lint):
    # npu_create_tagged_event exists from 7.2.0 on: the code cannot run on 7.1.0, and NPU303
    # holds on every release it can run on
    assert codes(lint(CREATED, select=["NPU303"])) == ["NPU303"]
    # an event of unknown origin: the code could be 7.1.0's (ExternalEvent), where the
    # converter drops the op without an error: nothing is said
    assert lint(RECORD_ONLY, select=["NPU303"]) == []
    assert codes(lint(RECORD_ONLY, select=["NPU303"], config=_releases_config(torchair="7.2.0"))) == ["NPU303"]


def test_npu303_clean_twin_in_reduce_overhead(lint):
    assert lint(CREATED.replace("cfg = tng.CompilerConfig()\n",
                                "cfg = tng.CompilerConfig()\ncfg.mode = 'reduce-overhead'\n"),
                select=["NPU303"], config=_releases_config(torchair="master")) == []


# -- torchair: NPU203 holds where a custom pool exists (7.2.0 on; 7.1.0 has no aclgraph_config) --

TWO_GRAPHS = (TA + "cfg = tng.CompilerConfig()\ncfg.mode = 'reduce-overhead'\n{extra}"
              "backend = tng.get_npu_backend(compiler_config=cfg)\n"
              "enc = torch.compile(encoder, backend=backend)\ndec = torch.compile(decoder, backend=backend)\n")


def test_npu203_release_pair(lint):
    src = TWO_GRAPHS.format(extra="")
    assert codes(lint(src, select=["NPU203"], config=_releases_config(torchair="master"))) == ["NPU203"]
    assert lint(src, select=["NPU203"], config=_releases_config(torchair="7.1.0")) == []
    assert lint(src, select=["NPU203"], config=_releases_config(torchair=["7.1.0", "master"])) == []


def test_npu203_message_names_the_releases_and_where_the_pool_option_is(lint):
    (f,) = lint(TWO_GRAPHS.format(extra=""), select=["NPU203"], config=_releases_config(torchair="7.2.0"))
    assert f.message.endswith("(torchair 7.2.0 to master: Ascend/torchair@d20f4f9c "
                              "python/torchair/configs/aclgraph_config.py:13)")


def test_npu203_default_every_release_the_config_can_run_on(lint):
    # nothing pinned, and nothing in the file that 7.1.0 lacks: 7.1.0 stays possible, nothing is said
    assert lint(TWO_GRAPHS.format(extra=""), select=["NPU203"]) == []
    assert lint(TWO_GRAPHS.format(extra="cfg.debug.run_eagerly = False\n"), select=["NPU203"]) == []
    # an option 7.1.0 does not have (from 7.2.0 on): the code cannot run there
    src = TWO_GRAPHS.format(extra="cfg.debug.aclgraph.static_capture_size_limit = 8\n")
    assert codes(lint(src, select=["NPU203"])) == ["NPU203"]


OPTIONS_72 = (TA + "config = tng.CompilerConfig()\n"
              "config.aclgraph_config.use_custom_pool = None\n"
              "config.debug.aclgraph.enable_output_clone = True\n"
              "config.debug.aclgraph.disable_reinplace_inplaceable_ops_pass = True\n")


def test_npu206_an_option_none_of_the_projects_releases_has(lint):
    found = lint(OPTIONS_72, select=["NPU206"], config=_releases_config(torchair="7.1.0"))
    assert [(f.line, f.column) for f in found] == [(4, 1), (5, 1)]
    assert found[0].message == (
        "`config.aclgraph_config.use_custom_pool`: torchair 7.1.0 has no option `aclgraph_config` (it exists from "
        "7.2.0 on: Ascend/torchair@d20f4f9c python/torchair/configs/compiler_config.py:35), so reading "
        "`config.aclgraph_config` raises AttributeError; set it only where the project runs a torchair that has it")
    assert "has no option `debug.aclgraph.enable_output_clone`" in found[1].message
    assert "torchair raises ValueError at this assignment" in found[1].message


def test_npu206_clean_where_one_of_the_releases_has_the_option(lint):
    assert lint(OPTIONS_72, select=["NPU206"], config=_releases_config(torchair=["7.1.0", "7.2.0"])) == []
    assert lint(OPTIONS_72, select=["NPU206"]) == []  # every known release: master has them


def test_npu206_through_value_reads_the_missing_option_first(lint):
    src = TA + "config = tng.CompilerConfig()\nconfig.debug.aclgraph.enable_output_clone.value = True\n"
    (f,) = lint(src, select=["NPU206"], config=_releases_config(torchair="7.1.0"))
    assert "so reading `config.debug.aclgraph.enable_output_clone` raises AttributeError" in f.message


@pytest.mark.parametrize("guarded", [
    "if hasattr(config, 'aclgraph_config'):\n    config.aclgraph_config.use_custom_pool = pool\n",
    "try:\n    config.debug.aclgraph.clone_input = True\nexcept ValueError:\n    pass\n",
])
def test_npu206_a_store_under_if_or_try_may_be_a_version_guard(lint, guarded):
    src = TA + "config = tng.CompilerConfig()\n" + guarded
    assert lint(src, select=["NPU206"], config=_releases_config(torchair="7.1.0")) == []
    unguarded = TA + "config = tng.CompilerConfig()\n" + "\n".join(
        line.strip() for line in guarded.splitlines() if "config." in line and "hasattr" not in line) + "\n"
    assert codes(lint(unguarded, select=["NPU206"], config=_releases_config(torchair="7.1.0"))) == ["NPU206"]


@pytest.mark.parametrize("elsewhere", [
    # a guard: the file may still run on 7.1.0
    "try:\n    cfg.debug.aclgraph.clone_input = True\nexcept ValueError:\n    pass\n",
    # another config, in a function nobody is known to call
    "def new_only():\n    c = tng.CompilerConfig()\n    c.debug.deadlock_check = True\n",
    # after the compiles: not known to run before them
    None,
])
def test_npu203_narrows_only_by_what_certainly_runs_before_the_compiles(lint, elsewhere):
    if elsewhere is None:
        src = TWO_GRAPHS.format(extra="") + "cfg.debug.aclgraph.static_capture_size_limit = 8\n"
    else:
        src = TWO_GRAPHS.format(extra=elsewhere)
    assert lint(src, select=["NPU203"]) == []


def test_pins_of_two_projects_in_one_run_decide_for_neither(tmp_path, cli_run):
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("torchair==7.1.0\n")
    (tmp_path / "svc_new").mkdir()
    (tmp_path / "svc_new" / "requirements.txt").write_text("torchair==7.3.0\n")
    (tmp_path / "svc_new" / "m.py").write_text(OPTIONS_72)
    (tmp_path / "svc_old").mkdir()
    (tmp_path / "svc_old" / "x.py").write_text(OPTIONS_72)
    args = ["--select", "NPU206", "--no-cache"]
    alone = cli_run(args + ["svc_new"], tmp_path)
    assert alone.returncode == 0, alone.stdout  # its own pin: 7.3.0 has these options
    old = cli_run(args + ["svc_old"], tmp_path)
    assert old.stdout.count("NPU206") == 2  # the parent's pin: 7.1.0 has neither
    both = cli_run(args + ["svc_new", "svc_old"], tmp_path)
    assert both.returncode == 0, both.stdout  # the two pins disagree: nothing is inferred


AOT = "import torchair\nbackend = torchair.get_npu_backend(aot_config=None)\n"  # 6.0.rc1 takes it
INNER = "from torchair.scope import npu_stream_switch\nwith npu_stream_switch('1', 0, enable_inner_parallel=False):\n    pass\n"


@pytest.mark.parametrize("pin, source, expected", [("torchair==6.0.rc1", AOT, 0), ("torchair==7.2.0", INNER, 1)])
def test_a_sub_project_that_says_nothing_takes_the_pin_above_it(tmp_path, cli_run, pin, source, expected):
    # docs/ with its own requirements.txt (sphinx) runs in the repository's
    # environment; it must not cancel the repository's pin, known (7.2.0 has no
    # enable_inner_parallel) or unknown (6.0.rc1 takes aot_config: nothing to say)
    (tmp_path / "requirements.txt").write_text(pin + "\n")
    (tmp_path / "model.py").write_text(source)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "requirements.txt").write_text("sphinx\n")
    (tmp_path / "docs" / "conf.py").write_text("project = 'x'\n")
    r = cli_run(["--select", "NPU010", "--no-cache", "."], tmp_path)
    assert r.stdout.count("NPU010") == expected, r.stdout


def test_one_project_on_a_release_npulint_has_no_data_for_silences_the_run(tmp_path, cli_run):
    # a parent linted with a sub-project pinned to 6.0.rc1: the sub-project's code must not be
    # judged by the releases npulint knows (its get_npu_backend takes aot_config)
    (tmp_path / "top.py").write_text("import torch\nx = 1\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "requirements.txt").write_text("torchair==6.0.rc1\n")
    (tmp_path / "sub" / "legacy.py").write_text(AOT)
    assert cli_run(["--select", "NPU010", "--no-cache", "."], tmp_path).stdout == ""
    (tmp_path / "sub" / "requirements.txt").write_text("torchair\n")  # the twin: no release named
    assert cli_run(["--select", "NPU010", "--no-cache", "."], tmp_path).stdout.count("NPU010") == 1


def test_torchair_options_by_release_are_generated_data():
    options = releases.torchair_data()["options"]
    assert sorted(options["aclgraph_config.use_custom_pool"]) == ["26.0.0", "7.2.0", "7.3.0", "master"]
    assert sorted(options["mode"]) == ["26.0.0", "7.1.0", "7.2.0", "7.3.0", "master"]
    # a class name two config files define is looked up where it is imported from
    assert "experimental_config.frozen_parameter" in options and "export.experimental.enable_lite_export" in options
    assert options["debug.graph_dump._path"]["master"].endswith("debug_config.py:18")  # from the base class


def test_torchair_versions_and_unmodelled_releases_are_generated_data():
    data = releases.torchair_data()
    assert set(data["versions"].values()) == {"0.1"}  # python/setup.py, every release
    assert {"6.0.rc1", "7.0.0"} <= set(data["unmodelled"]) and not set(data["unmodelled"]) & set(data["releases"])
    assert data["marker"]["path"].startswith("python/torchair/")


# -- configuration ------------------------------------------------------------------------------


@pytest.mark.parametrize("table, words", [
    ('[tool.npulint.releases]\nmindspeed-llmm = "2.1.0"\n', ["unknown framework", "mindspeed-llmm", "mindspeed-llm"]),
    ('[tool.npulint.releases]\nmindspeed-llm = "2.1"\n', ["unknown release", "'2.1'", "known: 2.0.0"]),
    ('[tool.npulint.releases]\ntorchair = []\n', ["releases.torchair"]),
    ('[tool.npulint.releases]\ntorchair = 7\n', ["releases.torchair"]),
    ('[tool.npulint]\nreleases = "master"\n', ["'releases' must be a table"]),
])
def test_bad_release_configuration_is_one_line_exit_2(project, table, words, cli_run):
    root = project({"run.sh": "torchrun pretrain_gpt.py --bf16\n", "pyproject.toml": table})
    proc = cli_run(["."], cwd=root)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("npulint: error:")
    for w in words:
        assert w in proc.stderr


def test_configured_releases_are_kept_in_release_order():
    got = releases.check_config({"mindspeed-llm": ["master", "2.2.0"], "torchair": "7.3.0"}, "x")
    assert got == {"mindspeed-llm": ("2.2.0", "master"), "torchair": ("7.3.0",)}


def test_describe_makes_ranges_of_consecutive_releases():
    llm = releases.known("mindspeed-llm")
    text = releases.describe([f"mindspeed-llm@{r}" for r in llm[2:]] + ["mindspeed@master"])
    assert text == f"MindSpeed master; MindSpeed-LLM {llm[2]} to master"
    assert releases.describe(["torchair@7.1.0", "torchair@7.3.0"]) == "torchair 7.1.0, 7.3.0"


# -- inference --------------------------------------------------------------------------------


def _resolve(root, config_path=None):
    s = Settings(root=str(root), config_path=config_path)
    return releases.resolve(s, [str(root / "x.sh")])


def test_the_tree_is_the_framework_itself(tmp_path):
    (tmp_path / "mindspeed_llm").mkdir()
    (tmp_path / "mindspeed_llm" / "__init__.py").write_text("")
    (tmp_path / "setup.py").write_text("__version__ = '2.2.0'\nsetup(version=__version__)\n")
    got = _resolve(tmp_path)
    # any snapshot of the 2.2.0 branch: at its branch point it was master, which may behave like
    # 2.1.0, the release branched last before it
    assert got.of("mindspeed-llm") == ("2.1.0", "2.2.0")
    assert got.mindspeed_stacks() == {"mindspeed-llm@2.1.0", "mindspeed-llm@2.2.0"}


def test_a_version_several_releases_declare_infers_all_of_them(tmp_path):
    (tmp_path / "mindspeed_llm").mkdir()
    (tmp_path / "mindspeed_llm" / "__init__.py").write_text("")
    (tmp_path / "setup.py").write_text("__version__ = '0.0.1'\n")
    assert set(_resolve(tmp_path).of("mindspeed-llm")) >= {"2.0.0", "2.1.0"}


def test_a_version_master_declared_names_the_releases_branched_while_it_did(tmp_path):
    # Ascend/MindSpeed-LLM master declares 26.0.0dev0 since 310711e9 (2026-01-22): 26.0.0 and 26.1.0
    # were branched from it since, and 2.3.0 last before (a snapshot between may behave like it)
    (tmp_path / "mindspeed_llm").mkdir()
    (tmp_path / "mindspeed_llm" / "__init__.py").write_text("")
    (tmp_path / "setup.py").write_text("__version__ = '26.0.0dev0'\n")
    assert _resolve(tmp_path).of("mindspeed-llm") == ("2.3.0", "26.0.0", "26.1.0", "master")
    # master declared 0.0.1 from 2023, before any release npulint knows was branched (2.0.0: 2025):
    # such a snapshot is older than all of them, and the version names every release
    (tmp_path / "setup.py").write_text("__version__ = '0.0.1'\n")
    assert _resolve(tmp_path).of("mindspeed-llm") == releases.known("mindspeed-llm")
    # a version only a release branch declared names that release's line: the release, and the
    # one branched last before it (the branch's older snapshots may lack checks backported since)
    (tmp_path / "setup.py").write_text("__version__ = '2.3.0'\n")
    assert _resolve(tmp_path).of("mindspeed-llm") == ("2.2.0", "2.3.0")


@pytest.mark.parametrize("version", ["0.7.0", "1.1.0", "0.0.1"])
def test_a_version_only_master_declared_before_every_release_npulint_models_is_unknown(tmp_path, version):
    # Ascend/MindSpeed master declared 0.7.0 from d0765db3 (2024-08-06) to 49588a3e (2024-11-30),
    # before the first release npulint models left master (the core_r0.8.0 ones, 2025-01-22), and
    # no release declares it: such a tree is older than all of them (its core_r0.7.0 validator
    # has no use_legacy_models), as torchair==6.0.rc1 is
    (tmp_path / "mindspeed").mkdir()
    (tmp_path / "mindspeed" / "megatron_adaptor.py").write_text("")
    (tmp_path / "setup.py").write_text(f"__version__ = '{version}'\n")
    got = _resolve(tmp_path)
    assert got.of("mindspeed") == () and got.unknown("mindspeed") and got.mindspeed_stacks() == frozenset()
    # 0.8.0, which the core_r0.8.0 releases declare, still names releases
    (tmp_path / "setup.py").write_text("__version__ = '0.8.0'\n")
    assert "2.1.0_core_r0.8.0" in _resolve(tmp_path).of("mindspeed")


def test_an_unknown_version_makes_the_release_unknown(tmp_path):
    (tmp_path / "mindspeed_llm").mkdir()
    (tmp_path / "mindspeed_llm" / "__init__.py").write_text("")
    (tmp_path / "setup.py").write_text("__version__ = '99.0'\n")
    got = _resolve(tmp_path)
    assert got.of("mindspeed-llm") == () and got.unknown("mindspeed-llm")
    assert got.mindspeed_stacks() == frozenset() and got.mindspeed_fallback() == frozenset()
    # without a version: nothing is inferred from the version, every release stays
    (tmp_path / "setup.py").write_text("setup(name='mindspeed_llm')\n")
    assert _resolve(tmp_path).of("mindspeed-llm") == releases.known("mindspeed-llm")


@pytest.mark.parametrize("name, text, framework, expected", [
    # a release names its line: the release and the one(s) branched last before it
    ("requirements.txt", "torch==2.1.0\nmindspeed-llm==2.2.0\n", "mindspeed-llm", ("2.1.0", "2.2.0")),
    # the two core_r0.8.0 releases left master at one commit (4b71802c)
    ("requirements.txt", "mindspeed @ git+https://gitcode.com/Ascend/MindSpeed.git@2.1.0_core_r0.8.0\n",
     "mindspeed", ("2.0.0_core_r0.8.0", "2.1.0_core_r0.8.0")),
    ("requirements.txt", "git+https://gitee.com/ascend/MindSpeed.git@2.2.0_core_r0.12.1\n",
     "mindspeed", ("2.1.0_core_r0.12.1", "2.2.0_core_r0.12.1")),
    # torchair's data have no branch points: the release before it in the data's order
    ("requirements-npu.txt", "torchair==7.3.0\n", "torchair", ("7.2.0", "7.3.0")),
    ("requirements-npu.txt", "torchair==7.1.0\n", "torchair", ("7.1.0",)),  # the oldest npulint models
    # master, or a checkout of it, may be of any date: every release
    ("pyproject.toml", '[project]\ndependencies = ["mindspeed_mm==master"]\n', "mindspeed-mm",
     ("2.0.0", "2.1.0", "2.2.0", "2.3.0", "26.0.0", "26.1.0", "master")),
    ("requirements.txt", "git+https://gitee.com/ascend/MindSpeed.git@master\n", "mindspeed",
     releases.known("mindspeed")),
    # pip freeze writes a version in PEP 440's normal form (26.0.0.dev0), setup.py as upstream wrote it
    ("requirements.txt", "mindspeed_llm==26.0.0.dev0\n", "mindspeed-llm", ("2.3.0", "26.0.0", "26.1.0", "master")),
    ("requirements.txt", "mindspeed-llm==26.0.0-dev0\n", "mindspeed-llm", ("2.3.0", "26.0.0", "26.1.0", "master")),
    ("requirements.txt", "mindspeed==0.12.1.0\n", "mindspeed", releases.known("mindspeed")),
])
def test_pinned_requirements(tmp_path, name, text, framework, expected):
    (tmp_path / name).write_text(text)
    assert _resolve(tmp_path).of(framework) == expected


def test_unpinned_requirements_infer_nothing(tmp_path):
    (tmp_path / "requirements.txt").write_text("mindspeed-llm>=2.2.0\ntorchair>=7.1.0\nnot-mindspeed==2.2.0\n")
    got = _resolve(tmp_path)
    assert got.chosen == ()
    assert got.torchair() == releases.known("torchair")
    assert got.mindspeed_stacks() == {f"{fw}@{r}" for fw in releases.MINDSPEED_FRAMEWORKS
                                      for r in releases.known(fw)}


@pytest.mark.parametrize("pin", [
    "torchair==6.0.rc1",  # a release branch older than the oldest npulint models (7.1.0)
    "torchair==1.0",  # no release declares it
    "torchair==27.0.0",  # newer than the newest release: master may differ from it, so not master
    "torchair==0.1",  # every release declares it, 6.0.rc1 to 7.0.0 too
    "torchair==7.3.0\ntorchair==6.0.rc1",  # one of the project's pins is unknown
])
def test_a_torchair_pin_npulint_has_no_data_for_is_unknown(tmp_path, pin):
    (tmp_path / "requirements.txt").write_text(pin + "\n")
    got = _resolve(tmp_path)
    assert got.of("torchair") == () and got.torchair() == () and got.fallback("torchair") == ()
    assert "a release npulint has no data for" in dict((fw, how) for fw, _, how in got.chosen)["torchair"]


def test_a_mindspeed_pin_npulint_has_no_data_for_is_unknown(tmp_path):
    (tmp_path / "requirements.txt").write_text("mindspeed-llm==1.0.0\n")
    got = _resolve(tmp_path)
    assert got.unknown("mindspeed-llm")
    assert got.mindspeed_stacks() == frozenset() and got.mindspeed_fallback() == frozenset()
    # MindSpeed pinned to an unknown release: no MindSpeed-LLM/-MM release is paired with it
    (tmp_path / "requirements.txt").write_text("mindspeed==1.0.0\n")
    got = _resolve(tmp_path)
    assert got.unknown("mindspeed") and got.of("mindspeed-llm") is None and got.mindspeed_stacks() == frozenset()


def test_a_launch_on_an_unknown_mindspeed_release_is_not_judged(project, cli_run):
    launch = "torchrun pretrain_gpt.py --adaptive-memory-optimization --recompute-granularity full\n"
    root = project({"run.sh": launch, "requirements.txt": "mindspeed-mm==2.1.0\n"})
    r = cli_run([".", "--select", "NPU5", "--format", "json", "--no-cache"], cwd=root)
    assert [f["code"] for f in json.loads(r.stdout)] == ["NPU501"]
    (root / "requirements.txt").write_text("mindspeed-mm==1.0.0\n")
    r = cli_run([".", "--select", "NPU5", "--format", "json", "--no-cache"], cwd=root)
    assert json.loads(r.stdout) == []


def _torchair_tree(root, marker: bool):
    (root / "python" / "torchair").mkdir(parents=True)
    (root / "python" / "torchair" / "__init__.py").write_text("")
    (root / "python" / "setup.py").write_text("setup(name='torchair',\n      version='0.1',\n)\n")
    if marker:
        path = root / releases.torchair_data()["marker"]["path"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")


def test_a_project_s_own_torchair_package_is_not_torchair_s_tree(tmp_path):
    # a shim package named torchair in a project whose setup.py names
    # another distribution; its version is the project's, not a torchair release
    (tmp_path / "torchair").mkdir()
    (tmp_path / "torchair" / "__init__.py").write_text("")
    (tmp_path / "setup.py").write_text('setup(name="myproj", version="1.0.0", packages=["torchair"])\n')
    assert "torchair" not in releases.infer(str(tmp_path))
    (tmp_path / "setup.py").write_text('setup(name="torchair", version="1.0.0")\n')  # the twin
    assert releases.infer(str(tmp_path))["torchair"][0] == ()


def test_a_torchair_tree_is_recognised_as_itself(tmp_path):
    # every torchair release declares version 0.1 (python/setup.py), 6.0.rc1 to 7.0.0 too: without
    # the file every modelled release has and no older one, the tree may be one of those
    _torchair_tree(tmp_path, marker=False)
    got = _resolve(tmp_path)
    assert got.of("torchair") == ()
    assert _resolve(tmp_path / "python").of("torchair") == ()  # its python/ folder, rooted at its setup.py
    (tmp_path / "examples").mkdir()
    s = Settings(root=str(tmp_path))
    got = releases.resolve(s, [str(tmp_path / "examples" / "a.py"), str(tmp_path / "python" / "torchair" / "b.py")])
    assert got.of("torchair") == ()  # a file in a folder without a project marker belongs to the tree


def test_a_torchair_tree_with_the_marker_is_a_modelled_release(tmp_path):
    _torchair_tree(tmp_path, marker=True)
    assert _resolve(tmp_path).of("torchair") == releases.known("torchair")


UNKNOWN_OPTION = TA + "config = tng.CompilerConfig()\nconfig.experimental_config.enable_single_stream = True\n"


def test_npu206_on_an_older_release_suggests_and_names_only_what_it_has(project, cli_run):
    # torchair 7.1.0: clone_input exists from 7.3.0 on, so it is no
    # suggestion for clone_inputs; 7.1.0's class is not master's _AclGraphDebugConfig; and a typo
    # under aclgraph_config (7.2.0 on) fails first where aclgraph_config is read
    code = ("import torchair\nconfig = torchair.CompilerConfig()\n"
            "config.aclgraph_config.use_custom_pools = None\nconfig.debug.aclgraph.clone_inputs = False\n")
    root = project({"m.py": code, "requirements.txt": "torchair==7.1.0\n"})
    out = cli_run(["--select", "NPU206", "--no-cache", "-q", "."], root).stdout.splitlines()
    assert len(out) == 2, out
    assert out[0].startswith("m.py:3:1: NPU206 ") and "torchair 7.1.0 has no option `aclgraph_config`" in out[0]
    assert "reading `config.aclgraph_config` raises AttributeError" in out[0]
    assert out[1].startswith("m.py:4:1: NPU206 ") and "torchair's `config.debug.aclgraph` has no option" in out[1]
    assert "did you mean" not in out[1]
    (root / "requirements.txt").write_text("torchair\n")  # every release, master among them
    out = cli_run(["--select", "NPU206", "--no-cache", "-q", "."], root).stdout.splitlines()
    assert len(out) == 2 and "_AclGraphDebugConfig has no option 'clone_inputs'" in out[1], out
    assert out[1].endswith("did you mean `config.debug.aclgraph.clone_input`?")


def test_npu206_names_the_releases_that_lack_the_option(lint):
    (f,) = lint(UNKNOWN_OPTION, select=["NPU206"])
    assert f.message.startswith("`config.experimental_config.enable_single_stream` is not a torchair config "
                                "option (torchair 7.1.0 to master): torchair's _ExperimentalConfig has no option")
    (f,) = lint(UNKNOWN_OPTION, select=["NPU206"], config=_releases_config(torchair="7.3.0"))
    assert "option (torchair 7.3.0):" in f.message


@pytest.mark.parametrize("pin", ["torchair==6.0.rc1", "torchair==7.3.0"])
def test_npu206_and_npu010_say_nothing_on_a_torchair_release_npulint_has_no_data_for(project, cli_run, pin):
    # torchair 6.0.rc1 has experimental_config.enable_single_stream (Ascend/torchair@3fddbaad
    # python/torchair/configs/experimental_config.py:16) and get_npu_backend(*, compiler_config=None,
    # aot_config=None, custom_decompositions={}) (npu_fx_compiler.py:509-510)
    src = UNKNOWN_OPTION + "backend = tng.get_npu_backend(compiler_config=config, aot_config=None)\n"
    root = project({"m.py": src, "requirements.txt": pin + "\n"})
    r = cli_run([".", "--select", "NPU206,NPU010", "--format", "json", "--no-cache"], cwd=root)
    got = [f["code"] for f in json.loads(r.stdout)]
    assert got == ([] if pin.endswith("6.0.rc1") else ["NPU206", "NPU010"])


def test_release_dependent_torchair_rules_say_nothing_in_a_torchair_tree_of_an_older_release(project, cli_run):
    src = UNKNOWN_OPTION + "backend = tng.get_npu_backend(compiler_config=config, aot_config=None)\n"
    root = project({"examples/m.py": src})
    _torchair_tree(root, marker=False)
    r = cli_run([".", "--select", "NPU206,NPU010", "--format", "json", "--no-cache"], cwd=root)
    assert json.loads(r.stdout) == []
    path = root / releases.torchair_data()["marker"]["path"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")
    r = cli_run([".", "--select", "NPU206,NPU010", "--format", "json", "--no-cache"], cwd=root)
    assert sorted(f["code"] for f in json.loads(r.stdout)) == ["NPU010", "NPU206"]


def test_configured_wins_over_inferred(tmp_path):
    (tmp_path / "requirements.txt").write_text("mindspeed-llm==2.2.0\ntorchair==7.3.0\n")
    s = Settings(root=str(tmp_path), config_path=str(tmp_path / "pyproject.toml"))
    s.releases = {"mindspeed-llm": ("master",)}
    got = releases.resolve(s, [str(tmp_path / "x.sh")])
    assert got.of("mindspeed-llm") == ("master",)  # as configured: no line, no other release
    assert got.of("torchair") == ("7.2.0", "7.3.0")  # the other frameworks are still inferred


def test_mindspeed_stack_is_an_alias(tmp_path):
    s = Settings(root=str(tmp_path), config_path=str(tmp_path / "pyproject.toml"))
    s.mindspeed_stack = "legacy"
    got = releases.resolve(s, [])
    assert got.of("mindspeed") and all("core_r0.8.0" in r for r in got.of("mindspeed"))
    assert got.of("mindspeed-llm") is None


def test_a_changed_pin_is_a_new_run_not_a_cached_one(project, cli_run):
    src = RECORD_ONLY  # (CREATED calls an API 7.1.0 lacks: it contradicts a 7.1.0 pin)
    root = project({"m.py": src, "requirements.txt": "torchair==7.1.0\n"})
    first = cli_run([".", "--select", "NPU303", "--format", "json"], cwd=root)
    assert json.loads(first.stdout) == []
    (root / "requirements.txt").write_text("torchair==7.3.0\n")
    second = cli_run([".", "--select", "NPU303", "--format", "json"], cwd=root)
    assert [f["code"] for f in json.loads(second.stdout)] == ["NPU303"]


# -- what a launch's flags say --------------------------------------------------------------


def test_a_flag_only_some_releases_register_narrows_the_releases():
    every = frozenset(f"{fw}@{r}" for fw in releases.MINDSPEED_FRAMEWORKS for r in releases.known(fw))
    # --neat-pack is MindSpeed-LLM's own: a plain MindSpeed or MindSpeed-MM launch rejects it
    got = releases.runs_on(["--neat-pack"], every)
    assert got and all(s.startswith("mindspeed-llm@") for s in got)
    # a flag no release registers (a typo, the project's own) narrows nothing
    assert releases.runs_on(["--no-such-flag-anywhere"], every) == every
    assert releases.runs_on(["--bf16"], every) == every


def test_narrowing_names_the_flags_that_rule_a_release_out():
    every = frozenset(f"{fw}@{r}" for fw in releases.MINDSPEED_FRAMEWORKS for r in releases.known(fw))
    assert releases.narrowing(["--neat-pack", "--bf16", "--no-such-flag-anywhere"], every) == ("--neat-pack",)
    llm = frozenset(s for s in every if s.startswith("mindspeed-llm@"))
    assert releases.narrowing(["--neat-pack"], llm) == ()  # every MindSpeed-LLM release has it
    # ruled out of every one of the stacks: the fallback is judged, and its narrowing counts
    plain = frozenset(s for s in every if s.startswith("mindspeed@"))
    assert releases.narrowing(["--neat-pack"], plain) == ("--neat-pack",)
    assert releases.narrowing(["--neat-pack"], plain, llm) == ()


# -- a flag the project's own parser registers narrows nothing ---------------------------------

# --model-id is registered by MindSpeed-LLM 26.1.0 and master only: on its own, the launch runs
# there, where mc2 requires --sequence-parallel (NPU504); a project that registers it itself runs
# it on every release, most of which have no such check
MODEL_ID = "torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 2 --use-ascend-mc2 " \
           "--model-id llama3\n"
PROVIDER = "def extra_args(parser):\n    group = parser.add_argument_group(title='mine')\n" \
           "    group.add_argument({flag}, type=str)\n    return parser\n"
ENTRY = ("from megatron.training import pretrain\nfrom mindspeed_llm import megatron_adaptor\n\n\n"
         "def extra_args_provider(parser):\n    parser.add_argument('--model-id', type=str)\n    return parser\n\n\n"
         "if __name__ == '__main__':\n    pretrain(None, None, None, None, extra_args_provider=extra_args_provider)\n")


def test_a_flag_only_new_releases_register_narrows_the_releases_to_them(lint):
    (f,) = lint({"run.sh": MODEL_ID}, select=["NPU5"])
    assert f.code == "NPU504" and "requires --sequence-parallel" in f.message
    assert lint({"run.sh": MODEL_ID.replace(" --model-id llama3", "")}, select=["NPU5"]) == []


@pytest.mark.parametrize("files", [
    {"my_args.py": PROVIDER.format(flag="'--model-id'")},  # a module of the project
    {"pretrain_gpt.py": ENTRY},  # the entry script's extra_args_provider
    {"my_args.py": PROVIDER.format(flag="'--model-' + name")},  # one that may register it
])
def test_a_flag_the_project_registers_does_not_narrow_the_releases(lint, files):
    assert lint({"run.sh": MODEL_ID, **files}, select=["NPU5"]) == []


def test_a_flag_the_configuration_declares_does_not_narrow_the_releases(lint):
    assert lint({"run.sh": MODEL_ID}, select=["NPU5"], config='[tool.npulint]\nextend-known-flags = ["--model-id"]\n') == []
    declared_other = '[tool.npulint]\nextend-known-flags = ["--my-flag"]\n'
    assert codes(lint({"run.sh": MODEL_ID}, select=["NPU5"], config=declared_other)) == ["NPU504"]


@pytest.mark.parametrize("files", [
    # a vendored framework's registration is its release's own
    {"mindspeed_llm/training/arguments.py": PROVIDER.format(flag="'--model-id'")},
    # a tool's parser reads its own command line, not the launch's
    {"tools/convert.py": PROVIDER.format(flag="'--model-id'") + "\nimport argparse\n"
                         "args = extra_args(argparse.ArgumentParser()).parse_args()\n"},
    # another flag than the one that narrowed
    {"my_args.py": PROVIDER.format(flag="'--model-name'")},
])
def test_registrations_that_do_not_extend_the_launch_s_parser_still_narrow(lint, files):
    assert codes(lint({"run.sh": MODEL_ID, **files}, select=["NPU5"])) == ["NPU504"]


def test_the_project_s_registration_leaves_unknown_flags_to_npu502(lint):
    launch = MODEL_ID.replace("\n", " --tensor-model-paralel-size 2\n")
    found = lint({"run.sh": launch, "my_args.py": PROVIDER.format(flag="'--model-id'")}, select=["NPU5"])
    assert codes(found) == ["NPU502"]


# -- MindSpeed: the same script, two configured releases, two verdicts -----------------------

MOE = ("torchrun pretrain_gpt.py --num-experts 8 --moe-token-dispatcher-type alltoall --moe-alltoall-overlap-comm "
       "--tensor-model-parallel-size 2 --expert-model-parallel-size 2 --moe-permutation-async-comm "
       "--moe-grouped-gemm{}\n")


def test_moe_tp_extend_ep_is_required_on_core_r0_8_0_and_rejected_on_master(lint):
    r08 = _releases_config(mindspeed="2.1.0_core_r0.8.0")
    master = _releases_config(mindspeed="master")
    without, with_ = MOE.format(""), MOE.format(" --moe-tp-extend-ep")
    (f,) = lint({"run.sh": without}, select=["NPU5"], config=r08)
    assert f.code == "NPU504" and "needs --moe-tp-extend-ep" in f.message
    assert "MindSpeed 2.0.0_core_r0.8.0, 2.1.0_core_r0.8.0" in f.message
    assert "Ascend/MindSpeed@1e898a29 mindspeed/arguments.py:714" in f.message
    assert lint({"run.sh": with_}, select=["NPU5"], config=r08) == []
    assert lint({"run.sh": without}, select=["NPU5"], config=master) == []
    (f,) = lint({"run.sh": with_}, select=["NPU5"], config=master)
    assert f.code == "NPU501" and "does not support --moe-tp-extend-ep" in f.message


@pytest.mark.parametrize("extra", ["", " --moe-tp-extend-ep"])
def test_moe_tp_extend_ep_with_no_release_known_is_not_reported(lint, extra):
    # nothing configured or inferred: no form holds on every release the launch can run on
    assert lint({"run.sh": MOE.format(extra)}, select=["NPU5"]) == []


def test_neat_pack_needs_reset_position_ids_up_to_llm_2_2_and_reset_attention_mask_after(lint):
    old, new = "torchrun posttrain_gpt.py --neat-pack --reset-attention-mask\n", \
        "torchrun posttrain_gpt.py --neat-pack --reset-position-ids\n"
    llm21, master = _releases_config(**{"mindspeed-llm": "2.1.0"}), _releases_config(**{"mindspeed-llm": "master"})
    (f,) = lint({"run.sh": old}, select=["NPU5"], config=llm21)
    assert "--neat-pack needs --reset-position-ids" in f.message and "MindSpeed-LLM 2.0.0 to 2.2.0" in f.message
    assert lint({"run.sh": new}, select=["NPU5"], config=llm21) == []
    assert lint({"run.sh": old}, select=["NPU5"], config=master) == []
    (f,) = lint({"run.sh": new}, select=["NPU5"], config=master)
    assert "--neat-pack needs --reset-attention-mask" in f.message and "MindSpeed-LLM 2.3.0 to master" in f.message


def test_the_linted_tree_being_mindspeed_llm_judges_its_scripts_by_its_release(lint):
    tree = {"mindspeed_llm/__init__.py": "", "setup.py": "__version__ = '2.2.0'\n",
            "examples/run.sh": "torchrun posttrain_gpt.py --neat-pack --reset-attention-mask\n"}
    (f,) = lint(tree, select=["NPU5"])
    assert "--neat-pack needs --reset-position-ids" in f.message


# a MindSpeed-LLM master snapshot of the feature-manager era (KevinC259/MindSpeed-LLM@4e626e76):
# master still declared 0.0.1, as the 2.0.0 and 2.1.0 branches do
MASTER_001 = {"mindspeed_llm/__init__.py": "from mindspeed_llm.tasks import megatron_adaptor_v2 as megatron_adaptor\n",
              "setup.py": "__version__ = '0.0.1'\n"}


def test_a_master_snapshot_declaring_0_0_1_is_not_judged_as_llm_2_0_or_2_1(lint):
    tree = dict(MASTER_001, **{"tune_pack.sh": (
        "torchrun posttrain_gpt.py --finetune --stage sft --reset-attention-mask --neat-pack \\\n"
        "    --moe-token-dispatcher-type alltoall_seq --moe-expert-capacity-factor 1.1\n")})
    # --neat-pack needs --reset-position-ids (2.0.0 to 2.2.0) and the capacity factor needs the
    # alltoall dispatcher (2.0.0, 2.1.0): neither holds on 2.3.0 or 26.0.0
    assert lint(tree, select=["NPU5"]) == []


def test_a_master_snapshot_declaring_0_0_1_reports_what_its_launch_s_releases_reject(lint):
    # --ckpt-format and --beta-fast exist from MindSpeed-LLM 2.2.0 on: of the releases 0.0.1 may
    # name, the launch runs on 2.2.0 to 26.0.0, which all reject --moe-tp-extend-ep here
    tree = dict(MASTER_001, **{"pretrain_moe.sh": MOE.format(" --moe-tp-extend-ep --ckpt-format torch --beta-fast 32")})
    (f,) = lint(tree, select=["NPU5"])
    assert f.code == "NPU501" and "does not support --moe-tp-extend-ep" in f.message


# --enable-hf2mg-convert exists from MindSpeed-LLM 2.3.0 on: the launch cannot run on 2.2.0
CONTRADICTED = MOE.format(" --moe-tp-extend-ep --enable-hf2mg-convert")


def test_inferred_releases_the_launch_rules_out_are_doubted_not_trusted(lint):
    tree = {"mindspeed_llm/__init__.py": "", "setup.py": "__version__ = '2.2.0'\n", "pretrain_moe.sh": CONTRADICTED}
    # judged on every release its flags allow (MindSpeed-LLM 2.3.0 to master), which all reject it
    (f,) = lint(tree, select=["NPU5"])
    assert f.code == "NPU501" and "does not support --moe-tp-extend-ep" in f.message


def test_configured_releases_the_launch_rules_out_stay_silent(lint):
    config = _releases_config(**{"mindspeed-llm": "2.2.0"})
    assert lint({"pretrain_moe.sh": CONTRADICTED}, select=["NPU5"], config=config) == []


def test_a_torchair_pin_the_code_rules_out_is_doubted(project, cli_run):
    # npu_create_tagged_event exists from 7.2.0 on: a 7.1.0 pin is contradicted, and NPU303 holds
    # on every release the code can run on; configured, 7.1.0 stands (test_npu303_release_pair)
    root = project({"m.py": CREATED, "requirements.txt": "torchair==7.1.0\n"})
    r = cli_run([".", "--select", "NPU303", "--format", "json", "--no-cache"], cwd=root)
    assert [f["code"] for f in json.loads(r.stdout)] == ["NPU303"]


def test_a_nested_configuration_names_the_releases_of_its_files(project, cli_run):
    launch = "torchrun pretrain_gpt.py --use-fused-swiglu\n"  # needs --swiglu on the core_r0.8.0 releases only
    root = project({"pyproject.toml": "[tool.npulint]\n", "top.sh": launch,
                    "old/pyproject.toml": _releases_config(mindspeed="2.1.0_core_r0.8.0"), "old/run.sh": launch})
    r = cli_run([".", "--select", "NPU5", "--format", "json", "--no-cache"], cwd=root)
    assert [(f["path"], f["code"]) for f in json.loads(r.stdout)] == [("old/run.sh", "NPU504")]


def test_a_pin_in_a_comment_infers_nothing(tmp_path):
    (tmp_path / "requirements.txt").write_text(
        "torch==2.1.0\n# mindspeed-llm==2.1.0 was used before; we now run master\ntorchair==7.3.0  # torchair==7.1.0\n")
    got = _resolve(tmp_path)
    assert got.of("mindspeed-llm") is None and got.of("torchair") == ("7.2.0", "7.3.0")
    (tmp_path / "requirements.txt").write_text(
        "mindspeed @ git+https://gitcode.com/Ascend/MindSpeed.git@2.2.0_core_r0.12.1#egg=mindspeed\n")
    # a URL's #egg= is not a comment
    assert _resolve(tmp_path).of("mindspeed") == ("2.1.0_core_r0.12.1", "2.2.0_core_r0.12.1")


def test_a_mindspeed_pin_keeps_the_llm_and_mm_releases_paired_with_it(tmp_path):
    (tmp_path / "requirements.txt").write_text("git+https://gitcode.com/Ascend/MindSpeed.git@2.1.0_core_r0.8.0\n")
    got = _resolve(tmp_path)
    assert got.of("mindspeed") == ("2.0.0_core_r0.8.0", "2.1.0_core_r0.8.0")
    assert "mindspeed-llm@2.1.0" in got.mindspeed_stacks()  # LLM 2.1.0 runs on that MindSpeed


def test_each_configuration_infers_from_its_own_files_only(project, cli_run):
    """Files with no configuration of their own are not judged by a pin above another folder."""
    launch = "torchrun pretrain_gpt.py --use-fused-swiglu\n"  # needs --swiglu on the core_r0.8.0 releases only
    root = project({"requirements.txt": "git+https://gitcode.com/Ascend/MindSpeed.git@2.1.0_core_r0.8.0\n",
                    "plain/.git/HEAD": "ref: refs/heads/main\n", "plain/train.sh": launch,
                    "cfg/pyproject.toml": "[tool.npulint]\n", "cfg/a.py": "x = 1\n"})
    for order in (["plain", "cfg"], ["cfg", "plain"]):
        r = cli_run([*order, "--select", "NPU5", "--format", "json", "--no-cache"], cwd=root)
        assert json.loads(r.stdout) == [], order


# -- a pin names a line of snapshots, not the one npulint models ---------------------------------

_MC2_ALONE = ("torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 8 "
              "--use-ascend-mc2 --bf16\n")  # no --sequence-parallel: an error from 26.0.0_core_r0.12.1 on
_BUBBLE_SWAP = ("torchrun --nproc_per_node 8 pretrain_gpt.py --pipeline-model-parallel-size 4 "
                "--num-layers-per-virtual-pipeline-stage 2 --recompute-in-bubble --swap-attention --bf16\n")
_FB_ALLTOALL = ("torchrun --nproc_per_node 8 pretrain_gpt.py --moe-fb-overlap --moe-grouped-gemm "
                "--moe-alltoall-overlap-comm --moe-token-dispatcher-type alltoall --bf16\n")  # a conflict of every release


def _npu5(cli_run, root):
    r = cli_run([".", "--select", "NPU5", "--format", "json", "--no-cache"], cwd=root)
    return sorted(f["code"] for f in json.loads(r.stdout))


@pytest.mark.parametrize("pin, launch, expected", [
    # master may be checked out at any date: MindSpeed's mc2 check was a warning until 499eb043
    # (2026-04-22; Ascend/MindSpeed@a654440c mindspeed/features_manager/tensor_parallel/mc2.py:22-28
    # on 2.2.0_core_r0.12.1 still warns), so a master pin judges it on every release
    ("git+https://gitee.com/ascend/MindSpeed.git@master", _MC2_ALONE, []),
    # ... and reports what every release rejects
    ("git+https://gitee.com/ascend/MindSpeed.git@master", _FB_ALLTOALL, ["NPU501"]),
    # a pin of the newest release branches, where the check holds at both ends of the line
    ("git+https://gitee.com/ascend/MindSpeed.git@26.1.0_core_r0.12.1", _MC2_ALONE, ["NPU504"]),
    # the 2.2.0 branch gained recompute-in-bubble vs swap-attention after its tag (354af96f, 2025-11-03;
    # the tag v2.2.0_core_r0.12.1, f321067c, has no such check): a project that installed it earlier runs
    ("git+https://gitee.com/ascend/MindSpeed.git@2.2.0_core_r0.12.1", _BUBBLE_SWAP, []),
    ("git+https://gitee.com/ascend/MindSpeed.git@2.2.0_core_r0.12.1", _FB_ALLTOALL, ["NPU501"]),
    # pip freeze's normal form of the version upstream's setup.py writes 26.0.0dev0
    ("mindspeed==0.12.1\nmindspeed_llm==26.0.0.dev0", _FB_ALLTOALL, ["NPU501"]),
    ("mindspeed==0.12.1\nmindspeed_llm==26.0.0dev0", _FB_ALLTOALL, ["NPU501"]),
])
def test_a_pinned_branch_or_version_is_judged_on_every_snapshot_it_may_be(project, cli_run, pin, launch, expected):
    root = project({"requirements.txt": pin + "\n", "run.sh": "#!/bin/bash\n" + launch})
    assert _npu5(cli_run, root) == expected


def test_a_configured_release_is_the_release_npulint_models(project, cli_run):
    # the configuration says which release runs: no line of older snapshots
    root = project({"pyproject.toml": '[tool.npulint.releases]\nmindspeed = "2.2.0_core_r0.12.1"\n',
                    "run.sh": "#!/bin/bash\n" + _BUBBLE_SWAP})
    assert _npu5(cli_run, root) == ["NPU501"]


@pytest.mark.parametrize("value, canonical", [
    ("26.0.0dev0", "26.dev0"), ("26.0.0.dev0", "26.dev0"), ("26.0.0-dev0", "26.dev0"), ("26.0.0_dev", "26.dev0"),
    ("0.12.1", "0.12.1"), ("0.1.0", "0.1"), ("0.1", "0.1"), ("V2.2.0", "2.2"), ("1.0RC1", "1rc1"),
    ("1.0.c1", "1rc1"), ("1.0-alpha2", "1a2"), ("1.0.post2", "1.post2"), ("1.0-3", "1.post3"),
    ("0.12.1+local.1", "0.12.1+local.1"),  # a local build stays another version
    ("2.2.0_core_r0.12.1", "2.2.0_core_r0.12.1"), ("master", "master"), ("2.2.", "2.2."),
])
def test_versions_compare_in_pep440_normal_form(value, canonical):
    assert releases.canonical_version(value) == canonical
