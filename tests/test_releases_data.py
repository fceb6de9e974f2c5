"""rules/mindspeed_releases.json (tools/gen_releases.py): in which stack releases each MindSpeed catalog
entry holds.  Shape and citation checks, and the release facts found in the upstream source."""

import json
import os
import re

import pytest

from npulint import registry

registry.load()  # the rules package, installed as npulint.rules or from the checkout
from npulint.rules.mindspeed_catalog import CATALOG  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA_PATH = os.path.join(REPO, "rules", "mindspeed_releases.json")
CITATION = re.compile(r"^(?P<repo>[A-Za-z0-9-]+/[A-Za-z0-9._-]+)@(?P<sha>[0-9a-f]{8}) (?P<path>[\w./-]+\.py):(?P<line>[1-9]\d*)$")
EVIDENCE = re.compile(r"^(?P<repo>[A-Za-z0-9-]+/[A-Za-z0-9._-]+)@(?P<sha>[0-9a-f]{8}) (?P<path>[\w./-]+):(?P<line>[1-9]\d*)$")


@pytest.fixture(scope="module")
def data():
    with open(DATA_PATH, encoding="utf-8") as f:
        return json.load(f)


def by_message(fragment):
    found = [e for e in CATALOG if fragment in e.message]
    assert len(found) == 1, (fragment, [e.message for e in found])
    return found[0].key


def stacks(data):
    return [f"{fam}@{r}" for fam, rels in data["releases"].items() for r in rels]


def test_shape(data):
    assert data["generated_by"] == "tools/gen_releases.py"
    assert set(data) == {"generated_by", "repos", "releases", "pairs", "versions", "branch_points", "master_versions",
                         "validators", "entries", "aliases", "entry_aliases", "parser_defaults"}
    assert set(data["releases"]) == {"mindspeed", "mindspeed-llm", "mindspeed-mm"}
    assert data["releases"]["mindspeed"] == ["2.0.0_core_r0.8.0", "2.1.0_core_r0.8.0", "2.1.0_core_r0.12.1",
                                             "2.2.0_core_r0.12.1", "2.3.0_core_r0.12.1", "26.0.0_core_r0.12.1",
                                             "26.1.0_core_r0.12.1", "master"]
    for fam in ("mindspeed-llm", "mindspeed-mm"):
        assert data["releases"][fam] == ["2.0.0", "2.1.0", "2.2.0", "2.3.0", "26.0.0", "26.1.0", "master"]
    repo_of = {"mindspeed": "Ascend/MindSpeed", "mindspeed-llm": "Ascend/MindSpeed-LLM", "mindspeed-mm": "Ascend/MindSpeed-MM"}
    for fam, rels in data["releases"].items():
        for r in rels:
            assert re.fullmatch(r"[0-9a-f]{40}", data["repos"][repo_of[fam]][r]), (fam, r)


def test_every_catalog_entry_is_present(data):
    keys = {e.key for e in CATALOG}
    assert len(keys) == len(CATALOG)
    assert set(data["entries"]) == keys


def test_pairs_versions_validators_cover_every_stack(data):
    all_stacks = stacks(data)
    derived = [s for s in all_stacks if not s.startswith("mindspeed@")]
    assert set(data["pairs"]) == set(derived)
    for s, ms in data["pairs"].items():
        assert ms in all_stacks and ms.startswith("mindspeed@"), (s, ms)
    assert set(data["versions"]) == set(all_stacks)
    assert all(isinstance(v, str) and v for v in data["versions"].values())
    assert set(data["validators"]) == set(all_stacks)
    for s, v in data["validators"].items():
        assert set(v) == {"mindspeed-legacy", "mindspeed-features", "llm-monolith", "llm-features", "evidence"}, s
        assert v["evidence"]
        for cite in v["evidence"].split("; "):
            assert EVIDENCE.match(cite), (s, cite)


def test_citations_well_formed_and_name_listed_commits(data):
    commits = {f"{repo}@{sha[:8]}" for repo, refs in data["repos"].items() for sha in refs.values()}
    all_stacks = set(stacks(data))
    for key, holds in data["entries"].items():
        for stack, cite in holds.items():
            assert stack in all_stacks, (key, stack)
            m = CITATION.match(cite)
            assert m, (key, stack, cite)
            assert f"{m['repo']}@{m['sha']}" in commits, (key, stack, cite)
    for s, v in data["validators"].items():
        for cite in v["evidence"].split("; "):
            m = EVIDENCE.match(cite)
            assert f"{m['repo']}@{m['sha']}" in commits, (s, cite)


def test_citations_use_the_stack_releases_own_commits(data):
    """A citation for mindspeed-llm@R names MindSpeed-LLM@R or the paired MindSpeed release (or the
    Megatron the MindSpeed release is built for), never another release."""
    repos = data["repos"]
    for key, holds in data["entries"].items():
        for stack, cite in holds.items():
            fam, rel = stack.split("@")
            ms_rel = rel if fam == "mindspeed" else data["pairs"][stack].split("@")[1]
            allowed = {f"Ascend/MindSpeed@{repos['Ascend/MindSpeed'][ms_rel][:8]}"}
            allowed |= {f"NVIDIA/Megatron-LM@{sha[:8]}" for sha in repos.get("NVIDIA/Megatron-LM", {}).values()}
            if fam == "mindspeed-llm":
                allowed.add(f"Ascend/MindSpeed-LLM@{repos['Ascend/MindSpeed-LLM'][rel][:8]}")
            if fam == "mindspeed-mm":
                allowed.add(f"Ascend/MindSpeed-MM@{repos['Ascend/MindSpeed-MM'][rel][:8]}")
            assert cite.split(" ")[0] in allowed, (key, stack, cite)


@pytest.mark.skipif(not os.environ.get("NPULINT_RELEASES_CHECK"),
                    reason="regenerating takes ~40 s and needs the upstream mirrors: set NPULINT_RELEASES_CHECK=1")
def test_generated_file_is_up_to_date():
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, os.path.join(REPO, "tools", "gen_releases.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_the_generator_without_its_mirrors_says_so_in_one_line(tmp_path):
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, os.path.join(REPO, "tools", "gen_releases.py"), "--check"],
                          capture_output=True, text=True, env=dict(os.environ, NPULINT_MIRRORS=str(tmp_path / "none")))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("gen_releases: git rev-parse ") and "NPULINT_MIRRORS" in proc.stderr


def test_every_entry_holds_somewhere(data):
    empty = [k for k, v in data["entries"].items() if not v]
    assert not empty


# ---- release facts (found in the source; see docs/releases.md)

def test_moe_tp_extend_ep_inversion(data):
    """alltoall dispatcher + --moe-alltoall-overlap-comm: core_r0.8.0-era validators *require*
    --moe-tp-extend-ep (TP > 1), the feature-manager releases reject it."""
    holds = data["entries"][by_message("the alltoall dispatcher does not support --moe-tp-extend-ep")]
    assert "mindspeed@master" in holds and "mindspeed-llm@master" in holds
    for s in ("mindspeed@2.0.0_core_r0.8.0", "mindspeed@2.1.0_core_r0.8.0", "mindspeed-llm@2.0.0",
              "mindspeed-llm@2.1.0", "mindspeed-mm@2.0.0", "mindspeed-mm@2.1.0"):
        assert s not in holds, s


def test_neat_pack_two_forms(data):
    old = data["entries"][by_message("--neat-pack needs --reset-position-ids")]
    new = data["entries"][by_message("--neat-pack needs --reset-attention-mask")]
    assert set(old) == {"mindspeed-llm@2.0.0", "mindspeed-llm@2.1.0", "mindspeed-llm@2.2.0"}
    assert set(new) == {"mindspeed-llm@2.3.0", "mindspeed-llm@26.0.0", "mindspeed-llm@26.1.0", "mindspeed-llm@master"}
    assert new["mindspeed-llm@master"].startswith("Ascend/MindSpeed-LLM@")
    assert "training_basic.py" in new["mindspeed-llm@master"]


def test_llm_2_0_and_2_1_do_not_run_mindspeeds_validator(data):
    """_by_pass_ms_core: the dummy --optimization-level -1 skips adaptation_l0, so MindSpeed's legacy
    validate_args_wrapper is never registered; MindSpeed-LLM's monolith is."""
    for rel in ("2.0.0", "2.1.0"):
        v = data["validators"][f"mindspeed-llm@{rel}"]
        assert v["mindspeed-legacy"] is False and v["llm-monolith"] is True
        assert "mindspeed_llm/tasks/megatron_adaptor.py" in v["evidence"]
        assert "mindspeed/megatron_adaptor.py" in v["evidence"]  # the optimization-level gate
    for rel in ("2.2.0", "2.3.0", "26.0.0", "26.1.0", "master"):
        v = data["validators"][f"mindspeed-llm@{rel}"]
        assert v["llm-features"] is True and v["llm-monolith"] is False and v["mindspeed-legacy"] is False
    # so a check only MindSpeed's legacy validator makes does not hold there ...
    holds = data["entries"][by_message("--moe-bmm-mc2 only works with --moe-grouped-gemm")]
    assert "mindspeed@2.0.0_core_r0.8.0" in holds
    assert not any(s.startswith("mindspeed-llm@") for s in holds)
    # ... while the monolith's own checks do
    holds = data["entries"][by_message("moe_expert_capacity_factor only works with the alltoall dispatcher")]
    assert {"mindspeed-llm@2.0.0", "mindspeed-llm@2.1.0"} <= set(holds)


def test_legacy_validator_only_on_core_r0_8_0_stacks(data):
    for s, v in data["validators"].items():
        ms = s.split("@")[1] if s.startswith("mindspeed@") else data["pairs"][s].split("@")[1]
        expect = "r0.8.0" in ms and not s.startswith("mindspeed-llm@")
        assert v["mindspeed-legacy"] is expect, s


def test_release_specific_checks(data):
    lora_moe = data["entries"][by_message("LoRA in a MoE model only supports the alltoall_seq dispatcher")]
    assert lora_moe and all(s.startswith("mindspeed-llm@") for s in lora_moe)
    assert "mindspeed-llm@master" in lora_moe and "mindspeed-llm@2.0.0" not in lora_moe
    hif8 = data["entries"][by_message("hif8 only supports tensorwise scaling")]
    assert "mindspeed@master" in hif8 and "mindspeed@2.0.0_core_r0.8.0" not in hif8
    capacity = data["entries"][by_message("moe_expert_capacity_factor does not support use_fused_moe_token_permute")]
    assert set(capacity) <= {"mindspeed-llm@2.0.0", "mindspeed-llm@2.1.0"} and capacity


def test_versions(data):
    v = data["versions"]
    assert v["mindspeed-llm@2.2.0"] == "2.2.0" and v["mindspeed-llm@2.3.0"] == "2.3.0"
    assert v["mindspeed@master"] == "0.12.1" and v["mindspeed@2.0.0_core_r0.8.0"] == "0.8.0"


def test_master_versions(data):
    """Every version master declared, with the periods it did and the releases a tree declaring it
    may run (tools/gen_releases.py master_history)."""
    mv = data["master_versions"]
    assert set(mv) == {"mindspeed", "mindspeed-llm", "mindspeed-mm"}
    for fam, by_version in mv.items():
        for version, got in by_version.items():
            assert got["releases"] and set(got["releases"]) <= set(data["releases"][fam]), (fam, version)
            for p in got["periods"]:
                assert re.fullmatch(r"Ascend/MindSpeed(-LLM|-MM)?@[0-9a-f]{8} \S+:\d+", p["set"]), p
                assert (p["until"] is None) == (p["to"] is None)
        current = [v for v, got in by_version.items() if any(p["until"] is None for p in got["periods"])]
        assert current == [data["versions"][f"{fam}@master"]], fam  # master still declares its own
        assert "master" in by_version[current[0]]["releases"]
    # MindSpeed-LLM master declared 0.0.1 until 310711e9 (2026-01-22), from 2023, before any release
    # npulint knows was branched (2.0.0, 2025-03-18): every release
    llm = mv["mindspeed-llm"]["0.0.1"]
    assert llm["periods"][-1]["until"] == "Ascend/MindSpeed-LLM@310711e9 setup.py:25"
    assert llm["releases"] == data["releases"]["mindspeed-llm"]
    # since then 26.0.0dev0: 26.0.0 and 26.1.0 branched meanwhile, 2.3.0 last before, and master
    assert mv["mindspeed-llm"]["26.0.0dev0"]["releases"] == ["2.3.0", "26.0.0", "26.1.0", "master"]
    assert "2.2.0" not in mv["mindspeed-llm"] and "2.3.0" not in mv["mindspeed-llm"]  # release branches only
    # MindSpeed master declared 0.8.0 from 49588a3e (2024-11-30), before the core_r0.8.0 releases were
    # branched (4b71802c, 2025-01-22): every release; 0.9.0 (from 2025-02-06) only their neighbours
    ms = mv["mindspeed"]["0.8.0"]
    assert [p["set"] for p in ms["periods"]] == ["Ascend/MindSpeed@49588a3e setup.py:12"]
    assert ms["releases"] == data["releases"]["mindspeed"]
    assert mv["mindspeed"]["0.9.0"]["releases"] == ["2.0.0_core_r0.8.0", "2.1.0_core_r0.8.0", "2.1.0_core_r0.12.1"]
    assert set(data["branch_points"]) == {s for s in stacks(data) if not s.endswith("@master")}


def test_the_releases_a_master_period_names():
    """tools/gen_releases.py period_releases: the releases branched during the period, the
    neighbours before and after, master while it still declares the version or when nothing was
    branched since, and every release for a period older than all of them."""
    gen = _gen()
    points = {"1.0": 10, "2.0": 20, "3.0": 30}
    order = ["1.0", "2.0", "3.0", "master"]
    assert gen.period_releases(points, order, 15, 25) == {"1.0", "2.0", "3.0"}
    assert gen.period_releases(points, order, 12, 18) == {"1.0", "2.0"}  # nothing branched meanwhile
    assert gen.period_releases(points, order, 25, None) == {"2.0", "3.0", "master"}  # still declared
    assert gen.period_releases(points, order, 32, 40) == {"3.0", "master"}  # nothing branched since
    assert gen.period_releases(points, order, 5, 12) == set(order)  # older than every release


def test_a_features_own_check_is_found_only_in_a_class_of_that_feature(data):
    """`self.incompatible_check(args, 'moe_alltoall_overlap_comm')` raises for the class's feature:
    FwdBwdOverlapFeature's (moe-fb-overlap) is not MoEAlltoAllMC2Feature's, however long the name."""
    mc2 = data["entries"][by_message("moe_alltoall_mc2 and moe_alltoall_overlap_comm are incompatible")]
    assert [s for s in mc2 if s.startswith("mindspeed@")] == \
        ["mindspeed@26.0.0_core_r0.12.1", "mindspeed@26.1.0_core_r0.12.1", "mindspeed@master"]
    assert all(c.endswith("mindspeed/features_manager/moe/moe_alltoall_mc2.py:23") for c in mc2.values())
    bubble = data["entries"][by_message("adaptive memory optimization is not compatible with recompute_in_bubble")]
    assert "swap_attention.py" not in " ".join(bubble.values())
    assert bubble["mindspeed@master"].endswith("ripipe_schedules_feature.py:51")
    # a shared base class's check (RiPipeSchedulesFeature.validate_args) runs for its subclasses' features
    assert "mindspeed@master" in data["entries"][by_message("recompute_in_bubble and optimize_send_recv_comm are incompatible")]


def test_lines_cited_together_stay_together(data):
    """recompute_in_bubble's condition is the same text as recompute_in_advance's, seven lines up
    (Ascend/MindSpeed@c721ce33 mindspeed/arguments.py:882-883 and :889-890): its raise decides."""
    for fragment, legacy, current in (("recompute_in_bubble only supports pipelining with interleaving (pipeline", 889, 63),
                                      ("recompute_in_advance only supports pipelining with interleaving (pipeline", None, 111)):
        holds = data["entries"][by_message(fragment)]
        if legacy:
            assert holds["mindspeed@2.0.0_core_r0.8.0"].endswith(f"mindspeed/arguments.py:{legacy}")
        assert holds["mindspeed@master"].endswith(f"ripipe_schedules_feature.py:{current}")


def _gen():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_releases", os.path.join(REPO, "tools", "gen_releases.py"))
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    return gen


def test_which_setattr_calls_may_change_a_parser_default():
    """tools/gen_releases.py parser_defaults: a ``setattr(args, key, ...)`` in the else arm of
    ``if getattr(args, key, None) is not None`` (Megatron's validate_args defaults) sets only
    attributes that are None; another by a computed name may set any; ``self.X`` is the class's
    ``X = "..."``."""
    import ast

    gen = _gen()
    tree = ast.parse(
        "def validate_args(args, defaults={}):\n"
        "    for key in defaults:\n"
        "        if getattr(args, key, None) is not None:\n"
        "            print(key)\n"
        "        else:\n"
        "            setattr(args, key, defaults[key])\n"
        "    for key in other:\n"
        "        if getattr(args, key, None) is not None:\n"
        "            setattr(args, key, 1)\n"
        "class Layout:\n"
        "    _STATE = '_layout_state'\n"
        "    def pre(self, args):\n"
        "        setattr(args, self._STATE, {})\n"
        "        setattr(args, self.other, {})\n")
    up = {c: p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    calls = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "setattr"),
                   key=lambda n: n.lineno)
    assert [gen._sets_only_none(c, c.args[1], up) for c in calls[:2]] == [True, False]
    named = gen._class_constant(calls[2], calls[2].args[1], up)
    assert isinstance(named, ast.Constant) and named.value == "_layout_state"
    assert gen._class_constant(calls[3], calls[3].args[1], up) is calls[3].args[1]
