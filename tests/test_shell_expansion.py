"""How a launch script's words expand, against bash itself: each case is a script bash runs
(tools/bashdiff.py found them) and the words npulint reads for its ``torchrun``. A word bash
makes into words npulint cannot know (a glob, a brace expansion, a home folder, a split by
an unknown IFS) is unknown, never the text as written; each repro has a twin that stays
known. The seeded differential run at the end compares npulint with bash on generated
scripts (the tool's full runs: docs/internals.md, "Reading bash")."""

from __future__ import annotations

import shutil

import pytest

from conftest import load_tool
from npulint import shell

UNK = "?"  # a word with unknown text, in the lists below; "*…" marks a splat


def words(src: str):
    """The words after ``torchrun`` of the script's last torchrun command, on each path."""
    script, err = shell.parse_script(src)
    assert err is None and script.limit is None
    out = []
    for c in script.commands:
        if c.words[0].text == "torchrun":
            out.append([("*" if w.splat else "") + w.text.replace(shell.UNKNOWN, UNK).replace(shell.MANY, "")
                        for w in c.words[1:]])
    return out


# ------------------------------------------------------------------ pathname expansion


def test_an_unquoted_pattern_is_unknown():
    # bash: `--fp*` is the file --fp16 when it exists; as written when nothing matches
    assert words("torchrun p.py --fp* a?b [ab].py --x\n") == [["p.py", "*?", "*?", "*?", "--x"]]
    # quoted, escaped, or a lone `[` (no bracket expression): as written
    assert words("torchrun p.py '--fp*' \"a?b\" \\[ab].py [ x] --x=\\*\n") == [
        ["p.py", "--fp*", "a?b", "[ab].py", "[", "x]", "--x=*"]]


def test_a_pattern_from_an_unquoted_expansion_is_unknown():
    src = 'GLOB="*.py --bf16"\ntorchrun p.py $GLOB\n'
    assert words(src) == [["p.py", "*?", "--bf16"]]
    assert words(src.replace("$GLOB", '"$GLOB"')) == [["p.py", "*.py --bf16"]]
    # an array's items are globbed when unquoted, and in the array's assignment
    assert words('A=("*.py" x)\ntorchrun p.py ${A[@]} "${A[@]}"\n') == [["p.py", "*?", "x", "*.py", "x"]]
    assert words('A=(*.py x)\ntorchrun p.py "${A[@]}"\n') == [["p.py", "*?", "x"]]
    # an assignment does not glob: the quoted use is the text
    assert words('X=*.py\ntorchrun p.py "$X"\n') == [["p.py", "*.py"]]


# ------------------------------------------------------------------ brace and tilde expansion


def test_a_brace_expansion_is_unknown():
    assert words("torchrun p.py {1,2} a{b,c}d {1..3} --x\n") == [["p.py", "*?", "*?", "*?", "--x"]]
    # no comma or sequence, quoted, or a parameter expansion's braces: as written
    assert words('X=a\ntorchrun p.py {a} {} "{1,2}" \'{a,b}\' ${X}\n') == [["p.py", "{a}", "{}", "{1,2}", "{a,b}", "a"]]


def test_a_tilde_prefix_is_unknown():
    assert words("torchrun p.py ~ ~/d\n") == [["p.py", "*?", "*?"]]
    assert words("torchrun p.py a~ '~' \\~/d\n") == [["p.py", "a~", "~", "~/d"]]
    # in an assignment, at the start or after a colon
    assert words("X=~/d\nY=a:~/b\nZ=a~\ntorchrun p.py \"$X\" \"$Y\" \"$Z\"\n") == [["p.py", UNK, UNK, "a~"]]


# ------------------------------------------------------------------ empty words and splitting


def test_a_quoted_empty_word_is_a_word():
    # `--flag ''` passes an empty value: dropping it would make the next word the value
    src = 'E=\ntorchrun p.py --a \'\' --b "" --c "$E" --d $E --e\n'
    assert words(src) == [["p.py", "--a", "", "--b", "", "--c", "", "--d", "--e"]]
    # an empty array quoted is no word; "${A[*]}" of it is one empty word
    assert words('A=()\ntorchrun p.py "${A[@]}" "${A[*]}"\n') == [["p.py", ""]]


def test_a_star_subscript_in_quotes_is_one_word():
    src = 'A=(--a --b)\ntorchrun p.py "${A[*]}" ${A[*]} "${A[@]}"\n'
    assert words(src) == [["p.py", "--a --b", "--a", "--b", "--a", "--b"]]
    assert words("IFS=,\n" + src)[0][1] == "--a,--b"  # joined by IFS's first character
    assert words("IFS=\n" + src)[0][1] == "--a--b"


def test_unknown_text_in_a_split_value_may_be_any_number_of_words():
    # BASE is never assigned: empty, or several words; "$X --y 1" split is not three words
    src = 'X="$BASE --y 1"\ntorchrun p.py $X\n'
    assert words(src) == [["p.py", "*?", "--y", "1"]]
    assert words(src.replace("$X", '"$X"')) == [["p.py", "? --y 1"]]


def test_a_split_by_an_ifs_other_than_the_default_is_unknown():
    src = 'X="a,b c"\ntorchrun p.py $X "$X"\n'
    assert words(src) == [["p.py", "a,b", "c", "a,b c"]]
    assert words("IFS=,\n" + src) == [["p.py", "*?", "a,b c"]]
    assert words("IFS=,\nunset IFS\n" + src) == [["p.py", "a,b", "c", "a,b c"]]
    assert words("IFS=$' \\t\\n'\n" + src)[0][1] == "*?"  # $'…' is not read: unknown IFS


def test_an_unknown_variable_s_items_are_any_number_of_words():
    # read -a makes PP unknown: it may be an array
    src = "read -a PP <<< 'x y z'\ntorchrun p.py \"${PP[@]}\" \"$PP\"\n"
    assert words(src) == [["p.py", "*?", UNK]]
    # appending items to a variable never assigned: it may be unset (no item) or a scalar
    assert words('B+=(--a)\ntorchrun p.py "${B[@]}"\n') == [["p.py", "*?", "--a"]]
    assert words('B=x\nB+=(--a)\ntorchrun p.py "${B[@]}"\n') == [["p.py", "x", "--a"]]
    # an item that is a splat stays one: unknown, any number of words
    assert words('A=($U x)\ntorchrun p.py "${A[@]}"\n') == [["p.py", "*?", "x"]]


def test_appending_a_string_to_an_array_appends_to_its_element_0():
    assert words('A=(1 2)\nA+=3\ntorchrun p.py "${A[@]}"\n') == [["p.py", "13", "2"]]
    assert words('A=()\nA+=3\ntorchrun p.py "${A[@]}"\n') == [["p.py", "3"]]
    assert words("A=(1 2)\nunset 'A[0]'\nA+=3\ntorchrun p.py \"${A[@]}\"\n") == [["p.py", "3", "2"]]
    assert words('A=(1 2)\nA+=(3)\ntorchrun p.py "${A[@]}"\n') == [["p.py", "1", "2", "3"]]


# ------------------------------------------------------------------ assignments


def test_a_declaration_expands_its_words_before_it_assigns():
    assert words("X=a\nexport X=b Y=$X\ntorchrun p.py $Y $X\n") == [["p.py", "a", "b"]]
    assert words("f() { local X=b Y=$X; torchrun p.py $Y $X; }\nX=a\nf\n") == [["p.py", "a", "b"]]
    # the twin: two statements assign in order
    assert words("X=a\nexport X=b\nexport Y=$X\ntorchrun p.py $Y $X\n") == [["p.py", "b", "b"]]


@pytest.mark.parametrize("decl", ["declare -i", "typeset -i", "declare -l", "declare -u", "local -i"])
def test_an_attribute_that_changes_values_makes_its_variable_unknown(decl):
    src = f"f() {{\n{decl} X='1+1'\nX=2+2\ntorchrun p.py $X\n}}\nf\n"
    assert words(src) == [["p.py", "*?"]]
    assert words(src.replace(decl, "local")) == [["p.py", "2+2"]]


def test_an_assignment_to_a_readonly_variable_is_not_believed():
    src = "X=a\nreadonly X\nX=b\ntorchrun p.py $X\n"
    assert words(src) == [["p.py", "*?"]]
    assert words(src.replace("readonly X", "export X")) == [["p.py", "b"]]
    assert words(src.replace("readonly X", "declare -r X")) == [["p.py", "*?"]]


def test_an_assignment_before_eval_holds_while_its_text_runs():
    src = "X=1\nX=2 eval 'Y=$X'\ntorchrun p.py $Y $X\n"
    assert words(src) == [["p.py", "2", "1"]]
    assert words(src.replace("X=2 eval", "eval")) == [["p.py", "1", "1"]]


# ------------------------------------------------------------------ against bash


def _bashdiff():
    return load_tool("bashdiff")


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_generated_scripts_read_as_bash_runs_them(request):
    # a few seeded scripts through tools/bashdiff.py, more with --slow (a full run: thousands;
    # docs/internals.md): a plain run adds well under a second
    bashdiff = _bashdiff()
    count = 60 if request.config.getoption("--slow") else 4
    import random

    runner = bashdiff.Runner()
    try:
        found, launches = [], 0
        for k in range(count):
            text = bashdiff.Gen(random.Random("test-%d" % k)).script()
            ours, ran = bashdiff.npulint_launches(text), runner.run(text, {})
            if ours is not None and ran is not None:
                found += [(text, d) for kind, d in bashdiff.compare(ours, ran) if kind == "wrong"]
                launches += len(ran)
    finally:
        runner.close()
    assert launches >= count  # the scripts do launch: the comparison is not empty
    assert found == []


def test_the_harness_finds_a_wrong_word():
    # the comparison can fail: a word npulint knows that bash did not pass
    bashdiff = _bashdiff()
    w = [shell.Arg("p.py", None), shell.Arg("--fp*", None)]
    assert not bashdiff.matches(w, ["p.py", "--fp16"])
    assert bashdiff.matches(w[:1] + [shell.Arg(shell.UNKNOWN, None, True)], ["p.py", "--fp16", "x"])
    assert bashdiff.matches(w[:1] + [shell.Arg("--x=" + shell.UNKNOWN, None)], ["p.py", "--x=3"])
    assert not bashdiff.matches(w[:1] + [shell.Arg("--x=" + shell.UNKNOWN, None)], ["p.py", "--y=3"])


# ------------------------------------------------------------------ eval texts (the second review)


def test_an_attribute_declared_in_an_eval_text_holds_outside_it_and_the_other_way():
    # bash: X=1+1 under `declare -i X` is 2, whichever side of the eval declared it
    assert words("X=0\neval 'declare -i X'\nX=1+1\ntorchrun a $X\n") == [["a", "*?"]]
    assert words("declare -i Y\neval 'Y=2+3'\ntorchrun b $Y\n") == [["b", "*?"]]
    assert words("X=0\neval 'declare Z'\nX=1+1\ntorchrun a $X\n") == [["a", "1+1"]]  # the twin


def test_an_eval_of_unknown_text_may_set_ifs():
    # bash, with $1 = 'IFS=,': $V splits at the comma, "${A[*]}" joins with one
    assert words('eval "$1"\nV="p,q"\ntorchrun u1 $V\n') == [["u1", "*?"]]
    assert words('eval "$1"\nA=(a b)\ntorchrun u2 "${A[*]}"\n') == [["u2", "?"]]
    assert words('eval "X=$1"\nV="p q"\ntorchrun u3 $V\n') == [["u3", "*?"]]
    assert words('eval "X=1"\nV="p q"\ntorchrun u4 $V\n') == [["u4", "p", "q"]]  # the twin: known text


def test_a_tilde_after_the_equals_sign_of_an_assignment_shaped_argument_is_unknown():
    # bash (not in POSIX mode): `save=~/x` and `x=a:~/b` expand the tilde; `--s=~/y` does not
    assert words("torchrun t1 save=~/x --s=~/y x=a:~/b\n") == [["t1", "*?", "--s=~/y", "*?"]]
    assert words("torchrun t2 save=x~ s=a:b~\n") == [["t2", "save=x~", "s=a:b~"]]  # the twin
