"""GSM8K-style arithmetic word problems with step-by-step solutions, generated from a seed.

    python3 python/train/tasks.py --seed 1 --n 5          # print a few problems

A problem is a question, a list of solution lines (one arithmetic step `a op b = c` each, in a
short sentence) and a final line `#### N`. Templates: shopping, rates, sharing, ages, time,
wages, change; each has 1-4 steps (its difficulty level). Numbers are kept small enough that a
tiny model can learn exact digit arithmetic: operands of + and - below 1000, one factor of * at
most 12, division always exact with a divisor at most 12, every result below 10,000.

The held-out split (`heldout(...)`) is drawn from its own seed, disjoint from the training seed,
and `training_stream` additionally drops any problem whose question text is in the held-out set,
so no held-out question is ever trained on.

Everything is deterministic: `random.Random(seed)` only, no global state.
"""

import argparse
import json
import random

TRAIN_SEED = 1234
HELDOUT_SEED = 987654321
HELDOUT_SIZE = 500

NAMES = ["Ava", "Ben", "Carla", "Dev", "Emma", "Finn", "Grace", "Hugo", "Iris", "Jack", "Kira",
         "Leo", "Maya", "Noah", "Olga", "Pablo", "Quinn", "Rosa", "Sam", "Tara", "Umar", "Vera",
         "Will", "Xena", "Yusuf", "Zoe"]
HE_SHE = {n: ("she" if n in {"Ava", "Carla", "Emma", "Grace", "Iris", "Kira", "Maya", "Olga",
                             "Rosa", "Tara", "Vera", "Xena", "Zoe"} else "he") for n in NAMES}
ITEMS = ["apples", "pencils", "books", "cookies", "stickers", "cards", "oranges", "notebooks",
         "marbles", "candles", "cups", "shirts", "toy cars", "plants", "bottles of juice"]
SHARE_ITEMS = ["candies", "marbles", "stickers", "cookies", "coins", "beads", "grapes", "cards"]
VEHICLES = [("car", "km"), ("train", "km"), ("bike", "km"), ("boat", "miles"), ("bus", "miles")]
RELATIVES = ["brother", "sister", "cousin", "father", "mother", "aunt", "uncle"]
ACTIVITIES = [("reads", "pages"), ("writes", "lines"), ("runs", "laps"), ("paints", "pictures"),
              ("bakes", "muffins"), ("solves", "puzzles")]
JOBS = ["at a cafe", "at a shop", "in a garden", "at a library", "at a farm"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]


class Steps:
    """Collects solution lines, checking the result bound of each step."""

    def __init__(self):
        self.lines = []

    def op(self, a, sym, b, text):
        c = {"+": a + b, "-": a - b, "*": a * b, "/": a // b}[sym]
        if sym == "/":
            assert a % b == 0, (a, b)
        assert 0 <= c < 10000, (a, sym, b, c)
        self.lines.append(text.format(expr=f"{a} {sym} {b} = {c}"))
        return c


def _shopping(r, level):
    name, item, item2 = r.choice(NAMES), *r.sample(ITEMS, 2)
    n, price = r.randint(2, 12), r.randint(2, 99)
    q = f"{name} buys {n} {item} at {price} dollars each."
    s = Steps()
    total = s.op(n, "*", price, f"The {item} cost {{expr}} dollars.")
    if level >= 2:
        extra = r.randint(5, 300)
        q += f" {HE_SHE[name].capitalize()} also buys {item2} for {extra} dollars."
        total = s.op(total, "+", extra, "Together that is {expr} dollars.")
    if level >= 3:
        coupon = r.randint(1, min(total - 1, 200))
        q += f" A coupon takes {coupon} dollars off."
        total = s.op(total, "-", coupon, f"After the coupon {HE_SHE[name]} pays {{expr}} dollars.")
    if level >= 4:
        k = r.randint(2, 4)
        q += f" {HE_SHE[name].capitalize()} does the same shopping {k} times this month."
        total = s.op(total, "*", k, "For the month that is {expr} dollars.")
        q += " How much does " + HE_SHE[name] + " spend this month?"
    else:
        q += " How much does " + HE_SHE[name] + " spend?"
    return q, s.lines, total


def _rates(r, level):
    name = r.choice(NAMES)
    veh, unit = r.choice(VEHICLES)
    speed, hours = r.randint(10, 99), r.randint(2, 9)
    q = f"{name} drives a {veh} at {speed} {unit} per hour for {hours} hours."
    s = Steps()
    d = s.op(speed, "*", hours, f"The first part is {{expr}} {unit}.")
    if level >= 2:
        speed2, hours2 = r.randint(10, 99), r.randint(2, 9)
        q += f" Then {HE_SHE[name]} goes {speed2} {unit} per hour for {hours2} hours."
        d2 = s.op(speed2, "*", hours2, f"The second part is {{expr}} {unit}.")
        d = s.op(d, "+", d2, f"In total {HE_SHE[name]} travels {{expr}} {unit}.")
    if level >= 3:
        back = r.randint(1, d - 1)
        q += f" On the way back {HE_SHE[name]} covers {back} {unit}."
        d = s.op(d, "-", back, f"The distance left to go back is {{expr}} {unit}.")
        q += f" How many {unit} are left on the way back?"
    else:
        q += f" How many {unit} does {HE_SHE[name]} travel?"
    return q, s.lines, d


def _sharing(r, level):
    name, item = r.choice(NAMES), r.choice(SHARE_ITEMS)
    friends = r.randint(2, 12)
    each = r.randint(2, 80)
    s = Steps()
    if level == 1:
        total = friends * each
        q = (f"{name} has {total} {item} and shares them equally among {friends} friends. "
             f"How many {item} does each friend get?")
        ans = s.op(total, "/", friends, f"Each friend gets {{expr}} {item}.")
        return q, s.lines, ans
    kept = r.randint(1, 99)
    total = friends * each + kept
    q = (f"{name} has {total} {item}. {HE_SHE[name].capitalize()} keeps {kept} and shares the "
         f"rest equally among {friends} friends.")
    rest = s.op(total, "-", kept, f"{HE_SHE[name].capitalize()} shares {{expr}} {item}.")
    ans = s.op(rest, "/", friends, f"Each friend gets {{expr}} {item}.")
    if level >= 3:
        eat = r.randint(1, each)
        q += f" Each friend eats {eat} of them."
        ans = s.op(ans, "-", eat, f"Each friend has {{expr}} {item} left.")
        if level >= 4:
            q += f" How many {item} do the {friends} friends have left together?"
            ans = s.op(ans, "*", friends, f"Together they have {{expr}} {item} left.")
        else:
            q += f" How many {item} does each friend have left?"
    else:
        q += f" How many {item} does each friend get?"
    return q, s.lines, ans


def _ages(r, level):
    name, rel = r.choice(NAMES), r.choice(RELATIVES)
    age, k = r.randint(2, 15), r.randint(2, 6)
    q = f"{name} is {age} years old. {name}'s {rel} is {k} times as old."
    s = Steps()
    a = s.op(age, "*", k, f"The {rel} is {{expr}} years old.")
    if level >= 2:
        y = r.randint(2, 30)
        q += f" How old will the {rel} be in {y} years?"
        a = s.op(a, "+", y, f"In {y} years the {rel} will be {{expr}} years old.")
        if level >= 3:
            q = q[:q.rindex(" How")]
            q += (f" How old will the {rel} be in {y} years, and what is the sum of both ages "
                  f"then?")
            b = s.op(age, "+", y, f"In {y} years {name} will be {{expr}} years old.")
            a = s.op(a, "+", b, "The sum is {expr} years.")
    else:
        q += f" How old is the {rel}?"
    return q, s.lines, a


def _time(r, level):
    name = r.choice(NAMES)
    act, unit = r.choice(ACTIVITIES)
    per_day, days = r.randint(2, 60), r.randint(2, 12)
    q = f"{name} {act} {per_day} {unit} every day for {days} days."
    s = Steps()
    t = s.op(per_day, "*", days, f"In {days} days that is {{expr}} {unit}.")
    if level >= 2:
        extra = r.randint(1, 99)
        q += f" On the last day {HE_SHE[name]} {act} {extra} more {unit}."
        t = s.op(t, "+", extra, f"With the extra {unit} it is {{expr}} {unit}.")
    if level >= 3:
        goal = t + r.randint(1, 999)
        q += f" The goal is {goal} {unit}. How many more {unit} are needed to reach the goal?"
        t = s.op(goal, "-", t, f"{name} still needs {{expr}} {unit}.")
    else:
        q += f" How many {unit} does {HE_SHE[name]} do in total?"
    return q, s.lines, t


def _wages(r, level):
    name, job = r.choice(NAMES), r.choice(JOBS)
    rate = r.randint(5, 60)
    d1, d2 = r.sample(DAYS, 2)
    h1 = r.randint(1, 6)
    s = Steps()
    if level == 1:
        q = (f"{name} earns {rate} dollars per hour working {job}. {HE_SHE[name].capitalize()} "
             f"works {h1} hours. How much does {HE_SHE[name]} earn?")
        pay = s.op(rate, "*", h1, f"{HE_SHE[name].capitalize()} earns {{expr}} dollars.")
        return q, s.lines, pay
    h2 = r.randint(1, 6)
    q = (f"{name} earns {rate} dollars per hour working {job}. {HE_SHE[name].capitalize()} works "
         f"{h1} hours on {d1} and {h2} hours on {d2}.")
    h = s.op(h1, "+", h2, f"{HE_SHE[name].capitalize()} works {{expr}} hours.")
    pay = s.op(h, "*", rate, f"{HE_SHE[name].capitalize()} earns {{expr}} dollars.")
    if level >= 3:
        spend = r.randint(1, pay - 1)
        q += f" {HE_SHE[name].capitalize()} spends {spend} dollars on lunch."
        pay = s.op(pay, "-", spend, f"After lunch {HE_SHE[name]} has {{expr}} dollars.")
        if level >= 4:
            bonus = r.randint(1, 500)
            q += f" Then {HE_SHE[name]} gets a bonus of {bonus} dollars."
            pay = s.op(pay, "+", bonus, f"With the bonus {HE_SHE[name]} has {{expr}} dollars.")
        q += f" How much money does {HE_SHE[name]} have?"
    else:
        q += f" How much does {HE_SHE[name]} earn?"
    return q, s.lines, pay


def _change(r, level):
    name, item = r.choice(NAMES), r.choice(ITEMS)
    s = Steps()
    if level == 1:
        price = r.randint(1, 999)
        bill = r.choice([b for b in (10, 20, 50, 100, 200, 500, 1000) if b > price])
        q = (f"{name} pays for {item} that cost {price} dollars with a {bill} dollar bill. "
             f"How much change does {HE_SHE[name]} get?")
        return q, s.lines, s.op(bill, "-", price, "The change is {expr} dollars.")
    n, price = r.randint(2, 12), r.randint(2, 80)
    cost = n * price
    extra = r.randint(1, 200) if level >= 3 else 0
    bill = r.choice([b for b in (100, 200, 500, 1000, 2000) if b > cost + extra])
    q = f"{name} buys {n} {item} for {price} dollars each"
    if level >= 3:
        q += f" and pays {extra} dollars for delivery"
    q += f". {HE_SHE[name].capitalize()} pays with {bill} dollars. How much change does "
    q += f"{HE_SHE[name]} get?"
    cost = s.op(n, "*", price, f"The {item} cost {{expr}} dollars.")
    if level >= 3:
        cost = s.op(cost, "+", extra, "With delivery that is {expr} dollars.")
    change = s.op(bill, "-", cost, "The change is {expr} dollars.")
    return q, s.lines, change


TEMPLATES = {"shopping": (_shopping, 4), "rates": (_rates, 3), "sharing": (_sharing, 4),
             "ages": (_ages, 3), "time": (_time, 3), "wages": (_wages, 4), "change": (_change, 3)}
TEMPLATE_NAMES = sorted(TEMPLATES)


def make_problem(r):
    """One problem from the generator `r`: dict(template, level, question, solution, answer)."""
    kind = TEMPLATE_NAMES[r.randrange(len(TEMPLATE_NAMES))]
    fn, max_level = TEMPLATES[kind]
    level = r.randint(1, max_level)
    q, lines, ans = fn(r, level)
    solution = "\n".join(lines + [f"#### {ans}"])
    return dict(template=kind, level=level, question=q, solution=solution, answer=ans)


def heldout(seed=HELDOUT_SEED, n=HELDOUT_SIZE):
    """The fixed held-out split: `n` problems with distinct questions from `seed`."""
    r, out, seen = random.Random(seed), [], set()
    while len(out) < n:
        p = make_problem(r)
        if p["question"] not in seen:
            seen.add(p["question"])
            out.append(p)
    return out


def training_problems(n, exclude_questions, seed=TRAIN_SEED):
    """`n` training problems from `seed`, none of whose question is in `exclude_questions`."""
    r, out, dropped = random.Random(seed), [], 0
    while len(out) < n:
        p = make_problem(r)
        if p["question"] in exclude_questions:
            dropped += 1
            continue
        out.append(p)
    return out, dropped


CHUNK = 10000


def _chunk(args):
    seed, k, n = args
    r = random.Random(f"{seed}:{k}")
    return [make_problem(r) for _ in range(n)]


def training_problems_parallel(n, exclude_questions, seed=TRAIN_SEED, workers=8):
    """Like `training_problems`, in chunks of CHUNK problems, chunk k drawn from the generator
    seeded with the string "seed:k": the result depends on n and seed only, not on `workers`."""
    jobs = [(seed, k, min(CHUNK, n - k * CHUNK)) for k in range((n + CHUNK - 1) // CHUNK)]
    if workers > 1 and len(jobs) > 1:
        import multiprocessing as mp
        with mp.get_context("fork").Pool(min(workers, len(jobs))) as pool:
            chunks = pool.map(_chunk, jobs)
    else:
        chunks = [_chunk(j) for j in jobs]
    out = [p for c in chunks for p in c if p["question"] not in exclude_questions]
    return out, n - len(out)


def parse_answer(text):
    """The integer after the last `####` in `text`, or None."""
    i = text.rfind("####")
    if i < 0:
        return None
    tail = text[i + 4:].strip().split()
    if not tail:
        return None
    try:
        return int(tail[0].replace(",", ""))
    except ValueError:
        return None


def write_heldout_jsonl(path, problems):
    with open(path, "w") as f:
        for i, p in enumerate(problems):
            f.write(json.dumps(dict(id=i, question=p["question"], answer=p["answer"],
                                    solution=p["solution"], template=p["template"],
                                    level=p["level"])) + "\n")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=TRAIN_SEED)
    ap.add_argument("--n", type=int, default=5)
    a = ap.parse_args()
    r = random.Random(a.seed)
    for _ in range(a.n):
        p = make_problem(r)
        print(f"[{p['template']} L{p['level']}] {p['question']}\n{p['solution']}\n")
