"""npulint's rules. Each rule is defined once, as a :class:`npulint.model.Rule` next to the
checker that reports it; this package lists them for the engine, the CLI and the docs.

Installed wheels carry this folder as ``npulint.rules``.
"""

from . import engine, mc2, mindspeed, prefetch, signature, torchair_config, torchair_streams

CHECKERS = [prefetch.PrefetchChecker, mc2.MC2Checker, torchair_config.TorchairConfigChecker,
            torchair_streams.StreamsChecker]

ALL_RULES = [*prefetch.RULES, *mc2.RULES, *torchair_config.RULES, *torchair_streams.RULES]
