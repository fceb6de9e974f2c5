"""Flag aliases a release's validator applies before a check (rules/mindspeed_releases.json
``aliases`` / ``entry_aliases``, made by tools/gen_releases.py; read by the launch rules through
``Applicable.views``): the check reads the alias's value on the releases that map it, and says
nothing where what a release does is not known."""

import dataclasses
import json
import os

import pytest

from conftest import at, codes, pos
from npulint import registry

registry.load()
from npulint.rules import mindspeed as ms  # noqa: E402
from npulint.rules.mindspeed_catalog import CATALOG, Alias, Applicable, View  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LLM210 = '[tool.npulint.releases]\nmindspeed-llm = "2.1.0"\n'
LLM260 = '[tool.npulint.releases]\nmindspeed-llm = "26.0.0"\n'
LEGACY = '[tool.npulint.releases]\nmindspeed = ["2.0.0_core_r0.8.0", "2.1.0_core_r0.8.0"]\n'
# the probe's repro (/tmp/probe-catalog/llm210_cpmask): CP with --reset-attention-mask and a general mask
EOD = ("torchrun --nproc_per_node 8 posttrain_gpt.py --tensor-model-parallel-size 2 --context-parallel-size 2 "
       "--context-parallel-algo ulysses_cp_algo --reset-attention-mask --stage sft --bf16")
EOD_MSG = "accelerated eod reset mode"


def sh(lint, src, config):
    return lint({"run.sh": src}, select=["NPU5"], config=config)


def about(found, text):
    return [f for f in found if text in f.message]


@pytest.fixture(scope="module")
def data():
    with open(os.path.join(REPO, "rules", "mindspeed_releases.json"), encoding="utf-8") as f:
        return json.load(f)


# -- the data ----------------------------------------------------------------------------------


def test_llm_2_1_maps_cp_attention_mask_type_unconditionally(data):
    (alias,) = [a for a in data["aliases"]["mindspeed-llm@2.1.0"] if a["to"] == "--attention-mask-type"]
    assert alias["from"] == "--cp-attention-mask-type"
    assert alias["when"] == ["all"]  # _add_dummy_args: no test around it
    assert alias["defaults"]["--cp-attention-mask-type"] == "causal"
    assert alias["at"] == "Ascend/MindSpeed-LLM@70116e9b mindspeed_llm/training/arguments.py:1321"


def test_deprecated_args_feature_from_2_2_0(data):
    for rel in ("2.2.0", "2.3.0", "26.0.0", "26.1.0", "master"):
        found = {(a["from"], a["to"]): a for a in data["aliases"][f"mindspeed-llm@{rel}"]}
        for pair in (("--use-mc2", "--use-ascend-mc2"), ("--cp-attention-mask-type", "--attention-mask-type"),
                     ("--moe-intermediate-size", "--moe-ffn-hidden-size"), ("--n-group", "--moe-router-num-groups"),
                     ("--topk-group", "--moe-router-group-topk")):
            assert pair in found, (rel, pair)
            assert "deprecated_args.py" in found[pair]["at"]
        # `if args.deprecated_use_mc2 and not args.use_ascend_mc2`: the destination given wins
        assert found[("--use-mc2", "--use-ascend-mc2")]["when"] == \
            ["all", ["all", ["on", "--use-mc2"], ["not", ["on", "--use-ascend-mc2"]]]]
        # `if args.deprecated_cp_attention_mask_type`: the deprecated flag given wins
        assert found[("--cp-attention-mask-type", "--attention-mask-type")]["when"] == \
            ["all", ["on", "--cp-attention-mask-type"]]
    # 2.2.0 and 2.3.0 set the scaling factor from --topk-group's value (deprecated_args.py:90), later releases fix it
    assert ("--topk-group", "--moe-router-topk-scaling-factor") in \
        {(a["from"], a["to"]) for a in data["aliases"]["mindspeed-llm@2.2.0"]}
    assert ("--routed-scaling-factor", "--moe-router-topk-scaling-factor") in \
        {(a["from"], a["to"]) for a in data["aliases"]["mindspeed-llm@26.0.0"]}


def test_mindspeed_core_mla_alias(data):
    found = {(a["from"], a["to"]) for a in data["aliases"]["mindspeed@master"]}
    assert ("--multi-head-latent-attention", "--multi-latent-attention") in found


def test_order_decides_whether_a_check_sees_the_alias(data):
    """LLM 2.1.0: _add_dummy_args runs before _validate_create_attention_mask_in_dataloader (the
    eod check); from 2.2.0, DeprecatedArgsFeature runs before MC2Feature (the list's order)."""
    eod = next(e for e in CATALOG if EOD_MSG in e.message)
    (index, order), = [(i, o) for i, o in data["entry_aliases"][eod.key]["mindspeed-llm@2.1.0"]
                       if data["aliases"]["mindspeed-llm@2.1.0"][i]["from"] is not None]
    alias = data["aliases"]["mindspeed-llm@2.1.0"][index]
    assert (alias["from"], alias["to"], order) == ("--cp-attention-mask-type", "--attention-mask-type", "after")
    mc2 = next(e for e in CATALOG if e.message == "mc2 requires --sequence-parallel")
    for rel in ("26.0.0", "26.1.0", "master"):
        (index, order), = [(i, o) for i, o in data["entry_aliases"][mc2.key][f"mindspeed-llm@{rel}"]
                           if data["aliases"][f"mindspeed-llm@{rel}"][i]["from"] is not None]
        assert data["aliases"][f"mindspeed-llm@{rel}"][index]["from"] == "--use-mc2" and order == "after"


# -- the rules ---------------------------------------------------------------------------------


def test_cp_attention_mask_type_general_on_2_1_0(lint):
    """The probe's false positive: 2.1.0 sets attention_mask_type from --cp-attention-mask-type."""
    assert about(sh(lint, EOD + " --cp-attention-mask-type general\n", LLM210), EOD_MSG) == []


def test_cp_attention_mask_type_causal_on_2_1_0_still_reported(lint):
    src = EOD + " --cp-attention-mask-type causal\n"
    found = about(sh(lint, src, LLM210), EOD_MSG)
    assert codes(found) == ["NPU504"]
    assert pos(found[0]) == at(src, "--cp-attention-mask-type")
    # absent: its default (causal) is copied
    assert codes(about(sh(lint, EOD + "\n", LLM210), EOD_MSG)) == ["NPU504"]


def test_destination_given_with_the_alias_on_2_1_0(lint):
    """_add_dummy_args overwrites --attention-mask-type whatever it says: the copied value decides."""
    assert codes(about(sh(lint, EOD + " --attention-mask-type general\n", LLM210), EOD_MSG)) == ["NPU504"]
    assert about(sh(lint, EOD + " --attention-mask-type causal --cp-attention-mask-type general\n", LLM210),
                 EOD_MSG) == []


def test_attention_mask_type_on_a_release_that_does_not_map_it(lint):
    """MindSpeed's legacy validator reads --attention-mask-type itself: the alias's flag changes nothing."""
    legacy = EOD.replace("posttrain_gpt.py", "pretrain_gpt.py").replace(" --stage sft", "")
    assert codes(about(sh(lint, legacy + " --attention-mask-type causal\n", LEGACY), EOD_MSG)) == ["NPU504"]
    assert about(sh(lint, legacy + " --attention-mask-type general\n", LEGACY), EOD_MSG) == []


def test_use_mc2_from_2_2_0(lint):
    """--use-mc2 is --use-ascend-mc2 on the releases whose DeprecatedArgsFeature maps it."""
    src = "torchrun pretrain_gpt.py --use-mc2 --tensor-model-parallel-size 2\n"
    found = about(sh(lint, src, LLM260), "mc2 requires --sequence-parallel")
    assert codes(found) == ["NPU504"]
    assert pos(found[0]) == at(src, "--use-mc2")
    assert about(sh(lint, src.replace("\n", " --sequence-parallel\n"), LLM260), "mc2 requires") == []
    # with the destination too (`and not args.use_ascend_mc2`): one finding, at the flag the check reads
    both = "torchrun pretrain_gpt.py --use-ascend-mc2 --use-mc2 --tensor-model-parallel-size 2\n"
    found = about(sh(lint, both, LLM260), "mc2 requires --sequence-parallel")
    assert codes(found) == ["NPU504"] and pos(found[0]) == at(both, "--use-ascend-mc2")


def test_use_mc2_where_no_release_maps_it(lint):
    """LLM 2.1.0 sets use_mc2 = False before its checks and maps nothing: no mc2 check applies."""
    assert sh(lint, "torchrun pretrain_gpt.py --use-mc2 --use-ascend-coc\n", LLM210) == []


# -- the mechanism -----------------------------------------------------------------------------


def cmd_of(text):
    return ms.Cmd(ms.find_launch([ms.Word(w, None) for w in text.split()]))


ENTRY = next(e for e in CATALOG if e.message == "mc2 requires --sequence-parallel")
MC2 = Alias("--use-mc2", "--use-ascend-mc2", ("all", ("on", "--use-mc2"), ("not", ("on", "--use-ascend-mc2"))),
            (("--use-mc2", False),), True, "x.py:1")


def finds(text, views, entry=ENTRY):
    """*views*: each a View, or a tuple of aliases (a View without parser defaults)."""
    views = tuple(v if isinstance(v, View) else View(v) for v in views)
    applicable = Applicable(entry, "r", "c", views)
    return ms.MindSpeedMissingRequirement.check(cmd_of(text), [applicable])


def test_unknown_order_or_test_says_nothing_unless_both_readings_report():
    text = "torchrun pretrain_gpt.py --use-mc2 --tensor-model-parallel-size 2"
    assert len(finds(text, ((MC2,),))) == 1
    assert finds(text, ((dataclasses.replace(MC2, certain=False),),)) == []  # unmapped, --use-mc2 is no mc2 flag
    unknown_test = Alias("--use-mc2", "--use-ascend-mc2", ("all", ("unknown",)), MC2.defaults, True, "x.py:1")
    assert finds(text, ((unknown_test,),)) == []
    # a release that does not map it, beside one that does: nothing
    assert finds(text, ((MC2,), ())) == []


def test_unknown_parts_of_a_test_do_not_hide_a_false_one():
    text = "torchrun pretrain_gpt.py --use-mc2 --tensor-model-parallel-size 2"
    never = Alias("--use-mc2", "--use-ascend-mc2", ("all", ("any",), ("unknown",)), MC2.defaults, True, "x.py:1")
    assert finds(text, ((never,),)) == []  # (a hasattr of an attribute no parser registers)
    assert finds("torchrun pretrain_gpt.py --use-ascend-mc2 --tensor-model-parallel-size 2", ((never,),)) != []


def test_an_alias_source_written_with_an_unknown_value_leaves_the_destination_unknown():
    copy = Alias("--cp-attention-mask-type", "--attention-mask-type", ("all",), (("--cp-attention-mask-type", "causal"),),
                 True, "x.py:1")
    cmd = ms.Cmd(ms.find_launch([ms.Word(w, None) for w in "torchrun pretrain_gpt.py --cp-attention-mask-type".split()]
                                + [ms.Word("$M", None, known=False)]))
    assert cmd.under(copy).holds(("eq", "--attention-mask-type", "causal"))[0] is None
    absent = cmd_of("torchrun pretrain_gpt.py --attention-mask-type general").under(copy)
    assert absent.holds(("eq", "--attention-mask-type", "causal"))[0] is True


# -- validators that set a flag's value before a check (``args.use_flash_attn = True``) --------
# The msdiff probe ran each release's own validators (with stand-ins for torch) on generated
# launches: these were rejected by npulint and accepted upstream.

BASE = "torchrun pretrain_gpt.py --num-layers 8 --hidden-size 256 --num-attention-heads 8 --bf16"
MS_MASTER = '[tool.npulint.releases]\nmindspeed = "master"\n'
LLM_MASTER = '[tool.npulint.releases]\nmindspeed-llm = "master"\n'
NONE = ""


def test_literal_settings_are_in_the_data(data):
    # context parallel turns flash attention on (028de58c context_parallel_feature.py:51)
    found = [a for a in data["aliases"]["mindspeed@master"] if a["from"] is None and a["to"] == "--use-flash-attn"]
    assert found and all(a["value"] is True for a in found)
    # a bypass set and then restored is not a setting (1e898a29 arguments.py:551, :815)
    assert not [a for a in data["aliases"]["mindspeed@2.1.0_core_r0.8.0"]
                if a["from"] is None and a["to"] == "--use-legacy-models"]


@pytest.mark.parametrize("config", [MS_MASTER, NONE])
@pytest.mark.parametrize("algo", ["megatron_cp_algo", "ulysses_cp_algo", "hybrid_cp_algo"])
def test_kv_cache_policy_with_context_parallel_turns_flash_attention_on(lint, config, algo):
    src = f"{BASE} --context-parallel-size 2 --context-parallel-algo {algo} --context-parallel-kv-cache-policy half\n"
    assert about(sh(lint, src, config), "flash attention") == []


def test_kv_cache_policy_flash_attention_twin(lint):
    # kvallgather does not turn it on: the check holds as before
    src = f"{BASE} --context-parallel-size 2 --context-parallel-algo kvallgather_cp_algo " \
          "--context-parallel-kv-cache-policy half\n"
    assert codes(about(sh(lint, src, MS_MASTER), "flash attention")) == ["NPU504"]
    assert about(sh(lint, src.replace("\n", " --use-flash-attn\n"), MS_MASTER), "flash attention") == []


@pytest.mark.parametrize("vpp, reported", [("2", False), ("1", True)])
def test_recompute_in_advance_is_turned_off_without_a_one_layer_virtual_pipeline(lint, vpp, reported):
    # 028de58c ripipe_schedules_feature.py:113-114, before MoEFwdBwdOverlapFeature's check
    src = f"{BASE} --pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage {vpp} " \
          "--moe-fb-overlap --moe-grouped-gemm --expert-model-parallel-size 2 --recompute-in-advance\n"
    found = about(sh(lint, src, LLM_MASTER), "recompute_in_advance")
    assert codes(found) == (["NPU501"] if reported else [])


@pytest.mark.parametrize("tp, reported", [("1", False), ("4 --tp-x 2 --tp-y 2", True)])
def test_megatron_turns_sequence_parallel_off_at_tensor_parallel_1(lint, tp, reported):
    # Megatron a845aa7e megatron/training/arguments.py:758-761
    src = f"{BASE} --tp-2d --sequence-parallel --tensor-model-parallel-size {tp}\n"
    assert codes(about(sh(lint, src, MS_MASTER), "sequence_parallel")) == (["NPU501"] if reported else [])


LONGROPE = " --rope-scaling-type longrope --rope-scaling-original-max-position-embeddings 4096 " \
           "--long-factor 1,2 --short-factor 1,2"


@pytest.mark.parametrize("config", [LLM_MASTER, NONE])
def test_mscale_alone_is_checked_only_under_longrope(lint, config):
    # c77308a1 mindspeed_llm/features_manager/common/rotary.py:68,79-80: inside `if longrope`
    assert about(sh(lint, f"{BASE} --short-mscale 1.0\n", config), "mscale") == []
    found = about(sh(lint, f"{BASE} --short-mscale 1.0{LONGROPE}\n", LLM_MASTER), "mscale")
    assert codes(found) == ["NPU504"]
    assert about(sh(lint, f"{BASE} --short-mscale 1.0 --long-mscale 1.0{LONGROPE}\n", LLM_MASTER), "mscale") == []


@pytest.mark.parametrize("config", [LLM_MASTER, '[tool.npulint.releases]\nmindspeed-llm = "2.2.0"\n', NONE])
def test_high_availability_with_the_deprecated_use_dist_ckpt_flag(lint, config):
    # the flag has no effect on core_r0.12.1 Megatron; 2.2.0-26.0.0 force use_dist_ckpt off
    src = f"{BASE} --enable-high-availability --use-dist-ckpt\n"
    assert about(sh(lint, src, config), "high availability") == []
    # twin: another flag high availability rejects is still reported
    assert codes(about(sh(lint, src.replace("--use-dist-ckpt", "--swap-attention"), LLM_MASTER),
                       "high availability")) == ["NPU501"]


# -- features validated only when their name's attribute is true --------------------------------
LEGACY_R08 = '[tool.npulint.releases]\nmindspeed = "2.1.0_core_r0.8.0"\n'


@pytest.mark.parametrize("config", [LEGACY_R08, LLM210])
def test_a_gated_feature_checks_only_when_its_flag_is_on(lint, config):
    # 1e898a29 mindspeed/arguments.py:1042-1046 validates a feature only when getattr(args,
    # feature_name); LLM 2.1.0 validates FwdBwdOverlapFeature only under `if args.moe_fb_overlap`
    # (70116e9b mindspeed_llm/training/arguments.py:239-241): unperm2-swap alone is never checked
    assert about(sh(lint, f"{BASE} --moe-unperm2-mem-optim-swap\n", config), "unperm2") == []


def test_a_gated_feature_twin_its_flag_on(lint):
    # dualpipev's feature is named after --schedules-method: a dualpipev launch runs its checks
    src = f"{BASE} --schedules-method dualpipev --pipeline-model-parallel-size 2 " \
          "--num-layers-per-virtual-pipeline-stage 2\n"
    assert codes(about(sh(lint, src, LEGACY_R08), "dualpipev")) == ["NPU501"]


def test_a_feature_whose_name_is_no_attribute_never_validates(lint):
    # LLM 2.1.0's HighAvailabilityFeature('high-availability'): getattr(args, 'high_availability')
    # is never set (70116e9b mindspeed_llm/training/arguments.py:1532-1536)
    assert about(sh(lint, f"{BASE} --enable-optimizer-state-local-copy\n", LLM210), "high-availability") == []
    twin = '[tool.npulint.releases]\nmindspeed-llm = "2.0.0"\n'  # 2.0.0 checks it in its own validator
    assert codes(about(sh(lint, f"{BASE} --enable-optimizer-state-local-copy\n", twin), "high-availability")) \
        == ["NPU504"]


def test_a_literal_setting_of_the_value_written_changes_nothing(lint):
    # c77308a1 muon_optimizer_feature.py:112 sets optimizer = "muon" (from "dist_muon") before the
    # Muon checks: for a launch that writes --optimizer muon nothing changes, and the flag keeps its place
    found = about(sh(lint, f"{BASE} --optimizer muon --fp16\n", LLM_MASTER), "Muon")
    assert codes(found) == ["NPU501"]
    assert about(sh(lint, f"{BASE} --optimizer adam --fp16\n", LLM_MASTER), "Muon") == []


def test_guards_read_through_getattr(data):
    # `if getattr(args, "optimizer", None) == "dist_muon":` is a condition on the launch
    found = [a for a in data["aliases"]["mindspeed-llm@master"]
             if a["from"] is None and a["to"] == "--optimizer" and a["value"] == "muon"]
    assert [a["when"] for a in found] == [["all", ["eq", "--optimizer", "dist_muon"]]]


def test_a_literal_setting_that_may_run_keeps_a_written_flag_of_that_value():
    # the mc2 entry on `--use-ascend-mc2 --tensor-model-parallel-size 2` (no --sequence-parallel):
    # a validator that may set use_ascend_mc2 = True changes nothing; one that may set it False
    # may turn the check off (both readings must report)
    text = "torchrun pretrain_gpt.py --use-ascend-mc2 --tensor-model-parallel-size 2"
    assert len(finds(text, ((),))) == 1
    same = Alias(None, "--use-ascend-mc2", ("all", ("unknown",)), (), False, "x.py:1", True)
    assert len(finds(text, ((same,),))) == 1
    off = dataclasses.replace(same, value=False)
    assert finds(text, ((off,),)) == []


# -- parser defaults per release (``parser_defaults``) -------------------------------------------
# An absent flag has its release's parser default. The msdiff oracle found launches every
# release rejects because of one (the alltoall flags with the default allgather dispatcher).

DISPATCH = next(e for e in CATALOG if e.message.startswith("--moe-alltoall-overlap-comm only supports the alltoall"))


def test_parser_defaults_are_in_the_data(data):
    found = data["parser_defaults"]
    for stack in ("mindspeed@master", "mindspeed@2.1.0_core_r0.8.0", "mindspeed-llm@master", "mindspeed-llm@2.2.0",
                  "mindspeed-mm@master"):
        value, at = found[stack]["--moe-token-dispatcher-type"]
        assert value == "allgather" and at.startswith("NVIDIA/Megatron-LM@"), (stack, at)
    # releases differ: MindSpeed's CP algorithm registration changed its default
    assert found["mindspeed@2.1.0_core_r0.8.0"]["--context-parallel-algo"][0] == "ulysses_cp_algo"
    assert found["mindspeed@master"]["--context-parallel-algo"][0] == "megatron_cp_algo"
    # a default a validator may overwrite, in a way not modelled, is left out: core_r0.8.0's Megatron
    # sets `args.tensor_model_parallel_size = min(...)` with no test around it; on master the only
    # setting is the dist-train feature's, modelled (an unknown value under --dist-train)
    assert "--tensor-model-parallel-size" not in found["mindspeed@2.1.0_core_r0.8.0"]
    assert found["mindspeed@master"]["--tensor-model-parallel-size"][0] == 1
    # registrations that disagree are left out: LLM 2.1.0's --transformer-impl ("local") against Megatron's
    assert "--transformer-impl" not in found["mindspeed-llm@2.1.0"]


@pytest.mark.parametrize("config", [MS_MASTER, LLM_MASTER, '[tool.npulint.releases]\nmindspeed-llm = "2.2.0"\n'])
def test_an_absent_dispatcher_is_the_default_allgather(lint, config):
    found = about(sh(lint, f"{BASE} --moe-alltoall-overlap-comm\n", config), "only supports the alltoall")
    assert codes(found) == ["NPU504"]
    assert [pos(f) for f in found] == [(1, len(BASE) + 2)]


@pytest.mark.parametrize("dispatcher", ["alltoall", "alltoall_seq", "$DISPATCHER"])
def test_an_absent_dispatcher_twins(lint, dispatcher):
    src = f"{BASE} --moe-token-dispatcher-type {dispatcher} --moe-alltoall-overlap-comm\n"
    assert about(sh(lint, src, MS_MASTER), "only supports the alltoall") == []
    # an unknown word could be the dispatcher flag itself
    assert about(sh(lint, f"{BASE} $EXTRA --moe-alltoall-overlap-comm\n", MS_MASTER), "only supports the alltoall") == []


def test_a_release_default_decides_only_on_that_release(lint):
    # CP with --reset-attention-mask and a causal mask needs megatron_cp_algo on 2.1.0_core_r0.8.0
    # (1e898a29 mindspeed/arguments.py:997): its default there is ulysses_cp_algo
    src = f"{BASE} --context-parallel-size 2 --reset-attention-mask --attention-mask-type causal\n"
    assert codes(about(sh(lint, src, LEGACY_R08), "accelerated eod reset")) == ["NPU504"]
    # the twin: the algorithm written
    written = src.replace("\n", " --context-parallel-algo megatron_cp_algo\n")
    assert about(sh(lint, written, LEGACY_R08), "accelerated eod reset") == []


def test_views_with_different_defaults_must_all_report():
    text = "torchrun pretrain_gpt.py --moe-alltoall-overlap-comm"
    gather = View((), (("--moe-token-dispatcher-type", "allgather"),))
    assert len(finds(text, (gather,), DISPATCH)) == 1
    assert finds(text, ((),), DISPATCH) == []  # no default: unknown
    assert finds(text, (gather, View((), (("--moe-token-dispatcher-type", "alltoall"),))), DISPATCH) == []
    assert finds(text, (gather, View()), DISPATCH) == []


@pytest.mark.parametrize("flag", ["--moe-allgather-overlap-comm", "--moe-alltoall-overlap-comm"])
def test_legacy_overlap_needs_async_permutation_and_grouped_gemm(lint, flag):
    # 1e898a29 mindspeed/arguments.py:709-713 (the msdiff oracle: rejected, npulint was silent)
    found = about(sh(lint, f"{BASE} {flag} --moe-token-dispatcher-type alltoall_seq\n", LEGACY_R08), f"{flag} needs")
    assert sorted(f.message.split(": ")[1].split(" (")[0] for f in found) == [
        f"{flag} needs --moe-grouped-gemm", f"{flag} needs --moe-permutation-async-comm"]
    both = f"{BASE} {flag} --moe-token-dispatcher-type alltoall_seq --moe-permutation-async-comm --moe-grouped-gemm\n"
    assert about(sh(lint, both, LEGACY_R08), f"{flag} needs") == []


@pytest.mark.parametrize("config", [LLM210, '[tool.npulint.releases]\nmindspeed-llm = "2.0.0"\n'])
def test_mscale_pair_on_the_monolith_releases(lint, config):
    # b626d239 mindspeed_llm/training/arguments.py:1463,1477-1478 (_validate_long_rope)
    found = about(sh(lint, f"{BASE} --short-mscale 1.0{LONGROPE}\n", config), "mscale")
    assert codes(found) == ["NPU504"]
    assert about(sh(lint, f"{BASE} --short-mscale 1.0 --long-mscale 1.0{LONGROPE}\n", config), "mscale") == []
    assert about(sh(lint, f"{BASE} --short-mscale 1.0\n", config), "mscale") == []


# -- a conflict one side of which holds through a default -----------------------------------------
FB = f"{BASE} --moe-fb-overlap --moe-grouped-gemm --expert-model-parallel-size 2 --num-experts 4"


def test_a_conflict_with_a_default_value_is_a_missing_requirement(lint):
    # 028de58c fb_overlap.py:88-89 rejects the allgather dispatcher, the default (the oracle: rejected)
    found = about(sh(lint, FB + "\n", MS_MASTER), "allgather and alltoall_seq")
    assert codes(found) == ["NPU504"]
    assert found[0].message.startswith("--moe-fb-overlap: the fb overlap feature does not support")
    assert "--moe-token-dispatcher-type is not given and defaults to allgather" in found[0].message
    assert pos(found[0]) == (1, len(BASE) + 2)


@pytest.mark.parametrize("tail, code", [(" --moe-token-dispatcher-type alltoall", None),
                                        (" $DISPATCH", None),
                                        (" --moe-token-dispatcher-type allgather", "NPU501")])
def test_a_conflict_with_a_default_value_twins(lint, tail, code):
    # the value written: no default is read (allgather written is the pair NPU501 reports)
    found = about(sh(lint, FB + tail + "\n", MS_MASTER), "allgather and alltoall_seq")
    assert codes(found) == ([code] if code else [])


def test_a_conflict_with_a_default_value_on_the_releases_that_hold_it(lint):
    # c77308a1 convert_checkpoint.py:115-116: --ckpt-format defaults to torch_dist (MindSpeed-LLM's
    # own tests/poc/qwen3_235b_64p_perf launches are rejected so, the oracle says)
    src = f"{BASE} --enable-hf2mg-convert --load ckpt\n"
    found = about(sh(lint, src, LLM_MASTER), "cannot be used with --enable-hf2mg-convert")
    assert codes(found) == ["NPU504"] and "--ckpt-format is not given and defaults to torch_dist" in found[0].message
    assert about(sh(lint, src.replace("\n", " --ckpt-format torch\n"), LLM_MASTER), "hf2mg") == []
    # unconfigured: releases without the check may run it
    assert about(sh(lint, src, NONE), "hf2mg") == []


# -- found by the review of the parser defaults ----------------------------------------------------
MM210 = '[tool.npulint.releases]\nmindspeed-mm = "2.1.0"\n'


def test_a_guard_on_another_objects_attribute_is_unknown(data):
    # MM's validate_args sets normalization = "RMSNorm" under `hasattr(args.mm.model, ...)` (b09d6f14
    # mindspeed_mm/patchs/validate_args_patch.py:66-68): not a test of the launch's namespace
    (alias,) = [a for a in data["aliases"]["mindspeed-mm@2.1.0"] if a["to"] == "--normalization"]
    assert ["unknown"] in alias["when"] and ["any"] not in alias["when"]
    assert not any(["any"] in a["when"] for aliases in data["aliases"].values() for a in aliases)


def test_mm_2_1_fused_rmsnorm_with_a_model_config_that_may_set_rmsnorm(lint):
    # MindSpeed-MM 2.1.0's own examples (b09d6f14 examples/wan2.1/14b/t2v/pretrain.sh:73) launch so
    src = "torchrun --nproc_per_node 8 pretrain_sora.py --mm-data data.json --mm-model model.json " \
          "--use-fused-rmsnorm --bf16\n"
    assert about(sh(lint, src, MM210), "RMSNorm") == []
    # twin: plain MindSpeed on the same legacy release has no such setting
    assert codes(about(sh(lint, f"{BASE} --use-fused-rmsnorm\n", LEGACY_R08), "RMSNorm")) == ["NPU504"]


def test_defaults_a_wrapper_assigns_are_not_certain(data):
    # MindSpeed-LLM 2.2.0's registered wrapper runs _add_dummy_args_v2 (transformer_impl = 'local',
    # ckpt_format = 'torch') before the feature checks (337813b0 mindspeed_llm/training/arguments.py)
    found = data["parser_defaults"]
    for stack in ("mindspeed-llm@2.2.0", "mindspeed-llm@2.3.0"):
        assert "--transformer-impl" not in found[stack] and "--ckpt-format" not in found[stack]
    assert "--ckpt-format" not in found["mindspeed-llm@26.0.0"]
    assert found["mindspeed@master"]["--ckpt-format"][0] == "torch_dist"  # (plain MindSpeed: no wrapper)


@pytest.mark.parametrize("config", [MS_MASTER, LLM_MASTER])
def test_checkpoint_args_make_the_launch_flags_unknown(lint, config):
    # Megatron's load_args_from_checkpoint force-sets the dispatcher, the experts, TP/PP/EP ...
    # before the validators (a845aa7e megatron/training/checkpointing.py:1075-1145)
    src = f"{FB} --use-checkpoint-args --load ckpt\n"
    assert [f for f in sh(lint, src, config) if f.code in ("NPU501", "NPU504")] == []
    assert codes(about(sh(lint, FB + "\n", config), "allgather and alltoall_seq")) == ["NPU504"]
    # the spelling is still checked
    assert codes(sh(lint, src.replace("--bf16", "--bf61"), config)) == ["NPU502"]


@pytest.mark.parametrize("tail", ["--moe-token-dispatcher-type allgather", "",
                                  "--moe-token-dispatcher-type alltoall --moe-expert-capacity-factor 1.0"])
def test_permute_fusion_checks_depend_on_the_installed_torch_npu(lint, tail):
    # 028de58c fused_moe_permute.py:27-36: without torch_npu's fused permute ops the feature warns,
    # turns the fusion off and returns before its checks; the torch_npu release is not known here
    src = f"{BASE} --moe-permute-fusion {tail}\n"
    assert about(sh(lint, src, MS_MASTER), "permute-fusion") == []


def test_a_value_a_validator_computes_under_a_flag_is_unknown(data):
    # MindSpeed's dist-train feature sets TP/PP/CP from the model config under `if args.dist_train:`
    # (028de58c mindspeed/features_manager/dist_train/dist_train_feature.py:24-26)
    found = {(a["to"], str(a["when"])) for a in data["aliases"]["mindspeed@master"] if a.get("unknown")}
    assert ("--tensor-model-parallel-size", str(["all", ["on", "--dist-train"]])) in found
    # a computed value under a test npulint cannot read, or with none, is not written (restores)
    assert not [a for aliases in data["aliases"].values() for a in aliases
                if a.get("unknown") and (len(a["when"]) == 1 or "unknown" in str(a["when"]))]


def test_a_setting_to_an_unknown_value_makes_the_flag_unknown_where_it_may_run():
    text = "torchrun pretrain_gpt.py --use-ascend-mc2 --sequence-parallel"
    entry = next(e for e in CATALOG if e.message == "mc2 requires tensor parallel size > 1")
    assert len(finds(text, ((),), entry)) == 1  # TP absent: 1
    config = Alias(None, "--tensor-model-parallel-size", ("all", ("on", "--dist-train")), (("--dist-train", False),),
                   False, "x.py:1", None, True)
    assert len(finds(text, ((config,),), entry)) == 1  # its test is false: TP is 1
    assert finds(text + " --dist-train", ((config,),), entry) == []  # TP from the model config
    assert finds(text + " --tensor-model-parallel-size 2 --dist-train", ((config,),), entry) == []
