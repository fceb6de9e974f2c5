"""NPU201-NPU208: torchair ``CompilerConfig`` (reduce-overhead / npugraph_ex = aclgraph mode).

A *config* is the object made by ``torchair.CompilerConfig()``; it is tracked by the call
that creates it, through the names bound (exactly) to that call. Its *effective mode* at a
``torchair.get_npu_backend(compiler_config=cfg)`` call is the value of the last assignment to
``cfg.mode`` / ``cfg.mode.value`` before that call in straight-line code of the same scope
(default ``"max-autotune"``); RULES.md "NPU2xx". Whatever cannot be known for certain makes
the mode-dependent rules silent:

* an assignment to the mode under ``if``/``for``/``while``/``try``/``with`` (Site.conditional,
  Site.with_depth), in another scope than the backend call, or after it (torchair reads the
  config lazily, when the compiled model first runs), or with an unknown value;
* a config that *escapes*: its name used other than as the root of an attribute chain
  (passed to a function, aliased, returned, ...), or a sub-object of it passed on; or a
  module-level config whose name another Python file of the run uses other than by an item
  read (``from pkg.compile_utils import config; config.mode = "reduce-overhead"``:
  ``RunModules.touched``, kind ``"use"``);
* a name that may or may not be the config (bound in several branches), a parameter, a
  subscript, an attribute of an unknown object;
* attribute chains changed without a plain value (tuple targets, ``for``/``with`` targets,
  ``del``), which the engine records as "opaque" stores.

The option tree (:data:`TREE`) is torchair's: every sub-config and option of
``CompilerConfig``, with the class that defines it and the file:line of its definition in
Ascend/torchair master ``fced8842d149f16b587c2c867d427e4b766831ca`` (python/torchair/configs/).
The same paths exist on branches 7.1.0-26.0.0 (older branches have a subset; no option of
an older branch is missing from master).
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import re
from typing import Any, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

import libcst as cst

from npulint import modules as _modules
from npulint.checker import FileContext
from npulint.lintrule import Analysis, Invalid, LintRule
from npulint.model import Fix
from npulint.semantic import AttrStore, Scope, Site, canonical, dotted
from npulint.values import UNKNOWN, is_constant

# ======================================================================================
# Qualified names
# ======================================================================================

COMPILER_CONFIG = {"torchair.CompilerConfig", "torchair.configs.compiler_config.CompilerConfig"}
GET_NPU_BACKEND = {"torchair.get_npu_backend", "torchair.npu_fx_compiler.get_npu_backend"}
# a config another module makes and this one imports is followed (TorchairConfigAnalysis._imported_config)
_modules.register_exported_calls(COMPILER_CONFIG)
TORCH_COMPILE = {"torch.compile"}
# ``cache_compile(func, *, config=None, dynamic=True, cache_dir=None, global_rank=None, tp_rank=None,
# pp_rank=None, **kwargs)``: Ascend/torchair@fced8842 python/torchair/inference/__init__.py:12, which
# forwards to python/torchair/inference/_cache_compiler.py:602 (that one also takes ``backend=``, reached
# through ``**kwargs``: with ``config`` absent the config is the backend's ``compiler_config``,
# :606-610). ``func`` must be a bound method of an ``nn.Module`` (:612-616); the config is read when the
# compiled callable first runs (``LazyCompiledModel``, :559-564; ``config or CompilerConfig()``, so no
# config is the default one). It is ``torch.compile(func, backend=get_npu_backend(compiler_config=config))``
# with a cache: npulint takes the config's mode at the cache_compile call as the effective mode.
# (``torch.npu.npugraph_ex.inference.cache_compile`` is another API, torch_npu's, and not this one.)
CACHE_COMPILE = {"torchair.inference.cache_compile", "torchair.inference._cache_compiler.cache_compile"}
# Forget every compiled graph (torch.compiler.reset calls torch._dynamo.reset): graphs compiled
# before it do not coexist with those compiled after it.
DYNAMO_RESET = {"torch._dynamo.reset", "torch.compiler.reset"}

MODES = ("max-autotune", "reduce-overhead", "npugraph_ex")
DEFAULT_MODE = "max-autotune"
RUN_EAGERLY = ("debug", "run_eagerly")
ACLGRAPH_MODES = ("reduce-overhead", "npugraph_ex")
INT64_MAX = 2 ** 63 - 1

_TA = "Ascend/torchair@fced8842 python/torchair/"
_CFG = "configs/"

# ======================================================================================
# The option tree of torchair's CompilerConfig
# ======================================================================================
#
# kinds:
#   config   an NpuBaseConfig whose __setattr__ raises ValueError("<Class> has no option <k>,
#            all options [...]") for a name not in its _fixed_attrs (_option_base.py:221-232)
#   object   an object that accepts any attribute silently: _AclGraphConfig and
#            _NpuGraphExConfig are plain classes; _ExportConfig is an NpuBaseConfig whose
#            __init__ never calls NpuBaseConfig.__init__, so it has no _fixed_attrs
#            (export_config.py:19-28) and its __setattr__ stores anything
#   option   an OptionValue; assigning through a strict parent (or to ``.value``) runs the
#            value setter (_option_base.py:42-48 and the subclasses' setters). Under a lenient
#            parent the option object is simply replaced (no check)
#   attr     a plain attribute (any value is stored)
#   property a settable property (``path`` of graph_dump / data_dump)
# ``assignable=False``: the attribute exists but is not in _fixed_attrs, so assigning it
# raises ValueError (CompilerConfig.aclgraph_config, .npugraphex_config).
# ``check``: what NPU204 validates ("bool": OptionValue(_, [True, False]); ("int", lo, hi):
# IntRangeValue; "pool": use_custom_pool). Other validators are recorded for the record.


@dataclasses.dataclass(frozen=True)
class Node:
    kind: str
    cls: str
    where: str
    children: Tuple[Tuple[str, "Node"], ...] = ()
    check: object = None
    assignable: bool = True

    def child(self, name: str) -> Optional["Node"]:
        for k, v in self.children:
            if k == name:
                return v
        return None

    def names(self) -> List[str]:
        return [k for k, _ in self.children]


def _config(cls: str, where: str, *children: Tuple[str, Node], lenient: bool = False) -> Node:
    return Node("object" if lenient else "config", cls, where, tuple(children))


def _opt(name: str, where: str, check: object, cls: str = "OptionValue") -> Tuple[str, Node]:
    return name, Node("option", cls, where, check=check)


def _bool(name: str, where: str) -> Tuple[str, Node]:
    return _opt(name, where, "bool")


def _attr(name: str, where: str, check: object = None) -> Tuple[str, Node]:
    return name, Node("attr", "", where, check=check)


def _raw(name: str, where: str) -> Tuple[str, Node]:
    """An OptionValue under a lenient parent: assignment replaces it, nothing is checked."""
    return name, Node("option", "OptionValue", where, check=None)


def _sub(name: str, node: Node, assignable: bool = True) -> Tuple[str, Node]:
    return name, dataclasses.replace(node, assignable=assignable)


_D = _CFG + "debug_config.py"
_E = _CFG + "experimental_config.py"
_X = _CFG + "export_config.py"
_DUMP_BASE = (("_path", Node("option", "OptionValue", f"{_D}:18", check="any")),)

TREE = _config(
    "CompilerConfig", f"{_CFG}compiler_config.py:24-45",
    _sub("debug", _config(
        "_DebugConfig", f"{_D}:103-114",
        _sub("graph_dump", _config(
            "_Dump", f"{_D}:39-51",
            _opt("type", f"{_D}:41", ("enum", ("txt", "pbtxt", "py"))),
            *_DUMP_BASE,
            ("path", Node("property", "", f"{_D}:43-51")))),
        _sub("data_dump", _config(
            "_DataDump", f"{_D}:54-68",
            _attr("filter", f"{_D}:56,59"),
            _opt("type", f"{_D}:57", ("enum", ("npy",))),
            *_DUMP_BASE,
            ("path", Node("property", "", f"{_D}:60-68")))),
        _sub("fx_summary", _config(
            "_FxSummary", f"{_D}:71-75",
            _opt("type", f"{_D}:73", ("enum", ("csv",))),
            _bool("skip_compile", f"{_D}:74"),
            *_DUMP_BASE)),  # no ``path`` here: not in _fixed_attrs, assigning it raises
        _bool("run_eagerly", f"{_D}:110"),
        _sub("aclgraph", _config(
            "_AclGraphDebugConfig", f"{_D}:78-90",
            _bool("disable_reinplace_inplaceable_ops_pass", f"{_D}:82"),
            _bool("disable_reinplace_input_mutated_ops_pass", f"{_D}:83"),
            _bool("disable_mempool_reuse_in_same_fx", f"{_D}:84"),
            _bool("enable_output_clone", f"{_D}:85"),
            _opt("static_capture_size_limit", f"{_D}:86", ("int", 1, INT64_MAX), "IntRangeValue"),
            _bool("clone_input", f"{_D}:87"),
            _bool("remove_cat_ops", f"{_D}:88"))),
        _bool("deadlock_check", f"{_D}:112"))),
    _sub("aoe_config", _config(
        "_AoeConfig", f"{_CFG}aoe_config.py:9-17",
        _opt("aoe_mode", f"{_CFG}aoe_config.py:13", ("enum", ("2",))),
        _opt("work_path", f"{_CFG}aoe_config.py:14", "dir", "MustExistedPathValue"),
        _opt("aoe_config_file", f"{_CFG}aoe_config.py:15", "file", "FileValue"))),
    _sub("export", _config(
        "_ExportConfig", f"{_X}:19-28",
        _raw("export_mode", f"{_X}:23"),
        _raw("export_path_dir", f"{_X}:24"),
        _attr("export_name", f"{_X}:25"),
        _attr("weight_name", f"{_X}:26"),
        _attr("inputs_name", f"{_X}:27"),
        _sub("experimental", _config(
            "_ExperimentalConfig (export)", f"{_X}:9-16",
            _bool("enable_record_nn_module_stack", f"{_X}:13"),
            _bool("auto_atc_config_generated", f"{_X}:14"),
            _bool("enable_lite_export", f"{_X}:15"))),
        lenient=True)),
    _sub("dump_config", _config(
        "_DataDumpConfig", f"{_CFG}dump_config.py:10-24",
        _bool("enable_dump", f"{_CFG}dump_config.py:14"),
        _opt("dump_path", f"{_CFG}dump_config.py:15", "dir", "MustExistedPathValue"),
        _opt("dump_mode", f"{_CFG}dump_config.py:16", ("enum", ("input", "output", "all"))),
        _bool("quant_dumpable", f"{_CFG}dump_config.py:17"),
        _opt("dump_step", f"{_CFG}dump_config.py:18", "regex", "RegexValue"),
        _opt("dump_layer", f"{_CFG}dump_config.py:19", "regex", "RegexValue"),
        _opt("dump_data", f"{_CFG}dump_config.py:20", ("enum", ("tensor", "stats"))),
        _opt("dump_config_path", f"{_CFG}dump_config.py:21", "file", "MustExistedFileAddr"),
        _opt("data_dump_stage", f"{_CFG}dump_config.py:22", ("enum", ("original", "optimized"))))),
    _sub("fusion_config", _config(
        "_FusionConfig", f"{_CFG}fusion_config.py:9-15",
        _opt("fusion_switch_file", f"{_CFG}fusion_config.py:13", "file", "FileValue"))),
    _sub("experimental_config", _config(
        "_ExperimentalConfig", f"{_E}:11-32",
        _bool("cc_parallel_enable", f"{_E}:15"),
        _bool("keep_inference_input_mutations", f"{_E}:16"),
        _bool("memory_efficiency", f"{_E}:17"),
        _bool("frozen_parameter", f"{_E}:18"),
        _opt("static_model_ops_lower_limit", f"{_E}:19", ("range", -1, INT64_MAX), "IntRangeValue"),
        _opt("jit_compile", f"{_E}:20", ("enum", ("auto",))),
        _bool("npu_fx_pass", f"{_E}:21"),
        _bool("aot_config_enable_joint_graph", f"{_E}:22"),
        _opt("aot_config_output_loss_index", f"{_E}:23", "any"),
        _opt("topology_sorting_strategy", f"{_E}:24", ("enum", ("BFS", "DFS", "RDFS", "StableRDFS"))),
        _bool("enable_ref_data", f"{_E}:25"),
        _bool("enable_view_optimize", f"{_E}:26"),
        _bool("remove_noop_ops", f"{_E}:27"),
        _bool("tiling_schedule_optimize", f"{_E}:28"),
        _bool("pattern_fusion_pass", f"{_E}:29"),
        _sub("aclgraph", _config(
            "_AclGraphExperimentalConfig", f"{_E}:58-68",
            _bool("_aclnn_static_shape_kernel", f"{_E}:60"),
            _opt("_aclnn_static_shape_kernel_build_dir", f"{_E}:61", "str", "StrOptionValue"),
            _opt("_aclnn_static_shape_kernel_sym_value_range", f"{_E}:62", "intlist", "IntListValue"),
            _opt("_aclnn_static_shape_kernel_sym_index", f"{_E}:63", ("range", 0, INT64_MAX), "IntRangeValue"),
            _bool("_super_kernel_optimize", f"{_E}:64"),
            _opt("_super_kernel_optimize_options", f"{_E}:65", "dict", "DictOptionValue"),
            _opt("_super_kernel_debug_options", f"{_E}:66", "dict", "DictOptionValue"))))),
    _sub("inference_config", _config(
        "_InferenceConfig", f"{_CFG}inference_config.py:9-15",
        _opt("dynamic_gears_merge_policy", f"{_CFG}inference_config.py:13", ("enum", ("zip", "product"))))),
    _sub("ge_config", _config(
        "_GEConfig", f"{_CFG}ge_config.py:9-21",
        _bool("enable_single_stream", f"{_CFG}ge_config.py:13"),
        _opt("oo_level", f"{_CFG}ge_config.py:14", ("enum", ("O1", "O3"))),
        _bool("oo_constant_folding", f"{_CFG}ge_config.py:15"),
        _bool("oo_dead_code_elimination", f"{_CFG}ge_config.py:16"),
        _opt("export_compile_stat", f"{_CFG}ge_config.py:17", ("enum", ("0", "1", "2"))),
        _opt("aicore_num", f"{_CFG}ge_config.py:18", "any"),
        _opt("optimization_switch", f"{_CFG}ge_config.py:19", "any"))),
    # not NpuBaseConfig and so not in CompilerConfig._fixed_attrs: assigning the sub-object raises
    _sub("aclgraph_config", _config(
        "_AclGraphConfig", f"{_CFG}aclgraph_config.py:7-15",
        _attr("use_custom_pool", f"{_CFG}aclgraph_config.py:13", "pool"),
        lenient=True), assignable=False),
    # never read by torchair (grep: only compiler_config.py:38); its class attributes are known names
    _sub("npugraphex_config", _config(
        "_NpuGraphExConfig", f"{_CFG}npugraphex_config.py:6-29",
        *[_attr(n, f"{_CFG}npugraphex_config.py:7-29") for n in (
            "force_eager", "use_graph_pool", "reuse_graph_pool_in_same_fx", "capture_limit", "clone_input",
            "clone_output", "static_kernel_compile", "super_kernel_optimize", "super_kernel_optimize_options",
            "super_kernel_debug_options", "frozen_parameter", "remove_noop_ops", "remove_cat_ops",
            "inplace_pass", "input_inplace_pass", "pattern_fusion_pass", "post_grad_custom_pre_pass",
            "post_grad_custom_post_pass", "dump_tensor_data", "data_dump_stage", "data_dump_dir",
            "_vllm_aclnn_static_kernel_sym_index", "_vllm_aclnn_static_kernel_sym_range")],
        lenient=True), assignable=False),
    _opt("mode", f"{_CFG}compiler_config.py:39", ("enum", MODES)),
    _opt("post_grad_custom_pre_pass", f"{_CFG}compiler_config.py:40,44", "callable", "CallableValue"),
    _opt("post_grad_custom_post_pass", f"{_CFG}compiler_config.py:41,45", "callable", "CallableValue"),
)

# Attributes of an OptionValue itself (_option_base.py:10-48): ``value`` (validating setter),
# ``_value`` (the raw slot); ``default``/``optional`` are read-only properties.
OPTION_VALUE_ATTRS = ("value", "_value")
OPTION_READONLY = ("default", "optional")


@dataclasses.dataclass(frozen=True)
class Walk:
    """Where an attribute path on a config leads.

    status: ``ok`` (a real option, sub-config or attribute), ``unknown`` (``path[index]`` does
    not exist on ``parent``), ``unassignable`` (exists, but assigning it raises), ``readonly``
    (an OptionValue's read-only property), ``opaque`` (below a plain value: not a config)."""

    status: str
    node: Optional[Node] = None
    option_path: Tuple[str, ...] = ()  # the option's path without a trailing ``.value``
    via: Optional[str] = None  # "value" / "_value" when assigned through the OptionValue
    index: int = 0
    parent: Optional[Node] = None


def walk(path: Sequence[str]) -> Walk:
    node = TREE
    n = len(path)
    for i, name in enumerate(path):
        last = i == n - 1
        if node.kind in ("config", "object"):
            child = node.child(name)
            if child is None:
                return Walk("unknown", index=i, parent=node)
            if last and not child.assignable:
                return Walk("unassignable", node=child, option_path=tuple(path), index=i, parent=node)
            node = child
            continue
        if node.kind == "option":
            if name in OPTION_VALUE_ATTRS:
                return Walk("ok", node, tuple(path[:i]), name) if last else Walk("opaque")
            if name in OPTION_READONLY:
                return Walk("readonly", node=node, index=i, parent=node)
            return Walk("unknown", index=i, parent=node)
        return Walk("opaque")  # below a plain attribute or a property: its value, not a config
    return Walk("ok", node, tuple(path))


def leaf_paths(node: Node = TREE, prefix: Tuple[str, ...] = ()) -> List[str]:
    """Every option/attribute path (for docs and tests)."""
    out = []
    for name, child in node.children:
        if child.kind in ("config", "object"):
            out.extend(leaf_paths(child, prefix + (name,)))
        else:
            out.append(".".join(prefix + (name,)))
    return out


def is_aclgraph_only(option_path: Tuple[str, ...]) -> bool:
    """RULES.md NPU201: ``aclgraph_config.use_custom_pool``, any ``debug.aclgraph.*``, any
    ``experimental_config.aclgraph.*``."""
    return (option_path == ("aclgraph_config", "use_custom_pool")
            or (len(option_path) > 2 and option_path[:2] in (("debug", "aclgraph"), ("experimental_config", "aclgraph"))))


@functools.lru_cache(maxsize=None)
def option_releases(path: Tuple[str, ...]) -> FrozenSet[str]:
    """The torchair releases that define the config option *path* (rules/torchair_releases.json,
    generated from each release's configs by tools/gen_torchair_releases.py)."""
    from npulint.releases import torchair_data

    return frozenset(torchair_data().get("options", {}).get(".".join(path), ()))


def holds_with_options(ctx: FileContext, evidence: Sequence["Store"],
                       needed: Sequence[Tuple[str, ...]]) -> Optional[Tuple[str, str]]:
    """RULES.md "Releases": a check whose premise or advice names torchair options (*needed*)
    holds on the releases that define them. The code may run on the releases of its
    configuration (configured or inferred, else every release npulint knows; every one when
    inferred releases define none of *evidence*'s options) that define every option of *evidence*: stores that certainly run before the code judged (the caller picks
    them: straight-line, on the judged configs; a store under ``if``/``try`` may be a version
    guard). Returns the releases the check holds for (text) and where the first needed option is
    defined at the newest release the code may run on, when every release it may run on defines
    them all; None otherwise."""
    from npulint.releases import torchair_data

    first = torchair_data().get("options", {}).get(".".join(needed[0]), {})
    holds = {r: where for r, where in first.items() if all(r in option_releases(n) for n in needed)}
    return holds_with_evidence(ctx, evidence, holds)


def holds_with_evidence(ctx: FileContext, evidence: Sequence["Store"],
                        holds: Dict[str, str]) -> Optional[Tuple[str, str]]:
    """:func:`npulint.releases.holds_on` for torchair: a check that holds on the releases
    *holds* maps to their upstream line, for code that may run on the releases of its
    configuration that define every option *evidence* (stores that certainly run before the code
    judged) sets."""
    from npulint.releases import effective, holds_on, torchair_data

    options = torchair_data().get("options", {})
    used = {s.option_path for s in evidence if s.w.status == "ok" and ".".join(s.option_path) in options}
    releases = effective(ctx.settings)
    return holds_on("torchair", releases.torchair(), [option_releases(p) for p in used], holds,
                    releases.fallback("torchair"))


def certain_stores(cfg: Optional["Config"], site: Site) -> List["Store"]:
    """The stores to *cfg* that certainly run before *site*: straight-line, in its scope."""
    return [st for st in (cfg.stores if cfg is not None else ())
            if not st.conditional and st.site.scope is site.scope and st.seq < site.seq]


def mode_lists() -> Dict[str, str]:
    """Release -> where its ``CompilerConfig`` lists the compile modes it accepts
    (rules/torchair_releases.json ``modes``)."""
    from npulint.releases import torchair_data

    return {r: where for by_release in torchair_data()["modes"].values() for r, where in by_release.items()}


def mode_rejected(value) -> Dict[str, str]:
    """The torchair releases whose CompilerConfig rejects compile mode *value* (ValueError at the
    assignment), each with where it lists the modes it accepts."""
    from npulint.releases import torchair_data

    accepted = torchair_data()["modes"].get(value, {}) if isinstance(value, str) else {}
    return {r: where for r, where in mode_lists().items() if r not in accepted}


def option_values(path: Tuple[str, ...]) -> Dict[str, dict]:
    """Release -> what torchair's class of option *path* accepts there (rules/torchair_releases.json
    ``values``: the ``_option_base.py`` class, its arguments, where the option is defined)."""
    from npulint.releases import torchair_data

    return torchair_data().get("values", {}).get(".".join(path), {})


def _int_bound(n: int) -> str:
    return "2**63-1" if n == INT64_MAX else str(n)


def value_rejected(entry: dict, kind: str, v) -> Optional[Tuple[str, str]]:
    """(the exception, what is allowed) where the value setter of the option class *entry*
    (Ascend/torchair@fced8842 python/torchair/configs/_option_base.py; the same in every release
    that has the class) raises for a value of literal *kind* (:func:`literal_kind`) and value *v*;
    None where it accepts it or that is not known. ``OptionValue``: ValueError unless ``v in
    optional`` (:42-48); ``IntRangeValue``: ValueError unless an int in [min, max] (:62-68);
    ``IntListValue`` (:83-91), ``StrOptionValue`` (:104-108), ``DictOptionValue`` (:121-125),
    ``CallableValue`` (:205-209): TypeError unless None or of the type (a list/tuple of ints, str,
    dict, callable); ``RegexValue`` (:181-186): ``re.match`` raises TypeError for a non-string,
    ValueError for a string the pattern does not match. Files and paths are the machine's, never
    known."""
    cls, args = entry["cls"], entry["args"]
    scalar = kind == "scalar"
    if cls == "OptionValue":
        if len(args) < 2 or not isinstance(args[1], list) or v is UNKNOWN:
            return None
        return None if v in args[1] else ("ValueError", ", ".join(repr(x) for x in args[1]))
    if cls == "IntRangeValue":
        lo, hi = args[1], args[2]
        allowed = f"an int in [{_int_bound(lo)}, {_int_bound(hi)}]"
        return None if scalar and isinstance(v, int) and lo <= v <= hi else ("ValueError", allowed)
    if scalar and v is None and cls in ("IntListValue", "StrOptionValue", "DictOptionValue", "CallableValue"):
        return None
    if cls == "IntListValue":
        if kind in ("list", "tuple") and (v is UNKNOWN or all(isinstance(x, int) for x in v)):
            return None
        return "TypeError", "a list or tuple of ints, or None"
    if cls == "StrOptionValue":
        return None if scalar and isinstance(v, str) else ("TypeError", "a str or None")
    if cls == "DictOptionValue":
        return "TypeError", "a dict or None"  # a dict is never a known value here
    if cls == "CallableValue":
        return "TypeError", "a callable or None"  # no literal is callable
    if cls == "RegexValue":
        allowed = f"a str matching {args[1]!r}, e.g. {args[2]!r}"
        if not (scalar and isinstance(v, str)):
            return "TypeError", allowed
        if len(v) > MAX_REGEX_VALUE:
            return None  # (torchair's patterns nest quantifiers: a long value can take the match forever)
        return None if re.match(args[1], v) else ("ValueError", allowed)
    return None


# The longest string value a RegexValue's pattern is tried on: `dump_step`'s pattern,
# ``^(((\d+)|(\d+-{0,1}\d+))\|{0,1})*$``, backtracks exponentially on a long run of digits that
# does not match (0.3 s at 16 characters, minutes at 30); at 12 a try is a few milliseconds.
MAX_REGEX_VALUE = 12


def _either(values: Sequence[str]) -> str:
    """``"a", "b" or "c"``."""
    quoted = [f"\"{v}\"" for v in values]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


POOL = ("aclgraph_config", "use_custom_pool")
REUSE = ("debug", "aclgraph", "disable_mempool_reuse_in_same_fx")
OUTPUT_CLONE = ("debug", "aclgraph", "enable_output_clone")
CAPTURE_LIMIT = ("debug", "aclgraph", "static_capture_size_limit")
MODE = ("mode",)

# ======================================================================================
# The shared analysis
# ======================================================================================

_RETAINING_METHODS = {"append": 0, "appendleft": 0, "add": 0, "extend": 0, "insert": 1}

# NPU205: tensor methods whose result shares its receiver's storage (a view, the tensor itself,
# or a tuple of views): what they return is still the aclgraph's output. ``.to(...)`` and
# ``.requires_grad_(...)`` join them when they change neither dtype nor device
# (:func:`_returns_receiver_storage`). Every other call (``.clone()``, ``.cpu()``, ``.tolist()``,
# ``.item()``, reductions, an unknown method) is not followed: a copy, or unknown.
_VIEW_METHODS = frozenset({
    "detach", "detach_", "view", "view_as", "reshape", "flatten", "squeeze", "unsqueeze", "expand",
    "expand_as", "narrow", "transpose", "permute", "t", "select", "unbind", "split", "chunk", "as_strided",
    "contiguous",
})
# keywords of ``Tensor.to`` that change neither dtype nor device
_TO_SAME_KEYWORDS = frozenset({"non_blocking"})


class Config:
    """One ``CompilerConfig()`` object: the call that makes it, the stores to it, and the
    ways it may be changed behind our back."""

    def __init__(self, call: Optional[cst.Call], site: Site):
        self.call = call  # (None: one another module makes, which this one imports)
        self.site = site
        self.stores: List["Store"] = []
        self.tainted = False  # a store whose root may or may not be this config
        self.imported = False  # made by another module of the run (its sub-configs may be replaced there)
        self.escapes: List[Tuple[Tuple[str, ...], Site]] = []  # sub-path passed on (() = the config)
        self.backends: List["Backend"] = []


class Store:
    """An assignment to an attribute path of a known config."""

    def __init__(self, raw: AttrStore, known_value: bool):
        self.raw = raw
        self.path = raw.path
        self.site = raw.site
        self.node = raw.target  # where findings go
        self.w = walk(raw.path)
        self.known_value = known_value  # False for the stores the engine does not record (tuple targets...)

    @property
    def seq(self) -> int:
        return self.site.seq

    @property
    def conditional(self) -> bool:
        return self.site.conditional or self.site.with_depth > 0

    @property
    def option_path(self) -> Tuple[str, ...]:
        return self.w.option_path if self.w.status == "ok" else ()

    @property
    def validated(self) -> bool:
        """A plain assignment of a known value to a real option, through its validating setter
        (not ``._value``): what torchair checks at the assignment (NPU204, NPU207)."""
        return self.w.status == "ok" and self.raw.kind == "assign" and self.known_value and self.w.via != "_value"

    @property
    def replaces(self) -> bool:
        """Replaces a whole sub-config (its options are then no longer torchair's)."""
        return self.w.status == "ok" and self.w.via is None and self.w.node is not None and \
            self.w.node.kind in ("config", "object")


class Backend:
    """A ``get_npu_backend(...)`` call and its config (None: the default config); or a
    ``cache_compile(func, config=...)`` call, which makes its backend from its config itself
    (``api``: the function named in messages)."""

    def __init__(self, call: cst.Call, site: Site, config: Optional[Config], known: bool,
                 api: str = "get_npu_backend"):
        self.call = call
        self.site = site
        self.config = config
        self.known = known  # the config argument is certain (a known config, None, or absent)
        self.api = api


COMPILED = "torchair.compiled"  # shared topic (see rules/torchair_streams.py)


class TorchairConfigAnalysis(Analysis):
    """The shared analysis of NPU201-NPU208: the configs of a file (``CompilerConfig()`` calls),
    the stores to them and the ways they escape, the backends made from them
    (``get_npu_backend(...)`` calls), the ``torch.compile`` calls that use those backends, and
    the effective value of an option for a backend.

    Also publishes, for the multi-stream rules, which classes are compiled in which mode:
    ``(class qualname, effective mode, line of the torch.compile call, method)`` on
    :data:`COMPILED`; *method* is None for an instance (or its ``forward``), else the name of
    the one method compiled."""

    provides = (COMPILED,)
    # A config is made by CompilerConfig() and reaches torch.compile through get_npu_backend():
    # a file that names neither holds nothing these rules can follow.
    tokens = (("CompilerConfig",), ("get_npu_backend",), ("cache_compile",))

    def __init__(self, ctx: FileContext):
        super().__init__(ctx)
        self.calls: List[Tuple[cst.Call, Site]] = []
        self.names: List[Tuple[cst.Name, Site]] = []
        self.not_uses: Set[int] = set()  # Name nodes that are not loads of a variable
        self.chain_escapes: List[Tuple[str, Tuple[str, ...], Site]] = []
        # what finish() finds (a rule's finish() runs only after it, and not at all if it raised)
        self.configs: Dict[int, Config] = {}  # id(CompilerConfig() call) -> Config
        self.config_bindings: Dict[int, Config] = {}  # id(Binding) -> Config
        self.backends: Dict[int, Backend] = {}  # id(get_npu_backend call) -> Backend
        # id(cache_compile call) -> the backend it compiles with (its own, or the get_npu_backend
        # one given as ``backend=``)
        self.cache_compiles: Dict[int, Backend] = {}
        # the torch.compile calls with a torchair backend, and the cache_compile calls, in source
        # order: id(call) -> (call, site, backend, the mode= argument (None for cache_compile))
        self.compiles: Dict[int, Tuple[cst.Call, Site, Backend, Optional[cst.Arg]]] = {}
        # id(statement) -> the stores to known configs it makes, with their configs (stores_at())
        self._stores_at: Dict[int, List[Tuple[Config, Store]]] = {}
        self._modes: Dict[int, object] = {}  # id(Backend) -> its effective mode (see mode())
        self._unchecked: Optional[Set[int]] = None  # id(Store)s below a replaced sub-config

    # -- traversal ----------------------------------------------------------------------
    # A *use* of a name is a Name node the walk visits (not an attribute's, keyword's,
    # parameter's, def's or import's name: those it does not walk) that is not the root of an
    # attribute chain nor the direct target of an assignment, ``for``, comprehension,
    # ``with ... as`` or a one-target ``del`` (the names inside a tuple target count as uses:
    # the conservative side).
    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append((node, self.ctx.site()))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name):
            self.not_uses.add(id(node.value))

    def visit_Arg(self, node: cst.Arg) -> None:
        # an argument (of a call, or a class's base): a sub-object of a config passed on
        self._chain_escape(node.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if isinstance(node.target, cst.Name):
            self.not_uses.add(id(node.target))

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None and isinstance(node.asname.name, cst.Name):
            self.not_uses.add(id(node.asname.name))

    def visit_Assign(self, node: cst.Assign) -> None:
        self._chain_escape(node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Name):
            self.not_uses.add(id(node.target))
        if node.value is not None:
            self._chain_escape(node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            self.not_uses.add(id(node.target))

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        if isinstance(node.target, cst.Name):
            self.not_uses.add(id(node.target))

    def visit_For(self, node: cst.For) -> None:
        if isinstance(node.target, cst.Name):
            self.not_uses.add(id(node.target))

    def visit_CompFor(self, node: cst.CompFor) -> None:
        if isinstance(node.target, cst.Name):
            self.not_uses.add(id(node.target))

    def visit_Del(self, node: cst.Del) -> None:
        if isinstance(node.target, cst.Name):
            self.not_uses.add(id(node.target))

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self._chain_escape(node.value)

    def visit_Name(self, node: cst.Name) -> None:
        if id(node) not in self.not_uses:
            self.names.append((node, self.ctx.site()))

    def _chain_escape(self, expr) -> None:
        """``f(cfg.debug)``, ``x = cfg.debug.aclgraph``: a sub-object of a config is passed on."""
        if isinstance(expr, cst.Attribute):
            chain = dotted(expr)
            if chain is not None:
                root, *path = chain.split(".")
                self.chain_escapes.append((root, tuple(path), self.ctx.site()))

    # -- the end of the file ------------------------------------------------------------
    def release(self) -> None:
        # a config lists its backends and a backend names its config: a cycle
        for cfg in getattr(self, "configs", {}).values():
            cfg.backends.clear()
        super().release()

    def finish(self) -> None:
        ctx = self.ctx
        self._find_configs()
        backend_args: Set[int] = set()
        for call, site in self.calls:
            if ctx.resolve(call.func, site, GET_NPU_BACKEND) is None:
                continue
            arg = _config_arg(call)
            if isinstance(arg, cst.Name):
                backend_args.add(id(arg))
            self.backends[id(call)] = self._backend(call, site, arg)
        for call, site in self.calls:
            if ctx.resolve(call.func, site, CACHE_COMPILE) is None:
                continue
            arg = _keyword(call, "config")
            if isinstance(arg, cst.Name):
                backend_args.add(id(arg))
            self.cache_compiles[id(call)] = self._cache_compile_backend(call, site, arg)
        if self.configs or self.backends or self.cache_compiles:
            self._collect_stores()
            self._collect_escapes(backend_args)
            self.compiles = self._compiles()
            self._publish_compiled()

    # -- configs, stores, escapes -------------------------------------------------------
    def _find_configs(self) -> None:
        ctx = self.ctx
        for call, site in self.calls:
            if ctx.resolve(call.func, site, COMPILER_CONFIG) is not None:
                self.configs[id(call)] = Config(call, site)
        roots = None  # the names this file stores attributes of (an imported config matters only there)
        for b in ctx.sem.all_bindings():
            if b.kind == "assign" and not b.index and isinstance(b.value, cst.Call):
                cfg = self.configs.get(id(b.value))
                if cfg is not None:
                    self.config_bindings[id(b)] = cfg
            elif b.kind == "import" and b.qualname:
                if roots is None:
                    roots = {raw.root for raw in ctx.sem.attr_stores}
                if b.name in roots:
                    self._imported_config(b)

    def _imported_config(self, b) -> None:
        """A config another module of the run makes at its top level and this file imports
        (``from comp import config``): its stores here are checked where they do not depend on
        the other module's (NPU204, NPU206, NPU207: what torchair validates at the assignment);
        every option's value is unknown (the other module may set it)."""
        run = _modules.active()
        if run is None or not run.files or not run.is_module(b.qualname.split(".", 1)[0]):
            return  # (an import of a module outside the run: torch, torchair...)
        made = run.made_by(b.qualname, canonical)
        if made is None or canonical(made) not in COMPILER_CONFIG:
            return
        cfg = Config(None, b.site)
        cfg.tainted = True
        cfg.imported = True
        self.configs[id(b)] = cfg
        self.config_bindings[id(b)] = cfg

    def _config_of(self, name: str, site: Site) -> Tuple[Optional[Config], List[Config]]:
        """The config *name* certainly is at *site*, else the configs it may be."""
        cands, exact = self.ctx.sem.reaching(name, site)
        cfgs = [self.config_bindings[id(b)] for b in cands if id(b) in self.config_bindings]
        if exact and len(cands) == 1 and cfgs:
            return cfgs[0], []
        return None, cfgs

    def _collect_stores(self) -> None:
        sem = self.ctx.sem
        names = {b.name for b in sem.all_bindings() if id(b) in self.config_bindings}
        for raw in sem.attr_stores:
            known = raw.kind != "opaque"
            if raw.root not in names:
                continue
            cfg, maybe = self._config_of(raw.root, raw.site)
            if cfg is not None:
                store = Store(raw, known)
                cfg.stores.append(store)
                self._stores_at.setdefault(id(raw.node), []).append((cfg, store))
            for m in maybe:
                m.tainted = True
        for cfg in self.configs.values():
            cfg.stores.sort(key=lambda s: s.seq)

    def _collect_escapes(self, backend_args: Set[int]) -> None:
        if not self.config_bindings:
            return
        names = {b.name for b in self.ctx.sem.all_bindings() if id(b) in self.config_bindings}
        uses = [(n.value, (), site) for n, site in self.names if n.value in names and id(n) not in backend_args]
        uses += [(root, path, site) for root, path, site in self.chain_escapes if root in names]
        for name, path, site in uses:
            cands, _ = self.ctx.sem.reaching(name, site)
            for b in cands:
                cfg = self.config_bindings.get(id(b))
                if cfg is not None:
                    cfg.escapes.append((path, site))
        # a module-level config reached through the module's namespace (``globals()["config"]
        # .mode = ...``, ``exec``, ``sys.modules[__name__].config``): any option may be set unseen
        sem = self.ctx.sem
        for name, bl in sem.module_scope.bindings.items():
            cfgs = [self.config_bindings[id(b)] for b in bl if id(b) in self.config_bindings]
            if cfgs and sem.namespace_changed(name)[1]:
                for cfg in cfgs:
                    cfg.tainted = True
        # a module-level config another module of the run may import and change
        # (``from pkg.compile_utils import config; config.mode = "reduce-overhead"``): every
        # option of it is unknown here, as for a config passed to a function
        sem = self.ctx.sem
        run = _modules.active()
        if run is None or not run.files or not sem.module_name or run.paths.get(sem.module_name) is None:
            return  # no module of the run can name this file (none, or two files, have its name)
        for name, bl in sem.module_scope.bindings.items():
            cfgs = [self.config_bindings[id(b)] for b in bl if id(b) in self.config_bindings]
            if cfgs and run.touched(name, "use", sem.module_name):
                for cfg in cfgs:
                    cfg.escapes.append(((), cfgs[0].site))

    def _backend(self, call: cst.Call, site: Site, arg) -> Backend:
        if arg is None or (isinstance(arg, cst.Name) and arg.value == "None" and not self.ctx.sem.reaching("None", site)[0]):
            return Backend(call, site, None, True)
        if isinstance(arg, cst.Call) and id(arg) in self.configs:
            cfg = self.configs[id(arg)]
            b = Backend(call, site, cfg, True)
            cfg.backends.append(b)
            return b
        if isinstance(arg, cst.Name):
            cfg, maybe = self._config_of(arg.value, site)
            if cfg is not None:
                b = Backend(call, site, cfg, True)
                cfg.backends.append(b)
                return b
            for m in maybe:
                m.tainted = True  # handed to a backend we cannot attribute
        return Backend(call, site, None, False)

    def _cache_compile_backend(self, call: cst.Call, site: Site, config_arg) -> Backend:
        """The backend ``cache_compile(func, config=cfg)`` compiles with: one made from ``cfg``
        at this call (``config`` absent or None: the default config); with only ``backend=``,
        that backend (torchair takes its ``compiler_config``). Unknown when a spread may hold
        either, or when more than ``func`` is passed positionally (a TypeError: its parameters
        are keyword-only)."""
        positional = [a for a in call.args if a.keyword is None]
        if len(positional) > 1 or any(a.star == "*" for a in positional):
            return Backend(call, site, None, False, api="cache_compile")
        if config_arg is None:
            backend_arg = _keyword(call, "backend")
            if backend_arg is not None:
                b = self._backend_of(backend_arg, site)
                return b if b is not None else Backend(call, site, None, False, api="cache_compile")
            if any(a.star == "**" for a in call.args):
                config_arg = _UNKNOWN_ARG
        b = self._backend(call, site, config_arg)
        b.api = "cache_compile"
        return b

    def compile_api(self, call: cst.Call) -> str:
        """How to name a compile call of :attr:`compiles` in a message."""
        return "cache_compile" if id(call) in self.cache_compiles else "torch.compile"

    # -- effective values ---------------------------------------------------------------
    def effective(self, cfg: Optional[Config], option: Tuple[str, ...], at: Site, default):
        """The value *option* certainly has for a backend made at *at*, or UNKNOWN."""
        if cfg is None:
            return default
        if cfg.tainted:
            return UNKNOWN
        if any(option[:len(p)] == p for p, _ in cfg.escapes):
            return UNKNOWN
        relevant = []
        for s in cfg.stores:
            if s.w.status == "opaque":
                continue
            if s.option_path == option or (s.replaces and option[:len(s.path)] == s.path) or \
                    (s.w.status != "ok" and option[:len(s.path)] == s.path):
                relevant.append(s)
        if not relevant:
            return default
        for s in relevant:
            if s.site.scope is not at.scope or s.seq > at.seq or s.conditional or not s.known_value:
                return UNKNOWN
        last = relevant[-1]
        if last.raw.kind != "assign" or last.option_path != option or last.w.via == "_value":
            return UNKNOWN
        return self.ctx.value(last.raw.value, last.site)

    def mode(self, backend: Backend):
        """The effective mode of *backend* (one of MODES), or UNKNOWN; computed once per backend
        for all the rules that ask."""
        key = id(backend)
        if key not in self._modes:
            self._modes[key] = self._mode(backend)
        return self._modes[key]

    def _mode(self, backend: Backend):
        if not backend.known:
            return UNKNOWN
        v = self.effective(backend.config, MODE, backend.site, DEFAULT_MODE)
        return v if v in MODES and isinstance(v, str) else UNKNOWN

    def mode_store(self, cfg: Optional[Config], backend: Backend) -> Optional[Store]:
        """The last store to *cfg*'s mode before *backend* is made."""
        if cfg is None:
            return None
        found = [s for s in cfg.stores if s.option_path == MODE and s.seq < backend.site.seq]
        return found[-1] if found else None

    # -- the records of a node (what the rules' hooks ask) ------------------------------
    def stores_at(self, node: cst.CSTNode) -> List[Tuple[Config, Store]]:
        """The stores to known configs that the statement *node* makes (an ``Assign``,
        ``AnnAssign``, ``AugAssign``, ``For``, ``Del`` or ``WithItem``: where the engine records
        attribute stores), with their configs."""
        return self._stores_at.get(id(node), [])

    def checked(self, store: Store) -> bool:
        """Whether *store*'s path is torchair's: not below a sub-config that an assignment
        replaced (NPU204, NPU206, NPU207 judge only those); for an imported config, also not
        below one another module of the run may replace (``cfg.debug = ...``)."""
        if self._unchecked is None:
            self._unchecked = set()
            run = _modules.active()
            for cfg in self.configs.values():
                replaced = [s.path for s in cfg.stores if s.replaces]
                for s in cfg.stores:
                    if any(len(p) < len(s.path) and s.path[:len(p)] == p for p in replaced) or (
                            cfg.imported and (run is None or any(
                                run.touched(p, "store", self.ctx.sem.module_name) for p in s.path[:-1]))):
                        self._unchecked.add(id(s))
        return id(store) not in self._unchecked

    def raise_expected(self, store: Store) -> bool:
        """Whether *store* is in the body of a ``with`` that expects an exception there
        (``pytest.raises``, ``self.assertRaises``): a test of the raise at the assignment that
        NPU204, NPU206 and NPU207 would report, which they do not."""
        return self.ctx.sem.expects_raise(store.seq)

    def compile_at(self, call: cst.Call) -> Optional[Tuple[cst.Call, Site, Backend, Optional[cst.Arg]]]:
        """The record of :attr:`compiles` for *call*, None if it is not such a compile."""
        return self.compiles.get(id(call))

    # -- torch.compile calls --------------------------------------------------------------
    def _compiles(self) -> Dict[int, Tuple[cst.Call, Site, Backend, Optional[cst.Arg]]]:
        out = {}
        for call, site in self.calls:
            if id(call) in self.cache_compiles:
                out[id(call)] = (call, site, self.cache_compiles[id(call)], None)
                continue
            if self.ctx.resolve(call.func, site, TORCH_COMPILE) is None:
                continue
            backend_arg = mode_arg = None
            for a in call.args:
                if a.keyword is not None and a.keyword.value == "backend":
                    backend_arg = a
                elif a.keyword is not None and a.keyword.value == "mode":
                    mode_arg = a
            if backend_arg is None:
                continue
            b = self._backend_of(backend_arg.value, site)
            if b is not None:
                out[id(call)] = (call, site, b, mode_arg)
        return out

    def _publish_compiled(self) -> None:
        """``torch.compile(Model(), backend=b)`` or ``model = Model(); torch.compile(model, ...)``
        with a certain mode: the class of the compiled instance runs in that mode. So does
        ``torch.compile(model.forward, ...)`` (``model.forward = ...`` in place) or
        ``cache_compile(model.forward, config=cfg)``: a bound method of an instance, see
        :meth:`_method_class`. A method other than ``forward`` compiles that method (and what
        it calls), not the instance: ``model.decode = torch.compile(model.decode, ...)``."""
        sem = self.ctx.sem
        for call, site, backend, _ in self.compiles.values():
            mode = self.mode(backend)
            if mode is UNKNOWN:
                continue
            target = None
            if call.args and call.args[0].keyword is None and not call.args[0].star:
                target = call.args[0].value
            else:
                target = next((a.value for a in call.args
                               if a.keyword is not None and a.keyword.value in ("model", "func")), None)
            if target is None:
                continue
            value, vsite = sem.bound_expr(target, site)
            method = None
            if isinstance(value, cst.Attribute):
                q = self._method_class(value, vsite)
                if value.attr.value != "forward":
                    method = value.attr.value
            elif isinstance(value, cst.Call):
                q = sem.callee_qualname(value.func, vsite)
            else:
                q = None
            if q is not None:
                self.ctx.fact(COMPILED, (q, mode, self.ctx.line(call), method))

    def _method_class(self, method: cst.Attribute, site: Site) -> Optional[str]:
        """The class *method* (``X.m``) is a method of: ``X`` certainly an instance of it (a name
        bound to a call of the class, ``self.<attr>`` bound once to one, or ``self`` in one of
        its methods) or the class itself; ``m`` must be ``forward`` (every ``nn.Module`` has one)
        or a def in the body of that class of this file (an attribute may hold a sub-module
        instead, compiled with its own class). None otherwise."""
        sem = self.ctx.sem
        owner, osite = sem.bound_expr(method.value, site)
        cls_node = None
        if isinstance(owner, cst.Call):
            q = sem.callee_qualname(owner.func, osite)
            b = sem.certain_binding(owner.func, osite) if isinstance(owner.func, cst.Name) else None
            if b is not None and b.kind == "class":
                cls_node = b.node
            elif b is not None and b.kind == "def":
                return None  # a factory function: what it returns is unknown
        elif isinstance(owner, cst.Name):
            b = sem.certain_binding(owner, osite)
            if b is not None and b.kind == "class":
                cls_node = b.node
            elif b is None or b.kind == "param":
                scope = sem.self_class(osite.scope, owner.value)
                cls_node = scope.node if scope is not None else None
            if cls_node is None:
                return None
            q = sem.qualname_of_def(cls_node)
        else:
            return None
        if q is None:
            return None
        if method.attr.value == "forward":
            return q
        scope = sem.scope_of.get(cls_node) if cls_node is not None else None
        if scope is not None and any(b.kind == "def" for b in scope.bindings.get(method.attr.value, ())):
            return q
        return None

    def _backend_of(self, expr, site: Site) -> Optional[Backend]:
        value, _ = self.ctx.sem.bound_expr(expr, site)
        if isinstance(value, cst.Call):
            return self.backends.get(id(value))
        return None


# ======================================================================================
# Rules
# ======================================================================================

_SRC = "torchair's aclgraph memory-reuse page, Ascend/torchair@fbd4456f docs/zh/context/aclgraph间内存复用功能.md"
_IMP = "import torch\nimport torchair\n"
_RO = "config.mode = \"reduce-overhead\"\n"


def _ex(*lines: str, header: str = _IMP) -> str:
    return header + "config = torchair.CompilerConfig()\n" + "".join(line + "\n" for line in lines)


_BACKEND = "backend = torchair.get_npu_backend(compiler_config=config)"
_COMPILE = "opt_model = torch.compile(model, backend=backend)"


class _StoreRule(LintRule):
    """NPU201, NPU202, NPU204, NPU206, NPU207: each judges a store to a known config
    (:meth:`judge`) in the hook of the statement that makes it."""

    def judge(self, cfg: Config, s: Store) -> None:
        raise NotImplementedError

    def _judge_stores(self, node: cst.CSTNode) -> None:
        for cfg, s in self.ctx.analysis(TorchairConfigAnalysis).stores_at(node):
            self.judge(cfg, s)

    # the statements that store to an attribute (TorchairConfigAnalysis.stores_at)
    visit_Assign = visit_AnnAssign = visit_AugAssign = visit_For = visit_Del = visit_WithItem = _judge_stores


class AclgraphOptionIgnored(_StoreRule):
    CODE = "NPU201"
    NAME = "aclgraph-option-ignored"
    SEVERITY = "warning"
    SUMMARY = "An aclgraph-only option is set on a config whose effective mode is max-autotune."
    EXPLANATION = (
        "`aclgraph_config.use_custom_pool`, every `debug.aclgraph.*` and every `experimental_config.aclgraph.*` "
        "option is read only when the graph is captured as an aclgraph (`mode = \"reduce-overhead\"` or "
        "`\"npugraph_ex\"`). With the default `max-autotune` (Ascend IR / GE) torchair ignores them; for a few it "
        "warns, for `use_custom_pool`, `disable_mempool_reuse_in_same_fx`, `enable_output_clone`, "
        "`static_capture_size_limit` and `remove_cat_ops` it says nothing.\n\n"
        "The effective mode is the value of the last assignment to `config.mode` (or `config.mode.value`) "
        "before the `torchair.get_npu_backend(compiler_config=config)` call, in straight-line code of the same "
        "scope; default `max-autotune`. Reported only when every backend made from the config certainly runs "
        "in max-autotune: a mode set under `if`/`for`/`while`/`try`/`with`, in another function, after the "
        "backend call, to an unknown value, or a config passed to another function, leaves the mode unknown; so "
        "does a module-level config that another linted module uses (`from pkg.compile_utils import config; "
        "config.mode = \"reduce-overhead\"`). "
        "`torchair.inference.cache_compile(fn, config=config)` uses the config as `get_npu_backend` does "
        "(Ascend/torchair@fced8842 python/torchair/inference/__init__.py:12, _cache_compiler.py:602): the mode "
        "at the cache_compile call is its effective mode.")
    SOURCE = (_SRC + "; Ascend/torchair@fced8842 python/torchair/configs/compiler_config.py:63-67, :84-104 "
              "(_check_config_support: what torchair itself warns about)")
    INVALID = (
        Invalid(_ex("config.debug.aclgraph.clone_input = False", _BACKEND), range=(4, 1, 4, 34),
                message="`config.debug.aclgraph.clone_input` only applies to aclgraph graphs (mode "
                        "\"reduce-overhead\" or \"npugraph_ex\"), but config.mode is never set, so it is the "
                        "default \"max-autotune\" when get_npu_backend runs (line 5); torchair ignores this "
                        "setting; set config.mode = \"reduce-overhead\" (or \"npugraph_ex\") before "
                        "get_npu_backend, or drop the line"),
        Invalid(_ex("config.aclgraph_config.use_custom_pool = torch.npu.graph_pool_handle()",
                    "config.mode = \"max-autotune\"", _BACKEND), range=(4, 1, 4, 39),
                message="`config.aclgraph_config.use_custom_pool` only applies to aclgraph graphs (mode "
                        "\"reduce-overhead\" or \"npugraph_ex\"), but config.mode is \"max-autotune\" (line 5) when "
                        "get_npu_backend runs (line 6); torchair ignores this setting; set config.mode = "
                        "\"reduce-overhead\" (or \"npugraph_ex\") before get_npu_backend, or drop the line"),
    )
    VALID = (_ex(_RO.strip(), "config.debug.aclgraph.clone_input = False", _BACKEND),
             _ex("if use_graph:", "    config.mode = \"reduce-overhead\"", "config.debug.aclgraph.clone_input = False",
                 _BACKEND))
    HOW_TO_FIX = ("Set `config.mode = \"reduce-overhead\"` (or `\"npugraph_ex\"`) if you want aclgraph, or drop the "
                  "option.")

    uses = (TorchairConfigAnalysis,)

    def judge(self, cfg: Config, s: Store) -> None:
        if s.w.status != "ok" or s.replaces or not is_aclgraph_only(s.option_path) or type(s.raw.node) is cst.Del:
            return  # (a ``del`` sets nothing torchair could ignore)
        a = self.ctx.analysis(TorchairConfigAnalysis)
        if not cfg.backends or any(a.mode(b) != "max-autotune" for b in cfg.backends):
            return
        line = self.ctx.line
        b0 = cfg.backends[0]
        ms = a.mode_store(cfg, b0)
        why = (f"config.mode is \"max-autotune\" (line {line(ms.node)})" if ms is not None else
               "config.mode is never set, so it is the default \"max-autotune\"")
        self.report(s.node,
                    f"`config.{'.'.join(s.option_path)}` only applies to aclgraph graphs "
                    f"(mode \"reduce-overhead\" or \"npugraph_ex\"), but {why} when {b0.api} runs "
                    f"(line {line(b0.call)}); torchair ignores this setting; set config.mode = "
                    f"\"reduce-overhead\" (or \"npugraph_ex\") before {b0.api}, or drop the line")


class CustomPoolOverridesFxReuse(_StoreRule):
    CODE = "NPU202"
    NAME = "custom-pool-overrides-fx-reuse"
    SEVERITY = "warning"
    SUMMARY = "disable_mempool_reuse_in_same_fx = False together with use_custom_pool has no effect."
    EXPLANATION = (
        "With a user memory pool (`aclgraph_config.use_custom_pool`, memory-reuse mode 1) torchair switches "
        "reuse within one FX graph (mode 2) off: when it compiles the graph it sets "
        "`debug.aclgraph.disable_mempool_reuse_in_same_fx = True` whenever `use_custom_pool is not None`. "
        "An explicit `= False` on the same config is overwritten. Setting `True` is redundant but harmless and "
        "is not reported. Reported when the pool is certainly set (unconditionally, to a call result or a "
        "non-None value) on the config.")
    SOURCE = (_SRC + ":44 (使用约束: 开启模式一时,模式二功能会自动关闭); Ascend/torchair@fced8842 "
              "python/torchair/_acl_concrete_graph/fx2acl_converter.py:231-238")
    INVALID = (
        Invalid(_ex(_RO.strip(), "config.aclgraph_config.use_custom_pool = torch.npu.graph_pool_handle()",
                    "config.debug.aclgraph.disable_mempool_reuse_in_same_fx = False", _BACKEND), range=(6, 1, 6, 55),
                message="`config.debug.aclgraph.disable_mempool_reuse_in_same_fx = False` has no effect: "
                        "`config.aclgraph_config.use_custom_pool` is set (line 5), and with a custom pool torchair "
                        "forces disable_mempool_reuse_in_same_fx to True when it compiles the graph; drop this "
                        "line, or drop the custom pool if you need reuse within one FX graph",
                fixed="import torch\n"
                      "import torchair\n"
                      "config = torchair.CompilerConfig()\n"
                      "config.mode = \"reduce-overhead\"\n"
                      "config.aclgraph_config.use_custom_pool = torch.npu.graph_pool_handle()\n"
                      "backend = torchair.get_npu_backend(compiler_config=config)\n"),
    )
    VALID = (_ex(_RO.strip(), "config.aclgraph_config.use_custom_pool = torch.npu.graph_pool_handle()",
                 "config.debug.aclgraph.disable_mempool_reuse_in_same_fx = True", _BACKEND),
             _ex(_RO.strip(), "config.debug.aclgraph.disable_mempool_reuse_in_same_fx = False", _BACKEND))
    HOW_TO_FIX = ("Drop the `disable_mempool_reuse_in_same_fx = False` line, or drop the custom pool if you need reuse "
                  "within one FX graph.")
    AUTOFIX = True

    uses = (TorchairConfigAnalysis,)

    def judge(self, cfg: Config, s: Store) -> None:
        if s.option_path != REUSE or s.raw.kind != "assign" or not s.known_value:
            return
        pool = self._pool_certainly_set(cfg)
        if pool is None:
            return
        ctx = self.ctx
        v = ctx.value(s.raw.value, s.site)
        if v is False or (type(v) is int and v == 0):
            # (not ``a = config...x = False``: the line also binds ``a``)
            edit = ctx.remove_statement(s.raw.node) if isinstance(s.raw.node, cst.Assign) and len(
                s.raw.node.targets) == 1 else None
            self.report(s.node,
                        f"`config.debug.aclgraph.disable_mempool_reuse_in_same_fx = {v!r}` has no effect: "
                        f"`config.aclgraph_config.use_custom_pool` is set (line {ctx.line(pool.node)}), and "
                        "with a custom pool torchair forces disable_mempool_reuse_in_same_fx to True when it "
                        "compiles the graph; drop this line, or drop the custom pool if you need reuse within "
                        "one FX graph",
                        fix=Fix("Drop the overwritten disable_mempool_reuse_in_same_fx assignment",
                                (edit,)) if edit is not None else None)

    def _pool_certainly_set(self, cfg: Config) -> Optional[Store]:
        if cfg.tainted or any(POOL[:len(p)] == p for p, _ in cfg.escapes):
            return None
        pools = [s for s in cfg.stores if s.option_path == POOL or (s.w.status != "ok" and POOL[:len(s.path)] == s.path)]
        if not pools:
            return None
        last = pools[-1]
        if last.option_path != POOL or last.raw.kind != "assign" or not last.known_value:
            return None
        if last.site.scope is not cfg.site.scope or last.site.blocks != cfg.site.blocks or \
                last.site.with_depth != cfg.site.with_depth:
            return None
        if any(s.site.scope is not cfg.site.scope for s in pools):
            return None  # a store in another function may run later
        return last if sets_pool(self.ctx, last.raw.value, last.site) is True else None


class GraphsWithoutSharedPool(LintRule):
    CODE = "NPU203"
    NAME = "graphs-without-shared-pool"
    SEVERITY = "warning"
    SUMMARY = "Several aclgraph-mode torch.compile calls in one function and no config sets use_custom_pool."
    EXPLANATION = (
        "Each FX graph compiled in an aclgraph mode captures its aclgraphs into its own memory pool "
        "(torchair creates one with `torch.npu.graph_pool_handle()` per graph). Memory is reused across FX "
        "graphs only when they share a user pool (`aclgraph_config.use_custom_pool`, mode 1), so several "
        "compiled graphs each hold their own pool and may run out of device memory. Reported at the second "
        "and later `torch.compile` calls in one function (or at module level) whose torchair backend has a "
        "known aclgraph mode and `debug.run_eagerly` off, when none of their configs sets `use_custom_pool`. "
        "Compiles in different functions (separate tests, spawned workers) are not known to hold their graphs "
        "at the same time, and with `run_eagerly` torchair captures no graph. Nor do compiles that never both "
        "run: in two arms of one `if`/`elif`/`else`, of one `match` or of one `x if c else y`, in a `try` body and "
        "one of its `except` handlers (or two handlers, or a handler and the `else`), or one in an arm of an `if` "
        "(or `match`) that always ends in `return`, `raise`, `continue` or `break` and one after that statement "
        "(`if d: return torch.compile(m.decode, ...)` then `return torch.compile(m, ...)`), when no loop around "
        "that statement makes the arms take turns (the operands of `and`/`or` are not arms: both may run); a "
        "compile after a `return`, `raise`, `continue` or `break` of its block, or after a statement whose arms "
        "all end so, never runs. "
        "A `torch._dynamo.reset()` "
        "(or `torch.compiler.reset()`, or a call of a function of the file that makes one) between two compiles "
        "forgets the graphs compiled before it, so those do not count against the ones after it. "
        "`torchair.inference.cache_compile(fn, config=config)` is a compile too, with a backend made from "
        "`config` at that call (Ascend/torchair@fced8842 python/torchair/inference/__init__.py:12, "
        "_cache_compiler.py:602). The custom pool exists from torchair 7.2.0 on (7.1.0 has no "
        "`aclgraph_config`: nothing there can share a pool), so the rule holds on those releases only: it "
        "reports where every torchair release the code may run on has one (those configured in "
        "`[tool.npulint.releases]` or inferred, else every release npulint knows, less those that lack an "
        "option the file's configs set; README, \"Releases\"), and the message names them.")
    SOURCE = (_SRC + ":7-32 (场景1, 模式一: the three memory-reuse modes); Ascend/torchair@fced8842 "
              "python/torchair/_acl_concrete_graph/acl_graph.py:911-912; the option by release: "
              "Ascend/torchair@d20f4f9c (7.2.0) python/torchair/configs/aclgraph_config.py:13, absent at "
              "Ascend/torchair@85e8475e (7.1.0) python/torchair/configs/compiler_config.py:24-35")
    EXAMPLE_CONFIG = '[tool.npulint.releases]\ntorchair = "master"\n'
    INVALID = (
        Invalid(_ex(_RO.strip(), _BACKEND, "enc = torch.compile(encoder, backend=backend)",
                    "dec = torch.compile(decoder, backend=backend)"), range=(7, 7, 7, 46),
                message="another torch.compile with an aclgraph-mode (\"reduce-overhead\") torchair backend (the "
                        "first is at line 6), and no config sets `aclgraph_config.use_custom_pool`: each compiled "
                        "graph captures its aclgraphs into its own memory pool, so memory is not reused across them "
                        "and device memory may run out; create one pool with `torch.npu.graph_pool_handle()` and "
                        "set it as `config.aclgraph_config.use_custom_pool` (torchair 7.2.0 to master: "
                        "Ascend/torchair@fced8842 python/torchair/configs/aclgraph_config.py:13)"),
    )
    VALID = (_ex(_RO.strip(), "config.aclgraph_config.use_custom_pool = torch.npu.graph_pool_handle()", _BACKEND,
                 "enc = torch.compile(encoder, backend=backend)", "dec = torch.compile(decoder, backend=backend)"),
             _ex(_BACKEND, "enc = torch.compile(encoder, backend=backend)",
                 "dec = torch.compile(decoder, backend=backend)"))
    HOW_TO_FIX = ("Create one pool (`pool = torch.npu.graph_pool_handle()`) and set "
                  "`config.aclgraph_config.use_custom_pool = pool` on the configs of these graphs.")

    uses = (TorchairConfigAnalysis,)

    def __init__(self, ctx: FileContext):
        super().__init__(ctx)
        # the compiles that certainly capture aclgraphs, (call, backend, mode) by function (or
        # module level), in source order; and those functions' scopes
        self.groups: Dict[int, list] = {}
        self.scopes: Dict[int, Scope] = {}

    def visit_Call(self, node: cst.Call) -> None:
        """A compile that certainly captures aclgraphs: an aclgraph mode and
        ``debug.run_eagerly`` certainly off (with it on, torchair runs the graph eagerly and
        captures nothing)."""
        a = self.ctx.analysis(TorchairConfigAnalysis)
        rec = a.compile_at(node)
        if rec is None:
            return
        c, site, b, _ = rec
        m = a.mode(b)
        if m not in ACLGRAPH_MODES:
            return
        eager = a.effective(b.config, RUN_EAGERLY, b.site, False)
        if not is_constant(eager) or eager:
            return
        scope = site.scope.enclosing_function() or site.scope
        self.groups.setdefault(id(scope), []).append((c, b, m))
        self.scopes[id(scope)] = scope

    def finish(self) -> None:
        """The compiles of one function (or the module level) together, with the resets between
        them: a group. Compiles in different functions (separate tests, spawned workers) are not
        known to hold their graphs at the same time; compiles under disjoint arms of one
        statement never both run (an ``if`` arm that returns and the code after the ``if``
        too), and one after a ``return`` never runs (:mod:`npulint.flow`)."""
        if not self.groups:
            return
        a = self.ctx.analysis(TorchairConfigAnalysis)
        resets = self._reset_points(a)
        for key, compiled in self.groups.items():
            flow = None
            for acl in self._split_at_resets(compiled, resets.get(key, ())):
                if len(acl) < 2:
                    continue
                if flow is None:
                    flow = self.ctx.sem.flows.flow(self.scopes[key].node)
                acl = [item for item in acl if id(item[0]) not in flow.dead]  # after a return: never runs
                # each compile with the first earlier one that may hold its graph at the same time
                pairs = []
                for k, item in enumerate(acl):
                    earlier = next((prev for prev in acl[:k] if not flow.exclusive(prev[0], item[0])), None)
                    if earlier is not None:
                        pairs.append((item, earlier))
                if not pairs:
                    continue
                if any(b.config is None or self._pool_maybe_set(b.config) for _, b, _ in acl):
                    continue
                first = acl[0][0]
                # what the code certainly sets on these configs before the compiles, where they are
                first_site = a.compile_at(first)[1]
                evidence = [st for cfg in {id(b.config): b.config for _, b, _ in acl}.values()
                            for st in certain_stores(cfg, first_site)]
                held = holds_with_options(self.ctx, evidence, (POOL,))
                if held is None:  # a release the code may run on has no custom pool: nothing to advise
                    continue
                releases, citation = held
                for (call, b, m), (earlier, _, _) in pairs:
                    self.report(call,
                                f"another {a.compile_api(call)} with an aclgraph-mode (\"{m}\") torchair backend (the first "
                                f"is at line {self.ctx.line(earlier)}), and no config sets "
                                "`aclgraph_config.use_custom_pool`: each compiled graph captures its aclgraphs into "
                                "its own memory pool, so memory is not reused across them and device memory may run "
                                "out; create one pool with `torch.npu.graph_pool_handle()` and set it as "
                                f"`config.aclgraph_config.use_custom_pool` ({releases}: {citation})")

    def _reset_points(self, a: TorchairConfigAnalysis) -> Dict[object, List[Tuple[int, int]]]:
        """Where, in each function (or at module level), the compiled graphs may be forgotten:
        a ``torch._dynamo.reset()`` there, or a call of a function of this file by the name of
        one that resets (the conservative side: it may be that function)."""
        ctx = self.ctx
        resetting: Set[str] = set()
        points: Dict[object, List[Tuple[int, int]]] = {}
        for call, site in a.calls:
            if ctx.resolve(call.func, site, DYNAMO_RESET) is None:
                continue
            scope = site.scope.enclosing_function() or site.scope
            points.setdefault(id(scope), []).append(self._start(call))
            if scope.kind == "function":
                resetting.add(scope.node.name.value)
        if resetting:
            for call, site in a.calls:
                f = call.func
                callee = f.value if type(f) is cst.Name else f.attr.value if type(f) is cst.Attribute else None
                if callee in resetting:
                    scope = site.scope.enclosing_function() or site.scope
                    points.setdefault(id(scope), []).append(self._start(call))
        return points

    def _start(self, node) -> Tuple[int, int]:
        s = self.ctx.span(node)
        return s.line, s.column

    def _split_at_resets(self, compiled, resets) -> List[list]:
        """The compiles of one function in runs that no reset separates (source order)."""
        if not resets:
            return [compiled]
        runs: List[list] = [[]]
        last = None
        for item in sorted(compiled, key=lambda t: self._start(t[0])):
            here = self._start(item[0])
            if last is not None and any(last < r < here for r in resets):
                runs.append([])
            runs[-1].append(item)
            last = here
        return runs

    def _pool_maybe_set(self, cfg: Config) -> bool:
        if cfg.tainted or any(POOL[:len(p)] == p for p, _ in cfg.escapes):
            return True
        for s in cfg.stores:
            if s.option_path == POOL or (s.w.status != "ok" and POOL[:len(s.path)] == s.path):
                if s.raw.kind != "assign" or not s.known_value:
                    return True
                if self.ctx.value(s.raw.value, s.site) is not None:
                    return True
        return False


class ConfigOptionType(_StoreRule):
    CODE = "NPU204"
    NAME = "config-option-type"
    SEVERITY = "error"
    SUMMARY = "A statically known config value of the wrong type."
    EXPLANATION = (
        "torchair checks option values: a boolean option (`OptionValue(_, [True, False])`) raises ValueError "
        "at the assignment for anything that does not compare equal to True or False (`\"False\"`, `None`); "
        "`0`/`1` are accepted and not reported. Floats are reported too: `0.0`/`1.0` pass torchair's equality "
        "check, but the option then reads back as the string `'1.0'`, which torchair's `== \"1\"` tests do not "
        "treat as on. `debug.aclgraph.static_capture_size_limit` must be an int in [1, 2**63-1] (ValueError). "
        "`aclgraph_config.use_custom_pool` is a plain attribute, stored unchecked; when an aclgraph is first "
        "compiled torchair raises TypeError unless it is None or a graph-pool handle, a 2-tuple of ints with a "
        "zero element (`torch.npu.graph_pool_handle()`): a literal bool, number, string or list is reported; "
        "a call result is unknown and not reported. The other options are checked as each release's class "
        "defines them (`values` in rules/torchair_releases.json, read from the configs by "
        "tools/gen_torchair_releases.py): an enum `OptionValue(_, [...])` raises ValueError for a value not in its "
        "list (`ge_config.oo_level = \"o1\"`); an `IntRangeValue` for a non-int or one outside its bounds; "
        "`StrOptionValue`, `IntListValue`, `DictOptionValue` and `CallableValue` raise TypeError for a known value "
        "that is neither None nor a str, a list/tuple of ints, a dict, a callable; a `RegexValue` raises TypeError "
        "for a non-string and ValueError for a string its pattern does not match. Paths and files are the "
        "machine's and never reported. Where the releases the code may run on differ, a value one of them accepts "
        "is not reported (nor in a conditional store), and the message names the releases that reject it. "
        "A check holds on the torchair releases that define the "
        "option (`options` in rules/torchair_releases.json), and setting it is evidence that the code runs on one "
        "of them: where no release the code may run on defines it (`debug.deadlock_check` with torchair pinned "
        "to 7.1.0), the assignment fails otherwise, which NPU206 reports."
        " A store that raises at the assignment is not reported in the body of `pytest.raises(...)` or "
        "`self.assertRaises(...)`, which expects an exception there (a test of the raise)."
        " A config another module of the run makes at its top level and this file imports (`from comp import config`) is checked too: torchair validates at the assignment, whoever made the config.")
    SOURCE = ("Ascend/torchair@fced8842 python/torchair/configs/_option_base.py:42-68,71-125,171-186,195-209, "
              "configs/debug_config.py:78-88, "
              "_acl_concrete_graph/acl_graph.py:752-761")
    INVALID = (
        Invalid(_ex("config.debug.aclgraph.clone_input = \"False\""), range=(4, 1, 4, 34),
                message="`config.debug.aclgraph.clone_input` is a boolean option but gets 'False' (str): torchair "
                        "raises ValueError at this assignment (allowed: True, False); use True or False"),
        Invalid(_ex("config.debug.aclgraph.static_capture_size_limit = 0"), range=(4, 1, 4, 48),
                message="`config.debug.aclgraph.static_capture_size_limit` = 0 is outside [1, 2**63-1]: torchair "
                        "raises ValueError at this assignment; use an int >= 1 (the default is 64)"),
        Invalid(_ex("config.ge_config.oo_level = \"o1\""), range=(4, 1, 4, 26),
                message="`config.ge_config.oo_level` gets 'o1' (str): torchair raises ValueError at this assignment "
                        "(allowed: 'O1', 'O3')"),
        Invalid(_ex("config.aclgraph_config.use_custom_pool = True"), range=(4, 1, 4, 39),
                message="`config.aclgraph_config.use_custom_pool` gets True (bool), which is not a graph-pool "
                        "handle: torchair stores it unchecked and raises TypeError (\"Invalid graph pool handle "
                        "type\") when the first aclgraph is compiled; use `torch.npu.graph_pool_handle()` (or None "
                        "for no shared pool)"),
    )
    VALID = (_ex("config.debug.aclgraph.clone_input = 0", "config.debug.aclgraph.static_capture_size_limit = 128",
                 "config.aclgraph_config.use_custom_pool = torch.npu.graph_pool_handle()",
                 "config.ge_config.oo_level = \"O1\""),
             _ex("config.aclgraph_config.use_custom_pool = None"))
    HOW_TO_FIX = ("Use True/False for boolean options, an int >= 1 for static_capture_size_limit, "
                  "`torch.npu.graph_pool_handle()` for use_custom_pool, and for the other options a value the "
                  "message lists as allowed.")

    uses = (TorchairConfigAnalysis,)

    def judge(self, cfg: Config, s: Store) -> None:
        # the check is each defining release's: on a release without the option the store fails
        # otherwise (ValueError "has no option", AttributeError through ``.value``: NPU206), so it
        # holds where the code may run on a release that defines it (the store is evidence of that)
        if s.validated and s.option_path != MODE and s.w.node is not None and s.w.node.check is not None and \
                self.ctx.analysis(TorchairConfigAnalysis).checked(s) and \
                holds_with_options(self.ctx, certain_stores(cfg, s.site) + [s], [s.option_path]) is not None:
            raises_here = s.w.node.check != "pool"  # (use_custom_pool is stored unchecked: it raises later)
            if raises_here and self.ctx.analysis(TorchairConfigAnalysis).raise_expected(s):
                return
            if s.w.node.check in ("bool", "pool") or s.option_path == CAPTURE_LIMIT:
                self._check_type(s)
            else:
                self._check_value(cfg, s)

    def _check_value(self, cfg: Config, s: Store) -> None:
        """The other option classes, as each release defines the option (``values``): reported
        where every release the code may run on rejects the value with the same exception."""
        from npulint.releases import describe

        kind, v, node = literal_kind(self.ctx, s.raw.value, s.site)
        if kind is None:
            return
        entries = option_values(s.option_path)
        rejected = {r: value_rejected(e, kind, v) for r, e in entries.items()}
        holds = {r: entries[r]["source"] for r, why in rejected.items() if why is not None}
        if not holds:
            return
        everywhere = len(holds) == len(option_releases(s.option_path))
        held = None if s.conditional and not everywhere else \
            holds_with_evidence(self.ctx, certain_stores(cfg, s.site) + [s], holds)
        if held is None:
            return
        releases, where = held
        newest = next(r for r, w in holds.items() if w == where)
        exc, allowed = rejected[newest]
        if any(rejected[r][0] != exc for r in holds):
            return  # the releases differ in the exception: say nothing rather than name the wrong one
        path = ".".join(s.option_path)
        shown = f"the {kind} {self.ctx.code(node)}" if kind in ("list", "tuple") else f"{v!r} ({type(v).__name__})"
        if everywhere:
            self.report(s.node, f"`config.{path}` gets {shown}: torchair raises {exc} at this assignment "
                                f"(allowed: {allowed})")
            return
        accepting = describe(f"torchair@{r}" for r in option_releases(s.option_path) if r not in holds)
        self.report(s.node, f"`config.{path}` gets {shown}: torchair {releases} raises {exc} at this assignment "
                            f"({where}, allowed: {allowed}; {accepting} accept it)")

    def _check_type(self, s: Store) -> None:
        ctx = self.ctx
        check = s.w.node.check
        path = ".".join(s.option_path)
        if check == "bool":
            v = ctx.value(s.raw.value, s.site)
            if not is_constant(v) or isinstance(v, bool) or (type(v) is int and v in (0, 1)):
                return
            if isinstance(v, float) and v in (0.0, 1.0):
                msg = (f"`config.{path}` is a boolean option but gets the float {v!r}: torchair accepts it because "
                       f"{v!r} == {bool(v)}, but the option then reads back as '{v!r}', not '1'/'0', and the "
                       f"code that tests it for \"1\" treats it as off; use {bool(v)}")
            else:
                msg = (f"`config.{path}` is a boolean option but gets {v!r} ({type(v).__name__}): torchair raises "
                       f"ValueError at this assignment (allowed: True, False); use True or False")
            self.report(s.node, msg)
        elif isinstance(check, tuple) and check[0] == "int" and s.option_path == CAPTURE_LIMIT:
            v = ctx.value(s.raw.value, s.site)
            if not is_constant(v):
                return
            lo, hi = check[1], check[2]
            if isinstance(v, int) and lo <= v <= hi:
                return
            why = "is not an int" if not isinstance(v, int) else f"is outside [{lo}, 2**63-1]"
            self.report(s.node, f"`config.{path}` = {v!r} {why}: torchair raises ValueError at this "
                                f"assignment; use an int >= 1 (the default is 64)")
        elif check == "pool":
            kind, v, node = literal_kind(ctx, s.raw.value, s.site)
            if kind is None or (kind == "scalar" and v is None):
                return
            if kind == "tuple" and len(v) == 2 and all(isinstance(x, int) for x in v) and v[0] * v[1] == 0:
                return
            shown = (f"the {kind} {ctx.code(node)}" if kind in ("list", "tuple") else
                     f"{v!r} ({type(v).__name__})")
            self.report(s.node,
                        f"`config.{path}` gets {shown}, which is not a graph-pool handle: torchair stores it "
                        "unchecked and raises TypeError (\"Invalid graph pool handle type\") when the first aclgraph "
                        "is compiled; use `torch.npu.graph_pool_handle()` (or None for no shared pool)")


class AclgraphOutputRetained(LintRule):
    CODE = "NPU205"
    NAME = "aclgraph-output-retained"
    SEVERITY = "warning"
    SUMMARY = "An output of an aclgraph-compiled callable is kept across the loop's next call without a copy."
    EXPLANATION = (
        "An aclgraph runs on fixed memory addresses: every replay writes its outputs into the same memory. "
        "With `debug.aclgraph.enable_output_clone` off (the default) an output that is kept while the compiled "
        "callable runs again is overwritten in place. Reported in an aclgraph mode (known from the config) when, "
        "inside a loop that calls the compiled callable, its output (the name bound to the call, the call "
        "itself, or a subscript of either by basic indexing: ints, slices, `None`, `...`, a tuple of them, or a "
        "string key of a dict of outputs) is appended/inserted/added to a container that outlives the iteration "
        "(`.append`, `.appendleft`, `.insert`, `.add`, `.extend`, `c[k] = out`) or stored in an attribute; a "
        "list/set/dict comprehension whose elements are the outputs collects them the same way. Advanced "
        "indexing (`logits[torch.arange(bs), seq_lens - 1]`, a list or tensor index) returns a new tensor, and "
        "an index of unknown kind is not followed. Not reported when every path from the store leaves the loop "
        "before the callable runs again: the statements after it (through the `if` and `with` around it) reach "
        "`return`, `raise` or a `break` of that loop (`if hit: found.append(out); break`), with no call of the "
        "callable on the way; a `break` does not count where a loop around that one keeps the container. "
        "`.clone()`, `.detach().clone()`, `.cpu()`, `.tolist()`, `.item()`, reductions and `copy.deepcopy(...)` "
        "at the point of storing are copies. A view is not a copy: `out.detach()` shares the output's storage, "
        "so the result of `detach`, `detach_`, `view`, `view_as`, `reshape`, `flatten`, `squeeze`, `unsqueeze`, "
        "`expand`, `expand_as`, `narrow`, `transpose`, `permute`, `t`, `select`, `unbind`, `split`, `chunk`, "
        "`as_strided`, `contiguous`, `requires_grad_` and of `to` without a dtype or device is followed back to "
        "the tensor it was called on (also through names bound to it, `y = out.detach()`). Any other call on "
        "the output is unknown, and nothing is reported for it.")
    SOURCE = (_SRC + ":34-36 (场景2); Ascend/torchair@fced8842 "
              "python/torchair/_acl_concrete_graph/acl_graph.py:1462-1474; indexing: PyTorch's Tensor Views page "
              "(pytorch/pytorch docs/source/tensor_view.rst: \"basic indexing returns views, while advanced "
              "indexing returns a copy\")")
    INVALID = (
        Invalid(_ex(_RO.strip(), _BACKEND, _COMPILE, "outs = []", "for x in batches:", "    out = opt_model(x)",
                    "    outs.append(out)"), range=(10, 5, 10, 21),
                message="an output of `opt_model` (compiled at line 6 with a torchair backend in "
                        "\"reduce-overhead\" mode) is kept in `outs` across loop iterations without a copy: "
                        "aclgraph replays write their outputs into the same memory, so the next call of `opt_model` "
                        "in this loop overwrites it in place; store a copy (`.clone()`) or set "
                        "`config.debug.aclgraph.enable_output_clone = True`"),
        Invalid(_ex(_RO.strip(), _BACKEND, _COMPILE, "outs = []", "for x in batches:", "    out = opt_model(x)",
                    "    outs.append(out.detach())"), range=(10, 5, 10, 30),
                message="an output of `opt_model` (compiled at line 6 with a torchair backend in "
                        "\"reduce-overhead\" mode) is kept in `outs` across loop iterations without a copy: "
                        "aclgraph replays write their outputs into the same memory, so the next call of `opt_model` "
                        "in this loop overwrites it in place; store a copy (`.clone()`) or set "
                        "`config.debug.aclgraph.enable_output_clone = True`"),
    )
    VALID = (_ex(_RO.strip(), _BACKEND, _COMPILE, "outs = []", "for x in batches:", "    out = opt_model(x)",
                 "    outs.append(out.clone())"),
             _ex(_RO.strip(), _BACKEND, _COMPILE, "outs = []", "for x in batches:", "    out = opt_model(x)",
                 "    outs.append(out.detach().clone())"),
             _ex(_RO.strip(), "config.debug.aclgraph.enable_output_clone = True", _BACKEND, _COMPILE, "outs = []",
                 "for x in batches:", "    out = opt_model(x)", "    outs.append(out)"))
    HOW_TO_FIX = "Store a copy (`out.clone()`), or set `config.debug.aclgraph.enable_output_clone = True`."

    uses = (TorchairConfigAnalysis,)

    def __init__(self, ctx: FileContext):
        super().__init__(ctx)
        self._invocations: Optional[Dict[int, Tuple[cst.Call, Site, Tuple[cst.Call, Backend, str]]]] = None
        self._attr_stores: Optional[Dict[int, List[AttrStore]]] = None

    def invocations(self) -> Dict[int, Tuple[cst.Call, Site, Tuple[cst.Call, Backend, str]]]:
        """The calls of a callable compiled in an aclgraph mode with ``enable_output_clone``
        off: id(call) -> (call, site, (the compile call, its backend, its mode)); found once,
        at the first hook."""
        if self._invocations is None:
            self._invocations = self._find_invocations()
        return self._invocations

    def _find_invocations(self) -> Dict[int, Tuple[cst.Call, Site, Tuple[cst.Call, Backend, str]]]:
        a = self.ctx.analysis(TorchairConfigAnalysis)
        sem = self.ctx.sem
        compiled: Dict[int, Tuple[cst.Call, Backend, str]] = {}  # id(compile call) -> ...
        for call, site, b, _ in a.compiles.values():
            m = a.mode(b)
            if m not in ACLGRAPH_MODES:
                continue
            clone = a.effective(b.config, OUTPUT_CLONE, b.site, False)
            if not (clone is False or (type(clone) is int and clone == 0)):
                continue
            compiled[id(call)] = (call, b, m)
        if not compiled:
            return {}
        # bindings of a compiled callable: a name or self.<attr> bound to torch.compile(...), or a def
        # decorated with @torch.compile(backend=...)
        callable_of: Dict[int, Tuple[cst.Call, Backend, str]] = {}
        for b in sem.all_bindings(with_attrs=True):
            if b.kind == "assign" and not b.index and isinstance(b.value, cst.Call) and id(b.value) in compiled:
                callable_of[id(b)] = compiled[id(b.value)]
            elif b.kind == "def" and isinstance(b.node, cst.FunctionDef):
                for d in b.node.decorators:
                    if isinstance(d.decorator, cst.Call) and id(d.decorator) in compiled:
                        callable_of[id(b)] = compiled[id(d.decorator)]
        if not callable_of:
            return {}
        invocations = {}
        for call, site in a.calls:
            b = sem.certain_binding(call.func, site)
            if b is not None and id(b) in callable_of:
                invocations[id(call)] = (call, site, callable_of[id(b)])
        return invocations

    # the places an output may be kept: an argument of a retaining method, the value of a
    # subscript or attribute store, the elements of a comprehension
    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        if isinstance(f, cst.Attribute) and f.attr.value in _RETAINING_METHODS and self.invocations():
            pos = [a for a in node.args if a.keyword is None and not a.star]
            i = _RETAINING_METHODS[f.attr.value]
            if len(pos) > i:
                self._judge_kept(node, pos[i].value, f.value, f.value, self.ctx.site())

    def visit_Assign(self, node: cst.Assign) -> None:
        if not self.invocations():
            return
        site = self.ctx.site()
        for t in node.targets:
            if isinstance(t.target, cst.Subscript):
                self._judge_kept(t.target, node.value, t.target.value, t.target, site)
        self._judge_attribute_stores(node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if self.invocations():
            self._judge_attribute_stores(node)

    def _judge_attribute_stores(self, node) -> None:
        """The attribute stores of a plain value the statement *node* makes (the engine's
        records, with their sites)."""
        if self._attr_stores is None:
            self._attr_stores = {}
            for raw in self.ctx.sem.attr_stores:
                if raw.kind == "assign" and raw.value is not None:
                    self._attr_stores.setdefault(id(raw.node), []).append(raw)
        for raw in self._attr_stores.get(id(node), ()):
            self._judge_kept(raw.target, raw.value, raw.target.value, raw.target, raw.site)

    def visit_ListComp(self, node: cst.ListComp) -> None:
        self._judge_comprehension(node, node.elt)

    def visit_SetComp(self, node: cst.SetComp) -> None:
        self._judge_comprehension(node, node.elt)

    def visit_DictComp(self, node: cst.DictComp) -> None:
        self._judge_comprehension(node, node.value)

    def _judge_comprehension(self, comp: cst.CSTNode, elt: cst.BaseExpression) -> None:
        """A list/set/dict comprehension that collects the outputs: every element is kept while
        the callable runs again for the next one."""
        e = elt
        while isinstance(e, cst.Subscript) and self._basic_index(e, self.ctx.site()):
            e = e.value
        inv = self.invocations().get(id(e)) if isinstance(e, cst.Call) else None
        if inv is None:
            return
        ctx = self.ctx
        call, _csite, (ccall, _backend, m) = inv
        callee = ctx.code(call.func)
        self.report(comp,
                    f"a comprehension collects the outputs of `{callee}` (compiled at line {ctx.line(ccall)} "
                    f"with a torchair backend in \"{m}\" mode) without a copy: aclgraph replays write their "
                    f"outputs into the same memory, so each call of `{callee}` overwrites the elements kept "
                    "before it; collect copies (`.clone()`) or set `config.debug.aclgraph.enable_output_clone = "
                    "True`")

    def _judge_kept(self, node: cst.CSTNode, stored: cst.BaseExpression, container: cst.BaseExpression,
                    place: cst.CSTNode, site: Site) -> None:
        """*stored* kept in *container* (named as *place*) at *site*: reported at *node* when it
        is an output of a compiled callable called in a loop that *container* outlives."""
        inv = self._output_of(stored, site)
        if inv is None:
            return
        call, csite, (ccall, _backend, m) = inv
        loop = csite.shared_loop(site)
        if loop is None or self._lives_in(container, site, loop) or self._leaves_loop(node, site, loop, container):
            return
        ctx = self.ctx
        callee = ctx.code(call.func)
        self.report(node,
                    f"an output of `{callee}` (compiled at line {ctx.line(ccall)} with a torchair backend in "
                    f"\"{m}\" mode) is kept in `{ctx.code(place)}` across loop iterations without a copy: aclgraph "
                    f"replays write their outputs into the same memory, so the next call of `{callee}` in this "
                    "loop overwrites it in place; store a copy (`.clone()`) or set "
                    "`config.debug.aclgraph.enable_output_clone = True`")

    def _output_of(self, stored, site: Site, _depth: int = 0):
        """The invocation of a compiled callable whose output *stored* is (or shares storage
        with): the call itself, a name certainly bound to it (or to such an expression), a
        subscript of it by basic indexing (:meth:`_basic_index`), or a call of a view method on it (:data:`_VIEW_METHODS`; ``.to()`` and
        ``.requires_grad_()`` that change neither dtype nor device). Anything else (a copy, an
        unknown call) is not the output: None."""
        if _depth > 5:
            return None
        e = stored
        while True:
            if isinstance(e, cst.Subscript):
                if not self._basic_index(e, site):
                    return None
                e = e.value
            elif isinstance(e, cst.Call) and _returns_receiver_storage(e):
                e = e.func.value
            else:
                break
        if isinstance(e, cst.Call):
            return self.invocations().get(id(e))
        if isinstance(e, cst.Name):
            cands, exact = self.ctx.sem.reaching(e.value, site)
            if exact and cands[0].kind == "assign" and isinstance(cands[0].value, (cst.Call, cst.Name, cst.Subscript)):
                return self._output_of(cands[0].value, cands[0].site, _depth + 1)
        return None

    def _basic_index(self, sub: cst.Subscript, site: Site) -> bool:
        """Whether *sub* is basic indexing, which returns a view of what it indexes: ints, slices,
        None, ``...`` (one, or a tuple of them); or a string key (an item of a dict of outputs,
        the output itself). Anything else may be advanced indexing, which returns a new tensor
        (``logits[torch.arange(bs), seq_lens - 1]``; PyTorch's Tensor Views page: "basic
        indexing returns views, while advanced indexing returns a copy"), or is unknown."""
        for el in sub.slice:
            s = el.slice
            if isinstance(s, cst.Slice):
                continue
            if getattr(s, "star", None) is not None or not _basic_key(self.ctx.value(s.value, site), s.value):
                return False
        return True

    def _leaves_loop(self, node: cst.CSTNode, site: Site, loop, container) -> bool:
        """Whether every path from the statement that holds *node* leaves *loop* before the
        compiled callable can run again: the statements after it (in its block, then in the
        blocks of the ``if``/``with`` around it, up to the loop's body) reach ``return``,
        ``raise`` or a ``break`` of *loop* (or an ``if`` whose every arm does), with no call of
        the compiled callable on the way. A ``break`` does not leave a loop around *loop* in
        which *container* outlives an iteration."""
        path = _path_in(loop.body, node)
        if path is None:
            return False
        outer = [blk for blk, is_loop in site.blocks[:[b for b, _ in site.blocks].index(loop)] if is_loop]
        may_break = all(self._lives_in(container, site, blk) for blk in outer)
        calls = self.invocations()
        for level in range(len(path) - 1, -1, -1):
            items, k = path[level]
            for item in items[k + 1:]:
                if _holds_call(item, calls):
                    return False
                end = _always_ends(item)
                if end == "raise" and any(isinstance(i[j], cst.With) for i, j in path[:level]):
                    return False  # a context manager around it may suppress the exception
                if end is not None:
                    return end != "continue" and (end != "break" or may_break)
        return False

    def _lives_in(self, container, site: Site, loop) -> bool:
        """True if the container (or the object whose attribute is stored) may be created anew
        in each iteration of *loop*, so it does not outlive the iteration."""
        root = container
        while isinstance(root, (cst.Attribute, cst.Subscript)):
            root = root.value
        if not isinstance(root, cst.Name):
            return True  # an expression we cannot follow: say nothing
        cands, _ = self.ctx.sem.reaching(root.value, site)
        return any((loop, True) in b.site.blocks and b.site.scope is site.scope for b in cands)


def _basic_key(value: Any, expr: cst.BaseExpression) -> bool:
    """An index of basic indexing (:meth:`AclgraphOutputRetained._basic_index`)."""
    if isinstance(expr, cst.Ellipsis) or value is None or isinstance(value, str):
        return True
    if type(value) is int:
        return True
    return isinstance(expr, cst.Tuple) and isinstance(value, tuple) and \
        all(v is None or v is Ellipsis or type(v) is int for v in value)


def _items(block) -> List[cst.CSTNode]:
    """The statements of a block, a line's small statements each an item (``x.append(o); break``)."""
    out: List[cst.CSTNode] = []
    for st in getattr(block, "body", ()):
        if isinstance(st, cst.SimpleStatementLine):
            out.extend(st.body)
        else:
            out.append(st)
    return out


def _contains(tree: cst.CSTNode, node: cst.CSTNode) -> bool:
    todo = [tree]
    while todo:
        n = todo.pop()
        if n is node:
            return True
        todo.extend(n.children)
    return False


def _path_in(block, node: cst.CSTNode) -> Optional[List[Tuple[List[cst.CSTNode], int]]]:
    """The blocks from *block* down to the statement that holds *node*, each as (its items, the
    index of the one that holds it), through the arms of ``if`` and the bodies of ``with`` only
    (None: elsewhere, or in a loop, ``try`` or ``match`` inside *block*)."""
    items = _items(block)
    for k, item in enumerate(items):
        if not _contains(item, node):
            continue
        inner = item
        while isinstance(inner, cst.If):
            arms = [inner.body] + ([inner.orelse] if inner.orelse is not None else [])
            arm = next((a for a in arms if _contains(a, node)), None)
            if arm is None:
                return None  # in the test
            if isinstance(arm, cst.If):
                inner = arm  # elif
                continue
            below = _path_in(arm.body if isinstance(arm, cst.Else) else arm, node)
            return None if below is None else [(items, k)] + below
        if isinstance(inner, cst.With):
            below = _path_in(inner.body, node) if _contains(inner.body, node) else None
            return None if below is None else [(items, k)] + below
        if isinstance(inner, cst.BaseCompoundStatement):
            return None
        return [(items, k)]
    return None


def _always_ends(item: cst.CSTNode) -> Optional[str]:
    """How *item* ends every path through it: "return", "raise", "break" or "continue" (the
    first an ``if`` arm ends with when its arms differ); None when some path goes on."""
    if isinstance(item, (cst.Return, cst.Raise, cst.Break, cst.Continue)):
        return type(item).__name__.lower()
    if isinstance(item, cst.With):
        end = _block_ends(item.body)
        return None if end == "raise" else end  # (its context manager may suppress the exception)
    if isinstance(item, cst.If):
        if item.orelse is None:
            return None
        ends = [_block_ends(item.body),
                _always_ends(item.orelse) if isinstance(item.orelse, cst.If) else _block_ends(item.orelse.body)]
        if None in ends:
            return None
        return "continue" if "continue" in ends else "break" if "break" in ends else ends[0]
    return None


def _block_ends(block) -> Optional[str]:
    for item in _items(block):
        end = _always_ends(item)
        if end is not None:
            return end
    return None


def _holds_call(item: cst.CSTNode, calls: Dict[int, Any]) -> bool:
    todo = [item]
    while todo:
        n = todo.pop()
        if isinstance(n, cst.Call) and id(n) in calls:
            return True
        todo.extend(n.children)
    return False


class UnknownConfigOption(_StoreRule):
    CODE = "NPU206"
    NAME = "unknown-config-option"
    SEVERITY = "error"
    SUMMARY = "An assignment to an attribute path that is not a torchair config option."
    EXPLANATION = (
        "torchair's sub-configs (`NpuBaseConfig`) raise `ValueError(\"<Class> has no option <name>, all options "
        "[...]\")` when an unknown name is assigned, e.g. `debug.aclgraph.clone_inputs`. `aclgraph_config` (and "
        "`npugraphex_config`, `export`) accept any attribute: a typo such as `aclgraph_config.use_custom_pools` "
        "is silently stored and ignored. Assigning `config.aclgraph_config` itself raises ValueError (it is not "
        "in CompilerConfig's option list). Only paths whose every prefix is a torchair config object are "
        "checked: the root must be a config made by `torchair.CompilerConfig()`, and a sub-config replaced "
        "by an assignment is no longer known. The option list is torchair's (configs/*.py, master fced8842). "
        "Options come and go between releases (`aclgraph_config` arrives in 7.2.0): an option of that list "
        "that none of the torchair releases the project runs defines (those configured in "
        "`[tool.npulint.releases]` or inferred; with neither, every release npulint knows, master among them, "
        "so nothing is said) is reported too, naming the release that brought it "
        "(`rules/torchair_releases.json`). Every message names the releases it holds for; a name master's "
        "schema lacks but a release the project may run defines is not reported, and where the project runs a "
        "torchair release npulint has no data for (a pin to 6.0.rc1, a torchair tree older than 7.1.0) nothing "
        "is said."
        " A store that raises at the assignment is not reported in the body of `pytest.raises(...)` or "
        "`self.assertRaises(...)`, which expects an exception there (a test of the raise)."
        " A config another module of the run makes at its top level and this file imports (`from comp import config`) is checked too: torchair validates at the assignment, whoever made the config.")
    SOURCE = ("Ascend/torchair@fced8842 python/torchair/configs/_option_base.py:221-232, "
              "configs/compiler_config.py:24-45 and the sub-config modules (configs/debug_config.py, "
              "aclgraph_config.py, experimental_config.py)")
    INVALID = (
        Invalid(_ex("config.debug.aclgraph.clone_inputs = False"), range=(4, 1, 4, 35),
                message="`config.debug.aclgraph.clone_inputs` is not a torchair config option (torchair 7.1.0 to "
                        "master): torchair's "
                        "_AclGraphDebugConfig has no option 'clone_inputs' and raises ValueError at this "
                        "assignment; did you mean `config.debug.aclgraph.clone_input`?"),
        Invalid(_ex("config.aclgraph_config.use_custom_pools = torch.npu.graph_pool_handle()"), range=(4, 1, 4, 40),
                message="`config.aclgraph_config.use_custom_pools` is not a torchair config option (torchair 7.2.0 "
                        "to master): "
                        "`config.aclgraph_config` (_AclGraphConfig) accepts any attribute, so the value is silently "
                        "stored and ignored; did you mean `config.aclgraph_config.use_custom_pool`?"),
        Invalid(_ex("config.aclgraph_config = None"), range=(4, 1, 4, 23),
                message="`config.aclgraph_config` cannot be assigned: CompilerConfig has no option "
                        "'aclgraph_config' (it is not in its option list; torchair 7.1.0 to master) and torchair raises "
                        "ValueError at this "
                        "assignment; set `config.aclgraph_config.use_custom_pool` instead"),
    )
    VALID = (_ex("config.debug.aclgraph.clone_input = False",
                 "config.aclgraph_config.use_custom_pool = torch.npu.graph_pool_handle()",
                 "config.experimental_config.frozen_parameter = True", "config.mode.value = \"npugraph_ex\""),
             "import torchair\ndef setup(config):\n    config.debug.aclgraph.clone_inputs = False\n")
    HOW_TO_FIX = "Use the option's real name (see the message's suggestion)."

    uses = (TorchairConfigAnalysis,)

    def __init__(self, ctx: FileContext):
        super().__init__(ctx)
        self._scope: Optional[Set[str]] = None  # the torchair releases the project runs (judge())

    def judge(self, cfg: Config, s: Store) -> None:
        if self._scope is None:
            from npulint.releases import effective

            self._scope = set(effective(self.ctx.settings).torchair())
        scope = self._scope
        if not scope:
            return  # the project's torchair is one npulint has no data for: its options are unknown
        a = self.ctx.analysis(TorchairConfigAnalysis)
        if not a.checked(s) or a.raise_expected(s):
            return
        if s.w.status in ("unknown", "unassignable", "readonly"):
            message = self._unknown_message(s, scope)
        elif s.w.status == "ok" and not s.conditional:  # under if/try: maybe a version guard
            message = self._release_message(s, scope)
        else:
            return
        if message is not None:
            self.report(s.node, message)

    def _release_message(self, s: Store, scope: Set[str], path: Optional[Tuple[str, ...]] = None) -> Optional[str]:
        """An option of master's schema that no torchair release the project runs defines
        (RULES.md "Releases": those configured or inferred, else every release npulint knows,
        which include master: then nothing is said). Where the first missing part is a
        sub-config, reading it raises AttributeError; a missing option of a torchair config
        raises ValueError; one of a plain object is stored and ignored. *path*: the part of the
        store's path to look at (default: the option it sets)."""
        from npulint.releases import describe, torchair_data

        path = s.w.option_path if path is None else path
        for i in range(1, len(path) + 1):
            defined = option_releases(path[:i])
            if not defined:
                return None  # not in the release data: nothing to say
            if defined & scope:
                continue
            missing = path[:i]
            order = [r for r in torchair_data()["releases"] if r in defined]
            first = order[0]
            where = torchair_data()["options"][".".join(missing)][first]
            # read first: the sub-config, the option's `.value`, the object a deeper store is on, or
            # the missing attribute itself (`+=` reads it, `del` deletes it)
            if i < len(path) or s.w.via is not None or len(path) < len(s.path) or _reads_target(s):
                effect = f"reading `config.{'.'.join(missing)}` raises AttributeError"
            elif getattr(walk(path[:-1]).node, "kind", None) == "config":
                effect = "torchair raises ValueError at this assignment"
            else:
                effect = "the value is stored and ignored"
            runs = describe(f"torchair@{r}" for r in torchair_data()["releases"] if r in scope)
            return (f"`config.{'.'.join(s.path)}`: {runs} "
                    f"has no option `{'.'.join(missing)}` (it exists from {first} on: {where}), so {effect}; "
                    "set it only where the project runs a torchair that has it")
        return None

    def _unknown_message(self, s: Store, scope: Set[str]) -> Optional[str]:
        """Why the store fails. A name master's schema lacks is reported only when no release in
        *scope* defines it, and the message names the releases in *scope* that define the
        object it is set on (where the stated effect holds); none: nothing is said."""
        from npulint.releases import describe

        w = s.w
        path = ".".join(s.path)
        if w.status == "unknown" and option_releases(s.path[:w.index + 1]) & scope:
            return None  # a release the project may run defines it
        holds = scope if w.index == 0 else scope & option_releases(s.path[:w.index])
        if not holds:  # the object it is set on is missing too: reading it is what fails first
            return self._release_message(s, scope, s.path[:w.index]) if w.index else None
        runs = describe(f"torchair@{r}" for r in holds)
        if w.status == "unassignable" and _reads_target(s):
            return None  # `+=` fails in its operator first (TypeError), `del` deletes the attribute
        if w.status == "unassignable":
            name = s.path[-1]
            hint = " set `config.aclgraph_config.use_custom_pool` instead" if name == "aclgraph_config" else \
                " set its attributes instead"
            return (f"`config.{path}` cannot be assigned: CompilerConfig has no option {name!r} (it is not in its "
                    f"option list; {runs}) and torchair raises ValueError at this assignment;{hint}")
        name = s.path[w.index]
        parent = w.parent
        where = ".".join(s.path[:w.index])
        owner = f"`config.{where}`" if where else "`config`"
        if w.status == "readonly":
            return (f"`config.{path}`: {name!r} is a read-only property of the option object {owner} ({runs}); "
                    "Python raises "
                    f"AttributeError at this assignment; assign `config.{where}` (or `.value`) instead")
        last = w.index == len(s.path) - 1
        if parent is not None and parent.kind == "option":
            candidates = list(OPTION_VALUE_ATTRS)
        else:
            candidates = parent.names() if parent is not None else []
        if not name.startswith("_"):
            candidates = [c for c in candidates if not c.startswith("_")]
        # only a name some release in scope defines (one the release data does not know: master's)
        candidates = [c for c in candidates if _defined_in(s.path[:w.index] + (c,), scope)]
        close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
        hint = f"; did you mean `config.{'.'.join(s.path[:w.index] + (close[0],))}`?" if close else ""
        # reading the attribute (a path through it, `+=`) or deleting it fails in Python; any other
        # store (`=`, a tuple or `for`/`with ... as` target) sets it, which a config refuses
        if not last or _reads_target(s):
            effect = f"{owner} has no attribute {name!r}, so Python raises AttributeError here"
        elif parent is not None and parent.kind == "config":
            # the class as master names it (an older release may name it otherwise: then its path)
            cls = parent.cls if "master" in scope else owner
            effect = (f"torchair's {cls} has no option {name!r} and raises ValueError at this assignment")
        elif parent is not None and parent.kind == "option":
            effect = (f"{owner} is an option value object: the attribute is stored on it and never read, so the "
                      "assignment has no effect")
        else:
            effect = (f"{owner} ({parent.cls if parent else 'object'}) accepts any attribute, so the value is "
                      "silently stored and ignored")
        return f"`config.{path}` is not a torchair config option ({runs}): {effect}{hint}"


def _reads_target(s: Store) -> bool:
    """An augmented assignment (reads the attribute first) or a ``del`` (no ``__setattr__``)."""
    return s.raw.kind == "aug" or type(s.raw.node) is cst.Del


def _defined_in(path: Tuple[str, ...], scope: Set[str]) -> bool:
    """Whether one of the releases *scope* names defines the option *path* (or the release data
    does not know it)."""
    defined = option_releases(path)
    return not defined or bool(defined & scope)


class InvalidCompileMode(_StoreRule):
    CODE = "NPU207"
    NAME = "invalid-compile-mode"
    SEVERITY = "error"
    SUMMARY = "A CompilerConfig mode the torchair releases the code may run on do not accept."
    EXPLANATION = (
        "`config.mode` (and `config.mode.value`) accepts only the modes the release's CompilerConfig lists: "
        "`\"max-autotune\"` and `\"reduce-overhead\"` in torchair 7.1.0 to 7.3.0, and `\"npugraph_ex\"` too from "
        "26.0.0 on (`modes` in rules/torchair_releases.json, generated from each release's "
        "configs/compiler_config.py); anything else (`\"reduce_overhead\"`, `\"default\"`, a trailing space) raises "
        "ValueError at the assignment. A value no release accepts is always reported; one some release accepts "
        "only outside `if`/`try` (maybe a version guard) and where every torchair release the code may run on rejects it (those configured in "
        "`[tool.npulint.releases]` or inferred, else every release npulint knows, less those that lack an "
        "option the code sets; with a torchair release npulint has no data for, nothing), naming those "
        "releases. The suggested modes are those a release the code may run on accepts."
        " A store that raises at the assignment is not reported in the body of `pytest.raises(...)` or "
        "`self.assertRaises(...)`, which expects an exception there (a test of the raise)."
        " A config another module of the run makes at its top level and this file imports (`from comp import config`) is checked too: torchair validates at the assignment, whoever made the config.")
    SOURCE = ("Ascend/torchair@fced8842 python/torchair/configs/compiler_config.py:39, "
              "configs/_option_base.py:42-48; Ascend/torchair@9a83e396 (7.3.0) configs/compiler_config.py:39")
    INVALID = (
        Invalid(_ex("config.mode = \"reduce_overhead\""), range=(4, 1, 4, 12),
                message="'reduce_overhead' is not a torchair compile mode: torchair raises ValueError at this "
                        "assignment; use \"max-autotune\", \"reduce-overhead\" or \"npugraph_ex\"; did you mean "
                        "'reduce-overhead'?"),
        Invalid(_ex("MODE = \"aclgraph\"", "config.mode.value = MODE"), range=(5, 1, 5, 18),
                message="'aclgraph' is not a torchair compile mode: torchair raises ValueError at this assignment; "
                        "use \"max-autotune\", \"reduce-overhead\" or \"npugraph_ex\""),
    )
    VALID = (_ex(_RO.strip()), _ex("config.mode = \"npugraph_ex\""))
    HOW_TO_FIX = ("Use \"reduce-overhead\" (hyphen) or, from torchair 26.0.0 on, \"npugraph_ex\" for aclgraph, "
                  "\"max-autotune\" for Ascend IR.")

    uses = (TorchairConfigAnalysis,)

    def judge(self, cfg: Config, s: Store) -> None:
        a = self.ctx.analysis(TorchairConfigAnalysis)
        if not s.validated or s.option_path != MODE or not a.checked(s) or a.raise_expected(s):
            return
        v = self.ctx.value(s.raw.value, s.site)
        if not is_constant(v):
            return
        from npulint.releases import describe

        rejected = mode_rejected(v)
        evidence = certain_stores(cfg, s.site)
        # the modes some release the code may run on accepts (every mode where none is known)
        usable = [m for m in MODES if holds_with_evidence(self.ctx, evidence, mode_rejected(m)) is None]
        close = difflib.get_close_matches(v, usable, n=1, cutoff=0.6) if isinstance(v, str) else []
        hint = f"; did you mean {close[0]!r}?" if close else ""
        if len(rejected) == len(mode_lists()):  # no release accepts it
            self.report(s.node, f"{v!r} is not a torchair compile mode: torchair raises ValueError at this "
                                f"assignment; use {_either(usable)}{hint}")
            return
        held = None if s.conditional else holds_with_evidence(self.ctx, evidence, rejected)
        if held is None:  # a release the code may run on accepts it (or none is known), or a version guard
            return
        releases, where = held
        accepting = describe(f"torchair@{r}" for r in mode_lists() if r not in rejected)
        self.report(s.node,
                    f"{v!r} is not a torchair compile mode in {releases} ({where}; {accepting} accept it): torchair "
                    f"raises ValueError at this assignment; use {_either(usable)}{hint}")


class CompileModeKwargIgnored(LintRule):
    CODE = "NPU208"
    NAME = "compile-mode-kwarg-ignored"
    SEVERITY = "warning"
    SUMMARY = ("torch.compile(mode=...) with a torchair backend: ignored (torchair 7.3.0 on) or a TypeError "
               "(7.1.0, 7.2.0).")
    EXPLANATION = (
        "For a custom backend, `torch.compile` passes `mode` on to the backend as a keyword argument. From torchair "
        "7.3.0 on, the backend `get_npu_backend` returns takes `**kwargs` and reads only `options` from them: it "
        "ignores `mode`, and the graph runs in the mode of the CompilerConfig given to `get_npu_backend` "
        "(max-autotune by default), so `torch.compile(model, backend=npu_backend, mode=\"reduce-overhead\")` does "
        "not select aclgraph. In torchair 7.1.0 and 7.2.0 the backend takes no `**kwargs`: Python raises "
        "TypeError (unexpected keyword argument 'mode') when the model is first compiled. The message says what "
        "holds on the torchair releases the code may run on (`mode_kwarg` in rules/torchair_releases.json, "
        "generated from each release's npu_fx_compiler.py); with a torchair release npulint has no data for, "
        "nothing is said. `mode=None` and `mode=\"default\"` are not passed on and not reported.")
    SOURCE = ("Ascend/torchair@fced8842 python/torchair/npu_fx_compiler.py:865-887, "
              "configs/npugraphex_config.py:89-122; Ascend/torchair@d20f4f9c (7.2.0) npu_fx_compiler.py:586-587; "
              "PyTorch torch/__init__.py (_TorchCompileWrapper passes mode to the backend)")
    INVALID = (
        Invalid(_ex(_BACKEND, "opt_model = torch.compile(model, backend=backend, mode=\"reduce-overhead\")"),
                range=(5, 51, 5, 73),
                message="torch.compile passes mode='reduce-overhead' to the torchair backend (get_npu_backend at "
                        "line 4): torchair 7.3.0 to master ignore it, and the graph runs in the config's mode "
                        "(\"max-autotune\"); torchair 7.1.0, 7.2.0 take no `mode` argument and raise TypeError when "
                        "the model is first compiled; set `config.mode` on the CompilerConfig passed to "
                        "get_npu_backend and drop `mode=` here"),
        Invalid(_ex(_BACKEND, "opt_model = torch.compile(model, backend=backend, mode=\"max-autotune\")"),
                range=(5, 51, 5, 70),
                message="torch.compile passes mode='max-autotune' to the torchair backend (get_npu_backend at line "
                        "4): torchair 7.3.0 to master ignore it, and the graph runs in the config's mode "
                        "(\"max-autotune\"); torchair 7.1.0, 7.2.0 take no `mode` argument and raise TypeError when "
                        "the model is first compiled; set `config.mode` on the CompilerConfig passed to "
                        "get_npu_backend and drop `mode=` here",
                fixed="import torch\n"
                      "import torchair\n"
                      "config = torchair.CompilerConfig()\n"
                      "backend = torchair.get_npu_backend(compiler_config=config)\n"
                      "opt_model = torch.compile(model, backend=backend)\n"),
    )
    VALID = (_ex(_RO.strip(), _BACKEND, _COMPILE),
             _IMP + "opt_model = torch.compile(model, mode=\"reduce-overhead\")\n")
    HOW_TO_FIX = ("Set `config.mode` on the CompilerConfig passed to get_npu_backend and drop `mode=` from "
                  "torch.compile.")
    AUTOFIX = True

    uses = (TorchairConfigAnalysis,)

    def visit_Call(self, node: cst.Call) -> None:
        a = self.ctx.analysis(TorchairConfigAnalysis)
        rec = a.compile_at(node)
        if rec is None or rec[3] is None:
            return
        call, site, b, mode_arg = rec
        ctx = self.ctx
        v = ctx.value(mode_arg.value, site)
        if not is_constant(v) or v is None or v == "default":
            return
        from npulint.releases import torchair_data

        evidence = certain_stores(b.config, b.site)
        effects = torchair_data()["mode_kwarg"]
        held = {e: holds_with_evidence(ctx, evidence, {r: f["source"] for r, f in effects.items() if f["effect"] in e})
                for e in (("ignores",), ("raises",), ("ignores", "raises"))}
        if held[("ignores", "raises")] is None:  # a release the code may run on reads it, or none is known
            return
        m = a.mode(b)
        runs = f"the config's mode (\"{m}\")" if m is not UNKNOWN else "the config's mode"
        if held[("ignores",)] is not None:
            text = ", which ignores it ({}: {}): the graph runs in {}".format(*held[("ignores",)], runs)
        elif held[("raises",)] is not None:
            text = (", which takes no `mode` argument ({}: {}): Python raises TypeError when the model is first "
                    "compiled").format(*held[("raises",)])
        else:
            from npulint.releases import describe

            ignoring, raising = (describe(f"torchair@{r}" for r, f in effects.items() if f["effect"] == e)
                                 for e in ("ignores", "raises"))
            text = (f": {ignoring} ignore it, and the graph runs in {runs}; {raising} take no `mode` argument and "
                    "raise TypeError when the model is first compiled")
        # dropping ``mode=`` changes nothing where it is ignored and ends the TypeError where it is
        # not; offered when it names the config's own mode, so that a user who meant another mode is
        # not left without the hint
        edit = ctx.remove_arg(call, mode_arg) if m is not UNKNOWN and v == m else None
        self.report(mode_arg,
                    f"torch.compile passes mode={v!r} to the torchair backend (get_npu_backend at line "
                    f"{ctx.line(b.call)}){text}; set `config.mode` on "
                    "the CompilerConfig passed to get_npu_backend and drop `mode=` here",
                    fix=Fix("Drop the mode= argument", (edit,)) if edit is not None else None)


# ======================================================================================
# Helpers
# ======================================================================================

def _returns_receiver_storage(call: cst.Call) -> bool:
    """``x.detach()``, ``x.view(...)``, ... (:data:`_VIEW_METHODS`), ``x.requires_grad_(...)``
    (in place, returns ``x``) and ``x.to()`` with neither a dtype nor a device (only
    ``non_blocking=``): the result shares ``x``'s storage."""
    f = call.func
    if not isinstance(f, cst.Attribute):
        return False
    name = f.attr.value
    if name in _VIEW_METHODS or name == "requires_grad_":
        return True
    if name == "to":
        return all(a.keyword is not None and not a.star and a.keyword.value in _TO_SAME_KEYWORDS for a in call.args)
    return False


def _keyword(call: cst.Call, name: str):
    """The value of keyword argument *name* of *call*, or None."""
    return next((a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None)


def _config_arg(call: cst.Call):
    """The ``compiler_config`` argument of get_npu_backend (keyword; torchair's signature is
    keyword-only, but a positional first argument is read too), or None."""
    for a in call.args:
        if a.keyword is not None and a.keyword.value == "compiler_config":
            return a.value
    for a in call.args:
        if a.keyword is None and not a.star:
            return a.value
    if any(a.star for a in call.args):
        return _UNKNOWN_ARG  # unknown
    return None


# stands for an argument that ``*args``/``**kwargs`` may hold: neither a config nor None
_UNKNOWN_ARG = cst.Ellipsis()


def sets_pool(ctx: FileContext, expr, site: Site) -> Optional[bool]:
    """True if ``use_custom_pool = expr`` certainly sets a pool (a call result or a non-None
    value), False if it is certainly None, None if unknown."""
    value, vsite = ctx.sem.bound_expr(expr, site)
    if isinstance(value, cst.Call):
        return True
    v = ctx.value(value, vsite)
    if not is_constant(v):
        return None  # unknown, or an imported object that may be None
    return v is not None


# The Evaluator turns list and tuple displays alike into tuples; a rule that
# must tell them apart (torchair's ``isinstance(pool, tuple)``) looks at the syntax.
def literal_kind(ctx: FileContext, expr, site: Site):
    """("list"|"tuple"|"scalar", value-or-UNKNOWN, the expression that gives it) for a value whose
    kind is statically known; (None, UNKNOWN, None) otherwise."""
    value, vsite = ctx.sem.bound_expr(expr, site)
    if type(value) is cst.List or type(value) is cst.ListComp:
        v = ctx.value(value, vsite)
        return "list", (list(v) if isinstance(v, tuple) else UNKNOWN), value
    v = ctx.value(value, vsite)
    if not is_constant(v):
        return None, UNKNOWN, None
    if isinstance(v, tuple):
        return ("tuple", v, value) if type(value) is cst.Tuple else (None, UNKNOWN, None)
    if isinstance(v, (bool, int, float, str, bytes)) or v is None:
        return "scalar", v, value
    return None, UNKNOWN, None
