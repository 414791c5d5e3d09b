"""Generate the built-in question sets of `servetune quality` (src/servetune/data/quality/).

The questions are made here from templates and a fixed seed, so they are ours to ship (same
license as servetune) and reproducible: `python scripts/build_quality_data.py` rewrites the same
files. Every answer is computed, not typed.

- math: arithmetic word problems with a numeric answer (shopping, rates, percentages, ages,
  multi-step totals), the "math" of the seed's advice.
- reasoning: short careful-reasoning questions with a one-word answer that the question does not
  contain (weekday and month arithmetic, comparing decimals, turning, numbers in words).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src" / "servetune" / "data" / "quality"
SEED = 20261130
FINAL = " Give the final answer as a number at the end."
ONE_WORD = " Answer with one word."

NAMES = ["Mei", "Arjun", "Lena", "Tomás", "Yuki", "Omar", "Chloé", "Wei", "Nadia", "Kofi"]
ITEMS = [("notebook", "notebooks"), ("apple", "apples"), ("ticket", "tickets"), ("pen", "pens")]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

Question = dict[str, str]


def shopping(rng: random.Random) -> Question:
    name, (one, many) = rng.choice(NAMES), rng.choice(ITEMS)
    count, price, paid = rng.randint(3, 12), rng.randint(2, 9), 100
    return {
        "prompt": f"{name} buys {count} {many} at ${price} per {one} and pays with a ${paid} bill. "
        f"How many dollars of change does {name} get?{FINAL}",
        "answer": str(paid - count * price),
    }


def rate(rng: random.Random) -> Question:
    speed, hours, extra = rng.randint(40, 90), rng.randint(2, 6), rng.randint(10, 60)
    return {
        "prompt": f"A train runs at {speed} km per hour for {hours} hours, then another "
        f"{extra} km. How many kilometres does it travel in all?{FINAL}",
        "answer": str(speed * hours + extra),
    }


def percent(rng: random.Random) -> Question:
    price, off = rng.choice([80, 120, 150, 200, 240, 360, 500]), rng.choice([10, 15, 20, 25, 40])
    return {
        "prompt": f"A jacket costs ${price}. It is sold at {off}% off. "
        f"What is the sale price in dollars?{FINAL}",
        "answer": f"{price * (100 - off) / 100:g}",
    }


def ages(rng: random.Random) -> Question:
    a, b = rng.sample(NAMES, 2)
    age, gap, years = rng.randint(5, 30), rng.randint(2, 15), rng.randint(3, 12)
    return {
        "prompt": f"{a} is {age} years old. {b} is {gap} years older than {a}. "
        f"How old will {b} be in {years} years?{FINAL}",
        "answer": str(age + gap + years),
    }


def boxes(rng: random.Random) -> Question:
    boxes_, per, broken = rng.randint(4, 15), rng.randint(6, 24), rng.randint(1, 9)
    packs = rng.randint(2, 5)
    return {
        "prompt": f"A shop receives {boxes_} boxes with {per} eggs each. {broken} eggs are broken. "
        f"The rest are shared equally among {packs} stalls, and the eggs that are left over "
        f"are kept aside. How many eggs are kept aside?{FINAL}",
        "answer": str((boxes_ * per - broken) % packs),
    }


def weekday(rng: random.Random) -> Question:
    start, ahead = rng.randrange(7), rng.choice([n for n in range(3, 60) if n % 7])
    return {
        "prompt": f"Today is {DAYS[start]}. What day of the week will it be {ahead} days from "
        f"today?{ONE_WORD}",
        "answer": DAYS[(start + ahead) % 7],
        "kind": "text",
    }


def decimals(rng: random.Random) -> Question:
    whole = rng.randint(0, 9)
    a = f"{whole}.{rng.randint(1, 9)}"
    b = f"{whole}.{rng.randint(10, 99)}"
    larger = a if float(a) > float(b) else b
    first, second = (a, b) if rng.random() < 0.5 else (b, a)
    return {
        "prompt": f"Which number is larger, {first} or {second}? Answer with the number only.",
        "answer": larger,
        "kind": "number",
    }


MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
HEADINGS = ["north", "east", "south", "west"]
UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def months(rng: random.Random) -> Question:
    start = rng.randrange(12)
    ahead = rng.choice([n for n in range(5, 40) if n % 12])
    return {
        "prompt": f"It is {MONTHS[start]} now. Which month will it be {ahead} months from now?"
        f"{ONE_WORD}",
        "answer": MONTHS[(start + ahead) % 12],
        "kind": "text",
    }


def heading(rng: random.Random) -> Question:
    start = rng.randrange(4)
    turns = [rng.choice(["right", "left"]) for _ in range(rng.randint(2, 5))]
    end = (start + sum(1 if t == "right" else -1 for t in turns)) % 4
    if end == start:
        turns.append("right")
        end = (end + 1) % 4
    steps = ", then ".join(f"turn {t}" for t in turns)
    return {
        "prompt": f"You face {HEADINGS[start]}. You {steps}, each turn a quarter turn. Which "
        f"direction do you face now?{ONE_WORD}",
        "answer": HEADINGS[end],
        "kind": "text",
    }


def in_words(rng: random.Random) -> Question:
    n = rng.choice([n for n in range(21, 100) if n % 10])
    return {
        "prompt": f"Write the number {n} in English words, with a hyphen (for example thirty-two).",
        "answer": f"{TENS[n // 10]}-{UNITS[n % 10]}",
        "kind": "text",
    }


def build(
    makers: list[Callable[[random.Random], Question]], count: int, seed: int
) -> list[Question]:
    rng, seen, out = random.Random(seed), set(), []
    while len(out) < count:
        q = rng.choice(makers)(rng)
        if q["prompt"] not in seen:
            seen.add(q["prompt"])
            out.append(q)
    return out


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    sets = {
        "math": build([shopping, rate, percent, ages, boxes], 200, SEED),
        "reasoning": build([weekday, decimals, months, heading, in_words], 200, SEED + 1),
    }
    for name, questions in sets.items():
        lines = "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions)
        (OUT / f"{name}.jsonl").write_text(lines, encoding="utf-8")
        print(f"{name}: {len(questions)} questions")


if __name__ == "__main__":
    main()
