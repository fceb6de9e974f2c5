"""The same model with the mistakes npulint exists to catch before the job is queued."""
import tensorflow as tf
from npu_bridge.estimator.npu.npu_scope import npu_weight_prefetch_scope as prefetch
from npu_bridge.hccl import hccl_ops as hcom

MB = 1024 * 1024
RANK_SIZE = 8


def build_layers(x, n_layers):
    for i in range(n_layers):
        local_w = tf.get_variable(f"w{i}", shape=[1024, 4096], dtype=tf.float32)
        # NPU105: 1024 x 4096 float32 x 8 ranks = 128 MiB (+ HCOM padding) > 64 MiB
        with prefetch(0, 64 * MB):
            full_w = hcom.allgather(local_w, RANK_SIZE)
        x = tf.matmul(x, full_w)
    return x


def build_gate(x, use_gate):
    def gated():
        # NPU102: a prefetch scope inside a tf.cond branch
        with prefetch(0, 64 * MB):
            g = hcom.allgather(x, RANK_SIZE)
        return g

    return tf.cond(use_gate, gated, lambda: x)


def build_head(x):
    local_head = tf.get_variable("head", shape=[512, 4096])
    # NPU101: pool 0 was 64 MiB above; NPU010: allgather needs rank_size
    with prefetch(0, 128 * MB):
        head = hcom.allgather(local_head)
        # NPU104: several inputs to one op inside the scope
        both = tf.concat([head, x], 0)
    return tf.matmul(x, both)
