"""npulint's rules: one class per rule (``npulint.lintrule.LintRule``), discovered by the
engine in every module of this package (``npulint.registry``). Families not yet split into rule
classes are listed below as checkers with their ``Rule`` objects.

Installed wheels carry this folder as ``npulint.rules``.
"""

from . import engine, mc2, mindspeed, prefetch, signature, torchair_config, torchair_streams

CHECKERS = [*mindspeed.CHECKERS]

ALL_RULES = [*mindspeed.RULES]
