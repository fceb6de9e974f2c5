"""The program that builds one graph from both modules: it imports embedding.py and model.py,
so their prefetch scopes meet in that graph (NPU101 compares only scopes that can be in one
program)."""
import tensorflow as tf

from embedding import build_embedding
from model import build_decoder


def model_fn(features, labels, mode, params):
    return build_decoder(build_embedding(features["ids"]))
