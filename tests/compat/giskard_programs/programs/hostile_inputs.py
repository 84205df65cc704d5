"""What real agents send back: unicode (accents, emoji, RTL, combining marks), a 1 MB
answer, None, empty strings, numbers where text was expected, nested JSON, odd keys in
paths; the built-in checks' verdicts and messages on each."""

import asyncio
import json

from giskard.checks import (  # IMPORT
    Equals,
    Interaction,
    JsonValid,
    NotEquals,
    RegexMatching,
    StringMatching,
    Trace,
)

OUTPUTS = {
    "accents": "Café crème à 3€ — déjà vu",
    "emoji": "Order shipped 📦✅ (ETA 2 days)",
    "rtl": "مرحبا بك، طلبك جاهز",
    "combining": "Cafe\u0301 ﬁne ＦＵＬＬＷＩＤＴＨ",
    "huge": "lorem ipsum " * 90000 + "NEEDLE",
    "none": None,
    "empty": "",
    "blank": " \n\t ",
    "number": 42,
    "nested": {"a": {"b c": [1, {"d": "deep"}]}, "weird key!": True, "": "empty key"},
    "json_text": '{"items": [1, 2, 3], "note": "naïve"}',
    "control": "bell\x07 null\x00 tab\t end",
}

CHECKS = {
    "contains_cafe": StringMatching(keyword="Café"),
    "contains_cafe_ci": StringMatching(keyword="CAFÉ", case_sensitive=False),
    "contains_needle": StringMatching(keyword="NEEDLE"),
    "regex_digits": RegexMatching(pattern=r"\d+"),
    "regex_unicode_word": RegexMatching(pattern=r"^\w+"),
    "equals_self_nfkc": Equals(expected_value="Café ﬁne FULLWIDTH"),
    "equals_none": Equals(expected_value=None),
    "equals_empty": Equals(expected_value=""),
    "not_equals_empty": NotEquals(expected_value=""),
    "json_valid": JsonValid(),
    "deep_path": Equals(target_key="trace.last.outputs.a['b c'][1].d", expected_value="deep"),
    "weird_key": Equals(target_key="trace.last.outputs['weird key!']", expected_value=True),
    "missing_path": Equals(target_key="trace.last.outputs.nope.nothing", expected_value=1),
    "index_out": Equals(target_key="trace.interactions[5].outputs", expected_value=1),
    "metadata_unicode": StringMatching(keyword="é", target_key="trace.last.metadata.note"),
}


def shorten(text):
    if isinstance(text, str) and len(text) > 300:
        return text[:150] + f"...<{len(text)} chars>..." + text[-100:]
    return text


async def main():
    out = {}
    for oname, value in OUTPUTS.items():
        trace = await Trace.from_interactions(
            Interaction(inputs="¿qué?", outputs=value, metadata={"note": "résumé"})
        )
        row = {}
        for cname, check in CHECKS.items():
            try:
                result = await check.run(trace)
                row[cname] = [result.status.value, shorten(result.message)]
            except Exception as exc:
                row[cname] = ["raised", type(exc).__name__]
        out[oname] = row
    for path in ("trace.last.outputs[", "trace..", "last.outputs", "trace.last.outputs.a[*]"):
        try:
            check = Equals(target_key=path, expected_value=1)
            trace = await Trace.from_interactions(Interaction(inputs="x", outputs={"a": [1]}))
            result = await check.run(trace)
            out[f"path:{path}"] = [result.status.value, result.message]
        except Exception as exc:
            out[f"path:{path}"] = ["raised", type(exc).__name__]
    print(json.dumps(out, sort_keys=True, ensure_ascii=True))


asyncio.run(main())
