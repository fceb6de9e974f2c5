"""Which code of a function (or module, class body, lambda) never runs, and which calls of it
never both run in one run of it (NPU203, NPU303 and NPU306's instantiations), recorded in the
one traversal of the file (:class:`npulint.semantic.Walker` drives :class:`FlowRecorder`).

Each call is given the branch statements it runs under, each with the set of its arms under
which it runs: the arms of one ``if``/``elif``/``else`` chain (with "no arm taken" when there is
no ``else``), of one ``match`` (with "no case matched" unless the last case is a bare capture or
``_``), of a conditional expression ``x if c else y``; a ``try`` body and its ``else`` are one
arm, each ``except`` handler another (every ``except*`` handler the same one: several may run).
The code after a statement some of whose arms always end (every path of them ends in
``return``, ``raise``, ``continue`` or ``break``) runs only under its other arms: ``if d: return
a()`` then ``return b()``. Two calls never both run when they run under disjoint arms of one
statement. A statement in a loop (a ``for`` or ``while`` body, a comprehension) gives none: its
arms may take turns. ``and``/``or`` are not arms: in ``a() or b()`` both run when ``a()`` is
falsy. A ``try`` that ends is not used for what follows it (its body may end half-way into a
handler), nor is a ``with`` whose body may end by ``raise`` (its context manager may suppress
the exception); code after either that certainly ends is dead all the same.

A call belongs to the function, class body, lambda or module whose body holds it; the
decorators of a ``def`` or ``class`` are code of the enclosing one, its parameters, return
annotation and bases of none (they give no branches), and code after a statement that always
ends is dead in every enclosing one it is written in.
"""

from __future__ import annotations

from typing import Any, Dict, FrozenSet, List, Optional, Set, Tuple

import libcst as cst

Paths = Dict[int, FrozenSet[int]]  # id(branch statement) -> the arms of it a call runs under


class Flow:
    """What :class:`FlowRecorder` recorded for one function, class body, lambda or module."""

    __slots__ = ("paths", "dead")

    def __init__(self, paths: Dict[int, Paths], dead: Set[int]):
        self.paths = paths  # id(call) -> the branches it runs under (a call that never runs: none)
        self.dead = dead  # id(call) of every call that never runs

    @staticmethod
    def disjoint(a: Paths, b: Paths) -> bool:
        """Whether code under the branches *a* and code under *b* never both run: they run
        under disjoint arms of one statement."""
        return any(k in b and not (arms & b[k]) for k, arms in a.items())

    def exclusive(self, a: cst.CSTNode, b: cst.CSTNode) -> bool:
        """Whether the calls *a* and *b* never both run (one run of this scope)."""
        pa, pb = self.paths.get(id(a)), self.paths.get(id(b))
        return pa is not None and pb is not None and self.disjoint(pa, pb)


EMPTY = Flow({}, set())


class _Ctx:
    """Where the traversal is, within one flow: the branches and loop it runs under, whether
    it is dead, whether its calls are recorded (not in a def's parameters or a class's bases);
    for a block (*members*: the ids of its statements), how it ends so far."""

    __slots__ = ("conds", "looped", "dead", "record", "members", "end")

    def __init__(self, conds: Paths, looped: bool, dead: bool, record: bool, members=None):
        self.conds = conds
        self.looped = looped
        self.dead = dead
        self.record = record
        self.members = members
        self.end: Optional[str] = None  # None: some path goes on; "jump": every path ends in
        # return/continue/break; "raise": every path ends, some by raise


class _Root:
    __slots__ = ("node", "paths", "dead", "stack", "dead_outers")

    def __init__(self, node, ctx: _Ctx, dead_outers: List["_Root"]):
        self.node = node
        self.paths: Dict[int, Paths] = {}
        self.dead: Set[int] = set()
        self.stack = [ctx]
        self.dead_outers = dead_outers  # the enclosing flows this code is dead code of


def _under(conds: Paths, key: int, arms, looped: bool) -> Paths:
    if looped:
        return conds
    out = dict(conds)
    out[key] = frozenset(arms)
    return out


def _all_end(ends) -> Optional[str]:
    if any(e is None for e in ends):
        return None
    return "raise" if "raise" in ends else "jump"


def _after(conds: Paths, key: int, ends, looped: bool) -> Tuple[Optional[str], Optional[Paths]]:
    """How a branch statement whose arms end so ends, and the branches the code after it runs
    under (None: as before it)."""
    end = _all_end(ends)
    if end is not None:
        return end, None
    going_on = [i for i, e in enumerate(ends) if e is None]
    if looped or len(going_on) == len(ends):
        return None, None
    return None, _under(conds, key, going_on, looped)


def _ids(body) -> FrozenSet[int]:
    stmts = body.body if type(body) in (cst.IndentedBlock, cst.SimpleStatementSuite) else body
    return frozenset(map(id, stmts))


class _Branch:
    """An ``if`` chain, ``try``, ``match`` or ``with`` being walked: the context it started in
    and how its arms end."""

    __slots__ = ("conds", "looped", "key", "n", "ends", "extra")

    def __init__(self, ctx: _Ctx, key: int, n: int, extra=None):
        self.conds = ctx.conds
        self.looped = ctx.looped
        self.key = key
        self.n = n
        self.ends: List[Optional[str]] = [None] * n
        self.extra = extra


class FlowRecorder:
    """Records, as the traversal goes, every call's branches or that it never runs, per
    function, class body, lambda and module; :meth:`flow` answers once the traversal is over."""

    def __init__(self) -> None:
        self._roots: List[_Root] = []
        self._done: Dict[int, Flow] = {}
        self._arms: Dict[int, Tuple[_Branch, int]] = {}  # id(If/ExceptHandler/MatchCase) -> its branch, arm
        self._branches: Dict[int, _Branch] = {}  # id(Try/TryStar/Match) -> its branch
        self._elses: Dict[int, Tuple[str, Any]] = {}  # id(Else/Finally) -> what it is the else of
        self._with_ends: Dict[int, Optional[str]] = {}  # id(With) -> how its body ends

    def flow(self, node: cst.CSTNode) -> Flow:
        """The calls of the function, class, lambda or module *node*."""
        return self._done.get(id(node), EMPTY)

    # -- the stack ----------------------------------------------------------------------
    def _top(self) -> _Ctx:
        return self._roots[-1].stack[-1]

    def _push(self, conds: Paths, looped: bool, record: bool = True, members=None) -> _Ctx:
        stack = self._roots[-1].stack
        top = stack[-1]
        ctx = _Ctx(conds, looped, top.dead, top.record and record, members)
        stack.append(ctx)
        return ctx

    def _pop(self) -> _Ctx:
        return self._roots[-1].stack.pop()

    def _start(self, node, members) -> None:
        roots = self._roots
        dead_outers = [r for r in roots if r.stack[-1].dead]
        roots.append(_Root(node, _Ctx({}, False, False, True, members), dead_outers))

    def _end(self) -> None:
        root = self._roots.pop()
        self._done[id(root.node)] = Flow(root.paths, root.dead)

    def _ended(self, stmt, end: Optional[str], conds: Optional[Paths] = None) -> None:
        """*stmt*, a statement of the block on top, ends so; the code after it runs under *conds*."""
        top = self._top()
        members = top.members
        if members is None or id(stmt) not in members or top.dead:
            return
        if end is not None:
            top.end = end
            top.dead = True
        elif conds is not None:
            top.conds = conds

    # -- events (called by the walker) ----------------------------------------------------
    def call(self, node) -> None:
        root = self._roots[-1]
        top = root.stack[-1]
        if top.dead:
            root.dead.add(id(node))
        elif top.record:
            root.paths[id(node)] = top.conds
        for outer in root.dead_outers:
            outer.dead.add(id(node))

    def visit_attribute(self, node, attribute: str) -> None:
        handler = _VISIT_ATTR.get((type(node), attribute))
        if handler is not None:
            handler(self, node)

    def leave_attribute(self, node, attribute: str) -> None:
        handler = _LEAVE_ATTR.get((type(node), attribute))
        if handler is not None:
            handler(self, node)

    # -- roots --------------------------------------------------------------------------
    def _no_record(self, node) -> None:  # a def's parameters and return annotation, a class's bases
        top = self._top()
        self._push(top.conds, top.looped, record=False)

    def _pop_node(self, node) -> None:
        self._pop()

    def _body_root(self, node) -> None:
        self._start(node, _ids(node.body) if type(node) is not cst.Lambda else None)

    def _end_root(self, node) -> None:
        self._end()

    def _l_def(self, node) -> None:
        self._pop()  # (a def or class never ends the block it is in)

    # -- blocks -------------------------------------------------------------------------
    def _block(self, node, conds: Paths, looped: bool) -> None:
        self._push(conds, looped, members=_ids(node.body))

    def _v_line(self, node: cst.SimpleStatementLine) -> None:
        top = self._top()
        self._push(top.conds, top.looped, members=_ids(node.body))

    def _l_line(self, node) -> None:
        end = self._pop().end
        self._ended(node, end)

    def _l_jump(self, node) -> None:
        self._ended(node, "jump")

    def _l_raise(self, node) -> None:
        self._ended(node, "raise")

    # -- if / elif / else ---------------------------------------------------------------
    def _v_if(self, node: cst.If) -> None:
        if id(node) in self._arms:
            return  # an elif: an arm of the chain its first ``if`` began
        chain = [node]
        cur = node.orelse
        while type(cur) is cst.If:
            chain.append(cur)
            cur = cur.orelse
        n = len(chain)
        branch = _Branch(self._top(), id(node), n + 1, extra=cur)  # arm n: the else, or no arm taken
        for j, arm in enumerate(chain):
            self._arms[id(arm)] = (branch, j)
        if type(cur) is cst.Else:
            self._elses[id(cur)] = ("if", branch)

    def _v_tested(self, node) -> None:
        """An ``if``/``elif`` test or a ``case`` pattern and guard: run unless an earlier arm ran."""
        branch, j = self._arms[id(node)]
        self._push(_under(branch.conds, branch.key, range(j, branch.n), branch.looped), branch.looped)

    def _v_arm_body(self, node) -> None:
        branch, j = self._arms[id(node)]
        self._block(node.body, _under(branch.conds, branch.key, (j,), branch.looped), branch.looped)

    def _l_arm_body(self, node) -> None:
        branch, j = self._arms[id(node)]
        branch.ends[j] = self._pop().end

    def _l_if(self, node) -> None:
        branch, j = self._arms[id(node)]
        if j:
            return
        if type(branch.extra) is not cst.Else:
            branch.ends[-1] = None
        end, conds = _after(branch.conds, branch.key, branch.ends, branch.looped)
        self._ended(node, end, conds)

    def _v_else_body(self, node: cst.Else) -> None:
        what, of = self._elses[id(node)]
        if what == "if":
            self._block(node.body, _under(of.conds, of.key, (of.n - 1,), of.looped), of.looped)
        elif what == "try":
            self._block(node.body, _under(of.conds, of.key, (0,), of.looped), of.looped)
        else:  # a loop's: as the loop statement
            self._block(node.body, of[0], of[1])

    def _l_else_body(self, node) -> None:
        what, of = self._elses[id(node)]
        end = self._pop().end
        if what == "if":
            of.ends[of.n - 1] = end
        elif what == "try":
            of.extra[1] = end

    # -- loops --------------------------------------------------------------------------
    def _v_for(self, node: cst.For) -> None:
        top = self._top()
        if node.orelse is not None:
            self._elses[id(node.orelse)] = ("loop", (top.conds, top.looped))
        self._push(top.conds, True)  # the target: bound on every iteration

    def _v_for_iter(self, node) -> None:
        self._pop()  # (the iterable is evaluated once)

    def _looped_block(self, node) -> None:
        self._block(node.body, self._top().conds, True)

    def _v_while(self, node: cst.While) -> None:
        if node.orelse is not None:
            top = self._top()
            self._elses[id(node.orelse)] = ("loop", (top.conds, top.looped))

    def _v_while_test(self, node) -> None:
        self._push(self._top().conds, True)  # the test: on every iteration

    def _v_comp(self, node) -> None:
        self._push(self._top().conds, True)

    # -- try ----------------------------------------------------------------------------
    def _v_try(self, node) -> None:
        # extra: [star, the else's end, the finally's end, the body's end]
        branch = self._branches[id(node)] = _Branch(self._top(), id(node), len(node.handlers),
                                                    extra=[type(node) is cst.TryStar, None, None, None])
        for i, handler in enumerate(node.handlers):
            self._arms[id(handler)] = (branch, i)
        if node.orelse is not None:
            self._elses[id(node.orelse)] = ("try", branch)
        if node.finalbody is not None:
            self._elses[id(node.finalbody)] = ("finally", branch)

    def _v_try_body(self, node) -> None:
        branch = self._branches[id(node)]
        self._block(node.body, _under(branch.conds, branch.key, (0,), branch.looped), branch.looped)

    def _l_try_body(self, node) -> None:
        self._branches[id(node)].extra[3] = self._pop().end

    def _v_handler(self, node) -> None:
        branch, i = self._arms[id(node)]
        arm = 1 if branch.extra[0] else i + 1
        self._push(_under(branch.conds, branch.key, (arm,), branch.looped), branch.looped)

    def _block_here(self, node) -> None:
        """A body that runs where its statement's context is (a handler's arm, a ``with``)."""
        top = self._top()
        self._block(node.body, top.conds, top.looped)

    def _v_finally_body(self, node) -> None:
        _, branch = self._elses[id(node)]
        self._block(node.body, branch.conds, branch.looped)

    def _l_finally_body(self, node) -> None:
        _, branch = self._elses[id(node)]
        branch.extra[2] = self._pop().end

    def _l_try(self, node) -> None:
        branch = self._branches[id(node)]
        _, orelse_end, final_end, body = branch.extra
        if node.orelse is not None:
            body = body or orelse_end
        if node.finalbody is not None and final_end is not None:
            self._ended(node, final_end)
            return
        self._ended(node, _all_end([body] + branch.ends))

    # -- with ---------------------------------------------------------------------------
    def _l_with_body(self, node) -> None:
        end = self._pop().end
        self._with_ends[id(node)] = end

    def _l_with(self, node) -> None:
        end = self._with_ends.pop(id(node), None)
        self._ended(node, "jump" if end == "jump" else None)

    # -- match --------------------------------------------------------------------------
    def _v_match(self, node: cst.Match) -> None:
        n = len(node.cases)
        last = node.cases[-1] if node.cases else None
        open_ended = last is None or last.guard is not None or not (
            type(last.pattern) is cst.MatchAs and last.pattern.pattern is None)
        # arm n: no case matched
        branch = self._branches[id(node)] = _Branch(self._top(), id(node), n + 1, extra=open_ended)
        for j, case in enumerate(node.cases):
            self._arms[id(case)] = (branch, j)

    def _l_match(self, node) -> None:
        branch = self._branches[id(node)]
        ends = branch.ends if branch.extra else branch.ends[:-1]
        end, conds = _after(branch.conds, branch.key, ends, branch.looped)
        self._ended(node, end, conds)

    # -- x if c else y ------------------------------------------------------------------
    def _v_ifexp_arm(self, node, arm: int) -> None:
        top = self._top()
        self._push(_under(top.conds, id(node), (arm,), top.looped), top.looped)


def _v_ifexp_body(rec: FlowRecorder, node) -> None:
    rec._v_ifexp_arm(node, 0)


def _v_ifexp_orelse(rec: FlowRecorder, node) -> None:
    rec._v_ifexp_arm(node, 1)


R = FlowRecorder
# node class -> what to do on visiting it and on leaving it (the walker calls them)
_NODES = {
    cst.Module: (R._body_root, R._end_root),
    cst.SimpleStatementLine: (R._v_line, R._l_line),
    cst.Return: (None, R._l_jump), cst.Continue: (None, R._l_jump), cst.Break: (None, R._l_jump),
    cst.Raise: (None, R._l_raise),
    cst.If: (R._v_if, R._l_if),
    cst.For: (R._v_for, None),
    cst.While: (R._v_while, None),
    cst.Try: (R._v_try, R._l_try), cst.TryStar: (R._v_try, R._l_try),
    cst.ExceptHandler: (R._v_handler, R._pop_node), cst.ExceptStarHandler: (R._v_handler, R._pop_node),
    cst.With: (None, R._l_with),
    cst.Match: (R._v_match, R._l_match),
    cst.MatchCase: (R._v_tested, R._pop_node),
    cst.FunctionDef: (None, R._l_def), cst.ClassDef: (None, R._l_def), cst.Lambda: (None, R._l_def),
    **{comp: (R._v_comp, R._pop_node) for comp in (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)},
}
VISIT = {cls: visit for cls, (visit, _) in _NODES.items() if visit is not None}
LEAVE = {cls: leave for cls, (_, leave) in _NODES.items() if leave is not None}
# (node class, field) -> what to do on entering and on leaving it
_ATTRS = {
    (cst.FunctionDef, "params"): (R._no_record, None), (cst.Lambda, "params"): (R._no_record, None),
    (cst.ClassDef, "bases"): (R._no_record, None),
    (cst.FunctionDef, "body"): (R._body_root, R._end_root), (cst.ClassDef, "body"): (R._body_root, R._end_root),
    (cst.Lambda, "body"): (R._body_root, R._end_root),
    (cst.If, "test"): (R._v_tested, R._pop_node),
    (cst.If, "body"): (R._v_arm_body, R._l_arm_body),
    (cst.Else, "body"): (R._v_else_body, R._l_else_body),
    (cst.For, "iter"): (R._v_for_iter, None),
    (cst.For, "body"): (R._looped_block, R._pop_node),
    (cst.While, "test"): (R._v_while_test, R._pop_node),
    (cst.While, "body"): (R._looped_block, R._pop_node),
    (cst.Try, "body"): (R._v_try_body, R._l_try_body), (cst.TryStar, "body"): (R._v_try_body, R._l_try_body),
    (cst.ExceptHandler, "body"): (R._block_here, R._l_arm_body),
    (cst.ExceptStarHandler, "body"): (R._block_here, R._l_arm_body),
    (cst.Finally, "body"): (R._v_finally_body, R._l_finally_body),
    (cst.With, "body"): (R._block_here, R._l_with_body),
    (cst.MatchCase, "body"): (R._v_arm_body, R._l_arm_body),
    (cst.IfExp, "body"): (_v_ifexp_body, R._pop_node),
    (cst.IfExp, "orelse"): (_v_ifexp_orelse, R._pop_node),
}
_VISIT_ATTR = {k: v for k, (v, _) in _ATTRS.items()}
_LEAVE_ATTR = {k: leave for k, (_, leave) in _ATTRS.items() if leave is not None}
