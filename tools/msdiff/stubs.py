"""Stand-ins for torch, torch_npu, apex, transformer_engine and the like, so that Megatron's and
MindSpeed's argument parsing and validation can be imported and run on a CPU box with no torch.

Every attribute of a stub module is a stub class; a stub class can be subclassed, called,
indexed, compared, iterated (empty) and used as a decorator (``@stub`` and ``@stub(...)`` return the
function unchanged)."""

import importlib.abc
import importlib.machinery
import os
import sys
import types

_WORK = os.environ.get("MSDIFF_WORK", "/tmp/msdiff")  # (msdiff.py's work folder)

STUB_ROOTS = {
    "torch", "torch_npu", "apex", "transformer_engine", "transformer_engine_torch", "flash_attn",
    "triton", "torchvision", "amp_C", "scaled_softmax_cuda", "fused_weight_gradient_mlp_cuda",
    "nvidia_resiliency_ext", "tensorstore", "zarr", "modelopt", "mindspeed_ops", "acl",
    "tbe", "te", "torchair", "deepspeed", "wandb", "tensorboard", "onelogger", "one_logger",
    "sentencepiece", "tiktoken", "datasets", "transformers", "safetensors", "nltk", "regex",
    "peft", "accelerate", "bitsandbytes", "megatron_core_ext", "grouped_gemm", "mamba_ssm",
    "causal_conv1d", "einops_exts", "pynvml", "psutil", "tqdm", "gpytorch", "scipy", "sklearn",
    "matplotlib", "pandas", "jieba", "ray", "vllm", "hydra", "omegaconf", "torchaudio", "timm",
    "decord", "av", "cv2", "PIL", "diffusers", "imageio", "librosa", "soundfile", "h5py", "tensordict",
    "torch_scatter", "fla", "liger_kernel", "msprobe", "ascend_ops", "mindspeed_llm_ops", "pydantic",
    "jsonlines", "wrapt", "tabulate", "pybind11", "ninja", "cloudpickle", "tensorrt_llm",
    "nvtx", "opt_einsum", "flash_attn_interface", "flashinfer", "mindie_llm", "torch_npu_ops",
    "janus", "megablocks", "setproctitle", "blobfile", "qwen_vl_utils", "packaging_stub",
}


import abc


class _Meta(abc.ABCMeta):
    def __getattr__(cls, name):
        if name == "__file__":
            return os.path.join(_WORK, "no-cann", "stub.so")
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return make(name)

    def __call__(cls, *a, **k):
        if len(a) == 1 and not k and callable(a[0]) and not isinstance(a[0], _Meta):
            return a[0]  # decorator
        return make(cls.__name__ + "()")

    def __getitem__(cls, item):
        return make(cls.__name__ + "[]")

    def __iter__(cls):
        return iter(())

    def __len__(cls):
        return 0

    def __bool__(cls):
        return False

    def __int__(cls):
        return 0

    def __index__(cls):
        return 0

    def __float__(cls):
        return 0.0

    def __or__(cls, o):
        return cls

    __ror__ = __or__
    __add__ = __radd__ = __sub__ = __mul__ = __rmul__ = __truediv__ = __or__

    def __lt__(cls, o):
        return False

    __le__ = __gt__ = __ge__ = __lt__

    def __contains__(cls, o):
        return False

    def __enter__(cls):
        return cls

    def __exit__(cls, *a):
        return False

    def __hash__(cls):
        return id(cls)

    def __eq__(cls, o):
        return cls is o

    def __str__(cls):
        return "stub:" + cls.__name__



def make(name):
    return _Meta(str(name), (object,), {"__init__": lambda self, *a, **k: None,
                                         "__getattr__": lambda self, n: make(n)})


class StubModule(types.ModuleType):
    def __init__(self, name):
        super().__init__(name)
        self.__path__ = []
        self.__file__ = "<stub %s>" % name
        self.__version__ = "2.5.1"

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        v = make(name)
        setattr(self, name, v)
        return v


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):
        if fullname.split(".")[0] in STUB_ROOTS and not fullname.split(".")[-1][:1].isupper():
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        return StubModule(spec.name)

    def exec_module(self, module):
        name = module.__name__
        if name == "torch":
            module.__version__ = "2.5.1"
            module.float16, module.bfloat16, module.float32, module.float = "fp16", "bf16", "fp32", "fp32"
            module.half, module.int64, module.int32 = "fp16", "i64", "i32"
        if name == "torch.version":
            module.cuda = None
            module.__version__ = "2.5.1"
            module.git_version = "x"
        if name == "torch.cuda":
            module.is_available = lambda: True
            module.device_count = lambda: 8
        if name in ("torch.npu", "torch_npu.npu"):
            module.is_available = lambda: True
            module.device_count = lambda: 8
            module.get_device_name = lambda *a, **k: "Ascend910B3"  # Atlas A2 (npulint's default product)
        if name == "torch_npu":
            import importlib
            module.npu = importlib.import_module("torch_npu.npu")
        if name == "torch.utils.cpp_extension":
            module._get_build_directory = lambda *a, **k: os.path.join(_WORK, "no-build-dir")
        if name == "torch.distributed":
            module.is_initialized = lambda: False
            module.is_available = lambda: True
            module.get_rank = lambda *a, **k: 0
            module.get_world_size = lambda *a, **k: 8


class _Fallback(_Finder):
    """Any other module that cannot be found (networkx, ...) is a stub too, except the packages
    under test."""
    OWN = {"megatron", "mindspeed", "mindspeed_llm", "mindspeed_mm", "mindspeed_rl", "modellink"}

    def find_spec(self, fullname, path, target=None):
        root = fullname.split(".")[0]
        if root in self.OWN or fullname.split(".")[-1][:1].isupper():
            return None
        if root in sys.modules and not isinstance(sys.modules[root], StubModule):
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)


def install():
    sys.meta_path.insert(0, _Finder())
    sys.meta_path.append(_Fallback())


def _fake_cdll():
    """MindSpeed's JIT-built allocators are opened with ctypes.CDLL(module.__file__); a stub
    module's file is no library: give it one whose every symbol is a non-null pointer."""
    import ctypes
    real = ctypes.CDLL

    class _Lib:
        def __getattr__(self, name):
            return ctypes.c_void_p(1)

    def cdll(name, *a, **k):
        if str(name).startswith(os.path.join(_WORK, "no-cann") + os.sep):
            return _Lib()
        return real(name, *a, **k)
    ctypes.CDLL = cdll


_fake_cdll()
