"""The generated differential cases: data that ``program.py`` turns into API calls.

Deterministic (no randomness): every check against a pool of outputs and path forms,
scenario shapes (steps, early stop, generators, targets, ``multiple_runs``), suites
(targets, parallelism, ``group_by``, ``pass_rate``, JUnit) and scenario dumps.
"""

from __future__ import annotations

from itertools import product
from typing import Any

OUTPUTS: dict[str, Any] = {
    "hello": "Hello World",
    "lower": "hello world",
    "empty": "",
    "nfkc": "ﬁne café",
    "int": 42,
    "float": 3.5,
    "none": None,
    "json_text": '{"a": 1, "b": [1, 2]}',
    "bad_json": "{not json",
    "doc": {
        "a": {"b": [1, 2, 3]},
        "items": [{"x": 1}, {"x": 2}, {"x": 3}],
        "single": [{"x": 7}],
        "name": "Bob",
    },
    "list": [1, 2, 3],
}

PATHS = [
    "trace.last.outputs",
    "trace.last.outputs.a.b",
    "trace.last.outputs.a.b[0]",
    "trace.last.outputs.a.b[-1]",
    "trace.last.outputs.a.b[0:2]",
    "trace.last.outputs.items[*].x",
    "trace.last.outputs.single[*].x",
    "trace.last.outputs..x",
    "trace.last.outputs.missing",
    "trace.last.outputs.name",
    "trace.interactions[0].inputs",
    "trace.interactions[*].outputs",
    "trace.last.metadata.lang",
]

COMPARISONS = [
    "Equals",
    "NotEquals",
    "LessThan",
    "GreaterThan",
    "LessThanEquals",
    "GreaterThanEquals",
]


def _turn(outputs: Any, inputs: Any = "hi") -> dict[str, Any]:
    return {"inputs": inputs, "outputs": outputs, "metadata": {"lang": "en"}}


REGO_POLICY = """package scn

allow if input.name == "Bob"
deny := input.name == "Alice"
strict if count(input.items) > 5
three := 3
label := "x"
uses_data if input.name in data.allowed
"""
REGO: dict[str, Any] = {"policy": REGO_POLICY, "data": {"allowed": ["Bob", "Eve"]}}

PASS_HELLO = {"cls": "StringMatching", "args": {"keyword": "Hello"}}

# Texts for Readability: plain and hard prose, contractions (in capitals too), hyphens,
# abbreviations, numbers, accents, quotes, lists, words no dictionary knows (hyphenation
# decides their syllables), one-word and one-letter texts.
READABILITY_TEXTS: dict[str, str] = {
    "plain": "The cat sat on the mat. It was a sunny day, and everyone was happy.",
    "greeting": "Hello there, friend. How are you doing today?",
    "one_word": "hello",
    "one_letter": "a",
    "abbreviations": "Dr. Smith went to Washington. He arrived at 5 p.m. on Monday!",
    "contractions": "DON'T shout. I can't hear you; we're far apart, aren't we? They'd agree.",
    "academic": (
        "Readability formulas estimate the educational attainment necessary to comprehend "
        "a passage; consequently, polysyllabic terminology substantially increases the "
        "computed difficulty."
    ),
    "legal": (
        "Notwithstanding the aforementioned considerations, the interdisciplinary committee "
        "unanimously recommended comprehensive institutional restructuring."
    ),
    "hyphens": "Well-known, state-of-the-art tools help. Twenty-one people came.",
    "unknown_words": "Scenarist checks giskard agents; foobarbazqux zyxwvut qwertyuiop.",
    "accents": "The café served naïve crème brûlée. Über cool!",
    "numbers": "Your order #1234 has shipped. Track it within 24 hours at example.com/track.",
    "quotes": "'Quoted' words and \"double quotes\" here, rock 'n' roll.",
    "paragraphs": "Line one\nLine two\n\nParagraph two is here. It has more words than before.",
    "punctuation": "Wait... what?! Really?? Yes!!!",
    "list": "- first item\n- second item\n- third item",
    "short_sentences": "I am. You are. We go.",
    "science": "Photosynthesis converts light energy into chemical energy stored in glucose.",
    "long_words": "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "possessives": "It's the dog's bone, isn't it? The dogs' bones are buried.",
}
READABILITY_METRICS = [
    "flesch_reading_ease",
    "flesch_kincaid_grade",
    "gunning_fog",
    "automated_readability_index",
    "coleman_liau_index",
    "dale_chall_readability_score",
]
# A typical bound per metric, which some texts meet and others do not.
READABILITY_BOUNDS: dict[str, dict[str, float]] = {
    "flesch_reading_ease": {"min_score": 60.0},
    "flesch_kincaid_grade": {"max_score": 8.0},
    "gunning_fog": {"max_score": 12.0},
    "automated_readability_index": {"max_score": 8.0},
    "coleman_liau_index": {"min_score": 2.0, "max_score": 10.0},
    "dale_chall_readability_score": {"max_score": 7.0},
}


def check_cases() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []

    def add(case_id: str, check: dict[str, Any], outputs: Any, **extra: Any) -> None:
        cases.append(
            {
                "id": case_id,
                "kind": "check",
                "check": check,
                "interactions": [_turn(outputs)],
                **extra,
            }
        )

    # comparisons: every operator against scalar outputs and the expected values around them
    for cls, (name, expected) in product(
        COMPARISONS,
        [("int", 42), ("int", 41), ("float", 3.5), ("hello", "Hello World"), ("nfkc", "fine café")],
    ):
        add(
            f"cmp:{cls}:{name}:{expected!r}",
            {"cls": cls, "args": {"expected_value": expected}},
            OUTPUTS[name],
        )
    # comparisons over path forms
    for cls, path in product(["Equals", "GreaterThan"], PATHS):
        add(
            f"path:{cls}:{path}",
            {"cls": cls, "args": {"key": path, "expected_value": 1}},
            OUTPUTS["doc"],
        )
    # collection match modes
    for cls, match, expected in product(
        ["Equals", "GreaterThan"], ["any", "all", "none"], [1, 2, 3]
    ):
        add(
            f"match:{cls}:{match}:{expected}",
            {
                "cls": cls,
                "args": {
                    "key": "trace.last.outputs.a.b",
                    "expected_value": expected,
                    "match": match,
                },
            },
            OUTPUTS["doc"],
        )
    add("match:scalar", {"cls": "Equals", "args": {"expected_value": 1, "match": "any"}}, 1)
    # unsupported comparisons, expected_value_key, None
    add("cmp:unsupported", {"cls": "LessThan", "args": {"expected_value": 3}}, "text")
    add("cmp:none", {"cls": "Equals", "args": {"expected_value": None}}, None)
    add(
        "cmp:expected_key",
        {"cls": "Equals", "args": {"expected_value_key": "trace.last.inputs"}},
        "hi",
    )
    add(
        "cmp:expected_key_missing",
        {"cls": "Equals", "args": {"expected_value_key": "trace.last.nope"}},
        "hi",
    )
    add(
        "cmp:no_norm",
        {"cls": "Equals", "args": {"expected_value": "fine café", "normalization_form": None}},
        OUTPUTS["nfkc"],
    )

    # text matching
    for (name, out), (keyword, sensitive) in product(
        [(k, OUTPUTS[k]) for k in ("hello", "lower", "empty", "nfkc", "int")],
        [("hello", True), ("hello", False), ("World", True), ("fine", False), ("", True)],
    ):
        add(
            f"str:{name}:{keyword}:{sensitive}",
            {"cls": "StringMatching", "args": {"keyword": keyword, "case_sensitive": sensitive}},
            out,
        )
    add("str:text", {"cls": "StringMatching", "args": {"keyword": "ell", "text": "hello"}}, "x")
    add(
        "str:key",
        {"cls": "StringMatching", "args": {"keyword": "Bob", "key": "trace.last.outputs.name"}},
        OUTPUTS["doc"],
    )
    add(
        "str:missing",
        {"cls": "StringMatching", "args": {"keyword": "a", "key": "trace.last.outputs.zz"}},
        OUTPUTS["doc"],
    )
    for (name, out), pattern in product(
        [(k, OUTPUTS[k]) for k in ("hello", "lower", "empty", "int")],
        [r"^Hello", r"world$", r"\d+", r"[", r"(?i)HELLO"],
    ):
        add(f"re:{name}:{pattern}", {"cls": "RegexMatching", "args": {"pattern": pattern}}, out)

    # JSON
    for name in ("json_text", "bad_json", "doc", "int", "empty", "list"):
        add(f"json:{name}", {"cls": "JsonValid", "args": {}}, OUTPUTS[name])
    schema = {"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}}}
    for name in ("json_text", "doc", "bad_json"):
        add(
            f"json:schema:{name}",
            {"cls": "JsonValid", "args": {"expected_schema": schema}},
            OUTPUTS[name],
        )

    # the giskard-checks bugs of spec 10-compat (deliberate differences, see allowlist.py)
    add(
        "bug:wildcard-single-match",
        {"cls": "Equals", "args": {"key": "trace.last.outputs.single[*].x", "expected_value": [7]}},
        OUTPUTS["doc"],
    )
    add(
        "bug:any-of-error-hides-pass",
        {"cls": "AnyOf", "checks": [{"cls": "FnCheck", "fn": "raises", "args": {}}, PASS_HELLO]},
        OUTPUTS["hello"],
    )
    for value in ("[]", "[1, 2]", '"text"', "null", "1e3", "{'a': 1}"):
        add(f"json:text:{value}", {"cls": "JsonValid", "args": {}}, value)
    # Rego policies: true, false, undefined, non-boolean values, data, inputs of every shape
    for rule, (name, outputs), direct in product(
        ["allow", "deny", "strict", "three", "label", "uses_data"],
        [("doc", OUTPUTS["doc"]), ("text", "Hello"), ("none", None), ("list", [1, 2])],
        [False, True],
    ):
        add(
            f"rego:{rule}:{name}:{'direct' if direct else 'scenario'}",
            {"cls": "RegoPolicy", "args": {**REGO, "rule": f"data.scn.{rule}"}},
            outputs,
            direct=direct,
        )
    add(
        "rego:missing_key",
        {
            "cls": "RegoPolicy",
            "args": {**REGO, "rule": "data.scn.allow", "target_key": "trace.last.outputs.nope"},
        },
        OUTPUTS["doc"],
    )

    # Readability: every metric's score over the texts, typical bounds, bad values
    for (text_id, text), metric in product(READABILITY_TEXTS.items(), READABILITY_METRICS):
        add(
            f"readability:{metric}:{text_id}",
            {"cls": "Readability", "args": {"metric": metric}},
            text,
            metrics=True,
            direct=text_id == "plain",
        )
        add(
            f"readability:{metric}:{text_id}:bounded",
            {"cls": "Readability", "args": {"metric": metric, **READABILITY_BOUNDS[metric]}},
            text,
            metrics=True,
        )
    for name in ("int", "none", "list", "doc"):
        add(f"readability:value:{name}", {"cls": "Readability", "args": {}}, OUTPUTS[name])
    for key, metric_args in [
        ("trace.last.outputs.missing", {}),
        ("trace.interactions[0].inputs", {"metric": "gunning_fog"}),
        ("trace.last.outputs.name", {"max_score": 20.0}),
        ("trace.last.metadata.lang", {"min_score": 0.0}),
    ]:
        add(
            f"readability:key:{key}",
            {"cls": "Readability", "args": {"target_key": key, **metric_args}},
            OUTPUTS["doc"],
        )
    for bad_id, bad in [
        ("range", {"min_score": 5.0, "max_score": 1.0}),
        ("metric", {"metric": "smog_index"}),
        ("field", {"threshold": 3}),
    ]:
        add(f"readability:bad:{bad_id}", {"cls": "Readability", "args": bad}, "Hello.")
    add(
        "readability:bounds:equal",
        {"cls": "Readability", "args": {"metric": "gunning_fog", "min_score": 0.4}},
        "a",
        metrics=True,
    )
    # no words to score: scenarist ERRORs where giskard-checks scores 0.0 (allowlist.py)
    for text_id, text, args in [
        ("empty", "", {}),
        ("dots", "...", {"metric": "gunning_fog", "max_score": 12.0}),
    ]:
        add(f"readability:no_words:{text_id}", {"cls": "Readability", "args": args}, text)

    # judge checks with a user judge registered by kind (program.py): verdicts, the
    # prompt it is given (the template source), errors it raises
    prompt = "Is {{ trace.last.outputs }} fine?"
    for keyword, (name, out) in product(
        ["Hello", "zz"], [(k, OUTPUTS[k]) for k in ("hello", "lower", "int")]
    ):
        for cls, args in [
            ("LLMJudge", {"prompt": prompt}),
            ("Groundedness", {"context": "Hello World is a greeting."}),
            ("Contradiction", {"context": "Hello World is a greeting."}),
            ("Conformity", {"rule": "Be polite."}),
            ("AnswerRelevance", {}),
            ("Toxicity", {}),
        ]:
            add(
                f"judge:{cls}:{keyword}:{name}",
                {
                    "cls": cls,
                    "args": {"name": f"{cls.lower()}_check", **args},
                    "judge": "keyword",
                    "judge_args": {"keyword": keyword},
                },
                out,
                direct=name == "hello",
            )
    add(
        "judge:echo:inline_prompt",
        {"cls": "LLMJudge", "args": {"prompt": prompt}, "judge": "echo"},
        OUTPUTS["hello"],
        direct=True,
    )
    add(
        "judge:raises:scenario",
        {"cls": "LLMJudge", "args": {"name": "lj", "prompt": prompt}, "judge": "raises"},
        OUTPUTS["hello"],
    )

    # functions
    for fn, name in product(["nonempty", "async_upper", "result", "raises"], ["hello", "empty"]):
        add(
            f"fn:{fn}:{name}",
            {"cls": "FnCheck", "fn": fn, "args": {"name": f"fn_{fn}"}},
            OUTPUTS[name],
        )
        add(
            f"from_fn:{fn}:{name}",
            {"cls": "from_fn", "fn": fn, "args": {"name": fn, "failure_message": "custom failure"}},
            OUTPUTS[name],
        )

    # composition
    eq = {"cls": "Equals", "args": {"expected_value": "Hello World"}}
    ne = {"cls": "Equals", "args": {"expected_value": "nope"}}
    err = {"cls": "Equals", "args": {"key": "trace.last.outputs.zz", "expected_value": 1}}
    named = {"cls": "Equals", "args": {"expected_value": "nope", "name": "named_eq"}}
    combos = {"pass": eq, "fail": ne, "error": err, "named": named}
    for cls in ("AllOf", "AnyOf"):
        for a, b in product(combos, repeat=2):
            add(f"{cls}:{a}+{b}", {"cls": cls, "checks": [combos[a], combos[b]]}, OUTPUTS["hello"])
        add(f"{cls}:empty", {"cls": cls, "checks": []}, OUTPUTS["hello"])
    for name, inner in combos.items():
        add(f"Not:{name}", {"cls": "Not", "check": inner}, OUTPUTS["hello"])

    # the async check protocol: `await check.run(trace)` on a trace from interactions
    for cls, expected in product(COMPARISONS, [42, 1]):
        add(
            f"direct:{cls}:{expected}",
            {"cls": cls, "args": {"expected_value": expected}},
            42,
            direct=True,
        )
    for check_id, check in [
        ("str", {"cls": "StringMatching", "args": {"keyword": "World"}}),
        ("re", {"cls": "RegexMatching", "args": {"pattern": "W.rld"}}),
        ("json", {"cls": "JsonValid", "args": {}}),
        ("allof", {"cls": "AllOf", "checks": [eq, ne]}),
        ("anyof", {"cls": "AnyOf", "checks": [eq, ne]}),
        ("not", {"cls": "Not", "check": ne}),
        ("fn", {"cls": "FnCheck", "fn": "nonempty", "args": {}}),
    ]:
        add(f"direct:{check_id}", check, OUTPUTS["hello"], direct=True)
    return cases


def _step(
    outputs: Any = "ok", checks: list[dict[str, Any]] | None = None, **turn: Any
) -> dict[str, Any]:
    interact = {"inputs": turn.pop("inputs", "hi"), **turn}
    if "outputs_fn" not in turn and outputs is not None:
        interact["outputs"] = outputs
    return {"interacts": [interact], "checks": checks or []}


PASS = {"cls": "StringMatching", "args": {"keyword": "ok"}}
FAIL = {"cls": "Equals", "args": {"expected_value": "something else"}}
ERR = {"cls": "FnCheck", "fn": "raises", "args": {"name": "explodes"}}
TWO = {"cls": "FnCheck", "fn": "two_turns", "args": {"name": "two_turns"}}


def scenario_cases() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    verdicts = {"pass": PASS, "fail": FAIL, "error": ERR}
    # three steps, every verdict in every position: early stop and SKIP wording
    for a, b, c in product(verdicts, repeat=3):
        cases.append(
            {
                "id": f"steps:{a}-{b}-{c}",
                "kind": "scenario",
                "steps": [
                    _step(checks=[verdicts[a]]),
                    _step(checks=[verdicts[b]]),
                    _step(checks=[verdicts[c]]),
                ],
                "assert_passed": True,
            }
        )
    cases.append(
        {
            "id": "steps:no-checks",
            "kind": "scenario",
            "steps": [_step(), _step(checks=[FAIL]), _step()],
        }
    )
    cases.append(
        {
            "id": "steps:two-checks",
            "kind": "scenario",
            "steps": [_step(checks=[FAIL, PASS, ERR])],
            "assert_passed": True,
        }
    )
    # inputs forms and targets
    for inputs_fn, target in product(
        ["callable", "gen", "agen"], ["echo", "async_echo", "with_trace", "boom"]
    ):
        cases.append(
            {
                "id": f"inputs:{inputs_fn}:{target}",
                "kind": "scenario",
                "steps": [
                    {
                        "interacts": [{"inputs_fn": inputs_fn}],
                        "checks": [{"cls": "StringMatching", "args": {"keyword": "echo"}}, TWO],
                    }
                ],
                "target": target,
            }
        )
    for target in ["echo", "upper", "boom"]:
        cases.append(
            {
                "id": f"outputs_fn:{target}",
                "kind": "scenario",
                "steps": [
                    _step(outputs=None, outputs_fn=target, checks=[PASS]),
                    _step(checks=[PASS]),
                ],
            }
        )
        cases.append(
            {
                "id": f"no-checks-error:{target}",
                "kind": "scenario",
                "steps": [_step(outputs=None, outputs_fn=target), _step(checks=[PASS])],
            }
        )
    cases.append(
        {"id": "no-target", "kind": "scenario", "steps": [_step(outputs=None, checks=[PASS])]}
    )
    # multiple_runs
    for runs, verdict in product([1, 2, 3], verdicts):
        cases.append(
            {
                "id": f"runs:{runs}:{verdict}",
                "kind": "scenario",
                "steps": [_step(checks=[verdicts[verdict]])],
                "multiple_runs": runs,
            }
        )
    for bad in ["2", 0, -1, True, 1.5]:
        cases.append(
            {
                "id": f"runs:bad:{bad!r}",
                "kind": "scenario",
                "steps": [_step(checks=[PASS])],
                "multiple_runs": bad,
            }
        )
    cases.append({"id": "empty-scenario", "kind": "scenario", "steps": []})
    cases.append(
        {
            "id": "raise:check",
            "kind": "scenario",
            "steps": [_step(checks=[ERR])],
            "return_exception": False,
        }
    )
    cases.append(
        {
            "id": "raise:target",
            "kind": "scenario",
            "steps": [_step(outputs=None, outputs_fn="boom", checks=[PASS])],
            "return_exception": False,
        }
    )
    return cases


def suite_cases() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    shapes = {
        "pass": [_step(checks=[PASS])],
        "fail": [_step(checks=[FAIL])],
        "error": [_step(checks=[ERR])],
        "target": [
            _step(outputs=None, checks=[{"cls": "StringMatching", "args": {"keyword": "echo"}}])
        ],
        "steps": [_step(checks=[PASS, PASS]), _step("ok again", checks=[FAIL]), _step()],
        "boom": [_step(outputs=None, outputs_fn="boom", checks=[PASS])],
        "nochecks": [_step("café ☕ <&>", metadata={"lang": "fr"})],
    }
    mixes = [
        ["pass", "pass"],
        ["pass", "fail", "error"],
        ["fail", "fail"],
        ["target", "pass", "target"],
        ["error"],
        [],
        ["steps", "boom", "nochecks"],
        ["nochecks", "pass"],
    ]
    for index, (mix, parallel) in enumerate(product(mixes, [False, True])):
        scenarios = [
            {
                "id": f"s{n}-{shape}",
                "name": f"s{n}-{shape}",
                "steps": shapes[shape],
                "tags": [f"kind:{shape}", "team:core"],
            }
            for n, shape in enumerate(mix)
        ]
        cases.append(
            {
                "id": f"suite:{index}:{'-'.join(mix) or 'empty'}:{'par' if parallel else 'ser'}",
                "kind": "suite",
                "scenarios": scenarios,
                "target": "echo",
                "parallel": parallel,
                "group_by": "kind",
                "junit": True,
            }
        )
    return cases


def dump_cases() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    checks = [
        PASS,
        FAIL,
        {"cls": "RegexMatching", "args": {"pattern": "o+"}},
        {"cls": "JsonValid", "args": {}},
        {"cls": "Readability", "args": {"metric": "gunning_fog", "max_score": 12.0}},
        {"cls": "Readability", "args": {"name": "fre", "min_score": 60.0}},
        {
            "cls": "LLMJudge",
            "args": {"name": "judged", "prompt": "Is {{ trace.last.outputs }} fine?"},
            "judge": "keyword",
            "judge_args": {"keyword": "ok"},
        },
        {"cls": "Conformity", "args": {"rule": "Be polite."}, "judge": "keyword"},
    ]
    for n, check in enumerate(checks):
        cases.append(
            {
                "id": f"dump:{n}",
                "kind": "dump",
                "steps": [_step(checks=[check]), _step("ok ok", checks=[check])],
            }
        )
    cases.append(
        {
            "id": "dump:composite",
            "kind": "dump",
            "steps": [
                _step(checks=[{"cls": "AllOf", "checks": [PASS, {"cls": "Not", "check": FAIL}]}])
            ],
        }
    )
    return cases


def all_cases() -> list[dict[str, Any]]:
    cases = check_cases() + scenario_cases() + suite_cases() + dump_cases()
    ids = [c["id"] for c in cases]
    assert len(ids) == len(set(ids)), "duplicate case ids"
    return cases
