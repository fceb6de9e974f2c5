"""One module of a graph (train.py's) that spans two files: pool 2 is 256 MiB here, but 128 MiB
in embedding.py (NPU101 is reported here, the later file in path order)."""
import tensorflow as tf
from npu_bridge.npu_init import *

MB = 1024 * 1024


def build_decoder(x):
    local_w = tf.get_variable("dec", shape=[1024, 4096], dtype=tf.float16)
    with npu_scope.npu_weight_prefetch_scope(2, 256 * MB):
        w = hccl_ops.allgather(local_w, 8)
    return tf.matmul(x, w)
