"""npulint's rules: one class per rule (``npulint.lintrule.LintRule``), each family's rules
over a shared ``Analysis``, discovered by the engine in every module of this package
(``npulint.registry``): nothing is listed by hand.

Installed wheels carry this folder as ``npulint.rules``.
"""
