"""npulint's rules. Each rule is defined once, as a :class:`npulint.model.Rule` next to the
checker that reports it; this package lists them for the engine, the CLI and the docs.

Installed wheels carry this folder as ``npulint.rules``.
"""

from . import engine, mc2, mindspeed, prefetch, signature, torchair_config, torchair_streams

CHECKERS = [torchair_config.TorchairConfigChecker,
            torchair_streams.StreamsChecker, *mindspeed.CHECKERS]

ALL_RULES = [*torchair_config.RULES, *torchair_streams.RULES, *mindspeed.RULES]
