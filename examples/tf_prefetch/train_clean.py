"""A TF1 training graph that prefetches two all-gathered weights into two buffer pools.

npulint finds nothing here: pools 10 and 11 each have one size, the Python loop that
builds the layers is not graph control flow, and each pool holds its largest all-gather.
"""
import tensorflow as tf
from npu_bridge.npu_init import *

MB = 1024 * 1024
RANK_SIZE = 8
POOL_SMALL = 64 * MB
POOL_LARGE = 256 * MB
HIDDEN = 2048


def build_layers(x, n_layers):
    for i in range(n_layers):  # Python loop: unrolled while the graph is built
        local_w = tf.get_variable(f"w{i}", shape=[HIDDEN // RANK_SIZE, HIDDEN], dtype=tf.float16)
        with npu_scope.npu_weight_prefetch_scope(10, POOL_SMALL):
            full_w = hccl_ops.allgather(local_w, RANK_SIZE)
        x = tf.matmul(x, full_w)
    return x


def build_head(x):
    local_head = tf.get_variable("head", shape=[4096 // RANK_SIZE, 4096], dtype=tf.float32)
    with npu_scope.npu_weight_prefetch_scope(buffer_pool_id=11, buffer_pool_size=POOL_LARGE):
        head = hccl_ops.allgather(local_head, RANK_SIZE)
    return tf.matmul(x, head)
